/**
 * What the studio reads from a still file's own bytes before the browser decodes it (a pure
 * module: the render worker uses it, the tests call it in Node).
 */

export interface ImageFacts {
  /**
   * It carries an ICC colour profile (a PNG's iCCP chunk, a JPEG's ICC_PROFILE APP2 segment).
   * The server converts such an image to sRGB, so the worker's decode converts too; any other is
   * decoded as stored, as the server does (a PNG's gAMA chunk, which the browser would apply, is
   * ignored there).
   */
  readonly icc: boolean;
  /**
   * A JPEG of four components (CMYK, or YCCK as its Adobe APP14 segment tells): the browser and
   * the server's decoder turn its inks into RGB differently (by tens of levels, with a profile or
   * without), so the API's art of it differs from the studio's.
   */
  readonly cmyk: boolean;
}

/** The facts of a file from its first bytes (256 KiB hold the metadata of any usual file). */
export function imageFacts(b: Uint8Array): ImageFacts {
  const u32 = (i: number) => ((b[i]! << 24) | (b[i + 1]! << 16) | (b[i + 2]! << 8) | b[i + 3]!) >>> 0;
  const ascii = (i: number, n: number) => String.fromCharCode(...b.subarray(i, i + n));
  const facts = { icc: false, cmyk: false };
  if (b.length >= 8 && u32(0) === 0x89504e47 && u32(4) === 0x0d0a1a0a) {
    for (let i = 8; i + 8 <= b.length; i += 12 + u32(i)) {
      const type = ascii(i + 4, 4);
      if (type === 'iCCP') facts.icc = true;
      if (type === 'iCCP' || type === 'IDAT' || type === 'IEND') break;
    }
    return facts;
  }
  if (b.length >= 4 && b[0] === 0xff && b[1] === 0xd8) {
    for (let i = 2; i + 4 <= b.length && b[i] === 0xff; i += 2 + ((b[i + 2]! << 8) | b[i + 3]!)) {
      const marker = b[i + 1]!;
      if (marker === 0xe2 && ascii(i + 4, 12) === 'ICC_PROFILE\0') facts.icc = true;
      // A start of frame (SOF0-SOF15 but DHT, JPG and DAC): its component count follows the
      // precision and the size.
      if (marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc) facts.cmyk = b[i + 9] === 4;
      if (marker === 0xda) break; // the image data starts: no more metadata
    }
  }
  return facts;
}
