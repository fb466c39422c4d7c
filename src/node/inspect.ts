/**
 * What an image's header says, before any pixel is decoded: its format (one of ALLOWED_FORMATS),
 * size, pages, orientation and sample layout, checked against every limit that needs no pixel
 * (pixels, decoder memory, the caller's size check, a progressive JPEG's scans, a GIF cut short).
 * decode.ts decodes what passes.
 */
import type { Metadata } from 'sharp';
import type { LimitNames } from '../core/job.js';
import type { DecodeOptions } from './decode.js';
import { ImageInputError, USE_SUPPORTED, decodedBytesMessage, fromSharpError, pixelsMessage } from './errors.js';
import { sharp } from './sharp.js';
import { acceptedSignature, isStillBmff, refusedByName } from './signatures.js';
import { MAX_JPEG_SCANS, MAX_TIFF_PAGES, gifComplete, jpegScans, tiffPages } from './structure.js';
import { ALLOWED_FORMATS, type ImageFormat } from './formats.js';

export interface Inspection {
  readonly format: ImageFormat;
  readonly width: number;
  readonly height: number;
  readonly pages: number;
  readonly delay: readonly number[] | undefined;
  /** EXIF orientation (1 when absent). */
  readonly orientation: number;
  /** Bands and bytes per band of the decoded pixels (before conversion to 8-bit RGBA). */
  readonly channels: number;
  readonly bytesPerSample: number;
  /** 16-bit samples (libvips `ushort`), and whether there is an alpha band: widen16BitSamples() needs both. */
  readonly sixteenBit: boolean;
  readonly hasAlpha: boolean;
  /** Progressive JPEG or interlaced PNG/GIF: decoded whole, whatever the target size. */
  readonly progressive: boolean;
  /** Size as stored (before EXIF orientation), which is what the decoder allocates. */
  readonly storedWidth: number;
  readonly storedHeight: number;
}

/** Bytes per band of libvips' band formats. */
const SAMPLE_BYTES: Readonly<Record<string, number>> = {
  uchar: 1, char: 1, ushort: 2, short: 2, uint: 4, int: 4, float: 4, complex: 8, double: 8, dpcomplex: 16,
};

/**
 * Memory the decoder needs for one image, estimated from its header: width x height x channels x
 * bytes per sample of the frame it must hold. Only a baseline JPEG (DCT scaling by 1/2, 1/4 or
 * 1/8) and WebP (scaled decode) shrink while loading toward the target size; a progressive JPEG
 * keeps every DCT coefficient (2 bytes per sample), and PNG (interlaced or not), GIF, TIFF and
 * AVIF are counted at full size. A deliberate upper bound: libvips streams some of these
 * row by row, but an interlaced PNG or an AVIF is materialised whole.
 */
export function decodedBytes(info: Pick<Inspection, 'format' | 'storedWidth' | 'storedHeight' | 'channels' | 'bytesPerSample' | 'progressive'>, opts: Pick<DecodeOptions, 'targetWidth' | 'targetHeight'>): number {
  const { storedWidth: w, storedHeight: h, channels, bytesPerSample } = info;
  const tw = opts.targetWidth, th = opts.targetHeight;
  // How far the image may shrink while both sides stay at or above their targets.
  const room = Math.min(tw ? w / tw : Infinity, th ? h / th : Infinity);
  if (info.format === 'jpeg') {
    if (info.progressive) return w * h * channels * 2;
    let shrink = 1;
    while (shrink < 8 && room >= shrink * 2) shrink *= 2;
    return Math.ceil(w / shrink) * Math.ceil(h / shrink) * channels * bytesPerSample;
  }
  if (info.format === 'webp' && Number.isFinite(room) && room > 1) {
    return Math.ceil(w / room) * Math.ceil(h / room) * channels * bytesPerSample;
  }
  return w * h * channels * bytesPerSample;
}

/** How a refusal names limit `option`: as the caller's settings call it (limitNames), else the option. */
export const limitName = (opts: Pick<DecodeOptions, 'limitNames'>, option: keyof LimitNames): string => opts.limitNames?.[option] ?? option;

/**
 * Width and height from a PNG's IHDR chunk (signature, length 13, "IHDR", width, height, all big
 * endian), or undefined when the bytes do not start so.
 */
function pngHeaderSize(buf: Buffer): { width: number; height: number } | undefined {
  if (buf.length < 24 || buf.readUInt32BE(0) !== 0x89504e47 || buf.readUInt32BE(4) !== 0x0d0a1a0a || buf.toString('latin1', 12, 16) !== 'IHDR') return undefined;
  return { width: buf.readUInt32BE(16), height: buf.readUInt32BE(20) };
}

/**
 * Read the header only and check the format. Never decodes pixel data. With `maxPixels`, a PNG
 * header that libspng refuses for a size beyond its own bounds (2147483647 x 1 is "corrupt") is
 * answered as too many pixels, as any size over the limit is.
 */
export async function inspect(buf: Buffer, limits?: Pick<DecodeOptions, 'maxPixels' | 'limitNames'>): Promise<Inspection> {
  const maxPixels = limits?.maxPixels;
  // libtiff walks every directory to count a TIFF's pages: 130,000 empty ones (15 MB) took 3 s.
  if (tiffPages(buf, MAX_TIFF_PAGES + 1) > MAX_TIFF_PAGES) {
    throw new ImageInputError('undecodable', `The TIFF has more than ${MAX_TIFF_PAGES} pages; send the page to render on its own.`, { cause: `tiff pages > ${MAX_TIFF_PAGES}` });
  }
  let meta: Metadata;
  try {
    // limitInputPixels: false -> sharp does not refuse absurd headers here; we check ourselves.
    meta = await sharp(buf, { limitInputPixels: false, failOn: 'warning' }).metadata();
  } catch (err) {
    const png = maxPixels !== undefined ? pngHeaderSize(buf) : undefined;
    if (png && png.width * png.height > maxPixels!) {
      throw new ImageInputError('too_many_pixels', pixelsMessage(png, maxPixels, limitName(limits!, 'maxPixels')), { cause: `png header ${png.width}x${png.height}` });
    }
    const refused = fromSharpError(err);
    // A file that starts as an accepted format does but cannot be read (a TIFF cut short, whose
    // first directory is gone) is damaged, not of another format.
    if (refused.reason === 'unsupported_format' && acceptedSignature(buf)) throw new ImageInputError('undecodable', undefined, typeof refused.cause === 'string' ? { cause: refused.cause } : {});
    // Text that sharp's SVG loader claimed (it takes any with `<svg` in its first kilobytes: a
    // script, a README) and failed to parse is of another format, not a damaged image. Only that:
    // a JPEG or GIF cut inside its first bytes stays damaged.
    if (refused.reason === 'undecodable' && !acceptedSignature(buf) && !isStillBmff(buf) && /<svg/i.test(buf.subarray(0, 4096).toString('latin1'))) {
      throw new ImageInputError('unsupported_format', refusedByName(buf) ? unsupportedMessage('svg') : undefined, typeof refused.cause === 'string' ? { cause: refused.cause } : {});
    }
    throw refused;
  }
  const format = meta.format as string;
  if (!(ALLOWED_FORMATS as readonly string[]).includes(format)) {
    throw new ImageInputError('unsupported_format', unsupportedMessage(format), { cause: `format ${format}` });
  }
  let name: ImageFormat;
  if (format === 'heif') {
    if (meta.compression !== 'av1') {
      throw new ImageInputError(
        'unsupported_format',
        `HEIC images are not supported. ${USE_SUPPORTED}`,
        { cause: `heif compression ${meta.compression ?? 'unknown'}` },
      );
    }
    name = 'avif';
  } else {
    name = format as ImageFormat;
  }
  const oriented = meta.autoOrient ?? { width: meta.width, height: meta.height };
  const width = oriented.width;
  const height = oriented.height;
  if (!(width > 0 && height > 0)) {
    throw new ImageInputError('undecodable', 'The image has no pixels (zero width or height).');
  }
  return {
    format: name,
    width,
    height,
    pages: Math.max(1, meta.pages ?? 1),
    delay: meta.delay,
    orientation: meta.orientation ?? 1,
    channels: Math.max(1, meta.channels ?? 4),
    bytesPerSample: SAMPLE_BYTES[meta.depth ?? 'uchar'] ?? 1,
    sixteenBit: meta.depth === 'ushort',
    hasAlpha: meta.hasAlpha === true,
    progressive: meta.isProgressive === true,
    storedWidth: meta.width,
    storedHeight: meta.height,
  };
}

function unsupportedMessage(format: string): string {
  const what = format === 'svg' ? 'SVG (vector) images are' : format === 'pdf' ? 'PDF documents are' : 'This image format is';
  return `${what} not supported. ${USE_SUPPORTED}`;
}

function checkPixels(info: Inspection, opts: DecodeOptions): void {
  const { maxPixels, maxDecodedBytes } = opts;
  if (info.width * info.height > maxPixels) {
    throw new ImageInputError('too_many_pixels', pixelsMessage(info, maxPixels, limitName(opts, 'maxPixels')), {
      cause: `header ${info.width}x${info.height}`,
    });
  }
  if (maxDecodedBytes === undefined) return;
  const need = decodedBytes(info, opts);
  if (need > maxDecodedBytes) {
    throw new ImageInputError('too_many_decoded_bytes', decodedBytesMessage(info, need, maxDecodedBytes, limitName(opts, 'maxDecodedBytes')), {
      cause: `header ${info.storedWidth}x${info.storedHeight}x${info.channels}x${info.bytesPerSample}${info.progressive ? ' progressive' : ''}`,
    });
  }
}

/**
 * The header of an image to decode, read and checked against every limit that needs no pixel:
 * pixels, decoder memory, the caller's size check, a progressive JPEG's scans.
 */
export async function admitted(buf: Buffer, opts: DecodeOptions): Promise<Inspection> {
  const info = await inspect(buf, opts);
  checkPixels(info, opts);
  await opts.checkSize?.(info.width, info.height);
  checkScans(buf, info);
  return info;
}

/** Whether the image's data stops short where its decoder would not say so (gifComplete). */
export const cutShort = (buf: Buffer, info: Inspection): boolean => info.format === 'gif' && !gifComplete(buf);

/** A truncated file the decoder took for whole: refused as the decoder refuses one it notices. */
export function refuseCutShort(buf: Buffer, info: Inspection): void {
  if (cutShort(buf, info)) throw new ImageInputError('undecodable', undefined, { cause: 'gif: the data ends before its trailer' });
}

function checkScans(buf: Buffer, info: Inspection): void {
  if (info.format !== 'jpeg' || !info.progressive) return;
  const scans = jpegScans(buf, MAX_JPEG_SCANS + 1);
  if (scans > MAX_JPEG_SCANS) {
    throw new ImageInputError('undecodable', `The JPEG has more than ${MAX_JPEG_SCANS} progressive scans, more than any encoder writes; re-save it (baseline or standard progressive).`, {
      cause: `jpeg scans > ${MAX_JPEG_SCANS}`,
    });
  }
}
