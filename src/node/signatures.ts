/**
 * The image formats' signatures, from a file's first bytes: one table for the decoder (a file
 * that starts as a format it reads is damaged, not of another format) and the CLI's sniffing
 * (src/cli/media-type.ts, which must not load sharp to refuse a file). Light: no sharp here.
 */

/** `head[from..to)` as Latin-1 text (what a signature's letters are compared with). */
export const ascii = (head: Uint8Array, from: number, to: number): string => String.fromCharCode(...head.subarray(from, to));
/** `head` starts with `bytes`. */
export const startsWith = (head: Uint8Array, bytes: readonly number[]): boolean => head.length >= bytes.length && bytes.every((b, i) => head[i] === b);

/** ISO BMFF brands of still images (AVIF, HEIC): the decoder's; any other brand is a video (MP4, MOV). */
const STILL_BRANDS = /^(avif|avis|heic|heix|mif1|msf1|hevc|heim|heis)$/;

/** An ISO BMFF file (`ftyp` box first): AVIF and HEIC, or MP4 and MOV. */
export const isBmff = (head: Uint8Array): boolean => head.length >= 12 && ascii(head, 4, 8) === 'ftyp';

/** An ISO BMFF still image (AVIF, HEIC: the decoder tells them apart by their compression). */
export const isStillBmff = (head: Uint8Array): boolean => isBmff(head) && STILL_BRANDS.test(ascii(head, 8, 12));

/**
 * Starts with the signature of a format the decoder reads and knows by its first bytes alone:
 * TIFF, JPEG, PNG, GIF or WebP (an ISO BMFF file may be a video: isStillBmff).
 */
export function acceptedSignature(head: Uint8Array): boolean {
  return (head.length >= 4 && /^(II[*+]\0|MM\0[*+])$/.test(ascii(head, 0, 4)))
    || startsWith(head, [0xff, 0xd8, 0xff])
    || startsWith(head, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])
    || (head.length >= 6 && /^GIF8[79]a$/.test(ascii(head, 0, 6)))
    || (head.length >= 12 && ascii(head, 0, 4) === 'RIFF' && ascii(head, 8, 12) === 'WEBP');
}

/** Markup (SVG, perhaps after a byte-order mark and blanks) or a PDF: formats the decoder refuses by name. */
export function refusedByName(head: Uint8Array): boolean {
  return /^(\xef\xbb\xbf)?\s*</.test(ascii(head, 0, Math.min(head.length, 64))) || (head.length >= 5 && ascii(head, 0, 5) === '%PDF-');
}
