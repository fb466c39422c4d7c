// AssemblyScript: every cell's colour through the tone curve and saturation (pipeline/colors.ts).
// Same rules as kernels.ts: the f64 operations of the TypeScript it replaced, in its order, so the
// bytes are identical (test/wasm-kernels.test.ts against test/reference/colors.ts). The tone table
// (a pow per entry) and the sRGB encoding table come from TS.

import { encodeLinear, ldf } from './srgb';

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

