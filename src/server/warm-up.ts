/**
 * A render worker's warm-up (V2A_WARM_UP, on by default): before its first task, each worker
 * runs its own job function on a built-in 640 x 480 JPEG, so that the decoder, the renderer's
 * tables and the JIT (JavaScript and the WebAssembly kernels, which start as baseline code) are
 * ready when the first request comes. The pool counts the workers that report WARM_UP_MESSAGE,
 * and readiness waits for all of them.
 *
 * Measured on 2 cores (a fresh server of 2 workers from dist/, a 1 MP JPEG at 120 columns, two
 * requests at a time as soon as readiness answers): the first two took 305-343 ms without it and
 * 74-115 ms with it (bench/README.md); the warm-up takes about half a second per worker.
 */
import sharp from 'sharp';
import type { RenderJob } from './render-task.js';

/** Key of the message a worker posts once warm (its value: the milliseconds the warm-up took). */
export const WARM_UP_MESSAGE = 'v2aWarmUpMs';

/** The warm-up message a worker posts, or null for any other message. */
export function warmUpMs(message: unknown): number | null {
  if (typeof message !== 'object' || message === null || !(WARM_UP_MESSAGE in message)) return null;
  const ms = (message as Record<string, unknown>)[WARM_UP_MESSAGE];
  return typeof ms === 'number' ? ms : null;
}

const WIDTH = 640;
const HEIGHT = 480;

/**
 * The warm-up image: a sky gradient, a lit disc, a dark block with straight edges and a fine
 * deterministic texture, in colour, so that every stage has work (the Director's measures, the
 * structure and fine-shape cells, both colour paths).
 */
function scene(): Buffer {
  const data = Buffer.alloc(WIDTH * HEIGHT * 3);
  let seed = 0x2545f491;
  for (let y = 0, i = 0; y < HEIGHT; y++) {
    for (let x = 0; x < WIDTH; x++, i += 3) {
      seed = (seed * 1103515245 + 12345) >>> 0;
      const grain = (seed >>> 27) - 16;
      const dx = (x - 220) / 120, dy = (y - 200) / 120;
      const disc = dx * dx + dy * dy < 1;
      const block = x > 400 && x < 580 && y > 260 && y < 420;
      let v = 40 + (150 * y) / HEIGHT;
      if (disc) v = 90 + 160 * Math.max(0, 1 - Math.hypot(dx + 0.35, dy + 0.35));
      if (block) v = 20 + 10 * Math.sin(x / 3);
      data[i] = Math.max(0, Math.min(255, v + grain));
      data[i + 1] = Math.max(0, Math.min(255, v * 0.85 + grain));
      data[i + 2] = Math.max(0, Math.min(255, (block ? 120 : v * 0.6) + grain));
    }
  }
  return data;
}

/**
 * The jobs a worker runs to warm up: the defaults twice (the second call runs the kernels V8
 * tiered up during the first), then colour with two colours per cell and with ink colour only.
 */
export async function warmUpJobs(): Promise<RenderJob[]> {
  const jpeg = await sharp(scene(), { raw: { width: WIDTH, height: HEIGHT, channels: 3 } }).jpeg({ quality: 85 }).toBuffer();
  const limits = { maxBytes: jpeg.byteLength, maxPixels: WIDTH * HEIGHT, decodeTimeoutSeconds: 10 };
  const job = (params: Record<string, unknown>): RenderJob => ({ source: { kind: 'bytes', bytes: new Uint8Array(jpeg) }, params, ...limits });
  return [job({}), job({}), job({ charset: 'blocks', color: true, format: 'ansi' }), job({ color: true, format: 'json-compact' })];
}
