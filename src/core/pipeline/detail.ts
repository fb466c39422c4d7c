import { histogramWords, keptAt, type Frame, type Ptr } from '../wasm/kernels.js';
import { foldedWeights, RANGE_BINS } from './denoise.js';
import type { Raster } from './raster.js';
import { HIST_BINS, LEVEL_POINTS } from './tone.js';

/**
 * The detail stage of a render in frame `f` (allocating there): the bilateral denoise of `src` by
 * `denoise`, the tone histogram() of the result, the tone table `toneOf` makes from that
 * histogram's auto-levels percentiles (tone.ts LEVEL_POINTS, read where the histogram lies), then
 * the unsharp mask by `sharpen` through the table. The same kernels on the same data as those
 * steps called one at a time (test/helpers/kernel-calls.ts), bit for bit; the rasters stay in the module (render.ts matches glyphs on
 * the result in the same frame). Returns the result's offset and that of a raster of the same
 * size that is free (its scratch), both valid until the next frame(). `toneOf` runs between the
 * kernels: a kernel it calls must run in nestedFrame() (toneLut's does), since frame() would
 * reset this one.
 */
export function detailInFrame(f: Frame, src: Raster, denoise: number, sharpen: number, toneOf: (pLo: number, pHi: number) => Float32Array): { result: Ptr; spare: Ptr } {
  const { width: w, height: h } = src;
  const n = w * h;
  const passes = denoise <= 0 ? 0 : denoise > 0.5 ? 2 : 1;
  const pa = f.f32(n), pb = f.f32(n), ph = f.f32(histogramWords(HIST_BINS)), pq = f.bytes(16), pv = f.bytes(16);
  const pl = passes ? f.f32(RANGE_BINS + 1) : 0, pp = passes ? f.f32(w) : 0, pw = passes ? f.f32(w) : 0;
  const k = f.ready();
  // The resampled luminance is read where resample.ts keeps it (never written there), else copied in.
  const kept = keptAt(src);
  if (kept === null) f.viewF32(pa, n).set(src.data.subarray(0, n));
  let from = kept ?? pa, to = pb;
  if (passes) {
    f.viewF32(pl, RANGE_BINS + 1).set(foldedWeights(denoise));
    for (let p = 0; p < passes; p++) {
      k.denoisePass(from, to, w, h, pl, pp, pw);
      const was = from;
      from = to;
      to = was === kept ? pa : was;
    }
  }
  k.histogram(from, n, HIST_BINS, ph);
  // In WebAssembly (assembly/measure.ts): a first render walked the 1024 bins interpreted, twice.
  f.viewF64(pq, 2).set(LEVEL_POINTS);
  k.histPercentiles(ph, HIST_BINS, pq, 2, pv);
  const levels = f.viewF64(pv, 2);
  const tone = toneOf(levels[0]!, levels[1]!);
  // The table after the histogram's scratch: both raster buffers stay in use.
  const pt = f.f32(tone.length);
  f.ready();
  f.viewF32(pt, tone.length).set(tone);
  // `to` is free now: the blur's scratch (unsharpMask's tmp). In place, but not over the kept raster.
  const out = from === kept ? pa : from;
  if (sharpen > 0) k.unsharp(from, w, h, 2 * sharpen, out, to, pt);
  else k.applyLut(from, n, pt, out);
  return { result: out, spare: to };
}
