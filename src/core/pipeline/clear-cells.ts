import { SAMPLES, SUB_X, SUB_Y } from '../glyphs/types.js';
import type { RgbaImage } from '../types.js';
import { SRGB8_TO_LINEAR } from './linear.js';

/** Alpha under this shows nothing worth a glyph (a sixteenth): a cell of such pixels alone is blank. */
const VISIBLE_FROM = 16;
/**
 * Alpha from this on draws as opaque: composited over black it loses at most an eighth of its
 * light. Not 255 alone: an image saved with alpha 254 throughout would lose its cells' second
 * colours.
 */
const SOLID_FROM = 224;

/** alphaCells() per cell: opaque, transparent throughout, or anything between. */
export const OPAQUE = 0, CLEAR = 1, MIXED = 2;

/**
 * Each cell of a `cols` x `rows` grid over `img` (the whole image, as the resampler maps it: cell
 * x covers source columns x * w / cols up to (x + 1) * w / cols, partly covered pixels included):
 * OPAQUE (every pixel's alpha at least SOLID_FROM), CLEAR (every one under VISIBLE_FROM) or MIXED
 * (an edge, or a translucent area). Null when every pixel is opaque: at once for an image its
 * decoder marks `opaque` (every JPEG), else after one pass over the alpha bytes, which stops at
 * the first that is not. A cell's scan stops once it is MIXED.
 */
export function alphaCells(img: RgbaImage, cols: number, rows: number): Uint8Array | null {
  if (img.opaque === true) return null;
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
      // Seen: a pixel that shows, a pixel seen through.
      let shown = false, seeThrough = false;
      for (let y = y0; y < y1 && !(shown && seeThrough); y++) {
        for (let i = (y * w + x0) * 4 + 3, end = (y * w + x1) * 4; i < end; i += 4) {
          const a = data[i]!;
          if (a >= VISIBLE_FROM) shown = true;
          if (a < SOLID_FROM) seeThrough = true;
          if (shown && seeThrough) break;
        }
      }
      out[cy * cols + cx] = !shown ? CLEAR : seeThrough ? MIXED : OPAQUE;
    }
  }
  return out;
}

/** Unicode Braille bit of the dot at (dx, dy) of a 2 x 4 cell, index dy * 2 + dx (as assembly/kernels.ts). */
const DOT_BIT = [0x01, 0x08, 0x02, 0x10, 0x04, 0x20, 0x40, 0x80] as const;

/** opaqueShape()'s scratch: the mean opacity of each Braille dot. */
const dotAlpha = new Float64Array(8);

/** The weight of the mean term in opaqueShape()'s fit (the glyph matcher's TONE_WEIGHT). */
const COVER_WEIGHT = 1.2 * SAMPLES;

/**
 * A MIXED cell (`cell`, of `cols` x `rows` over `img`) drawn on the viewer's own ground: of the
 * glyphs whose masks are `templates` (SAMPLES per glyph, 0..1), the one nearest (least squares,
 * plus the matcher's term on the means, so a thin stroke between the sample rows still draws as
 * the glyph of its coverage) the cell's opacity at its SUB_X x SUB_Y samples, inked with the
 * alpha-weighted mean linear colour of the pixels under its mask (written to `ink` at cell * 3).
 * Each sample reads the pixels its box (`cols * SUB_X` by `rows * SUB_Y` over the image) touches,
 * at least one, so an image smaller than the samples is read too. Returns the glyph, or -1 for an
 * evenly translucent cell (every sample at least half opaque, within a quarter of each other):
 * drawn as opaque then, on its own background. `braille`: the set is Braille's, in code-point
 * order (the glyph index is the dot pattern): each dot is on where its 2 x 2 samples are at least
 * half opaque, as the Braille matcher splits dots (a least-squares fit to the dots' small masks
 * chose the full pattern along every edge, its ground showing between the dots).
 * `sums` is scratch of 4 * SAMPLES.
 */
export function opaqueShape(img: RgbaImage, cols: number, rows: number, cell: number, templates: Float32Array, braille: boolean, ink: Float32Array, sums: Float64Array): number {
  const { width: w, height: h, data } = img;
  const cx = cell % cols, cy = (cell - cx) / cols;
  const W = cols * SUB_X, H = rows * SUB_Y;
  // Per sample: alpha, then alpha-weighted linear R, G, B (sums), each SAMPLES long; the means below.
  sums.fill(0);
  let lo = 1, hi = 0, meanA = 0;
  for (let sy = 0; sy < SUB_Y; sy++) {
    const gy = cy * SUB_Y + sy;
    const y0 = Math.floor((gy * h) / H), y1 = Math.max(y0 + 1, Math.min(h, Math.ceil(((gy + 1) * h) / H)));
    for (let sx = 0; sx < SUB_X; sx++) {
      const gx = cx * SUB_X + sx;
      const x0 = Math.floor((gx * w) / W), x1 = Math.max(x0 + 1, Math.min(w, Math.ceil(((gx + 1) * w) / W)));
      const s = sy * SUB_X + sx;
      // At most 4 x 4 pixels a sample, at the centres of equal parts of its box (a 12 MP source's
      // samples are 8 x 8 pixels and more): no edge of the box weighs more than the other.
      const my = Math.min(4, y1 - y0), mx = Math.min(4, x1 - x0);
      let a = 0, r = 0, g = 0, b = 0;
      for (let ky = 0; ky < my; ky++) {
        const row = (y0 + Math.floor(((ky + 0.5) * (y1 - y0)) / my)) * w;
        for (let kx = 0; kx < mx; kx++) {
          const p = (row + x0 + Math.floor(((kx + 0.5) * (x1 - x0)) / mx)) * 4;
          const al = data[p + 3]! / 255;
          a += al;
          r += al * SRGB8_TO_LINEAR[data[p]!]!;
          g += al * SRGB8_TO_LINEAR[data[p + 1]!]!;
          b += al * SRGB8_TO_LINEAR[data[p + 2]!]!;
        }
      }
      const n = my * mx, mean = a / n;
      sums[s] = mean;
      sums[SAMPLES + s] = r / n;
      sums[2 * SAMPLES + s] = g / n;
      sums[3 * SAMPLES + s] = b / n;
      meanA += mean;
      if (mean < lo) lo = mean;
      if (mean > hi) hi = mean;
    }
  }
  // Evenly translucent and at least half opaque: drawn as opaque (on its own background, with its
  // second colour), not as one ink in a shade glyph.
  if (lo >= 0.5 && hi - lo < 0.25) return -1;
  meanA /= SAMPLES;
  // A cell with a sixteenth of its area shown draws something: a stroke no glyph's shape fits (a
  // thin line between the sample rows) is drawn misplaced within the cell rather than dropped.
  const mustDraw = meanA >= 1 / 16;
  let best = 0, bestErr = Infinity;
  if (braille) {
    for (let d = 0; d < 8; d++) {
      const dx = d & 1, dy = d >> 1, s = dy * 2 * SUB_X + dx * 2;
      const a = (dotAlpha[d] = (sums[s]! + sums[s + 1]! + sums[s + SUB_X]! + sums[s + SUB_X + 1]!) / 4);
      if (a >= 0.5) best |= DOT_BIT[d]!;
    }
    // None half opaque but the cell shows (a faint area, a thin stroke): as many of its most
    // opaque dots as its coverage is eighths (a single dot in every cell drew a faint area as a
    // lattice of dot 1).
    if (best === 0 && mustDraw) {
      for (let k = Math.max(1, Math.round(meanA * 8)); k > 0; k--) {
        let most = -1, at = 0;
        for (let d = 0; d < 8; d++) {
          if (!(best & DOT_BIT[d]!) && dotAlpha[d]! > most) {
            most = dotAlpha[d]!;
            at = d;
          }
        }
        best |= DOT_BIT[at]!;
      }
    }
    // Every dot shown (an opaque area beside a thin transparent seam): drawn as opaque, with both
    // colours, not as dots on the viewer's ground.
    if (best === 0xff) return -1;
  }
  for (let gl = 0, count = braille ? 0 : templates.length / SAMPLES; gl < count; gl++) {
    let err = 0, m = 0;
    for (let s = 0; s < SAMPLES; s++) {
      const t = templates[gl * SAMPLES + s]!, d = t - sums[s]!;
      err += d * d;
      m += t;
    }
    if (mustDraw && m === 0) continue;
    const dm = m / SAMPLES - meanA;
    err += COVER_WEIGHT * dm * dm;
    if (err < bestErr) {
      bestErr = err;
      best = gl;
    }
  }
  let a = 0, r = 0, g = 0, b = 0;
  for (let s = 0; s < SAMPLES; s++) {
    const m = templates[best * SAMPLES + s]!;
    a += m * sums[s]!;
    r += m * sums[SAMPLES + s]!;
    g += m * sums[2 * SAMPLES + s]!;
    b += m * sums[3 * SAMPLES + s]!;
  }
  // Under a blank mask (nothing drawn) the colour is never seen; the cell's own mean then.
  if (a <= 0) {
    for (let s = 0; s < SAMPLES; s++) {
      a += sums[s]!;
      r += sums[SAMPLES + s]!;
      g += sums[2 * SAMPLES + s]!;
      b += sums[3 * SAMPLES + s]!;
    }
  }
  const o = cell * 3;
  ink[o] = a > 0 ? r / a : 0;
  ink[o + 1] = a > 0 ? g / a : 0;
  ink[o + 2] = a > 0 ? b / a : 0;
  return best;
}
