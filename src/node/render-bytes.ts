/**
 * An encoded image through the whole render job (core/job.ts), as the server's workers and the
 * CLI run it: decode with sharp, the Director, render, format, with a turn of the event loop
 * between stages and a cancel checked there. render() and formatResult() are synchronous: a
 * caller with large images, or one that must stop a render its client gave up on, uses this.
 */
import { checkBytes, checkFields, checkOptions, describeType } from '../core/args.js';
import { runJob, type ImageFacts } from '../core/job.js';
import type { FormattedOutput, PngOutput, TextFormat, TextOutput } from '../core/format/output.js';
import type { RenderInput, RenderResult } from '../core/types.js';
import { decodeImage, validateOptions } from './decode.js';
import { DEFAULT_DECODE_LIMITS } from './limits.js';

export interface RenderBytesOptions {
  /**
   * Stops the render at its next stage (decode, director, render, format; a stage itself runs to
   * its end): the promise rejects with V2aError `interrupted`.
   */
  readonly signal?: AbortSignal;
  /** As decodeImage's: default DEFAULT_DECODE_LIMITS.maxPixels. */
  readonly maxPixels?: number;
  /** As decodeImage's: default DEFAULT_DECODE_LIMITS.maxBytes. */
  readonly maxBytes?: number;
  /** As decodeImage's: absent, no check. */
  readonly maxDecodedBytes?: number;
  /** As decodeImage's (whole seconds of decoder work): absent, none. */
  readonly timeoutSeconds?: number;
}

/**
 * The output renderBytes gives for parameters of type P: png's bytes for format 'png', a string
 * for a text format or none (text); either where the type does not tell (a format of type Format,
 * or parameters typed any).
 */
export type OutputFor<P> = 0 extends 1 & P ? FormattedOutput
  : 'format' extends keyof P
    ? [P['format' & keyof P]] extends ['png'] ? PngOutput : [P['format' & keyof P]] extends [TextFormat | undefined] ? TextOutput : FormattedOutput
    : TextOutput;

export interface RenderedBytes<Output extends FormattedOutput = FormattedOutput> {
  readonly result: RenderResult;
  /** The result in `params.format` (default text): a string body, or png's bytes. */
  readonly output: Output;
  /** The image's format, byte count and size (after EXIF orientation). */
  readonly image: ImageFacts;
}

const OPTION_NAMES: ReadonlySet<string> = new Set<keyof RenderBytesOptions>(['signal', 'maxPixels', 'maxBytes', 'maxDecodedBytes', 'timeoutSeconds']);

/** Refusals name the limits as this caller's options (not the server's settings). */
const OPTION_NAMES_OF_LIMITS = Object.freeze({ maxPixels: 'maxPixels', maxBytes: 'maxBytes', maxDecodedBytes: 'maxDecodedBytes' });

/**
 * Renders encoded image bytes (JPEG, PNG, WebP, GIF's first frame, AVIF, TIFF) and formats the
 * result, decoding at the size the columns need. Rejects with a V2aError: the parameters'
 * (`invalid-parameters`, naming each), the image's (`unsupported-image`, `undecodable-image`,
 * `image-too-large`, `image-too-tall`), or `interrupted` once `signal` aborts.
 */
export async function renderBytes<P extends RenderInput = Record<never, never>>(bytes: Uint8Array, params?: P, options: RenderBytesOptions = {}): Promise<RenderedBytes<OutputFor<P>>> {
  checkBytes(bytes, 'renderBytes: bytes');
  const input: RenderInput = params === undefined ? {} : params;
  checkFields(input as unknown, 'renderBytes: params');
  checkOptions(options as unknown, OPTION_NAMES, 'renderBytes');
  const { signal, maxPixels = DEFAULT_DECODE_LIMITS.maxPixels, maxBytes = DEFAULT_DECODE_LIMITS.maxBytes, maxDecodedBytes, timeoutSeconds } = options;
  if (signal !== undefined && typeof (signal as { aborted?: unknown } | null)?.aborted !== 'boolean') throw new TypeError(`renderBytes: options.signal must be an AbortSignal (got ${describeType(signal)})`);
  const limits = { maxPixels, maxBytes, ...(maxDecodedBytes !== undefined ? { maxDecodedBytes } : {}) };
  const timeout = timeoutSeconds !== undefined ? { timeoutSeconds } : {};
  // Here, not in the job: a RangeError thrown by its decoder would come out as internal-error.
  validateOptions({ ...limits, ...timeout }, 'renderBytes');
  const done = await runJob({ kind: 'bytes', bytes }, input, {
    decoder: decodeImage,
    limits: { ...limits, ...(timeoutSeconds !== undefined ? { decodeTimeoutSeconds: timeoutSeconds } : {}), names: OPTION_NAMES_OF_LIMITS },
    ...(signal ? { signal } : {}),
  });
  // The format the parameters name is the output's (png bytes, else text): what OutputFor<P> says.
  return done as RenderedBytes<OutputFor<P>>;
}
