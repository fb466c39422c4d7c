import type { Raster } from './raster.js';
import { scratch } from '../../src/core/pipeline/scratch.js';
import { rangeWeights } from '../../src/core/pipeline/denoise.js';

const RANGE_BINS = 1024;

/**
 * Edge-preserving bilateral filter (separable 3x3, spatial sigma 1 sample). `strength` 0..1 sets the range
 * sigma (up to 0.12 of full scale, about 30/255) and, above 0.5, a second pass. Sensor noise sits
 * well inside the range sigma and is averaged away; a step edge is many sigmas high, gets ~zero
 * weight across it and keeps its contrast.
 */
export function bilateralDenoise(src: Raster, strength: number, out: Float32Array, tmp: Float32Array): Float32Array {
  if (strength <= 0) {
    out.set(src.data);
    return out;
  }
  const lut = rangeWeights(strength);
  const passes = strength > 0.5 ? 2 : 1;
  let from = src.data;
  for (let p = 0; p < passes; p++) {
    const to = p === passes - 1 ? out : tmp;
    pass(from, to, src.width, src.height, lut);
    from = to;
  }
  return out;
}

const W_NEIGHBOUR = Math.exp(-0.5);

/**
 * One separable bilateral pass (Pham & van Vliet 2005): a 3-tap range-weighted filter along x,
 * then along y. Four taps a sample instead of eight, and a step edge still gets ~zero weight
 * across it on either axis. `lut` holds the range weights, indexed by |difference| * RANGE_BINS.
 */
function pass(s: Float32Array, o: Float32Array, w: number, h: number, rangeLut: Float32Array): void {
  const top = RANGE_BINS;
  // The spatial weight of the two neighbours folded into the table.
  const lut = scratch('ref.denoise.lut', top + 1);
  for (let i = 0; i <= top; i++) lut[i] = W_NEIGHBOUR * rangeLut[i]!;
  // Row by row through single-loop functions (see sharpen.ts: cold renders need it).
  for (let y = 0; y < h; y++) bilateralRowX(s, o, y * w, w, lut);
  // Along y in place, carrying the unfiltered previous row.
  const prev = scratch('ref.denoise.prev', w);
  prev.set(o.subarray(0, w));
  for (let y = 0; y < h; y++) bilateralRowY(o, prev, y * w, y < h - 1 ? y * w + w : y * w, w, lut);
}

/** The range weight of |a - c|, the last entry from RANGE_BINS on (and for NaN). */
function weight(lut: Float32Array, a: number, c: number): number {
  const d = Math.abs(Math.fround(a - c)) * RANGE_BINS;
  return lut[d < RANGE_BINS ? d | 0 : RANGE_BINS]!;
}

/** (c + wa * a + wb * b) / (1 + wa + wb), in that order, each operation rounded to f32. */
function bilateral(c: number, a: number, wa: number, b: number, wb: number): number {
  const f = Math.fround;
  return f(f(f(c + f(wa * a)) + f(wb * b)) / f(f(1 + wa) + wb));
}

/** Along x: the first and last sample of a row are their own outer neighbour. */
function bilateralRowX(s: Float32Array, o: Float32Array, r: number, w: number, lut: Float32Array): void {
  let l = s[r]!, c = s[r]!;
  for (let x = 0; x < w; x++) {
    const i = r + x;
    const rt = x < w - 1 ? s[i + 1]! : c;
    o[i] = bilateral(c, l, weight(lut, l, c), rt, weight(lut, rt, c));
    l = c;
    c = rt;
  }
}

/** Along y, in place on row r: `prev` holds the row above before filtering, dn is the row below. */
function bilateralRowY(o: Float32Array, prev: Float32Array, r: number, dn: number, w: number, lut: Float32Array): void {
  for (let x = 0; x < w; x++) {
    const i = r + x;
    const c = o[i]!;
    const u = prev[x]!;
    const b = o[dn + x]!;
    prev[x] = c;
    o[i] = bilateral(c, u, weight(lut, u, c), b, weight(lut, b, c));
  }
}
