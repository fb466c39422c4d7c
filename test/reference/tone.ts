/**
 * Scalar oracles of the tone kernels that run in WebAssembly (the histogram, the LUT pass and the
 * tone tables), as the TypeScript had them; the LUT pass in the kernel's f32 steps (lutValue). The
 * tone curve itself (levels, toneValue) is still TypeScript in src/core/pipeline/tone.ts and is
 * imported from there, not copied.
 */
import { srgbToLinear } from '../../src/core/pipeline/linear.js';
import { TONE_LUT_SIZE, toneValue, type ToneSettings } from '../../src/core/pipeline/tone.js';
import type { Raster } from './raster.js';

/** toneLut()'s table (assembly/tone.ts toneTable): toneValue() of each entry's input over -0.5..1.5, 0 outside from..to. */
export function toneTable(s: ToneSettings, size: number, from = 0, to = size): Float32Array {
  const lut = new Float32Array(size + 1);
  for (let i = Math.max(0, from); i <= Math.min(size, to); i++) lut[i] = toneValue(-0.5 + (2 * i) / size, s);
  return lut;
}

/** colorTransform()'s table (assembly/tone.ts colorToneTable): the curve of i / size, not inverted, back to linear light. */
export function colorToneTable(s: ToneSettings, size: number): Float32Array {
  const lut = new Float32Array(size + 1);
  for (let i = 0; i <= size; i++) lut[i] = srgbToLinear(toneValue(i / size, { ...s, invert: false }));
  return lut;
}

export function histogram(r: Raster, bins = 1024): Uint32Array {
  const h = new Uint32Array(bins);
  const d = r.data;
  const top = bins - 1;
  for (let i = 0; i < d.length; i++) {
    let b = (d[i]! * bins) | 0;
    if (b < 0) b = 0;
    else if (b > top) b = top;
    h[b]!++;
  }
  return h;
}

/**
 * One value through a toneLut() table, linearly interpolated, each operation rounded to f32: the
 * arithmetic of the kernel's four f32 lanes (assembly/kernels.ts lutValue32).
 */
function lutValue(lut: Float32Array, v: number): number {
  const f = Math.fround, n = TONE_LUT_SIZE;
  const x = f(f(v + 0.5) * (n / 2));
  if (x <= 0) return lut[0]!;
  if (x >= n) return lut[n]!;
  const k = x | 0;
  const a = lut[k]!;
  return f(a + f(f(lut[k + 1]! - a) * f(x - k)));
}

export function applyLut(src: Float32Array, lut: Float32Array, out: Float32Array): Float32Array {
  for (let i = 0; i < src.length; i++) out[i] = lutValue(lut, src[i]!);
  return out;
}

/**
 * The value below which each share of `ps` (ascending) of the samples lie, from a histogram over
 * 0..1, in one walk over the histogram: the same arithmetic per value as a walk per value
 * (percentile() below), so the same results. The TypeScript assembly/measure.ts histPercentiles
 * replaced (the render's auto-levels and the Director's measurements).
 */
export function percentiles(h: Uint32Array, ps: readonly number[]): number[] {
  let total = 0;
  for (let i = 0; i < h.length; i++) total += h[i]!;
  const out = ps.map(() => 1);
  let j = 0, acc = 0;
  for (let i = 0; i < h.length && j < ps.length; i++) {
    const c = h[i]!;
    const next = acc + c;
    for (; j < ps.length && c > 0 && next >= ps[j]! * total; j++) out[j] = (i + (ps[j]! * total - acc) / c) / h.length;
    acc = next;
  }
  return out;
}

/** percentile() as it was, one walk per value: the oracle of percentiles() and histPercentiles. */
export function percentile(h: Uint32Array, p: number): number {
  let total = 0;
  for (let i = 0; i < h.length; i++) total += h[i]!;
  const want = p * total;
  let acc = 0;
  for (let i = 0; i < h.length; i++) {
    const next = acc + h[i]!;
    if (next >= want && h[i]! > 0) return (i + (want - acc) / h[i]!) / h.length;
    acc = next;
  }
  return 1;
}
