/**
 * Sobel line art: ink = min(1, |gradient| * edgeStrength), where |gradient| is normalised so a
 * full black-to-white step reads 1. The response is two samples wide (half a cell), the width
 * of a glyph stroke, so `| - / \` match it.
 */
export function sobelInk(src: Float32Array, w: number, h: number, edgeStrength: number, out: Float32Array): Float32Array {
  const k = edgeStrength / 4;
  for (let y = 0; y < h; y++) {
    const up = (y > 0 ? y - 1 : 0) * w;
    const dn = (y < h - 1 ? y + 1 : h - 1) * w;
    const r = y * w;
    for (let x = 0; x < w; x++) {
      const l = x > 0 ? x - 1 : 0;
      const rt = x < w - 1 ? x + 1 : w - 1;
      const a = src[up + l]!, b = src[up + x]!, c = src[up + rt]!;
      const d = src[r + l]!, f = src[r + rt]!;
      const g = src[dn + l]!, hh = src[dn + x]!, i = src[dn + rt]!;
      const gx = c + 2 * f + i - a - 2 * d - g;
      const gy = g + 2 * hh + i - a - 2 * b - c;
      const m = Math.sqrt(gx * gx + gy * gy) * k;
      out[r + x] = m > 1 ? 1 : m;
    }
  }
  return out;
}
