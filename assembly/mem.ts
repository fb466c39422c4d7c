// AssemblyScript: loads and stores of the kernels' arrays, by element index. Values are f32 in
// memory and f64 in the arithmetic (the TypeScript's Float32Array reads and writes), or f32 in
// both (ldf32, stf32) where a kernel computes in f32.

/** The f32 at p + 4i. */
@inline export function ldf32(p: usize, i: i32): f32 {
  return load<f32>(p + (<usize>i << 2));
}

/** v at p + 4i. */
@inline export function stf32(p: usize, i: i32, v: f32): void {
  store<f32>(p + (<usize>i << 2), v);
}

/** The f32 at p + 4i, as f64. */
@inline export function ld(p: usize, i: i32): f64 {
  return <f64>load<f32>(p + (<usize>i << 2));
}

/** v rounded to f32 at p + 4i. */
@inline export function st(p: usize, i: i32, v: f64): void {
  store<f32>(p + (<usize>i << 2), <f32>v);
}

/** The i32 at p + 4i. */
@inline export function ldi(p: usize, i: i32): i32 {
  return load<i32>(p + (<usize>i << 2));
}

/** The f64 at p + 8i. */
@inline export function ld64(p: usize, i: i32): f64 {
  return load<f64>(p + (<usize>i << 3));
}

/** Two consecutive f32 at p + 4i as an f64x2. */
@inline export function ld2(p: usize, i: i32): v128 {
  return f64x2.promote_low_f32x4(v128.load64_zero(p + (<usize>i << 2)));
}

/** An f64x2 rounded to two f32 at p + 4i. */
@inline export function st2(p: usize, i: i32, v: v128): void {
  v128.store64_lane(p + (<usize>i << 2), f32x4.demote_f64x2_zero(v), 0);
}

/** acc + x * y, four f32 lanes loaded at x and y (the dot products of match.ts and refine.ts). */
@inline export function mac4(acc: v128, x: usize, y: usize): v128 {
  return f32x4.add(acc, f32x4.mul(v128.load(x), v128.load(y)));
}

/**
 * An f32x4's lanes as (l0 + l1) + (l2 + l3) in f64: the order in which the f32-lane kernels' scalar
 * twins (test/reference/) add them.
 */
@inline export function laneSum(v: v128): f64 {
  return (<f64>f32x4.extract_lane(v, 0) + <f64>f32x4.extract_lane(v, 1)) + (<f64>f32x4.extract_lane(v, 2) + <f64>f32x4.extract_lane(v, 3));
}

/** hist[b]++ (u32 counts at hist): the histograms' counter. */
@inline export function bump(hist: usize, b: i32): void {
  const p = hist + (<usize>b << 2);
  store<u32>(p, load<u32>(p) + 1);
}
