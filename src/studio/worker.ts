/**
 * The studio's render worker: the very same renderer core as the server (src/core), run off the
 * page's main thread. Still images are decoded here as the server's sharp decodes them: not
 * premultiplied, converted to sRGB only when they carry an ICC profile (see pixels, image-facts.ts).
 * A PNG without a profile comes out as the server's RGBA, byte for byte (with one, the browser's
 * colour conversion and the server's differ by a level in a few samples). Live sources arrive as
 * a stream of VideoFrames read here (streamLoop): the webcam, and a video file as its element's
 * captureStream() track; where the browser cannot, as ImageBitmaps the page grabs. Both go
 * through the temporal filter: each frame's front half (FrameFront) on a second worker started
 * from here (front-worker.ts), its back half (FrameBack) here, or FrameRenderer here where there
 * is no second thread. The art is painted into the page's canvas, transferred here as an
 * OffscreenCanvas.
 */
import {
  DEFAULTS, FrameBack, FrameRenderer, buildCompact, formatResult, type DirectorReport, type Format, type RenderResult, type RgbaImage,
} from '../core/index.js';
// The untyped entry: parameters arrive from the page as plain objects and are validated inside.
import { render } from '../core/render.js';
import { pngWithinLimit } from '../core/job.js';
import { WARM_UP_RENDERS, warmUpScene } from '../core/warm-up-scene.js';
import { ArtPainter, type PaintGrid } from './draw.js';
import type { ExplicitParams, FromWorker, RemoteGrid, ResultInfo, ToWorker, ViewSettings } from './protocol.js';
import type { FromFront, ToFront } from './front-protocol.js';
import { decodeWidth } from './decode-width.js';
import { imageFacts, type ImageFacts } from './image-facts.js';
import { SUB_X, SUB_Y } from '../core/glyphs/types.js';
import { gridRows } from '../core/pipeline/geometry.js';

interface WorkerScope {
  postMessage(message: FromWorker, transfer?: Transferable[]): void;
  addEventListener(type: 'message', listener: (event: MessageEvent<ToWorker>) => void): void;
}
const scope = globalThis as unknown as WorkerScope;

let painter: ArtPainter | null = null;
let params: ExplicitParams = {};
/**
 * The still source: decoded at full size, plus the decode-width copies the server would make;
 * `sourceId`, the page's number for it, goes with its results.
 */
interface Still { full: ImageBitmap; sized: Map<number, RgbaImage>; sourceId: number }
let still: Still | null = null;
/** The parameters of the still shown: exports use them, so a download is what is on screen. */
let goodParams: ExplicitParams = {};
/** What the canvas shows: exports and parameter changes act on it. */
let shownKind: 'none' | 'still' | 'frame' | 'remote' = 'none';
let streaming = false;
/** The page's number for the stream being rendered (see Still). */
let streamSourceId = 0;
let frames: FrameRenderer | null = null;
/** A live stream's back half, while its front half runs on the front thread (see frontThread). */
let back: FrameBack | null = null;
/** Counts resets of the frame state (parameters, source, filter switch): older frames in flight are dropped. */
let gen = 0;
let lastFrame: RgbaImage | null = null;
let previousCells: Uint16Array | null = null;
let last: { grid: PaintGrid; color: boolean; monoColor: string } | null = null;
let lastResult: RenderResult | null = null;
let wants = { compact: false, compactLine: false };
let temporal = true;

const post = (m: FromWorker, transfer?: Transferable[]) => scope.postMessage(m, transfer);

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** RGBA of a bitmap, `width` x `height` (smaller than the bitmap: resampled by the browser). */
async function pixels(bitmap: ImageBitmap, width = bitmap.width, height = bitmap.height): Promise<RgbaImage> {
  let source: ImageBitmap = bitmap;
  if (width !== bitmap.width || height !== bitmap.height) {
    source = await createImageBitmap(bitmap, { resizeWidth: width, resizeHeight: height, resizeQuality: 'high' });
  }
  const canvas = new OffscreenCanvas(width, height);
  const ctx = canvas.getContext('2d', { willReadFrequently: true })!;
  ctx.drawImage(source, 0, 0);
  if (source !== bitmap) source.close();
  let data: Uint8ClampedArray = ctx.getImageData(0, 0, width, height).data;
  // At full size the pixels are the server's decode, byte for byte, but where they are not opaque.
  // Found opaque, the render is told so: two-colour art then does not scan the alpha again.
  const solid = source === bitmap && opaque(data);
  if (source === bitmap && !solid) data = straightRgba(bitmap) ?? data;
  return solid ? { width, height, data, opaque: true } : { width, height, data };
}

function opaque(rgba: Uint8ClampedArray): boolean {
  for (let i = 3; i < rgba.length; i += 4) if (rgba[i] !== 255) return false;
  return true;
}

let gl: WebGL2RenderingContext | null | undefined;
/**
 * Straight (not premultiplied) RGBA of a bitmap decoded with premultiplyAlpha 'none', read through
 * WebGL2 as stored. A 2D canvas keeps premultiplied pixels: semi-transparent ones come back from it
 * rounded, transparent ones black, where the server's decode (and so its render) has them as the
 * file stores them. Null where WebGL2 is not offered here, or the bitmap is too large for it.
 */
function straightRgba(bitmap: ImageBitmap): Uint8ClampedArray | null {
  if (gl === undefined) {
    try {
      gl = new OffscreenCanvas(1, 1).getContext('webgl2');
    } catch {
      gl = null;
    }
  }
  const { width, height } = bitmap;
  if (!gl || gl.isContextLost() || Math.max(width, height) > (gl.getParameter(gl.MAX_TEXTURE_SIZE) as number)) return null;
  const texture = gl.createTexture();
  const framebuffer = gl.createFramebuffer();
  try {
    gl.bindTexture(gl.TEXTURE_2D, texture);
    gl.pixelStorei(gl.UNPACK_PREMULTIPLY_ALPHA_WEBGL, false);
    gl.pixelStorei(gl.UNPACK_COLORSPACE_CONVERSION_WEBGL, gl.NONE);
    gl.texImage2D(gl.TEXTURE_2D, 0, gl.RGBA8, gl.RGBA, gl.UNSIGNED_BYTE, bitmap);
    gl.bindFramebuffer(gl.FRAMEBUFFER, framebuffer);
    gl.framebufferTexture2D(gl.FRAMEBUFFER, gl.COLOR_ATTACHMENT0, gl.TEXTURE_2D, texture, 0);
    if (gl.checkFramebufferStatus(gl.FRAMEBUFFER) !== gl.FRAMEBUFFER_COMPLETE) return null;
    const data = new Uint8ClampedArray(width * height * 4);
    gl.readPixels(0, 0, width, height, gl.RGBA, gl.UNSIGNED_BYTE, new Uint8Array(data.buffer));
    return gl.getError() === gl.NO_ERROR ? data : null;
  } finally {
    gl.bindFramebuffer(gl.FRAMEBUFFER, null);
    gl.deleteFramebuffer(framebuffer);
    gl.deleteTexture(texture);
  }
}

let frameCanvas: OffscreenCanvasRenderingContext2D | null = null;
function framePixels(bitmap: ImageBitmap): RgbaImage {
  const { width, height } = bitmap;
  if (!frameCanvas || frameCanvas.canvas.width !== width || frameCanvas.canvas.height !== height) {
    frameCanvas = new OffscreenCanvas(width, height).getContext('2d', { willReadFrequently: true })!;
  }
  frameCanvas.drawImage(bitmap, 0, 0);
  bitmap.close();
  return { width, height, data: frameCanvas.getImageData(0, 0, width, height).data };
}

/** The still at the width the server decodes it for these columns (see decode-width.ts). */
async function stillImage(s: Still, columns: number): Promise<RgbaImage> {
  const { width, height } = decodeWidth(s.full.width, s.full.height, columns);
  let img = s.sized.get(width);
  if (!img) {
    // The grid follows the full size, as the server's does (RgbaImage.sourceWidth).
    img = { ...(await pixels(s.full, width, height)), sourceWidth: s.full.width, sourceHeight: s.full.height };
    if (s.sized.size >= 3) s.sized.delete(s.sized.keys().next().value!);
    s.sized.set(width, img);
  }
  return img;
}

function columnsOf(p: ExplicitParams): number {
  return typeof p.columns === 'number' ? p.columns : DEFAULTS.columns;
}

function paint(): number {
  if (!painter || !last) return 0;
  const t0 = performance.now();
  painter.paint(last.grid, last.color, last.monoColor);
  return performance.now() - t0;
}

function info(result: RenderResult, kind: ResultInfo['kind'], sourceId: number, renderMs: number, drawMs: number, flicker: number | null, director = result.director): ResultInfo {
  return {
    kind,
    sourceId,
    columns: result.columns,
    rows: result.rows,
    source: result.source,
    params: result.params,
    explicit: result.explicit,
    director,
    codebook: result.codebook,
    renderMs,
    drawMs,
    flicker,
    inkCoverage: inkShare(result),
  };
}

/** Share of cells drawn with a non-blank glyph (a nearly empty render is told as such). */
function inkShare(g: { glyphs: readonly string[]; cells: Uint16Array }): number {
  const blank = g.glyphs.map((ch) => ch.trim() === '' || ch === '\u2800');
  let ink = 0;
  for (let i = 0; i < g.cells.length; i++) if (!blank[g.cells[i]!]) ink++;
  return g.cells.length ? ink / g.cells.length : 0;
}

let stillJob = 0;
/**
 * Renders `candidate` (a newly opened still, source number `seq`) or the current still with the
 * current parameters. Nothing changes unless it succeeds: a failed new still is dropped and the
 * last good one, its parameters and its painting stay, so exports keep matching what is shown.
 * A render overtaken meanwhile (a newer still render, or a newer source for a candidate, or a
 * stream or server picture for the current still) is dropped unseen.
 */
async function renderStill(candidate?: { still: Still; seq: number }, id?: number): Promise<void> {
  const source = candidate?.still ?? still;
  if (!source) return;
  const job = ++stillJob;
  const p = params;
  try {
    const image = await stillImage(source, columnsOf(p));
    if (job !== stillJob || (candidate ? candidate.seq !== sourceSeq : streaming || shownKind !== 'still')) {
      if (candidate && candidate.still !== still) candidate.still.full.close();
      if (id !== undefined) post({ t: 'dropped', id });
      return;
    }
    const t0 = performance.now();
    const result = render(image, p);
    const renderMs = performance.now() - t0;
    if (candidate && candidate.still !== still) {
      still?.full.close();
      still = candidate.still;
    }
    goodParams = p;
    shownKind = 'still';
    lastResult = result;
    last = { grid: result, color: result.params.color, monoColor: result.params.monoColor };
    const drawMs = paint();
    post({ t: 'result', result: { ...info(result, 'still', source.sourceId, renderMs, drawMs, null), ...(id !== undefined ? { id } : {}) } });
  } catch (err) {
    if (candidate && candidate.still !== still) candidate.still.full.close();
    post({ t: 'error', during: candidate ? 'image' : 'render', ...(id !== undefined ? { id } : {}), message: errorText(err) });
  }
}

/**
 * A stream's frames carry the report's verdict, score and metrics measured at most every
 * REPORT_MS, and afresh on a retune or new parameters: the round-trip metric reads the colours,
 * which mono art otherwise never computes (about a tenth of a frame), and the page rebuilds the
 * report's DOM whenever they change; the score, which moves on every frame, made that every frame
 * (measured: the page's style and layout then took a core's third on 2 cores).
 */
const REPORT_MS = 500;
let report: { full: DirectorReport; shown: Pick<DirectorReport, 'status' | 'score' | 'metrics'>; at: number; key: readonly unknown[] } | null = null;

function frameReport(result: RenderResult, now: number): DirectorReport {
  const key = [temporal, gen, frameChoices(), params];
  if (!report || now - report.at >= REPORT_MS || key.some((k, i) => k !== report!.key[i])) {
    const d = result.director;
    report = { full: d, shown: { status: d.status, score: d.score, metrics: { ...d.metrics } }, at: now, key };
  }
  // In between, a filtered frame shows the last measured report whole: its tuning is kept, so
  // the rest is the same, and reading its own would score it (FrameRenderer scores on read). An
  // unfiltered frame is tuned anew: its own report, with the measured verdict.
  return { ...(temporal ? report.full : result.director), ...report.shown };
}

/** How many times the stream's tuning and codebook were chosen (with the temporal filter), else null. */
function frameChoices(): number | null {
  return back ? back.codebookChoices : frames ? frames.codebookChoices : null;
}

/** Forgets the stream's frame state: the next frame starts afresh, frames in flight are dropped. */
function resetFrames(): void {
  frames = null;
  back = null;
  gen++;
}

function renderFrame(bitmap: ImageBitmap | RgbaImage, from: FrameOrigin): void {
  try {
    const image = 'data' in bitmap ? bitmap : framePixels(bitmap);
    // The front thread, unless the filter is off or the thread could not start.
    const f = temporal ? frontThread() : null;
    if (f) {
      submitFrame(f, image, from);
      return;
    }
    showFrame(image, 0, () => renderHere(image));
  } catch (err) {
    post({ t: 'error', during: 'frame', message: errorText(err) });
  }
}

/** A stream frame rendered on this thread: through the temporal filter, or alone when it is off. */
function renderHere(image: RgbaImage): RenderResult {
  if (!temporal) return render(image, params);
  frames ??= new FrameRenderer(params);
  return frames.render(image);
}

/** A paused stream's frame, rendered again after a parameter change: no new frame comes to show it. */
function rerenderPaused(): void {
  const image = lastFrame;
  if (!image || shownKind !== 'frame') return;
  try {
    showFrame(image, 0, () => renderHere(image));
  } catch (err) {
    post({ t: 'error', during: 'frame', message: errorText(err) });
  }
}

/**
 * Shows a stream frame: `renderIt` renders `image` (`frontMs`: what its front half already took
 * on the front thread), then the report, flicker, painting and the result message.
 */
function showFrame(image: RgbaImage, frontMs: number, renderIt: () => RenderResult): void {
  const t0 = performance.now();
  const result = renderIt();
  const shown = lastFrame;
  lastFrame = image;
  if (shown) recycle(shown.data);
  // Timed with the render: a fresh report measures its metrics here.
  const director = frameReport(result, t0);
  const renderMs = frontMs + performance.now() - t0;
  let flicker: number | null = null;
  if (previousCells && previousCells.length === result.cells.length) {
    let changed = 0;
    for (let i = 0; i < result.cells.length; i++) if (result.cells[i] !== previousCells[i]) changed++;
    flicker = changed / result.cells.length;
  }
  previousCells = result.cells;
  shownKind = 'frame';
  lastResult = result;
  last = { grid: result, color: result.params.color, monoColor: result.params.monoColor };
  const drawMs = paint();
  const out: ResultInfo = {
    ...info(result, 'frame', streamSourceId, renderMs, drawMs, flicker, director),
    ...(frontMs > 0 ? { frontMs } : {}),
    codebookChoices: temporal ? frameChoices() : null,
    ...(wants.compact ? { compact: buildCompact(result) } : {}),
    ...(wants.compactLine ? { compactLine: formatResult(result, 'json-compact').body } : {}),
  };
  post({ t: 'result', result: out });
}

/**
 * The front thread (front-worker.ts) of live streams with the temporal filter: it runs each
 * frame's FrameFront while this thread runs the frame before through FrameBack and paints, at
 * most FRONT_IN_FLIGHT frames ahead. Started on the first such frame; null where this browser
 * cannot start a worker from a worker, or on one core, or after it failed: then FrameRenderer here.
 */
let front: FrontThread | null | undefined;
const FRONT_IN_FLIGHT = 2;
/** Where a frame came from: the worker's own stream reader, or a `frame` message of the page (which counts them). */
type FrameOrigin = 'stream' | 'page';
interface FrontThread {
  readonly worker: Worker;
  /** The generation whose parameters it has. */
  gen: number;
  /** Origins of the frames sent and not yet back, in order (it answers in order). */
  readonly origins: FrameOrigin[];
  /** The stream loop waiting for room (frontRoom). */
  wake: (() => void) | null;
}

function frontThread(): FrontThread | null {
  if (front !== undefined) return front;
  front = null;
  const cores = (globalThis as { navigator?: { hardwareConcurrency?: number } }).navigator?.hardwareConcurrency ?? 1;
  if (cores < 2 || typeof Worker === 'undefined') return null;
  try {
    const worker = new Worker(new URL('./front-worker.ts', import.meta.url), { type: 'module', name: 'v2a-front' });
    const f: FrontThread = { worker, gen: -1, origins: [], wake: null };
    worker.addEventListener('message', (event: MessageEvent<FromFront>) => onFront(f, event.data));
    // A thread that cannot start (or dies) hands the stream back to this one; the page's frames
    // it held are counted off.
    worker.addEventListener('error', () => {
      worker.terminate();
      front = null;
      for (const from of f.origins.splice(0)) if (from === 'page') post({ t: 'frame-dropped' });
      wake(f);
    });
    front = f;
  } catch {
    front = null;
  }
  return front;
}

function sendFront(f: FrontThread, m: ToFront, transfer: Transferable[] = []): void {
  f.worker.postMessage(m, transfer);
}

/** Sends a frame to the front thread (its pixels go there and come back with the handoff). */
function submitFrame(f: FrontThread, image: RgbaImage, from: FrameOrigin): void {
  if (f.gen !== gen) {
    sendFront(f, { t: 'params', gen, params });
    f.gen = gen;
  }
  f.origins.push(from);
  sendFront(f, { t: 'frame', gen, image }, [image.data.buffer as ArrayBuffer]);
}

function onFront(f: FrontThread, m: FromFront): void {
  const from = f.origins.shift();
  wake(f);
  if (m.t === 'stale' || m.gen !== gen || !streaming || !temporal) {
    recycle(m.image.data);
    if (from === 'page') post({ t: 'frame-dropped' });
    return;
  }
  if (m.t === 'error') {
    recycle(m.image.data);
    post({ t: 'error', during: 'frame', message: m.message });
    return;
  }
  try {
    showFrame(m.image, m.ms, () => (back ??= new FrameBack()).render(m.image, m.handoff));
  } catch (err) {
    post({ t: 'error', during: 'frame', message: errorText(err) });
  }
}

/**
 * Waits while the front thread has FRONT_IN_FLIGHT frames (the stream's processor drops frames
 * meanwhile), unless the stream of `reader` is stopped.
 */
async function frontRoom(f: FrontThread, reader: ReadableStreamDefaultReader<VideoFrame>): Promise<void> {
  while (front === f && streamReader === reader && f.origins.length >= FRONT_IN_FLIGHT) await new Promise<void>((resolve) => (f.wake = resolve));
}

function wake(f: FrontThread): void {
  const resolve = f.wake;
  f.wake = null;
  resolve?.();
}

/**
 * Camera and other MediaStream sources: the page hands over the track's frames as a stream
 * (MediaStreamTrackProcessor), and this loop renders them as fast as they come and the core
 * allows: at most FRONT_IN_FLIGHT ahead on the front thread, else one at a time (the processor
 * drops frames meanwhile). It needs no timer and no
 * requestAnimationFrame of the page, so it keeps its rate when the page is hidden (the a2v
 * receiver window in front).
 */
let paused = false;
let streamReader: ReadableStreamDefaultReader<VideoFrame> | null = null;
let grab: OffscreenCanvasRenderingContext2D | null = null;

/**
 * Stops the stream loop: it reads no more frames for rendering, and closes those still coming
 * until the stream ends (see drain).
 */
function stopStreamLoop(): void {
  streamReader = null;
  // A loop waiting for the front thread goes on to drain now: the next stream's loop, waiting in
  // its turn, would take its place (one waits at a time), and it would never wake.
  if (front) wake(front);
}

/**
 * Reads a stopped stream to its end, closing every frame. Cancelling it instead would drop the
 * frames queued on their way here (the transferred stream holds one or two) without closing them:
 * the browser warns of them ("A VideoFrame was garbage collected without being closed") and held
 * their memory till then. The end comes soon: the page stops the track whenever it changes
 * sources. (Chromium 156 still warns, in the page, of a frame its stream transfer itself loses
 * now and then, even when every frame that arrives here is closed.)
 */
async function drain(reader: ReadableStreamDefaultReader<VideoFrame>): Promise<void> {
  try {
    for (;;) {
      const { value, done } = await reader.read();
      value?.close();
      if (done) return;
    }
  } catch { /* an errored stream holds no frames */ }
}

/**
 * Frames are read with VideoFrame.copyTo in RGBA (the browser converts the camera's I420 or NV12
 * straight into our buffer) where the browser offers that conversion: measured in headless
 * Chromium 156 on 2 cores, 0.4 ms for a 640x480 frame against 2.5-8 ms for drawImage plus
 * getImageData on a 2D canvas, which at 200 columns was a quarter of the frame's time. Where it
 * is missing (copyTo rejects the `format` option) or the frame is rotated, flipped or has
 * non-square pixels, the canvas does it.
 */
let copyRgba = true;

/** The grid's working size (SUB_X x SUB_Y samples per cell) for a vw x vh source, or null when the render will refuse it. */
function gridSize(vw: number, vh: number): { w: number; h: number } | null {
  try {
    const columns = columnsOf(params);
    return { w: columns * SUB_X, h: gridRows(vw, vh, columns) * SUB_Y };
  } catch {
    return null; // too tall: the render reports it
  }
}

/**
 * Buffers the frames are copied into, reused. copyTo does its work inside the call, on this
 * thread: into a fresh 1.2 MB array (zeroed, its pages touched for the first time) a 640x480 frame
 * took 3-5 ms at 200 columns in headless Chromium on 2 cores, a sixth of the frame; into a reused
 * one, about 0.5 ms in an idle page against 1.3 ms fresh. A buffer comes back here once its frame
 * is no longer shown (the shown one stays what a snapshot, a still and the lazily computed colours
 * read), or when its frame was dropped; buffers sent to the front thread return with their frame.
 */
const freeBuffers: Uint8ClampedArray[] = [];
const MAX_FREE = 3;
function frameBuffer(size: number): Uint8ClampedArray {
  const i = freeBuffers.findIndex((x) => x.length === size);
  return i >= 0 ? freeBuffers.splice(i, 1)[0]! : new Uint8ClampedArray(size);
}

function recycle(data: RgbaImage['data']): void {
  if (!(data instanceof Uint8ClampedArray) || data.length === 0 || data === lastFrame?.data || freeBuffers.includes(data)) return;
  freeBuffers.push(data);
  if (freeBuffers.length > MAX_FREE) freeBuffers.shift();
}

/**
 * A VideoFrame's pixels. A frame up to 4x the grid's sample count comes as it is (the core's
 * area resampling shrinks it, for about 1 ms per 300k pixels); a larger one is shrunk to the
 * grid by the canvas first, where the conversion is the smaller cost.
 */
async function videoFramePixels(frame: VideoFrame): Promise<RgbaImage> {
  const vw = frame.displayWidth, vh = frame.displayHeight;
  const grid = gridSize(vw, vh);
  const rect = frame.visibleRect;
  const plain = rect !== null && rect.width === vw && rect.height === vh
    && !(frame as { rotation?: number }).rotation && !(frame as { flip?: boolean }).flip;
  if (copyRgba && plain && (!grid || vw * vh <= 4 * grid.w * grid.h)) {
    const options = { format: 'RGBA', colorSpace: 'srgb' } as unknown as VideoFrameCopyToOptions;
    try {
      const data = frameBuffer(frame.allocationSize(options));
      await frame.copyTo(data, options);
      if (data.length === vw * vh * 4) return { width: vw, height: vh, data };
    } catch { /* no RGBA conversion here */ }
    copyRgba = false;
  }
  let w = vw, hgt = vh;
  if (grid && grid.w < vw && grid.h < vh) { w = grid.w; hgt = grid.h; }
  if (!grab || grab.canvas.width !== w || grab.canvas.height !== hgt) {
    grab = new OffscreenCanvas(w, hgt).getContext('2d', { willReadFrequently: true })!;
    grab.imageSmoothingQuality = 'medium';
  }
  grab.drawImage(frame, 0, 0, w, hgt);
  // The readout and the reports name the stream's own size, not the working copy's (as a still's
  // decode-width copies keep theirs: RgbaImage.sourceWidth).
  const data = grab.getImageData(0, 0, w, hgt).data;
  return w === vw && hgt === vh ? { width: w, height: hgt, data } : { width: w, height: hgt, data, sourceWidth: vw, sourceHeight: vh };
}

async function streamLoop(readable: ReadableStream<VideoFrame>): Promise<void> {
  const reader = readable.getReader();
  streamReader = reader;
  try {
    while (streamReader === reader) {
      const f = temporal ? frontThread() : null;
      if (f) await frontRoom(f, reader);
      const { value: frame, done } = await reader.read();
      if (done || !frame) break;
      if (streamReader !== reader || paused || !streaming) {
        frame.close();
        continue;
      }
      let image: RgbaImage;
      try {
        image = await videoFramePixels(frame);
      } finally {
        frame.close();
      }
      // The copy is asynchronous: the stream may have stopped or paused meanwhile.
      if (streamReader !== reader || paused || !streaming) {
        recycle(image.data);
        continue;
      }
      renderFrame(image, 'stream');
    }
  } catch (err) {
    if (streamReader === reader) post({ t: 'error', during: 'frame', message: errorText(err) });
  } finally {
    if (streamReader !== reader) await drain(reader);
    reader.releaseLock();
    if (streamReader === reader) {
      streamReader = null;
      post({ t: 'stream-ended', sourceId: streamSourceId });
    }
  }
}

/** A server-rendered grid as a PaintGrid (glyph table from the distinct characters). */
function remoteGrid(g: RemoteGrid): PaintGrid {
  const glyphs: string[] = [];
  const index = new Map<string, number>();
  const cells = new Uint16Array(g.columns * g.rows);
  const colors = new Uint8Array(g.columns * g.rows * 3);
  const background = g.background ? new Uint8Array(g.columns * g.rows * 3) : undefined;
  let clear: Uint8Array | undefined;
  const rgb = (plane: Uint8Array, hex: string | null | undefined, i: number) => {
    if (hex === null && plane === background) (clear ??= new Uint8Array(g.columns * g.rows))[i] = 1;
    if (!hex) return;
    const v = parseInt(hex.slice(1), 16);
    plane[i * 3] = (v >>> 16) & 255;
    plane[i * 3 + 1] = (v >>> 8) & 255;
    plane[i * 3 + 2] = v & 255;
  };
  g.lines.forEach((line, y) => {
    let x = 0;
    for (const ch of line) {
      let k = index.get(ch);
      if (k === undefined) {
        k = glyphs.length;
        glyphs.push(ch);
        index.set(ch, k);
      }
      cells[y * g.columns + x] = k;
      rgb(colors, g.colors?.[y]?.[x], y * g.columns + x);
      if (background) rgb(background, g.background?.[y]?.[x], y * g.columns + x);
      x++;
    }
  });
  return { columns: g.columns, rows: g.rows, glyphs, cells, colors, ...(background ? { background } : {}), ...(clear ? { clear } : {}) };
}

async function exportFormat(id: number, format: Format, maxPixels: number): Promise<void> {
  try {
    let result: RenderResult;
    // `format` last, as the studio's API equivalent (and the tests' API call) sends it.
    const { format: _, ...rest } = goodParams;
    const withFormat = { ...rest, format };
    if (shownKind === 'still' && still) result = render(await stillImage(still, columnsOf(goodParams)), withFormat);
    // A copy with the format among its params only for json, which writes them (and reads the
    // colours anyway): a spread reads (and computes) the colours a mono render defers, from a
    // frame's pixels that may have moved on. The others are given the format, as pngWithinLimit is.
    else if (lastResult) result = format === 'json' ? { ...lastResult, params: { ...lastResult.params, format } } : lastResult;
    else throw new Error('nothing to export yet: open an image, the webcam or a video');
    pngWithinLimit(result, { maxPixels }, format);
    const out = formatResult(result, format);
    post({ t: 'export', id, format, body: out.body, extension: out.extension, contentType: out.contentType });
  } catch (err) {
    post({ t: 'error', id, during: 'export', message: errorText(err) });
  }
}

function setView(view: ViewSettings): void {
  painter?.setView(view.cell, view.ground);
}

/** Counts source changes, so a slow snapshot cannot replace a source opened after it. */
let sourceSeq = 0;

scope.addEventListener('message', (event) => {
  const m = event.data;
  if (m.t === 'image' || m.t === 'remote' || m.t === 'stream') sourceSeq++;
  switch (m.t) {
    case 'canvas':
      painter = new ArtPainter(m.canvas);
      setView(m.view);
      break;
    case 'view':
      setView(m.view);
      paint();
      break;
    case 'params':
      params = m.params;
      if (streaming) {
        resetFrames();
        if (paused) rerenderPaused();
      } else if (still && shownKind === 'still') void renderStill();
      break;
    case 'image': {
      // Set now: parameters that come while it decodes are newer.
      params = m.params;
      const seq = sourceSeq;
      void (async () => {
        let full: ImageBitmap;
        let facts: ImageFacts;
        try {
          facts = imageFacts(new Uint8Array(await m.blob.slice(0, 256 * 1024).arrayBuffer()));
          const colorSpaceConversion = facts.icc ? 'default' : 'none';
          full = await createImageBitmap(m.blob, { colorSpaceConversion, premultiplyAlpha: 'none', imageOrientation: 'from-image' });
        } catch (err) {
          // The browser cannot decode it (TIFF, SVG, a damaged file): the page asks the server,
          // which renders TIFF and names what is wrong with the others.
          post({ t: 'error', id: m.id, during: 'decode', message: errorText(err) });
          return;
        }
        // A source opened while it decoded (a large image takes seconds) wins: this one is dropped.
        if (seq !== sourceSeq) {
          full.close();
          post({ t: 'dropped', id: m.id });
          return;
        }
        stopStreamLoop();
        streaming = false;
        resetFrames();
        post({ t: 'loaded', id: m.id, width: full.width, height: full.height, cmyk: facts.cmyk });
        await renderStill({ still: { full, sized: new Map(), sourceId: m.sourceId }, seq }, m.id);
      })();
      break;
    }
    case 'stream':
      streaming = m.on;
      if (m.on) streamSourceId = m.sourceId;
      // Every stream starts playing (one stopped while paused left the flag set).
      paused = false;
      resetFrames();
      previousCells = null;
      stopStreamLoop();
      if (m.on && m.readable) void streamLoop(m.readable);
      break;
    case 'pause':
      paused = m.on;
      break;
    case 'temporal':
      temporal = m.on;
      resetFrames();
      // As for new parameters: a paused stream's held frame shows the change.
      if (streaming && paused) rerenderPaused();
      break;
    case 'frame':
      if (streaming) renderFrame(m.bitmap, 'page');
      else {
        m.bitmap.close();
        post({ t: 'frame-dropped' });
      }
      break;
    case 'snapshot':
      if (lastFrame) {
        const f = lastFrame;
        const seq = ++sourceSeq;
        streaming = false;
        resetFrames();
        stopStreamLoop();
        void createImageBitmap(new ImageData(new Uint8ClampedArray(f.data), f.width, f.height)).then((full) => {
          // A source opened meanwhile wins.
          if (seq !== sourceSeq) full.close();
          else return renderStill({ still: { full, sized: new Map(), sourceId: m.sourceId }, seq });
        });
      }
      break;
    case 'remote': {
      streaming = false;
      shownKind = 'remote';
      stopStreamLoop();
      const g = remoteGrid(m.grid);
      last = { grid: g, color: m.grid.params.color, monoColor: m.grid.params.monoColor };
      const drawMs = paint();
      post({ t: 'result', result: { kind: 'remote', sourceId: m.sourceId, columns: g.columns, rows: g.rows, source: m.grid.source, params: m.grid.params, explicit: m.grid.explicit, director: m.grid.director, codebook: m.grid.codebook, renderMs: 0, drawMs, flicker: null, inkCoverage: inkShare(g) } });
      break;
    }
    case 'export':
      void exportFormat(m.id, m.format, m.maxPixels);
      break;
    case 'wants':
      wants = { compact: m.compact, compactLine: m.compactLine };
      break;
  }
});

// A warm-up while the page waits for its first image: the core's warm-up renders of its scene,
// nothing painted or posted, so that the first still runs on warmed-up code (a message that
// comes meanwhile waits for it; measured in headless Chromium on 2 cores: see bench/README).
setTimeout(() => {
  try {
    const scene = warmUpScene();
    for (const p of WARM_UP_RENDERS) render(scene, p);
  } catch {
    /* a failed warm-up leaves the worker cold, not broken: real renders report their own errors */
  }
}, 0);
