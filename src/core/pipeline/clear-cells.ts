import { SAMPLES, SUB_X, SUB_Y } from '../glyphs/types.js';
import type { RgbaImage } from '../types.js';
import { SRGB8_TO_LINEAR } from './linear.js';

/** Alpha under this is transparent (half, as chafa's default threshold); a cell of such pixels alone is blank. */
const OPAQUE_FROM = 128;
/**
 * Alpha from this on draws as opaque: composited over black it loses at most an eighth of its
 * light. Below it a pixel is seen through: its cell is drawn by its opacity's shape. Not 255 alone:
 * an image saved with alpha 254 throughout would lose its cells' second colours.
 */
const SOLID_FROM = 224;

/** alphaCells() per cell: opaque, transparent throughout, or anything between. */
export const OPAQUE = 0, CLEAR = 1, MIXED = 2;

/**
 * Each cell of a `cols` x `rows` grid over `img` (the whole image, as the resampler maps it: cell
 * x covers source columns x * w / cols up to (x + 1) * w / cols, partly covered pixels included):
 * OPAQUE (every pixel's alpha at least SOLID_FROM), CLEAR (every one under half) or MIXED (an
 * edge, or a translucent area: an image decoded smaller has few pixels of either kind at an edge).
 * Null when every pixel is opaque (every JPEG): then one pass over the alpha bytes, which stops at
 * the first that is not. A cell's scan stops once it is MIXED.
 */
export function alphaCells(img: RgbaImage, cols: number, rows: number): Uint8Array | null {
  const { width: w, height: h, data } = img;
  let any = false;
  for (let i = 3, end = w * h * 4; i < end; i += 4) {
    if (data[i]! < SOLID_FROM) {
      any = true;
      break;
    }
  }
  if (!any) return null;
  const out = new Uint8Array(cols * rows);
  for (let cy = 0; cy < rows; cy++) {
    const y0 = Math.floor((cy * h) / rows), y1 = Math.min(h, Math.ceil(((cy + 1) * h) / rows));
    for (let cx = 0; cx < cols; cx++) {
      const x0 = Math.floor((cx * w) / cols), x1 = Math.min(w, Math.ceil(((cx + 1) * w) / cols));
      // Seen: a pixel at least half opaque, a pixel seen through.
      let shown = false, seeThrough = false;
      for (let y = y0; y < y1 && !(shown && seeThrough); y++) {
        for (let i = (y * w + x0) * 4 + 3, end = (y * w + x1) * 4; i < end; i += 4) {
          const a = data[i]!;
          if (a >= OPAQUE_FROM) shown = true;
          if (a < SOLID_FROM) seeThrough = true;
          if (shown && seeThrough) break;
        }
      }
      out[cy * cols + cx] = !shown ? CLEAR : seeThrough ? MIXED : OPAQUE;
    }
  }
  return out;
}

/**
 * A MIXED cell (`cell`, of `cols` x `rows` over `img`) drawn on the viewer's own ground: of the
 * glyphs whose masks are `templates` (SAMPLES per glyph, 0..1), the one nearest (least squares)
 * the cell's opacity at its SUB_X x SUB_Y samples, inked with the mean linear colour of the
 * pixels under its mask, weighted by their alpha (written to `ink` at cell * 3). Returns the glyph;
 * `sums` is scratch of 5 * SAMPLES. Pixels go to the sample their centre falls in.
 */
export function opaqueShape(img: RgbaImage, cols: number, rows: number, cell: number, templates: Float32Array, ink: Float32Array, sums: Float64Array): number {
  const { width: w, height: h, data } = img;
  const cx = cell % cols, cy = (cell - cx) / cols;
  const x0 = Math.floor((cx * w) / cols), x1 = Math.min(w, Math.ceil(((cx + 1) * w) / cols));
  const y0 = Math.floor((cy * h) / rows), y1 = Math.min(h, Math.ceil(((cy + 1) * h) / rows));
  // Per sample: pixels, then alpha, then alpha-weighted linear R, G, B (each SAMPLES long).
  sums.fill(0);
  const sw = (cols * SUB_X) / w, sh = (rows * SUB_Y) / h;
  for (let y = y0; y < y1; y++) {
    const sy = Math.min(SUB_Y - 1, Math.max(0, Math.floor((y + 0.5) * sh) - cy * SUB_Y));
    for (let x = x0; x < x1; x++) {
      const sx = Math.min(SUB_X - 1, Math.max(0, Math.floor((x + 0.5) * sw) - cx * SUB_X));
      const s = sy * SUB_X + sx, p = (y * w + x) * 4, a = data[p + 3]! / 255;
      sums[s]! += 1;
      sums[SAMPLES + s]! += a;
      sums[2 * SAMPLES + s]! += a * SRGB8_TO_LINEAR[data[p]!]!;
      sums[3 * SAMPLES + s]! += a * SRGB8_TO_LINEAR[data[p + 1]!]!;
      sums[4 * SAMPLES + s]! += a * SRGB8_TO_LINEAR[data[p + 2]!]!;
    }
  }
  let best = 0, bestErr = Infinity;
  for (let g = 0, count = templates.length / SAMPLES; g < count; g++) {
    let err = 0;
    for (let s = 0; s < SAMPLES; s++) {
      const n = sums[s]!, d = templates[g * SAMPLES + s]! - (n > 0 ? sums[SAMPLES + s]! / n : 0);
      err += d * d;
    }
    if (err < bestErr) {
      bestErr = err;
      best = g;
    }
  }
  let a = 0, r = 0, gr = 0, b = 0;
  for (let s = 0; s < SAMPLES; s++) {
    const m = templates[best * SAMPLES + s]!;
    a += m * sums[SAMPLES + s]!;
    r += m * sums[2 * SAMPLES + s]!;
    gr += m * sums[3 * SAMPLES + s]!;
    b += m * sums[4 * SAMPLES + s]!;
  }
  const o = cell * 3;
  ink[o] = a > 0 ? r / a : 0;
  ink[o + 1] = a > 0 ? gr / a : 0;
  ink[o + 2] = a > 0 ? b / a : 0;
  return best;
}
