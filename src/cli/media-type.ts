/**
 * What an input is, from its first bytes: an image for sharp, a video container for ffmpeg, or
 * neither. Render and play look before they read a whole file or load sharp (a 200 MB file of
 * anything else cost 1.4 s and 267 MB to refuse). Light on purpose: render imports it for every
 * image; video-source.ts (ffmpeg) is loaded only for a video.
 */
import { ImageInputError } from '../node/errors.js';
import { acceptedSignature, ascii, isBmff, isStillBmff, refusedByName, startsWith } from '../node/signatures.js';

/** Bytes enough for every signature below (MPEG-TS needs its second packet's sync byte, at 188). */
export const SNIFF_BYTES = 256;

/**
 * The video containers v2a plays (through ffmpeg), each with the signature that tells it: the one
 * list for isVideo, the help and the messages.
 */
const VIDEO_CONTAINERS: readonly { readonly names: readonly string[]; readonly is: (head: Uint8Array) => boolean }[] = [
  { names: ['MP4', 'MOV'], is: (h) => isBmff(h) && !isStillBmff(h) },
  { names: ['WebM', 'MKV'], is: (h) => startsWith(h, [0x1a, 0x45, 0xdf, 0xa3]) },
  { names: ['AVI'], is: (h) => h.length >= 12 && ascii(h, 0, 4) === 'RIFF' && ascii(h, 8, 12) === 'AVI ' },
  { names: ['Ogg'], is: (h) => h.length >= 4 && ascii(h, 0, 4) === 'OggS' },
  // MPEG program stream (pack or sequence header), or transport stream (a sync byte every 188).
  { names: ['MPEG'], is: (h) => startsWith(h, [0, 0, 1]) && (h[3] === 0xba || h[3] === 0xb3) || (h.length >= 189 && h[0] === 0x47 && h[188] === 0x47) },
];

/** `a, b or c`. */
const orList = (names: readonly string[]): string => `${names.slice(0, -1).join(', ')} or ${names.at(-1)}`;

/** `MP4, MOV, WebM, MKV, AVI, Ogg or MPEG`. */
export const VIDEO_FORMATS_IN_WORDS = orList(VIDEO_CONTAINERS.flatMap((c) => c.names));

/** A container sharp cannot decode but ffmpeg can. */
export function isVideo(head: Uint8Array): boolean {
  return VIDEO_CONTAINERS.some((c) => c.is(head));
}

/**
 * Still-image formats sharp does not read and ffmpeg does, which file managers show (chafa does):
 * the CLI draws them from a file through ffmpeg, as it draws a video's frame. The server and the
 * library keep to sharp's formats (no ffmpeg on a server's request path).
 */
const FFMPEG_STILLS: readonly { readonly name: string; readonly demuxer: (head: Uint8Array) => string | undefined }[] = [
  // `BM`, then the file size (4 bytes) and two reserved words, zero.
  { name: 'BMP', demuxer: (h) => (h.length >= 10 && ascii(h, 0, 2) === 'BM' && h[6] === 0 && h[7] === 0 && h[8] === 0 && h[9] === 0 ? 'bmp_pipe' : undefined) },
  // An icon or cursor directory: reserved 0, type 1 (icon) or 2 (cursor), 1 to 255 images (an
  // ISO BMFF file whose first box is 256 bytes long starts 00 00 01 00 too).
  { name: 'ICO', demuxer: (h) => (h.length >= 12 && h[0] === 0 && h[1] === 0 && (h[2] === 1 || h[2] === 2) && h[3] === 0 && h[4]! >= 1 && h[5] === 0 && !isBmff(h) ? 'ico' : undefined) },
  // Netpbm: P1-P7 and a blank; P1/P4 PBM, P2/P5 PGM, P3/P6 PPM, P7 PAM.
  { name: 'PNM', demuxer: (h) => (h.length >= 3 && h[0] === 0x50 && h[1]! >= 0x31 && h[1]! <= 0x37 && /\s/.test(String.fromCharCode(h[2]!))
    ? ['pbm_pipe', 'pgm_pipe', 'ppm_pipe', 'pbm_pipe', 'pgm_pipe', 'ppm_pipe', 'pam_pipe'][h[1]! - 0x31] : undefined) },
];

/** `BMP, ICO or PNM`. */
export const FFMPEG_STILLS_IN_WORDS = orList(FFMPEG_STILLS.map((f) => f.name));

/** ffmpeg's reader for a still image the CLI reads through ffmpeg (FFMPEG_STILLS), else undefined. */
export function ffmpegStill(head: Uint8Array): string | undefined {
  for (const f of FFMPEG_STILLS) {
    const demuxer = f.demuxer(head);
    if (demuxer) return demuxer;
  }
  return undefined;
}

/**
 * A format the decoder reads (JPEG, PNG, GIF, WebP, TIFF, AVIF), or one it refuses by name
 * (HEIC, SVG, PDF: its messages say which). Anything else would only be refused by sharp, later.
 */
export function isImage(head: Uint8Array): boolean {
  return acceptedSignature(head) || isStillBmff(head) || refusedByName(head);
}

/**
 * Refuses, from its first bytes, an input that is neither an image nor (`takesVideo`: play, not
 * render) a video: the decoder's own refusal (unsupported-image, exit 3), `more`
 * said after it. Empty: the decoder's `empty`.
 */
export function refuseUnknown(head: Uint8Array, takesVideo: boolean, more: (video: boolean) => string = () => ''): void {
  if (head.length === 0) throw new ImageInputError('empty');
  const video = isVideo(head);
  if (isImage(head) || (takesVideo && video)) return;
  const refused = new ImageInputError('unsupported_format');
  const extra = more(video);
  throw extra ? new ImageInputError('unsupported_format', `${refused.message} ${extra}`) : refused;
}
