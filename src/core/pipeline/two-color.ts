import { SAMPLES, SUB_Y } from '../glyphs/types.js';
import type { RenderParams } from '../params/definitions.js';
import type { RgbaImage } from '../types.js';
import { frame, type Frame, type Ptr } from '../wasm/kernels.js';
import { srgbToLinear } from './linear.js';
import { resampleRgbInFrame } from './resample.js';

/**
 * Two colours per cell (chafa's principle, our own code). A cell drawn with glyph mask m (ink
 * coverage per sub-sample, 0..1), ink colour F and background B shows B + m (F - B). For a given
 * mask the least-squares F and B over samples x_i are closed-form: per channel a regression of x
 * on m, slope S = sum (m_i - mean m) x_i / sum (m_i - mean m)^2, then B = mean x - S mean m and
 * F = B + S. Its residual is SS(x) - |S_xm|^2 / S_mm, so the best glyph is the one with the largest
 * |S_xm|^2 / S_mm: three dot products per candidate. A cell whose best gain is negligible is flat:
 * one colour, drawn as a blank (or a full block when light).
 *
 * The glyph is chosen on cube-root encoded samples (the compression of OKLab / CIELAB lightness),
 * so a shape is judged as the eye sees it: in linear light a highlight's small differences
 * outweigh the shadows' large ones. Its colours are then fitted in linear light, which keeps the
 * cell's mean colour exact. (bench:quality, blocks+colour, 6 images x 80/160 columns: SSIM fine
 * 0.9291 -> 0.9316, coarse 0.9839 -> 0.9856, ΔE unchanged.)
 */
export interface TwoColorGlyphs {
  /** Sub-cell templates of the set, SAMPLES per glyph (unblurred: the mask as drawn). */
  readonly templates: Float32Array;
  /** Glyph indices that may be chosen for a shaped cell. */
  readonly candidates: Int32Array;
  /** Per glyph: the glyph with the complementary mask (1 - m), or -1. */
  readonly complement: Int32Array;
  /** Glyphs for a flat (one-colour) cell: the blank, and the full block (or the blank when the set has none). */
  readonly blank: number;
  readonly full: number;
}

export interface MaskStats {
  /** Centred masks (m_i - mean m), SAMPLES per candidate, in candidate order. */
  readonly centred: Float32Array;
  readonly invSmm: Float32Array;
  readonly mean: Float32Array;
  /** Per glyph of the set: its candidate index, or -1 (the blank, the full block). */
  readonly candidateOf: Int32Array;
  /**
   * The scored candidates (a uniform mask scores nothing; of a complementary pair, the first),
   * two by two for the kernel's two lanes: `pairs` sample-major (pair, sample, lane), their
   * `pairInv` (0 in a lane left empty) and candidate indices `pairK` (-1 there).
   */
  readonly pairs: Float32Array;
  readonly pairInv: Float32Array;
  readonly pairK: Int32Array;
}

const statsCache = new WeakMap<Int32Array, MaskStats>();

/** Cube root on 0..1 by table (linear between 4096 steps; the kernel interpolates): glyph choice needs no more. */
const CBRT_STEPS = 4096;
const CBRT = (() => {
  const t = new Float32Array(CBRT_STEPS + 2);
  for (let i = 0; i <= CBRT_STEPS + 1; i++) t[i] = Math.cbrt(Math.min(1, i / CBRT_STEPS));
  return t;
})();

/** A glyph set's mask statistics and the kernel's lane-pair layout of them, computed once per set. */
export function maskStats(set: TwoColorGlyphs): MaskStats {
  const hit = statsCache.get(set.candidates);
  if (hit) return hit;
  const n = set.candidates.length;
  const centred = new Float32Array(n * SAMPLES), invSmm = new Float32Array(n), mean = new Float32Array(n);
  for (let k = 0; k < n; k++) {
    const o = set.candidates[k]! * SAMPLES;
    let m = 0;
    for (let i = 0; i < SAMPLES; i++) m += set.templates[o + i]!;
    m /= SAMPLES;
    let s = 0;
    for (let i = 0; i < SAMPLES; i++) {
      const d = set.templates[o + i]! - m;
      centred[k * SAMPLES + i] = d;
      s += d * d;
    }
    mean[k] = m;
    invSmm[k] = s > 1e-4 ? 1 / s : 0; // a uniform mask (shade glyph) draws no shape
  }
  // A glyph and its complement (1 - m) explain a cell equally well (same |S_xm|^2 / S_mm): only
  // the first of each pair is scored, the orientation is chosen after.
  const scored = new Uint8Array(n).fill(1);
  for (let k = 0; k < n; k++) {
    const c = set.complement[set.candidates[k]!]!;
    for (let j = 0; j < k; j++) if (scored[j] && set.candidates[j] === c) scored[k] = 0;
  }
  const candidateOf = new Int32Array(set.complement.length).fill(-1);
  for (let k = 0; k < n; k++) candidateOf[set.candidates[k]!] = k;
  const ks: number[] = [];
  for (let k = 0; k < n; k++) if (invSmm[k] !== 0 && scored[k]) ks.push(k);
  const np = Math.ceil(ks.length / 2);
  const pairs = new Float32Array(np * 2 * SAMPLES), pairInv = new Float32Array(np * 2), pairK = new Int32Array(np * 2).fill(-1);
  ks.forEach((k, j) => {
    const q = j >> 1, lane = j & 1;
    pairInv[j] = invSmm[k]!;
    pairK[j] = k;
    for (let i = 0; i < SAMPLES; i++) pairs[(q * SAMPLES + i) * 2 + lane] = centred[k * SAMPLES + i]!;
  });
  const stats = { centred, invSmm, mean, candidateOf, pairs, pairInv, pairK };
  statsCache.set(set.candidates, stats);
  return stats;
}

/**
 * Complementary masks of a glyph set: pairs whose templates sum to about 1 everywhere. In
 * WebAssembly (assembly/two-color.ts complements; test/reference/two-color.ts has the TypeScript
 * as its twin): once per set, but n^2 x 32 operations that a first render ran interpreted.
 */
export function complements(templates: Float32Array, candidates: Int32Array, glyphCount: number): Int32Array {
  const nc = candidates.length;
  const f = frame();
  const pt = f.f32(templates.length), pc = f.f32(nc), po = f.f32(glyphCount);
  const k = f.ready();
  f.viewF32(pt, templates.length).set(templates);
  f.viewI32(pc, nc).set(candidates);
  const out = f.viewI32(po, glyphCount);
  out.fill(-1);
  k.complements(pt, pc, nc, po);
  return out.slice();
}

/**
 * A matcher's colour samples: the SUB_X x SUB_Y linear RGB raster of the cells (`width` samples
 * per row), or the image it is resampled from (resample.ts resampleRgb(), alpha over `ground`),
 * which then goes straight into the kernel's memory: no copy of the raster out and back in (3.7
 * MB at 160 columns: 1.7 ms measured alone, and an allocation per render or video frame).
 */
export type ColorSamples = Float32Array | { readonly image: RgbaImage; readonly ground: number };

/** The samples in frame `f`, after whatever it holds: their offset there (f.ready() called). */
function samplesInFrame(f: Frame, rgb: ColorSamples, width: number, rows: number): Ptr {
  if (!(rgb instanceof Float32Array)) return resampleRgbInFrame(f, rgb.image, width, rows * SUB_Y, rgb.ground);
  const n = width * rows * SUB_Y * 3;
  const p = f.f32(n);
  f.ready();
  f.viewF32(p, n).set(rgb.subarray(0, n));
  return p;
}

/**
 * Chooses each cell's glyph and its ink and background colours (linear light, 3 floats per cell)
 * from the cell's SUB_X x SUB_Y linear RGB samples (`rgb`, row-major, `width` samples per row).
 * `lightInk`: of two complementary glyphs giving the same picture, take the one whose ink is the
 * lighter colour (light ink on a dark ground, as the text formats read); false: the darker.
 *
 * Video (`previous` cells, `stable` per cell or null for all, `hysteresis` 0..1): a still cell
 * keeps its previous glyph, or its previous flat look, unless the best one leaves less than
 * (1 - hysteresis) of its residual error; a glyph and its complement count as the same shape.
 *
 * In WebAssembly (assembly/two-color.ts; the scalar twin is test/reference/two-color.ts): as one
 * JavaScript call over every cell it ran interpreted on a process's first render, 250 ms of a
 * 0.9 s `v2a render --color --charset blocks` at 80 columns.
 */
export function matchTwoColor(rgb: ColorSamples, width: number, cols: number, rows: number, set: TwoColorGlyphs, lightInk: boolean,
  cells: Uint16Array, fg: Float32Array, bg: Float32Array,
  previous: Uint16Array | null = null, stable: Uint8Array | null = null, hysteresis = 0): void {
  const s = maskStats(set);
  const n = cols * rows, nc = set.candidates.length, glyphs = set.complement.length, np = s.pairInv.length / 2;
  const f = frame();
  const pRgb = samplesInFrame(f, rgb, width, rows);
  const pCbrt = f.f32(CBRT.length);
  const pCentred = f.f32(nc * SAMPLES), pInv = f.f32(nc), pMean = f.f32(nc), pCand = f.f32(nc);
  const pComp = f.f32(glyphs), pOf = f.f32(glyphs), pPairs = f.f32(np * 2 * SAMPLES), pPairInv = f.f32(np * 2), pPairK = f.f32(np * 2);
  const pCells = f.bytes(n * 2), pFg = f.f32(n * 3), pBg = f.f32(n * 3);
  const pPrev = previous ? f.bytes(n * 2) : 0, pStable = previous && stable ? f.bytes(n) : 0;
  const pWork = f.bytes(6 * SAMPLES * 8);
  const k = f.ready();
  f.viewF32(pCbrt, CBRT.length).set(CBRT);
  f.viewF32(pCentred, nc * SAMPLES).set(s.centred);
  f.viewF32(pInv, nc).set(s.invSmm);
  f.viewF32(pMean, nc).set(s.mean);
  f.viewI32(pCand, nc).set(set.candidates);
  f.viewI32(pComp, glyphs).set(set.complement);
  f.viewI32(pOf, glyphs).set(s.candidateOf);
  f.viewF32(pPairs, np * 2 * SAMPLES).set(s.pairs);
  f.viewF32(pPairInv, np * 2).set(s.pairInv);
  f.viewI32(pPairK, np * 2).set(s.pairK);
  if (previous) f.viewU16(pPrev, n).set(previous.subarray(0, n));
  if (previous && stable) f.viewU8(pStable, n).set(stable.subarray(0, n));
  k.matchTwoColor(pRgb, width, cols, rows, pCbrt, pCentred, pInv, pMean, pCand, pComp, pOf, glyphs, pPairs, pPairInv, pPairK, np,
    set.blank, set.full, lightInk ? 1 : 0, pCells, pFg, pBg, pPrev, pStable, hysteresis, pWork);
  cells.set(f.viewU16(pCells, n));
  fg.set(f.viewF32(pFg, n * 3));
  bg.set(f.viewF32(pBg, n * 3));
}

/**
 * Braille with two colours: the 2x4 dots of a cell split by luminance into two groups (the split
 * of the 8 dot values with the least within-group variance: Otsu on 8 values), the lighter group
 * drawn as dots (`lightInk`; else the darker), then ink and background by least squares on the
 * glyph's measured mask. A cell whose dots differ by less than `flat` is one colour.
 * Video (`previous`, `stable`, `hysteresis` as for matchTwoColor): a still cell keeps its previous
 * pattern while that split's within-group variance is within the hysteresis margin of the best,
 * and the dots are split on `filteredLuma` (the temporal filter's sRGB-encoded luminance, same
 * sample grid) instead of the raw frame, whose sensor noise reorders near-equal dots every frame.
 * In WebAssembly (assembly/two-color.ts; the scalar twin is test/reference/two-color.ts).
 */
export function matchBrailleTwoColor(rgb: ColorSamples, width: number, cols: number, rows: number, templates: Float32Array, lightInk: boolean,
  cells: Uint16Array, fg: Float32Array, bg: Float32Array,
  previous: Uint16Array | null = null, stable: Uint8Array | null = null, hysteresis = 0, filteredLuma: Float32Array | null = null): void {
  const n = cols * rows, samples = n * SAMPLES;
  const f = frame();
  const pRgb = samplesInFrame(f, rgb, width, rows);
  const pT = f.f32(templates.length);
  const pCells = f.bytes(n * 2), pFg = f.f32(n * 3), pBg = f.f32(n * 3);
  const pPrev = previous ? f.bytes(n * 2) : 0, pStable = previous && stable ? f.bytes(n) : 0;
  // The filtered luminance in linear light, here: the kernel's pow would not be V8's to the bit.
  const pLuma = filteredLuma ? f.bytes(samples * 8) : 0;
  const pWork = f.bytes(3 * SAMPLES * 8 + 64);
  const k = f.ready();
  f.viewF32(pT, templates.length).set(templates);
  if (previous) f.viewU16(pPrev, n).set(previous.subarray(0, n));
  if (previous && stable) f.viewU8(pStable, n).set(stable.subarray(0, n));
  if (filteredLuma) {
    const lin = f.viewF64(pLuma, samples);
    for (let i = 0; i < samples; i++) lin[i] = srgbToLinear(filteredLuma[i]!);
  }
  k.matchBrailleTwoColor(pRgb, width, cols, rows, pT, lightInk ? 1 : 0, pCells, pFg, pBg, pPrev, pStable, hysteresis, pLuma, pWork);
  cells.set(f.viewU16(pCells, n));
  fg.set(f.viewF32(pFg, n * 3));
  bg.set(f.viewF32(pBg, n * 3));
}

/**
 * Whether a render carries two colours per cell: `color` on, `cellColors` fg-bg (auto: for blocks
 * and dots), and neither `edges` nor `dither`, which are glyph-by-tone looks of one ink colour.
 */
export function usesTwoColors(p: Pick<RenderParams, 'color' | 'cellColors' | 'charset' | 'edges' | 'dither'>): boolean {
  if (!p.color || p.edges || p.dither) return false;
  return p.cellColors === 'fg-bg' || (p.cellColors === 'auto' && (p.charset === 'blocks' || p.charset === 'dots'));
}
