import type { RgbaImage } from '../../src/core/types.js';
import { REC709_B, REC709_G, REC709_R, SRGB8_TO_LINEAR, encLut } from '../../src/core/pipeline/linear.js';
import type { Raster } from './raster.js';
import { scratch } from '../../src/core/pipeline/scratch.js';
// The taps stay TypeScript in the shipped resampler: the oracle uses the same ones.
import type { Resampled, Taps } from '../../src/core/pipeline/resample.js';

/** pipeline/resample.ts boxTaps() as the TypeScript it was (assembly/kernels.ts boxTaps' oracle): exact area overlap, normalised. */
export function boxTaps(src: number, dst: number): Taps {
  const scale = src / dst;
  const start = new Int32Array(dst);
  const count = new Int32Array(dst);
  const offset = new Int32Array(dst);
  const weights: number[] = [];
  for (let i = 0; i < dst; i++) {
    const a = i * scale;
    const b = Math.min(src, (i + 1) * scale);
    const i0 = Math.min(src - 1, Math.floor(a));
    const i1 = Math.max(i0, Math.min(src - 1, Math.ceil(b) - 1));
    start[i] = i0;
    count[i] = i1 - i0 + 1;
    offset[i] = weights.length;
    let sum = 0;
    const first = weights.length;
    for (let k = i0; k <= i1; k++) {
      const w = Math.max(0, Math.min(b, k + 1) - Math.max(a, k));
      weights.push(w);
      sum += w;
    }
    for (let k = first; k < weights.length; k++) weights[k] = sum > 0 ? weights[k]! / sum : 1 / (i1 - i0 + 1);
  }
  return { start, count, offset, weight: Float32Array.from(weights) };
}

/**
 * One source row to linear light: luminance into `linY`, RGB (3 per pixel) into `lin`. Alpha is
 * composited over the ground. A top-level function: the hot loop sees only its arguments.
 */
function linearizeRow(words: Uint32Array, p0: number, sw: number, groundLinear: number, linY: Float32Array, lin: Float32Array): void {
  const lut = SRGB8_TO_LINEAR;
  // One 32-bit load per pixel instead of four byte loads.
  for (let x = 0, p = p0, q = 0; x < sw; x++, p++, q += 3) {
    const v = words[p]!;
    let r = lut[(v >>> R_SHIFT) & 255]!, g = lut[(v >>> G_SHIFT) & 255]!, b = lut[(v >>> B_SHIFT) & 255]!;
    const alpha = (v >>> A_SHIFT) & 255;
    if (alpha !== 255) {
      const a = alpha / 255;
      const gr = groundLinear * (1 - a);
      r = r * a + gr; g = g * a + gr; b = b * a + gr;
    }
    linY[x] = REC709_R * r + REC709_G * g + REC709_B * b;
    lin[q] = r;
    lin[q + 1] = g;
    lin[q + 2] = b;
  }
}

/** The RGBA bytes as 32-bit words: a view when aligned, else an aligned copy. */
function pixelWords(px: Uint8Array | Uint8ClampedArray): Uint32Array {
  const n = px.length >> 2;
  if (px.byteOffset % 4 === 0) return new Uint32Array(px.buffer, px.byteOffset, n);
  const copy = new Uint8Array(n * 4);
  copy.set(px.subarray(0, n * 4));
  return new Uint32Array(copy.buffer, 0, n);
}

/** Bit offsets of R, G, B, A within a pixel word, for the platform's byte order. */
const LITTLE_ENDIAN = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1;
const R_SHIFT = LITTLE_ENDIAN ? 0 : 24;
const G_SHIFT = LITTLE_ENDIAN ? 8 : 16;
const B_SHIFT = LITTLE_ENDIAN ? 16 : 8;
const A_SHIFT = LITTLE_ENDIAN ? 24 : 0;

/** Horizontal box taps over one row of luminance. */
function tapLuma(src: Float32Array, t: Taps, n: number, out: Float32Array): void {
  const st = t.start, cnt = t.count, off = t.offset, wt = t.weight;
  for (let x = 0; x < n; x++) {
    const s = st[x]!, m = cnt[x]!, o = off[x]!;
    let v = 0;
    for (let k = 0; k < m; k++) v += wt[o + k]! * src[s + k]!;
    out[x] = v;
  }
}

/** Horizontal box taps over one row of linear RGB (3 floats per pixel), one output per cell. */
function tapRgb(lin: Float32Array, t: Taps, n: number, out: Float32Array): void {
  const st = t.start, cnt = t.count, off = t.offset, wt = t.weight;
  for (let c = 0, oq = 0; c < n; c++, oq += 3) {
    const m = cnt[c]!, o = off[c]!;
    let r = 0, g = 0, b = 0;
    for (let k = 0, q = st[c]! * 3; k < m; k++, q += 3) {
      const w = wt[o + k]!;
      r += w * lin[q]!;
      g += w * lin[q + 1]!;
      b += w * lin[q + 2]!;
    }
    out[oq] = r;
    out[oq + 1] = g;
    out[oq + 2] = b;
  }
}


/**
 * Area-correct resampling of an sRGB image into a raster of `cols*subX x rows*subY` samples.
 * Light is averaged in linear space; alpha is composited over `groundLinear` (0 black, 1 white),
 * the ground that renders as a blank cell. One streaming pass over the source: a horizontal pass
 * per source row (cached while consecutive output rows share it), then vertical accumulation.
 */
export function resampleImage(img: RgbaImage, cols: number, rows: number, subX: number, subY: number, groundLinear: number): Resampled {
  const W = cols * subX;
  const H = rows * subY;
  const sw = img.width;
  const px = img.data;
  const xt = boxTaps(sw, W);
  // Colour is only needed per cell: its horizontal pass runs at cell width, 4x less work.
  const ct = boxTaps(sw, cols);
  const yt = boxTaps(img.height, H);
  const C3 = cols * 3;

  // Horizontal pass results (luma at W, colour at cols) for up to two source rows, since
  // consecutive output rows share their boundary source row.
  const hy = [new Float32Array(W), new Float32Array(W)];
  const hc = [new Float32Array(C3), new Float32Array(C3)];
  const hrRow = [-1, -1];
  let hrNext = 0;
  const lin = scratch('ref.resample.lin', sw * 3);

  // One source pixel per sample (e.g. 640 px into 160 columns of 4): the luma taps are a copy.
  const identity = sw === W;
  const linY = scratch('ref.resample.linY', sw);
  const words = pixelWords(px);

  const hpass = (sy: number): number => {
    if (hrRow[0] === sy) return 0;
    if (hrRow[1] === sy) return 1;
    const slot = hrNext;
    hrNext ^= 1;
    hrRow[slot] = sy;
    const oy = hy[slot]!;
    const oc = hc[slot]!;
    linearizeRow(words, sy * sw, sw, groundLinear, linY, lin);
    if (identity) oy.set(linY);
    else tapLuma(linY, xt, W, oy);
    tapRgb(lin, ct, cols, oc);
    return slot;
  };

  const luma = scratch('ref.resample.luma', W * H);
  const cellRgb = new Float32Array(cols * rows * 3);
  const accY = new Float32Array(W);
  const rowNorm = 1 / subY;

  const ys = yt.start, yn = yt.count, yo = yt.offset, yw = yt.weight;
  for (let y = 0; y < H; y++) {
    const s = ys[y]!, n = yn[y]!, o = yo[y]!;
    const cbase = Math.floor(y / subY) * C3;
    const base = y * W;
    for (let k = 0; k < n; k++) {
      const w = yw[o + k]!;
      const slot = hpass(s + k);
      const ry = hy[slot]!, rc = hc[slot]!;
      if (n === 1) for (let i = 0; i < W; i++) luma[base + i] = encode32(w * ry[i]!);
      else if (k === 0) for (let i = 0; i < W; i++) accY[i] = w * ry[i]!;
      else for (let i = 0; i < W; i++) accY[i]! += w * ry[i]!;
      const wc = w * rowNorm;
      for (let i = 0; i < C3; i++) cellRgb[cbase + i]! += wc * rc[i]!;
    }
    if (n > 1) for (let x = 0; x < W; x++) luma[base + x] = encode32(accY[x]!);
  }
  return { luma: { width: W, height: H, data: luma }, cellLinearRgb: cellRgb };
}

/**
 * The luminance's encoding to perceptual (the kernel's encode32): linear.ts encodeLinear() of v
 * rounded to f32, each operation rounded to f32.
 */
function encode32(v: number): number {
  const f = Math.fround, t = encLut(), ENC_SIZE = t.length - 1;
  const i = f(v) * ENC_SIZE;
  if (!(i > 0)) return 0;
  if (i >= ENC_SIZE) return 1;
  const k = i | 0;
  return f(t[k]! + f(f(t[k + 1]! - t[k]!) * f(i - k)));
}
