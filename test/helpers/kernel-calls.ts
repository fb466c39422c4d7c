/**
 * The detail stage's kernels called one at a time, each on its own copy of the raster: what
 * src/core/pipeline/detail.ts fuses in one frame, bit for bit. The tests hold the kernels to their
 * scalar references (test/reference/) through these; no render calls them.
 */
import { frame } from '../../src/core/wasm/kernels.js';
import { foldedWeights, RANGE_BINS } from '../../src/core/pipeline/denoise.js';
import type { Raster } from '../../src/core/pipeline/raster.js';

/**
 * Edge-preserving bilateral filter (separable 3x3, spatial sigma 1 sample). `strength` 0..1 sets the
 * range sigma (up to 0.12 of full scale, about 30/255) and, above 0.5, a second pass.
 */
export function bilateralDenoise(src: Raster, strength: number, out: Float32Array): Float32Array {
  if (strength <= 0) {
    out.set(src.data);
    return out;
  }
  const passes = strength > 0.5 ? 2 : 1;
  const { width: w, height: h } = src;
  const n = w * h;
  const f = frame();
  const pa = f.f32(n), pb = f.f32(n), pl = f.f32(RANGE_BINS + 1), pp = f.f32(w), pw = f.f32(w);
  const k = f.ready();
  f.viewF32(pa, n).set(src.data.subarray(0, n));
  f.viewF32(pl, RANGE_BINS + 1).set(foldedWeights(strength));
  let from = pa, to = pb;
  for (let p = 0; p < passes; p++) {
    k.denoisePass(from, to, w, h, pl, pp, pw);
    [from, to] = [to, from];
  }
  out.set(f.viewF32(from, n));
  return out;
}

/** The tone table `lut` applied to every sample (lutValue() per sample, as detail.ts does without a sharpen). */
export function applyLut(src: Float32Array, lut: Float32Array, out: Float32Array): Float32Array {
  const n = src.length;
  const f = frame();
  const ps = f.f32(n), pl = f.f32(lut.length);
  const k = f.ready();
  f.viewF32(ps, n).set(src);
  f.viewF32(pl, lut.length).set(lut);
  k.applyLut(ps, n, pl, ps);
  out.set(f.viewF32(ps, n));
  return out;
}

/**
 * Unsharp mask: v + amount * (v - blur(v)) with a separable binomial [1 4 6 4 1]/16 blur;
 * `sharpen` 0..1 is an amount of 0..2. With `tone` (a toneLut() table) the result goes through it.
 */
export function unsharpMask(src: Float32Array, w: number, h: number, sharpen: number, out: Float32Array, tone?: Float32Array): Float32Array {
  if (sharpen <= 0) {
    if (tone) applyLut(src, tone, out);
    else if (out !== src) out.set(src);
    return out;
  }
  const n = w * h;
  const f = frame();
  const ps = f.f32(n), pt = f.f32(n), pl = tone ? f.f32(tone.length) : 0;
  const k = f.ready();
  f.viewF32(ps, n).set(src.subarray(0, n));
  if (tone) f.viewF32(pl, tone.length).set(tone);
  k.unsharp(ps, w, h, 2 * sharpen, ps, pt, pl);
  out.set(f.viewF32(ps, n));
  return out;
}
