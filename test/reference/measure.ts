/**
 * Scalar oracle of measureSource (assembly/measure.ts: measure, histShares, histPercentiles), as
 * the TypeScript had it; the histogram is src's (tone.ts), the percentiles ./tone.ts's.
 */
import { encodeLinear } from '../../src/core/pipeline/linear.js';
import type { Raster } from '../../src/core/pipeline/raster.js';
import { histogram, LEVELS_HIGH_PERCENTILE, LEVELS_LOW_PERCENTILE } from '../../src/core/pipeline/tone.js';
import { percentiles } from './tone.js';
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
 * magHist. In f32 (each operation rounded with Math.fround), as the kernel's four lanes: sample x
 * (from 1) of the vector part goes to lane (x - 1) % 4, each lane summing its |Laplacian| in f32;
 * the row's sum is (l0 + l1) + (l2 + l3), then the tail's samples (the last (w - 2) % 4) in f64.
 */
function gradientRow(d: Float32Array, r: number, w: number, acc: Float64Array, magHist: Uint32Array): void {
  const f = Math.fround;
  const lanes = [0, 0, 0, 0];
  const vectorEnd = 1 + 4 * Math.floor(Math.max(0, w - 2) / 4);
  let edges = 0;
  for (let x = 1; x < w - 1; x++) {
    const { lap, mag } = window3(d, r, w, x);
    if (x < vectorEnd) lanes[(x - 1) % 4] = f(lanes[(x - 1) % 4]! + lap);
    if (mag > f(0.1)) edges++;
    const k = f(mag * 255) | 0;
    magHist[k > 255 ? 255 : k]!++;
  }
  // The tail's samples (at most three) one by one after the lanes.
  acc[0]! += tailAfter((lanes[0]! + lanes[1]!) + (lanes[2]! + lanes[3]!), d, r, w, vectorEnd);
  acc[1]! += edges;
}

/** |Laplacian| and normalised Sobel magnitude of the 3x3 window around sample x of row r, in f32. */
function window3(d: Float32Array, r: number, w: number, x: number): { lap: number; mag: number } {
  const f = Math.fround;
  const u = r - w, dn = r + w;
  const a = d[u + x - 1]!, b = d[u + x]!, c = d[u + x + 1]!;
  const l = d[r + x - 1]!, m = d[r + x]!, rr = d[r + x + 1]!;
  const g = d[dn + x - 1]!, hh = d[dn + x]!, i = d[dn + x + 1]!;
  const v = f(f(f(f(f(f(f(f(a - 2 * b) + c) - 2 * l) + 4 * m) - 2 * rr) + g) - 2 * hh) + i);
  const gx = f(f(f(f(f(c + 2 * rr) + i) - a) - 2 * l) - g);
  const gy = f(f(f(f(f(g + 2 * hh) + i) - a) - 2 * b) - c);
  return { lap: Math.abs(v), mag: f(f(Math.sqrt(f(f(gx * gx) + f(gy * gy)))) * 0.25) };
}

/** lap plus the |Laplacian| of samples from..w - 2 of row r, one at a time in f64. */
function tailAfter(lap: number, d: Float32Array, r: number, w: number, from: number): number {
  for (let x = from; x < w - 1; x++) lap += window3(d, r, w, x).lap;
  return lap;
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
