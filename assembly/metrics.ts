// AssemblyScript: the Director's tone metrics (director/metrics.ts toneMetrics) and the per-cell
// part of its candidate simulation (director/director.ts simulate), which run some twenty times a
// render. The f64 sums of the TypeScript they replaced, in cell order, and its counts (integers,
// taken per table entry for a candidate): bit-identical results (test/wasm-kernels.test.ts
// against test/reference/metrics.ts).

import { ld } from './mem';

const BINS: i32 = 16;
const Q_BINS: i32 = 1024;
const DARK: u8 = 1, MID: u8 = 2, LIGHT: u8 = 4;
const SIM_LUT_SIZE: i32 = 1024;

/** counts[b]++ of a histogram of f64 counts (mem.ts bump() counts in u32). */
@inline function bumpF64(p: usize, b: i32): void {
  const q = p + (<usize>b << 3);
  store<f64>(q, load<f64>(q) + 1);
}

/**
 * The sums of toneMetrics over n cells: rendered tone (f32), source luminance (f32, mean ms) and
 * source band flags (u8). out (f64): [0] sum of rendered, [1] covariance sum, [2] sum of squared
 * rendered deviations, [3] clipped cells, [4..6] cells in the dark, mid and light bands, then the
 * 16-bin rendered-tone histograms of all cells, dark, mid and light (4 x 16 f64, at out + 56);
 * qHist: the 1024-bin histogram of rendered tone (u32). All zeroed here.
 */
export function toneSums(rendered: usize, src: usize, band: usize, n: i32, ms: f64, out: usize, qHist: usize): void {
  memory.fill(out, 0, (7 + 4 * BINS) << 3);
  memory.fill(qHist, 0, Q_BINS << 2);
  let sr: f64 = 0;
  for (let i = 0; i < n; i++) {
    const r = ld(rendered, i);
    sr += r;
    let b = <i32>(r * <f64>Q_BINS);
    b = b < 0 ? 0 : b > Q_BINS - 1 ? Q_BINS - 1 : b;
    const q = qHist + (<usize>b << 2);
    store<u32>(q, load<u32>(q) + 1);
  }
  const mr = sr / <f64>n;
  let cov: f64 = 0, vr: f64 = 0, clipped: f64 = 0, nDark: f64 = 0, nMid: f64 = 0, nLight: f64 = 0;
  const all = out + 56, dark = all + (BINS << 3), mid = dark + (BINS << 3), light = mid + (BINS << 3);
  for (let i = 0; i < n; i++) {
    const r = ld(rendered, i), s = ld(src, i);
    const dr = r - mr, ds = s - ms;
    cov += dr * ds; vr += dr * dr;
    if ((r <= 0.001 && s > 0.3) || (r >= 0.999 && s < 0.7)) clipped++;
    let b = <i32>(r * <f64>BINS);
    b = b < 0 ? 0 : b >= BINS ? BINS - 1 : b;
    bumpF64(all, b);
    const f = load<u8>(band + <usize>i);
    if (f & DARK) { bumpF64(dark, b); nDark++; }
    if (f & MID) { bumpF64(mid, b); nMid++; }
    if (f & LIGHT) { bumpF64(light, b); nLight++; }
  }
  storeSums(out, sr, cov, vr, clipped, nDark, nMid, nLight);
}

/** The seven sums at the head of toneSums' and simSums' output. */
@inline function storeSums(out: usize, sr: f64, cov: f64, vr: f64, clipped: f64, nDark: f64, nMid: f64, nLight: f64): void {
  store<f64>(out, sr);
  store<f64>(out + 8, cov);
  store<f64>(out + 16, vr);
  store<f64>(out + 24, clipped);
  store<f64>(out + 32, nDark);
  store<f64>(out + 40, nMid);
  store<f64>(out + 48, nLight);
}

/**
 * quantize() of director.ts for the simulation table's entries from..to: each entry's tone (lut,
 * f32) to the nearest of nLevels ascending ramp levels (f64), as displayed tone (`invert`: dark
 * ink on light), into levelOf (f64, same index); with `levelIndex` (non-zero), also which level
 * (i32, same index), for the contour metric's glyph textures.
 */
export function quantizeTable(lut: usize, from: i32, to: i32, levels: usize, nLevels: i32, invert: bool, levelOf: usize, levelIndex: usize): void {
  // The pair of levels around each entry's ink: lo is the last level below the ink (at most
  // nLevels - 2; 0 when none is, or for NaN), hi = lo + 1 (lo = hi = 0 with one level), which a
  // binary search over the ascending levels finds. The tone curve is monotonic, so each entry's
  // lo is found by walking from the previous one's: a step or two instead of the search's
  // log2(nLevels) mispredicted branches, and the same pair for any order of inks.
  let lo = 0;
  const top = nLevels - 2;
  for (let k = from; k <= to; k++) {
    const v = ld(lut, k);
    const ink = invert ? 1 - v : v;
    while (lo < top && load<f64>(levels + (<usize>(lo + 1) << 3)) < ink) lo++;
    while (lo > 0 && !(load<f64>(levels + (<usize>lo << 3)) < ink)) lo--;
    const hi = nLevels > 1 ? lo + 1 : 0;
    const l = load<f64>(levels + (<usize>lo << 3)), h = load<f64>(levels + (<usize>hi << 3));
    const low = ink - l <= h - ink;
    const q = low ? l : h;
    store<f64>(levelOf + (<usize>k << 3), invert ? 1 - q : q);
    if (levelIndex != 0) store<i32>(levelIndex + (<usize>k << 2), low ? lo : hi);
  }
}

/**
 * What simSums needs of the cells per simulation-table entry, counted once for all the
 * candidates: six planes of `entries` u32 at out (zeroed here): the cells at each entry, those of
 * them with source luminance above 0.3 and below 0.7 (the clipping test), and those in the dark,
 * mid and light bands; and at devs (`entries` f64, zeroed here) the sum of the entry's cells'
 * source deviations from the mean ms, in cell order.
 */
export function entryCounts(lutAt: usize, src: usize, band: usize, n: i32, entries: i32, ms: f64, out: usize, devs: usize): void {
  const plane = <usize>entries << 2;
  memory.fill(out, 0, plane * 6);
  memory.fill(devs, 0, <usize>entries << 3);
  for (let i = 0; i < n; i++) {
    const k = <usize>load<u16>(lutAt + (<usize>i << 1));
    const e = out + (k << 2);
    const s = ld(src, i);
    const f = load<u8>(band + <usize>i);
    const d = devs + (k << 3);
    store<f64>(d, load<f64>(d) + (s - ms));
    store<u32>(e, load<u32>(e) + 1);
    if (s > 0.3) store<u32>(e + plane, load<u32>(e + plane) + 1);
    if (s < 0.7) store<u32>(e + plane * 2, load<u32>(e + plane * 2) + 1);
    if (f & DARK) store<u32>(e + plane * 3, load<u32>(e + plane * 3) + 1);
    if (f & MID) store<u32>(e + plane * 4, load<u32>(e + plane * 4) + 1);
    if (f & LIGHT) store<u32>(e + plane * 5, load<u32>(e + plane * 5) + 1);
  }
}

/**
 * toneSums() of the cells' simulated tones (each cell's tone is levelOf, f64 per entry, at its
 * entry lutAt, rounded to f32 as the TypeScript stored it), all per entry from..to, from
 * entryCounts' planes (`entries` u32 each) and its deviation sums (devs): the counts (histograms,
 * clipped cells, bands), integers, so the same in any order; the tones' sum, the same bits as
 * the cells' sum in cell order (below); the covariance and variance sums in entry order (an
 * entry's cells share their tone's deviation from the mean: test/reference/metrics.ts
 * simulatedMetrics takes them the same way).
 * Every cell's entry must lie in from..to.
 */
export function simSums(levelOf: usize, lutAt: usize, n: i32, counts: usize, devs: usize, entries: i32, from: i32, to: i32, out: usize, qHist: usize): void {
  memory.fill(out, 0, (7 + 4 * BINS) << 3);
  memory.fill(qHist, 0, Q_BINS << 2);
  // Per entry first (the cells of an entry share its tone): the counts (histograms, clipped
  // cells, bands), and the tones' sum as count x tone. That sum is the cells' sum in cell order
  // bit for bit when every partial sum is exact: with fewer than 4096 cells and each tone 0 or
  // an f32 in [2^-17, 1] (a multiple of 2^-40), every partial sum is an integer times 2^-40 below
  // 2^52, which f64 holds exactly. The ramp levels always are; else the cells are summed in order.
  const plane = <usize>entries << 2;
  let clipped: f64 = 0, nDark: f64 = 0, nMid: f64 = 0, nLight: f64 = 0, byEntry: f64 = 0;
  let exact = n < 4096;
  const all = out + 56, dark = all + (BINS << 3), mid = dark + (BINS << 3), light = mid + (BINS << 3);
  for (let k = from; k <= to; k++) {
    const e = counts + (<usize>k << 2);
    const c = load<u32>(e);
    if (c == 0) continue;
    const r = simTone(levelOf, k);
    exact = exact && (r == 0 || (r >= EXACT_MIN && r <= 1));
    byEntry += <f64>c * r;
    let q = <i32>(r * <f64>Q_BINS);
    q = q < 0 ? 0 : q > Q_BINS - 1 ? Q_BINS - 1 : q;
    const qp = qHist + (<usize>q << 2);
    store<u32>(qp, load<u32>(qp) + c);
    if (r <= 0.001) clipped += <f64>load<u32>(e + plane);
    else if (r >= 0.999) clipped += <f64>load<u32>(e + plane * 2);
    let b = <i32>(r * <f64>BINS);
    b = b < 0 ? 0 : b >= BINS ? BINS - 1 : b;
    const cd = <f64>load<u32>(e + plane * 3), cm = <f64>load<u32>(e + plane * 4), cl = <f64>load<u32>(e + plane * 5);
    add(all, b, <f64>c);
    add(dark, b, cd);
    add(mid, b, cm);
    add(light, b, cl);
    nDark += cd; nMid += cm; nLight += cl;
  }
  let sr: f64 = 0, i = 0;
  if (exact) sr = byEntry;
  else {
    // The cell loops four cells per step, each cell's terms added in cell order as one at a time:
    // a first render runs them as baseline (Liftoff) code, which pays a check on every back-edge.
    for (; i + 3 < n; i += 4) {
      sr += simTone(levelOf, entryAt(lutAt, i));
      sr += simTone(levelOf, entryAt(lutAt, i + 1));
      sr += simTone(levelOf, entryAt(lutAt, i + 2));
      sr += simTone(levelOf, entryAt(lutAt, i + 3));
    }
    for (; i < n; i++) sr += simTone(levelOf, entryAt(lutAt, i));
  }
  const mr = sr / <f64>n;
  // The covariance with the source and the variance, per entry too: an entry's cells share
  // d = tone - mean, so their terms are d x (their deviations' sum, devs) and count x d^2.
  let cov: f64 = 0, vr: f64 = 0;
  for (let k = from; k <= to; k++) {
    const c = load<u32>(counts + (<usize>k << 2));
    if (c == 0) continue;
    const d = simTone(levelOf, k) - mr;
    cov += d * load<f64>(devs + (<usize>k << 3));
    vr += <f64>c * (d * d);
  }
  storeSums(out, sr, cov, vr, clipped, nDark, nMid, nLight);
}

/** 2^-17: simSums' least tone (other than 0) whose sums by entry are exact. */
const EXACT_MIN: f64 = 1.0 / 131072;

/** Cell i's simulation-table entry (u16 at lutAt). */
@inline function entryAt(lutAt: usize, i: i32): i32 {
  return <i32>load<u16>(lutAt + (<usize>i << 1));
}

/** The simulated tone of entry k: the level rounded to f32 (the TypeScript's Float32Array), read back as f64. */
@inline function simTone(levelOf: usize, k: i32): f64 {
  return <f64><f32>load<f64>(levelOf + (<usize>k << 3));
}

@inline function add(p: usize, b: i32, v: f64): void {
  const q = p + (<usize>b << 3);
  store<f64>(q, load<f64>(q) + v);
}

/** lutIndex() of director.ts: the simulation table's entry of tone v. */
@inline function lutIndex(v: f64): i32 {
  const x = (v + 0.5) * <f64>(SIM_LUT_SIZE / 2);
  return x <= 0 ? 0 : x >= <f64>SIM_LUT_SIZE ? SIM_LUT_SIZE : <i32>x;
}

/** Cells (source luminance src, f32) whose simulated tone differs between s + sigma and s - sigma. */
export function unstable(levelOf: usize, src: usize, n: i32, sigma: f64): i32 {
  let changed = 0;
  for (let i = 0; i < n; i++) {
    const s = ld(src, i);
    if (load<f64>(levelOf + (<usize>lutIndex(s + sigma) << 3)) != load<f64>(levelOf + (<usize>lutIndex(s - sigma) << 3))) changed++;
  }
  return changed;
}

/**
 * The first pass of sourceCells() (director/metrics.ts) over n values (f32): out (f64) [0] their
 * sum, [1] min, [2] max; qHist (u32, zeroed here) their 1024-bin histogram.
 */
export function cellsRange(values: usize, n: i32, out: usize, qHist: usize): void {
  memory.fill(qHist, 0, Q_BINS << 2);
  let ss: f64 = 0, min: f64 = Infinity, max: f64 = -Infinity;
  for (let i = 0; i < n; i++) {
    const v = ld(values, i);
    ss += v;
    if (v < min) min = v;
    if (v > max) max = v;
    let b = <i32>(v * <f64>Q_BINS);
    b = b < 0 ? 0 : b > Q_BINS - 1 ? Q_BINS - 1 : b;
    const q = qHist + (<usize>b << 2);
    store<u32>(q, load<u32>(q) + 1);
  }
  store<f64>(out, ss);
  store<f64>(out + 8, min);
  store<f64>(out + 16, max);
}

/** The second pass of sourceCells(): each value's band flags (u8) from the quartiles; returns the sum of squared deviations from mean. */
export function cellsBands(values: usize, n: i32, q25: f64, q75: f64, mean: f64, band: usize): f64 {
  let vs: f64 = 0;
  for (let i = 0; i < n; i++) {
    const s = ld(values, i);
    store<u8>(band + <usize>i, (s <= q25 ? DARK : 0) | (s >= q75 ? LIGHT : 0) | (s > q25 && s < q75 ? MID : 0));
    const ds = s - mean;
    vs += ds * ds;
  }
  return vs;
}

/**
 * quantilesOf() of director/metrics.ts for one share: the first of `bins` bins (u32 counts at h)
 * whose running count reaches `want` (the share times the values counted), or -1 if none does.
 * A first render ran the walk interpreted, twice for each of the Director's ~60 candidates.
 */
export function quantileBin(h: usize, bins: i32, want: f64): i32 {
  let acc: f64 = 0, b = 0;
  // Four bins per step (baseline code pays a check on every loop back-edge), the same walk.
  for (; b + 3 < bins; b += 4) {
    acc += <f64>load<u32>(h + (<usize>b << 2));
    if (acc >= want) return b;
    acc += <f64>load<u32>(h + (<usize>b << 2), 4);
    if (acc >= want) return b + 1;
    acc += <f64>load<u32>(h + (<usize>b << 2), 8);
    if (acc >= want) return b + 2;
    acc += <f64>load<u32>(h + (<usize>b << 2), 12);
    if (acc >= want) return b + 3;
  }
  for (; b < bins; b++) {
    acc += <f64>load<u32>(h + (<usize>b << 2));
    if (acc >= want) return b;
  }
  return -1;
}

/**
 * The displayed tone of n cells (director.ts scoreResult): each cell's glyph (u16 at cells) by its
 * coverage (f32) over scale, at most 1, inverted (1 - t) when asked; f32 into out.
 */
export function coverageTones(cells: usize, n: i32, coverage: usize, scale: f64, invert: bool, out: usize): void {
  for (let i = 0; i < n; i++) {
    const t = Math.min(1, ld(coverage, <i32>load<u16>(cells + (<usize>i << 1))) / scale);
    store<f32>(out + (<usize>i << 2), <f32>(invert ? 1 - t : t));
  }
}

/** lutIndex() of each of n tones (f32 at src) into out (u16): the Director's table entry per cell. */
export function lutIndices(src: usize, n: i32, out: usize): void {
  for (let i = 0; i < n; i++) store<u16>(out + (<usize>i << 1), <u16>lutIndex(ld(src, i)));
}

/**
 * Every stride-th group of `width` f32 of src, m groups, packed into dst (director.ts
 * sampleCells(): the cells the candidate simulation looks at).
 */
export function gather(src: usize, stride: i32, m: i32, width: i32, dst: usize): void {
  const step = <usize>(stride * width) << 2, size = <usize>width << 2;
  for (let k = 0; k < m; k++) memory.copy(dst + <usize>k * size, src + <usize>k * step, size);
}
