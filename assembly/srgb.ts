// AssemblyScript: the sRGB encoding shared by kernels.ts, measure.ts and colors.ts.

import { ld } from './mem';

/** Entries of the sRGB encoding table (linear.ts ENC_SIZE), plus one. */
export const ENC_SIZE: i32 = 16384;

/** encodeLinear() of linear.ts: linear light -> perceptual, by the table `enc` (ENC_SIZE + 1 f32). */
@inline export function encodeLinear(enc: usize, v: f64): f64 {
  const i = v * <f64>ENC_SIZE;
  if (!(i > 0)) return 0;
  if (i >= <f64>ENC_SIZE) return 1;
  const k = <i32>i;
  const f = i - <f64>k;
  const a = ld(enc, k);
  return a + (ld(enc, k + 1) - a) * f;
}

/** linearToSrgb() (the test oracle's, test/reference/linear.ts): the sRGB curve, clamped to 0..1. */
function linearToSrgb(v: f64): f64 {
  if (v <= 0) return 0;
  if (v >= 1) return 1;
  return v <= 0.0031308 ? v * 12.92 : 1.055 * Math.pow(v, 1 / 2.4) - 0.055;
}

/**
 * encLut() of linear.ts: linearToSrgb(i / ENC_SIZE) for i = 0..ENC_SIZE, as f32, at out. Built
 * here rather than in JavaScript, where its 16385 pows ran interpreted on a cold start (4-6 ms of
 * a first render); the same values (test/wasm-kernels.test.ts compares every entry).
 */
export function encTable(out: usize): void {
  for (let i = 0; i <= ENC_SIZE; i++) store<f32>(out + (<usize>i << 2), <f32>linearToSrgb(<f64>i / <f64>ENC_SIZE));
}
