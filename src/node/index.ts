/**
 * `v2a/node`: image decoding with sharp (Node only), for callers of the core's `render`.
 *
 *   import { decodeImage } from 'v2a/node';
 *   import { render, formatResult } from 'v2a';
 *   const image = await decodeImage(await readFile('photo.jpg'));
 *   const art = formatResult(render(image, { columns: 80, charset: 'blocks' }));
 *
 * `decodeImage` and `decodeFrames` take every option of ./decode.ts, each optional: the limits
 * default to the ones the server and the CLI apply (V2A_MAX_IMAGE_PIXELS and V2A_MAX_IMAGE_BYTES
 * of src/settings, their defaults; the environment is not read here).
 */
import { checkOptions } from '../core/args.js';
import { DEFAULT_DECODE_LIMITS } from './limits.js';
import {
  decodeFrames as decodeFramesWith,
  decodeImage as decodeImageWith,
  type DecodeOptions,
  type DecodedFrame,
  type DecodedImage,
  type FrameDecodeOptions,
} from './decode.js';

export {
  RESIZE_KERNEL,
  configureSharp,
  probeImage,
} from './decode.js';
export { ALLOWED_FORMATS } from './formats.js';
export type {
  DecodeOptions,
  DecodedFrame,
  DecodedImage,
  FrameDecodeOptions,
  ProbeResult,
} from './decode.js';
export type { ImageFormat, SharpInputFormat } from './formats.js';
export { ImageInputError, fromSharpError, sanitizeCause } from './errors.js';
export type { ImageInputErrorCode } from './errors.js';

export { DEFAULT_DECODE_LIMITS } from './limits.js';
export { renderBytes, type RenderBytesOptions, type RenderedBytes } from './render-bytes.js';
// The types RenderedBytes and DecodeOptions name.
export type { ImageFacts, LimitNames } from '../core/job.js';

/**
 * The names decodeImage and decodeFrames read: a misspelt limit (`maxPixel`) must not go
 * unapplied, nor decodeFrames' maxFrames given to decodeImage.
 */
const COMMON_NAMES = ['maxPixels', 'maxBytes', 'maxDecodedBytes', 'targetWidth', 'targetHeight', 'timeoutSeconds', 'whileDecoding', 'checkSize', 'limitNames'] as const;
const IMAGE_OPTIONS: ReadonlySet<string> = new Set<keyof DecodeOptions>([...COMMON_NAMES, 'partial']);
const FRAME_OPTIONS: ReadonlySet<string> = new Set<keyof FrameDecodeOptions>([...COMMON_NAMES, 'partial', 'maxFrames']);

function withLimits<T extends Partial<DecodeOptions>>(opts: T, names: ReadonlySet<string>): T & Pick<DecodeOptions, 'maxPixels'> {
  checkOptions(opts, names, 'decode');
  return {
    ...opts,
    maxPixels: opts.maxPixels ?? DEFAULT_DECODE_LIMITS.maxPixels,
    maxBytes: opts.maxBytes ?? DEFAULT_DECODE_LIMITS.maxBytes,
  };
}

/**
 * Decodes an image (JPEG, PNG, WebP, GIF, AVIF, TIFF) to 8-bit sRGB RGBA, EXIF orientation
 * applied. Options (all optional): `maxPixels` (default 50 MP) and `maxBytes` (16 MiB) refuse
 * larger input with an ImageInputError; `targetWidth`/`targetHeight` decode at reduced size
 * (shrink-on-load); `timeoutSeconds` aborts a slow decode.
 */
export async function decodeImage(input: Uint8Array, opts: Partial<DecodeOptions> = {}): Promise<DecodedImage> {
  return decodeImageWith(input, withLimits(opts, IMAGE_OPTIONS));
}

/** The frames of an animated GIF or WebP (a still image yields one), one at a time; options as decodeImage (`partial` too) plus `maxFrames`. */
export async function* decodeFrames(input: Uint8Array, opts: Partial<FrameDecodeOptions> = {}): AsyncGenerator<DecodedFrame, void, undefined> {
  yield* decodeFramesWith(input, withLimits(opts, FRAME_OPTIONS));
}
