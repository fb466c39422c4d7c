// AssemblyScript: the Director's measurements of the source (director/measure.ts, metrics.ts
// roundTripMetric). Same rules as kernels.ts: the f64 operations of the TypeScript they replaced,
// in its order, so the results are bit-identical (test/wasm-kernels.test.ts checks them against
// test/reference/). The sRGB encoding table is passed in (built once by srgb.ts encTable).

import { encodeLinear, ld2, ldf } from './srgb';

// --- measureSource (director/measure.ts) ---------------------------------------------------------

/**
 * The noise and edge statistics of measureSource over every fourth interior row of the w x h
 * raster d, and the cells' mean chroma: out[0] = sum |Laplacian|, out[1] = samples with normalised
 * Sobel magnitude > 0.1, out[2] = sum of (max - min) of the cells' sRGB-encoded colours (f64 each);
 * magHist (256 u32, then 256 more as scratch; zeroed here) counts the magnitudes.
 */
export function measure(d: usize, w: i32, h: i32, rgb: usize, cells: i32, enc: usize, out: usize, magHist: usize): void {
  // Two partial histograms (one per SIMD lane, the second at magHist + 1 KB) so that neighbours
  // in the same bin do not wait on each other's store; summed at the end (exact: integers).
  const part = magHist + 1024;
  memory.fill(magHist, 0, 2048);
  let lapAll: f64 = 0, edgesAll: f64 = 0;
  if (w >= 3) {
    for (let y = 1; y < h - 1; y += 4) {
      const u = (y - 1) * w, r = y * w, dn = (y + 1) * w;
      let lap: f64 = 0, edges: f64 = 0;
      let x = 1;
      // Two samples at a time: every lane does the scalar form's f64 operations, and |v| is
      // added to the row's sum lane 0 then lane 1, in the scalar order.
      for (; x + 1 < w - 1; x += 2) {
        const a = ld2(d, u + x - 1), b = ld2(d, u + x), c = ld2(d, u + x + 1);
        const l = ld2(d, r + x - 1), m = ld2(d, r + x), rr = ld2(d, r + x + 1);
        const g = ld2(d, dn + x - 1), hh = ld2(d, dn + x), i = ld2(d, dn + x + 1);
        const two = f64x2.splat(2);
        let v = f64x2.add(f64x2.sub(a, f64x2.mul(two, b)), c);
        v = f64x2.sub(v, f64x2.mul(two, l));
        v = f64x2.add(v, f64x2.mul(f64x2.splat(4), m));
        v = f64x2.sub(v, f64x2.mul(two, rr));
        v = f64x2.add(v, g);
        v = f64x2.sub(v, f64x2.mul(two, hh));
        v = f64x2.abs(f64x2.add(v, i));
        lap += f64x2.extract_lane(v, 0);
        lap += f64x2.extract_lane(v, 1);
        const gx = f64x2.sub(f64x2.sub(f64x2.sub(f64x2.add(f64x2.add(c, f64x2.mul(two, rr)), i), a), f64x2.mul(two, l)), g);
        const gy = f64x2.sub(f64x2.sub(f64x2.sub(f64x2.add(f64x2.add(g, f64x2.mul(two, hh)), i), a), f64x2.mul(two, b)), c);
        // x * 0.25 is x / 4 exactly (a power of two), without the division.
        const mag = f64x2.mul(f64x2.sqrt(f64x2.add(f64x2.mul(gx, gx), f64x2.mul(gy, gy))), f64x2.splat(0.25));
        const m0 = f64x2.extract_lane(mag, 0), m1 = f64x2.extract_lane(mag, 1);
        if (m0 > 0.1) edges++;
        if (m1 > 0.1) edges++;
        const k = i32x4.min_s(i32x4.trunc_sat_f64x2_s_zero(f64x2.mul(mag, f64x2.splat(255))), i32x4.splat(255));
        const p0 = magHist + (<usize>i32x4.extract_lane(k, 0) << 2), p1 = part + (<usize>i32x4.extract_lane(k, 1) << 2);
        store<u32>(p0, load<u32>(p0) + 1);
        store<u32>(p1, load<u32>(p1) + 1);
      }
      for (; x < w - 1; x++) {
        const a = ldf(d, u + x - 1), b = ldf(d, u + x), c = ldf(d, u + x + 1);
        const l = ldf(d, r + x - 1), m = ldf(d, r + x), rr = ldf(d, r + x + 1);
        const g = ldf(d, dn + x - 1), hh = ldf(d, dn + x), i = ldf(d, dn + x + 1);
        const v = a - 2 * b + c - 2 * l + 4 * m - 2 * rr + g - 2 * hh + i;
        lap += v < 0 ? -v : v;
        const gx = c + 2 * rr + i - a - 2 * l - g;
        const gy = g + 2 * hh + i - a - 2 * b - c;
        const mag = Math.sqrt(gx * gx + gy * gy) / 4;
        if (mag > 0.1) edges++;
        let k = <i32>(mag * 255);
        if (k > 255) k = 255;
        const p = magHist + (<usize>k << 2);
        store<u32>(p, load<u32>(p) + 1);
      }
      lapAll += lap;
      edgesAll += edges;
    }
  }
  for (let b = 0; b < 256; b++) {
    const o = <usize>b << 2;
    store<u32>(magHist + o, load<u32>(magHist + o) + load<u32>(part + o));
  }
  let chroma: f64 = 0;
  for (let c = 0; c < cells; c++) {
    const r = encodeLinear(enc, ldf(rgb, c * 3)), g = encodeLinear(enc, ldf(rgb, c * 3 + 1)), b = encodeLinear(enc, ldf(rgb, c * 3 + 2));
    chroma += Math.max(r, Math.max(g, b)) - Math.min(r, Math.min(g, b));
  }
  store<f64>(out, lapAll);
  store<f64>(out + 8, edgesAll);
  store<f64>(out + 16, chroma);
}

/**
 * roundTripMetric() of director/metrics.ts: the sum of squared differences between n sRGB bytes
 * (colors) and the sRGB encoding of n linear values (lin, f32), in order.
 */
export function roundTripError(colors: usize, lin: usize, n: i32, enc: usize): f64 {
  let e: f64 = 0;
  for (let i = 0; i < n; i++) {
    const d = <f64>load<u8>(colors + <usize>i) / 255 - encodeLinear(enc, ldf(lin, i));
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
