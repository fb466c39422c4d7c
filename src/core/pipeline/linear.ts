/**
 * sRGB transfer functions as lookup tables. The renderer averages light in linear space (area
 * sampling of light is only correct there) and does tone work on the perceptual (sRGB-encoded)
 * value, where equal steps look equal.
 */

export function srgbToLinear(v: number): number {
  return v <= 0.04045 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4);
}

export function linearToSrgb(v: number): number {
  if (v <= 0) return 0;
  if (v >= 1) return 1;
  return v <= 0.0031308 ? v * 12.92 : 1.055 * Math.pow(v, 1 / 2.4) - 0.055;
}

/** 8-bit sRGB code -> linear light. */
export const SRGB8_TO_LINEAR: Float32Array = (() => {
  const t = new Float32Array(256);
  for (let i = 0; i < 256; i++) t[i] = srgbToLinear(i / 255);
  return t;
})();

const ENC_SIZE = 16384;
let encTable: Float32Array | undefined;
/**
 * Perceptual value at i / ENC_SIZE of linear light (encodeLinear() interpolates it). Built on first
 * use, not at import: 16385 pows in still-interpreted code (~2 ms) that the CLI's paths without a
 * render (help, errors, decode) and the library's importers need not pay.
 */
export function encLut(): Float32Array {
  if (!encTable) {
    const t = new Float32Array(ENC_SIZE + 1);
    for (let i = 0; i <= ENC_SIZE; i++) t[i] = linearToSrgb(i / ENC_SIZE);
    encTable = t;
  }
  return encTable;
}

/** Linear light 0..1 -> perceptual 0..1, by table (fine enough: < 0.1/255 error above black). */
export function encodeLinear(v: number): number {
  const i = v * ENC_SIZE;
  if (!(i > 0)) return 0;
  if (i >= ENC_SIZE) return 1;
  const k = i | 0;
  const f = i - k;
  const t = encTable ?? encLut();
  return t[k]! + (t[k + 1]! - t[k]!) * f;
}

/** Rec. 709 luminance weights, applied to linear RGB. */
export const REC709_R = 0.2126;
export const REC709_G = 0.7152;
export const REC709_B = 0.0722;
