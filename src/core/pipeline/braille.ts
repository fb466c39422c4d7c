import { SUB_X, SUB_Y } from '../glyphs/types.js';
import { frame } from '../wasm/kernels.js';

/**
 * Braille line art and tone: each of the 2x4 dots covers 2x2 samples and is on when its ink
 * reaches one half. With `dither`, Floyd-Steinberg (serpentine) runs at dot resolution, which
 * turns the 8 dots of a cell into 9 tone levels that average correctly. With `previous` and
 * `stable`, a stable cell keeps a dot's previous state inside a hysteresis band.
 * The glyph index is the dot bit pattern (the set is in code-point order U+2800..U+28FF).
 */
export function matchBraille(target: Float32Array, width: number, cols: number, rows: number, dither: boolean, out: Uint16Array,
  previous?: Uint16Array | null, stable?: Uint8Array | null, hysteresis = 0): Uint16Array {
  const n = cols * rows;
  const hx = SUB_X / 2, hy = SUB_Y / 4;
  const samples = width * rows * SUB_Y;
  // In WebAssembly (assembly/kernels.ts): dot means, then thresholds and error diffusion in order.
  const f = frame();
  const pt = f.f32(samples), po = f.bytes(n * 2), pd = f.f32(cols * 2 * rows * 4);
  const pp = previous ? f.bytes(n * 2) : 0, ps = previous && stable ? f.bytes(n) : 0;
  const k = f.ready();
  f.viewF32(pt, samples).set(target.subarray(0, samples));
  if (previous) f.viewU16(pp, n).set(previous.subarray(0, n));
  if (previous && stable) f.viewU8(ps, n).set(stable.subarray(0, n));
  k.braille(pt, width, cols, rows, hx, hy, dither ? 1 : 0, po, pp, ps, hysteresis, pd);
  out.set(f.viewU16(po, n));
  return out;
}
