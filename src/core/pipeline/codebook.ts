import type { GlyphStrategy } from '../params/definitions.js';
import { frame } from '../wasm/kernels.js';
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
}

export interface Groups {
  readonly level: Float64Array;
  readonly members: number[][];
}

/** `sameLevel`: how far above a group's first level a glyph still joins it. */
export function groupLevels(levels: ArrayLike<number>, order: ArrayLike<number>, sameLevel = SAME_LEVEL): Groups {
  const lv: number[] = [];
  const members: number[][] = [];
  for (let k = 0; k < order.length; k++) {
    const g = order[k]!;
    const l = levels[g]!;
    if (lv.length && l - lv[lv.length - 1]! < sameLevel) members[members.length - 1]!.push(g);
    else { lv.push(l); members.push([g]); }
  }
  return { level: Float64Array.from(lv), members };
}

/** Prefix sums of count, sum and sum of squares of the targets over histogram bins. */
export class BinSums {
  readonly s0 = new Float64Array(BINS + 1);
  readonly s1 = new Float64Array(BINS + 1);
  readonly s2 = new Float64Array(BINS + 1);
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

/** What the codebook's search works on: grouped levels, the cells' binned sums, the costs. */
export interface CodebookProblem {
  /** Distinct levels, ascending, and their count. */
  readonly L: Float64Array;
  readonly n: number;
  readonly sums: BinSums;
  /** Cells counted (at least 1). */
  readonly total: number;
  /** Bin of each level. */
  readonly lb: Int32Array;
  /** Squared error of the cells between adjacent chosen levels i < j, and above the last level j. */
  readonly between: (i: number, j: number) => number;
  readonly after: (j: number) => number;
  /** The codebook of the chosen levels (ascending level indices), with its RMSE. */
  readonly pick: (chosen: number[]) => Codebook;
}

/** The setup chooseCodebook() searches on; the tests' scalar oracle of the search shares it. */
export function codebookProblem(levels: ArrayLike<number>, order: ArrayLike<number>, targets: Float32Array, sameLevel = SAME_LEVEL): CodebookProblem {
  const groups = groupLevels(levels, order, sameLevel);
  const L = groups.level;
  const n = L.length;
  const sums = new BinSums(targets);
  const total = Math.max(1, sums.total);
  const lb = new Int32Array(n);
  for (let j = 0; j < n; j++) lb[j] = BinSums.bin(L[j]!);
  const between = (i: number, j: number): number => {
    const mid = BinSums.bin((L[i]! + L[j]!) / 2);
    return sums.err(lb[i]!, mid, L[i]!) + sums.err(mid, lb[j]!, L[j]!);
  };
  const after = (j: number) => sums.err(lb[j]!, BINS, L[j]!);
  const pick = (chosen: number[]): Codebook => {
    const idx: number[] = [];
    for (const gi of chosen) idx.push(...groups.members[gi]!);
    let e = sums.err(0, lb[chosen[0]!]!, L[chosen[0]!]!);
    for (let k = 1; k < chosen.length; k++) e += between(chosen[k - 1]!, chosen[k]!);
    e += after(chosen[chosen.length - 1]!);
    return { indices: Int32Array.from(idx), rmse: Math.sqrt(e / total) };
  };
  return { L, n, sums, total, lb, between, after, pick };
}

/**
 * The rate-distortion codebook. `levels[g]` is glyph g's ink normalised to the ramp (0..1),
 * `order` the glyph indices sorted by level, `targets` the cells' target ink (0..1).
 * adaptive: the fewest levels whose quantization RMSE over this image's cells is <= maxRmse,
 * chosen optimally by dynamic programming over the sorted levels (O(k n^2) with O(1) interval
 * costs from prefix sums). fixed: every level. Glyphs that share a level come together: those
 * less than `sameLevel` above a group's first (a wider span gives a later stage, fineShapes, shapes
 * to choose between at each level; the levels are then the groups' first ones).
 */
export function chooseCodebook(levels: ArrayLike<number>, order: ArrayLike<number>, targets: Float32Array, strategy: GlyphStrategy, maxRmse: number, sameLevel = SAME_LEVEL): Codebook {
  const { L, n, sums, total, pick } = codebookProblem(levels, order, targets, sameLevel);
  if (strategy === 'fixed' || n <= 1) return pick(Array.from({ length: n }, (_, i) => i));

  const budget = maxRmse * maxRmse * total;
  // The dynamic programme in WebAssembly (assembly/codebook.ts): the cost of two adjacent levels
  // tabulated once, then per added level the best predecessor of each level.
  const f = frame();
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
  return pick(chosen.reverse());
}

/** Shannon entropy (bits per cell) of a glyph-index histogram. */
export function entropyBits(cells: Uint16Array, glyphCount: number): number {
  const h = new Float64Array(glyphCount);
  for (let i = 0; i < cells.length; i++) h[cells[i]!]!++;
  let e = 0;
  for (let g = 0; g < glyphCount; g++) {
    if (h[g]! > 0) {
      const p = h[g]! / cells.length;
      e -= p * Math.log2(p);
    }
  }
  return e;
}
