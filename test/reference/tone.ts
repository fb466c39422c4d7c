/**
 * Scalar oracles of the tone kernels that run in WebAssembly (the histogram and the LUT pass), as
 * the TypeScript had them. The tone curve itself (levels, toneValue, toneLut, lutValue) is still
 * TypeScript in src/core/pipeline/tone.ts and is imported from there, not copied.
 */
import { lutValue } from '../../src/core/pipeline/tone.js';
import type { Raster } from './raster.js';

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

export function applyLut(src: Float32Array, lut: Float32Array, out: Float32Array): Float32Array {
  for (let i = 0; i < src.length; i++) out[i] = lutValue(lut, src[i]!);
  return out;
}

/** percentile() as it was, one walk per value: the oracle of tone.ts percentiles(). */
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
