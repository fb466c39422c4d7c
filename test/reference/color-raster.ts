import type { RgbaImage } from '../../src/core/types.js';
import { SRGB8_TO_LINEAR } from '../../src/core/pipeline/linear.js';
import { boxTaps } from '../../src/core/pipeline/resample.js';

/** A fresh zeroed Float32Array (the pipeline's took scratch memory). */
const scratch = (_name: string, n: number) => new Float32Array(n);

/**
 * The scalar twin of pipeline/resample.ts resampleRgb() (which runs the resample kernel's colour
 * pass with one sample per cell), as it was in TypeScript. Not optimised: the specification.
 *
 * Linear-light RGB of the source at `W x H` samples (3 floats per sample, row-major), area
 * averaged; alpha composited over `groundLinear`. Only colour output with two colours per cell
 * needs colour below cell resolution, so this is its own pass (the luminance resampler stays lean).
 * The result is scratch memory, valid until the next call.
 */
export function resampleRgb(img: RgbaImage, W: number, H: number, groundLinear: number): Float32Array {
  const sw = img.width, sh = img.height, px = img.data;
  const xt = boxTaps(sw, W), yt = boxTaps(sh, H);
  const lut = SRGB8_TO_LINEAR;
  const row = scratch('colorRaster.row', sw * 3);
  const hrow = scratch('colorRaster.h', W * 3);
  const out = scratch('colorRaster.out', W * H * 3);
  out.fill(0);
  // Each source row is linearised and tapped horizontally once, then added to the output rows
  // whose vertical footprint covers it.
  let y0 = 0;
  for (let sy = 0; sy < sh; sy++) {
    for (let x = 0, p = sy * sw * 4, q = 0; x < sw; x++, p += 4, q += 3) {
      let r = lut[px[p]!]!, g = lut[px[p + 1]!]!, b = lut[px[p + 2]!]!;
      const a = px[p + 3]!;
      if (a !== 255) {
        const k = a / 255, gr = groundLinear * (1 - k);
        r = r * k + gr; g = g * k + gr; b = b * k + gr;
      }
      row[q] = r; row[q + 1] = g; row[q + 2] = b;
    }
    for (let x = 0; x < W; x++) {
      let r = 0, g = 0, b = 0;
      const o = xt.offset[x]!;
      for (let k = 0, q = xt.start[x]! * 3; k < xt.count[x]!; k++, q += 3) {
        const w = xt.weight[o + k]!;
        r += w * row[q]!; g += w * row[q + 1]!; b += w * row[q + 2]!;
      }
      hrow[x * 3] = r; hrow[x * 3 + 1] = g; hrow[x * 3 + 2] = b;
    }
    while (y0 < H && yt.start[y0]! + yt.count[y0]! <= sy) y0++;
    for (let y = y0; y < H && yt.start[y]! <= sy; y++) {
      const k = sy - yt.start[y]!;
      if (k >= yt.count[y]!) continue;
      const w = yt.weight[yt.offset[y]! + k]!;
      const base = y * W * 3;
      for (let i = 0; i < W * 3; i++) out[base + i]! += w * hrow[i]!;
    }
  }
  return out;
}
