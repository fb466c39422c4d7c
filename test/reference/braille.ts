import { SUB_X, SUB_Y } from '../../src/core/glyphs/types.js';

/** Unicode Braille bit of the dot at (dx, dy) in a 2x4 cell: dots 1-3 and 4-6 run down the columns, 7 and 8 are the bottom row. */
const DOT_BIT = new Uint8Array([0x01, 0x08, 0x02, 0x10, 0x04, 0x20, 0x40, 0x80]);

/**
 * Braille line art and tone: each of the 2x4 dots covers 2x2 samples and is on when its ink
 * reaches one half. With `dither`, Floyd-Steinberg (serpentine) runs at dot resolution, which
 * turns the 8 dots of a cell into 9 tone levels that average correctly. With `previous` and
 * `stable`, a stable cell keeps a dot's previous state inside a hysteresis band.
 * The glyph index is the dot bit pattern (the set is in code-point order U+2800..U+28FF).
 */
export function matchBraille(target: Float32Array, width: number, cols: number, rows: number, dither: boolean, out: Uint16Array,
  previous?: Uint16Array | null, stable?: Uint8Array | null, hysteresis = 0): Uint16Array {
  const dw = cols * 2;
  const dh = rows * 4;
  const dots = new Float32Array(dw * dh);
  const hx = SUB_X / 2, hy = SUB_Y / 4;
  const norm = 1 / (hx * hy);
  for (let y = 0; y < dh; y++) {
    for (let x = 0; x < dw; x++) {
      let s = 0;
      for (let j = 0; j < hy; j++) {
        const p = (y * hy + j) * width + x * hx;
        for (let i = 0; i < hx; i++) s += target[p + i]!;
      }
      dots[y * dw + x] = s * norm;
    }
  }
  out.fill(0);
  const band = 0.15 * hysteresis;
  for (let y = 0; y < dh; y++) {
    const ltr = (y & 1) === 0 || !dither;
    const cy = y >> 2, dy = y & 3;
    for (let s = 0; s < dw; s++) {
      const x = ltr ? s : dw - 1 - s;
      const cx = x >> 1, dx = x & 1;
      const cell = cy * cols + cx;
      const bit = DOT_BIT[dy * 2 + dx]!;
      const v = dots[y * dw + x]!;
      let th = 0.5;
      if (previous && band > 0 && (!stable || stable[cell] === 1)) th = previous[cell]! & bit ? 0.5 - band : 0.5 + band;
      const on = v >= th;
      if (on) out[cell]! |= bit;
      if (dither) {
        const q = v - (on ? 1 : 0);
        const i = y * dw + x;
        const fwd = ltr ? 1 : -1;
        if (x + fwd >= 0 && x + fwd < dw) dots[i + fwd]! += q * 0.4375;
        if (y + 1 < dh) {
          if (x - fwd >= 0 && x - fwd < dw) dots[i + dw - fwd]! += q * 0.1875;
          dots[i + dw]! += q * 0.3125;
          if (x + fwd >= 0 && x + fwd < dw) dots[i + dw + fwd]! += q * 0.0625;
        }
      }
    }
  }
  return out;
}
