import { REC709_B, REC709_G, REC709_R, encodeLinear, srgbToLinear } from './linear.js';
import { toneValue, type ToneSettings } from './tone.js';

const LUT_SIZE = 1024;

/**
 * Each cell's colour: its mean linear-light RGB, saturation scaled about its own luminance, then
 * its luminance moved along the same tone curve as the glyphs (levels, contrast, brightness,
 * gamma; not invert, which is a glyph-mapping choice), hue kept when a channel would clip.
 */
export function cellColors(linearRgb: Float32Array, saturation: number, tone: ToneSettings, out: Uint8Array): Uint8Array {
  const t: ToneSettings = { ...tone, invert: false };
  // Perceptual luminance -> toned linear luminance, tabulated (the curve has a pow per value).
  const lut = new Float32Array(LUT_SIZE + 1);
  for (let i = 0; i <= LUT_SIZE; i++) lut[i] = srgbToLinear(toneValue(i / LUT_SIZE, t));
  const n = linearRgb.length / 3;
  for (let c = 0; c < n; c++) {
    let r = linearRgb[c * 3]!, g = linearRgb[c * 3 + 1]!, b = linearRgb[c * 3 + 2]!;
    const y = REC709_R * r + REC709_G * g + REC709_B * b;
    r = y + (r - y) * saturation;
    g = y + (g - y) * saturation;
    b = y + (b - y) * saturation;
    if (r < 0) r = 0;
    if (g < 0) g = 0;
    if (b < 0) b = 0;
    const x = encodeLinear(y) * LUT_SIZE;
    const k = x >= LUT_SIZE ? LUT_SIZE - 1 : x | 0;
    const yTarget = lut[k]! + (lut[k + 1]! - lut[k]!) * (x - k);
    const ys = REC709_R * r + REC709_G * g + REC709_B * b;
    if (ys > 1e-6) {
      const k = yTarget / ys;
      r *= k; g *= k; b *= k;
    } else {
      r = g = b = yTarget;
    }
    const m = r > g ? (r > b ? r : b) : g > b ? g : b;
    if (m > 1) { r /= m; g /= m; b /= m; }
    out[c * 3] = Math.round(encodeLinear(r) * 255);
    out[c * 3 + 1] = Math.round(encodeLinear(g) * 255);
    out[c * 3 + 2] = Math.round(encodeLinear(b) * 255);
  }
  return out;
}
