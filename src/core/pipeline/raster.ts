import { frame, type Frame, type Ptr } from '../wasm/kernels.js';

/** A single-channel float raster, row-major. Values are tone in 0..1 unless stated otherwise. */
export interface Raster {
  readonly width: number;
  readonly height: number;
  readonly data: Float32Array;
}

/** Mean of each cellW x cellH block: one value per cell. */
export function cellMeans(r: Raster, cellW: number, cellH: number, out?: Float32Array): Float32Array {
  const cols = Math.floor(r.width / cellW);
  const rows = Math.floor(r.height / cellH);
  const res = out ?? new Float32Array(cols * rows);
  // In WebAssembly (assembly/kernels.ts).
  const f = frame();
  const pd = f.f32(r.width * rows * cellH);
  f.ready();
  f.viewF32(pd, r.width * rows * cellH).set(r.data.subarray(0, r.width * rows * cellH));
  return cellMeansInFrame(f, pd, r.width, cols, rows, cellW, cellH, res);
}

/** cellMeans() of the raster at `p` (width samples wide) in frame `f`, into `out` (cols x rows). */
export function cellMeansInFrame(f: Frame, p: Ptr, width: number, cols: number, rows: number, cellW: number, cellH: number, out: Float32Array): Float32Array {
  const po = f.f32(cols * rows);
  f.ready().cellMeans(p, width, cols, rows, cellW, cellH, po);
  out.set(f.viewF32(po, cols * rows));
  return out;
}

/**
 * 1 - v for each of the n values at `p` in frame `f`, in place (render.ts's glyph stage: `invert`,
 * dark ink on light). In WebAssembly (assembly/kernels.ts oneMinus, the same f64 subtraction
 * rounded to f32): a first render ran the loop over every sample interpreted.
 */
export function invertInFrame(f: Frame, p: Ptr, n: number): void {
  f.ready().oneMinus(p, n);
}
