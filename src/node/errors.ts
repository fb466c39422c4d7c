/**
 * Errors of image input (decoding and limits). The `message` is written for the person who sent
 * the image and is safe to send to an HTTP or MCP client verbatim: it never contains a file
 * system path, a stack trace or libvips' raw text. A short, sanitized hint of the underlying
 * decoder error is kept in `cause` (a string) for logs.
 */

import { V2aError, type ErrorCode } from '../core/errors.js';

/**
 * Why an image was refused, finer than the error code it maps to: those of `image-too-large`
 * are `too_many_pixels` (maxPixels), `too_large` (maxBytes), `too_many_decoded_bytes`
 * (maxDecodedBytes) and `decode_timeout` (timeoutSeconds).
 */
export type ImageInputErrorCode =
  | 'unsupported_format'
  | 'undecodable'
  | 'too_many_pixels'
  | 'too_large'
  | 'too_many_decoded_bytes'
  | 'decode_timeout'
  | 'empty';

const CODE: Readonly<Record<ImageInputErrorCode, ErrorCode>> = {
  unsupported_format: 'unsupported-image',
  undecodable: 'undecodable-image',
  empty: 'undecodable-image',
  too_many_pixels: 'image-too-large',
  too_large: 'image-too-large',
  too_many_decoded_bytes: 'image-too-large',
  // The server's 413 as the size limits: an image that takes too long to decode is too large for
  // the limit, not the server's fault (a 503 would invite the same request again).
  decode_timeout: 'image-too-large',
};

/** What every refusal of a format ends with: the formats that are decoded. */
export const USE_SUPPORTED = 'Use a JPEG, PNG, WebP, GIF, AVIF or TIFF image.';

const DEFAULT_MESSAGE: Readonly<Record<ImageInputErrorCode, string>> = {
  unsupported_format: `The image format is not supported. ${USE_SUPPORTED}`,
  undecodable: 'The image could not be decoded: the file is damaged, truncated or not a valid image.',
  empty: 'The image is empty (0 bytes).',
  too_many_pixels: 'The image has too many pixels.',
  too_large: 'The image is too large.',
  too_many_decoded_bytes: 'Decoding the image would take too much memory.',
  decode_timeout: 'The image took too long to decode. Use a smaller or simpler image.',
};

/** A refused image: `unsupported-image`, `undecodable-image` or `image-too-large`. */
export class ImageInputError extends V2aError {
  override name = 'ImageInputError';
  readonly reason: ImageInputErrorCode;

  constructor(reason: ImageInputErrorCode, message?: string, options?: { cause?: string }) {
    super(CODE[reason], message ?? DEFAULT_MESSAGE[reason], options?.cause === undefined ? {} : { cause: options.cause });
    this.reason = reason;
  }

  /** HTTP status to answer with: 400, or 413 for size limits. */
  get status(): number {
    return this.info.status;
  }

  static is(err: unknown): err is ImageInputError {
    return err instanceof ImageInputError;
  }
}

/** Strip anything path-like and keep one short line: safe for logs, not meant for clients. */
export function sanitizeCause(raw: string): string {
  const firstLine = raw.split(/\r?\n/, 1)[0] ?? '';
  return firstLine
    .replace(/(?:[A-Za-z]:)?(?:[\\/][^\s"'`:,;()]+){1,}/g, '<path>')
    .replace(/"[^"]*"/g, '"…"')
    .slice(0, 160)
    .trim();
}

/** libvips loaders (`<name>load`) of the accepted formats. */
const ACCEPTED_LOADERS: ReadonlySet<string> = new Set(['jpeg', 'png', 'webp', 'gif', 'heif', 'tiff']);

/**
 * Map an error thrown by sharp/libvips to an ImageInputError. `context.maxPixels` and
 * `context.timeoutSeconds` only make the messages more helpful.
 */
export function fromSharpError(
  err: unknown,
  context: { maxPixels?: number; maxPixelsName?: string; timeoutSeconds?: number } = {},
): ImageInputError {
  if (err instanceof ImageInputError) return err;
  const raw = err instanceof Error ? err.message : String(err);
  const cause = sanitizeCause(raw);
  if (/unsupported image format/i.test(raw)) {
    return new ImageInputError('unsupported_format', undefined, { cause });
  }
  // A loader of a format we do not accept failed while reading the header (e.g. an SVG without
  // dimensions: "svgload_buffer: bad dimensions"): the format is the problem, not the bytes.
  const loader = /\b([a-z0-9]+)load(?:_buffer|_source)?\b/.exec(raw)?.[1];
  if (loader !== undefined && !ACCEPTED_LOADERS.has(loader)) {
    return new ImageInputError('unsupported_format', undefined, { cause });
  }
  if (/buffer is empty/i.test(raw)) {
    return new ImageInputError('empty', undefined, { cause });
  }
  if (/exceeds pixel limit/i.test(raw)) {
    return new ImageInputError('too_many_pixels', pixelsMessage(undefined, context.maxPixels, context.maxPixelsName), { cause });
  }
  if (/^timeout\b/i.test(raw) || /\bkilled\b/i.test(raw)) {
    const limit = context.timeoutSeconds ? ` (limit ${context.timeoutSeconds} s)` : '';
    return new ImageInputError(
      'decode_timeout',
      `The image took too long to decode${limit}. Use a smaller or simpler image.`,
      { cause },
    );
  }
  return new ImageInputError('undecodable', undefined, { cause });
}

export function pixelsMessage(dims: { width: number; height: number } | undefined, maxPixels?: number, limitName = 'V2A_MAX_IMAGE_PIXELS'): string {
  const pixels = dims ? dims.width * dims.height : undefined;
  // Rounded alike (49 against 49 megapixels), the two are given exactly.
  const exact = pixels !== undefined && maxPixels !== undefined && formatMegapixels(pixels) === formatMegapixels(maxPixels);
  const show = (n: number) => (exact ? `${n.toLocaleString('en-US')} pixels` : formatMegapixels(n));
  const has = dims ? ` (${dims.width} x ${dims.height} = ${show(pixels!)})` : '';
  const max = maxPixels ? `; the limit is ${show(maxPixels)} (${limitName})` : '';
  return `The image has too many pixels${has}${max}. Use a smaller image.`;
}

/** The refusal of an image whose decoder memory estimate is over the limit, naming both. */
export function decodedBytesMessage(
  info: { storedWidth: number; storedHeight: number; channels: number; bytesPerSample: number; progressive?: boolean },
  need: number,
  limit: number,
  limitName = 'V2A_MAX_DECODED_BYTES',
): string {
  // In whole MiB, up for the need and down for the limit, unless that would hide which is larger
  // (90,000 bytes against a limit of 1,000 both read "1 MiB"): then in bytes.
  const up = Math.ceil(need / 1048576), down = Math.floor(limit / 1048576);
  const [shownNeed, shownLimit] = down >= 1 && up > down ? [`${up} MiB`, `${down} MiB`] : [`${need.toLocaleString('en-US')} bytes`, `${limit.toLocaleString('en-US')} bytes`];
  // Only the remedies that would help this image: 8-bit where it has more, not interlaced
  // (progressive) where it is (such a file is decoded whole, whatever the target size).
  const remedies = ['a smaller image', ...(info.bytesPerSample > 1 ? ['8-bit'] : []), ...(info.progressive ? ['not interlaced'] : [])];
  const remedy = remedies.length > 1 ? `${remedies.slice(0, -1).join(', ')}, or ${remedies.at(-1)}` : remedies[0];
  return `Decoding the image would take about ${shownNeed} (${info.storedWidth} x ${info.storedHeight} pixels x ${info.channels} channels x ${info.bytesPerSample * 8}-bit); the limit is ${shownLimit} (${limitName}). Use ${remedy}.`;
}

function formatMegapixels(pixels: number): string {
  const mp = pixels / 1e6;
  // Under a tenth of a megapixel the rounding would say 0: the pixels themselves then.
  if (mp < 0.1) return `${pixels.toLocaleString('en-US')} pixels`;
  return `${mp >= 10 ? Math.round(mp) : Math.round(mp * 10) / 10} megapixels`;
}
