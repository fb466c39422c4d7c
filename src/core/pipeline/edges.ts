import { frame, type Frame, type Ptr } from '../wasm/kernels.js';

/**
 * Sobel line art: ink = min(1, |gradient| * edgeStrength), where |gradient| is normalised so a
 * full black-to-white step reads 1. The response is two samples wide (half a cell), the width
 * of a glyph stroke, so `| - / \` match it.
 */
export function sobelInk(src: Float32Array, w: number, h: number, edgeStrength: number, out: Float32Array): Float32Array {
  const n = w * h;
  // In WebAssembly (assembly/kernels.ts).
  const f = frame();
  const ps = f.f32(n), po = f.f32(n);
  f.ready();
  f.viewF32(ps, n).set(src.subarray(0, n));
  sobelInFrame(f, ps, w, h, edgeStrength, po);
  out.set(f.viewF32(po, n));
  return out;
}

/** sobelInk() of the w x h raster at `src` in frame `f`, into `out` there (render.ts's glyph stage). */
export function sobelInFrame(f: Frame, src: Ptr, w: number, h: number, edgeStrength: number, out: Ptr): void {
  f.ready().sobel(src, w, h, edgeStrength, out);
}
