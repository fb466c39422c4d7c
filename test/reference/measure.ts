/**
 * Scalar oracle of measureSource (assembly/measure.ts: measure, histShares, histPercentiles), as
 * the TypeScript had it; the histogram and the percentiles are src's (tone.ts).
 */
import { encodeLinear } from '../../src/core/pipeline/linear.js';
import type { Raster } from '../../src/core/pipeline/raster.js';
import { histogram, LEVELS_HIGH_PERCENTILE, LEVELS_LOW_PERCENTILE, percentiles } from '../../src/core/pipeline/tone.js';
import type { SourceStats } from '../../src/core/director/measure.js';

export function measureSource(luma: Raster, cellLinearRgb: Float32Array): SourceStats {
  const hist = histogram(luma);
  const d = luma.data;
  const w = luma.width, h = luma.height;
  // Noise: |Laplacian-of-differences| summed over the interior (Immerkaer 1996), every fourth row (plenty of samples).
  const acc = new Float64Array(2); // sum |Laplacian|, edge samples
  const magHist = new Uint32Array(256);
  for (let y = 1; y < h - 1; y += 4) gradientRow(d, y * w, w, acc, magHist);

  let chroma = 0;
  const cells = cellLinearRgb.length / 3;
  for (let c = 0; c < cells; c++) {
    const r = encodeLinear(cellLinearRgb[c * 3]!), g = encodeLinear(cellLinearRgb[c * 3 + 1]!), b = encodeLinear(cellLinearRgb[c * 3 + 2]!);
    const mx = Math.max(r, g, b), mn = Math.min(r, g, b);
    chroma += mx - mn;
  }
  return statsFrom(hist, magHist, acc[0]!, acc[1]!, chroma, w, h, cells);
}

/**
 * One row's Laplacian and Sobel statistics (a 3x3 window sliding along it): adds |Laplacian| to
 * acc[0], the samples with normalised gradient magnitude > 0.1 to acc[1], and each magnitude to
 * magHist. A function per row so that even a cold first render runs it optimised.
 */
function gradientRow(d: Float32Array, r: number, w: number, acc: Float64Array, magHist: Uint32Array): void {
  const u = r - w, dn = r + w;
  let lap = 0, edges = 0;
  let a = d[u]!, l = d[r]!, g = d[dn]!;
  let b = d[u + 1]!, m = d[r + 1]!, hh = d[dn + 1]!;
  for (let x = 1; x < w - 1; x++) {
    const c = d[u + x + 1]!, rr = d[r + x + 1]!, i = d[dn + x + 1]!;
    const v = a - 2 * b + c - 2 * l + 4 * m - 2 * rr + g - 2 * hh + i;
    lap += v < 0 ? -v : v;
    const gx = c + 2 * rr + i - a - 2 * l - g;
    const gy = g + 2 * hh + i - a - 2 * b - c;
    const mag = Math.sqrt(gx * gx + gy * gy) / 4;
    if (mag > 0.1) edges++;
    const k = (mag * 255) | 0;
    magHist[k > 255 ? 255 : k]!++;
    a = b; b = c; l = m; m = rr; g = hh; hh = i;
  }
  acc[0]! += lap;
  acc[1]! += edges;
}

/** The statistics from the measured sums: |Laplacian| sum, edge samples, chroma sum, the luminance and gradient histograms. */
export function statsFrom(hist: Uint32Array, magHist: Uint32Array, lap: number, edges: number, chroma: number, w: number, h: number, cells: number): SourceStats {
  const n = w * h;
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
    edgeP90: gradN ? percentiles(magHist, [0.9])[0]! : 0,
    colorfulness: cells ? chroma / cells : 0,
    hist,
    levelsLow,
    levelsHigh,
  };
}
