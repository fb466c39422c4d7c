// AssemblyScript: every cell's colour through the tone curve and saturation (pipeline/colors.ts).
// Same rules as kernels.ts: the f64 operations of the TypeScript it replaced, in its order, so the
// bytes are identical (test/wasm-kernels.test.ts against test/reference/colors.ts). The tone table
// (a pow per entry) comes from TS; the sRGB encoding table is passed in (built once by srgb.ts encTable).

import { encodeLinear } from './srgb';
import { ld } from './mem';

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
  const yt = tonedY(lut, enc, y);
  if (y > 1e-7) {
    let f = yt / y;
    // No brighter than its chromaticity allows in sRGB (the largest channel at 1): lifted past it,
    // the lightness kept would leave no room for chroma, and a saturated red would come out white.
    const m = r > g ? (r > b ? r : b) : g > b ? g : b;
    if (m * f > 1) f = 1 / m;
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

// --- Two cells at a time (f64x2): each lane does the scalar path's operations in its order ---------

/** Math.cbrt (musl's cbrt) of both lanes; zero, subnormal, infinite and NaN lanes take the scalar one. */
@inline function cbrt2(x: v128): v128 {
  const hx = v128.and(i64x2.shr_u(x, 32), i64x2.splat(0x7FFFFFFF));
  if (v128.any_true(v128.or(i64x2.lt_s(hx, i64x2.splat(0x00100000)), i64x2.ge_s(hx, i64x2.splat(0x7FF00000))))) {
    return f64x2.replace_lane(f64x2.splat(Math.cbrt(f64x2.extract_lane(x, 0))), 1, Math.cbrt(f64x2.extract_lane(x, 1)));
  }
  // hx / 3 + B1 (u32): hx < 2^31, so hx / 3 = (hx * 0xAAAAAAAB) >> 33 exactly.
  const q = i64x2.add(i64x2.shr_u(i64x2.mul(hx, i64x2.splat(0xAAAAAAAB)), 33), i64x2.splat(715094163));
  let t = v128.or(v128.and(x, i64x2.splat(i64.MIN_VALUE)), i64x2.shl(q, 32));
  let r = f64x2.mul(f64x2.mul(t, t), f64x2.div(t, x));
  const p = f64x2.add(f64x2.splat(reinterpret<f64>(0x3FFE03E60F61E692)), f64x2.mul(r, f64x2.add(f64x2.splat(reinterpret<f64>(0xBFFE28E092F02420)), f64x2.mul(r, f64x2.splat(reinterpret<f64>(0x3FF9F1604A49D6C2))))));
  const p2 = f64x2.mul(f64x2.mul(f64x2.mul(r, r), r), f64x2.add(f64x2.splat(reinterpret<f64>(0xBFE844CBBEE751D9)), f64x2.mul(r, f64x2.splat(reinterpret<f64>(0x3FC2B000D4E4EDD7)))));
  t = f64x2.mul(t, f64x2.add(p, p2));
  t = v128.and(i64x2.add(t, i64x2.splat(0x80000000)), i64x2.splat(-1073741824)); // & 0xFFFFFFFFC0000000
  const s = f64x2.mul(t, t);
  r = f64x2.div(x, s);
  r = f64x2.div(f64x2.sub(r, t), f64x2.add(f64x2.mul(f64x2.splat(2), t), r));
  return f64x2.add(t, f64x2.mul(t, r));
}

@inline function k2(c: f64): v128 {
  return f64x2.splat(c);
}

/** inGamut() per lane, as a lane mask. */
@inline function inGamut2(r: v128, g: v128, b: v128): v128 {
  const lo = k2(-1e-6), hi = k2(1 + 1e-6);
  return v128.and(v128.and(v128.and(f64x2.ge(r, lo), f64x2.le(r, hi)), v128.and(f64x2.ge(g, lo), f64x2.le(g, hi))), v128.and(f64x2.ge(b, lo), f64x2.le(b, hi)));
}

// The colours of the pair in hand.
let vR: v128 = f64x2.splat(0), vG: v128 = f64x2.splat(0), vB: v128 = f64x2.splat(0);

function fromOklab2(L: v128, a: v128, bb: v128): void {
  const l0 = f64x2.add(f64x2.add(L, f64x2.mul(k2(0.3963377774), a)), f64x2.mul(k2(0.2158037573), bb));
  const m0 = f64x2.sub(f64x2.sub(L, f64x2.mul(k2(0.1055613458), a)), f64x2.mul(k2(0.0638541728), bb));
  const s0 = f64x2.sub(f64x2.sub(L, f64x2.mul(k2(0.0894841775), a)), f64x2.mul(k2(1.291485548), bb));
  const l = f64x2.mul(f64x2.mul(l0, l0), l0), m = f64x2.mul(f64x2.mul(m0, m0), m0), s = f64x2.mul(f64x2.mul(s0, s0), s0);
  vR = f64x2.add(f64x2.sub(f64x2.mul(k2(4.0767416621), l), f64x2.mul(k2(3.3077115913), m)), f64x2.mul(k2(0.2309699292), s));
  vG = f64x2.sub(f64x2.add(f64x2.mul(k2(-1.2684380046), l), f64x2.mul(k2(2.6097574011), m)), f64x2.mul(k2(0.3413193965), s));
  vB = f64x2.add(f64x2.sub(f64x2.mul(k2(-0.0041960863), l), f64x2.mul(k2(0.7034186147), m)), f64x2.mul(k2(1.707614701), s));
}

/** The toned luminance of one value (transform(), and each lane of transform2()): the tone table at the sRGB encoding of y, interpolated. */
@inline function tonedY(lut: usize, enc: usize, y: f64): f64 {
  const x = encodeLinear(enc, y) * <f64>LUT_SIZE;
  const k = x >= <f64>LUT_SIZE ? LUT_SIZE - 1 : <i32>x;
  const lk = ld(lut, k);
  return lk + (ld(lut, k + 1) - lk) * (x - <f64>k);
}

@inline function clamp2(v: v128): v128 {
  return f64x2.min(k2(1), f64x2.max(k2(0), v));
}

/** transform() of two colours, into vR, vG, vB. */
function transform2(lut: usize, saturation: f64, enc: usize, r: v128, g: v128, b: v128): void {
  const y = f64x2.add(f64x2.add(f64x2.mul(k2(0.2126), r), f64x2.mul(k2(0.7152), g)), f64x2.mul(k2(0.0722), b));
  const yt = f64x2.replace_lane(f64x2.splat(tonedY(lut, enc, f64x2.extract_lane(y, 0))), 1, tonedY(lut, enc, f64x2.extract_lane(y, 1)));
  // y > 1e-7: the colour scaled by yt / y (chromaticity kept); else the grey yt.
  const scaled = f64x2.gt(y, k2(1e-7));
  let f = f64x2.div(yt, y);
  // No brighter than the chromaticity allows (transform()): f = 1 / max channel where m x f > 1.
  const top = v128.bitselect(v128.bitselect(r, b, f64x2.gt(r, b)), v128.bitselect(g, b, f64x2.gt(g, b)), f64x2.gt(r, g));
  f = v128.bitselect(f64x2.div(k2(1), top), f, f64x2.gt(f64x2.mul(top, f), k2(1)));
  r = v128.bitselect(f64x2.mul(r, f), yt, scaled);
  g = v128.bitselect(f64x2.mul(g, f), yt, scaled);
  b = v128.bitselect(f64x2.mul(b, f), yt, scaled);
  let keep = f64x2.splat(0);
  if (saturation == 1) {
    keep = inGamut2(r, g, b);
    if (v128.all_true<i64>(keep)) { vR = r; vG = g; vB = b; return; }
  }
  // OKLab, chroma scaled.
  const l = cbrt2(f64x2.add(f64x2.add(f64x2.mul(k2(0.4122214708), r), f64x2.mul(k2(0.5363325363), g)), f64x2.mul(k2(0.0514459929), b)));
  const m = cbrt2(f64x2.add(f64x2.add(f64x2.mul(k2(0.2119034982), r), f64x2.mul(k2(0.6806995451), g)), f64x2.mul(k2(0.1073969566), b)));
  const s = cbrt2(f64x2.add(f64x2.add(f64x2.mul(k2(0.0883024619), r), f64x2.mul(k2(0.2817188376), g)), f64x2.mul(k2(0.6299787005), b)));
  const labL = f64x2.sub(f64x2.add(f64x2.mul(k2(0.2104542553), l), f64x2.mul(k2(0.793617785), m)), f64x2.mul(k2(0.0040720468), s));
  const labA = f64x2.add(f64x2.sub(f64x2.mul(k2(1.9779984951), l), f64x2.mul(k2(2.428592205), m)), f64x2.mul(k2(0.4505937099), s));
  const labB = f64x2.sub(f64x2.add(f64x2.mul(k2(0.0259040371), l), f64x2.mul(k2(0.7827717662), m)), f64x2.mul(k2(0.808675766), s));
  const L = f64x2.min(k2(1), f64x2.max(k2(0), labL));
  let a = f64x2.mul(labA, k2(saturation)), bb = f64x2.mul(labB, k2(saturation));
  fromOklab2(L, a, bb);
  const out = v128.not(inGamut2(vR, vG, vB));
  if (v128.any_true(out)) {
    // Per lane: the largest chroma factor in [0, 1] that fits, by the same 12 halvings.
    let lo = k2(0), hi = k2(1);
    for (let i = 0; i < 12; i++) {
      const mid = f64x2.div(f64x2.add(lo, hi), k2(2));
      fromOklab2(L, f64x2.mul(a, mid), f64x2.mul(bb, mid));
      const fits = inGamut2(vR, vG, vB);
      lo = v128.bitselect(mid, lo, fits);
      hi = v128.bitselect(hi, mid, fits);
    }
    // Lanes in gamut keep a and bb, so their colour comes out as before.
    a = v128.bitselect(f64x2.mul(a, lo), a, out);
    bb = v128.bitselect(f64x2.mul(bb, lo), bb, out);
    fromOklab2(L, a, bb);
  }
  vR = v128.bitselect(r, clamp2(vR), keep);
  vG = v128.bitselect(g, clamp2(vG), keep);
  vB = v128.bitselect(b, clamp2(vB), keep);
}

@inline function ld3(rgb: usize, c: i32, ch: i32): v128 {
  return f64x2.replace_lane(f64x2.splat(ld(rgb, c * 3 + ch)), 1, ld(rgb, c * 3 + 3 + ch));
}

@inline function storeBytes(enc: usize, o: usize, r: f64, g: f64, b: f64): void {
  store<u8>(o, srgbByte(enc, r));
  store<u8>(o + 1, srgbByte(enc, g));
  store<u8>(o + 2, srgbByte(enc, b));
}

/** The ink of two cells: their colours divided by coverage c (where > 0), scaled into white as a whole. */
@inline function ink2(c: v128): void {
  const has = f64x2.gt(c, k2(0));
  const r = f64x2.div(vR, c), g = f64x2.div(vG, c), b = f64x2.div(vB, c);
  // r > g ? (r > b ? r : b) : g > b ? g : b
  const m = v128.bitselect(v128.bitselect(r, b, f64x2.gt(r, b)), v128.bitselect(g, b, f64x2.gt(g, b)), f64x2.gt(r, g));
  const over = f64x2.gt(m, k2(1));
  vR = v128.bitselect(v128.bitselect(f64x2.div(r, m), r, over), vR, has);
  vG = v128.bitselect(v128.bitselect(f64x2.div(g, m), g, over), vG, has);
  vB = v128.bitselect(v128.bitselect(f64x2.div(b, m), b, over), vB, has);
}

/**
 * cellColors() of colors.ts: n linear colours at rgb (3n f32) through the tone table `lut`
 * (LUT_SIZE + 1 f32) and saturation, as sRGB bytes into out (3n u8). With coverage (f32 per glyph)
 * and cells (u16 glyph per cell) not 0, each colour is the ink: divided by the cell's coverage,
 * scaled down as a whole where that exceeds white. Two cells at a time, the last one alone.
 */
export function cellColors(rgb: usize, n: i32, lut: usize, saturation: f64, enc: usize, coverage: usize, cells: usize, out: usize): void {
  let c = 0;
  for (; c + 1 < n; c += 2) {
    transform2(lut, saturation, enc, ld3(rgb, c, 0), ld3(rgb, c, 1), ld3(rgb, c, 2));
    if (coverage) {
      const c0 = ld(coverage, <i32>load<u16>(cells + (<usize>c << 1)));
      const c1 = ld(coverage, <i32>load<u16>(cells + (<usize>(c + 1) << 1)));
      ink2(f64x2.replace_lane(f64x2.splat(c0), 1, c1));
    }
    const o = out + <usize>c * 3;
    storeBytes(enc, o, f64x2.extract_lane(vR, 0), f64x2.extract_lane(vG, 0), f64x2.extract_lane(vB, 0));
    storeBytes(enc, o + 3, f64x2.extract_lane(vR, 1), f64x2.extract_lane(vG, 1), f64x2.extract_lane(vB, 1));
  }
  for (; c < n; c++) {
    transform(lut, saturation, enc, ld(rgb, c * 3), ld(rgb, c * 3 + 1), ld(rgb, c * 3 + 2));
    let r = oR, g = oG, b = oB;
    if (coverage) {
      const cov = ld(coverage, <i32>load<u16>(cells + (<usize>c << 1)));
      if (cov > 0) {
        r /= cov; g /= cov; b /= cov;
        const m = r > g ? (r > b ? r : b) : g > b ? g : b;
        if (m > 1) { r /= m; g /= m; b /= m; }
      }
    }
    storeBytes(enc, out + <usize>c * 3, r, g, b);
  }
}
