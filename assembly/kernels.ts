// AssemblyScript: the renderer's hot raster kernels, compiled to WebAssembly (with SIMD) by
// scripts/build-wasm.mjs. Every pointer is a byte offset into this module's memory, laid out by
// src/core/wasm/kernels.ts. The arithmetic mirrors a scalar reference operation for operation
// (test/reference/, checked bit for bit): the TypeScript it replaced (f64 maths, rounded to f32
// exactly where the TS stored into a Float32Array), or, where f64 bought nothing visible, f32
// lanes (f32x4: four samples per operation instead of two) whose reference rounds each step with
// Math.fround: the detail stage, the luminance's encoding (test/reference/README.md).
// Lookup tables built with Math.exp/pow/tan are built in TS and passed in, since libm results
// may differ in the last bit between engines.

import { ENC_SIZE } from './srgb';
import { cellTensor, tensorAt } from './tensor';
import { bump, ld, ld2, ldf32, ldi, st, st2 } from './mem';

/** First free byte after the module's static data: the JS side lays its arrays out from here. */
export function heapBase(): usize {
  return __heap_base;
}

/** Table sizes: range weights (denoise.ts), tone curve (tone.ts), sRGB encoding (linear.ts). */
const RANGE_BINS: i32 = 1024;
const TONE_LUT_SIZE: i32 = 4096;

/**
 * Vector constants, loaded from memory before a loop: a v128.const in a loop body is rebuilt on
 * every iteration by V8 (several instructions each), and binaryen folds a constant local back into
 * its uses, but not a load.
 */
const KF = memory.data<f64>([0.5, 2, 1]);
const KI = memory.data<i32>([ENC_SIZE - 1, TONE_LUT_SIZE - 1]);
/** The last index an interpolation may start at (KI), in four lanes: the sRGB encoding table's and the tone table's. */
@inline function encLast(): v128 {
  return v128.load32_splat(KI);
}
@inline function toneLast(): v128 {
  return v128.load32_splat(KI, 4);
}
const K_HALF = 0, K_2 = 1, K_1 = 2;
@inline function kf(i: i32): v128 {
  return v128.load64_splat(KF + (<usize>i << 3));
}
/** The same for f32x4 lanes. */
const KF32 = memory.data<f32>([0.5, <f32>(TONE_LUT_SIZE / 2), <f32>TONE_LUT_SIZE, 4, 6, 0.0625, <f32>RANGE_BINS, 1, <f32>ENC_SIZE]);
const K32_HALF = 0, K32_TONE_HALF = 1, K32_TONE_N = 2, K32_4 = 3, K32_6 = 4, K32_16TH = 5, K32_BINS = 6, K32_1 = 7, K32_ENC = 8;
@inline function kf32(i: i32): v128 {
  return v128.load32_splat(KF32 + (<usize>i << 2));
}

// --- Bilateral denoise (pipeline/denoise.ts) -----------------------------------------------------
// In f32 arithmetic, four samples at a time (f32x4; test/reference/denoise.ts is the scalar twin,
// each operation rounded to f32): twice the lanes of the f64x2 form it replaced, and a quarter of
// its divisions' cost; the rendered bench corpus came out the same (bench/render-diff.mjs).

/** The range weight of |a - c| (`lut`: RANGE_BINS + 1 f32), the last entry from RANGE_BINS on (and for NaN). */
@inline function rangeWeight(lut: usize, a: f32, c: f32): f32 {
  const d = Mathf.abs(a - c) * <f32>RANGE_BINS;
  return load<f32>(lut + (<usize>(d < <f32>RANGE_BINS ? <i32>d : RANGE_BINS) << 2));
}

/** rangeWeight() of four lanes, each lane's entry loaded straight into its lane (no gather in wasm SIMD). */
@inline function rangeWeight4(lut: usize, a: v128, c: v128, bins: v128): v128 {
  // pmin(top, d) = d < top ? d : top, and top for NaN, as the scalar form.
  const k = i32x4.trunc_sat_f32x4_s(f32x4.pmin(bins, f32x4.mul(f32x4.abs(f32x4.sub(a, c)), bins)));
  let r = v128.load32_zero(lut + (<usize>i32x4.extract_lane(k, 0) << 2));
  r = v128.load32_lane(lut + (<usize>i32x4.extract_lane(k, 1) << 2), r, 1);
  r = v128.load32_lane(lut + (<usize>i32x4.extract_lane(k, 2) << 2), r, 2);
  return v128.load32_lane(lut + (<usize>i32x4.extract_lane(k, 3) << 2), r, 3);
}

/** (c + wa * a + wb * b) / (1 + wa + wb), in that order. */
@inline function bilateral(c: f32, a: f32, wa: f32, b: f32, wb: f32): f32 {
  return (c + wa * a + wb * b) / (<f32>1 + wa + wb);
}

@inline function bilateral4(c: v128, a: v128, wa: v128, b: v128, wb: v128, one: v128): v128 {
  const num = f32x4.add(f32x4.add(c, f32x4.mul(wa, a)), f32x4.mul(wb, b));
  return f32x4.div(num, f32x4.add(f32x4.add(one, wa), wb));
}

/**
 * One separable bilateral pass: 3 taps along x from s into o, then along y in place on o (s and o
 * distinct).
 * `lut`: range weights times the neighbours' spatial weight (RANGE_BINS + 1 f32); `prev`: w f32;
 * `work`: w f32.
 * A range weight depends only on |a - c|, which is symmetric (in f32 too: a - c is -(c - a)), so
 * each pair of neighbours' weight is looked up once and serves both: along x the right weight of x
 * is the left weight of x + 1, along y the weight below row y (kept in a row) is the weight above
 * row y + 1. Same values as looking each up twice, half the lookups.
 */
export function denoisePass(s: usize, o: usize, w: i32, h: i32, lut: usize, prev: usize, work: usize): void {
  const wrow = work;
  const bins = kf32(K32_BINS), one = kf32(K32_1);
  denoiseRowX(s, o, 0, w, lut, bins, one);
  memory.copy(prev, o, <usize>w << 2);
  // Row 0 is its own upper neighbour: weight of a zero difference.
  const w0 = load<f32>(lut);
  for (let x = 0; x < w; x++) store<f32>(wrow + (<usize>x << 2), w0);
  // Row by row, the pass along x one row ahead of the pass along y, which needs the row below:
  // each row is filtered both ways while it is in cache.
  for (let y = 0; y < h; y++) {
    const r = y * w;
    if (y < h - 1) denoiseRowX(s, o, r + w, w, lut, bins, one);
    denoiseRowY(o, prev, wrow, r, y < h - 1 ? r + w : r, w, lut, bins, one);
  }
}

/** Along x, row r of s into o. */
function denoiseRowX(s: usize, o: usize, r: i32, w: i32, lut: usize, bins: v128, one: v128): void {
  // x = 0 and x = w - 1 are their own outer neighbour; the interior four at a time. e's last lane
  // holds the weight between x - 1 and x.
  denoiseX(s, o, r, w, 0, lut);
  let x = 1;
  if (x + 4 < w) {
    let e = f32x4.splat(rangeWeight(lut, load<f32>(s + (<usize>(r + 1) << 2)), load<f32>(s + (<usize>r << 2))));
    for (; x + 4 < w; x += 4) {
      const p = s + (<usize>(r + x) << 2);
      const c = v128.load(p), l = v128.load(p - 4), rt = v128.load(p + 4);
      const next = rangeWeight4(lut, rt, c, bins);
      v128.store(o + (<usize>(r + x) << 2), bilateral4(c, l, v128.shuffle<u32>(e, next, 3, 4, 5, 6), rt, next, one));
      e = next;
    }
  }
  for (; x < w; x++) denoiseX(s, o, r, w, x, lut);
}

/** Along y, in place on row r of o: `prev` holds the row above before filtering, dn is the row below. */
function denoiseRowY(o: usize, prev: usize, wrow: usize, r: i32, dn: i32, w: i32, lut: usize, bins: v128, one: v128): void {
  const oc = o + (<usize>r << 2), ob = o + (<usize>dn << 2);
  let x = 0;
  for (; x + 3 < w; x += 4) {
    const q = <usize>x << 2;
    const c = v128.load(oc + q), u = v128.load(prev + q), b = v128.load(ob + q);
    const wb = rangeWeight4(lut, b, c, bins);
    v128.store(prev + q, c);
    // Loaded before the store, as its own statement: written inside the call below, the
    // optimised code (after tier-up) read the stored value.
    const wu = v128.load(wrow + q);
    v128.store(wrow + q, wb);
    v128.store(oc + q, bilateral4(c, u, wu, b, wb, one));
  }
  for (; x < w; x++) {
    const q = <usize>x << 2;
    const c = load<f32>(oc + q), u = load<f32>(prev + q), b = load<f32>(ob + q);
    const wu = load<f32>(wrow + q);
    const wb = rangeWeight(lut, b, c);
    store<f32>(prev + q, c);
    store<f32>(oc + q, bilateral(c, u, wu, b, wb));
    store<f32>(wrow + q, wb);
  }
}

/** One sample of the pass along x, with the row's ends clamped. */
function denoiseX(s: usize, o: usize, r: i32, w: i32, x: i32, lut: usize): void {
  const i = r + x;
  const c = load<f32>(s + (<usize>i << 2));
  const l = x > 0 ? load<f32>(s + (<usize>(i - 1) << 2)) : c;
  const rt = x < w - 1 ? load<f32>(s + (<usize>(i + 1) << 2)) : c;
  store<f32>(o + (<usize>i << 2), bilateral(c, l, rangeWeight(lut, l, c), rt, rangeWeight(lut, rt, c)));
}

// --- Histogram (pipeline/tone.ts) ----------------------------------------------------------------

/** Partial histograms of histogram(): src/core/wasm/kernels.ts HISTOGRAM_PARTS, the same number. */
const PARTS: i32 = 8;

/**
 * Counts of n samples at d in `bins` bins over 0..1 (clamped), into `hist` (bins u32). PARTS
 * partial histograms (at hist + bins * 4 bytes and after, zeroed here) so consecutive samples in
 * the same bin do not wait on each other's store; summed at the end (exact: integers). Eight, not
 * four: a smooth raster puts runs of samples in one bin, and with four each partial's bumps
 * waited on the one before (0.28 -> 0.17 ms for 640 x 480 samples; sixteen, 64 KB at 1024 bins,
 * no longer fit the L1 cache: 0.24 ms).
 */
export function histogram(d: usize, n: i32, bins: i32, hist: usize): void {
  const stride = <usize>bins << 2;
  const part = hist + stride;
  memory.fill(part, 0, stride * PARTS);
  const top = bins - 1;
  const fb = <f64>bins;
  let i = 0;
  if ((bins & top) == 0) {
    // bins a power of two: d * bins is exact in f32 as in f64 (overflow gives inf, which
    // truncates to the same saturated value), so four indices at a time in i32x4, two at once.
    const b4 = f32x4.splat(<f32>bins), lo = i32x4.splat(0), hi = i32x4.splat(top);
    for (; i + 7 < n; i += 8) {
      const p = d + (<usize>i << 2);
      const k = i32x4.min_s(i32x4.max_s(i32x4.trunc_sat_f32x4_s(f32x4.mul(v128.load(p), b4)), lo), hi);
      const m = i32x4.min_s(i32x4.max_s(i32x4.trunc_sat_f32x4_s(f32x4.mul(v128.load(p, 16), b4)), lo), hi);
      bump(part, i32x4.extract_lane(k, 0));
      bump(part + stride, i32x4.extract_lane(k, 1));
      bump(part + stride * 2, i32x4.extract_lane(k, 2));
      bump(part + stride * 3, i32x4.extract_lane(k, 3));
      bump(part + stride * 4, i32x4.extract_lane(m, 0));
      bump(part + stride * 5, i32x4.extract_lane(m, 1));
      bump(part + stride * 6, i32x4.extract_lane(m, 2));
      bump(part + stride * 7, i32x4.extract_lane(m, 3));
    }
  }
  for (; i + 3 < n; i += 4) {
    count(part, ld(d, i) * fb, top);
    count(part + stride, ld(d, i + 1) * fb, top);
    count(part + stride * 2, ld(d, i + 2) * fb, top);
    count(part + stride * 3, ld(d, i + 3) * fb, top);
  }
  for (; i < n; i++) count(part, ld(d, i) * fb, top);
  for (let b = 0; b < bins; b++) {
    const o = <usize>b << 2;
    let c = load<u32>(part + o);
    for (let q = 1; q < PARTS; q++) c += load<u32>(part + stride * <usize>q + o);
    store<u32>(hist + o, c);
  }
}

/** hist[clamp(v | 0, 0, top)]++, with JS's `| 0` (truncation; NaN to 0). */
@inline function count(hist: usize, v: f64, top: i32): void {
  let b = <i32>v;
  if (b < 0) b = 0;
  else if (b > top) b = top;
  const p = hist + (<usize>b << 2);
  store<u32>(p, load<u32>(p) + 1);
}

// --- Unsharp mask + tone curve (pipeline/sharpen.ts, tone.ts) -------------------------------------

/**
 * The tone table at v, linearly interpolated, in f32 arithmetic (each operation rounded to f32,
 * as four f32x4 lanes compute it): x = (v + 0.5) * N/2; the first entry at x <= 0, the last at
 * x >= N, else a + (b - a) * (x - k) with k = trunc(x) and a, b the entries k and k + 1. f32
 * rather than f64: half the lanes' work per sample; the rendered bench corpus came out the same
 * (bench/render-diff.mjs: 770 renders, 0 differ).
 */
@inline function lutValue32(lut: usize, v: f32): f32 {
  const x: f32 = (v + <f32>0.5) * <f32>(TONE_LUT_SIZE / 2);
  if (x <= 0) return load<f32>(lut);
  if (x >= <f32>TONE_LUT_SIZE) return load<f32>(lut + (<usize>TONE_LUT_SIZE << 2));
  // A NaN sample fails both tests and interpolates from entry 0 (the conversion saturates, NaN to
  // 0: nontrapping-f2i), as the lanes do.
  const k = <i32>x;
  return interp1(lut, k, x - <f32>k);
}

/** t[k] + (t[k + 1] - t[k]) * f in f32: an f32 table's linear interpolation (interp4() in four lanes). */
@inline function interp1(t: usize, k: i32, f: f32): f32 {
  const a = load<f32>(t + (<usize>k << 2)), b = load<f32>(t + (<usize>k << 2), 4);
  return a + (b - a) * f;
}

/**
 * a + (b - a) * (x - k) per lane in f32, a and b the table's entries k and k + 1 (i32 lanes of k):
 * adjacent, so one 8-byte load per lane fetches both. lutValue32x4's and encode32x4's interpolation.
 */
@inline function interp4(t: usize, k: v128, x: v128): v128 {
  const p01 = v128.load64_lane(t + (<usize>i32x4.extract_lane(k, 1) << 2), v128.load64_zero(t + (<usize>i32x4.extract_lane(k, 0) << 2)), 1);
  const p23 = v128.load64_lane(t + (<usize>i32x4.extract_lane(k, 3) << 2), v128.load64_zero(t + (<usize>i32x4.extract_lane(k, 2) << 2)), 1);
  const a = v128.shuffle<u32>(p01, p23, 0, 2, 4, 6), b = v128.shuffle<u32>(p01, p23, 1, 3, 5, 7);
  return f32x4.add(a, f32x4.mul(f32x4.sub(b, a), f32x4.sub(x, f32x4.convert_i32x4_s(k))));
}

/** lutValue32() of four samples (f32x4). */
@inline function lutValue32x4(lut: usize, v: v128, half: v128, scale: v128, top: v128, zero: v128, last: v128, first: v128, end: v128): v128 {
  const x = f32x4.mul(f32x4.add(v, half), scale);
  const lo = f32x4.le(x, zero), hi = f32x4.ge(x, top);
  // Out-of-range lanes are replaced below; their index is only clamped to stay inside the table.
  const k = i32x4.min_s(i32x4.max_s(i32x4.trunc_sat_f32x4_s(x), zero), last);
  const r = interp4(lut, k, x);
  return v128.bitselect(end, v128.bitselect(first, r, lo), hi);
}

/**
 * invert (render.ts): each of the n f32 values at p becomes 1 - v, taken in f64 and rounded to
 * f32 as the TypeScript loop stored it; two at a time. A first render ran that loop interpreted,
 * a boxed double per sample (about 19 ms of a 640 x 480 render at 160 columns).
 */
export function oneMinus(p: usize, n: i32): void {
  const one = f64x2.splat(1);
  let i = 0;
  for (; i + 1 < n; i += 2) {
    const q = p + (<usize>i << 2);
    v128.store64_lane(q, f32x4.demote_f64x2_zero(f64x2.sub(one, f64x2.promote_low_f32x4(v128.load64_zero(q)))), 0);
  }
  for (; i < n; i++) {
    const q = p + (<usize>i << 2);
    store<f32>(q, <f32>(1 - <f64>load<f32>(q)));
  }
}

/** n values from src through the tone table into out (may be src): lutValue32() of each, four at a time. */
export function applyLut(src: usize, n: i32, lut: usize, out: usize): void {
  const first = v128.load32_splat(lut), end = v128.load32_splat(lut + (<usize>TONE_LUT_SIZE << 2));
  const half = kf32(K32_HALF), scale = kf32(K32_TONE_HALF), top = kf32(K32_TONE_N), last = toneLast(), zero = i32x4.splat(0);
  let i = 0;
  for (; i + 3 < n; i += 4) v128.store(out + (<usize>i << 2), lutValue32x4(lut, v128.load(src + (<usize>i << 2)), half, scale, top, zero, last, first, end));
  for (; i < n; i++) store<f32>(out + (<usize>i << 2), lutValue32(lut, load<f32>(src + (<usize>i << 2))));
}

/** (a + 4b + 6c + 4d + e) / 16, each operation rounded to f32, in that order. */
@inline function tap5(a: f32, b: f32, c: f32, d: f32, e: f32): f32 {
  return ((((a + <f32>4 * b) + <f32>6 * c) + <f32>4 * d) + e) * <f32>0.0625;
}

/** tap5() of four samples at a time (f32x4): the same operations lane by lane. */
@inline function tap5x4(a: v128, b: v128, c: v128, d: v128, e: v128, f4: v128, f6: v128, f16: v128): v128 {
  let v = f32x4.add(a, f32x4.mul(f4, b));
  v = f32x4.add(v, f32x4.mul(f6, c));
  v = f32x4.add(v, f32x4.mul(f4, d));
  return f32x4.mul(f32x4.add(v, e), f16);
}

/** tap5() along row r at x, the row's ends repeated outwards. */
function clampedTap(s: usize, r: i32, w: i32, x: i32): f32 {
  const x1 = x > 0 ? x - 1 : 0, x2 = x > 1 ? x - 2 : 0;
  const x3 = x < w - 1 ? x + 1 : w - 1, x4 = x < w - 2 ? x + 2 : w - 1;
  return tap5(ldf32(s, r + x2), ldf32(s, r + x1), ldf32(s, r + x), ldf32(s, r + x3), ldf32(s, r + x4));
}

/**
 * Unsharp mask of the w x h raster at src into out (may be src; tmp must not be): the separable
 * [1 4 6 4 1]/16 blur into tmp, then v + amount * (v - blur) into out (row r of src is read only
 * for row r of out), then that row through the tone table `tone` when non-zero. In f32 arithmetic,
 * four samples at a time (f32x4; test/reference/sharpen.ts is its scalar twin): twice the lanes of
 * the f64x2 form it replaced, whose results it matched on every render of the bench corpus.
 */
export function unsharp(src: usize, w: i32, h: i32, amount: f64, out: usize, tmp: usize, tone: usize): void {
  const f4 = kf32(K32_4), f6 = kf32(K32_6), f16 = kf32(K32_16TH);
  for (let y = 0; y < h; y++) {
    const r = y * w;
    if (w < 5) {
      for (let x = 0; x < w; x++) store<f32>(tmp + (<usize>(r + x) << 2), clampedTap(src, r, w, x));
      continue;
    }
    store<f32>(tmp + (<usize>r << 2), clampedTap(src, r, w, 0));
    store<f32>(tmp + (<usize>(r + 1) << 2), clampedTap(src, r, w, 1));
    let i = r + 2;
    const end = r + w - 2;
    for (; i + 3 < end; i += 4) {
      const p = src + (<usize>i << 2);
      v128.store(tmp + (<usize>i << 2), tap5x4(v128.load(p - 8), v128.load(p - 4), v128.load(p), v128.load(p + 4), v128.load(p + 8), f4, f6, f16));
    }
    for (; i < end; i++) store<f32>(tmp + (<usize>i << 2), tap5(ldf32(src, i - 2), ldf32(src, i - 1), ldf32(src, i), ldf32(src, i + 1), ldf32(src, i + 2)));
    store<f32>(tmp + (<usize>(r + w - 2) << 2), clampedTap(src, r, w, w - 2));
    store<f32>(tmp + (<usize>(r + w - 1) << 2), clampedTap(src, r, w, w - 1));
  }
  const am = <f32>amount, am4 = f32x4.splat(am);
  for (let y = 0; y < h; y++) {
    const t1 = tmp + (<usize>((y > 0 ? y - 1 : 0) * w) << 2), t2 = tmp + (<usize>((y > 1 ? y - 2 : 0) * w) << 2);
    const t3 = tmp + (<usize>((y < h - 1 ? y + 1 : h - 1) * w) << 2), t4 = tmp + (<usize>((y < h - 2 ? y + 2 : h - 1) * w) << 2);
    const r = y * w;
    const t0 = tmp + (<usize>r << 2), s0 = src + (<usize>r << 2), o0 = out + (<usize>r << 2);
    let x = 0;
    for (; x + 3 < w; x += 4) {
      const o = <usize>x << 2;
      const b = tap5x4(v128.load(t2 + o), v128.load(t1 + o), v128.load(t0 + o), v128.load(t3 + o), v128.load(t4 + o), f4, f6, f16);
      const v = v128.load(s0 + o);
      v128.store(o0 + o, f32x4.add(v, f32x4.mul(am4, f32x4.sub(v, b))));
    }
    for (; x < w; x++) {
      const b = tap5(ldf32(t2, x), ldf32(t1, x), ldf32(t0, x), ldf32(t3, x), ldf32(t4, x));
      const v = ldf32(s0, x);
      store<f32>(o0 + (<usize>x << 2), v + am * (v - b));
    }
    // The row through the tone table in place, while it is in cache.
    if (tone) applyLut(o0, w, tone, o0);
  }
}

// --- Resample in linear light (pipeline/resample.ts) ----------------------------------------------

/**
 * pipeline/resample.ts boxTaps(): the box filter from an axis of `src` samples onto `dst`, each
 * output's source samples (start, count: i32 each) and their area weights (offset: i32 into
 * weight, f32), normalised to sum 1; returns the number of weights. The f64 operations of the
 * TypeScript it replaced, in its order (a first render built three sets interpreted).
 */
export function boxTaps(src: i32, dst: i32, start: usize, count: usize, offset: usize, weight: usize): i32 {
  const scale = <f64>src / <f64>dst;
  let n = 0;
  for (let i = 0; i < dst; i++) {
    const a = <f64>i * scale;
    const b = Math.min(<f64>src, <f64>(i + 1) * scale);
    const i0 = <i32>Math.min(<f64>(src - 1), Math.floor(a));
    const i1 = max(i0, <i32>Math.min(<f64>(src - 1), Math.ceil(b) - 1));
    const o = <usize>i << 2;
    store<i32>(start + o, i0);
    store<i32>(count + o, i1 - i0 + 1);
    store<i32>(offset + o, n);
    let sum: f64 = 0;
    for (let k = i0; k <= i1; k++) sum += Math.max(0, Math.min(b, <f64>(k + 1)) - Math.max(a, <f64>k));
    for (let k = i0; k <= i1; k++, n++) {
      const w = Math.max(0, Math.min(b, <f64>(k + 1)) - Math.max(a, <f64>k));
      store<f32>(weight + (<usize>n << 2), <f32>(sum > 0 ? w / sum : 1 / <f64>(i1 - i0 + 1)));
    }
  }
  return n;
}

const REC709_R: f64 = 0.2126;
const REC709_G: f64 = 0.7152;
const REC709_B: f64 = 0.0722;

/**
 * encodeLinear() of srgb.ts in f32 arithmetic (each operation rounded to f32): i = v * ENC_SIZE,
 * 0 unless i > 0 (NaN too), 1 from ENC_SIZE on, else a + (b - a) * (i - k) with k = trunc(i) and
 * a, b the table's entries k and k + 1. The resampled luminance only (a sample is an f32 anyway);
 * colours keep the f64 form.
 */
@inline function encode32(enc: usize, v: f32): f32 {
  const i = v * <f32>ENC_SIZE;
  if (!(i > 0)) return 0;
  if (i >= <f32>ENC_SIZE) return 1;
  const k = <i32>i;
  return interp1(enc, k, i - <f32>k);
}

/** encode32() of four lanes (f32x4). */
@inline function encode32x4(enc: usize, v: v128, size: v128, zero: v128, last: v128, one: v128): v128 {
  const i = f32x4.mul(v, size);
  const pos = f32x4.gt(i, zero), top = f32x4.ge(i, size);
  const k = i32x4.min_s(i32x4.max_s(i32x4.trunc_sat_f32x4_s(i), zero), last);
  const r = v128.and(interp4(enc, k, i), pos);
  return v128.bitselect(one, r, top);
}

/**
 * One RGBA row (sw pixels at px) to linear light: luminance into linY, RGB into lin (3 f32 each).
 * `wt`: the Rec. 709 weights times the table, 3 x 256 f64 (weightTables()), so an opaque pixel's
 * luminance is three loads and two adds (the same products, summed in the same order); opaque
 * pairs two at a time (f64x2), any pair with alpha through the scalar form.
 */
function linearizeRow(px: usize, sw: i32, ground: f64, lut: usize, wt: usize, linY: usize, lin: usize, withLuma: bool, rgb: bool): void {
  let x = 0;
  for (; x + 1 < sw; x += 2) {
    const p = px + (<usize>x << 2);
    const v0 = load<u32>(p), v1 = load<u32>(p, 4);
    if ((v0 & v1) >>> 24 != 255) {
      linearizePixel(px, x, ground, lut, linY, lin);
      linearizePixel(px, x + 1, ground, lut, linY, lin);
      continue;
    }
    const r0 = <usize>(v0 & 255) << 3, g0 = <usize>((v0 >>> 8) & 255) << 3, b0 = <usize>((v0 >>> 16) & 255) << 3;
    const r1 = <usize>(v1 & 255) << 3, g1 = <usize>((v1 >>> 8) & 255) << 3, b1 = <usize>((v1 >>> 16) & 255) << 3;
    if (withLuma) st2(linY, x, lumaPair(wt, r0, g0, b0, r1, g1, b1));
    if (!rgb) continue;
    // The linear values themselves are table entries: copied as f32.
    const q = lin + (<usize>(x * 3) << 2);
    store<f32>(q, load<f32>(lut + (r0 >> 1)));
    store<f32>(q, load<f32>(lut + (g0 >> 1)), 4);
    store<f32>(q, load<f32>(lut + (b0 >> 1)), 8);
    store<f32>(q, load<f32>(lut + (r1 >> 1)), 12);
    store<f32>(q, load<f32>(lut + (g1 >> 1)), 16);
    store<f32>(q, load<f32>(lut + (b1 >> 1)), 20);
  }
  for (; x < sw; x++) linearizePixel(px, x, ground, lut, linY, lin);
}

/**
 * linearizeRow() then tapRgb() of a row whose cells are 4 source pixels each (an identity
 * resample with 4 samples per cell: cell c's taps start at 4c with 4 weights), without the
 * row's RGB in between: a cell's four pixels go from the tables straight into its sums, the
 * same values added in the same order (tapRgb's m == 4 form); the luminance as linearizeRow()
 * writes it. A cell with any pixel not opaque goes through linearizePixel() and lin.
 */
function linearizeCells4(px: usize, cols: i32, ground: f64, lut: usize, wt: usize, linY: usize, lin: usize, withLuma: bool,
  weight: usize, offset: usize, out: usize): void {
  for (let c = 0, oq = 0; c < cols; c++, oq += 3) {
    const x = c << 2, p = px + (<usize>x << 2);
    const v0 = load<u32>(p), v1 = load<u32>(p, 4), v2 = load<u32>(p, 8), v3 = load<u32>(p, 12);
    const o = ldi(offset, c);
    const w0 = ld(weight, o), w1 = ld(weight, o + 1), w2 = ld(weight, o + 2), w3 = ld(weight, o + 3);
    if ((v0 & v1 & v2 & v3) >>> 24 != 255) {
      for (let k = 0; k < 4; k++) linearizePixel(px, x + k, ground, lut, linY, lin);
      sum4(lin, x * 3, w0, w1, w2, w3, out, oq);
      continue;
    }
    const r0 = <usize>(v0 & 255) << 3, g0 = <usize>((v0 >>> 8) & 255) << 3, b0 = <usize>((v0 >>> 16) & 255) << 3;
    const r1 = <usize>(v1 & 255) << 3, g1 = <usize>((v1 >>> 8) & 255) << 3, b1 = <usize>((v1 >>> 16) & 255) << 3;
    const r2 = <usize>(v2 & 255) << 3, g2 = <usize>((v2 >>> 8) & 255) << 3, b2 = <usize>((v2 >>> 16) & 255) << 3;
    const r3 = <usize>(v3 & 255) << 3, g3 = <usize>((v3 >>> 8) & 255) << 3, b3 = <usize>((v3 >>> 16) & 255) << 3;
    if (withLuma) {
      st2(linY, x, lumaPair(wt, r0, g0, b0, r1, g1, b1));
      st2(linY, x + 2, lumaPair(wt, r2, g2, b2, r3, g3, b3));
    }
    // The linear values are the f32 table's entries (byte offsets here are 8 x the byte: >> 1).
    let rg = f64x2.splat(0), b: f64 = 0;
    rg = f64x2.add(rg, f64x2.mul(f64x2.splat(w0), rgOf(lut, r0, g0)));
    b += w0 * <f64>load<f32>(lut + (b0 >> 1));
    rg = f64x2.add(rg, f64x2.mul(f64x2.splat(w1), rgOf(lut, r1, g1)));
    b += w1 * <f64>load<f32>(lut + (b1 >> 1));
    rg = f64x2.add(rg, f64x2.mul(f64x2.splat(w2), rgOf(lut, r2, g2)));
    b += w2 * <f64>load<f32>(lut + (b2 >> 1));
    rg = f64x2.add(rg, f64x2.mul(f64x2.splat(w3), rgOf(lut, r3, g3)));
    b += w3 * <f64>load<f32>(lut + (b3 >> 1));
    st2(out, oq, rg);
    st(out, oq + 2, b);
  }
}

/** Two opaque pixels' luminance (linearizeRow()'s pair): the weighted tables' entries (byte offsets 8 x the bytes) summed r + g + b. */
@inline function lumaPair(wt: usize, r0: usize, g0: usize, b0: usize, r1: usize, g1: usize, b1: usize): v128 {
  const yr = v128.load64_lane(wt + r1, v128.load64_zero(wt + r0), 1);
  const yg = v128.load64_lane(wt + 2048 + g1, v128.load64_zero(wt + 2048 + g0), 1);
  const yb = v128.load64_lane(wt + 4096 + b1, v128.load64_zero(wt + 4096 + b0), 1);
  return f64x2.add(f64x2.add(yr, yg), yb);
}

/**
 * A cell's colour from 4 pixels of lin (3 f32 each, from q) with weights w0..w3, into out at oq:
 * r and g in the lanes of one f64x2, b scalar, each channel's sum from 0 in pixel order (tapRgb()'s
 * loop, written out).
 */
@inline function sum4(lin: usize, q: i32, w0: f64, w1: f64, w2: f64, w3: f64, out: usize, oq: i32): void {
  let rg = f64x2.splat(0), b: f64 = 0;
  rg = f64x2.add(rg, f64x2.mul(f64x2.splat(w0), ld2(lin, q)));
  b += w0 * ld(lin, q + 2);
  rg = f64x2.add(rg, f64x2.mul(f64x2.splat(w1), ld2(lin, q + 3)));
  b += w1 * ld(lin, q + 5);
  rg = f64x2.add(rg, f64x2.mul(f64x2.splat(w2), ld2(lin, q + 6)));
  b += w2 * ld(lin, q + 8);
  rg = f64x2.add(rg, f64x2.mul(f64x2.splat(w3), ld2(lin, q + 9)));
  b += w3 * ld(lin, q + 11);
  st2(out, oq, rg);
  st(out, oq + 2, b);
}

/** The table's linear r and g (byte offsets 8 x the bytes) as an f64x2: ld2() of lin's pair. */
@inline function rgOf(lut: usize, r8: usize, g8: usize): v128 {
  return f64x2.promote_low_f32x4(v128.load32_lane(lut + (g8 >> 1), v128.load32_zero(lut + (r8 >> 1)), 1));
}

/** One pixel of linearizeRow(), alpha composited over the ground. */
function linearizePixel(px: usize, x: i32, ground: f64, lut: usize, linY: usize, lin: usize): void {
  const q = x * 3;
  const v = load<u32>(px + (<usize>x << 2));
  let r = ld(lut, v & 255), g = ld(lut, (v >>> 8) & 255), b = ld(lut, (v >>> 16) & 255);
  const alpha = v >>> 24;
  if (alpha != 255) {
    const a = <f64>alpha / 255;
    const gr = ground * (1 - a);
    r = r * a + gr; g = g * a + gr; b = b * a + gr;
  }
  st(linY, x, REC709_R * r + REC709_G * g + REC709_B * b);
  st(lin, q, r);
  st(lin, q + 1, g);
  st(lin, q + 2, b);
}

/** The tables of linearizeRow(): REC709_R, _G, _B times each entry of the 256 f32 at lut. */
function weightTables(lut: usize, wt: usize): void {
  for (let i = 0; i < 256; i++) {
    const v = ld(lut, i), o = wt + (<usize>i << 3);
    store<f64>(o, REC709_R * v);
    store<f64>(o, REC709_G * v, 2048);
    store<f64>(o, REC709_B * v, 4096);
  }
}

/**
 * Box taps (start, count, offset: i32 arrays; weight: f32) over one row of luminance. One and two
 * taps (every output of an enlargement, most of a small reduction) are written out: the same sums
 * in the same order as the loop, without its bookkeeping.
 */
function tapLuma(src: usize, start: usize, count: usize, offset: usize, weight: usize, n: i32, out: usize): void {
  for (let x = 0; x < n; x++) {
    const s = ldi(start, x), m = ldi(count, x), o = ldi(offset, x);
    let v: f64 = 0;
    if (m == 1) v += ld(weight, o) * ld(src, s);
    else if (m == 2) {
      v += ld(weight, o) * ld(src, s);
      v += ld(weight, o + 1) * ld(src, s + 1);
    } else for (let k = 0; k < m; k++) v += ld(weight, o + k) * ld(src, s + k);
    st(out, x, v);
  }
}

function tapRgb(lin: usize, start: usize, count: usize, offset: usize, weight: usize, n: i32, out: usize): void {
  for (let c = 0, oq = 0; c < n; c++, oq += 3) {
    const m = ldi(count, c), o = ldi(offset, c);
    // r and g in the lanes of one f64x2, b scalar: each channel's sum in the scalar order.
    let rg = f64x2.splat(0), b: f64 = 0;
    if (m == 4) {
      // Four source pixels per cell (e.g. a colour raster at a quarter of the source), written out.
      sum4(lin, ldi(start, c) * 3, ld(weight, o), ld(weight, o + 1), ld(weight, o + 2), ld(weight, o + 3), out, oq);
      continue;
    }
    for (let k = 0, q = ldi(start, c) * 3; k < m; k++, q += 3) {
      const w = ld(weight, o + k);
      rg = f64x2.add(rg, f64x2.mul(f64x2.splat(w), ld2(lin, q)));
      b += w * ld(lin, q + 2);
    }
    st2(out, oq, rg);
    st(out, oq + 2, b);
  }
}

/** Whether cell taps (start, count) are 4 pixels each from 4c: linearizeCells4()'s layout. */
function cellTaps4(start: usize, count: usize, cols: i32): bool {
  for (let c = 0; c < cols; c++) if (ldi(count, c) != 4 || ldi(start, c) != c << 2) return false;
  return true;
}

/** The two cached horizontal passes (source rows) of resample(), kept between its band calls. */
let hRow0: i32 = -1, hRow1: i32 = -1, hNext: i32 = 0;

/**
 * resampleImage() of resample.ts, for output rows y0..y1 (exclusive): called band by band, so only
 * the source rows a band needs are in memory. `px` holds source rows from `pxRow0` on. `taps`: 12
 * pointers (start, count, offset, weight) for x at sample width, x at cell width, y; `work`:
 * scratch of (sw * 4 + W * 3 + 1 + cols * 6 + 1536) f32, kept between bands. Writes luma (W x H f32,
 * perceptual) when `withLuma`, and cellRgb (cols x rows x 3 f32, linear; zeroed when y0 = 0) when
 * `rgb`. Either alone skips the other's per-pixel work with the same results: a video frame whose
 * colours nothing reads yet, then those colours alone when something does.
 */
export function resample(px: usize, pxRow0: i32, sw: i32, cols: i32, rows: i32, subX: i32, subY: i32, ground: f64,
  taps: usize, lut: usize, enc: usize, work: usize, luma: usize, cellRgb: usize, withLuma: bool, rgb: bool, y0: i32, y1: i32): void {
  const W = cols * subX, C3 = cols * 3;
  const xs = load<usize>(taps), xn = load<usize>(taps, 4), xo = load<usize>(taps, 8), xw = load<usize>(taps, 12);
  const cs = load<usize>(taps, 16), cn = load<usize>(taps, 20), co = load<usize>(taps, 24), cw = load<usize>(taps, 28);
  const ys = load<usize>(taps, 32), yn = load<usize>(taps, 36), yo = load<usize>(taps, 40), yw = load<usize>(taps, 44);
  const lin = work;
  const linY = lin + (<usize>(sw * 3) << 2);
  const hy0 = linY + (<usize>sw << 2), hy1 = hy0 + (<usize>W << 2);
  const hc0 = hy1 + (<usize>W << 2), hc1 = hc0 + (<usize>C3 << 2);
  const accY = hc1 + (<usize>C3 << 2);
  const wt = accY + (<usize>(W + 1 & ~1) << 2);
  const identity = sw == W;
  // Identity with 4 samples per cell: every cell's colour taps are its own 4 pixels.
  const cells4 = identity && subX == 4 && cellTaps4(cs, cn, cols);
  if (y0 == 0) {
    hRow0 = -1; hRow1 = -1; hNext = 0;
    weightTables(lut, wt);
    if (rgb) memory.fill(cellRgb, 0, <usize>(C3 * rows) << 2);
  }
  const rowNorm = 1 / <f64>subY;
  const size = kf32(K32_ENC), last = encLast(), one = kf32(K32_1), zero = i32x4.splat(0);
  for (let y = y0; y < y1; y++) {
    const s = ldi(ys, y), n = ldi(yn, y), o = ldi(yo, y);
    const cbase = (y / subY) * C3;
    const base = y * W;
    for (let k = 0; k < n; k++) {
      const w = ld(yw, o + k);
      const sy = s + k;
      // The horizontal pass of source row sy, cached in one of two slots.
      let slot: i32;
      if (hRow0 == sy) slot = 0;
      else if (hRow1 == sy) slot = 1;
      else {
        slot = hNext;
        hNext ^= 1;
        if (slot == 0) hRow0 = sy; else hRow1 = sy;
        const oy = slot == 0 ? hy0 : hy1, oc = slot == 0 ? hc0 : hc1;
        // One source pixel per sample: the luminance goes straight into the slot.
        const row = px + (<usize>((sy - pxRow0) * sw) << 2);
        if (cells4 && rgb) linearizeCells4(row, cols, ground, lut, wt, oy, lin, withLuma, cw, co, oc);
        else {
          linearizeRow(row, sw, ground, lut, wt, identity ? oy : linY, lin, withLuma, rgb);
          if (withLuma && !identity) tapLuma(linY, xs, xn, xo, xw, W, oy);
          if (rgb) tapRgb(lin, cs, cn, co, cw, cols, oc);
        }
      }
      const ry = slot == 0 ? hy0 : hy1, rc = slot == 0 ? hc0 : hc1;
      // Element-wise over the row: the sums two values at a time (f64x2), the encoding four (f32x4),
      // the rest scalar.
      const w2 = f64x2.splat(w), w4 = f32x4.splat(<f32>w);
      let i = 0;
      if (!withLuma) {
        // Colours alone.
      } else if (n == 1) {
        // w * ry in f32 is the f64 product rounded to f32 (both factors are f32): as before.
        for (; i + 3 < W; i += 4) v128.store(luma + (<usize>(base + i) << 2), encode32x4(enc, f32x4.mul(w4, v128.load(ry + (<usize>i << 2))), size, zero, last, one));
        for (; i < W; i++) store<f32>(luma + (<usize>(base + i) << 2), encode32(enc, <f32>(w * ld(ry, i))));
      } else if (k == 0) {
        for (; i + 1 < W; i += 2) st2(accY, i, f64x2.mul(w2, ld2(ry, i)));
        for (; i < W; i++) st(accY, i, w * ld(ry, i));
      } else {
        for (; i + 1 < W; i += 2) st2(accY, i, f64x2.add(ld2(accY, i), f64x2.mul(w2, ld2(ry, i))));
        for (; i < W; i++) st(accY, i, ld(accY, i) + w * ld(ry, i));
      }
      if (!rgb) continue;
      const wc = w * rowNorm, wc2 = f64x2.splat(wc);
      i = 0;
      for (; i + 1 < C3; i += 2) st2(cellRgb, cbase + i, f64x2.add(ld2(cellRgb, cbase + i), f64x2.mul(wc2, ld2(rc, i))));
      for (; i < C3; i++) st(cellRgb, cbase + i, ld(cellRgb, cbase + i) + wc * ld(rc, i));
    }
    if (withLuma && n > 1) {
      let x = 0;
      for (; x + 3 < W; x += 4) v128.store(luma + (<usize>(base + x) << 2), encode32x4(enc, v128.load(accY + (<usize>x << 2)), size, zero, last, one));
      for (; x < W; x++) store<f32>(luma + (<usize>(base + x) << 2), encode32(enc, load<f32>(accY + (<usize>x << 2))));
    }
  }
}

// --- Cell means (pipeline/raster.ts) -------------------------------------------------------------

/** Mean of each cellW x cellH block of the w-wide raster at d (cols x rows cells) into out. */
export function cellMeans(d: usize, w: i32, cols: i32, rows: i32, cellW: i32, cellH: i32, out: usize): void {
  const inv = 1 / <f64>(cellW * cellH);
  for (let cy = 0, c = 0; cy < rows; cy++) {
    const top = cy * cellH * w;
    let cx = 0;
    // Two cells at a time, one per f64x2 lane: each sum in the scalar order, two chains side by side.
    const off = <usize>cellW << 2, inv2 = f64x2.splat(inv);
    for (; cx + 1 < cols; cx += 2, c += 2) {
      let s = f64x2.splat(0);
      if (cellW == 4) {
        // The grid's 4 samples per row written out: the same adds in the same order, without an
        // inner loop, whose back-edge checks made the first (baseline-compiled) call 5x slower.
        for (let y = 0, p = top + cx * 4; y < cellH; y++, p += w) {
          s = f64x2.add(s, pair(d, p, off));
          s = f64x2.add(s, pair(d, p + 1, off));
          s = f64x2.add(s, pair(d, p + 2, off));
          s = f64x2.add(s, pair(d, p + 3, off));
        }
      } else {
        for (let y = 0, p = top + cx * cellW; y < cellH; y++, p += w) {
          for (let k = 0; k < cellW; k++) s = f64x2.add(s, pair(d, p + k, off));
        }
      }
      st2(out, c, f64x2.mul(s, inv2));
    }
    for (; cx < cols; cx++, c++) {
      let s: f64 = 0;
      for (let y = 0, p = top + cx * cellW; y < cellH; y++, p += w) {
        for (let k = 0; k < cellW; k++) s += ld(d, p + k);
      }
      st(out, c, s * inv);
    }
  }
}

// --- Structure tensor (pipeline/structure.ts) ----------------------------------------------------

/**
 * cellStructure(): direction (u8, zeroed here) and strength (f32, zeroed here) per cell. Cells
 * away from the left and right border go two at a time, one per f64x2 lane, so each cell's sums
 * keep the scalar order and the two chains run side by side.
 */
export function structure(src: usize, w: i32, h: i32, subX: i32, subY: i32, tan225: f64, direction: usize, strength: usize): void {
  const cols = w / subX, rows = h / subY;
  memory.fill(direction, 0, <usize>(cols * rows));
  memory.fill(strength, 0, <usize>(cols * rows) << 2);
  const inv = 1 / <f64>(subX * subY);
  const half = kf(K_HALF);
  for (let cy = 0, c = 0; cy < rows; cy++) {
    for (let cx = 0; cx < cols; cx++, c++) {
      const x0 = cx * subX;
      if (cx + 1 < cols && x0 > 0 && x0 + 2 * subX < w) {
        // Lane 0: cell cx; lane 1: cell cx + 1, subX samples to the right.
        let a = f64x2.splat(0), b = f64x2.splat(0), d = f64x2.splat(0);
        const off = <usize>subX << 2;
        for (let y = cy * subY, yEnd = y + subY; y < yEnd; y++) {
          const r = y * w;
          const up = (y > 0 ? y - 1 : 0) * w;
          const dn = (y < h - 1 ? y + 1 : h - 1) * w;
          for (let x = x0, x1 = x0 + subX; x < x1; x++) {
            const gx = f64x2.mul(f64x2.sub(pair(src, r + x + 1, off), pair(src, r + x - 1, off)), half);
            const gy = f64x2.mul(f64x2.sub(pair(src, dn + x, off), pair(src, up + x, off)), half);
            a = f64x2.add(a, f64x2.mul(gx, gx)); b = f64x2.add(b, f64x2.mul(gy, gy)); d = f64x2.add(d, f64x2.mul(gx, gy));
          }
        }
        cellTensor(f64x2.extract_lane(a, 0), f64x2.extract_lane(b, 0), f64x2.extract_lane(d, 0), inv, tan225, c, direction, strength);
        cellTensor(f64x2.extract_lane(a, 1), f64x2.extract_lane(b, 1), f64x2.extract_lane(d, 1), inv, tan225, c + 1, direction, strength);
        cx++; c++;
        continue;
      }
      tensorAt(src, w, h, subX, subY, cx, cy, inv, tan225, c, direction, strength);
    }
  }
}

/** The f32 at src + 4i and the one `off` bytes further, as an f64x2. */
@inline function pair(src: usize, i: i32, off: usize): v128 {
  const p = src + (<usize>i << 2);
  return f64x2.promote_low_f32x4(v128.load32_lane(p + off, v128.load32_zero(p), 1));
}

// --- Sobel line art (pipeline/edges.ts) ------------------------------------------------------------

/** sobelInk(): min(1, |gradient| * edgeStrength / 4) of the w x h raster at src into out. */
export function sobel(src: usize, w: i32, h: i32, edgeStrength: f64, out: usize): void {
  const k = edgeStrength / 4;
  const k2 = f64x2.splat(k), two = kf(K_2), one = kf(K_1);
  for (let y = 0; y < h; y++) {
    const up = (y > 0 ? y - 1 : 0) * w;
    const dn = (y < h - 1 ? y + 1 : h - 1) * w;
    const r = y * w;
    sobelAt(src, w, up, r, dn, 0, k, out);
    let x = 1;
    // Interior pairs: the same sums per lane; pmin(m, 1) = 1 < m ? 1 : m, as m > 1 ? 1 : m.
    // The left column of a pair is the right column of the one before: carried, not reloaded.
    let a = ld2(src, up), d = ld2(src, r), g = ld2(src, dn);
    for (; x + 2 < w; x += 2) {
      const b = ld2(src, up + x), c = ld2(src, up + x + 1);
      const f = ld2(src, r + x + 1);
      const hh = ld2(src, dn + x), i = ld2(src, dn + x + 1);
      const gx = f64x2.sub(f64x2.sub(f64x2.sub(f64x2.add(f64x2.add(c, f64x2.mul(two, f)), i), a), f64x2.mul(two, d)), g);
      const gy = f64x2.sub(f64x2.sub(f64x2.sub(f64x2.add(f64x2.add(g, f64x2.mul(two, hh)), i), a), f64x2.mul(two, b)), c);
      const m = f64x2.mul(f64x2.sqrt(f64x2.add(f64x2.mul(gx, gx), f64x2.mul(gy, gy))), k2);
      st2(out, r + x, f64x2.pmin(m, one));
      a = c; d = f; g = i;
    }
    for (; x < w; x++) sobelAt(src, w, up, r, dn, x, k, out);
  }
}

function sobelAt(src: usize, w: i32, up: i32, r: i32, dn: i32, x: i32, k: f64, out: usize): void {
  const l = x > 0 ? x - 1 : 0;
  const rt = x < w - 1 ? x + 1 : w - 1;
  const a = ld(src, up + l), b = ld(src, up + x), c = ld(src, up + rt);
  const d = ld(src, r + l), f = ld(src, r + rt);
  const g = ld(src, dn + l), hh = ld(src, dn + x), i = ld(src, dn + rt);
  const gx = c + 2 * f + i - a - 2 * d - g;
  const gy = g + 2 * hh + i - a - 2 * b - c;
  const m = Math.sqrt(gx * gx + gy * gy) * k;
  st(out, r + x, m > 1 ? 1 : m);
}

// --- Braille (pipeline/braille.ts) -------------------------------------------------------------------

/** Unicode Braille bit of the dot at (dx, dy) in a 2x4 cell, index dy * 2 + dx. */
const DOT_BIT = memory.data<u8>([0x01, 0x08, 0x02, 0x10, 0x04, 0x20, 0x40, 0x80]);

/**
 * matchBraille(): dots (2x4 per cell, each the mean of hx x hy samples of the w-wide target)
 * into `dots` (cols*2 x rows*4 f32), then on/off at one half with optional serpentine
 * Floyd-Steinberg and, where `previous` (u16 per cell, or 0) and `stable` (u8 per cell, or 0) say
 * so, a hysteresis band. Writes the bit patterns into out (u16 per cell, zeroed here).
 */
export function braille(target: usize, width: i32, cols: i32, rows: i32, hx: i32, hy: i32, dither: bool,
  out: usize, previous: usize, stable: usize, hysteresis: f64, dots: usize): void {
  const dw = cols * 2, dh = rows * 4;
  const norm = 1 / <f64>(hx * hy);
  for (let y = 0; y < dh; y++) {
    for (let x = 0; x < dw; x++) {
      let s: f64 = 0;
      for (let j = 0; j < hy; j++) {
        const p = (y * hy + j) * width + x * hx;
        for (let i = 0; i < hx; i++) s += ld(target, p + i);
      }
      st(dots, y * dw + x, s * norm);
    }
  }
  memory.fill(out, 0, <usize>(cols * rows) << 1);
  const band = 0.15 * hysteresis;
  for (let y = 0; y < dh; y++) {
    const ltr = (y & 1) == 0 || !dither;
    const cy = y >> 2, dy = y & 3;
    for (let s = 0; s < dw; s++) {
      const x = ltr ? s : dw - 1 - s;
      const cx = x >> 1, dx = x & 1;
      const cell = cy * cols + cx;
      const bit = <u16>load<u8>(DOT_BIT + <usize>(dy * 2 + dx));
      const i = y * dw + x;
      const v = ld(dots, i);
      let th = 0.5;
      if (previous && band > 0 && (!stable || load<u8>(stable + <usize>cell) == 1)) {
        th = load<u16>(previous + (<usize>cell << 1)) & bit ? 0.5 - band : 0.5 + band;
      }
      const on = v >= th;
      const po = out + (<usize>cell << 1);
      if (on) store<u16>(po, load<u16>(po) | bit);
      if (dither) {
        const q = v - (on ? 1 : 0);
        const fwd = ltr ? 1 : -1;
        if (x + fwd >= 0 && x + fwd < dw) st(dots, i + fwd, ld(dots, i + fwd) + q * 0.4375);
        if (y + 1 < dh) {
          if (x - fwd >= 0 && x - fwd < dw) st(dots, i + dw - fwd, ld(dots, i + dw - fwd) + q * 0.1875);
          st(dots, i + dw, ld(dots, i + dw) + q * 0.3125);
          if (x + fwd >= 0 && x + fwd < dw) st(dots, i + dw + fwd, ld(dots, i + dw + fwd) + q * 0.0625);
        }
      }
    }
  }
}

// --- Glyph matching and its viewing blur (assembly/match.ts) ------------------------------------
export { viewBlur, viewBlurCells, matchGlyphs, templateStats } from './match';
export { measure, cellChroma, roundTripError, histShares, histPercentiles } from './measure';
export { cellColors } from './colors';
export { toneSums, quantizeTable, simSums, entryCounts, unstable, cellsRange, cellsBands, quantileBin, coverageTones, lutIndices, gather } from './metrics';
export { codebookDp, glyphCounts } from './codebook';
export { encTable } from './srgb';
export { temporalStep } from './temporal';
export { fineStats, hexLevels, refineBook, refineGlyphs } from './refine';
export { matchBrailleTwoColor, matchTwoColor, complements } from './two-color';
export { toneTable, colorToneTable } from './tone';
