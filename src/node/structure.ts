/**
 * Counts in an image's container, read before libvips is given it: structures whose number no
 * size limit bounds and whose cost grows with it (a progressive JPEG's scans, a TIFF's pages).
 */

/**
 * Most scans a progressive JPEG may have. Encoders write 2 to about 20 (libjpeg's standard script:
 * 10, 6 for grey); each scan is a pass over every block, so thousands of empty ones (a 430 KB
 * file with 2,649 took 26 s to decode, inside every size limit) are refused before decoding, as
 * libjpeg-turbo's own tools do (`-maxscans`).
 */
export const MAX_JPEG_SCANS = 100;

/**
 * The SOS markers of a JPEG, counted up to `stop`: marker segments are skipped by their length,
 * and a scan's entropy-coded data runs to the next marker (0xFF followed by neither 0x00, a
 * stuffed byte, nor a restart marker).
 */
export function jpegScans(buf: Uint8Array, stop: number): number {
  let scans = 0;
  let i = 2; // after SOI
  const n = buf.length;
  while (i + 3 < n && scans < stop) {
    if (buf[i] !== 0xff) return scans; // not a marker where one must be: the decoder will say so
    const marker = buf[i + 1]!;
    if (marker === 0xff) { i++; continue; } // fill byte
    if (marker === 0xd9) break; // EOI
    if (marker === 0x01 || (marker >= 0xd0 && marker <= 0xd7)) { i += 2; continue; }
    i += 2 + ((buf[i + 2]! << 8) | buf[i + 3]!);
    if (marker !== 0xda) continue;
    scans++;
    for (;;) {
      i = buf.indexOf(0xff, i);
      if (i < 0 || i + 1 >= n) return scans;
      const next = buf[i + 1]!;
      if (next === 0x00 || (next >= 0xd0 && next <= 0xd7)) { i += 2; continue; }
      break;
    }
  }
  return scans;
}

/** Most pages (image file directories) a TIFF may have (only the first is rendered): 10,000 cost libtiff about 0.25 s to count. */
export const MAX_TIFF_PAGES = 10_000;

/**
 * A TIFF's directories, counted up to `stop` by following each one's link to the next (classic
 * and BigTIFF, either byte order); 0 for anything else. A link out of the file, or back to a
 * directory already seen, ends the count (the decoder then says what is wrong).
 */
export function tiffPages(buf: Uint8Array, stop: number): number {
  if (buf.length < 16) return 0;
  const little = buf[0] === 0x49 && buf[1] === 0x49;
  if (!little && !(buf[0] === 0x4d && buf[1] === 0x4d)) return 0;
  const view = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  const magic = view.getUint16(2, little);
  if (magic !== 42 && magic !== 43) return 0;
  const big = magic === 43;
  const [countBytes, entryBytes, linkBytes] = big ? [8, 20, 8] : [2, 12, 4];
  const read = (at: number, bytes: number) => (bytes === 8 ? Number(view.getBigUint64(at, little)) : bytes === 4 ? view.getUint32(at, little) : view.getUint16(at, little));
  const seen = new Set<number>();
  let at = read(big ? 8 : 4, linkBytes);
  while (at > 0 && seen.size < stop && !seen.has(at) && at + countBytes <= buf.length) {
    seen.add(at);
    const link = at + countBytes + read(at, countBytes) * entryBytes;
    if (link + linkBytes > buf.length) break;
    at = read(link, linkBytes);
  }
  return seen.size;
}

/**
 * Whether a GIF's data stream reaches its trailer (0x3B) within `buf`: the walk jumps over the
 * colour tables, each extension and image by its sub-blocks' lengths. libnsgif (in libvips)
 * counts a frame cut short as a frame and draws it half blank, without a warning: a 5-frame GIF
 * cut at 30 % decoded as 2 frames. False for a stream that ends before its trailer; true for
 * anything else (not a GIF, or a block it does not know: the decoder judges those).
 */
export function gifComplete(buf: Uint8Array): boolean {
  if (buf.length < 13 || buf[0] !== 0x47 || buf[1] !== 0x49 || buf[2] !== 0x46) return true;
  /** Size of a colour table from its packed flags byte (0 when absent). */
  const table = (flags: number) => ((flags & 0x80) !== 0 ? 3 << ((flags & 7) + 1) : 0);
  let at = 13 + table(buf[10]!);
  /** Past the sub-blocks from `from` and their 0 terminator; -1 when the data ends first. */
  const skipSubBlocks = (from: number): number => {
    let p = from;
    while (p < buf.length) {
      const n = buf[p]!;
      if (n === 0) return p + 1;
      p += n + 1;
    }
    return -1;
  };
  while (at < buf.length) {
    const block = buf[at]!;
    if (block === 0x3b) return true;
    if (block === 0x21) at = skipSubBlocks(at + 2);
    else if (block === 0x2c) {
      if (at + 10 > buf.length) return false;
      // The descriptor (10 bytes with its introducer), a local table, the LZW code size, the data.
      at = skipSubBlocks(at + 10 + table(buf[at + 9]!) + 1);
    } else return true;
    if (at < 0) return false;
  }
  return false;
}

const PNG_SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a] as const;

/** Chunk types of a PNG's text (tEXt, zTXt, iTXt) as big-endian words. */
const PNG_TEXT_CHUNKS: ReadonlySet<number> = new Set(['tEXt', 'zTXt', 'iTXt'].map((t) => Buffer.from(t, 'latin1').readUInt32BE(0)));

/**
 * A PNG without its text chunks (tEXt, zTXt, iTXt); any other input, or a PNG with none, as it
 * is. libpng (in libvips, in sharp) inflates every compressed text chunk into the image's
 * metadata, on the header read and again on the decode, and nothing bounds their sum: a 973 KB
 * PNG of 20 zTXt chunks of 50 MB each took 5 GB and nearly two minutes, inside every size limit.
 * Nothing here reads them. The walk jumps from chunk to chunk by their lengths; a length that
 * runs past the end keeps the rest as it is, for the decoder to judge.
 */
export function withoutPngText(buf: Buffer): Buffer {
  if (buf.length < 8 || PNG_SIGNATURE.some((b, i) => buf[i] !== b)) return buf;
  const kept: Buffer[] = [];
  let from = 8;
  let at = 8;
  while (at + 8 <= buf.length) {
    const end = at + 12 + buf.readUInt32BE(at);
    if (end > buf.length) break;
    if (PNG_TEXT_CHUNKS.has(buf.readUInt32BE(at + 4))) {
      kept.push(buf.subarray(from, at));
      from = end;
    }
    at = end;
  }
  if (kept.length === 0) return buf;
  kept.push(buf.subarray(from));
  return Buffer.concat([buf.subarray(0, 8), ...kept]);
}
