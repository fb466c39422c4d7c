import { SUB_X, SUB_Y } from '../glyphs/types.js';
import { frame, type KernelExports, type Ptr } from '../wasm/kernels.js';

/**
 * The viewing model of glyph matching: a [1 2 1]/4 blur in both axes (about half a cell width),
 * applied alike to the target and, within each cell, to the glyph templates. Texture finer than
 * that (grass, noise) then matches by its tone instead of by glyphs whose strokes happen to line
 * up with it, while a real edge, wider than the blur, still picks its shape.
 * In WebAssembly (assembly/match.ts); matchGlyphs({ blur: true }) runs it in the match's own frame.
 */
export function viewBlur(src: Float32Array, w: number, h: number, out: Float32Array): Float32Array {
  const n = w * h;
  const f = frame();
  const ps = f.f32(n), po = f.f32(n), pt = f.f32(3 * w);
  const k = f.ready();
  f.viewF32(ps, n).set(src.subarray(0, n));
  k.viewBlur(ps, w, h, po, pt);
  out.set(f.viewF32(po, n));
  return out;
}

/**
 * The same blur over each glyph's w x h template (SUB_X x SUB_Y by default; fineShapes' 8 x 16),
 * edges clamped within the cell, `passes` times.
 */
export function viewBlurTemplates(templates: Float32Array, w = SUB_X, h = SUB_Y, passes = 1): Float32Array {
  const n = w * h;
  const count = templates.length / n;
  const f = frame();
  const ps = f.f32(count * n), po = f.f32(count * n), pt = f.f32(3 * w);
  const k = f.ready();
  f.viewF32(ps, count * n).set(templates.subarray(0, count * n));
  return f.viewF32(blurCellsInFrame(k, ps, po, pt, count, w, h, passes), count * n).slice();
}

/**
 * viewBlurTemplates() on templates already in a kernel frame: `passes` blurs between `a` and `b`
 * (count x w x h f32 each; `tmp` 3 x w, the blur's ring of rows); returns where the result is (a or b).
 */
export function blurCellsInFrame(k: KernelExports, a: Ptr, b: Ptr, tmp: Ptr, count: number, w: number, h: number, passes: number): Ptr {
  let from = a, to = b;
  for (let p = 0; p < passes; p++) {
    k.viewBlurCells(from, count, w, h, to, tmp);
    [from, to] = [to, from];
  }
  return from;
}
