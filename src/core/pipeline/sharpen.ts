import { frame } from '../wasm/kernels.js';
import { applyLut } from './tone.js';

/**
 * Unsharp mask: v + amount * (v - blur(v)) with a separable binomial [1 4 6 4 1]/16 blur
 * (sigma ~1 sample, a quarter of a cell width): it lifts the sub-cell structure that glyph shapes
 * can show. `sharpen` 0..1 maps to an amount of 0..2. Values may overshoot 0..1; the tone curve
 * clamps them. With `tone` (a toneLut() table) the result goes straight through the tone curve,
 * saving a pass over the raster.
 */
export function unsharpMask(src: Float32Array, w: number, h: number, sharpen: number, out: Float32Array, _tmp?: Float32Array, tone?: Float32Array): Float32Array {
  if (sharpen <= 0) {
    if (tone) applyLut(src, tone, out);
    else if (out !== src) out.set(src);
    return out;
  }
  const amount = 2 * sharpen;
  const n = w * h;
  // In WebAssembly (assembly/kernels.ts): the [1 4 6 4 1]/16 blur along x, then along y combined
  // with the mask and the tone table; four samples at a time in f32 (f32x4).
  const f = frame();
  const ps = f.f32(n), pt = f.f32(n), pl = tone ? f.f32(tone.length) : 0;
  const k = f.ready();
  f.viewF32(ps, n).set(src.subarray(0, n));
  if (tone) f.viewF32(pl, tone.length).set(tone);
  k.unsharp(ps, w, h, amount, ps, pt, pl);
  out.set(f.viewF32(ps, n));
  return out;
}
