/**
 * Scalar oracle of the codebook's dynamic programme (assembly/codebook.ts codebookDp), as the
 * TypeScript had it: the DP and its bookkeeping. Its setup (level grouping, binned sums, interval
 * costs, the pick) stays TypeScript in src: CodebookProblem, imported.
 */
import type { GlyphStrategy } from '../../src/core/params/definitions.js';
import { CodebookProblem, type Codebook } from '../../src/core/pipeline/codebook.js';

/**
 * The rate-distortion codebook. `levels[g]` is glyph g's ink normalised to the ramp (0..1),
 * `order` the glyph indices sorted by level, `targets` the cells' target ink (0..1).
 * adaptive: the fewest levels whose quantization RMSE over this image's cells is <= maxRmse,
 * chosen optimally by dynamic programming over the sorted levels (O(k n^2) with O(1) interval
 * costs from prefix sums). fixed: every level. Glyphs that share a level come together.
 */
export function chooseCodebook(levels: ArrayLike<number>, order: ArrayLike<number>, targets: Float32Array, strategy: GlyphStrategy, maxRmse: number): Codebook {
  const problem = new CodebookProblem(levels, order, targets);
  const { L, n, sums, total, lb } = problem;

  if (strategy === 'fixed' || n <= 1) return problem.pick(Array.from({ length: n }, (_, i) => i));

  const budget = maxRmse * maxRmse * total;
  // The cost of levels i < j adjacent in the codebook does not depend on the layer: tabulated
  // once (n^2 / 2), each layer is then additions only.
  const cost = new Float64Array(n * n);
  for (let j = 1; j < n; j++) for (let i = 0; i < j; i++) cost[i * n + j] = problem.between(i, j);
  let prev = new Float64Array(n);
  let cur = new Float64Array(n);
  const tail = new Float64Array(n);
  for (let j = 0; j < n; j++) tail[j] = problem.after(j);
  const parents: Int16Array[] = [];
  for (let j = 0; j < n; j++) prev[j] = sums.err(0, lb[j]!, L[j]!);
  parents.push(new Int16Array(n).fill(-1));
  for (let k = 1; ; k++) {
    // prev holds the best error with k levels ending at level j (bins above j not yet counted).
    let best = Infinity, bestJ = 0;
    for (let j = 0; j < n; j++) {
      const e = prev[j]! + tail[j]!;
      if (e < best) { best = e; bestJ = j; }
    }
    if (best <= budget || k === n) {
      const chosen: number[] = [];
      let j = bestJ;
      for (let layer = k - 1; layer >= 0; layer--) {
        chosen.push(j);
        j = parents[layer]![j]!;
      }
      return problem.pick(chosen.reverse());
    }
    const par = new Int16Array(n).fill(-1);
    for (let j = 0; j < n; j++) {
      let m = Infinity, arg = -1;
      for (let i = 0; i < j; i++) {
        const e = prev[i]! + cost[i * n + j]!;
        if (e < m) { m = e; arg = i; }
      }
      cur[j] = m;
      par[j] = arg;
    }
    parents.push(par);
    [prev, cur] = [cur, prev];
  }
}
