import { encLut, encodeLinear, SRGB8_TO_LINEAR } from '../pipeline/linear.js';
import { closeNested, frame, frameEpoch, openNested, type Frame, type KernelExports, type Ptr } from '../wasm/kernels.js';

const BINS = 16;

/** Normalised 16-bin entropy of a histogram holding n values, at `at` in h (also the test oracle's). */
export function entropy(h: Float64Array, n: number, at = 0): number {
  if (n === 0) return 0;
  let e = 0;
  for (let b = at; b < at + BINS; b++) if (h[b]! > 0) { const p = h[b]! / n; e -= p * Math.log2(p); }
  return e / Math.log2(BINS);
}

/**
 * The value below which the share q of the n values counted in the histogram at h (1024 u32 bins
 * over 0..1, in kernel memory) lie: the walk in WebAssembly (assembly/metrics.ts quantileBin;
 * test/reference/metrics.ts quantilesOf is its twin).
 */
function quantileIn(k: KernelExports, h: Ptr, n: number, q: number): number {
  const b = k.quantileBin(h, 1024, q * n);
  return b < 0 ? 1 : (b + 0.5) / 1024;
}

/** What glyphToneMetrics and simulatedMetrics need of the source cells, computed once for the Director's many candidates. */
export interface SourceCells {
  /** Perceptual luminance per cell. */
  readonly values: Float32Array;
  readonly mean: number;
  readonly min: number;
  readonly max: number;
  /** Per cell: 1 dark (<= 25th percentile), 4 light (>= 75th), 2 mid (strictly between); flags may combine. */
  readonly band: Uint8Array;
  /** Sum of squared deviations from the mean, in cell order. */
  readonly vs: number;
}

export function sourceCells(values: Float32Array): SourceCells {
  const n = values.length;
  // In WebAssembly (assembly/metrics.ts): range and histogram, then the bands from its quartiles.
  const f = frame();
  const pv = f.f32(n), po = f.f32(6), pq = f.f32(1024), pb = f.bytes(n);
  const k = f.ready();
  f.viewF32(pv, n).set(values);
  k.cellsRange(pv, n, po, pq);
  const o = f.viewF64(po, 3);
  const ss = o[0]!, min = o[1]!, max = o[2]!;
  const q25 = quantileIn(k, pq, n, 0.25), q75 = quantileIn(k, pq, n, 0.75);
  const mean = n ? ss / n : 0;
  const vs = k.cellsBands(pv, n, q25, q75, mean, pb);
  const band = f.viewU8(pb, n).slice();
  return { values, mean, min: n ? min : 0, max: n ? max : 0, band, vs };
}

/**
 * Tone metrics of a rendered grid against `source`, its cells' perceptual luminance (see
 * rubrics.ts for what each one means). Each cell's displayed tone (0..1, in the source's
 * orientation) is its glyph's (`cells`, indices into `coverage`) coverage over `scale`, at most 1,
 * inverted (1 - t) for `invert`. In WebAssembly (assembly/metrics.ts coverageTones, toneSums; the
 * oracle is test/reference/metrics.ts toneMetrics of those tones): a first render ran the tones'
 * loop interpreted, a boxed double per cell.
 */
export function glyphToneMetrics(cells: Uint16Array, coverage: Float32Array, scale: number, invert: boolean, source: SourceCells): Record<string, number> {
  const n = cells.length;
  const f = frame();
  const c = cellsIn(f, source), pg = f.bytes(2 * n), pv = f.f32(coverage.length), pr = f.f32(n), po = f.f32(2 * SUMS), pq = f.f32(1024);
  const k = f.ready();
  copyCells(f, c, source);
  f.viewU16(pg, n).set(cells);
  f.viewF32(pv, coverage.length).set(coverage);
  k.coverageTones(pg, n, pv, scale, invert, pr);
  k.toneSums(pr, c.src, c.band, n, source.mean, po, pq);
  return metricsOf(f, k, n, po, pq, source.vs);
}

/**
 * Tone metrics of cells whose colours carry their tone (two colours per cell) against `source`:
 * each cell shows its `ink` and `background` (sRGB bytes) mixed in linear light by its glyph's
 * coverage (`cells`, indices into `coverage`), and its tone is that mix's Rec. 709 luminance,
 * encoded as the source's cells are. A glyph's coverage alone says nothing of such a cell: a half
 * block in two near colours shows their mean, not half ink. One pass, no closure per cell.
 */
export function colorToneMetrics(cells: Uint16Array, coverage: Float32Array, ink: Uint8Array, background: Uint8Array, source: SourceCells): Record<string, number> {
  const n = cells.length;
  // The encoding table before the frame: made the first time, it runs a kernel frame of its own.
  encLut();
  const lin = SRGB8_TO_LINEAR;
  const f = frame();
  const c = cellsIn(f, source), pr = f.f32(n), po = f.f32(2 * SUMS), pq = f.f32(1024);
  const k = f.ready();
  copyCells(f, c, source);
  const tones = f.viewF32(pr, n);
  for (let i = 0, o = 0; i < n; i++, o += 3) {
    const m = coverage[cells[i]!]!;
    const br = lin[background[o]!]!, bg = lin[background[o + 1]!]!, bb = lin[background[o + 2]!]!;
    const r = br + m * (lin[ink[o]!]! - br), g = bg + m * (lin[ink[o + 1]!]! - bg), b = bb + m * (lin[ink[o + 2]!]! - bb);
    tones[i] = encodeLinear(0.2126 * r + 0.7152 * g + 0.0722 * b);
  }
  k.toneSums(pr, c.src, c.band, n, source.mean, po, pq);
  return metricsOf(f, k, n, po, pq, source.vs);
}

/**
 * The Director's candidate simulation: the tone of each entry from..to of the simulation's tone
 * table `lut` is quantized to the nearest ramp level (`levels` ascending, `invert`: displayed as
 * dark ink on light); each cell's tone is its entry's (`lutAt`). Returns the tone metrics, and with
 * `sigma` the cells whose tone differs between luminance + sigma and - sigma (from..to must cover
 * those entries too).
 */
export function simulatedMetrics(lut: Float32Array, from: number, to: number, levels: Float64Array, invert: boolean, lutAt: Uint16Array, source: SourceCells, sigma?: number, levelTexture?: Float64Array, textureScale = 1): { metrics: Record<string, number>; unstable: number } {
  const n = lutAt.length;
  const entries = lut.length;
  // In WebAssembly (assembly/metrics.ts): the sums glyphToneMetrics takes, over the cells' simulated
  // tones (simSums), with its counts (histograms, clipped cells) taken per table entry, since a
  // candidate renders all the cells of an entry alike. The cells, their entries and the counts per
  // entry stay in kernel memory from one candidate to the next (simSession()); each candidate's
  // own arrays in a frame nested above them.
  const s = simSession(source, lutAt, entries);
  // Not nestedFrame(): see openNested().
  const f = openNested();
  try {
    const pt = f.f32(lut.length), pv = f.f32(2 * levels.length), pl = f.f32(2 * lut.length);
    const po = f.f32(2 * SUMS), pq = f.f32(1024);
    const pi = levelTexture ? f.f32(entries) : 0;
    const k = f.ready();
    f.viewF32(pt, lut.length).set(lut);
    f.viewF64(pv, levels.length).set(levels);
    k.quantizeTable(pt, from, to, pv, levels.length, invert, pl, pi);
    k.simSums(pl, s.at, n, s.counts, s.devs, entries, from, to, po, pq);
    const unstable = sigma === undefined ? 0 : k.unstable(pl, s.src, n, sigma);
    const metrics = metricsOf(f, k, n, po, pq, source.vs);
    if (levelTexture) {
      // Mean texture of the cells' glyphs: the level each entry quantizes to (quantizeTable's
      // choice, by index), weighted by the cells at that entry.
      const cells = entryCache.get(lutAt)!.counts, level = f.viewI32(pi, entries);
      let t = 0;
      for (let e = from; e <= to; e++) if (cells[e]! > 0) t += cells[e]! * levelTexture[level[e]!]!;
      const o = f.viewF64(po, 3);
      metrics.contour = contourOf(o[1]!, o[2]!, source.vs, n, (t / n) * textureScale);
    }
    return { metrics, unstable };
  } finally {
    closeNested();
  }
}

/**
 * Where simulatedMetrics' shared inputs lie in kernel memory: the source cells, each cell's table
 * entry, the cells per entry (entryCounts, six planes of `entries` u32) and their deviations from
 * the source mean summed per entry (`entries` f64). Laid
 * out by a frame() of its own and reused while no other frame() has reset the arena since
 * (frameEpoch()): the Director's ~60 candidates of a render copied them in each time (about 40 KB
 * a candidate).
 */
interface SimSession {
  readonly epoch: number;
  readonly source: SourceCells;
  readonly lutAt: Uint16Array;
  readonly entries: number;
  readonly src: Ptr;
  readonly at: Ptr;
  readonly counts: Ptr;
  readonly devs: Ptr;
}
let session: SimSession | null = null;

function simSession(source: SourceCells, lutAt: Uint16Array, entries: number): SimSession {
  const s = session;
  if (s && s.epoch === frameEpoch() && s.source === source && s.lutAt === lutAt && s.entries === entries) return s;
  const n = lutAt.length;
  const f = frame();
  const c = cellsIn(f, source), pa = f.bytes(2 * n), pc = f.f32(6 * entries), pd = f.bytes(8 * entries);
  const k = f.ready();
  copyCells(f, c, source);
  f.viewU16(pa, n).set(lutAt);
  // The cells per entry are counted once per `lutAt` (the Director's candidates share it).
  const known = entryCache.get(lutAt);
  if (known && known.source === source && known.counts.length === 6 * entries) {
    f.viewU32(pc, 6 * entries).set(known.counts);
    f.viewF64(pd, entries).set(known.devs);
  } else {
    k.entryCounts(pa, c.src, c.band, n, entries, source.mean, pc, pd);
    entryCache.set(lutAt, { source, counts: f.viewU32(pc, 6 * entries).slice(), devs: f.viewF64(pd, entries).slice() });
  }
  return (session = { epoch: frameEpoch(), source, lutAt, entries, src: c.src, at: pa, counts: pc, devs: pd });
}

/**
 * The contour metric: the correlation of source and art predicted up close, from the cells' tones
 * (covariance sum `cov`, rendered sum of squares `vr`, source `vs`, over n cells) and the mean
 * texture of their glyphs (charsets.ts glyphTextures, in tone units): the glyphs' strokes add variance
 * to the art that the source's cells do not share. Flat regions in mid-density glyphs score low;
 * regions drawn apart, towards blank and full, high.
 */
export function contourOf(cov: number, vr: number, vs: number, n: number, texture: number): number {
  const v = vr + n * texture;
  return v > 1e-12 && vs > 1e-12 ? Math.max(0, cov / Math.sqrt(v * vs)) : 0;
}

/** simulatedMetrics' cells per table entry (entryCounts), by the candidates' shared `lutAt`. */
const entryCache = new WeakMap<Uint16Array, { readonly source: SourceCells; readonly counts: Uint32Array; readonly devs: Float64Array }>();

/** Where histogram i of toneSums' results begins. */
const histAt = (i: number): number => 7 + i * BINS;
/** f64 results of toneSums: 7 sums, then four 16-bin histograms. */
const SUMS = 7 + 4 * BINS;

function cellsIn(f: Frame, source: SourceCells): { src: number; band: number } {
  return { src: f.f32(source.values.length), band: f.bytes(source.band.length) };
}

function copyCells(f: Frame, c: { src: number; band: number }, source: SourceCells): void {
  f.viewF32(c.src, source.values.length).set(source.values);
  f.viewU8(c.band, source.band.length).set(source.band);
}

function metricsOf(f: Frame, k: KernelExports, n: number, po: number, pq: number, vs: number): Record<string, number> {
  const o = f.viewF64(po, SUMS);
  const cov = o[1]!, vr = o[2]!, clipped = o[3]!, nDark = o[4]!, nMid = o[5]!, nLight = o[6]!;
  const rLo = quantileIn(k, pq, n, 0.05), rHi = quantileIn(k, pq, n, 0.95);
  const fidelity = vr > 1e-12 && vs > 1e-12 ? Math.max(0, cov / Math.sqrt(vr * vs)) : vs <= 1e-12 ? 1 : 0;
  // A detail metric saturates at 3 bits of 4: a quarter of the image rarely spans all 16 tones.
  return {
    fidelity,
    range: Math.min(1, (rHi - rLo) / 0.8),
    // Spread of the rendered tones (0.36: a little above a uniform spread's 0.29): at glyph scale
    // regions drawn apart read as shapes, regions lifted to a flat mid-tone as texture.
    separation: Math.min(1, Math.sqrt(vr / Math.max(1, n)) / 0.36),
    levels: Math.min(1, entropy(o, n, histAt(0)) / 0.8),
    clipping: Math.max(0, 1 - (2 * clipped) / n),
    shadows: Math.min(1, entropy(o, nDark, histAt(1)) / 0.75),
    midtones: Math.min(1, entropy(o, nMid, histAt(2)) / 0.75),
    highlights: Math.min(1, entropy(o, nLight, histAt(3)) / 0.75),
  };
}

/** 1 - RMSE/0.25 (sRGB 0..1) between chroma bytes and the source cells' mean colours. */
export function roundTripMetric(colors: Uint8Array, cellLinearRgb: Float32Array): number {
  const n = colors.length;
  // In WebAssembly (assembly/measure.ts).
  const enc = encLut();
  const f = frame();
  const pc = f.bytes(n), pl = f.f32(n), pe = f.f32(enc.length);
  const k = f.ready();
  f.viewU8(pc, n).set(colors);
  f.viewF32(pl, n).set(cellLinearRgb.subarray(0, n));
  f.viewF32(pe, enc.length).set(enc);
  const e = k.roundTripError(pc, pl, n, pe);
  const rmse = Math.sqrt(e / Math.max(1, n));
  return Math.max(0, 1 - rmse / 0.25);
}
