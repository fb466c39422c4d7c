import { encLut } from '../pipeline/linear.js';
import type { Raster } from '../pipeline/raster.js';
import { HIST_BINS, LEVELS_HIGH_PERCENTILE, LEVELS_LOW_PERCENTILE, percentile, percentiles } from '../pipeline/tone.js';
import { frame } from '../wasm/kernels.js';

/** What the Director knows of the source, measured on the resampled luminance raster. */
export interface SourceStats {
  readonly p01: number;
  readonly p50: number;
  readonly p99: number;
  readonly mean: number;
  /** p99 - p01. */
  readonly dynamicRange: number;
  readonly shadowShare: number;
  readonly highlightShare: number;
  /** Estimated noise sigma (0..1 scale, Immerkaer's Laplacian estimator). */
  readonly noise: number;
  /** Share of samples on an edge (normalised Sobel magnitude > 0.1). */
  readonly edgeDensity: number;
  /** 90th percentile of the normalised gradient magnitude (for edges mode). */
  readonly edgeP90: number;
  /** Mean chroma of the cells (0..1). */
  readonly colorfulness: number;
  readonly hist: Uint32Array;
  /** The auto-levels percentiles of hist (tone.ts levels()). */
  readonly levelsLow: number;
  readonly levelsHigh: number;
}

export function measureSource(luma: Raster, cellLinearRgb: Float32Array): SourceStats {
  const d = luma.data;
  const w = luma.width, h = luma.height;
  const cells = cellLinearRgb.length / 3;
  // In WebAssembly (assembly/kernels.ts histogram, assembly/measure.ts measure): the samples
  // copied in once for both.
  const enc = encLut();
  const f = frame();
  const pd = f.f32(d.length), pr = f.f32(cells * 3), pe = f.f32(enc.length), po = f.f32(6), ph = f.f32(512), pt = f.f32(HIST_BINS * 5);
  const k = f.ready();
  f.viewF32(pd, d.length).set(d);
  f.viewF32(pr, cells * 3).set(cellLinearRgb);
  f.viewF32(pe, enc.length).set(enc);
  k.histogram(pd, d.length, HIST_BINS, pt);
  const hist = f.viewU32(pt, HIST_BINS).slice();
  // Noise: |Laplacian-of-differences| summed over the interior (Immerkaer 1996), every fourth
  // row (plenty of samples); Sobel edges on the same rows; the cells' chroma.
  k.measure(pd, w, h, pr, cells, pe, po, ph);
  const sums = f.viewF64(po, 3);
  const lap = sums[0]!, edges = sums[1]!, chroma = sums[2]!;
  const magHist = f.viewU32(ph, 256).slice();
  return statsFrom(hist, magHist, lap, edges, chroma, w, h, cells);
}

/**
 * The statistics from the measured sums (also the test oracle's, so only the pixel loops have a
 * scalar twin): |Laplacian| sum, edge samples, chroma sum, the luminance and gradient histograms.
 */
export function statsFrom(hist: Uint32Array, magHist: Uint32Array, lap: number, edges: number, chroma: number, w: number, h: number, cells: number): SourceStats {
  const n = w * h;
  // Mean and tonal shares from the histogram: no second pass over the samples.
  let mean = 0, shadows = 0, highlights = 0;
  const bins = hist.length;
  for (let b = 0; b < bins; b++) {
    const c = hist[b]!;
    const v = (b + 0.5) / bins;
    mean += c * v;
    if (v < 0.2) shadows += c;
    else if (v > 0.8) highlights += c;
  }
  mean /= n;

  let lapN = 0;
  for (let y = 1; y < h - 1; y += 4) lapN += Math.max(0, w - 2);
  const gradN = lapN;
  const noise = lapN ? (Math.sqrt(Math.PI / 2) * lap) / (6 * lapN) : 0;

  const [levelsLow, p01, p50, p99, levelsHigh] = percentiles(hist, [LEVELS_LOW_PERCENTILE, 0.01, 0.5, 0.99, LEVELS_HIGH_PERCENTILE]) as [number, number, number, number, number];
  return {
    p01, p50, p99, mean,
    dynamicRange: p99 - p01,
    shadowShare: shadows / n,
    highlightShare: highlights / n,
    noise,
    edgeDensity: gradN ? edges / gradN : 0,
    edgeP90: gradN ? percentile(magHist, 0.9) : 0,
    colorfulness: cells ? chroma / cells : 0,
    hist,
    levelsLow,
    levelsHigh,
  };
}
