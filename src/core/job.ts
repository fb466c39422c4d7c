/**
 * The render job: the one sequence every face runs — input → decode (injected) → prepare + direct →
 * render → format — with a stage event around each step and one kind of failure. The server's
 * workers, the CLI (still and animated) and the stdio MCP face call it; each face only carries
 * bytes in and out and maps `V2aError` codes (core/errors.ts) to its own form. The studio decodes
 * in the browser and renders frames as they come (its worker), formatting with the same
 * formatters and the job's png limit (pngWithinLimit).
 *
 * Decoding is injected (sharp on Node, canvas in the browser), so this module stays pure.
 * Everything thrown out of a job is a V2aError: an unexpected exception becomes `internal-error`
 * with the original kept as `cause` for logs.
 */
import { nextTurn } from './next-turn.js';
import { V2aError } from './errors.js';
import { Base64Error, decodeBase64Input } from './format/base64.js';
import { formatOutput } from './format/deferred.js';
import { pngSize } from './format/png-size.js';
import type { FormattedOutput } from './format/output.js';
import type { Format, RenderParams } from './params/definitions.js';
import { DEFAULTS } from './params/definitions.js';
import { parseParamsOrThrow, withDefaults } from './params/validate.js';
import { DECODE_PIXELS_PER_COLUMN, MIN_COLUMNS, fitColumns, gridRows, sourceSize } from './pipeline/geometry.js';
import { colorsWhen, prepare, renderPrepared, requestedParams, tune, warmUp } from './render.js';
import type { RenderResult, RgbaImage } from './types.js';
import { FrameRenderer } from './video.js';
import { MAX_DECODED_BYTES, MAX_IMAGE_BYTES, MAX_IMAGE_PIXELS } from '../settings/index.js';

export type JobStage = 'input' | 'decode' | 'director' | 'render' | 'format';

/** A decoded image as decoders hand it to the job. */
export interface DecodedImage extends RgbaImage {
  /** Container format as the decoder names it (jpeg, png, ...). */
  readonly format: string;
  /** Size of the source (after orientation), before any shrink-on-load. */
  readonly sourceWidth: number;
  readonly sourceHeight: number;
}

/** One frame of an animation. */
export interface DecodedFrame extends DecodedImage {
  /** Display time in milliseconds (0 for a still image). */
  readonly delayMs: number;
  readonly index: number;
  /** Frames the decoder yields in all. */
  readonly count: number;
}

export interface DecodeRequest {
  /** Decode to at least this width when the image is wider (shrink-on-load); never enlarge. */
  readonly targetWidth: number;
  readonly maxPixels: number;
  readonly maxBytes: number;
  /** Decoder time budget in whole seconds; absent: none. */
  readonly timeoutSeconds?: number;
  /** Largest decoder memory estimated from the header (width x height x channels x bytes per sample); absent: none. */
  readonly maxDecodedBytes?: number;
  /**
   * Work for the calling thread while the pixels decode elsewhere (the renderer's warm-up): a
   * decoder that hands decoding to another thread calls it once, after doing so; one that
   * decodes on the calling thread ignores it. It never throws.
   */
  readonly whileDecoding?: () => void;
  /**
   * Called with the image's size (after EXIF orientation) from its header, before its pixels are
   * decoded: throws image-too-tall for a grid no allowed column count can have, so such an image
   * costs no decode (a decoder that cannot read a header first may skip it: the render checks again).
   */
  readonly checkSize?: (width: number, height: number) => void;
  /**
   * How refusals name the limits: the render job passes the settings' names (V2A_MAX_IMAGE_PIXELS,
   * V2A_MAX_IMAGE_BYTES, V2A_MAX_DECODED_BYTES), which its limits come from; absent, a limit is
   * named as the option a library caller set (maxPixels, ...).
   */
  readonly limitNames?: LimitNames;
}

/** Names of the decode limits in refusals, by option. */
export type LimitNames = Readonly<Record<'maxPixels' | 'maxBytes' | 'maxDecodedBytes', string>>;

/** The job's limits come from these settings (server, CLI, MCP stdio): refusals name them. */
const SETTING_NAMES: LimitNames = Object.freeze({ maxPixels: MAX_IMAGE_PIXELS.name, maxBytes: MAX_IMAGE_BYTES.name, maxDecodedBytes: MAX_DECODED_BYTES.name });

/** Bytes → image. Must throw V2aError for bad images (unsupported, undecodable, too large). */
export type Decoder = (bytes: Uint8Array, request: DecodeRequest) => Promise<DecodedImage>;
/** Bytes → frames (a still image is one frame). */
export type FrameDecoder = (bytes: Uint8Array, request: DecodeRequest) => AsyncIterable<DecodedFrame>;

export type JobInput =
  | { readonly kind: 'bytes'; readonly bytes: Uint8Array }
  /**
   * Strict base64, a data: URL prefix and whitespace accepted (imageBase64): a string, or its
   * character codes in parts (a JSON body's chunks as read).
   */
  | { readonly kind: 'base64'; readonly text: string | readonly Uint8Array[] }
  /** Already decoded (the studio decodes with the browser). */
  | { readonly kind: 'image'; readonly image: RgbaImage };

export interface JobLimits {
  readonly maxBytes: number;
  /** Most pixels of an image: the input's, and a png output's (see pngWithinLimit). */
  readonly maxPixels: number;
  readonly decodeTimeoutSeconds?: number;
  readonly maxDecodedBytes?: number;
  /** How the limits are named in refusals (default: the settings, V2A_MAX_IMAGE_PIXELS ...). */
  readonly names?: LimitNames;
}

/** A box to fit the grid into when the caller did not set `columns` (a terminal). */
export interface FitBox {
  readonly columns: number;
  /** Most rows; absent: only the renderer's own row limit. */
  readonly rows?: number;
  /**
   * The rows are a promise to the caller (a box it asked for), not a preference (a terminal's
   * height): an image that needs more even at the fewest columns is a usage error, not art
   * overflowing the box.
   */
  readonly strict?: boolean;
}

export interface JobOptions {
  readonly decoder?: Decoder;
  readonly limits: JobLimits;
  readonly fit?: FitBox;
  /** Output format instead of `params.format` (the CLI's `-o` extension already is a param). */
  readonly format?: Format;
  /**
   * Formats the result. Default: formatOutput, which loads the png encoder on first use, so a
   * face that never writes png never loads it. A face that has it loaded anyway passes the
   * synchronous formatResult (format/index.ts).
   */
  readonly formatter?: (result: RenderResult) => FormattedOutput | Promise<FormattedOutput>;
  /** Called when a stage ends; `failed` for the stage that threw. Times from `clock` (default Date.now). */
  readonly onStage?: (stage: JobStage, start: number, end: number, failed: boolean) => void;
  readonly clock?: () => number;
  /**
   * The face reads the whole Director report (MCP's structured reply), whose source colourfulness
   * reads the cells' colours: mono art then resamples them with the luminance instead of in a
   * second pass over the image (render.ts colorsWhen()).
   */
  readonly readsReport?: boolean;
  /** Checked between stages: a caller that went away stops the job (`interrupted`). An AbortSignal. */
  readonly signal?: { readonly aborted: boolean };
  /**
   * Checked between stages: past the caller's time the job stops (`render-timeout`). A server's
   * worker stops so, at the next stage, where terminating its thread would leak libvips' memory.
   */
  readonly deadline?: { readonly aborted: boolean };
}

/** What the job learnt about the input image (sizes, never content). */
export interface ImageFacts {
  readonly bytes?: number;
  readonly format?: string;
  readonly width: number;
  readonly height: number;
}

export interface JobResult {
  readonly result: RenderResult;
  readonly output: FormattedOutput;
  readonly image: ImageFacts;
}

/** Wraps anything thrown into a V2aError (expected errors pass through). */
export function asV2aError(err: unknown): V2aError {
  // The job's base64 is imageBase64: named so (a Base64Error is a V2aError too, naming nothing).
  if (err instanceof Base64Error) {
    const message = `imageBase64 is not valid base64: ${err.reason}`;
    return new V2aError('invalid-base64', message, { errors: [{ parameter: 'imageBase64', message }] });
  }
  if (err instanceof V2aError) return err;
  return new V2aError('internal-error', 'The render failed unexpectedly.', { cause: err });
}

function isEventTarget(v: unknown): boolean {
  return typeof (v as { addEventListener?: unknown } | undefined)?.addEventListener === 'function';
}

/** Runs stages in order, timing each; the first failure is reported with its stage and rethrown. */
class Stages {
  private readonly clock: () => number;
  constructor(private readonly opts: Pick<JobOptions, 'onStage' | 'clock' | 'signal' | 'deadline'>) {
    this.clock = opts.clock ?? Date.now;
  }

  async run<T>(stage: JobStage, work: () => T | Promise<T>): Promise<T> {
    // An AbortSignal is aborted by an event (a cancel read from stdin, a socket's close), which
    // cannot be handled while stages run back to back: one turn of the event loop lets it in.
    // (A server worker's signal reads shared memory, set from another thread: no turn needed.)
    if (isEventTarget(this.opts.signal)) await nextTurn();
    // The signal's reason (an AbortSignal's: the caller's own, or its timeout) is kept as the cause.
    if (this.opts.signal?.aborted) throw new V2aError('interrupted', 'The render was stopped: the caller went away.', { cause: (this.opts.signal as { reason?: unknown }).reason });
    if (this.opts.deadline?.aborted) throw new V2aError('render-timeout', 'The render was stopped: its time was up.');
    const start = this.clock();
    try {
      const value = await work();
      this.opts.onStage?.(stage, start, this.clock(), false);
      return value;
    } catch (err) {
      this.opts.onStage?.(stage, start, this.clock(), true);
      throw asV2aError(err);
    }
  }
}

/**
 * The grid check a decoder runs on the header: at the caller's columns, or with a fit (which
 * narrows a tall image down to the fewest columns) at the fewest.
 */
function sizeCheck(explicit: Partial<RenderParams>, fit: FitBox | undefined): (width: number, height: number) => void {
  const columns = explicit.columns ?? (fit ? MIN_COLUMNS : DEFAULTS.columns);
  const cellAspect = explicit.cellAspect ?? DEFAULTS.cellAspect;
  return (width, height) => void gridRows(width, height, columns, cellAspect);
}

function decodeRequest(columns: number, limits: JobLimits, checkSize: (width: number, height: number) => void, whileDecoding?: () => void): DecodeRequest {
  return {
    targetWidth: columns * DECODE_PIXELS_PER_COLUMN,
    checkSize,
    limitNames: limits.names ?? SETTING_NAMES,
    maxPixels: limits.maxPixels,
    maxBytes: limits.maxBytes,
    ...(limits.decodeTimeoutSeconds ? { timeoutSeconds: limits.decodeTimeoutSeconds } : {}),
    ...(limits.maxDecodedBytes !== undefined ? { maxDecodedBytes: limits.maxDecodedBytes } : {}),
    ...(whileDecoding ? { whileDecoding } : {}),
  };
}

/** Validated parameters: what the caller set, and the column count to decode for. */
function parse(params: Readonly<Record<string, unknown>>, opts: JobOptions): { explicit: Partial<RenderParams>; decodeColumns: number } {
  let explicit: Partial<RenderParams>;
  try {
    explicit = { ...parseParamsOrThrow(params, 'json') };
  } catch (err) {
    throw asV2aError(err);
  }
  if (opts.format !== undefined) explicit.format = opts.format;
  const decodeColumns = explicit.columns ?? opts.fit?.columns ?? DEFAULTS.columns;
  return { explicit, decodeColumns };
}

/**
 * The column count for an image when the caller did not set one: the widest that fits the box. A
 * fitted count is the caller's choice (its terminal's), so it counts as set unless it is the
 * default, and json's `explicit` then lists it.
 */
function applyFit(explicit: Partial<RenderParams>, fit: FitBox | undefined, width: number, height: number): void {
  if (explicit.columns !== undefined || !fit) return;
  const cellAspect = explicit.cellAspect ?? DEFAULTS.cellAspect;
  const columns = fitColumns(width, height, fit.columns, fit.rows, cellAspect);
  if (fit.strict && fit.rows !== undefined) {
    const rows = gridRows(width, height, columns, cellAspect);
    if (rows > fit.rows) {
      throw new V2aError('usage', `a ${width} x ${height} image needs ${rows} rows at ${columns} columns, the fewest; the box has ${fit.rows} (give more rows, or crop the image)`);
    }
  }
  if (columns !== DEFAULTS.columns) explicit.columns = columns;
}

/**
 * A png is an image too, held to the pixel limit the face puts on images: a 400 x 800 grid at
 * cellAspect 0.25 (cells 8 x 32 px) was an 82 MP png, seconds of a worker, from a 4 KB upload.
 * At the default aspect the largest grid (41 MP) is within the default limit. The format stage
 * checks it; so does the studio's export, which formats a render of its own.
 */
export function pngWithinLimit(result: RenderResult, limits: Pick<JobLimits, 'maxPixels' | 'names'>, format = result.params.format): void {
  if (format !== 'png') return;
  const { width, height } = pngSize(result.columns, result.rows, 1, result.cellAspect);
  if (width * height <= limits.maxPixels) return;
  const name = (limits.names ?? SETTING_NAMES).maxPixels;
  // The rows follow the columns (and the cell aspect only scales the cells' height back), so the
  // png's size goes with the columns alone: the most that fit, found by halving.
  const pixels = (columns: number) => {
    const { width: w, height: h } = pngSize(columns, Math.max(1, gridRows(result.source.width!, result.source.height!, columns, result.cellAspect)), 1, result.cellAspect);
    return w * h;
  };
  let lo = MIN_COLUMNS - 1, hi = result.columns;
  while (hi - lo > 1) {
    const mid = (lo + hi) >> 1;
    if (pixels(mid) <= limits.maxPixels) lo = mid; else hi = mid;
  }
  const fewer = lo >= MIN_COLUMNS ? `${lo} columns or fewer` : 'a smaller image';
  const message = `a png of ${result.columns} x ${result.rows} cells is ${width} x ${height} px, over the limit of ${limits.maxPixels.toLocaleString('en-US')} pixels (${name}): ask for ${fewer}, or another format`;
  throw new V2aError('invalid-parameters', message, { errors: [{ parameter: 'format', message }] });
}

/** The format stage: the formatter (formatOutput unless the face gives one), a png within the limit. */
function formatStage(result: RenderResult, opts: JobOptions): FormattedOutput | Promise<FormattedOutput> {
  pngWithinLimit(result, opts.limits);
  return (opts.formatter ?? formatOutput)(result);
}

async function bytesOf(input: JobInput, stages: Stages): Promise<Uint8Array | null> {
  switch (input.kind) {
    case 'bytes': return input.bytes;
    case 'base64': return stages.run('input', () => decodeBase64Input(input.text));
    case 'image': return null;
  }
}

/** One still image through the whole pipeline. */
export async function runJob(input: JobInput, params: Readonly<Record<string, unknown>>, opts: JobOptions): Promise<JobResult> {
  const stages = new Stages(opts);
  const { explicit, decodeColumns } = parse(params, opts);
  const bytes = await bytesOf(input, stages);
  let image: RgbaImage;
  let facts: ImageFacts;
  if (bytes === null) {
    image = (input as { image: RgbaImage }).image;
    facts = { width: image.width, height: image.height };
  } else {
    const decoder = opts.decoder;
    if (!decoder) throw new V2aError('internal-error', 'The render failed unexpectedly.', { cause: new Error('runJob: no decoder for encoded input') });
    const decoded = await stages.run('decode', () => decoder(bytes, decodeRequest(decodeColumns, opts.limits, sizeCheck(explicit, opts.fit), () => warmUp(withDefaults(explicit)))));
    image = decoded;
    facts = { bytes: bytes.byteLength, format: decoded.format, width: decoded.sourceWidth, height: decoded.sourceHeight };
  }
  return renderImage(image, facts, explicit, opts, stages);
}

async function renderImage(image: RgbaImage, facts: ImageFacts, explicit: Partial<RenderParams>, opts: JobOptions, stages: Stages): Promise<JobResult> {
  const { prep, tuned, requested, names } = await stages.run('director', () => {
    const source = sourceSize(image);
    applyFit(explicit, opts.fit, source.width, source.height);
    // The job's format is its output's: text gets the glyphs of one-colour art.
    const requested = requestedParams(explicit, true);
    const names = Object.keys(explicit);
    const prep = prepare(image, requested.columns, requested.invert, requested.cellAspect, colorsWhen(requested, opts.readsReport));
    return { prep, tuned: tune(prep, requested, names), requested, names };
  });
  const result = await stages.run('render', () => renderPrepared(prep, requested, names, image, { tuned }));
  const output = await stages.run('format', () => formatStage(result, opts));
  return { result, output, image: facts };
}

export interface FrameJobResult extends JobResult {
  readonly frame: { readonly index: number; readonly count: number; readonly delayMs: number };
}

/**
 * Every frame of an animation through one FrameRenderer (temporal filter, frozen tuning and
 * codebook): the same stages per frame, decode as the frames arrive.
 */
export async function* runFrameJob(
  bytes: Uint8Array,
  params: Readonly<Record<string, unknown>>,
  opts: JobOptions & { readonly frameDecoder: FrameDecoder },
): AsyncGenerator<FrameJobResult, void, undefined> {
  const stages = new Stages(opts);
  const { explicit, decodeColumns } = parse(params, opts);
  const frames = opts.frameDecoder(bytes, decodeRequest(decodeColumns, opts.limits, sizeCheck(explicit, opts.fit)))[Symbol.asyncIterator]();
  let renderer: FrameRenderer | null = null;
  // A consumer that stops early (return() on this generator) ends the decoder too: a video's
  // ffmpeg would otherwise be left blocked on its pipe.
  try {
    for (;;) {
      const next = await stages.run('decode', () => frames.next());
      if (next.done) return;
      const frame = next.value;
      const result = await stages.run('render', () => {
        if (!renderer) {
          const source = sourceSize(frame);
          applyFit(explicit, opts.fit, source.width, source.height);
          renderer = new FrameRenderer(explicit);
        }
        return renderer.render(frame);
      });
      const output = await stages.run('format', () => formatStage(result, opts));
      yield {
        result,
        output,
        image: { bytes: bytes.byteLength, format: frame.format, width: frame.sourceWidth, height: frame.sourceHeight },
        frame: { index: frame.index, count: frame.count, delayMs: frame.delayMs },
      };
    }
  } finally {
    await frames.return?.();
  }
}
