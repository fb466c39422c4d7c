import type { RgbaImage } from '../types.js';

/** Alpha under this is transparent (half, as chafa's default threshold). */
const OPAQUE_FROM = 128;

/**
 * The cells of a `cols` x `rows` grid over `img` (the whole image, as the resampler maps it: cell
 * x covers source columns x * w / cols up to (x + 1) * w / cols, partly covered pixels included)
 * in which every pixel's alpha is under half: 1 there, else 0. Null when there are none. Each
 * cell's scan stops at its first opaque pixel, so an opaque image costs one read a cell; a
 * transparent region is read once.
 */
export function clearCells(img: RgbaImage, cols: number, rows: number): Uint8Array | null {
  const { width: w, height: h, data } = img;
  let out: Uint8Array | null = null;
  for (let cy = 0; cy < rows; cy++) {
    const y0 = Math.floor((cy * h) / rows), y1 = Math.min(h, Math.ceil(((cy + 1) * h) / rows));
    for (let cx = 0; cx < cols; cx++) {
      const x0 = Math.floor((cx * w) / cols), x1 = Math.min(w, Math.ceil(((cx + 1) * w) / cols));
      let clear = true;
      for (let y = y0; y < y1 && clear; y++) {
        for (let i = (y * w + x0) * 4 + 3, end = (y * w + x1) * 4; i < end; i += 4) {
          if (data[i]! >= OPAQUE_FROM) {
            clear = false;
            break;
          }
        }
      }
      if (clear) (out ??= new Uint8Array(cols * rows))[cy * cols + cx] = 1;
    }
  }
  return out;
}
