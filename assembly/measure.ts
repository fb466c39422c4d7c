// AssemblyScript: the Director's measurements of the source (director/measure.ts, metrics.ts
// roundTripMetric). Same rules as kernels.ts: the operations of the scalar reference in its order,
// so the results are bit-identical (test/wasm-kernels.test.ts checks them against
// test/reference/): f64 as the TypeScript had them, the noise and edge pass in f32 lanes. The sRGB
// encoding table is passed in (built once by srgb.ts encTable).

import { encodeLinear } from './srgb';
import { bump, laneSum, ld } from './mem';

// --- measureSource (director/measure.ts) ---------------------------------------------------------

/**
 * The noise and edge statistics of measureSource over every fourth interior row of the w x h
 * raster d: out[0] = sum |Laplacian|, out[1] = samples with normalised Sobel magnitude > 0.1 (f64
 * each); magHist (256 u32, then 768 more as scratch; zeroed here) counts the magnitudes.
 * The Laplacian and the gradient in f32 arithmetic, four samples at a time (f32x4): each lane sums
 * its |Laplacian| along the row in f32, the row's sum is then (l0 + l1) + (l2 + l3) and the tail's
 * samples in f64 (test/reference/measure.ts is the scalar twin, with Math.fround).
 */
export function measure(d: usize, w: i32, h: i32, out: usize, magHist: usize): void {
  // Four partial histograms (one per lane, 1 KB apart) so that neighbours in the same bin do not
  // wait on each other's store; summed at the end (exact: integers).
  memory.fill(magHist, 0, 4096);
  let lapAll: f64 = 0, edgesAll: f64 = 0;
  if (w >= 3) {
    // Vector constants loaded from memory: a v128.const is rebuilt on every iteration of a loop
    // that uses it by V8 (binaryen folds a constant local back into its uses, but not a load).
    const two = v128.load32_splat(KM), four = v128.load32_splat(KM, 4), quarter = v128.load32_splat(KM, 8);
    const tenth = v128.load32_splat(KM, 12), k255 = v128.load32_splat(KM, 16), top = v128.load32_splat(KM_TOP);
    for (let y = 1; y < h - 1; y += 4) {
      const u = d + (<usize>((y - 1) * w) << 2), r = d + (<usize>(y * w) << 2), dn = d + (<usize>((y + 1) * w) << 2);
      let lap4 = f32x4.splat(0), edges4 = i32x4.splat(0);
      let x = 1;
      for (; x + 3 < w - 1; x += 4) {
        const o = <usize>(x - 1) << 2;
        const a = v128.load(u + o), b = v128.load(u + o, 4), c = v128.load(u + o, 8);
        const l = v128.load(r + o), m = v128.load(r + o, 4), rr = v128.load(r + o, 8);
        const g = v128.load(dn + o), hh = v128.load(dn + o, 4), i = v128.load(dn + o, 8);
        let v = f32x4.add(f32x4.sub(a, f32x4.mul(two, b)), c);
        v = f32x4.sub(v, f32x4.mul(two, l));
        v = f32x4.add(v, f32x4.mul(four, m));
        v = f32x4.sub(v, f32x4.mul(two, rr));
        v = f32x4.add(v, g);
        v = f32x4.sub(v, f32x4.mul(two, hh));
        lap4 = f32x4.add(lap4, f32x4.abs(f32x4.add(v, i)));
        const gx = f32x4.sub(f32x4.sub(f32x4.sub(f32x4.add(f32x4.add(c, f32x4.mul(two, rr)), i), a), f32x4.mul(two, l)), g);
        const gy = f32x4.sub(f32x4.sub(f32x4.sub(f32x4.add(f32x4.add(g, f32x4.mul(two, hh)), i), a), f32x4.mul(two, b)), c);
        const mag = f32x4.mul(f32x4.sqrt(f32x4.add(f32x4.mul(gx, gx), f32x4.mul(gy, gy))), quarter);
        // A true comparison is all ones (-1): subtracting counts it.
        edges4 = i32x4.sub(edges4, f32x4.gt(mag, tenth));
        const k = i32x4.min_s(i32x4.trunc_sat_f32x4_s(f32x4.mul(mag, k255)), top);
        bump(magHist, i32x4.extract_lane(k, 0));
        bump(magHist + 1024, i32x4.extract_lane(k, 1));
        bump(magHist + 2048, i32x4.extract_lane(k, 2));
        bump(magHist + 3072, i32x4.extract_lane(k, 3));
      }
      let lap = laneSum(lap4);
      let edges = <f64>((i32x4.extract_lane(edges4, 0) + i32x4.extract_lane(edges4, 1)) + (i32x4.extract_lane(edges4, 2) + i32x4.extract_lane(edges4, 3)));
      for (; x < w - 1; x++) {
        const o = <usize>(x - 1) << 2;
        const a = load<f32>(u + o), b = load<f32>(u + o, 4), c = load<f32>(u + o, 8);
        const l = load<f32>(r + o), m = load<f32>(r + o, 4), rr = load<f32>(r + o, 8);
        const g = load<f32>(dn + o), hh = load<f32>(dn + o, 4), i = load<f32>(dn + o, 8);
        const v = a - <f32>2 * b + c - <f32>2 * l + <f32>4 * m - <f32>2 * rr + g - <f32>2 * hh + i;
        lap += <f64>Mathf.abs(v);
        const gx = c + <f32>2 * rr + i - a - <f32>2 * l - g;
        const gy = g + <f32>2 * hh + i - a - <f32>2 * b - c;
        const mag = Mathf.sqrt(gx * gx + gy * gy) * <f32>0.25;
        if (mag > <f32>0.1) edges++;
        let k = <i32>(mag * <f32>255);
        if (k > 255) k = 255;
        bump(magHist, k);
      }
      lapAll += lap;
      edgesAll += edges;
    }
  }
  for (let b = 0; b < 256; b++) {
    const o = <usize>b << 2;
    store<u32>(magHist + o, load<u32>(magHist + o) + load<u32>(magHist + 1024 + o) + load<u32>(magHist + 2048 + o) + load<u32>(magHist + 3072 + o));
  }
  store<f64>(out, lapAll);
  store<f64>(out + 8, edgesAll);
}

/**
 * The cells' chroma for measureSource's colourfulness: the sum over `cells` cells of rgb (3 f32
 * each, linear) of the max - min of their sRGB-encoded channels, in cell order. Apart from
 * measure(): mono art reads it only when its report is read (director/measure.ts).
 */
export function cellChroma(rgb: usize, cells: i32, enc: usize): f64 {
  // A cell's chroma, max - min of its encoded channels: the encoding never decreases (a table
  // that rises, interpolated: within a segment a + (b - a) f rounds to at most b, the next
  // segment's start), so the max of the encoded is the encoded max, and likewise the min; two
  // encodings a cell instead of three, the same values. NaN and negative channels encode to 0,
  // as 0 does: taken as 0 first, so that max and min see what the encoding sees.
  let chroma: f64 = 0;
  for (let c = 0; c < cells; c++) {
    const r0 = ld(rgb, c * 3), g0 = ld(rgb, c * 3 + 1), b0 = ld(rgb, c * 3 + 2);
    const r = select(r0, 0, r0 > 0), g = select(g0, 0, g0 > 0), b = select(b0, 0, b0 > 0);
    chroma += encodeLinear(enc, Math.max(r, Math.max(g, b))) - encodeLinear(enc, Math.min(r, Math.min(g, b)));
  }
  return chroma;
}

/** measure()'s f32 constants, and its top bin (i32). */
const KM = memory.data<f32>([2, 4, 0.25, <f32>0.1, 255]);
const KM_TOP = memory.data<i32>([255]);

/**
 * roundTripMetric() of director/metrics.ts: the sum of squared differences between n sRGB bytes
 * (colors) and the sRGB encoding of n linear values (lin, f32), in order.
 */
export function roundTripError(colors: usize, lin: usize, n: i32, enc: usize): f64 {
  let e: f64 = 0;
  for (let i = 0; i < n; i++) {
    const d = <f64>load<u8>(colors + <usize>i) / 255 - encodeLinear(enc, ld(lin, i));
    e += d * d;
  }
  return e;
}

// --- Statistics of the histograms (director/measure.ts; test/reference/measure.ts statsFrom) ----

/**
 * Over `bins` bins (u32 counts at h, bin b centred on (b + 0.5) / bins): out (f64) [0] the sum of
 * count x centre, [1] the counts of centres below 0.2, [2] above 0.8. In bin order, as the
 * TypeScript summed them.
 */
export function histShares(h: usize, bins: i32, out: usize): void {
  let mean: f64 = 0, shadows: f64 = 0, highlights: f64 = 0;
  for (let b = 0; b < bins; b++) {
    const c = <f64>load<u32>(h + (<usize>b << 2));
    const v = (<f64>b + 0.5) / <f64>bins;
    mean += c * v;
    if (v < 0.2) shadows += c;
    else if (v > 0.8) highlights += c;
  }
  store<f64>(out, mean);
  store<f64>(out + 8, shadows);
  store<f64>(out + 16, highlights);
}

/**
 * pipeline/tone.ts percentiles(): for each of the np ascending shares at ps (f64), the histogram's
 * value at it, interpolated within its bin, into out (f64; 1 where the counts never reach it), in
 * one walk with the same arithmetic.
 */
export function histPercentiles(h: usize, bins: i32, ps: usize, np: i32, out: usize): void {
  let total: f64 = 0;
  for (let i = 0; i < bins; i++) total += <f64>load<u32>(h + (<usize>i << 2));
  for (let j = 0; j < np; j++) store<f64>(out + (<usize>j << 3), 1);
  let j = 0, acc: f64 = 0;
  for (let i = 0; i < bins && j < np; i++) {
    const c = <f64>load<u32>(h + (<usize>i << 2));
    const next = acc + c;
    for (; j < np && c > 0 && next >= load<f64>(ps + (<usize>j << 3)) * total; j++) {
      store<f64>(out + (<usize>j << 3), (<f64>i + (load<f64>(ps + (<usize>j << 3)) * total - acc) / c) / <f64>bins);
    }
    acc = next;
  }
}
