/**
 * The studio's second render thread, for live streams: the front half of each frame (FrameFront:
 * resample, scene cuts, the Auto Director, the temporal filter) while the render worker, which
 * starts this one, takes the frame before through the back half (FrameBack: denoise, tone,
 * sharpening, glyphs, colours) and paints it.
 * The frame's pixels come here and go back with the handoff (transferred, never copied).
 */
import { detachHandoff, FrameFront } from '../core/video.js';
import type { FromFront, ToFront } from './front-protocol.js';

interface Scope {
  postMessage(message: FromFront, transfer?: Transferable[]): void;
  addEventListener(type: 'message', listener: (event: MessageEvent<ToFront>) => void): void;
}
const scope = globalThis as unknown as Scope;

/** The stream generation whose parameters `front` renders with; frames of another are returned untouched. */
let gen = -1;
let params: Record<string, unknown> = {};
let front: FrameFront | null = null;

scope.addEventListener('message', (event) => {
  const m = event.data;
  if (m.t === 'params') {
    gen = m.gen;
    params = m.params;
    front = null;
    return;
  }
  const image = m.image;
  const pixels = [image.data.buffer as ArrayBuffer];
  if (m.gen !== gen) {
    scope.postMessage({ t: 'stale', gen: m.gen, image }, pixels);
    return;
  }
  try {
    const t0 = performance.now();
    front ??= new FrameFront(params);
    const { handoff, transfer } = detachHandoff(front.render(image));
    scope.postMessage({ t: 'handoff', gen, image, handoff, ms: performance.now() - t0 }, [...transfer, ...pixels]);
  } catch (err) {
    // Parameters it refuses refuse every frame: a new front is tried only with new parameters.
    scope.postMessage({ t: 'error', gen, image, message: err instanceof Error ? err.message : String(err) }, pixels);
  }
});
