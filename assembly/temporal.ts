// AssemblyScript: the per-sample pass of the temporal filter's step (temporal/filter.ts). The
// filter's decisions (the noise estimate, resets, statistics) stay in TypeScript; this is its
// loop over the raster, in the TypeScript's f64 operations and order, so the same bits
// (test/temporal-equivalence.test.ts against test/reference/temporal-filter.ts).
//
// Two cells at a time, one per f64x2 lane: every sum of the TypeScript is per cell, so each lane
// adds its own cell's terms in the scalar order; what is summed across cells (gain, shift, counts,
// the noise measurements' order) is taken from the lanes one cell after the other.

const CELL_W = 4;
const CELL_H = 8;
const CELL_N: f64 = 32;
/** filter.ts SPATIAL_TERMS: (CELL_W - 2) * CELL_H + CELL_W * (CELL_H - 2). */
const SPATIAL_TERMS: f64 = 40;

/** Two cells' rows of 4 f32, a and b, interleaved: (a0 b0 a1 b1) and (a2 b2 a3 b3); then each pair as f64x2. */
@inline function lo2(a: v128, b: v128): v128 { return v128.shuffle<f32>(a, b, 0, 4, 1, 5); }
@inline function hi2(a: v128, b: v128): v128 { return v128.shuffle<f32>(a, b, 2, 6, 3, 7); }
@inline function first(p: v128): v128 { return f64x2.promote_low_f32x4(p); }
@inline function second(p: v128): v128 { return f64x2.promote_low_f32x4(v128.shuffle<f32>(p, p, 2, 3, 2, 3)); }
@inline function sq(v: v128): v128 { return f64x2.mul(v, v); }

/**
 * One step over a raster of `cols` x `rows` cells (`width` = cols * 4 samples a row) at `raster`,
 * against the estimate `est` (updated in place) and the previous raw frame `prev` (then
 * overwritten with this one). Per cell (f32 arrays of cols * rows, `stable` u8): the posterior
 * variance, motion score and stability flag; the noise measurements of the eligible cells, in cell
 * order, into `scratch` and `scratchSpatial`. filter.ts's thresholds are passed in (STABLE_BELOW,
 * CUT_DELTA, CLIP_MARGIN). `out` (4 f64): the sums of gains and of mean innovations, the counts of
 * changed and moving cells. Returns the number of eligible cells.
 */
export function temporalStep(raster: usize, est: usize, prev: usize, width: i32, cols: i32, rows: i32,
  variance: usize, motion: usize, stable: usize, scratch: usize, scratchSpatial: usize,
  r: f64, qStatic: f64, t: f64, stableBelow: f64, cutDelta: f64, clipMargin: f64, out: usize): i32 {
  let gainSum: f64 = 0, shift: f64 = 0;
  let changed = 0, moving = 0, eligible = 0;
  const rowStride = CELL_H * width;
  const zero = f64x2.splat(0);
  const vr = f64x2.splat(r), vq = f64x2.splat(qStatic), vt = f64x2.splat(t), one = f64x2.splat(1), two = f64x2.splat(2);
  const n32 = f64x2.splat(CELL_N);
  for (let cy = 0; cy < rows; cy++) {
    for (let cx = 0; cx < cols; cx += 2) {
      const c0 = cy * cols + cx;
      // An odd last cell runs in both lanes; its second lane is ignored.
      const pair = cx + 1 < cols;
      const c1 = pair ? c0 + 1 : c0;
      const b0 = cy * rowStride + cx * CELL_W, b1 = pair ? b0 + CELL_W : b0;

      // Pass 1: the innovation energy against the prediction; the raw frame difference for the
      // noise estimate (independent of the filter state, so a wrong R cannot confirm itself); the
      // mean; the horizontal spatial second differences (summed first, as the spatial energy wants).
      let sNu = zero, sNu2 = zero, sD2 = zero, sZ = zero, sH = zero;
      for (let sy = 0; sy < CELL_H; sy++) {
        const o0 = <usize>(b0 + sy * width) << 2, o1 = <usize>(b1 + sy * width) << 2;
        let a = v128.load(raster + o0), b = v128.load(raster + o1);
        let l = lo2(a, b), h = hi2(a, b);
        const z0 = first(l), z1 = second(l), z2 = first(h), z3 = second(h);
        a = v128.load(est + o0); b = v128.load(est + o1);
        l = lo2(a, b); h = hi2(a, b);
        const nu0 = f64x2.sub(z0, first(l)), nu1 = f64x2.sub(z1, second(l)), nu2 = f64x2.sub(z2, first(h)), nu3 = f64x2.sub(z3, second(h));
        a = v128.load(prev + o0); b = v128.load(prev + o1);
        l = lo2(a, b); h = hi2(a, b);
        const d0 = f64x2.sub(z0, first(l)), d1 = f64x2.sub(z1, second(l)), d2 = f64x2.sub(z2, first(h)), d3 = f64x2.sub(z3, second(h));
        sNu = f64x2.add(f64x2.add(f64x2.add(f64x2.add(sNu, nu0), nu1), nu2), nu3);
        sNu2 = f64x2.add(f64x2.add(f64x2.add(f64x2.add(sNu2, sq(nu0)), sq(nu1)), sq(nu2)), sq(nu3));
        sD2 = f64x2.add(f64x2.add(f64x2.add(f64x2.add(sD2, sq(d0)), sq(d1)), sq(d2)), sq(d3));
        sZ = f64x2.add(f64x2.add(f64x2.add(f64x2.add(sZ, z0), z1), z2), z3);
        const h1 = f64x2.add(f64x2.sub(z0, f64x2.mul(two, z1)), z2), h2 = f64x2.add(f64x2.sub(z1, f64x2.mul(two, z2)), z3);
        sH = f64x2.add(f64x2.add(sH, sq(h1)), sq(h2));
      }
      const p = f64x2.replace_lane(f64x2.splat(<f64>load<f32>(variance + (<usize>c0 << 2))), 1, <f64>load<f32>(variance + (<usize>c1 << 2)));
      const pq = f64x2.add(p, vq);
      const s = f64x2.add(pq, vr);
      const meanNu2 = f64x2.div(sNu2, n32), meanNu = f64x2.div(sNu, n32);
      const e = f64x2.div(meanNu2, s);
      const q = f64x2.div(vt, e), q2 = sq(q), q4 = sq(q2);
      // Motion likelihood 1 / (1 + (t/e)^8), steep so that noise (e near 1) is not motion; 0
      // where e <= 0 (the TypeScript's branch; the masked lanes add +0 as it did).
      const m = v128.and(f64x2.div(one, f64x2.add(one, sq(q4))), f64x2.gt(e, zero));
      // Unexplained innovation power becomes process noise: gain -> 1 for changes >> noise.
      const excess = f64x2.sub(meanNu2, s);
      const pm = f64x2.add(pq, v128.and(f64x2.mul(m, excess), f64x2.gt(excess, zero)));
      const k = f64x2.div(pm, f64x2.add(pm, vr));

      // Pass 2: the update, and the vertical second differences of rows 1..CELL_H-2 (added after
      // the horizontal ones; white noise: variance 6 R each; linear gradients cancel) from a
      // sliding window of the rows it loads anyway.
      let sS2 = sH;
      let ra0 = zero, ra1 = zero, ra2 = zero, ra3 = zero, rb0 = zero, rb1 = zero, rb2 = zero, rb3 = zero;
      for (let sy = 0; sy < CELL_H; sy++) {
        const o0 = <usize>(b0 + sy * width) << 2, o1 = <usize>(b1 + sy * width) << 2;
        let a = v128.load(raster + o0), b = v128.load(raster + o1);
        let l = lo2(a, b), h = hi2(a, b);
        const z0 = first(l), z1 = second(l), z2 = first(h), z3 = second(h);
        a = v128.load(est + o0); b = v128.load(est + o1);
        l = lo2(a, b); h = hi2(a, b);
        const e0 = first(l), e1 = second(l), e2 = first(h), e3 = second(h);
        const x0 = f32x4.demote_f64x2_zero(f64x2.add(e0, f64x2.mul(k, f64x2.sub(z0, e0))));
        const x1 = f32x4.demote_f64x2_zero(f64x2.add(e1, f64x2.mul(k, f64x2.sub(z1, e1))));
        const x2 = f32x4.demote_f64x2_zero(f64x2.add(e2, f64x2.mul(k, f64x2.sub(z2, e2))));
        const x3 = f32x4.demote_f64x2_zero(f64x2.add(e3, f64x2.mul(k, f64x2.sub(z3, e3))));
        const xl = v128.shuffle<f32>(x0, x1, 0, 4, 1, 5), xh = v128.shuffle<f32>(x2, x3, 0, 4, 1, 5);
        v128.store(est + o1, v128.shuffle<f32>(xl, xh, 2, 3, 6, 7));
        v128.store(est + o0, v128.shuffle<f32>(xl, xh, 0, 1, 4, 5));
        if (sy >= 2) {
          const v0 = f64x2.add(f64x2.sub(ra0, f64x2.mul(two, rb0)), z0), v1 = f64x2.add(f64x2.sub(ra1, f64x2.mul(two, rb1)), z1);
          const v2 = f64x2.add(f64x2.sub(ra2, f64x2.mul(two, rb2)), z2), v3 = f64x2.add(f64x2.sub(ra3, f64x2.mul(two, rb3)), z3);
          sS2 = f64x2.add(f64x2.add(f64x2.add(f64x2.add(sS2, sq(v0)), sq(v1)), sq(v2)), sq(v3));
        }
        ra0 = rb0; ra1 = rb1; ra2 = rb2; ra3 = rb3;
        rb0 = z0; rb1 = z1; rb2 = z2; rb3 = z3;
      }

      // The cells' own results and the frame's sums, one cell after the other.
      const mean = f64x2.div(sZ, n32), dn = f64x2.div(sD2, f64x2.splat(2 * CELL_N)), sp = f64x2.div(sS2, f64x2.splat(6 * SPATIAL_TERMS));
      const lanes = pair ? 2 : 1;
      for (let lane = 0; lane < lanes; lane++) {
        const c = lane ? c1 : c0;
        const kk = lane ? f64x2.extract_lane(k, 1) : f64x2.extract_lane(k, 0);
        const mm = lane ? f64x2.extract_lane(m, 1) : f64x2.extract_lane(m, 0);
        const mn = lane ? f64x2.extract_lane(meanNu, 1) : f64x2.extract_lane(meanNu, 0);
        shift += mn;
        if (mn > cutDelta || mn < -cutDelta) changed++;
        store<f32>(variance + (<usize>c << 2), <f32>(kk * r)); // (1 - K) * P- == K * R
        gainSum += kk;
        store<f32>(motion + (<usize>c << 2), <f32>mm);
        const isStable = mm < stableBelow;
        store<u8>(stable + <usize>c, isStable ? 1 : 0);
        if (!isStable) moving++;
        const mu = lane ? f64x2.extract_lane(mean, 1) : f64x2.extract_lane(mean, 0);
        // Cells near black or white are clipped, their noise understated: not measured.
        if (mu > clipMargin && mu < 1 - clipMargin) {
          store<f32>(scratch + (<usize>eligible << 2), <f32>(lane ? f64x2.extract_lane(dn, 1) : f64x2.extract_lane(dn, 0)));
          store<f32>(scratchSpatial + (<usize>eligible << 2), <f32>(lane ? f64x2.extract_lane(sp, 1) : f64x2.extract_lane(sp, 0)));
          eligible++;
        }
      }
    }
  }
  memory.copy(prev, raster, <usize>(rows * rowStride) << 2);
  store<f64>(out, gainSum);
  store<f64>(out, shift, 8);
  store<f64>(out, <f64>changed, 16);
  store<f64>(out, <f64>moving, 24);
  return eligible;
}
