// AssemblyScript: the adaptive codebook's dynamic programme (pipeline/codebook.ts chooseCodebook).
// The f64 operations of the TypeScript it replaced, in its order (bit-identical choices and
// errors: test/wasm-kernels.test.ts against test/reference/codebook.ts).

import { ld64 } from './mem';

const BINS: i32 = 256;

/** BinSums.bin(): the first bin whose centre is >= x. */
@inline function bin(x: f64): i32 {
  const b = Math.ceil(x * <f64>BINS - 0.5);
  return b < 0 ? 0 : b > <f64>BINS ? BINS : <i32>b;
}

/** BinSums.err(): squared error of assigning bins [b0, b1) to level l (s0, s1, s2: BINS + 1 prefix sums each). */
@inline function err(s0: usize, s1: usize, s2: usize, b0: i32, b1: i32, l: f64): f64 {
  if (b1 <= b0) return 0;
  const n = ld64(s0, b1) - ld64(s0, b0);
  const s = ld64(s1, b1) - ld64(s1, b0);
  const q = ld64(s2, b1) - ld64(s2, b0);
  return Math.max(0, q - 2 * l * s + l * l * n);
}

/**
 * The fewest of the n ascending levels L (f64) whose squared error over the binned targets (prefix
 * sums at sums: count, sum, sum of squares, BINS + 1 f64 each) is <= budget. Writes the parents of
 * each layer (i32, n per layer, layer k at parents + 4nk) and returns k * 65536 + the last level
 * chosen, k being the number of levels. Scratch: work (n * n + 4n f64, n i32).
 */
export function codebookDp(sums: usize, L: usize, n: i32, budget: f64, parents: usize, work: usize): i32 {
  const s0 = sums, s1 = sums + ((<usize>BINS + 1) << 3), s2 = s1 + ((<usize>BINS + 1) << 3);
  const N = <usize>n;
  const cost = work, tail = cost + ((N * N) << 3);
  let prev = tail + (N << 3), cur = prev + (N << 3);
  const lb = cur + (N << 3);
  for (let j = 0; j < n; j++) store<i32>(lb + (<usize>j << 2), bin(ld64(L, j)));
  // The cost of levels i < j adjacent in the codebook (between() of codebook.ts).
  for (let j = 1; j < n; j++) {
    const lj = ld64(L, j), bj = load<i32>(lb + (<usize>j << 2));
    for (let i = 0; i < j; i++) {
      const li = ld64(L, i), bi = load<i32>(lb + (<usize>i << 2));
      const mid = bin((li + lj) / 2);
      store<f64>(cost + ((<usize>i * N + <usize>j) << 3), err(s0, s1, s2, bi, mid, li) + err(s0, s1, s2, mid, bj, lj));
    }
  }
  for (let j = 0; j < n; j++) {
    const lj = ld64(L, j), bj = load<i32>(lb + (<usize>j << 2));
    store<f64>(tail + (<usize>j << 3), err(s0, s1, s2, bj, BINS, lj));
    store<f64>(prev + (<usize>j << 3), err(s0, s1, s2, 0, bj, lj));
    store<i32>(parents + (<usize>j << 2), -1);
  }
  for (let k = 1; ; k++) {
    // prev holds the best error with k levels ending at level j (bins above j not yet counted).
    let best = Infinity, bestJ = 0;
    for (let j = 0; j < n; j++) {
      const e = ld64(prev, j) + ld64(tail, j);
      if (e < best) { best = e; bestJ = j; }
    }
    if (best <= budget || k == n) return (k << 16) | bestJ;
    const par = parents + ((<usize>k * N) << 2);
    for (let j = 0; j < n; j++) {
      let m = Infinity, arg = -1;
      for (let i = 0; i < j; i++) {
        const e = ld64(prev, i) + load<f64>(cost + ((<usize>i * N + <usize>j) << 3));
        if (e < m) { m = e; arg = i; }
      }
      store<f64>(cur + (<usize>j << 3), m);
      store<i32>(par + (<usize>j << 2), arg);
    }
    const t = prev; prev = cur; cur = t;
  }
  return unreachable();
}

/** entropyBits() of pipeline/codebook.ts: how many of the n cells (u16 glyph indices) hold each glyph, into counts (u32, zeroed here). */
export function glyphCounts(cells: usize, n: i32, glyphs: i32, counts: usize): void {
  memory.fill(counts, 0, <usize>glyphs << 2);
  for (let i = 0; i < n; i++) {
    const g = <i32>load<u16>(cells + (<usize>i << 1));
    // An index past the table is not counted (as a typed array's store past its end is not).
    if (g >= glyphs) continue;
    const p = counts + (<usize>g << 2);
    store<u32>(p, load<u32>(p) + 1);
  }
}
