import type { GlyphStrategy } from '../params/definitions.js';
import { frame, nestedFrame } from '../wasm/kernels.js';
import { histogram } from './tone.js';

/** Histogram bins of the cell targets (exported with the binning for the test oracle). */
export const BINS = 256;
/** Glyphs whose normalised levels differ by less than this are one code (e.g. the 2x2 quadrants). */
export const SAME_LEVEL = 0.004;

export interface Codebook {
  /** Glyph indices (into the set) of the codebook, ascending by level. */
  readonly indices: Int32Array;
  /** Measured RMSE of quantizing the cell targets to the codebook's levels. */
  readonly rmse: number;
  /** With shapes (chooseCodebook's `shapeSpan`): the chosen levels' own glyphs, a subset of `indices`. */
  readonly base?: Int32Array;
}

export interface Groups {
  readonly level: Float64Array;
  readonly members: number[][];
}

/** Glyphs less than SAME_LEVEL above a group's first level join it. */
export function groupLevels(levels: ArrayLike<number>, order: ArrayLike<number>): Groups {
  const lv: number[] = [];
  const members: number[][] = [];
  for (let k = 0; k < order.length; k++) {
    const g = order[k]!;
    const l = levels[g]!;
    if (lv.length && l - lv[lv.length - 1]! < SAME_LEVEL) members[members.length - 1]!.push(g);
    else { lv.push(l); members.push([g]); }
  }
  return { level: Float64Array.from(lv), members };
}

/** Prefix sums of count, sum and sum of squares of the targets over histogram bins. */
export class BinSums {
  readonly s0: Float64Array = new Float64Array(BINS + 1);
  readonly s1: Float64Array = new Float64Array(BINS + 1);
  readonly s2: Float64Array = new Float64Array(BINS + 1);
  constructor(targets: Float32Array) {
    // Counts of (t * BINS) | 0, clamped to the bins: the histogram kernel.
    const h = histogram({ width: targets.length, height: 1, data: targets }, BINS);
    for (let b = 0; b < BINS; b++) {
      const x = (b + 0.5) / BINS;
      this.s0[b + 1] = this.s0[b]! + h[b]!;
      this.s1[b + 1] = this.s1[b]! + h[b]! * x;
      this.s2[b + 1] = this.s2[b]! + h[b]! * x * x;
    }
  }
  get total(): number { return this.s0[BINS]!; }
  /** First bin whose centre is >= x. */
  static bin(x: number): number {
    const b = Math.ceil(x * BINS - 0.5);
    return b < 0 ? 0 : b > BINS ? BINS : b;
  }
  /** Squared error of assigning bins [b0, b1) to level l. */
  err(b0: number, b1: number, l: number): number {
    if (b1 <= b0) return 0;
    const n = this.s0[b1]! - this.s0[b0]!;
    const s = this.s1[b1]! - this.s1[b0]!;
    const q = this.s2[b1]! - this.s2[b0]!;
    return Math.max(0, q - 2 * l * s + l * l * n);
  }
}

/**
 * What the codebook's search works on: grouped levels, the cells' binned sums, the costs; the
 * tests' scalar oracle of the search shares it. A class, not closures made for each render: see
 * wasm/kernels.ts openNested().
 */
export class CodebookProblem {
  /** Distinct levels, ascending, and their count. */
  readonly L: Float64Array;
  readonly n: number;
  readonly sums: BinSums;
  /** Cells counted (at least 1). */
  readonly total: number;
  /** Bin of each level. */
  readonly lb: Int32Array;
  private readonly members: number[][];

  constructor(levels: ArrayLike<number>, order: ArrayLike<number>, targets: Float32Array) {
    const groups = groupLevels(levels, order);
    this.L = groups.level;
    this.members = groups.members;
    this.n = this.L.length;
    this.sums = new BinSums(targets);
    this.total = Math.max(1, this.sums.total);
    this.lb = new Int32Array(this.n);
    for (let j = 0; j < this.n; j++) this.lb[j] = BinSums.bin(this.L[j]!);
  }

  /** Squared error of the cells between adjacent chosen levels i < j (each to the nearer). */
  between(i: number, j: number): number {
    return this.gap(this.L[i]!, this.L[j]!);
  }

  /** Squared error of the cells above the last chosen level j. */
  after(j: number): number {
    return this.tail(this.L[j]!);
  }

  /** The codebook of the chosen levels (ascending level indices), with its RMSE. */
  pick(chosen: number[]): Codebook {
    const idx: number[] = [], ls: number[] = [];
    for (const gi of chosen) {
      idx.push(...this.members[gi]!);
      ls.push(this.L[gi]!);
    }
    return { indices: Int32Array.from(idx), rmse: this.rmseOf(ls) };
  }

  /** The RMSE of quantizing the targets to the nearest of these levels (ascending, distinct). */
  rmseOf(ls: readonly number[]): number {
    let e = this.sums.err(0, BinSums.bin(ls[0]!), ls[0]!);
    for (let k = 1; k < ls.length; k++) e += this.gap(ls[k - 1]!, ls[k]!);
    return Math.sqrt((e + this.tail(ls[ls.length - 1]!)) / this.total);
  }

  // Squared errors by level value: the cells between two adjacent levels (each to the nearer),
  // and above the last.
  private gap(a: number, b: number): number {
    const mid = BinSums.bin((a + b) / 2);
    return this.sums.err(BinSums.bin(a), mid, a) + this.sums.err(mid, BinSums.bin(b), b);
  }

  private tail(a: number): number {
    return this.sums.err(BinSums.bin(a), BINS, a);
  }
}

/**
 * The rate-distortion codebook. `levels[g]` is glyph g's ink normalised to the ramp (0..1),
 * `order` the glyph indices sorted by level, `targets` the cells' target ink (0..1).
 * adaptive: the fewest levels whose quantization RMSE over this image's cells is <= maxRmse,
 * chosen optimally by dynamic programming over the sorted levels (O(k n^2) with O(1) interval
 * costs from prefix sums). fixed: every level. Glyphs that share a level come together.
 * `shapeSpan` > 0: then every glyph up to that far above a chosen level joins the codebook too,
 * so that a later stage (the fine stage, pipeline/refine.ts) has shapes to choose between at each
 * level; the RMSE is then measured over all their levels (at most the chosen levels' alone), and
 * `base` keeps the chosen levels' own glyphs.
 */
export function chooseCodebook(levels: ArrayLike<number>, order: ArrayLike<number>, targets: Float32Array, strategy: GlyphStrategy, maxRmse: number, shapeSpan = 0): Codebook {
  const problem = new CodebookProblem(levels, order, targets);
  let chosen: number[];
  if (strategy === 'fixed' || problem.n <= 1) {
    chosen = [];
    for (let i = 0; i < problem.n; i++) chosen.push(i);
  } else chosen = chooseLevels(problem, maxRmse);
  const book = problem.pick(chosen);
  return shapeSpan > 0 ? withShapes(problem, levels, order, chosen, shapeSpan, book.indices) : book;
}

/** The adaptive codebook's levels (ascending level indices). */
function chooseLevels({ L, n, sums, total }: CodebookProblem, maxRmse: number): number[] {
  const budget = maxRmse * maxRmse * total;
  // The dynamic programme in WebAssembly (assembly/codebook.ts): the cost of two adjacent levels
  // tabulated once, then per added level the best predecessor of each level. In a nested frame:
  // render.ts chooses the codebook inside its glyph stage's frame.
  return nestedFrame((f) => {
    const ps = f.f32(2 * 3 * (BINS + 1)), pl = f.f32(2 * n), pp = f.f32(n * n), pw = f.f32(2 * (n * n + 4 * n) + n);
    const k = f.ready();
    const sv = f.viewF64(ps, 3 * (BINS + 1));
    sv.set(sums.s0); sv.set(sums.s1, BINS + 1); sv.set(sums.s2, 2 * (BINS + 1));
    f.viewF64(pl, n).set(L);
    const r = k.codebookDp(ps, pl, n, budget, pp, pw);
    const parents = f.viewI32(pp, n * n);
    const chosen: number[] = [];
    for (let layer = (r >>> 16) - 1, j = r & 0xffff; layer >= 0; layer--) {
      chosen.push(j);
      j = parents[layer * n + j]!;
    }
    return chosen.reverse();
  });
}

/** chooseCodebook()'s codebook with every glyph of `order` up to `span` above one of its chosen levels. */
function withShapes(problem: CodebookProblem, levels: ArrayLike<number>, order: ArrayLike<number>, chosen: readonly number[], span: number, base: Int32Array): Codebook {
  const idx: number[] = [], ls: number[] = [];
  for (let k = 0, c = 0; k < order.length; k++) {
    const g = order[k]!, l = levels[g]!;
    // The highest chosen level at or below l (order ascends, so c only moves up).
    while (c + 1 < chosen.length && problem.L[chosen[c + 1]!]! <= l) c++;
    const from = problem.L[chosen[c]!]!;
    if (l < from || l - from >= span) continue;
    idx.push(g);
    if (ls[ls.length - 1] !== l) ls.push(l);
  }
  return { indices: Int32Array.from(idx), rmse: problem.rmseOf(ls), base };
}

/** Shannon entropy (bits per cell) of a glyph-index histogram. */
export function entropyBits(cells: Uint16Array, glyphCount: number): number {
  // The counts in WebAssembly (assembly/codebook.ts glyphCounts): a first render ran the loop over
  // the cells interpreted.
  const n = cells.length;
  const f = frame();
  const pc = f.bytes(2 * n), ph = f.f32(glyphCount);
  const k = f.ready();
  f.viewU16(pc, n).set(cells);
  k.glyphCounts(pc, n, glyphCount, ph);
  const h = f.viewU32(ph, glyphCount);
  let e = 0;
  for (let g = 0; g < glyphCount; g++) {
    if (h[g]! > 0) {
      const p = h[g]! / cells.length;
      e -= p * Math.log2(p);
    }
  }
  return e;
}
