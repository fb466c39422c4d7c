/**
 * Image-quality metrics for character art, on single-channel Float32 planes (0..1).
 *
 * The rendered text is rasterized with the reference font (an "ink image": 0 = ground, 1 = full
 * ink; ink is light on a dark ground, so more ink = brighter) and compared with the source's
 * luminance resized to the same pixel grid.
 *
 * - Reference: sRGB-encoded Rec.709 luma Y' = 0.2126 R' + 0.7152 G' + 0.0722 B' of the 8-bit
 *   values / 255 (perceptual grey, 0..1), area-resized to exactly the ink image's size. The area
 *   filter averages the source over each target pixel's footprint (a box of exact, fractional
 *   extent); when upsampling it is pixel replication with linear blending where a target pixel
 *   straddles two source pixels. The stretch may be non-uniform: every tool shares the grid.
 * - SSIM after a global tone fit, at a viewing distance: both planes are blurred with a Gaussian of
 *   sigma = 0.5 cell heights ("near": the closest distance at which the text rows fuse, so the
 *   row stripes every text output has are gone (< 1 % contrast left) while sub-cell glyph shape
 *   still shows) or 1.5 cell heights ("far": tone and larger structure). A smaller near blur
 *   (0.5 cell widths was tried) measures row texture instead of likeness: a flat grey image then
 *   outscores every tool. Then box-downsampled by 4 (near) or 8 (far) for speed (the blur
 *   already removed what the downsampling drops: sigma >= the factor), then the rendered plane R is
 *   fitted to the reference S by least squares, a*R + b (one global a, b per image: the tool's ink
 *   scale and ground level are not its fault, the shape of its tone curve is; a is kept >= 0 so a
 *   tone-inverted rendering is not flipped back), and the mean SSIM of
 *   Wang et al. 2004 is taken between a*R+b and S: 11x11 Gaussian window, sigma 1.5, C1 = 0.01^2,
 *   C2 = 0.03^2 (data range 1), averaged over the positions where the window fits entirely
 *   ("valid"). 1 = identical up to a*R+b. Note that SSIM of blurred images has a high floor: a
 *   flat grey image (no information at all) scores about 0.6 on a photo, because where the blurred
 *   reference is nearly flat the C2 term dominates. The quality bench prints that floor ("flat").
 * - Per-cell tone correlation: Pearson r between the mean ink of each cell and the mean reference
 *   luminance of the same cell (no blur): how well the tool's tone follows the image, cell by cell.
 */
import type { RgbaImage } from '../../src/core/types.js';

export interface Plane {
  readonly width: number;
  readonly height: number;
  readonly data: Float32Array;
}

export const plane = (width: number, height: number, data = new Float32Array(width * height)): Plane => ({ width, height, data });

/** sRGB-encoded Rec.709 luma (0..1) of an RGBA image; alpha is ignored (inputs are opaque). */
export function lumaPlane(img: RgbaImage): Plane {
  const n = img.width * img.height;
  const out = new Float32Array(n);
  const d = img.data;
  for (let i = 0; i < n; i++) out[i] = (0.2126 * d[i * 4]! + 0.7152 * d[i * 4 + 1]! + 0.0722 * d[i * 4 + 2]!) / 255;
  return plane(img.width, img.height, out);
}

/** An 8-bit ink image (0..255) as a 0..1 plane. */
export function inkPlane(ink: { width: number; height: number; data: Uint8Array }): Plane {
  const out = new Float32Array(ink.width * ink.height);
  for (let i = 0; i < out.length; i++) out[i] = ink.data[i]! / 255;
  return plane(ink.width, ink.height, out);
}

/** Per output index, the source indices and weights of a 1-D area (box) resampling. */
function areaWeights(src: number, dst: number): { start: Int32Array; count: Int32Array; w: Float32Array; stride: number } {
  const scale = src / dst;
  const stride = Math.ceil(scale) + 2;
  const start = new Int32Array(dst);
  const count = new Int32Array(dst);
  const w = new Float32Array(dst * stride);
  for (let o = 0; o < dst; o++) {
    const a = o * scale, b = (o + 1) * scale;
    const i0 = Math.floor(a), i1 = Math.min(src, Math.ceil(b));
    start[o] = i0;
    count[o] = i1 - i0;
    for (let i = i0; i < i1; i++) w[o * stride + i - i0] = (Math.min(b, i + 1) - Math.max(a, i)) / scale;
  }
  return { start, count, w, stride };
}

/** Area-resizes a plane to exactly `width x height` (separable, exact fractional footprints). */
export function areaResize(src: Plane, width: number, height: number): Plane {
  const wx = areaWeights(src.width, width);
  const wy = areaWeights(src.height, height);
  const tmp = new Float32Array(width * src.height);
  for (let y = 0; y < src.height; y++) {
    const row = y * src.width;
    for (let x = 0; x < width; x++) {
      let s = 0;
      const i0 = wx.start[x]!, k0 = x * wx.stride;
      for (let k = 0; k < wx.count[x]!; k++) s += src.data[row + i0 + k]! * wx.w[k0 + k]!;
      tmp[y * width + x] = s;
    }
  }
  const out = new Float32Array(width * height);
  for (let y = 0; y < height; y++) {
    const j0 = wy.start[y]!, k0 = y * wy.stride, cnt = wy.count[y]!;
    const o = y * width;
    for (let k = 0; k < cnt; k++) {
      const wk = wy.w[k0 + k]!;
      const r = (j0 + k) * width;
      for (let x = 0; x < width; x++) out[o + x]! += tmp[r + x]! * wk;
    }
  }
  return plane(width, height, out);
}

/** Normalized 1-D Gaussian kernel, radius ceil(3 sigma) (or `radius` if given). */
export function gaussianKernel(sigma: number, radius = Math.ceil(3 * sigma)): Float32Array {
  const k = new Float32Array(2 * radius + 1);
  let s = 0;
  for (let i = -radius; i <= radius; i++) s += k[i + radius] = Math.exp(-(i * i) / (2 * sigma * sigma));
  for (let i = 0; i < k.length; i++) k[i]! /= s;
  return k;
}

/**
 * Separable Gaussian blur, same size; at the borders the kernel is truncated and renormalized
 * (no padding values are invented).
 */
export function gaussianBlur(p: Plane, sigma: number): Plane {
  const k = gaussianKernel(sigma);
  const r = (k.length - 1) >> 1;
  const { width: W, height: H, data } = p;
  const tmp = new Float32Array(W * H);
  for (let y = 0; y < H; y++) {
    const row = y * W;
    for (let x = 0; x < W; x++) {
      const a = Math.max(0, x - r), b = Math.min(W - 1, x + r);
      let s = 0, ws = 0;
      for (let i = a; i <= b; i++) {
        const w = k[i - x + r]!;
        s += data[row + i]! * w;
        ws += w;
      }
      tmp[row + x] = s / ws;
    }
  }
  const out = new Float32Array(W * H);
  const acc = new Float32Array(W);
  for (let y = 0; y < H; y++) {
    const a = Math.max(0, y - r), b = Math.min(H - 1, y + r);
    acc.fill(0);
    let ws = 0;
    for (let j = a; j <= b; j++) {
      const w = k[j - y + r]!;
      ws += w;
      const row = j * W;
      for (let x = 0; x < W; x++) acc[x]! += tmp[row + x]! * w;
    }
    const o = y * W;
    for (let x = 0; x < W; x++) out[o + x] = acc[x]! / ws;
  }
  return plane(W, H, out);
}

/** Box-downsamples by an integer factor (the last partial block of a row/column is dropped). */
export function boxDownsample(p: Plane, f: number): Plane {
  if (f === 1) return p;
  const W = Math.floor(p.width / f), H = Math.floor(p.height / f);
  const out = new Float32Array(W * H);
  const inv = 1 / (f * f);
  for (let y = 0; y < H; y++) {
    for (let j = 0; j < f; j++) {
      const row = (y * f + j) * p.width;
      for (let x = 0; x < W; x++) {
        let s = 0;
        for (let i = 0; i < f; i++) s += p.data[row + x * f + i]!;
        out[y * W + x]! += s * inv;
      }
    }
  }
  return plane(W, H, out);
}

/**
 * Least-squares a, b minimizing sum (a*r + b - s)^2, with a >= 0: a rendering whose ink runs against
 * the reference (more ink where the source is darker) is not flipped back; it gets a = 0, b = mean s,
 * i.e. it scores like a flat grey image. (a = 0 also when r is constant.)
 */
export function toneFit(r: Plane, s: Plane): { a: number; b: number } {
  const n = r.data.length;
  let mr = 0, ms = 0;
  for (let i = 0; i < n; i++) {
    mr += r.data[i]!;
    ms += s.data[i]!;
  }
  mr /= n;
  ms /= n;
  let cov = 0, vr = 0;
  for (let i = 0; i < n; i++) {
    const dr = r.data[i]! - mr;
    cov += dr * (s.data[i]! - ms);
    vr += dr * dr;
  }
  const a = vr / n > 1e-10 ? Math.max(0, cov / vr) : 0; // std < 1e-5: constant (float noise)
  return { a, b: ms - a * mr };
}

export function affine(p: Plane, a: number, b: number): Plane {
  const out = new Float32Array(p.data.length);
  for (let i = 0; i < out.length; i++) out[i] = a * p.data[i]! + b;
  return plane(p.width, p.height, out);
}

/** 'Valid' separable filtering: output (W - 2r) x (H - 2r), no border handling needed. */
function filterValid(data: Float32Array, W: number, H: number, k: Float32Array): Float32Array {
  const r = (k.length - 1) >> 1;
  const OW = W - 2 * r, OH = H - 2 * r;
  const tmp = new Float32Array(OW * H);
  for (let y = 0; y < H; y++) {
    const row = y * W;
    for (let x = 0; x < OW; x++) {
      let s = 0;
      for (let i = 0; i < k.length; i++) s += data[row + x + i]! * k[i]!;
      tmp[y * OW + x] = s;
    }
  }
  const out = new Float32Array(OW * OH);
  for (let y = 0; y < OH; y++) {
    const o = y * OW;
    for (let i = 0; i < k.length; i++) {
      const w = k[i]!;
      const row = (y + i) * OW;
      for (let x = 0; x < OW; x++) out[o + x]! += tmp[row + x]! * w;
    }
  }
  return out;
}

export const SSIM_WINDOW_SIGMA = 1.5;
export const SSIM_WINDOW_RADIUS = 5; // 11x11
export const SSIM_C1 = 0.01 ** 2;
export const SSIM_C2 = 0.03 ** 2;

/** Mean SSIM (Wang et al. 2004) of two same-size planes in 0..1, over the valid window positions. */
export function ssim(x: Plane, y: Plane): number {
  if (x.width !== y.width || x.height !== y.height) throw new Error('ssim: planes differ in size');
  const { width: W, height: H } = x;
  const k = gaussianKernel(SSIM_WINDOW_SIGMA, SSIM_WINDOW_RADIUS);
  if (W < k.length || H < k.length) throw new Error(`ssim: ${W}x${H} is smaller than the ${k.length}x${k.length} window`);
  const n = W * H;
  const xx = new Float32Array(n), yy = new Float32Array(n), xy = new Float32Array(n);
  for (let i = 0; i < n; i++) {
    const a = x.data[i]!, b = y.data[i]!;
    xx[i] = a * a;
    yy[i] = b * b;
    xy[i] = a * b;
  }
  const mx = filterValid(x.data, W, H, k), my = filterValid(y.data, W, H, k);
  const sxx = filterValid(xx, W, H, k), syy = filterValid(yy, W, H, k), sxy = filterValid(xy, W, H, k);
  let sum = 0;
  for (let i = 0; i < mx.length; i++) {
    const ux = mx[i]!, uy = my[i]!;
    const vx = sxx[i]! - ux * ux, vy = syy[i]! - uy * uy, cxy = sxy[i]! - ux * uy;
    sum += ((2 * ux * uy + SSIM_C1) * (2 * cxy + SSIM_C2)) / ((ux * ux + uy * uy + SSIM_C1) * (vx + vy + SSIM_C2));
  }
  return sum / mx.length;
}

/** Mean of each `cw x ch` cell of a plane (`cols x rows` cells, row-major). */
export function cellMeans(p: Plane, cw: number, ch: number, cols: number, rows: number): Float32Array {
  const out = new Float32Array(cols * rows);
  for (let r = 0; r < rows; r++) {
    for (let y = r * ch; y < (r + 1) * ch; y++) {
      const row = y * p.width;
      for (let c = 0; c < cols; c++) {
        let s = 0;
        for (let x = c * cw; x < (c + 1) * cw; x++) s += p.data[row + x]!;
        out[r * cols + c]! += s;
      }
    }
  }
  const inv = 1 / (cw * ch);
  for (let i = 0; i < out.length; i++) out[i]! *= inv;
  return out;
}

/** Pearson correlation (0 when either side is constant). */
export function pearson(a: ArrayLike<number>, b: ArrayLike<number>): number {
  const n = a.length;
  let ma = 0, mb = 0;
  for (let i = 0; i < n; i++) {
    ma += a[i]!;
    mb += b[i]!;
  }
  ma /= n;
  mb /= n;
  let c = 0, va = 0, vb = 0;
  for (let i = 0; i < n; i++) {
    const da = a[i]! - ma, db = b[i]! - mb;
    c += da * db;
    va += da * da;
    vb += db * db;
  }
  return va > 0 && vb > 0 ? c / Math.sqrt(va * vb) : 0;
}

/** A viewing distance: blur sigma in cell heights and the downsampling factor applied after it. */
export interface Scale {
  readonly name: 'near' | 'far';
  readonly sigmaCells: number;
  readonly downsample: number;
}
export const SCALES: readonly Scale[] = [
  { name: 'near', sigmaCells: 0.5, downsample: 4 },
  { name: 'far', sigmaCells: 1.5, downsample: 8 },
];

/** The reference, blurred and downsampled once per scale, plus its cell means. */
export interface PreparedReference {
  readonly plane: Plane;
  readonly cellWidth: number;
  readonly cellHeight: number;
  readonly columns: number;
  readonly rows: number;
  readonly scaled: ReadonlyMap<Scale['name'], Plane>;
  readonly cells: Float32Array;
}

const blurScaled = (p: Plane, s: Scale, cellHeight: number): Plane => boxDownsample(gaussianBlur(p, s.sigmaCells * cellHeight), s.downsample);

/** Source luminance -> reference for a grid of `columns x rows` cells of `cellWidth x cellHeight` px. */
export function prepareReference(luma: Plane, columns: number, rows: number, cellWidth: number, cellHeight: number): PreparedReference {
  const ref = areaResize(luma, columns * cellWidth, rows * cellHeight);
  const scaled = new Map(SCALES.map((s) => [s.name, blurScaled(ref, s, cellHeight)] as const));
  return { plane: ref, cellWidth, cellHeight, columns, rows, scaled, cells: cellMeans(ref, cellWidth, cellHeight, columns, rows) };
}

export interface Scores {
  /** Mean SSIM after the global tone fit, per scale. */
  readonly ssim: Readonly<Record<Scale['name'], number>>;
  /** The tone fit a, b per scale (a < 0: the rendering is tone-inverted). */
  readonly fit: Readonly<Record<Scale['name'], { a: number; b: number }>>;
  /** Per-cell Pearson r of mean ink vs mean reference luminance. */
  readonly toneR: number;
  /** Mean ink coverage 0..1 of the whole rendering. */
  readonly meanInk: number;
}

/** Scores an ink plane (same size as the reference plane) against a prepared reference. */
export function scoreInk(ink: Plane, ref: PreparedReference): Scores {
  if (ink.width !== ref.plane.width || ink.height !== ref.plane.height) {
    throw new Error(`ink image ${ink.width}x${ink.height} differs from the reference ${ref.plane.width}x${ref.plane.height}`);
  }
  const ssimOut = {} as Record<Scale['name'], number>;
  const fitOut = {} as Record<Scale['name'], { a: number; b: number }>;
  for (const s of SCALES) {
    const r = blurScaled(ink, s, ref.cellHeight);
    const S = ref.scaled.get(s.name)!;
    const fit = toneFit(r, S);
    fitOut[s.name] = fit;
    ssimOut[s.name] = ssim(affine(r, fit.a, fit.b), S);
  }
  const cells = cellMeans(ink, ref.cellWidth, ref.cellHeight, ref.columns, ref.rows);
  let meanInk = 0;
  for (let i = 0; i < ink.data.length; i++) meanInk += ink.data[i]!;
  return { ssim: ssimOut, fit: fitOut, toneR: pearson(cells, ref.cells), meanInk: meanInk / ink.data.length };
}
