/** The sRGB encoding curve in JavaScript: the oracle of the encoding table (assembly/srgb.ts encTable). */
export function linearToSrgb(v: number): number {
  if (v <= 0) return 0;
  if (v >= 1) return 1;
  return v <= 0.0031308 ? v * 12.92 : 1.055 * Math.pow(v, 1 / 2.4) - 0.055;
}
