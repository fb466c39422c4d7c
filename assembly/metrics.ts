// AssemblyScript: the Director's tone metrics (director/metrics.ts toneMetrics) and the per-cell
// part of its candidate simulation (director/director.ts simulate), which run some twenty times a
// render. The f64 sums of the TypeScript they replaced, in cell order: bit-identical results
// (test/wasm-kernels.test.ts against test/reference/metrics.ts).

const BINS: i32 = 16;
const Q_BINS: i32 = 1024;
const DARK: u8 = 1, MID: u8 = 2, LIGHT: u8 = 4;
const SIM_LUT_SIZE: i32 = 1024;

@inline function ldf(p: usize, i: i32): f64 {
  return <f64>load<f32>(p + (<usize>i << 2));
}

@inline function bump(p: usize, b: i32): void {
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
    const r = ldf(rendered, i);
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
    const r = ldf(rendered, i), s = ldf(src, i);
    const dr = r - mr, ds = s - ms;
    cov += dr * ds; vr += dr * dr;
    if ((r <= 0.001 && s > 0.3) || (r >= 0.999 && s < 0.7)) clipped++;
    let b = <i32>(r * <f64>BINS);
    b = b < 0 ? 0 : b >= BINS ? BINS - 1 : b;
    bump(all, b);
    const f = load<u8>(band + <usize>i);
    if (f & DARK) { bump(dark, b); nDark++; }
    if (f & MID) { bump(mid, b); nMid++; }
    if (f & LIGHT) { bump(light, b); nLight++; }
  }
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
 * ink on light), into levelOf (f64, same index).
 */
export function quantizeTable(lut: usize, from: i32, to: i32, levels: usize, nLevels: i32, invert: bool, levelOf: usize): void {
  for (let k = from; k <= to; k++) {
    const v = ldf(lut, k);
    const ink = invert ? 1 - v : v;
    let lo = 0, hi = nLevels - 1;
    while (hi - lo > 1) {
      const mid = (lo + hi) >> 1;
      if (load<f64>(levels + (<usize>mid << 3)) < ink) lo = mid; else hi = mid;
    }
    const l = load<f64>(levels + (<usize>lo << 3)), h = load<f64>(levels + (<usize>hi << 3));
    const q = ink - l <= h - ink ? l : h;
    store<f64>(levelOf + (<usize>k << 3), invert ? 1 - q : q);
  }
}

/** Each cell's simulated tone: levelOf (f64 per tone-table entry) at the cell's entry lutAt (u16), into rendered (f32). */
export function simTones(levelOf: usize, lutAt: usize, n: i32, rendered: usize): void {
  for (let i = 0; i < n; i++) {
    store<f32>(rendered + (<usize>i << 2), <f32>load<f64>(levelOf + (<usize>load<u16>(lutAt + (<usize>i << 1)) << 3)));
  }
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
    const s = ldf(src, i);
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
    const v = ldf(values, i);
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
    const s = ldf(values, i);
    store<u8>(band + <usize>i, (s <= q25 ? DARK : 0) | (s >= q75 ? LIGHT : 0) | (s > q25 && s < q75 ? MID : 0));
    const ds = s - mean;
    vs += ds * ds;
  }
  return vs;
}
