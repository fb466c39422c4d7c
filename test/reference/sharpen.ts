import { scratch } from '../../src/core/pipeline/scratch.js';
import { applyLut } from './tone.js';

/**
 * Unsharp mask: v + amount * (v - blur(v)) with a separable binomial [1 4 6 4 1]/16 blur
 * (sigma ~1 sample, a quarter of a cell width): it lifts the sub-cell structure that glyph shapes
 * can show. `sharpen` 0..1 maps to an amount of 0..2. Values may overshoot 0..1; the tone curve
 * clamps them. With `tone` (a toneLut() table) the result goes straight through the tone curve,
 * saving a pass over the raster. Each operation rounded to f32 (Math.fround), as the kernel's f32x4
 * lanes compute it.
 */
export function unsharpMask(src: Float32Array, w: number, h: number, sharpen: number, out: Float32Array, tmp: Float32Array, tone?: Float32Array): Float32Array {
  if (sharpen <= 0) {
    if (tone) applyLut(src, tone, out);
    else if (out !== src) out.set(src);
    return out;
  }
  const amount = Math.fround(2 * sharpen);
  // Row by row through small single-loop functions: the JIT optimises each one with its full
  // type feedback after a few rows, which a cold first render (the CLI's only one) needs.
  for (let y = 0; y < h; y++) blurRow5(src, y * w, w, tmp);
  const row = scratch('ref.sharpen.row', w);
  for (let y = 0; y < h; y++) {
    const y1 = (y > 0 ? y - 1 : 0) * w, y2 = (y > 1 ? y - 2 : 0) * w;
    const y3 = (y < h - 1 ? y + 1 : h - 1) * w, y4 = (y < h - 2 ? y + 2 : h - 1) * w;
    const r = y * w;
    unsharpRow(src, tmp, r, y1, y2, y3, y4, w, amount, row);
    // A row buffer, since tmp rows are still needed below and out may be src.
    if (tone) applyLut(row, tone, out.subarray(r, r + w));
    else out.set(row, r);
  }
  return out;
}

/** [1 4 6 4 1]/16 along one row: a sliding window over the interior, clamped at both ends. */
function blurRow5(src: Float32Array, r: number, w: number, tmp: Float32Array): void {
  if (w < 5) {
    for (let x = 0; x < w; x++) tmp[r + x] = clampedTap(src, r, w, x);
    return;
  }
  tmp[r] = clampedTap(src, r, w, 0);
  tmp[r + 1] = clampedTap(src, r, w, 1);
  let a = src[r]!, b = src[r + 1]!, c = src[r + 2]!, d = src[r + 3]!;
  for (let i = r + 2, end = r + w - 2; i < end; i++) {
    const e = src[i + 2]!;
    tmp[i] = tap5(a, b, c, d, e);
    a = b; b = c; c = d; d = e;
  }
  tmp[r + w - 2] = clampedTap(src, r, w, w - 2);
  tmp[r + w - 1] = clampedTap(src, r, w, w - 1);
}

/** The vertical [1 4 6 4 1]/16 of row r (rows y1..y4 around it) and the unsharp combination. */
function unsharpRow(src: Float32Array, tmp: Float32Array, r: number, y1: number, y2: number, y3: number, y4: number, w: number, amount: number, row: Float32Array): void {
  for (let x = 0; x < w; x++) {
    const b = tap5(tmp[y2 + x]!, tmp[y1 + x]!, tmp[r + x]!, tmp[y3 + x]!, tmp[y4 + x]!);
    const v = src[r + x]!;
    row[x] = Math.fround(v + Math.fround(amount * Math.fround(v - b)));
  }
}

function clampedTap(src: Float32Array, r: number, w: number, x: number): number {
  const x1 = x > 0 ? x - 1 : 0, x2 = x > 1 ? x - 2 : 0;
  const x3 = x < w - 1 ? x + 1 : w - 1, x4 = x < w - 2 ? x + 2 : w - 1;
  return tap5(src[r + x2]!, src[r + x1]!, src[r + x]!, src[r + x3]!, src[r + x4]!);
}

/** (a + 4b + 6c + 4d + e) / 16, in that order, each operation rounded to f32. */
function tap5(a: number, b: number, c: number, d: number, e: number): number {
  const f = Math.fround;
  return f(f(f(f(f(a + f(4 * b)) + f(6 * c)) + f(4 * d)) + e) * 0.0625);
}
