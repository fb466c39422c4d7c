// AssemblyScript: the Director's measurements of the source (director/measure.ts) and every cell's
// colour through the tone curve and saturation (pipeline/colors.ts). Same rules as kernels.ts: the
// f64 operations of the TypeScript they replaced, in its order, so the results are bit-identical
// (test/wasm-kernels.test.ts checks them against test/reference/). Tables built with Math.pow
// (the sRGB encoding, the tone curve) come from TS.

@inline function ldf(p: usize, i: i32): f64 {
  return <f64>load<f32>(p + (<usize>i << 2));
}

/** Two consecutive f32 at p + 4i as an f64x2. */
@inline function ld2(p: usize, i: i32): v128 {
  return f64x2.promote_low_f32x4(v128.load64_zero(p + (<usize>i << 2)));
}

const ENC_SIZE: i32 = 16384;

/** encodeLinear() of linear.ts: linear light -> perceptual, by the table `enc` (ENC_SIZE + 1 f32). */
@inline function encodeLinear(enc: usize, v: f64): f64 {
  const i = v * <f64>ENC_SIZE;
  if (!(i > 0)) return 0;
  if (i >= <f64>ENC_SIZE) return 1;
  const k = <i32>i;
  const f = i - <f64>k;
  const a = ldf(enc, k);
  return a + (ldf(enc, k + 1) - a) * f;
}

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

// --- Cell colours (pipeline/colors.ts) -----------------------------------------------------------

const LUT_SIZE: i32 = 1024;

// The transformed colour of the cell in hand (linear RGB).
let oR: f64 = 0, oG: f64 = 0, oB: f64 = 0;
// OKLab of the colour in hand.
let labL: f64 = 0, labA: f64 = 0, labB: f64 = 0;

@inline function inGamut(r: f64, g: f64, b: f64): bool {
  return r >= -1e-6 && r <= 1 + 1e-6 && g >= -1e-6 && g <= 1 + 1e-6 && b >= -1e-6 && b <= 1 + 1e-6;
}

@inline function toOklab(r: f64, g: f64, b: f64): void {
  const l = Math.cbrt(0.4122214708 * r + 0.5363325363 * g + 0.0514459929 * b);
  const m = Math.cbrt(0.2119034982 * r + 0.6806995451 * g + 0.1073969566 * b);
  const s = Math.cbrt(0.0883024619 * r + 0.2817188376 * g + 0.6299787005 * b);
  labL = 0.2104542553 * l + 0.793617785 * m - 0.0040720468 * s;
  labA = 1.9779984951 * l - 2.428592205 * m + 0.4505937099 * s;
  labB = 0.0259040371 * l + 0.7827717662 * m - 0.808675766 * s;
}

function fromOklab(L: f64, a: f64, bb: f64): void {
  const l0 = L + 0.3963377774 * a + 0.2158037573 * bb;
  const m0 = L - 0.1055613458 * a - 0.0638541728 * bb;
  const s0 = L - 0.0894841775 * a - 1.291485548 * bb;
  const l = l0 * l0 * l0, m = m0 * m0 * m0, s = s0 * s0 * s0;
  oR = 4.0767416621 * l - 3.3077115913 * m + 0.2309699292 * s;
  oG = -1.2684380046 * l + 2.6097574011 * m - 0.3413193965 * s;
  oB = -0.0041960863 * l - 0.7034186147 * m + 1.707614701 * s;
}

@inline function clamp01(v: f64): f64 {
  return Math.min(1, Math.max(0, v));
}

/** transformColor() of colors.ts: into oR, oG, oB. */
function transform(lut: usize, saturation: f64, enc: usize, r: f64, g: f64, b: f64): void {
  const y = 0.2126 * r + 0.7152 * g + 0.0722 * b;
  const x = encodeLinear(enc, y) * <f64>LUT_SIZE;
  const k = x >= <f64>LUT_SIZE ? LUT_SIZE - 1 : <i32>x;
  const lk = ldf(lut, k);
  const yt = lk + (ldf(lut, k + 1) - lk) * (x - <f64>k);
  if (y > 1e-7) {
    const f = yt / y;
    r *= f; g *= f; b *= f;
  } else {
    r = g = b = yt;
  }
  if (saturation == 1 && inGamut(r, g, b)) {
    oR = r; oG = g; oB = b;
    return;
  }
  toOklab(r, g, b);
  const L = Math.min(1, Math.max(0, labL));
  let a = labA * saturation, bb = labB * saturation;
  fromOklab(L, a, bb);
  if (!inGamut(oR, oG, oB)) {
    // Largest chroma factor in [0, 1] that fits (f = 0 is the grey of the same lightness).
    let lo: f64 = 0, hi: f64 = 1;
    for (let i = 0; i < 12; i++) {
      const mid = (lo + hi) / 2;
      fromOklab(L, a * mid, bb * mid);
      if (inGamut(oR, oG, oB)) lo = mid; else hi = mid;
    }
    a *= lo; bb *= lo;
    fromOklab(L, a, bb);
  }
  oR = clamp01(oR); oG = clamp01(oG); oB = clamp01(oB);
}

@inline function srgbByte(enc: usize, v: f64): u8 {
  return <u8>(<i32>Math.round(encodeLinear(enc, v) * 255));
}

/**
 * cellColors() of colors.ts: n linear colours at rgb (3n f32) through the tone table `lut`
 * (LUT_SIZE + 1 f32) and saturation, as sRGB bytes into out (3n u8). With coverage (f32 per glyph)
 * and cells (u16 glyph per cell) not 0, each colour is the ink: divided by the cell's coverage,
 * scaled down as a whole where that exceeds white.
 */
export function cellColors(rgb: usize, n: i32, lut: usize, saturation: f64, enc: usize, coverage: usize, cells: usize, out: usize): void {
  for (let c = 0; c < n; c++) {
    transform(lut, saturation, enc, ldf(rgb, c * 3), ldf(rgb, c * 3 + 1), ldf(rgb, c * 3 + 2));
    let r = oR, g = oG, b = oB;
    if (coverage) {
      const cov = ldf(coverage, <i32>load<u16>(cells + (<usize>c << 1)));
      if (cov > 0) {
        r /= cov; g /= cov; b /= cov;
        const m = r > g ? (r > b ? r : b) : g > b ? g : b;
        if (m > 1) { r /= m; g /= m; b /= m; }
      }
    }
    const o = out + <usize>c * 3;
    store<u8>(o, srgbByte(enc, r));
    store<u8>(o + 1, srgbByte(enc, g));
    store<u8>(o + 2, srgbByte(enc, b));
  }
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
