import { V2aError } from '../errors.js';
import { lazyProperty } from '../lazy.js';
import type { RgbaImage } from '../types.js';
import { copyKept, frame, mirrorKept, reserveKept, type Frame, type KernelExports, type Ptr } from '../wasm/kernels.js';
import { encLut, SRGB8_TO_LINEAR } from './linear.js';
import type { Raster } from './raster.js';
import { scratch } from './scratch.js';

/** Box-filter taps from a source axis of `src` samples onto `dst` samples: exact area overlap. */
export interface Taps {
  readonly start: Int32Array;
  readonly count: Int32Array;
  readonly offset: Int32Array;
  readonly weight: Float32Array;
}

export function boxTaps(src: number, dst: number): Taps {
  const key = `${src} ${dst}`;
  let t = tapsCache.get(key);
  if (!t) {
    t = computeTaps(src, dst);
    if (tapsCache.size >= MAX_TAPS) tapsCache.delete(tapsCache.keys().next().value!);
    tapsCache.set(key, t);
  }
  return t;
}

/** Taps by axis sizes (shared, read only): every frame of a video and every re-render reuses them. */
const tapsCache = new Map<string, Taps>();
const MAX_TAPS = 32;

/**
 * In WebAssembly (assembly/kernels.ts boxTaps; test/reference/resample.ts boxTaps is its twin): a
 * first render built its three sets interpreted, a boxed double per operation.
 */
function computeTaps(src: number, dst: number): Taps {
  // Each output reads at most ceil(src / dst) + 1 source samples.
  const most = dst * (Math.ceil(src / dst) + 2);
  const f = frame();
  const ps = f.f32(dst), pc = f.f32(dst), po = f.f32(dst), pw = f.f32(most);
  const n = f.ready().boxTaps(src, dst, ps, pc, po, pw);
  return { start: f.viewI32(ps, dst).slice(), count: f.viewI32(pc, dst).slice(), offset: f.viewI32(po, dst).slice(), weight: f.viewF32(pw, n).slice() };
}

export interface Resampled {
  /**
   * Perceptual luminance (Rec. 709 weights on linear light, re-encoded with the sRGB curve). Kept
   * in kernel memory (wasm/kernels.ts keptAt()); `data` is copied out when first read, which must
   * be before the thread's next resample of a luminance.
   */
  readonly luma: Raster;
  /** Mean linear-light RGB of each character cell, 3 floats per cell. */
  readonly cellLinearRgb: Float32Array;
}

/**
 * Area-correct resampling of an sRGB image into a raster of `cols*subX x rows*subY` samples.
 * Light is averaged in linear space; alpha is composited over `groundLinear` (0 black, 1 white),
 * the ground that renders as a blank cell. One streaming pass over the source: a horizontal pass
 * per source row (cached while consecutive output rows share it), then vertical accumulation.
 * With `cellLuma` (cols * rows), also each cell's mean luminance (cellMeans() of the raster).
 * `colors: 'later'` (video frames whose colours may go unread) skips the per-pixel RGB work:
 * `cellLinearRgb` is then resampled from `img` when first read, the same values, so `img`'s
 * pixels must stay as they are until then. At 200 columns of a 640 x 480 frame the RGB is about a
 * fifth of the resample. `luma: 'copied'` (video frames, whose temporal filter reads the raster
 * at once in JavaScript) copies the luminance out instead of keeping it in kernel memory, where
 * it would only take cache from the frame's other rasters (200 columns: 6.62 -> 6.68 ms a frame).
 */
export function resampleImage(img: RgbaImage, cols: number, rows: number, subX: number, subY: number, groundLinear: number, cellLuma?: Float32Array, colors: 'now' | 'later' = 'now',
  luma: 'kept' | 'copied' = 'kept'): Resampled {
  const later = colors === 'later';
  const r = resampleInto(img, cols, rows, subX, subY, groundLinear, !later, luma, cellLuma);
  const resampled = { luma: r.luma!, cellLinearRgb: r.cellLinearRgb! };
  if (later) lazyProperty(resampled, 'cellLinearRgb', laterRgbOf(img, cols, rows, subX, subY, groundLinear));
  return resampled;
}

/**
 * resampleImage()'s `cellLinearRgb` alone, computed when first read (the same values): a video
 * frame's colours on a thread other than the one that resampled its luminance. `img`'s pixels
 * must stay as they are until then.
 */
export function laterCellRgb(img: RgbaImage, cols: number, rows: number, subX: number, subY: number, groundLinear: number): { readonly cellLinearRgb: Float32Array } {
  const o = {} as { cellLinearRgb: Float32Array };
  lazyProperty(o, 'cellLinearRgb', laterRgbOf(img, cols, rows, subX, subY, groundLinear));
  return o;
}

/**
 * cellRgbOf() for a first read later, from the pixels `img` holds now: that read checks a sample
 * of them (PRINT_WORDS, spread over the image, and its size) and throws, naming the rule, if they
 * changed in between, rather than return colours of another picture (a buffer reused for the
 * next frame before the last result's colours were read).
 */
function laterRgbOf(img: RgbaImage, cols: number, rows: number, subX: number, subY: number, groundLinear: number): () => Float32Array {
  const pixels: RgbaImage = { width: img.width, height: img.height, data: img.data };
  const print = pixelPrint(pixels.data);
  return () => {
    const now = pixelPrint(pixels.data);
    if (now.some((v, i) => v !== print[i])) {
      // A V2aError, so that a caller can tell it from a bug by its code (it surfaces far from the
      // render: in JSON.stringify(result), structuredClone or a format).
      throw new V2aError('image-changed', 'the image changed before its colours were read: mono art computes them (json\'s chroma, the report\'s colourfulness) from its pixels on first read (keep the pixels until then, or read the colours first)');
    }
    return cellRgbOf(pixels, cols, rows, subX, subY, groundLinear);
  };
}

/** 32-bit words of the pixels laterRgbOf() checks: a sample (a whole hash would cost a pass over them). */
const PRINT_WORDS = 256;
/** The golden ratio's fraction: sample i sits at frac(i * φ) of the pixels, on no row or diagonal pattern. */
const PHI = 0.6180339887498949;

/**
 * PRINT_WORDS words of `data` at a low-discrepancy spread, then its length. An even spread fell
 * on one diagonal of a square image, so a change everywhere else went unseen.
 */
function pixelPrint(data: RgbaImage['data']): Float64Array {
  const out = new Float64Array(PRINT_WORDS + 1);
  const words = data.length >>> 2;
  for (let i = 0; i < PRINT_WORDS && words > 0; i++) {
    const at = Math.floor(((i * PHI) % 1) * words) * 4;
    out[i] = data[at]! + 256 * (data[at + 1]! + 256 * (data[at + 2]! + 256 * data[at + 3]!));
  }
  out[PRINT_WORDS] = data.length;
  return out;
}

/**
 * Linear-light RGB of the source at `W x H` samples (3 floats per sample, row-major), area
 * averaged, alpha composited over `groundLinear`: colour below cell resolution, for two colours
 * per cell. The kernel's colour pass with one sample per cell (the same taps and sums the
 * TypeScript pass had: test/reference/color-raster.ts); in JavaScript it ran interpreted on a
 * process's first such render (about 20 ms of a CLI call at 80 columns).
 */
export function resampleRgb(img: RgbaImage, W: number, H: number, groundLinear: number): Float32Array {
  return cellRgbOf(img, W, H, 1, 1, groundLinear);
}

/** resampleRgb() in frame `f` (allocating there): the raster's offset, valid until the next frame(). No copy out. */
export function resampleRgbInFrame(f: Frame, img: RgbaImage, W: number, H: number, groundLinear: number): Ptr {
  return resampleInFrame(f, img, W, H, 1, 1, groundLinear, true, null, false).pRgb;
}

function cellRgbOf(img: RgbaImage, cols: number, rows: number, subX: number, subY: number, groundLinear: number): Float32Array {
  return resampleInto(img, cols, rows, subX, subY, groundLinear, true, null).cellLinearRgb!;
}

/**
 * The resampled luminance: kept in kernel memory, where the Director and the detail stage read it
 * (wasm/kernels.ts keptAt()), and copied out to JavaScript when `data` is first read (copyKept()).
 * A class, not a lazy property: the same shape on every frame of a video.
 */
class KeptLuma implements Raster {
  private copy: Float32Array | null = null;
  constructor(readonly width: number, readonly height: number) {}
  get data(): Float32Array {
    return (this.copy ??= copyKept(this, scratch('resample.luma', this.width * this.height)));
  }
}

/** resampleImage()'s kernel run: the luma raster (into scratch) and the cell RGB, each only if asked for. */
function resampleInto(img: RgbaImage, cols: number, rows: number, subX: number, subY: number, groundLinear: number, rgb: boolean, want: 'kept' | 'copied' | null, cellLuma?: Float32Array): { luma?: Raster; cellLinearRgb?: Float32Array } {
  const W = cols * subX, H = rows * subY;
  // The luminance into the kept raster below the frames (wasm/kernels.ts reserveKept()), where
  // the Director and the detail stage read it; copied out to JavaScript when its data is read.
  const kept = want === 'kept' ? reserveKept(W * H) : null;
  const f = frame();
  const { k, pLuma, pRgb, pMeans } = resampleInFrame(f, img, cols, rows, subX, subY, groundLinear, rgb, want === null ? null : kept ?? 'frame', !!cellLuma);
  const cellLinearRgb = rgb ? f.viewF32(pRgb, cols * rows * 3).slice() : undefined;
  // The colours alone (read later): the raster of the render that is using it stays.
  if (want === null) return { cellLinearRgb };
  let luma: Raster;
  if (kept === null) {
    const data = scratch('resample.luma', W * H);
    data.set(f.viewF32(pLuma, W * H));
    luma = { width: W, height: H, data };
  } else {
    luma = new KeptLuma(W, H);
    mirrorKept(luma);
  }
  // raster.ts cellMeans() of the luminance while it is in the module's memory (one copy less).
  if (cellLuma) {
    k.cellMeans(pLuma, W, cols, rows, subX, subY, pMeans);
    cellLuma.set(f.viewF32(pMeans, cols * rows));
  }
  return { luma, cellLinearRgb };
}

/**
 * resampleInto()'s kernel run in frame `f` (allocating there, after whatever `f` holds): the
 * luma raster at `lumaAt` (room for it outside the frame, 'frame' for room in it, null for none;
 * the frame's taps may open a frame of their own first: computeTaps()), the cell RGB at
 * `pRgb` if asked for, and room for the cell means at `pMeans` with `means`. The frame's
 * pointers stay valid until the next frame().
 */
function resampleInFrame(f: Frame, img: RgbaImage, cols: number, rows: number, subX: number, subY: number, groundLinear: number, rgb: boolean, lumaAt: Ptr | 'frame' | null, means: boolean): { k: KernelExports; pLuma: Ptr; pRgb: Ptr; pMeans: Ptr } {
  const wantLuma = lumaAt !== null;
  const W = cols * subX;
  const H = rows * subY;
  const sw = img.width;
  const xt = boxTaps(sw, W), ct = boxTaps(sw, cols), yt = boxTaps(img.height, H);
  const taps = [xt, ct, yt];
  // In WebAssembly (assembly/kernels.ts), in bands of output rows: only the source rows a band
  // needs are copied in (at most WINDOW_PIXELS, or what one output row needs), so a huge image
  // does not grow the module's memory, which never shrinks, to its whole size.
  const bands: number[] = [];
  let windowRows = 0;
  const bandRows = Math.ceil(H / BANDS);
  for (let ya = 0; ya < H;) {
    const s0 = yt.start[ya]!;
    let yb = ya + 1;
    while (yb < H && yb - ya < bandRows && (yt.start[yb]! + yt.count[yb]! - s0) * sw <= WINDOW_PIXELS) yb++;
    const end = yt.start[yb - 1]! + yt.count[yb - 1]!;
    bands.push(ya, yb, s0, end);
    windowRows = Math.max(windowRows, end - s0);
    ya = yb;
  }
  const enc = encLut();
  const pPx = f.bytes(windowRows * sw * 4);
  const pTaps = f.bytes(12 * 4);
  const tapPtrs = taps.flatMap((t) => [f.f32(t.start.length), f.f32(t.count.length), f.f32(t.offset.length), f.f32(t.weight.length)]);
  const pLut = f.f32(256), pEnc = f.f32(enc.length);
  const pWork = f.f32(sw * 4 + W * 3 + 1 + cols * 6 + 1536);
  const pLuma = lumaAt === 'frame' ? f.f32(W * H) : lumaAt ?? 0, pRgb = rgb ? f.f32(cols * rows * 3) : 0, pMeans = means && wantLuma ? f.f32(cols * rows) : 0;
  const k = f.ready();
  f.viewI32(pTaps, 12).set(tapPtrs);
  taps.forEach((t, j) => {
    f.viewI32(tapPtrs[4 * j]!, t.start.length).set(t.start);
    f.viewI32(tapPtrs[4 * j + 1]!, t.count.length).set(t.count);
    f.viewI32(tapPtrs[4 * j + 2]!, t.offset.length).set(t.offset);
    f.viewF32(tapPtrs[4 * j + 3]!, t.weight.length).set(t.weight);
  });
  f.viewF32(pLut, 256).set(SRGB8_TO_LINEAR);
  f.viewF32(pEnc, enc.length).set(enc);
  const window = f.viewU8(pPx, windowRows * sw * 4);
  for (let b = 0; b < bands.length; b += 4) {
    const [ya, yb, s0, end] = [bands[b]!, bands[b + 1]!, bands[b + 2]!, bands[b + 3]!];
    window.set(img.data.subarray(s0 * sw * 4, end * sw * 4));
    k.resample(pPx, s0, sw, cols, rows, subX, subY, groundLinear, pTaps, pLut, pEnc, pWork, pLuma, pRgb, wantLuma ? 1 : 0, rgb ? 1 : 0, ya, yb);
  }
  return { k, pLuma, pRgb, pMeans };
}

/** At least this many calls, so V8 can tier the kernel up between them on a first render. */
const BANDS = 4;
/** Source pixels copied into WebAssembly memory at a time (4 MiB of RGBA). */
const WINDOW_PIXELS = 1 << 20;
