/**
 * Scalar oracle of the Director's tone metrics (assembly/metrics.ts toneSums) and of its candidate
 * simulation's loops (quantizeTable, each cell's simulated tone and the sums over them: simSums, unstable), as the TypeScript had them. sourceCells and
 * the metric formulas on the sums are still TypeScript in src/core/director/metrics.ts.
 */
import { entropy, type SourceCells } from '../../src/core/director/metrics.js';

/** The value below which each share `qs` of the n values counted in `h` (1024 bins over 0..1) lie (assembly/metrics.ts quantileBin's twin). */
export function quantilesOf(h: Uint32Array, n: number, qs: readonly number[]): number[] {
  return qs.map((q) => {
    const want = q * n;
    let acc = 0;
    for (let b = 0; b < 1024; b++) { acc += h[b]!; if (acc >= want) return (b + 0.5) / 1024; }
    return 1;
  });
}
import { encodeLinear } from '../../src/core/pipeline/linear.js';

const BINS = 16;

function bin1024(v: number): number {
  const b = (v * 1024) | 0;
  return b < 0 ? 0 : b > 1023 ? 1023 : b;
}

// Scratch of toneMetrics, which the Director calls once per candidate.
const qHist = new Uint32Array(1024);
const hAll = new Float64Array(BINS), hDark = new Float64Array(BINS), hMid = new Float64Array(BINS), hLight = new Float64Array(BINS);

const DARK = 1, MID = 2, LIGHT = 4;

function quantiles(values: Float32Array, qs: readonly number[]): number[] {
  const h = new Uint32Array(1024);
  for (let i = 0; i < values.length; i++) h[bin1024(values[i]!)]!++;
  return quantilesOf(h, values.length, qs);
}

export function sourceCells(values: Float32Array): SourceCells {
  const n = values.length;
  let ss = 0, min = Infinity, max = -Infinity;
  for (let i = 0; i < n; i++) {
    const v = values[i]!;
    ss += v;
    if (v < min) min = v;
    if (v > max) max = v;
  }
  const [q25, q75] = quantiles(values, [0.25, 0.75]) as [number, number];
  const band = new Uint8Array(n);
  for (let i = 0; i < n; i++) {
    const s = values[i]!;
    band[i] = (s <= q25 ? DARK : 0) | (s >= q75 ? LIGHT : 0) | (s > q25 && s < q75 ? MID : 0);
  }
  const mean = n ? ss / n : 0;
  let vs = 0;
  for (let i = 0; i < n; i++) { const ds = values[i]! - mean; vs += ds * ds; }
  return { values, mean, min: n ? min : 0, max: n ? max : 0, band, vs };
}


/**
 * Tone metrics of a rendering: `rendered` is each cell's displayed tone (0..1, in the source's
 * orientation), `source` its perceptual luminance. See rubrics.ts for what each one means.
 */
export function toneMetrics(rendered: Float32Array, source: SourceCells): Record<string, number> {
  const n = rendered.length;
  const src = source.values, band = source.band;
  let sr = 0;
  qHist.fill(0);
  for (let i = 0; i < n; i++) {
    const r = rendered[i]!;
    sr += r;
    qHist[bin1024(r)]!++;
  }
  const mr = sr / n, ms = source.mean;
  let cov = 0, vr = 0, clipped = 0;
  const vs = source.vs;
  const [rLo, rHi] = quantilesOf(qHist, n, [0.05, 0.95]) as [number, number];
  // 16-bin histograms of the rendered tone: all cells, then per source band.
  const all = hAll.fill(0), dark = hDark.fill(0), mid = hMid.fill(0), light = hLight.fill(0);
  let nDark = 0, nMid = 0, nLight = 0;
  for (let i = 0; i < n; i++) {
    const r = rendered[i]!, s = src[i]!;
    const dr = r - mr, ds = s - ms;
    cov += dr * ds; vr += dr * dr;
    // Crushed: drawn blank (or solid) where the source is clearly a tone of its own. Darker
    // shadows may go to the blank ground: at glyph scale that separates regions.
    if ((r <= 0.001 && s > 0.3) || (r >= 0.999 && s < 0.7)) clipped++;
    let b = (r * BINS) | 0;
    b = b < 0 ? 0 : b >= BINS ? BINS - 1 : b;
    all[b]!++;
    const f = band[i]!;
    if (f & DARK) { dark[b]!++; nDark++; }
    if (f & MID) { mid[b]!++; nMid++; }
    if (f & LIGHT) { light[b]!++; nLight++; }
  }
  const fidelity = vr > 1e-12 && vs > 1e-12 ? Math.max(0, cov / Math.sqrt(vr * vs)) : vs <= 1e-12 ? 1 : 0;
  // A detail metric saturates at 3 bits of 4: a quarter of the image rarely spans all 16 tones.
  return {
    fidelity,
    range: Math.min(1, (rHi - rLo) / 0.8),
    // Spread of the rendered tones (0.36: a little above a uniform spread's 0.29): at glyph scale
    // regions drawn apart read as shapes, regions lifted to a flat mid-tone as texture.
    separation: Math.min(1, Math.sqrt(vr / Math.max(1, n)) / 0.36),
    levels: Math.min(1, entropy(all, n) / 0.8),
    clipping: Math.max(0, 1 - (2 * clipped) / n),
    shadows: Math.min(1, entropy(dark, nDark) / 0.75),
    midtones: Math.min(1, entropy(mid, nMid) / 0.75),
    highlights: Math.min(1, entropy(light, nLight) / 0.75),
  };
}

/** simulate() of director.ts: each table entry quantized, each cell's tone from its entry, its metrics, and the cells unstable under +-sigma. */
export function simulatedMetrics(lut: Float32Array, from: number, to: number, levels: Float64Array, invert: boolean, lutAt: Uint16Array, source: SourceCells, sigma?: number): { metrics: Record<string, number>; unstable: number } {
  const levelOf = new Float64Array(lut.length);
  for (let k = from; k <= to; k++) levelOf[k] = quantize(levels, lut[k]!, invert);
  const n = lutAt.length;
  const rendered = new Float32Array(n);
  for (let i = 0; i < n; i++) rendered[i] = levelOf[lutAt[i]!]!;
  const metrics = toneMetrics(rendered, source);
  // The covariance and variance sums per table entry, in entry order: an entry's cells share their
  // tone's deviation from the mean (assembly/metrics.ts simSums; the tones' sum is the cells' in
  // cell order, as toneMetrics takes it).
  let sr = 0;
  for (let i = 0; i < n; i++) sr += rendered[i]!;
  const mr = sr / n, ms = source.mean;
  const count = new Uint32Array(lut.length), dev = new Float64Array(lut.length);
  for (let i = 0; i < n; i++) {
    count[lutAt[i]!]!++;
    dev[lutAt[i]!]! += source.values[i]! - ms;
  }
  let cov = 0, vr = 0;
  for (let k = from; k <= to; k++) {
    if (count[k] === 0) continue;
    const d = Math.fround(levelOf[k]!) - mr;
    cov += d * dev[k]!;
    vr += count[k]! * (d * d);
  }
  const vs = source.vs;
  metrics.fidelity = vr > 1e-12 && vs > 1e-12 ? Math.max(0, cov / Math.sqrt(vr * vs)) : vs <= 1e-12 ? 1 : 0;
  metrics.separation = Math.min(1, Math.sqrt(vr / Math.max(1, n)) / 0.36);
  let changed = 0;
  if (sigma !== undefined) {
    const src = source.values;
    for (let i = 0; i < n; i++) {
      const s = src[i]!;
      if (levelOf[lutIndex(s + sigma)] !== levelOf[lutIndex(s - sigma)]) changed++;
    }
  }
  return { metrics, unstable: changed };
}

/** Nearest ramp level to tone v, as displayed tone in the source's orientation. */
function quantize(levelsAsc: Float64Array, v: number, invert: boolean): number {
  const ink = invert ? 1 - v : v;
  let lo = 0, hi = levelsAsc.length - 1;
  while (hi - lo > 1) {
    const mid = (lo + hi) >> 1;
    if (levelsAsc[mid]! < ink) lo = mid; else hi = mid;
  }
  const q = ink - levelsAsc[lo]! <= levelsAsc[hi]! - ink ? levelsAsc[lo]! : levelsAsc[hi]!;
  return invert ? 1 - q : q;
}

const SIM_LUT_SIZE = 1024;

function lutIndex(v: number): number {
  const x = (v + 0.5) * (SIM_LUT_SIZE / 2);
  return x <= 0 ? 0 : x >= SIM_LUT_SIZE ? SIM_LUT_SIZE : x | 0;
}

/** 1 - RMSE/0.25 (sRGB 0..1) between chroma bytes and the source cells' mean colours. */
export function roundTripMetric(colors: Uint8Array, cellLinearRgb: Float32Array): number {
  let e = 0;
  for (let i = 0; i < colors.length; i++) {
    const d = colors[i]! / 255 - encodeLinear(cellLinearRgb[i]!);
    e += d * d;
  }
  const rmse = Math.sqrt(e / Math.max(1, colors.length));
  return Math.max(0, 1 - rmse / 0.25);
}
