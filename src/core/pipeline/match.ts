import { SAMPLES, SUB_Y } from '../glyphs/types.js';
import { frame, nestedFrame, type Frame, type Ptr } from '../wasm/kernels.js';
import { refineInFrame, refineLayout, type FineTable } from './refine.js';
import { TAN_22_5, type CellStructure } from './structure.js';

/**
 * Weight of the cell-mean (tone) error relative to the per-sample (shape) error, measured with
 * bench:quality together with the viewing blur (1.2 beat 0.3, 0.6, 2 and 3.5).
 */
export const TONE_WEIGHT = 1.2;

/**
 * A flat cell has no shape to match, yet the texture a glyph would add there (its blurred
 * template's own spread) weighed more than tones apart by 0.1: two greys (110 and 140) merged
 * into one glyph and a square vanished, and the whole ramp (glyphStrategy fixed) drew greys 105
 * to 135 alike. Its tone weighs up to 1 + FLAT_TONE_BOOST times TONE_WEIGHT, fully at no spread
 * and not at all from FLAT_SPREAD (the samples' root sum of squares about their mean, in target
 * units) up. bench:quality, mono, 26 cases: contour r and tone r unchanged in the third decimal
 * (moon's cell r 0.802 -> 0.805 at 80 columns); 3 and 0.3 made coffee at 160 columns a miss, 8
 * traded tone r for contour r (0.826 -> 0.820 on four images).
 */
export const FLAT_TONE_BOOST = 3;
export const FLAT_SPREAD = 0.15;

/**
 * Margin by which a cell keeps its left neighbour's glyph over its own best (when not dithering):
 * neighbours of near-equal tone then share a glyph instead of alternating between glyphs of
 * near-equal error (the "brick wall" of mid-tone regions). Measured on 8 photos x 80/160 columns:
 * of horizontally adjacent cells whose source tones differ by < 0.02, 20.0 % had different glyphs
 * at 0, 12.4 % at 0.05 (7.0 % at 0.15, which cost contour and tone scores; 0.05 kept them).
 */
export const NEIGHBOUR_CALM = 0.05;

export interface GlyphTable {
  /** Sub-cell templates, SAMPLES floats per glyph. */
  readonly templates: Float32Array;
  /** Mean ink per glyph. */
  readonly coverage: Float32Array;
}

export interface MatchOptions {
  /** Ink of a fully "on" target: the densest glyph of the ramp. */
  readonly scale: number;
  /** Codebook glyph indices, ascending by coverage. */
  readonly candidates: Int32Array;
  /** Glyph indices of - / | \ (DIR_* order), or null when the set has none. */
  readonly directional: Int32Array | null;
  /**
   * cellStructure() of the cells, or 'target': of `target` itself (width x rows * SUB_Y), taken
   * in this call's frame so the raster is copied into the module once.
   */
  readonly structure: CellStructure | 'target' | null;
  /** 0..1: how strongly a coherent contour favours its directional glyph. */
  readonly structureAmount: number;
  readonly dither: boolean;
  /** Temporal hysteresis: previous glyphs, per-cell stability, strength 0..1. */
  readonly previous?: Uint16Array | null;
  readonly stable?: Uint8Array | null;
  readonly hysteresis?: number;
  /** Blur the target with viewBlur() first (width x rows * SUB_Y samples). */
  readonly blur?: boolean;
  /** Neighbour margin (default NEIGHBOUR_CALM; 0: each cell's own best). */
  readonly calm?: number;
  /**
   * Then choose the glyph again on the fine raster (pipeline/refine.ts), from the fine shapes of
   * the table's glyphs, in the cells whose 4 x 8 samples' standard deviation is at least
   * `minSpread` (0: every cell) and whose glyph is not one of `keep`; the others keep the 4 x 8
   * choice. For still images without dithering (the error diffusion and a video's hysteresis
   * decide at 4 x 8). `candidates`: the fine stage's codebook, when it is not `candidates` above;
   * its search is exact, so in the cells it chooses again the 4 x 8 choice (from a subset of
   * them) only gives a starting point that prunes the rest.
   */
  readonly refine?: { readonly table: FineTable; readonly candidates?: Int32Array; readonly minSpread: number; readonly keep?: Int32Array | null } | null;
}

/**
 * Chooses each cell's glyph by shape: least squares between the cell's SUB_X x SUB_Y target ink
 * (scaled to the ramp) and each candidate's measured template, plus a tone term on the means.
 * Candidates are the codebook glyphs nearest in coverage (the tone term rules out the others
 * anyway). Floyd-Steinberg (serpentine) diffuses the cell-mean error when dithering; otherwise a
 * cell keeps its left neighbour's glyph when that is within `calm` of its best.
 * With `blur`, the target goes through viewBlur() first, in the same WebAssembly frame (the
 * blurred raster is never copied out and back in).
 */
export function matchGlyphs(target: Float32Array, width: number, cols: number, rows: number, table: GlyphTable, o: MatchOptions, out: Uint16Array): Uint16Array {
  const samples = width * rows * SUB_Y;
  const f = frame();
  const pt = f.f32(samples), pb = o.blur ? f.f32(samples) : 0;
  f.ready();
  f.viewF32(pt, samples).set(target.subarray(0, samples));
  return matchInFrame(f, pt, pb, width, cols, rows, table, o, out);
}

/**
 * matchGlyphs() of the target at `pt` (width x rows * SUB_Y f32) in frame `f`, allocating there;
 * `pb`: room for the target's viewing blur (as large) when `o.blur`, else 0. render.ts matches the
 * detail stage's result where it lies (pipeline/detail.ts detailInFrame), without a copy.
 */
export function matchInFrame(f: Frame, pt: Ptr, pb: Ptr, width: number, cols: number, rows: number, table: GlyphTable, o: MatchOptions, out: Uint16Array): Uint16Array {
  const { templates, coverage } = table;
  const { g2, gm, spread } = templateStats(templates);
  const count = g2.length, ncov = coverage.length, nc = o.candidates.length, n = cols * rows;
  const dir = o.directional, st = o.structure;
  const sAmt = st && dir ? o.structureAmount : 0;
  const prev = o.previous ?? null, stable = o.stable ?? null;
  // In WebAssembly (assembly/match.ts): candidate search, substitutions and error diffusion in
  // the TypeScript's order, the dot products in f32 (test/reference/match.ts is the scalar twin).
  const ptmp = o.blur ? f.f32(3 * width) : 0;
  const ptpl = f.f32(count * N), pg2 = f.f32(count), pgm = f.f32(count), psp = f.f32(count), pcov = f.f32(ncov);
  const pcand = f.f32(nc), pdir = f.f32(4);
  const pdn = sAmt > 0 ? f.bytes(n) : 0, pst = sAmt > 0 ? f.f32(n) : 0;
  const pprev = prev ? f.bytes(n * 2) : 0, pstable = prev && stable ? f.bytes(n) : 0;
  const pout = f.bytes(n * 2);
  // The kernel's scratch, then a row of cells' samples and sums loaded ahead (without dithering).
  const pwork = f.bytes(N * 4 + 8 + (2 * nc + 1) * 8 + (cols + 2) * 8 + 16 + cols * (N * 4 + 16));
  const fine = o.refine ?? null;
  const fineBook = fine?.candidates ?? o.candidates;
  const fineAt = fine ? refineLayout(f, count, fineBook.length) : null;
  const k = f.ready();
  f.viewF32(ptpl, count * N).set(templates.subarray(0, count * N));
  f.viewF32(pg2, count).set(g2);
  f.viewF32(pgm, count).set(gm);
  f.viewF32(psp, count).set(spread);
  f.viewF32(pcov, ncov).set(coverage);
  f.viewI32(pcand, nc).set(o.candidates);
  if (sAmt > 0) {
    f.viewI32(pdir, 4).set(dir!.subarray(0, 4));
    // 'target': the kernel takes each cell's tensor from pt itself, only in the cells where a
    // directional glyph can still win (at the Director's usual amount, few: at 160 columns the
    // whole raster's tensor was about 5 % of a render).
    if (st !== 'target') {
      f.viewU8(pdn, n).set(st!.direction.subarray(0, n));
      f.viewF32(pst, n).set(st!.strength.subarray(0, n));
    }
  }
  if (prev) f.viewU16(pprev, n).set(prev.subarray(0, n));
  if (prev && stable) f.viewU8(pstable, n).set(stable.subarray(0, n));
  if (o.blur) k.viewBlur(pt, width, rows * SUB_Y, pb, ptmp);
  for (let y = 0; y < rows; y += BAND) {
    k.matchGlyphs(o.blur ? pb : pt, width, cols, rows, ptpl, pg2, pgm, psp, count, pcov, ncov, o.scale,
      pcand, nc, pdir, pdn, pst, sAmt, o.dither ? 1 : 0, pprev, pstable, o.hysteresis ?? 0, TONE_WEIGHT, FLAT_TONE_BOOST, FLAT_SPREAD, o.calm ?? NEIGHBOUR_CALM, pout, pwork, y, Math.min(rows, y + BAND),
      sAmt > 0 && st === 'target' ? pt : 0, TAN_22_5);
  }
  // The fine re-ranking reads the unblurred target (it blurs on its own raster) and rewrites pout.
  if (fine) {
    refineInFrame(f, k, fineAt!, fine.table, pt, width, cols, rows,
      { candidates: fineBook, scale: o.scale, toneWeight: TONE_WEIGHT, calm: o.calm ?? NEIGHBOUR_CALM, minSpread: fine.minSpread, keep: fine.keep ?? null }, pout, BAND);
  }
  out.set(f.viewU16(pout, n));
  return out;
}

const N = SAMPLES;
/**
 * Cell rows per kernel call. V8 runs a wasm function first as baseline (Liftoff) code, here about
 * 3x slower than optimised, and switches only between calls (no on-stack replacement): in bands,
 * a fresh process's first render moves to the optimised code partway through (measured: its
 * first call 7.8 -> 5.5 ms at 160x60 cells). The state between bands lives in `work`.
 */
const BAND = 2;

interface TemplateStats {
  /** Sum of squares, mean and zero-mean norm of each template. */
  readonly g2: Float32Array;
  readonly gm: Float32Array;
  readonly spread: Float32Array;
}

const statsCache = new WeakMap<Float32Array, TemplateStats>();

/** Per-template sums, computed once per glyph table. Means come from the templates themselves
 * (not the rounded coverage) so the tone term and the pruning bounds stay exact. */
export function templateStats(templates: Float32Array): TemplateStats {
  const hit = statsCache.get(templates);
  if (hit) return hit;
  const count = templates.length / N;
  // In WebAssembly (assembly/match.ts templateStats; test/reference/match.ts is its twin): a
  // first render ran the loop interpreted, a boxed double per operation. In a nested frame: a
  // render may first ask for them inside its glyph stage's frame (matchInFrame).
  const stats = nestedFrame((f) => {
    const pt = f.f32(count * N), pg2 = f.f32(count), pgm = f.f32(count), psp = f.f32(count);
    const k = f.ready();
    f.viewF32(pt, count * N).set(templates.subarray(0, count * N));
    k.templateStats(pt, count, pg2, pgm, psp);
    return { g2: f.viewF32(pg2, count).slice(), gm: f.viewF32(pgm, count).slice(), spread: f.viewF32(psp, count).slice() };
  });
  statsCache.set(templates, stats);
  return stats;
}
