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

/** Along x: the first and last sample of a row are their own outer neighbour. */
function bilateralRowX(s: Float32Array, o: Float32Array, r: number, w: number, lut: Float32Array): void {
  const top = RANGE_BINS;
  let l = s[r]!, c = s[r]!;
  for (let x = 0; x < w; x++) {
    const i = r + x;
    const rt = x < w - 1 ? s[i + 1]! : c;
    let d = Math.abs(l - c) * top;
    const wl = lut[d < top ? d | 0 : top]!;
    d = Math.abs(rt - c) * top;
    const wr = lut[d < top ? d | 0 : top]!;
    o[i] = (c + wl * l + wr * rt) / (1 + wl + wr);
    l = c;
    c = rt;
  }
}

/** Along y, in place on row r: `prev` holds the row above before filtering, dn is the row below. */
function bilateralRowY(o: Float32Array, prev: Float32Array, r: number, dn: number, w: number, lut: Float32Array): void {
  const top = RANGE_BINS;
  for (let x = 0; x < w; x++) {
    const i = r + x;
    const c = o[i]!;
    const u = prev[x]!;
    const b = o[dn + x]!;
    let d = Math.abs(u - c) * top;
    const wu = lut[d < top ? d | 0 : top]!;
    d = Math.abs(b - c) * top;
    const wb = lut[d < top ? d | 0 : top]!;
    prev[x] = c;
    o[i] = (c + wu * u + wb * b) / (1 + wu + wb);
  }
}
