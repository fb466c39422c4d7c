// AssemblyScript: shared by the glyph searches of match.ts and refine.ts.

/** The first index i of n ascending f64 at p with p[i] >= v (n when none): where a search by tone starts. */
@inline export function lowerBound(p: usize, n: i32, v: f64): i32 {
  let lo = 0, hi = n;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (load<f64>(p + (<usize>mid << 3)) < v) lo = mid + 1; else hi = mid;
  }
  return lo;
}
