/**
 * Node image adapter: bytes in, `RgbaImage` (8-bit sRGB, straight alpha, RGBA row-major) out,
 * on sharp/libvips. The renderer core never decodes; this is its Node front door.
 *
 * Safety, in this order, before any pixel is decoded (the header's checks are inspect.ts's):
 *  1. 0 bytes -> `empty`; more than `maxBytes` (if given: ./index.ts always gives it) -> `too_large`.
 *  2. Only the header is read (`metadata()`), with sharp's own pixel limit switched off so that
 *     an absurd header is reported by us as `too_many_pixels` rather than as a generic failure.
 *  3. The container format must be one of ALLOWED_FORMATS. sharp would happily rasterize SVG
 *     (and PDF with a libvips built for it); we refuse them here, before any decode.
 *  4. width x height (of one page) must be <= maxPixels, checked on the header and again by
 *     libvips through `limitInputPixels`.
 *  5. Decoding runs with `failOn: 'warning'` (truncated or corrupt data is refused, never
 *     half-rendered, unless the caller asks for `partial`, as the CLI does) and `.timeout()`.
 *
 * Threads and cache: libvips runs every pipeline on its own thread pool, sized by
 * `sharp.concurrency()` (default: number of cores). Several pipelines running at once (one per
 * request) each use that many threads, so a worker pool that runs N decodes in parallel should
 * call `configureSharp({ concurrency: 1 })` in each worker (N workers x 1 thread), otherwise
 * threads oversubscribe the cores. Each pipeline also holds a thread of libuv's pool, one per
 * process and shared by every worker thread (UV_THREADPOOL_SIZE, 4 by default): a pool of N
 * workers needs at least N + 1 (src/settings/thread-pool.ts). The libvips operation cache only
 * helps when the same operation runs on the same input again, which never happens for one-shot
 * decodes of uploaded bytes, and it holds memory: v2a's own processes (the server's workers, the
 * CLI, the MCP stdio face) switch it off with `configureSharp()`. Importing this module leaves
 * sharp's settings alone: they are process-wide, and an app may use sharp for its own work.
 */
import type { OutputInfo, ResizeOptions, Sharp } from 'sharp';
import { checkBytes, checkOptions, describeType } from '../core/args.js';
import { ImageInputError, fromSharpError } from './errors.js';
import type { DecodedFrame as JobFrame, DecodedImage as JobImage, LimitNames } from '../core/job.js';
import type { ImageFormat } from './formats.js';
import { admitted, cutShort, inspect, limitName, refuseCutShort, type Inspection } from './inspect.js';
import { sharp } from './sharp.js';
import { withoutPngText } from './structure.js';
import { DecodeBudget } from './decode-budget.js';

/** Formats whose extra pages are animation frames (TIFF and AVIF pages are not). */
const ANIMATED_FORMATS: ReadonlySet<ImageFormat> = new Set(['gif', 'webp']);

/** Resize kernel for shrink-on-load decodes; see decodeImage. */
export const RESIZE_KERNEL = 'mitchell' as const;

/**
 * Options of a decode. A limit's refusal is an ImageInputError of code `image-too-large` whose
 * `reason` names the limit. v2a/node's decodeImage and decodeFrames take every option as
 * optional, `maxPixels` and `maxBytes` defaulting to DEFAULT_DECODE_LIMITS.
 */
export interface DecodeOptions {
  /**
   * Refuse images with more than this many pixels (width x height of one page): reason
   * `too_many_pixels`. Default: DEFAULT_DECODE_LIMITS.maxPixels (50 megapixels).
   */
  readonly maxPixels: number;
  /**
   * Decode to at least this width (after EXIF orientation) when the image is wider: shrink-on-load
   * makes this much cheaper than a full decode. Never enlarges.
   */
  readonly targetWidth?: number;
  /** Same for height. With both, the result covers targetWidth x targetHeight ('outside' fit). */
  readonly targetHeight?: number;
  /**
   * Abort decoding after this many seconds of decoder work in all, over every pipeline of the
   * call: reason `decode_timeout`. A whole number, as libvips' clock counts; 0 or absent: no
   * timeout.
   */
  readonly timeoutSeconds?: number;
  /**
   * Refuse inputs longer than this many bytes: reason `too_large`. Default:
   * DEFAULT_DECODE_LIMITS.maxBytes (16 MiB); there is always a limit, so give a larger one for
   * larger input.
   */
  readonly maxBytes?: number;
  /**
   * Refuse images whose decoder memory, estimated from the header (see decodedBytes), exceeds
   * this many bytes: reason `too_many_decoded_bytes`. Absent: no check.
   */
  readonly maxDecodedBytes?: number;
  /**
   * Work for this thread while libvips decodes the pixels on its own: called once, without
   * arguments, when the decode has started (decodeImage only). What it throws, or the promise it
   * returns rejects with, is ignored.
   */
  readonly whileDecoding?: () => void | Promise<void>;
  /**
   * Called with the image's size after EXIF orientation once the header is read, before any pixel
   * is decoded; what it throws (or the promise it returns rejects with) is thrown. The render job
   * refuses here a grid no column count can have (a 1 x 40,000,000 PNG passes the pixel limit,
   * and libvips took minutes over it).
   */
  readonly checkSize?: (width: number, height: number) => void | Promise<void>;
  /** How refusals name the limits (the render job's DecodeRequest.limitNames); absent: as these options. */
  readonly limitNames?: LimitNames;
  /**
   * An image whose data is truncated or damaged is decoded as far as it goes (what the file
   * lacks comes out grey or black) and marked `damaged` (each frame of decodeFrames), instead of refused as
   * `undecodable`. For a viewer of files still downloading; a service refuses them (the default).
   */
  readonly partial?: boolean;
}

export interface FrameDecodeOptions extends DecodeOptions {
  /** Yield at most this many frames (the first ones); `count` then reports this number. */
  readonly maxFrames?: number;
}

/** The job's decoded image (core/job.ts), as this decoder gives it: bytes, and a format it reads. */
export interface DecodedImage extends JobImage {
  readonly data: Uint8Array;
  readonly format: ImageFormat;
  /** With `partial`: the data was truncated or damaged, and only what could be decoded is shown. */
  readonly damaged?: true;
}

/** The job's frame of an animation (core/job.ts), as decodeFrames gives it. */
export interface DecodedFrame extends JobFrame {
  readonly data: Uint8Array;
  readonly format: ImageFormat;
  /** With `partial`: the file was truncated or damaged, and this frame is what could be decoded. */
  readonly damaged?: true;
}

export interface ProbeResult {
  readonly format: ImageFormat;
  /** Width and height after EXIF orientation (of one page/frame). */
  readonly width: number;
  readonly height: number;
  /** Number of pages or frames (1 for a still image). */
  readonly pages: number;
}

/**
 * Settings for the process-wide sharp/libvips runtime. Call once per process or worker thread,
 * before decoding (e.g. `configureSharp({ concurrency: 1 })` in each worker of a pool).
 * `concurrency`: libvips threads per pipeline (0: one per core); absent, sharp's is kept.
 * `cache`: whether libvips keeps its operation cache; absent, the cache is switched off, as v2a's
 * own processes run it (one-shot decodes never hit it, and it holds memory): pass `cache: true`
 * for sharp's default cache. Both are process-wide: they apply to the app's own sharp calls too.
 */
export function configureSharp(opts: { concurrency?: number; cache?: boolean } = {}): void {
  checkOptions(opts, SHARP_OPTIONS, 'configureSharp');
  const c = opts.concurrency;
  // sharp takes any number and keeps what libvips makes of it (-1 became 1, 2.5 became 2).
  if (c !== undefined && !(Number.isSafeInteger(c) && c >= 0)) {
    throw new RangeError(`configureSharp: concurrency must be an integer >= 0, 0 for one thread per core (got ${got(c)})`);
  }
  if (opts.cache !== undefined && typeof opts.cache !== 'boolean') throw new TypeError('configureSharp: cache must be a boolean');
  if (opts.concurrency !== undefined) sharp.concurrency(opts.concurrency);
  sharp.cache(opts.cache ?? false);
}

const SHARP_OPTIONS: ReadonlySet<string> = new Set(['concurrency', 'cache']);

function toBuffer(input: Uint8Array): Buffer {
  return Buffer.isBuffer(input) ? input : Buffer.from(input.buffer, input.byteOffset, input.byteLength);
}

/** The bytes libvips is given: the input less what would cost it without bound (structure.ts). */
function readable(input: Uint8Array): Buffer {
  return withoutPngText(toBuffer(input));
}

function checkInput(input: Uint8Array, limits: Pick<DecodeOptions, 'maxBytes' | 'limitNames'> | undefined, who = 'decode'): void {
  checkBytes(input, `${who}: input`);
  if (input.byteLength === 0) throw new ImageInputError('empty');
  const maxBytes = limits?.maxBytes;
  if (maxBytes !== undefined && input.byteLength > maxBytes) {
    throw new ImageInputError(
      'too_large',
      `The image is too large (${input.byteLength} bytes); the limit is ${maxBytes} bytes (${limitName(limits!, 'maxBytes')}).`,
    );
  }
}

/** sharp's own bound on a resize's width and height. */
const MAX_TARGET = 100_000_000;

/** A value as a refusal shows it: a string quoted (`"2"` is no number), anything else as it prints. */
const got = (v: unknown): string => (typeof v === 'string' ? JSON.stringify(v) : typeof v === 'number' || typeof v === 'boolean' || v == null ? String(v) : describeType(v));

/**
 * Throws a RangeError (a TypeError for a value of the wrong kind) naming the first option at
 * fault and what it was given; `who` names the caller (`decode`, `renderBytes`).
 */
export function validateOptions(opts: DecodeOptions, who = 'decode'): void {
  // A number of the wrong kind ("5") is a TypeError, as the other options' are; out of range, a RangeError.
  for (const k of ['maxPixels', 'targetWidth', 'targetHeight', 'maxBytes', 'maxDecodedBytes', 'timeoutSeconds'] as const) {
    const v: unknown = opts[k];
    if ((v !== undefined || k === 'maxPixels') && typeof v !== 'number') throw new TypeError(`${who}: ${k} must be a number (got ${got(v)})`);
  }
  if (!(Number.isInteger(opts.maxPixels) && opts.maxPixels > 0)) {
    throw new RangeError(`${who}: maxPixels must be a positive integer (got ${got(opts.maxPixels)})`);
  }
  for (const k of ['targetWidth', 'targetHeight'] as const) {
    const v = opts[k];
    if (v !== undefined && !(Number.isInteger(v) && v > 0 && v <= MAX_TARGET)) throw new RangeError(`${who}: ${k} must be an integer from 1 to ${MAX_TARGET} (got ${got(v)})`);
  }
  for (const k of ['maxBytes', 'maxDecodedBytes'] as const) {
    const m = opts[k];
    if (m !== undefined && !(Number.isSafeInteger(m) && m > 0)) throw new RangeError(`${who}: ${k} must be a positive integer (got ${got(m)})`);
  }
  const t = opts.timeoutSeconds;
  // sharp's timeout takes whole seconds up to an hour: a fraction or a longer one is not quietly
  // rounded to what it can do.
  if (t !== undefined && !(Number.isInteger(t) && t >= 0 && t <= 3600)) {
    throw new RangeError(`${who}: timeoutSeconds must be a whole number of seconds from 0 to 3600 (got ${got(t)})`);
  }
  // The rest are read only when needed: a wrong kind would be ignored ('false' switched partial
  // on) or fail later as "opts.checkSize is not a function".
  for (const k of ['whileDecoding', 'checkSize'] as const) {
    if (opts[k] !== undefined && typeof opts[k] !== 'function') throw new TypeError(`${who}: ${k} must be a function (got ${got(opts[k])})`);
  }
  if (opts.partial !== undefined && typeof opts.partial !== 'boolean') throw new TypeError(`${who}: partial must be a boolean (got ${got(opts.partial)})`);
  const names = opts.limitNames as unknown;
  if (names !== undefined && (typeof names !== 'object' || names === null || Object.values(names).some((n) => typeof n !== 'string'))) {
    throw new TypeError(`${who}: limitNames must be an object of names (strings) for maxPixels, maxBytes and maxDecodedBytes (got ${got(names)})`);
  }
}

type Pixels = { data: Uint8Array; width: number; height: number };

/**
 * Resize options for a decode to at least targetWidth x targetHeight, or undefined when no
 * target is set. 'outside' with both sides: never smaller than the target in either dimension
 * (the core area-averages further down). With one side given, 'inside' and 'outside' agree.
 */
function resizeFor(opts: DecodeOptions): ResizeOptions | undefined {
  const { targetWidth, targetHeight } = opts;
  if (targetWidth === undefined && targetHeight === undefined) return undefined;
  return {
    ...(targetWidth !== undefined ? { width: targetWidth } : {}),
    ...(targetHeight !== undefined ? { height: targetHeight } : {}),
    fit: targetWidth !== undefined && targetHeight !== undefined ? 'outside' : 'inside',
    withoutEnlargement: true,
    fastShrinkOnLoad: true,
    kernel: RESIZE_KERNEL,
  };
}

/** The options of one decodeImage or decodeFrames call, with its budget. */
type Run = DecodeOptions & { readonly budget: DecodeBudget };
const startRun = (opts: DecodeOptions): Run => ({ ...opts, budget: new DecodeBudget(opts.timeoutSeconds ?? 0) });

const ignore = (): void => undefined;

/** Run a pipeline to 8-bit sRGB RGBA; map failures to ImageInputError. */
async function toRgba(pipeline: Sharp, opts: Run, whileDecoding?: () => void | Promise<void>): Promise<{ data: Uint8Array; info: OutputInfo }> {
  let out: { data: Buffer; info: OutputInfo };
  try {
    out = await opts.budget.run(pipeline, (p) => {
      // toBuffer, not toUint8Array: sharp 0.35's toUint8Array copies the whole output on the JS
      // thread (measured +20..100 ms for a 12 MP decode); toBuffer wraps libvips' memory.
      const decoding = p.toColourspace('srgb').ensureAlpha().raw({ depth: 'uchar' }).toBuffer({ resolveWithObject: true });
      try {
        // The caller's own work; the decode goes on whatever becomes of it.
        const done = whileDecoding?.();
        if (done instanceof Promise) done.catch(ignore);
      } catch {
        /* ignored, as documented */
      }
      return decoding;
    });
  } catch (err) {
    throw fromSharpError(err, { maxPixels: opts.maxPixels, maxPixelsName: limitName(opts, 'maxPixels'), timeoutSeconds: opts.timeoutSeconds });
  }
  const { info } = out;
  // A plain Uint8Array view (no copy). Its ArrayBuffer is external memory and may not be
  // transferable to another thread: copy (`.slice()`) before postMessage transfer lists.
  const data = new Uint8Array(out.data.buffer, out.data.byteOffset, out.data.byteLength);
  if (info.channels !== 4 || data.byteLength !== info.width * info.height * 4) {
    throw new ImageInputError('undecodable', undefined, {
      cause: `unexpected output ${info.width}x${info.height}x${info.channels} (${data.byteLength} bytes)`,
    });
  }
  return { data, info };
}

/** One decode pipeline: one page only, oriented, optionally shrunk on load, sRGB 8-bit RGBA. */
async function decodePage(buf: Buffer, page: number | undefined, opts: Run, header: Inspection, whileDecoding?: () => void | Promise<void>, failOn: 'warning' | 'none' = 'warning'): Promise<Pixels> {
  // Without `page`, sharp loads its default first/primary page (one page, not the whole
  // animation); `page` is only passed for frames of animations.
  let pipeline = sharp(buf, {
    failOn,
    limitInputPixels: opts.maxPixels,
    autoOrient: true,
    ...(page !== undefined ? { page, pages: 1 } : {}),
  });
  if (header.sixteenBit) pipeline = await widen16BitSamples(buf, page, opts, pipeline, header.channels, header.hasAlpha);
  const resize = resizeFor(opts);
  if (resize) pipeline = pipeline.resize(resize);
  const { data, info } = await toRgba(pipeline, opts, whileDecoding);
  return { data, width: info.width, height: info.height };
}

/**
 * A 16-bit image whose colour samples all lie in 0..255 holds 8-bit values in 16-bit words (a
 * common export mistake): the 8-bit conversion (divide by 257) would leave nothing but 0 and 1,
 * an all-black image that renders as a blank grid. Such samples are scaled by 257 first, so the
 * image keeps its 256 levels (an alpha band too, when it also lies in 0..255). Only 16-bit inputs (the header says so: inspect()) pay for the
 * check; the header is not read again.
 *
 * The largest sample is read from the image reduced to at most SAMPLE_CHECK_SIZE across by a
 * linear (triangle) filter, a weighted mean with no overshoot, in a pipeline with the decode's
 * timeout: sharp's stats() has no timeout (its work outlived a timed-out render, holding a libuv
 * thread), and it took 2.4 s on a 7000 x 7000 16-bit PNG where this pass takes about 0.3 s. A
 * true 16-bit image whose means all stay in 0..255 is within 0.4 % of black everywhere: widened,
 * its content shows rather than a blank grid.
 */
async function widen16BitSamples(buf: Buffer, page: number | undefined, opts: Run, pipeline: Sharp, channels: number, hasAlpha: boolean): Promise<Sharp> {
  // In its own 16-bit colourspace (sharp's output is otherwise sRGB scaled to 0..255): grey or RGB;
  // a 16-bit CMYK image is left to the conversion as it is.
  const colourBands = channels - (hasAlpha ? 1 : 0);
  if (colourBands !== 1 && colourBands !== 3) return pipeline;
  const probe = sharp(buf, { failOn: 'warning', limitInputPixels: opts.maxPixels, ...(page !== undefined ? { page, pages: 1 } : {}) })
    .resize({ width: SAMPLE_CHECK_SIZE, height: SAMPLE_CHECK_SIZE, fit: 'inside', withoutEnlargement: true, kernel: 'linear' })
    .toColourspace(colourBands === 1 ? 'grey16' : 'rgb16');
  let samples: { data: Buffer; info: OutputInfo };
  try {
    samples = await opts.budget.run(probe, (p) => p.raw({ depth: 'ushort' }).toBuffer({ resolveWithObject: true }));
  } catch (err) {
    throw fromSharpError(err, { maxPixels: opts.maxPixels, maxPixelsName: limitName(opts, 'maxPixels'), timeoutSeconds: opts.timeoutSeconds });
  }
  const bands = samples.info.channels;
  const words = new Uint16Array(samples.data.buffer, samples.data.byteOffset, samples.data.byteLength >> 1);
  const max = new Array<number>(bands).fill(0);
  for (let i = 0; i < words.length; i += bands) {
    for (let b = 0; b < bands; b++) if (words[i + b]! > max[b]!) max[b] = words[i + b]!;
  }
  const colour = hasAlpha ? max.slice(0, -1) : max;
  if (!colour.length || colour.some((m) => m > 255)) return pipeline;
  // Alpha is widened by the same mistake when it lies in 0..255 too (else 255, opaque, would read
  // as 255/65535, transparent); a true 16-bit alpha (above 255 somewhere) is kept.
  const gains = max.map((m, i) => (hasAlpha && i === bands - 1 && m > 255 ? 1 : 257));
  return pipeline.linear(gains, gains.map(() => 0));
}

/** Width and height the 16-bit check reduces an image to (at most): 1 MP of samples. */
const SAMPLE_CHECK_SIZE = 1024;

/**
 * Decode `count` consecutive animation frames from `start` in one pipeline, then split them and
 * resize each one on its own (sharp's resize of a multi-page strip bleeds the filter across
 * frame borders for GIF). Only for frames without EXIF orientation.
 */
async function decodeChunk(
  buf: Buffer,
  start: number,
  count: number,
  frame: { width: number; height: number },
  opts: Run,
  failOn: 'warning' | 'none' = 'warning',
): Promise<Pixels[]> {
  const pipeline = sharp(buf, {
    failOn,
    limitInputPixels: opts.maxPixels,
    page: start,
    pages: count,
  });
  const { data, info } = await toRgba(pipeline, opts);
  const pageHeight = count > 1 ? (info.pageHeight ?? frame.height) : info.height;
  const got = Math.floor(info.height / pageHeight);
  if (info.width !== frame.width || pageHeight !== frame.height || got !== count) {
    throw new ImageInputError('undecodable', undefined, {
      cause: `frames ${start}..${start + count - 1}: got ${info.width}x${info.height}, ${got} pages`,
    });
  }
  const frameBytes = info.width * pageHeight * 4;
  const resize = resizeFor(opts);
  const frames: Pixels[] = [];
  for (let i = 0; i < count; i++) {
    const view = data.subarray(i * frameBytes, (i + 1) * frameBytes);
    if (!resize) {
      // A copy, so that a frame the consumer keeps does not pin the whole chunk.
      frames.push({ data: view.slice(), width: info.width, height: pageHeight });
      continue;
    }
    const raw = sharp(view, { raw: { width: info.width, height: pageHeight, channels: 4 } }).resize(resize);
    const out = await toRgba(raw, opts);
    frames.push({ data: out.data, width: out.info.width, height: out.info.height });
  }
  return frames;
}

/**
 * Pixels of one decode chunk of an animation. Decoding GIF page i in its own pipeline makes
 * libvips decode frames 0..i again (frames depend on their predecessors), so frame-by-frame
 * pipelines cost frames² decodes: measured 0.93 s (GIF) and 1.48 s (WebP) for 60 frames of
 * 320x240, against 0.28 s and 0.11 s for one pipeline. Chunks of up to this many pixels (16 MiB
 * of RGBA) keep memory bounded, and the cost close to linear while many frames fit in a chunk.
 * Large frames do not: at a megapixel each, four to a chunk, every chunk decodes the frames
 * before it again (60 frames of 1000 x 1000 WebP: 6.4 s, against 2.1 s for one pipeline that
 * holds all 240 MB; sharp's raw stream output arrives in one piece at the end, so it cannot be
 * read a frame at a time instead). Bounded memory is kept; `maxFrames` bounds the time.
 */
export const FRAME_CHUNK_PIXELS = 4 * 1024 * 1024;

/**
 * Decode the first frame/page of an image to 8-bit sRGB RGBA with straight alpha (alpha is not
 * flattened: the core composites it over the output ground). EXIF orientation is applied; CMYK
 * (with or without an ICC profile), 16-bit, palette, grey and grey+alpha inputs all come out as
 * RGBA 8-bit; embedded ICC profiles are converted to sRGB.
 *
 * With `targetWidth` (and/or `targetHeight`) the image is decoded at reduced size: libvips'
 * shrink-on-load (JPEG DCT scaling, WebP scaled decode) skips most of the work, then a Mitchell
 * filter brings it to the target. The result is at least the target size (unless the source is
 * smaller: it is never enlarged). Mitchell was chosen over Lanczos3 because it measured equally
 * fast, slightly closer to a full-resolution area average, and without ringing.
 *
 * Throws ImageInputError (reasons: empty, unsupported_format, undecodable, too_large,
 * too_many_pixels, too_many_decoded_bytes, decode_timeout).
 */
export async function decodeImage(input: Uint8Array, opts: DecodeOptions): Promise<DecodedImage> {
  validateOptions(opts);
  checkInput(input, opts);
  const buf = readable(input);
  const info = await admitted(buf, opts);
  const cut = cutShortUnlessPartial(buf, info, opts);
  const run = startRun(opts);
  const { page, damaged } = await decodeLenient(opts, cut, (failOn) => decodePage(buf, undefined, run, info, failOn === 'warning' ? opts.whileDecoding : undefined, failOn));
  return {
    width: page.width,
    height: page.height,
    data: page.data,
    sourceWidth: info.width,
    sourceHeight: info.height,
    // No alpha band (a JPEG): two-colour art need not look for transparency.
    ...(info.hasAlpha ? {} : { opaque: true }),
    format: info.format,
    ...(damaged ? { damaged: true as const } : {}),
  };
}

/** Whether a GIF stops short: refused, unless the caller takes `partial` images (then damaged). */
function cutShortUnlessPartial(buf: Buffer, info: Inspection, opts: DecodeOptions): boolean {
  if (!opts.partial) refuseCutShort(buf, info);
  return opts.partial === true && cutShort(buf, info);
}

/**
 * A decode, strict first, so that an intact image is never marked damaged; with `partial`, one
 * the strict decoder refuses as undecodable is decoded again as far as it goes (with what is left
 * of the call's time budget), and marked damaged.
 */
async function decodeLenient<T>(opts: DecodeOptions, cut: boolean, decode: (failOn: 'warning' | 'none') => Promise<T>): Promise<{ page: T; damaged: boolean }> {
  try {
    return { page: await decode('warning'), damaged: cut };
  } catch (err) {
    if (!opts.partial || !(err instanceof ImageInputError) || err.reason !== 'undecodable') throw err;
    try {
      return { page: await decode('none'), damaged: true };
    } catch {
      throw err;
    }
  }
}

/** Browsers show GIF frames with a delay of 0 or 10 ms for 100 ms; so do we. */
function frameDelay(format: ImageFormat, delay: readonly number[] | undefined, index: number): number {
  const d = delay?.[index];
  if (d === undefined || !Number.isFinite(d) || d < 0) return 100;
  if (format === 'gif' && d <= 10) return 100;
  return d;
}

/**
 * Decode the frames of an animated GIF or WebP, yielding them one at a time. A still image, a
 * TIFF or an AVIF yields exactly one frame (the first page) with `delayMs` 0. Same options,
 * orientation, colour handling and shrink-on-load as decodeImage; `maxPixels` applies to one
 * frame.
 *
 * Memory stays bounded: frames are decoded in chunks of at most FRAME_CHUNK_PIXELS (and at most
 * `maxPixels`) source pixels, a large frame alone in its own pipeline; never the whole animation
 * at once. Each frame is resized on its own. Cap `maxFrames` for long animations.
 *
 * The header is checked before the first `next()` resolves, so invalid input throws on the first
 * iteration.
 */
export async function* decodeFrames(
  input: Uint8Array,
  opts: FrameDecodeOptions,
): AsyncGenerator<DecodedFrame, void, undefined> {
  validateOptions(opts);
  checkInput(input, opts);
  const buf = readable(input);
  const info = await admitted(buf, opts);
  const cut = cutShortUnlessPartial(buf, info, opts);
  const animated = ANIMATED_FORMATS.has(info.format) && info.pages > 1;
  let count = animated ? info.pages : 1;
  if (opts.maxFrames !== undefined) {
    if (!(Number.isInteger(opts.maxFrames) && opts.maxFrames > 0)) {
      throw new RangeError(`decodeFrames: maxFrames must be a positive integer (got ${got(opts.maxFrames)})`);
    }
    count = Math.min(count, opts.maxFrames);
  }
  const framePixels = info.width * info.height;
  // One budget for the whole animation's decoding (not for the consumer's time between frames).
  const run = startRun(opts);
  // Frames with an EXIF orientation go one by one (autoOrient on a multi-page strip would rotate
  // the strip, not each frame); so do frames too large to batch.
  const perChunk =
    animated && info.orientation === 1
      ? Math.max(1, Math.floor(Math.min(FRAME_CHUNK_PIXELS, opts.maxPixels) / framePixels))
      : 1;
  for (let start = 0; start < count; start += perChunk) {
    const n = Math.min(perChunk, count - start);
    const { page: pixels, damaged } = await decodeLenient<(Pixels | undefined)[]>(opts, cut, async (failOn) =>
      n === 1
        ? [await decodePage(buf, animated ? start : undefined, run, info, undefined, failOn)]
        : await decodeChunk(buf, start, n, info, run, failOn));
    for (let k = 0; k < n; k++) {
      const index = start + k;
      const page = pixels[k]!;
      pixels[k] = undefined; // the consumer holds the only reference to a yielded frame
      yield {
        width: page.width,
        height: page.height,
        data: page.data,
        delayMs: animated ? frameDelay(info.format, info.delay, index) : 0,
        index,
        count,
        sourceWidth: info.width,
        sourceHeight: info.height,
        ...(info.hasAlpha ? {} : { opaque: true }),
        format: info.format,
        ...(damaged ? { damaged: true as const } : {}),
      };
    }
  }
}

/**
 * Cheap check of an image: reads the header only (no pixel decode). Throws ImageInputError for
 * empty input and unsupported formats; does not apply a pixel limit (compare width x height
 * yourself).
 */
export async function probeImage(input: Uint8Array): Promise<ProbeResult> {
  checkInput(input, undefined, 'probeImage');
  const info = await inspect(readable(input));
  return { format: info.format, width: info.width, height: info.height, pages: info.pages };
}
