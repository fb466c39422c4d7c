/**
 * The bilateral denoise's weights (the kernel is assembly/kernels.ts denoisePass, run by
 * detail.ts): edge-preserving, separable 3x3, spatial sigma 1 sample. `strength` 0..1 sets the range
 * sigma (up to 0.12 of full scale, about 30/255) and, above 0.5, a second pass. Sensor noise sits
 * well inside the range sigma and is averaged away; a step edge is many sigmas high, gets ~zero
 * weight across it and keeps its contrast.
 */
export const RANGE_BINS = 1024;

/** Gaussian weight of a tone difference, `RANGE_BINS` steps over 0..1, for a denoise `strength`. */
export function rangeWeights(strength: number): Float32Array {
  const sigma = 0.01 + 0.11 * strength;
  const lut = new Float32Array(RANGE_BINS + 1);
  for (let i = 0; i <= RANGE_BINS; i++) {
    const d = i / RANGE_BINS;
    lut[i] = Math.exp(-(d * d) / (2 * sigma * sigma));
  }
  return lut;
}

/** The range weights with the neighbours' spatial weight folded in, kept for the last few strengths. */
export function foldedWeights(strength: number): Float32Array {
  let t = folded.get(strength);
  if (!t) {
    const lut = rangeWeights(strength);
    t = new Float32Array(RANGE_BINS + 1);
    for (let i = 0; i <= RANGE_BINS; i++) t[i] = W_NEIGHBOUR * lut[i]!;
    if (folded.size >= 16) folded.delete(folded.keys().next().value!);
    folded.set(strength, t);
  }
  return t;
}

const folded = new Map<number, Float32Array>();

/**
 * Each pass (Pham & van Vliet 2005) is a 3-tap range-weighted filter along x, then along y, in
 * place, carrying the unfiltered previous row: four taps a sample instead of eight, and a step
 * edge still gets ~zero weight across it on either axis. The range weights are indexed by
 * |difference| * RANGE_BINS; the first and last sample of a row or column are their own outer
 * neighbour.
 */
const W_NEIGHBOUR = Math.exp(-0.5);
