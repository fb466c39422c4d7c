import { frame, type Frame, type KernelExports, type Ptr } from '../wasm/kernels.js';
import { BITMAP_CELL, glyphHex } from '../glyphs/bitmaps.js';
import { blurCellsInFrame } from './view-blur.js';
import { f32Of, f64Of, precomputed } from '../tables.js';
import { textEncoder } from '../text-codec.js';

/**
 * fineShapes (an extension parameter): the matcher's 4 x 8 samples per cell are too coarse for
 * the strokes of a glyph (a sample is a quarter of the cell's width), so its choice between glyphs
 * of near-equal tone is partly blind to where their strokes lie. This stage chooses each cell's
 * glyph again, from the same codebook, on an 8 x 16 raster: the matcher's target upsampled
 * (bilinear, 2x) and blurred by FINE_BLUR_PASSES [1 2 1] passes at that scale, against the glyphs'
 * 8 x 16 bitmaps (the ones the png format draws) through the same blur; least squares plus the
 * matcher's tone term, then its neighbour calm. Upsampling the target, not resampling the source,
 * keeps every tone stage at 4 x 8 and works for edges and invert alike; on bench:quality (80
 * columns, 13 images) it scored as a fresh 8 x 16 resample of the source did.
 * In WebAssembly (assembly/refine.ts), in matchGlyphs()'s frame; test/reference/refine.ts is its
 * brute-force twin.
 */
export const FINE_X = 8;
export const FINE_Y = 16;
export const FINE_SAMPLES = FINE_X * FINE_Y;

/**
 * Passes of the [1 2 1] viewing blur on the fine raster: 4 are the matcher's blur (one pass at
 * 4 x 8); fewer see strokes more sharply. Measured (80 columns, 13 images, contour r / tone r
 * against the defaults' 0.603 / 0.882): 2 passes 0.634 / 0.862, 3 0.623 / 0.875, 4 0.615 / 0.880
 * (bench/README.md). At most 3: the kernel reads RADIUS coarse samples each side.
 */
export const FINE_BLUR_PASSES = 3;

/**
 * The fine stage's shapes at each tone: the codebook (pipeline/codebook.ts chooseCodebook(), its
 * levels chosen under maxGlyphRmse as ever) brings with each of its levels every glyph up to this
 * far above it (of the ramp), so that the fine stage has shapes to choose between at each tone;
 * its RMSE is then measured over all their levels. First measured with fineShapes, levels grouped
 * by this span (bench:quality, 13 images, contour r / tone r means): 80 columns 0.623 / 0.875 ->
 * 0.633 / 0.884 (0.01: 0.628 / 0.878; 0.02: 0.630 / 0.881; 0.08: 0.636 / 0.885); over all 26
 * cases 0.641 / 0.887 at 0.08 (bench/README.md). The 4 x 8 matcher cannot see the strokes of the
 * shapes added: it chooses from the levels' own glyphs (render.ts).
 */
export const FINE_SHAPE_SPAN = 0.08;

/**
 * Without fineShapes (the default), the fine stage chooses again only the cells whose 4 x 8 target
 * samples have at least this standard deviation (an edge, a stroke, texture); flat cells, where the
 * 4 x 8 choice is already the tone, keep it. Measured over bench:quality's 26 cases (13 images at
 * 80 and 160 columns), contour r / tone r / cell r against the 4 x 8 choice's 0.612 / 0.885 /
 * 0.958: 0.629 / 0.888 / 0.958, contour up in every case, 16 cases at least chafa's on both scores
 * instead of 13 (without the shapes FINE_SHAPE_SPAN adds: 0.621 / 0.884 / 0.955, 15). Screened on
 * 13 images at 80 columns (every cell refined: 0.633 / 0.884 / 0.952): 0.03 0.628 / 0.886,
 * 0.06 0.626 / 0.887, 0.1 0.623 / 0.888, 0.15 0.620 / 0.889 (bench/README.md).
 */
export const FINE_MIN_SPREAD = 0.1;

/** Coarse samples each side a fine sample reads (assembly/refine.ts RADIUS). */
const RADIUS = 2;
const TAPS = 2 * RADIUS + 1;

export interface FineTable {
  /** Blurred 8 x 16 templates, FINE_SAMPLES f32 per glyph (the glyph table's order). */
  readonly templates: Float32Array;
  /** Sum of squares, mean and zero-mean norm of each blurred template. */
  readonly g2: Float64Array;
  readonly gm: Float64Array;
  readonly spread: Float64Array;
  /** The polyphase upsample-and-blur filter: 2 phases x TAPS f32. */
  readonly taps: Float32Array;
  /**
   * The search's tighter bound: each blurred template's 2 x 2 block means (BLOCKS f32 per glyph,
   * 4 x 8 blocks row by row), and 2 f64 per glyph: the squared norm of the template's projection
   * on piecewise-constant blocks (4 x the means' sum of squares) and the norm of what the
   * projection leaves.
   */
  readonly blocks: Float32Array;
  readonly blockStats: Float64Array;
}

/** A cell's 2 x 2 block means (assembly/refine.ts takes a cell's the same way). */
export const BLOCKS = (FINE_X / 2) * (FINE_Y / 2);

/**
 * The fine table of a glyph table's glyphs (one per glyph list: callers cache it with their
 * table): computeFineTable()'s, from the build's table (core/tables.ts) where it has every glyph:
 * as it is for the default charset's list, else each glyph's rows gathered (a glyph's rows do not
 * depend on the others, so the result is the same).
 */
export function fineTable(glyphs: readonly string[], passes = FINE_BLUR_PASSES): FineTable {
  return (passes === FINE_BLUR_PASSES && builtFineTable(glyphs)) || computeFineTable(glyphs, passes);
}

/** fineTable() of `glyphs` from the build's table, or null where it lacks one of them. */
function builtFineTable(glyphs: readonly string[]): FineTable | null {
  const pre = precomputed();
  if (!pre) return null;
  const all = (builtTable ??= {
    table: {
      templates: f32Of(pre.fine.templates), g2: f64Of(pre.fine.g2), gm: f64Of(pre.fine.gm), spread: f64Of(pre.fine.spread),
      taps: f32Of(pre.fine.taps), blocks: f32Of(pre.fine.blocks), blockStats: f64Of(pre.fine.blockStats),
    },
    glyphs: pre.detailed.glyphs,
    index: null,
  });
  const n = glyphs.length;
  if (glyphs.join('') === all.glyphs) return all.table;
  const index = (all.index ??= new Map([...all.glyphs].map((ch, i) => [ch, i])));
  const at = glyphs.map((ch) => index.get(ch) ?? -1);
  if (at.some((i) => i < 0)) return null;
  const src = all.table;
  const t: FineTable = {
    templates: new Float32Array(n * FINE_SAMPLES), g2: new Float64Array(n), gm: new Float64Array(n), spread: new Float64Array(n),
    taps: src.taps, blocks: new Float32Array(n * BLOCKS), blockStats: new Float64Array(n * 2),
  };
  at.forEach((i, g) => {
    t.templates.set(src.templates.subarray(i * FINE_SAMPLES, (i + 1) * FINE_SAMPLES), g * FINE_SAMPLES);
    t.g2[g] = src.g2[i]!;
    t.gm[g] = src.gm[i]!;
    t.spread[g] = src.spread[i]!;
    t.blocks.set(src.blocks.subarray(i * BLOCKS, (i + 1) * BLOCKS), g * BLOCKS);
    t.blockStats.set(src.blockStats.subarray(i * 2, i * 2 + 2), g * 2);
  });
  return t;
}

/** The build's fine table, decoded on first use (shared, read only, as fineTable()'s results are). */
let builtTable: { readonly table: FineTable; readonly glyphs: string; index: Map<string, number> | null } | undefined;

/** fineTable() computed from the glyphs' bitmaps (scripts/build-tables.ts runs it at build time). */
export function computeFineTable(glyphs: readonly string[], passes = FINE_BLUR_PASSES): FineTable {
  const n = glyphs.length, size = n * FINE_SAMPLES;
  if (BITMAP_CELL.width !== FINE_X || BITMAP_CELL.height !== FINE_Y) throw new Error('fineShapes: the bitmaps are not 8 x 16');
  const hex = glyphs.map((ch) => {
    const h = glyphHex(ch.codePointAt(0)!);
    if (h === undefined) throw new Error(`no bitmap for ${ch}`);
    return h;
  });
  const chars = hex.reduce((s, h) => s + h.length, 0);
  // All of it in one WebAssembly frame (assembly/refine.ts hexLevels(), fineStats()): it runs once
  // per glyph table, on a first render, where loops in JavaScript would run interpreted (about
  // 11 ms for the statistics and 2 for the decoding there).
  const f = frame();
  const ph = f.bytes(chars), plut = f.f32(BITMAP_CELL.levels), pa = f.f32(size), pb = f.f32(size), ptmp = f.f32(3 * FINE_X);
  const pg2 = f.bytes(n * 8), pgm = f.bytes(n * 8), psp = f.bytes(n * 8), pbl = f.f32(n * BLOCKS), pst = f.bytes(n * 16);
  const k = f.ready();
  const text = f.viewU8(ph, chars);
  for (let i = 0, at = 0; i < n; i++) at += textEncoder().encodeInto(hex[i]!, text.subarray(at)).written;
  const lut = f.viewF32(plut, BITMAP_CELL.levels), top = BITMAP_CELL.levels - 1;
  for (let l = 0; l <= top; l++) lut[l] = l / top;
  if (k.hexLevels(ph, chars, plut, pa) !== size) throw new Error('fineShapes: a bitmap is not 8 x 16');
  // The matcher's viewing blur (pipeline/view-blur.ts), `passes` times within each 8 x 16 cell.
  const pt = blurCellsInFrame(k, pa, pb, ptmp, n, FINE_X, FINE_Y, passes);
  k.fineStats(pt, n, pg2, pgm, psp, pbl, pst);
  return {
    templates: f.viewF32(pt, size).slice(), g2: f.viewF64(pg2, n).slice(), gm: f.viewF64(pgm, n).slice(), spread: f.viewF64(psp, n).slice(),
    taps: fineTaps(passes), blocks: f.viewF32(pbl, n * BLOCKS).slice(), blockStats: f.viewF64(pst, n * 2).slice(),
  };
}

/**
 * The filter from a coarse axis to the fine one: fine X = 2x + phase is the bilinear 2x upsample
 * (u[2x] = t[x - 1] / 4 + 3 t[x] / 4, u[2x + 1] = 3 t[x] / 4 + t[x + 1] / 4) blurred by `passes`
 * [1 2 1]/4 passes, written as weights on t[x - RADIUS .. x + RADIUS] for each phase.
 */
export function fineTaps(passes: number): Float32Array {
  let blur = [1];
  for (let p = 0; p < passes; p++) {
    const next = new Array<number>(blur.length + 2).fill(0);
    blur.forEach((v, i) => { next[i]! += v * 0.25; next[i + 1]! += v * 0.5; next[i + 2]! += v * 0.25; });
    blur = next;
  }
  const half = passes;
  const taps = new Array<number>(2 * TAPS).fill(0);
  for (let phase = 0; phase < 2; phase++) {
    for (let j = 0; j < blur.length; j++) {
      // u at fine index phase + j - half, as coarse weights relative to x.
      const X = phase + j - half;
      const x = Math.floor(X / 2), odd = X - 2 * x;
      const pairs: [number, number][] = odd ? [[x, 0.75], [x + 1, 0.25]] : [[x - 1, 0.25], [x, 0.75]];
      for (const [at, w] of pairs) {
        if (Math.abs(at) > RADIUS) throw new Error(`fine blur of ${passes} passes reaches past ${RADIUS} samples`);
        taps[phase * TAPS + at + RADIUS]! += blur[j]! * w;
      }
    }
  }
  return Float32Array.from(taps);
}

/** Where refineGlyphs()'s inputs live in a kernel frame (laid out by refineLayout()). */
export interface RefineLayout {
  readonly taps: Ptr;
  readonly templates: Ptr;
  readonly g2: Ptr;
  readonly gm: Ptr;
  readonly inBook: Ptr;
  readonly cand: Ptr;
  readonly cgm: Ptr;
  readonly spread: Ptr;
  readonly book: Ptr;
  readonly blocks: Ptr;
  readonly blockStats: Ptr;
  readonly work: Ptr;
}

/**
 * assembly/refine.ts refineBook()'s record of a group of four candidates: an f32x4 of each of
 * their 4 x 4 block means (2 x 4 of them), then of what those leave, their means and spreads.
 */
const BOOK_GROUP_BYTES = ((FINE_X / 4) * (FINE_Y / 4) + 3) * 16;

/** Room in frame `f` for the fine table of `count` glyphs, `nc` candidates and the kernel's scratch (before f.ready()). */
export function refineLayout(f: Frame, count: number, nc: number): RefineLayout {
  const groups = (nc + 3) >> 2;
  return {
    taps: f.f32(2 * TAPS), templates: f.f32(count * FINE_SAMPLES), g2: f.bytes(count * 8), gm: f.bytes(count * 8), inBook: f.bytes(count),
    cand: f.f32(nc), cgm: f.bytes(nc * 8), spread: f.bytes(count * 8),
    book: f.bytes(groups * BOOK_GROUP_BYTES),
    blocks: f.f32(count * BLOCKS), blockStats: f.bytes(count * 2 * 8),
    // assembly/refine.ts: a cell's 12 coarse rows upsampled along x and its fine raster (8 wide
    // each), its block means, its list of candidates, the window's bounds and the listed ones'.
    work: f.f32((8 + 2 * RADIUS) * FINE_X + FINE_SAMPLES + BLOCKS + nc + 4 * groups + nc),
  };
}

/** A refinement's codebook (glyph indices, any order), the ramp's scale and the matcher's weights. */
export interface RefineRun {
  readonly candidates: Int32Array;
  readonly scale: number;
  readonly toneWeight: number;
  readonly calm: number;
  /**
   * Only the cells whose 4 x 8 target samples have at least this standard deviation are chosen
   * again (0: every cell); the others keep the matcher's glyph.
   */
  readonly minSpread: number;
  /**
   * Glyphs whose cells keep the matcher's choice though they are candidates: the directional
   * glyphs where `structure` substitutes them (a coherent contour's glyph is its decision).
   */
  readonly keep?: Int32Array | null;
}

/**
 * Runs the kernel over the cells at `out` (u16, cols x rows, rewritten) of the target at `target`
 * (width x rows * 8 f32), both already in frame `f`, in bands of `band` cell rows.
 */
export function refineInFrame(f: Frame, k: KernelExports, at: RefineLayout, fine: FineTable, target: Ptr, width: number, cols: number, rows: number,
  run: RefineRun, out: Ptr, band: number): void {
  const count = fine.g2.length, nc = run.candidates.length;
  f.viewF32(at.taps, fine.taps.length).set(fine.taps);
  f.viewF32(at.templates, count * FINE_SAMPLES).set(fine.templates);
  f.viewF64(at.g2, count).set(fine.g2);
  f.viewF64(at.gm, count).set(fine.gm);
  f.viewF32(at.blocks, count * BLOCKS).set(fine.blocks);
  f.viewF64(at.blockStats, count * 2).set(fine.blockStats);
  f.viewF64(at.spread, count).set(fine.spread);
  const inBook = f.viewU8(at.inBook, count).fill(0);
  // The search walks the candidates by their fine means (ties by glyph index).
  const sorted = byFineMean(Int32Array.from(run.candidates), fine.gm);
  f.viewI32(at.cand, nc).set(sorted);
  for (let i = 0; i < nc; i++) inBook[sorted[i]!] = 1;
  k.refineBook(at.cand, nc, at.blocks, at.blockStats, at.gm, at.spread, at.book, at.cgm);
  if (run.keep) for (const g of run.keep) inBook[g] = 0;
  for (let y = 0; y < rows; y += band) {
    k.refineGlyphs(target, width, cols, rows, at.taps, at.templates, at.g2, at.gm, count, at.inBook, at.cand, at.cgm, at.book, nc,
      at.blocks, at.blockStats, run.minSpread * run.minSpread, run.scale, run.toneWeight * FINE_SAMPLES, run.calm, out, at.work, y, Math.min(rows, y + band));
  }
}

/**
 * Glyph indices sorted in place by their fine means, ties by index: an insertion sort (a codebook
 * is at most a ramp long), not sort() with a comparator made for each render (see
 * wasm/kernels.ts openNested()).
 */
function byFineMean(ids: Int32Array, gm: Float64Array): Int32Array {
  for (let i = 1; i < ids.length; i++) {
    const g = ids[i]!, m = gm[g]!;
    let j = i - 1;
    for (; j >= 0; j--) {
      const h = ids[j]!, d = gm[h]! - m;
      if (d < 0 || (d === 0 && h < g)) break;
      ids[j + 1] = h;
    }
    ids[j + 1] = g;
  }
  return ids;
}

/**
 * The refinement alone, in a frame of its own: `cells` (glyph indices into `fine`'s table, as the
 * matcher chose them) chosen again on the fine raster of `target` (width x rows * 8, unblurred).
 * matchGlyphs({ refine }) runs the same in its own frame.
 */
export function refineGlyphs(target: Float32Array, width: number, cols: number, rows: number, fine: FineTable,
  o: RefineRun, cells: Uint16Array): Uint16Array {
  const n = cols * rows, samples = width * rows * 8;
  const f = frame();
  const pt = f.f32(samples), po = f.bytes(n * 2);
  const at = refineLayout(f, fine.g2.length, o.candidates.length);
  const k = f.ready();
  f.viewF32(pt, samples).set(target.subarray(0, samples));
  f.viewU16(po, n).set(cells.subarray(0, n));
  refineInFrame(f, k, at, fine, pt, width, cols, rows, o, po, 2);
  return f.viewU16(po, n).slice();
}
