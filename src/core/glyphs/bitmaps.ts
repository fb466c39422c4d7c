import { BITMAP_CELL, GLYPH_BITMAPS } from './bitmaps.generated.js';

export { BITMAP_CELL, GLYPH_BITMAPS };

let hexOf: Map<number, string> | undefined;
const decoded = new Map<number, Uint8Array>();

/**
 * A measured glyph's bitmap (BITMAP_CELL.width x height, row-major): each pixel's ink coverage as
 * a level 0..BITMAP_CELL.levels - 1, decoded from the generated hex digits on first use. Undefined
 * for a code point the reference font was not measured for.
 */
export function glyphBitmap(codePoint: number): Uint8Array | undefined {
  const hit = decoded.get(codePoint);
  if (hit) return hit;
  const hex = glyphHex(codePoint);
  if (hex === undefined) return undefined;
  const digits = hex.replace(/ /g, '');
  const bmp = new Uint8Array(BITMAP_CELL.width * BITMAP_CELL.height);
  for (let i = 0; i < bmp.length; i++) bmp[i] = parseInt(digits[i]!, 16);
  decoded.set(codePoint, bmp);
  return bmp;
}

/**
 * A measured glyph's bitmap as generated: BITMAP_CELL.height space-separated rows of
 * BITMAP_CELL.width hex digits (its levels), for a decoder of its own (pipeline/refine.ts decodes
 * a ramp's in WebAssembly). Undefined for a code point the reference font was not measured for.
 */
export function glyphHex(codePoint: number): string | undefined {
  hexOf ??= new Map(GLYPH_BITMAPS);
  return hexOf.get(codePoint);
}
