import { isPending, lazyProperty } from '../lazy.js';
import { encLut } from '../pipeline/linear.js';
import type { Raster } from '../pipeline/raster.js';
import { HIST_BINS, LEVELS_HIGH_PERCENTILE, LEVELS_LOW_PERCENTILE } from '../pipeline/tone.js';
import { frame, histogramWords, keptAt, nestedFrame } from '../wasm/kernels.js';

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
  /** Mean chroma of the cells (0..1); measured when first read where their RGB is (measureSource). */
  readonly colorfulness: number;
  readonly hist: Uint32Array;
  /** The auto-levels percentiles of hist (tone.ts LEVEL_POINTS; stretch() blends them). */
  readonly levelsLow: number;
  readonly levelsHigh: number;
}

/**
 * The source's statistics, from its resampled luminance and, for `colorfulness` alone, its cells'
 * linear RGB. Where those are computed on first read (render.ts prepare(), 'later': mono art,
 * whose Director leaves saturation alone and whose report shows the colourfulness only in json),
 * so is the colourfulness; otherwise it is measured at once.
 */
export function measureSource(luma: Raster, colors: { readonly cellLinearRgb: Float32Array }): SourceStats {
  const w = luma.width, h = luma.height, n = w * h;
  // In WebAssembly (assembly/kernels.ts histogram, assembly/measure.ts): the samples copied in
  // once for all of it; the statistics of the histograms too, which a first render walked
  // interpreted (test/reference/measure.ts statsFrom is their twin).
  const f = frame();
  // The resampled luminance where it is still in kernel memory (resample.ts keeps it there).
  const kept = keptAt(luma);
  const pd = kept ?? f.f32(n), po = f.f32(4), ph = f.f32(1024), pt = f.f32(histogramWords(HIST_BINS));
  const np = LEVEL_SHARES.length, pp = f.bytes(8 * (np + 1)), pv = f.bytes(8 * (np + 1)), ps = f.bytes(8 * 3);
  const k = f.ready();
  if (kept === null) f.viewF32(pd, n).set(luma.data.subarray(0, n));
  k.histogram(pd, n, HIST_BINS, pt);
  // Noise: |Laplacian-of-differences| summed over the interior (Immerkaer 1996), every fourth
  // row (plenty of samples); Sobel edges on the same rows.
  k.measure(pd, w, h, po, ph);
  const sums = f.viewF64(po, 2);
  const lap = sums[0]!, edges = sums[1]!;
  // Mean and tonal shares from the histogram: no second pass over the samples.
  k.histShares(pt, HIST_BINS, ps);
  const shares = f.viewF64(ps, 3);
  const mean = shares[0]! / n, shadows = shares[1]!, highlights = shares[2]!;
  // The shares' values in the luminance histogram, then the gradient's 90th percentile.
  f.viewF64(pp, np + 1).set(SHARES);
  k.histPercentiles(pt, HIST_BINS, pp, np, pv);
  k.histPercentiles(ph, 256, pp + 8 * np, 1, pv + 8 * np);
  const v = f.viewF64(pv, np + 1);
  const levelsLow = v[0]!, p01 = v[1]!, p50 = v[2]!, p99 = v[3]!, levelsHigh = v[4]!, magP90 = v[5]!;
  let lapN = 0;
  for (let y = 1; y < h - 1; y += 4) lapN += Math.max(0, w - 2);
  const gradN = lapN;
  const hist = f.viewU32(pt, HIST_BINS).slice();
  // After the frame's last read: colorfulnessOf() allocates above it.
  const deferred = isPending(colors, 'cellLinearRgb');
  const stats: SourceStats = {
    p01, p50, p99, mean,
    dynamicRange: p99 - p01,
    shadowShare: shadows / n,
    highlightShare: highlights / n,
    noise: lapN ? (Math.sqrt(Math.PI / 2) * lap) / (6 * lapN) : 0,
    edgeDensity: gradN ? edges / gradN : 0,
    edgeP90: gradN ? magP90 : 0,
    colorfulness: deferred ? 0 : colorfulnessOf(colors.cellLinearRgb),
    hist,
    levelsLow,
    levelsHigh,
  };
  if (deferred) lazyProperty(stats, 'colorfulness', () => colorfulnessOf(colors.cellLinearRgb));
  return stats;
}

/** Mean chroma of the cells (assembly/measure.ts cellChroma), in whatever frame is open. */
function colorfulnessOf(cellLinearRgb: Float32Array): number {
  const cells = cellLinearRgb.length / 3;
  if (!cells) return 0;
  const enc = encLut();
  return nestedFrame((f) => {
    const pr = f.f32(cells * 3), pe = f.f32(enc.length);
    const k = f.ready();
    f.viewF32(pr, cells * 3).set(cellLinearRgb);
    f.viewF32(pe, enc.length).set(enc);
    return k.cellChroma(pr, cells, pe) / cells;
  });
}

/** The shares whose histogram values measureSource takes, ascending: the auto-levels points and p01, p50, p99. */
const LEVEL_SHARES: readonly number[] = [LEVELS_LOW_PERCENTILE, 0.01, 0.5, 0.99, LEVELS_HIGH_PERCENTILE];
/** LEVEL_SHARES, then the gradient histogram's share (its 90th percentile), as the kernel reads them. */
const SHARES = Float64Array.of(...LEVEL_SHARES, 0.9);
