/**
 * Scalar oracle of the cell-colour kernel (assembly/measure.ts, cellColors), as the TypeScript had
 * it. The tone table (colorTransform) is still TypeScript and imported from src.
 */
import { REC709_B, REC709_G, REC709_R, encodeLinear } from '../../src/core/pipeline/linear.js';
import type { ColorTransform } from '../../src/core/pipeline/colors.js';

const LUT_SIZE = 1024;

// OKLab (Ottosson 2020): lightness and chroma axes in which scaling a and b keeps the hue.
function toOklab(r: number, g: number, b: number, out: Float64Array): void {
  const l = Math.cbrt(0.4122214708 * r + 0.5363325363 * g + 0.0514459929 * b);
  const m = Math.cbrt(0.2119034982 * r + 0.6806995451 * g + 0.1073969566 * b);
  const s = Math.cbrt(0.0883024619 * r + 0.2817188376 * g + 0.6299787005 * b);
  out[0] = 0.2104542553 * l + 0.793617785 * m - 0.0040720468 * s;
  out[1] = 1.9779984951 * l - 2.428592205 * m + 0.4505937099 * s;
  out[2] = 0.0259040371 * l + 0.7827717662 * m - 0.808675766 * s;
}

function fromOklab(L: number, a: number, bb: number, out: Float64Array): void {
  const l0 = L + 0.3963377774 * a + 0.2158037573 * bb;
  const m0 = L - 0.1055613458 * a - 0.0638541728 * bb;
  const s0 = L - 0.0894841775 * a - 1.291485548 * bb;
  const l = l0 * l0 * l0, m = m0 * m0 * m0, s = s0 * s0 * s0;
  out[0] = 4.0767416621 * l - 3.3077115913 * m + 0.2309699292 * s;
  out[1] = -1.2684380046 * l + 2.6097574011 * m - 0.3413193965 * s;
  out[2] = -0.0041960863 * l - 0.7034186147 * m + 1.707614701 * s;
}

const lab = new Float64Array(3);
const rgbOut = new Float64Array(3);
const inGamut = (c: Float64Array) => c[0]! >= -1e-6 && c[0]! <= 1 + 1e-6 && c[1]! >= -1e-6 && c[1]! <= 1 + 1e-6 && c[2]! >= -1e-6 && c[2]! <= 1 + 1e-6;

/**
 * One linear-light colour through the transform, into `out` (linear, 0..1): its luminance moved
 * along the tone curve (chromaticity kept), no further than its largest channel reaching 1, then its OKLab chroma scaled by `saturation` with
 * lightness and hue kept. Where the result leaves the sRGB gamut the chroma is reduced (never the
 * hue or the lightness) until it fits.
 */
export function transformColor(t: ColorTransform, r: number, g: number, b: number, out: Float64Array): void {
  const y = REC709_R * r + REC709_G * g + REC709_B * b;
  const x = encodeLinear(y) * LUT_SIZE;
  const k = x >= LUT_SIZE ? LUT_SIZE - 1 : x | 0;
  const yt = t.lut[k]! + (t.lut[k + 1]! - t.lut[k]!) * (x - k);
  if (y > 1e-7) {
    let f = yt / y;
    const m = r > g ? (r > b ? r : b) : g > b ? g : b;
    if (m * f > 1) f = 1 / m;
    r *= f; g *= f; b *= f;
  } else {
    r = g = b = yt;
  }
  rgbOut[0] = r; rgbOut[1] = g; rgbOut[2] = b;
  if (t.saturation === 1 && inGamut(rgbOut)) {
    out[0] = r; out[1] = g; out[2] = b;
    return;
  }
  toOklab(r, g, b, lab);
  const L = Math.min(1, Math.max(0, lab[0]!));
  let a = lab[1]! * t.saturation, bb = lab[2]! * t.saturation;
  fromOklab(L, a, bb, rgbOut);
  if (!inGamut(rgbOut)) {
    // Largest chroma factor in [0, 1] that fits (f = 0 is the grey of the same lightness).
    let lo = 0, hi = 1;
    for (let i = 0; i < 12; i++) {
      const mid = (lo + hi) / 2;
      fromOklab(L, a * mid, bb * mid, rgbOut);
      if (inGamut(rgbOut)) lo = mid; else hi = mid;
    }
    a *= lo; bb *= lo;
    fromOklab(L, a, bb, rgbOut);
  }
  out[0] = Math.min(1, Math.max(0, rgbOut[0]!));
  out[1] = Math.min(1, Math.max(0, rgbOut[1]!));
  out[2] = Math.min(1, Math.max(0, rgbOut[2]!));
}

/** Linear 0..1 -> sRGB byte. */
export function srgbByte(v: number): number {
  return Math.round(encodeLinear(v) * 255);
}

const tmp = new Float64Array(3);

/** Each cell's colour (see cellColors of src/core/pipeline/colors.ts). */
export function cellColors(linearRgb: Float32Array, t: ColorTransform, out: Uint8Array, ink?: { coverage: Float32Array; cells: Uint16Array }): Uint8Array {
  const n = linearRgb.length / 3;
  for (let c = 0; c < n; c++) {
    transformColor(t, linearRgb[c * 3]!, linearRgb[c * 3 + 1]!, linearRgb[c * 3 + 2]!, tmp);
    let r = tmp[0]!, g = tmp[1]!, b = tmp[2]!;
    if (ink) {
      const cov = ink.coverage[ink.cells[c]!]!;
      if (cov > 0) {
        r /= cov; g /= cov; b /= cov;
        const m = r > g ? (r > b ? r : b) : g > b ? g : b;
        if (m > 1) { r /= m; g /= m; b /= m; }
      }
    }
    out[c * 3] = srgbByte(r);
    out[c * 3 + 1] = srgbByte(g);
    out[c * 3 + 2] = srgbByte(b);
  }
  return out;
}
