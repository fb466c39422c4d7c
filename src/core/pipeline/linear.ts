/**
 * sRGB transfer functions as lookup tables. The renderer averages light in linear space (area
 * sampling of light is only correct there) and does tone work on the perceptual (sRGB-encoded)
 * value, where equal steps look equal.
 */
import { f32Of, precomputed } from '../tables.js';
import { frame } from '../wasm/kernels.js';

export function srgbToLinear(v: number): number {
  return v <= 0.04045 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4);
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
 * Perceptual value at i / ENC_SIZE of linear light (encodeLinear() interpolates it): the sRGB
 * curve, 1.055 v^(1/2.4) - 0.055 above its linear toe. computeEncLut()'s table, as the build
 * computed it (core/tables.ts), else computed on first use. Without the build's table it starts
 * a kernel frame: call it before a frame's allocations, never while another frame's views are in use.
 */
export function encLut(): Float32Array {
  if (!encTable) {
    const pre = precomputed();
    encTable = pre ? f32Of(pre.enc) : computeEncLut();
    if (encTable.length !== ENC_SIZE + 1) throw new Error('tables.generated.ts: the sRGB table has the wrong length');
  }
  return encTable;
}

/**
 * encLut()'s table, computed by a kernel (assembly/srgb.ts encTable): its 16385 pows took 4-6 ms
 * of a cold start in JavaScript, still interpreted then, against under 1 ms there (and none since
 * the build computes it: scripts/build-tables.ts).
 */
export function computeEncLut(): Float32Array {
  const f = frame();
  const p = f.f32(ENC_SIZE + 1);
  f.ready().encTable(p);
  return f.viewF32(p, ENC_SIZE + 1).slice();
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
