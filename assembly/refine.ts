// AssemblyScript: the fine re-ranking of glyphs (pipeline/refine.ts), re-exported by
// assembly/kernels.ts. f32 arithmetic in a fixed order (lane by lane), so the scalar twin
// (test/reference/refine.ts) reproduces every choice bit for bit with Math.fround.

import { lowerBound } from './search';
import { laneSum, mac4 } from './mem';

/** The fine grid: 8 x 16 samples per cell, twice the matcher's 4 x 8 in each axis. */
const FX: i32 = 8;
const FY: i32 = 16;
const FN: i32 = FX * FY;
/** Coarse rows a cell row's fine rows read: its 8 and RADIUS above and below. */
const RADIUS: i32 = 2;
const TAPS: i32 = 2 * RADIUS + 1;
const WIN: i32 = 8 + 2 * RADIUS;
/** A cell's 2 x 2 blocks of the fine raster: 4 x 8. */
const BLOCKS: i32 = (FX / 2) * (FY / 2);

@inline function clampi(v: i32, lo: i32, hi: i32): i32 {
  return v < lo ? lo : v > hi ? hi : v;
}

/**
 * One cell's 4 coarse samples of a row (src, w samples; the cell's from x0) into its 8 fine
 * samples at dst: fine X = 2x + phase is sum over k of taps[phase * TAPS + k] x
 * src[clamp(x - RADIUS + k)], accumulated in f32 from 0 in k order. The taps are held in e0..o4
 * (phase 0 and 1); the four x at once where no index clamps, interleaving the two phases.
 */
@inline function upCell(src: usize, w: i32, taps: usize, x0: i32, dst: usize,
  e0: v128, e1: v128, e2: v128, e3: v128, e4: v128, o0: v128, o1: v128, o2: v128, o3: v128, o4: v128): void {
  if (x0 >= RADIUS && x0 + 3 + RADIUS < w) {
    const p = src + (<usize>(x0 - RADIUS) << 2), zero = f32x4.splat(0);
    const v0 = v128.load(p), v1 = v128.load(p, 4), v2 = v128.load(p, 8), v3 = v128.load(p, 12), v4 = v128.load(p, 16);
    const e = f32x4.add(f32x4.add(f32x4.add(f32x4.add(f32x4.add(zero, f32x4.mul(e0, v0)), f32x4.mul(e1, v1)), f32x4.mul(e2, v2)), f32x4.mul(e3, v3)), f32x4.mul(e4, v4));
    const o = f32x4.add(f32x4.add(f32x4.add(f32x4.add(f32x4.add(zero, f32x4.mul(o0, v0)), f32x4.mul(o1, v1)), f32x4.mul(o2, v2)), f32x4.mul(o3, v3)), f32x4.mul(o4, v4));
    v128.store(dst, i32x4.shuffle(e, o, 0, 4, 1, 5));
    v128.store(dst, i32x4.shuffle(e, o, 2, 6, 3, 7), 16);
  } else {
    for (let x = 0; x < 4; x++) upScalar(src, w, taps, x0 + x, dst + (<usize>(2 * x) << 2));
  }
}

/** Four fine samples of a column phase: sum over k of w_k x the four f32 at q + k rows, from 0 in k order. */
@inline function tapY(q: usize, row: usize, zero: v128, w0: v128, w1: v128, w2: v128, w3: v128, w4: v128): v128 {
  return f32x4.add(f32x4.add(f32x4.add(f32x4.add(f32x4.add(zero, f32x4.mul(w0, v128.load(q))), f32x4.mul(w1, v128.load(q + row))),
    f32x4.mul(w2, v128.load(q + 2 * row))), f32x4.mul(w3, v128.load(q + 3 * row))), f32x4.mul(w4, v128.load(q + 4 * row)));
}

/** upCell() at one x, indices clamped, into dst[0] (phase 0) and dst[1]: the same sums lane for lane. */
function upScalar(src: usize, w: i32, taps: usize, x: i32, dst: usize): void {
  let e: f32 = 0, o: f32 = 0;
  for (let k = 0; k < TAPS; k++) {
    const v = load<f32>(src + (<usize>clampi(x - RADIUS + k, 0, w - 1) << 2));
    e = e + load<f32>(taps + (<usize>k << 2)) * v;
    o = o + load<f32>(taps + (<usize>(TAPS + k) << 2)) * v;
  }
  store<f32>(dst, e);
  store<f32>(dst, o, 4);
}

/**
 * refineGlyphs(): chooses each cell's glyph again on a fine raster (pipeline/refine.ts). For cell
 * rows y0..y1 (exclusive) of the target (width x rows * 8, the matcher's unblurred 4 x 8 raster):
 * - the fine raster of the cell row: each axis upsampled by `taps` (2 phases x TAPS f32, the
 *   polyphase form of a 2x bilinear upsample and the fine viewing blur), rows first;
 * - per cell whose glyph out[cell] is to be chosen again (inBook[g] = 1: the candidates, less
 *   those whose cells stay) and whose 4 x 8 samples' variance is at least minVar: the candidate of least error,
 *   the squared distance of scale x its fine samples to the glyph's fine template (tpl: count x
 *   FN f32) plus toneW x (scale x mean - the template's mean)^2, ties to the lower glyph index;
 *   then the left neighbour's glyph when within `calm` of it.
 * The search: candidates by mean (cand: nc i32 sorted by cgm, their means as f64; book: their
 * records from refineBook(); blocks and stats: pipeline/refine.ts FineTable's, by glyph). From
 * the matcher's glyph's error, those in the window of means where the tone part of the bound
 * alone is within it, then those whose coarse bound is (windowBounds(): the larger of
 * (FN + toneW) dm^2 + (|t'| - |g'|)^2 (Cauchy-Schwarz) and the 4 x 4 block bound), the least
 * bound first, then blockBound(): a candidate is evaluated only where no bound exceeds the best
 * so far by more than SLACK: the brute force's choice (test/reference/refine.ts).
 * `work`: WIN x FX f32 (the cell's rows upsampled along x), FN f32 (its fine raster), BLOCKS f32
 * (its block means), nc i32 (its list of candidates), the window's bounds (up to nc + 3 f32 from
 * the window's group of four) and the listed candidates' (nc f32).
 */
export function refineGlyphs(target: usize, width: i32, cols: i32, rows: i32, taps: usize,
  tpl: usize, g2: usize, gm: usize, count: i32, inBook: usize, cand: usize, cgm: usize, book: usize, nc: i32,
  blocks: usize, stats: usize, minVar: f64, scale: f64, toneW: f64, calm: f64, out: usize, work: usize, y0: i32, y1: i32): void {
  const height = rows * 8;
  const cellUp = work, fine = cellUp + (<usize>(WIN * FX) << 2);
  const blk = fine + (<usize>FN << 2), list = blk + (<usize>BLOCKS << 2), lbs = list + (<usize>nc << 2);
  const listed = lbs + (<usize>((nc + 3) & ~3) << 2);
  const c = scale, c2 = scale * scale, bound = <f64>FN + toneW;
  const e0 = f32x4.splat(load<f32>(taps)), e1 = f32x4.splat(load<f32>(taps, 4)), e2 = f32x4.splat(load<f32>(taps, 8));
  const e3 = f32x4.splat(load<f32>(taps, 12)), e4 = f32x4.splat(load<f32>(taps, 16));
  const o0 = f32x4.splat(load<f32>(taps, 20)), o1 = f32x4.splat(load<f32>(taps, 24)), o2 = f32x4.splat(load<f32>(taps, 28));
  const o3 = f32x4.splat(load<f32>(taps, 32)), o4 = f32x4.splat(load<f32>(taps, 36));
  for (let cy = y0; cy < y1; cy++) {
    for (let cx = 0; cx < cols; cx++) {
      const cell = cy * cols + cx;
      if (load<u8>(inBook + <usize>load<u16>(out + (<usize>cell << 1))) == 0) continue;
      if (minVar > 0 && coarseVar(target + (<usize>(cy * 8 * width + cx * 4) << 2), width) < minVar) continue;
      // The cell's fine raster: coarse rows 8cy - RADIUS .. 8cy + 7 + RADIUS (clamped), each
      // upsampled along x over the cell's 4 columns, then along y (fine row Y = 2y + phase reads
      // local rows (Y >> 1) + k).
      for (let r = 0; r < WIN; r++) {
        const yy = clampi(cy * 8 - RADIUS + r, 0, height - 1);
        upCell(target + (<usize>(yy * width) << 2), width, taps, cx * 4, cellUp + (<usize>(r * FX) << 2), e0, e1, e2, e3, e4, o0, o1, o2, o3, o4);
      }
      for (let Y = 0; Y < FY; Y++) {
        const tp = taps + (<usize>((Y & 1) * TAPS) << 2), r0 = cellUp + (<usize>((Y >> 1) * FX) << 2), row = <usize>FX << 2;
        const w0 = f32x4.splat(load<f32>(tp)), w1 = f32x4.splat(load<f32>(tp, 4)), w2 = f32x4.splat(load<f32>(tp, 8));
        const w3 = f32x4.splat(load<f32>(tp, 12)), w4 = f32x4.splat(load<f32>(tp, 16)), zero = f32x4.splat(0);
        const d = fine + (<usize>(Y * FX) << 2);
        v128.store(d, tapY(r0, row, zero, w0, w1, w2, w3, w4));
        v128.store(d + 16, tapY(r0 + 16, row, zero, w0, w1, w2, w3, w4));
      }
      // Sum and sum of squares in f64 lanes: lane X mod 4, rows in order, X before X + 4; then
      // (l0 + l1) + (l2 + l3), as the twin adds them.
      let s0 = f64x2.splat(0), s1 = f64x2.splat(0), q0 = f64x2.splat(0), q1 = f64x2.splat(0);
      for (let Y = 0; Y < FY; Y++) {
        const q = fine + (<usize>(Y * FX) << 2);
        const a = v128.load(q), b = v128.load(q, 16);
        const al = f64x2.promote_low_f32x4(a), ah = f64x2.promote_low_f32x4(i32x4.shuffle(a, a, 2, 3, 0, 1));
        const bl = f64x2.promote_low_f32x4(b), bh = f64x2.promote_low_f32x4(i32x4.shuffle(b, b, 2, 3, 0, 1));
        s0 = f64x2.add(f64x2.add(s0, al), bl);
        s1 = f64x2.add(f64x2.add(s1, ah), bh);
        q0 = f64x2.add(f64x2.add(q0, f64x2.mul(al, al)), f64x2.mul(bl, bl));
        q1 = f64x2.add(f64x2.add(q1, f64x2.mul(ah, ah)), f64x2.mul(bh, bh));
      }
      const sum = (f64x2.extract_lane(s0, 0) + f64x2.extract_lane(s0, 1)) + (f64x2.extract_lane(s1, 0) + f64x2.extract_lane(s1, 1));
      const sq = (f64x2.extract_lane(q0, 0) + f64x2.extract_lane(q0, 1)) + (f64x2.extract_lane(q1, 0) + f64x2.extract_lane(q1, 1));
      const mean = sum / <f64>FN, want = c * mean, base = c2 * sq;
      const var0 = sq - sum * mean;
      const spreadT = var0 > 0 ? c * Math.sqrt(var0) : 0;
      // The matcher's choice first: usually near the best, its error prunes most of the rest.
      const g0 = <i32>load<u16>(out + (<usize>cell << 1));
      let best = g0, bestE = cellError(fine, tpl, g0, base, c, want, g2, gm, toneW);
      // The window of means whose tone part alone, bound x dm^2, is within bestE (widened a
      // little for the rounding of the square root); its candidates' coarse bounds, four at a
      // time (windowBounds()); those within bestE listed without a branch (a walk outwards from
      // the cell's mean, bound by bound, cost more in mispredicted branches than the few errors
      // it saved, and a wide codebook puts dozens of glyphs in the window; so did a branch on
      // each lane found by a mask of the four, or on each group of four); the least bound first,
      // found among the listed (a fifth of the window) after the listing; then blockBound().
      const r = Math.sqrt((bestE + SLACK) / bound) * (1 + 1e-9) + 1e-12;
      const lo = lowerBound(cgm, nc, want - r), hi = lowerBound(cgm, nc, want + r), thr = bestE + SLACK;
      let n = 0;
      if (lo < hi) {
        const sq2 = c2 * 4 * cellBlocks(fine, blk), res = cellResidual(fine, blk), r2 = c * Math.sqrt(res);
        const base0 = lo & ~3;
        windowBounds(blk, res, book, base0, hi, c, want, spreadT, bound, toneW, lbs);
        const thr32 = <f32>thr;
        for (let k = lo; k < hi; k++) {
          const lb = load<f32>(lbs + (<usize>(k - base0) << 2));
          store<i32>(list + (<usize>n << 2), k);
          store<f32>(listed + (<usize>n << 2), lb);
          n += <i32>(lb <= thr32);
        }
        let least: f32 = <f32>Infinity, first = 0;
        for (let j = 0; j < n; j++) {
          const lb = load<f32>(listed + (<usize>j << 2)), lower = lb < least;
          least = select(lb, least, lower);
          first = select(j, first, lower);
        }
        // The least bound first: most often the best, whose error then prunes the rest.
        if (first > 0) {
          const a = load<i32>(list + (<usize>first << 2)), b = load<f32>(listed + (<usize>first << 2));
          store<i32>(list + (<usize>first << 2), load<i32>(list));
          store<f32>(listed + (<usize>first << 2), load<f32>(listed));
          store<i32>(list, a);
          store<f32>(listed, b);
        }
        for (let j = 0; j < n; j++) {
          const k = load<i32>(list + (<usize>j << 2)), g = load<i32>(cand + (<usize>k << 2));
          if (g == g0 || <f64>load<f32>(listed + (<usize>j << 2)) > bestE + SLACK) continue;
          const dm = load<f64>(cgm + (<usize>k << 3)) - want;
          if (blockBound(blk, blocks + (<usize>(g * BLOCKS) << 2), stats + (<usize>g << 4), c, sq2, r2) + toneW * dm * dm > bestE + SLACK) continue;
          const e = cellError(fine, tpl, g, base, c, want, g2, gm, toneW);
          if (e < bestE || (e == bestE && g < best)) { bestE = e; best = g; }
        }
      }
      if (calm > 0 && cx > 0) {
        const g = <i32>load<u16>(out + (<usize>(cell - 1) << 1));
        if (g != best && g < count) {
          const e = cellError(fine, tpl, g, base, c, want, g2, gm, toneW) * (1 - calm);
          if (e < bestE) { bestE = e; best = g; }
        }
      }
      store<u16>(out + (<usize>cell << 1), <u16>best);
    }
  }
}

/** A cell's 4 x 4 blocks of the fine raster (2 x 4), the candidates' coarse bound's projection. */
const COARSE: i32 = (FX / 4) * (FY / 4);
/** Per group of 4 candidates in `book`: COARSE f32x4 of their 4 x 4 block means, then f32x4 of r8, gm, spread. */
const GROUP: usize = <usize>(COARSE + 3) << 4;

/**
 * refineBook(): the candidates' records for windowBounds(), from the fine table's (by glyph):
 * for candidates k = 0 .. nc - 1 (cand: i32, sorted by their means) in groups of four (the last
 * padded with the last candidate), COARSE f32x4 of the 4 x 4 block means (lane k & 3; each the
 * mean of four 2 x 2 blocks of `blocks`, in f32), then the norm of what those leave of the
 * template (from blockStats' rest and the 2 x 2 means' spread about them), its mean (gm) and its
 * zero-mean norm (spread), as f32; and the candidates' means as f64 at cgm (the window's search).
 */
export function refineBook(cand: usize, nc: i32, blocks: usize, stats: usize, gm: usize, spread: usize, book: usize, cgm: usize): void {
  const ncp = (nc + 3) & ~3;
  for (let k = 0; k < ncp; k++) {
    const g = load<i32>(cand + (<usize>(k < nc ? k : nc - 1) << 2));
    const b = blocks + (<usize>(g * BLOCKS) << 2), at = book + <usize>(k >> 2) * GROUP + (<usize>(k & 3) << 2);
    let rest = load<f64>(stats + (<usize>g << 4), 8);
    rest *= rest;
    for (let i = 0; i < COARSE; i++) {
      // 4 x 4 block i (row i >> 1, column i & 1): 2 x 2 blocks (2 (i >> 1) + y, 2 (i & 1) + x).
      const p = b + (<usize>((i >> 1) * 8 + (i & 1) * 2) << 2);
      const a0 = load<f32>(p), a1 = load<f32>(p, 4), a2 = load<f32>(p, 16), a3 = load<f32>(p, 20);
      const m = ((a0 + a2) + (a1 + a3)) * <f32>0.25;
      store<f32>(at + (<usize>i << 4), m);
      const d0 = <f64>(a0 - m), d1 = <f64>(a1 - m), d2 = <f64>(a2 - m), d3 = <f64>(a3 - m);
      rest += 4 * (d0 * d0 + d1 * d1 + d2 * d2 + d3 * d3);
    }
    store<f32>(at + (<usize>COARSE << 4), <f32>Math.sqrt(rest));
    store<f32>(at + (<usize>(COARSE + 1) << 4), <f32>load<f64>(gm + (<usize>g << 3)));
    store<f32>(at + (<usize>(COARSE + 2) << 4), <f32>load<f64>(spread + (<usize>g << 3)));
    if (k < nc) store<f64>(cgm + (<usize>k << 3), load<f64>(gm + (<usize>g << 3)));
  }
}

/**
 * Lower bounds on the error of candidates base .. hi - 1 (base a multiple of 4; f32 at out, from
 * base), four at a time from their `book` records: the larger of the tone and spread bound,
 * (FN + toneW) dm^2 + (|t'| - |g'|)^2, and the coarse block bound, the squared distance on the
 * 4 x 4 blocks (16 x the means' squared distance) plus (|c t's rest| - |g's rest|)^2 (the
 * reverse triangle inequality) plus toneW dm^2. Both are sums of squares (no cancellation), in
 * f32: their rounding is far inside SLACK. Of the 2 x 2 bound's work a quarter, and it spares
 * blockBound() four candidates in five.
 */
@inline function windowBounds(blk: usize, res: f64, book: usize, base: i32, hi: i32, c: f64, want: f64, spreadT: f64, bound: f64, toneW: f64, out: usize): void {
  // The cell's 4 x 4 block means from its 2 x 2 blocks (rows of 4 f32 in blk): pairs of rows
  // summed, then neighbouring lanes, as refineBook() takes a glyph's: lanes (row, column) (0,0)
  // (0,1) (1,0) (1,1) in u, (2,0) .. (3,1) in v.
  const quarter = f32x4.splat(0.25);
  const s0 = f32x4.add(v128.load(blk), v128.load(blk, 16)), s1 = f32x4.add(v128.load(blk, 32), v128.load(blk, 48));
  const s2 = f32x4.add(v128.load(blk, 64), v128.load(blk, 80)), s3 = f32x4.add(v128.load(blk, 96), v128.load(blk, 112));
  const u = f32x4.mul(f32x4.add(i32x4.shuffle(s0, s1, 0, 2, 4, 6), i32x4.shuffle(s0, s1, 1, 3, 5, 7)), quarter);
  const v = f32x4.mul(f32x4.add(i32x4.shuffle(s2, s3, 0, 2, 4, 6), i32x4.shuffle(s2, s3, 1, 3, 5, 7)), quarter);
  // What the 4 x 4 means leave of the cell: its rest beyond the 2 x 2 means plus 4 x the 2 x 2
  // means' squared spread about their 4 x 4 block's.
  let q = f32x4.splat(0);
  for (let r = 0; r < 8; r++) {
    const m = r < 4 ? u : v, row = (r >> 1) & 1;
    const mm = row == 0 ? i32x4.shuffle(m, m, 0, 0, 1, 1) : i32x4.shuffle(m, m, 2, 2, 3, 3);
    const d = f32x4.sub(v128.load(blk + (<usize>r << 4)), mm);
    q = f32x4.add(q, f32x4.mul(d, d));
  }
  const rT = f32x4.splat(<f32>(c * Math.sqrt(res + 4 * laneSum(q))));
  const cs = f32x4.splat(<f32>c);
  const cu = f32x4.mul(cs, u), cv = f32x4.mul(cs, v);
  const t0 = i32x4.shuffle(cu, cu, 0, 0, 0, 0), t1 = i32x4.shuffle(cu, cu, 1, 1, 1, 1), t2 = i32x4.shuffle(cu, cu, 2, 2, 2, 2), t3 = i32x4.shuffle(cu, cu, 3, 3, 3, 3);
  const t4 = i32x4.shuffle(cv, cv, 0, 0, 0, 0), t5 = i32x4.shuffle(cv, cv, 1, 1, 1, 1), t6 = i32x4.shuffle(cv, cv, 2, 2, 2, 2), t7 = i32x4.shuffle(cv, cv, 3, 3, 3, 3);
  const wantV = f32x4.splat(<f32>want), spreadV = f32x4.splat(<f32>spreadT), boundV = f32x4.splat(<f32>bound), toneV = f32x4.splat(<f32>toneW);
  const sixteen = f32x4.splat(16);
  for (let k = base; k < hi; k += 4) {
    const p = book + <usize>(k >> 2) * GROUP;
    let a = f32x4.sub(t0, v128.load(p)), acc = f32x4.mul(a, a);
    a = f32x4.sub(t1, v128.load(p, 16)); acc = f32x4.add(acc, f32x4.mul(a, a));
    a = f32x4.sub(t2, v128.load(p, 32)); acc = f32x4.add(acc, f32x4.mul(a, a));
    a = f32x4.sub(t3, v128.load(p, 48)); acc = f32x4.add(acc, f32x4.mul(a, a));
    a = f32x4.sub(t4, v128.load(p, 64)); acc = f32x4.add(acc, f32x4.mul(a, a));
    a = f32x4.sub(t5, v128.load(p, 80)); acc = f32x4.add(acc, f32x4.mul(a, a));
    a = f32x4.sub(t6, v128.load(p, 96)); acc = f32x4.add(acc, f32x4.mul(a, a));
    a = f32x4.sub(t7, v128.load(p, 112)); acc = f32x4.add(acc, f32x4.mul(a, a));
    const dr = f32x4.sub(rT, v128.load(p, 128)), dm = f32x4.sub(v128.load(p, 144), wantV), ds = f32x4.sub(spreadV, v128.load(p, 160));
    const dm2 = f32x4.mul(dm, dm);
    const coarse = f32x4.add(f32x4.add(f32x4.mul(sixteen, acc), f32x4.mul(dr, dr)), f32x4.mul(toneV, dm2));
    const spread = f32x4.add(f32x4.mul(boundV, dm2), f32x4.mul(ds, ds));
    v128.store(out + (<usize>(k - base) << 2), f32x4.max(coarse, spread));
  }
}

/**
 * The cell's 2 x 2 block means of the fine raster at p into blk (BLOCKS f32, 4 x 8 blocks row by
 * row, as pipeline/refine.ts takes a template's); returns their sum of squares.
 */
@inline function cellBlocks(p: usize, blk: usize): f64 {
  const row = <usize>FX << 2, quarter = f32x4.splat(0.25);
  let q = f32x4.splat(0);
  for (let by = 0; by < FY / 2; by++) {
    const r = p + <usize>(2 * by) * row;
    const a = f32x4.add(v128.load(r), v128.load(r + row)), b = f32x4.add(v128.load(r, 16), v128.load(r + row, 16));
    const m = f32x4.mul(f32x4.add(i32x4.shuffle(a, b, 0, 2, 4, 6), i32x4.shuffle(a, b, 1, 3, 5, 7)), quarter);
    v128.store(blk + (<usize>by << 4), m);
    q = f32x4.add(q, f32x4.mul(m, m));
  }
  return laneSum(q);
}

/** The squared norm of the fine raster at p less its 2 x 2 block means (blk, from cellBlocks()). */
@inline function cellResidual(p: usize, blk: usize): f64 {
  const row = <usize>FX << 2;
  let q = f32x4.splat(0);
  for (let Y = 0; Y < FY; Y++) {
    const r = p + <usize>Y * row, m = v128.load(blk + (<usize>(Y >> 1) << 4));
    const a = f32x4.sub(v128.load(r), i32x4.shuffle(m, m, 0, 0, 1, 1)), b = f32x4.sub(v128.load(r, 16), i32x4.shuffle(m, m, 2, 2, 3, 3));
    q = f32x4.add(q, f32x4.add(f32x4.mul(a, a), f32x4.mul(b, b)));
  }
  return laneSum(q);
}

/**
 * A lower bound on |c t - g|^2 from the 2 x 2 block means (bt the cell's, bg the glyph's), a
 * quarter of cellError()'s work: the squared distance splits exactly into the part on
 * piecewise-constant blocks, 4 x the means' squared distance (csq = 4 c^2 |bt|^2, less
 * 8 c <bt, bg>, plus st[0] = 4 |bg|^2), and the rest, at least (|c t's rest| - |g's rest|)^2 =
 * (cr - st[1])^2 (Cauchy-Schwarz). The blurred templates are smooth: most of the distance is in
 * the first part.
 */
@inline function blockBound(bt: usize, bg: usize, st: usize, c: f64, csq: f64, cr: f64): f64 {
  let a = f32x4.splat(0), b = f32x4.splat(0);
  // BLOCKS = 32 f32: four steps of 32 bytes, written out (the same adds in the same order).
  a = mac4(a, bt, bg); b = mac4(b, bt + 16, bg + 16);
  a = mac4(a, bt + 32, bg + 32); b = mac4(b, bt + 48, bg + 48);
  a = mac4(a, bt + 64, bg + 64); b = mac4(b, bt + 80, bg + 80);
  a = mac4(a, bt + 96, bg + 96); b = mac4(b, bt + 112, bg + 112);
  const acc = f32x4.add(a, b);
  const dot = laneSum(acc);
  const dr = cr - load<f64>(st, 8);
  return csq - 8 * c * dot + load<f64>(st) + dr * dr;
}

/**
 * The variance of a cell's 4 x 8 coarse samples (at q, rows w apart): f32 sums per column in row
 * order, then (c0 + c1) + (c2 + c3) in f64, as the twin takes it.
 */
@inline function coarseVar(q: usize, w: i32): f64 {
  const row = <usize>w << 2;
  let a = f32x4.splat(0), b = f32x4.splat(0);
  // Two rows per step (the same adds in the same order): half the loop's back-edges, which
  // baseline (Liftoff) code pays a check on.
  for (let r = 0; r < 8; r += 2) {
    const v = v128.load(q + <usize>r * row), u = v128.load(q + <usize>(r + 1) * row);
    a = f32x4.add(f32x4.add(a, v), u);
    b = f32x4.add(f32x4.add(b, f32x4.mul(v, v)), f32x4.mul(u, u));
  }
  const m = laneSum(a) / 32;
  return laneSum(b) / 32 - m * m;
}

/**
 * hexLevels(): glyph bitmaps as glyphs/bitmaps.generated.ts writes them (src, n bytes: one hex
 * digit per pixel, '0'-'9' and 'a'-'f', spaces between rows skipped) to f32 at dst through lut
 * (16 f32: a level's coverage); returns the pixels written. A ramp's bitmaps on a first render,
 * where a loop in JavaScript would run interpreted.
 */
export function hexLevels(src: usize, n: i32, lut: usize, dst: usize): i32 {
  let o = 0;
  for (let j = 0; j < n; j++) {
    const c = <i32>load<u8>(src + <usize>j);
    if (c == 32) continue;
    store<f32>(dst + (<usize>o << 2), load<f32>(lut + (<usize>((c <= 57 ? c - 48 : (c | 32) - 87) & 15) << 2)));
    o++;
  }
  return o;
}

/**
 * fineStats(): pipeline/refine.ts FineTable's statistics of `count` blurred templates (tpl, FN
 * f32 each): per glyph its sum of squares (g2), mean (gm) and zero-mean norm (spread), f64; its
 * 2 x 2 block means (blocks, BLOCKS f32, 4 x 8 blocks row by row, each (a + b + c + d) / 4 in
 * f64 rounded to f32) and 2 f64 (stats): 4 x the means' sum of squares and the norm of what they
 * leave. Scalar f64 in index order: run once per glyph table, where JavaScript would run it
 * interpreted (test/fine-shapes.test.ts checks it against the definitions).
 */
export function fineStats(tpl: usize, count: i32, g2: usize, gm: usize, spread: usize, blocks: usize, stats: usize): void {
  for (let g = 0; g < count; g++) {
    const t = tpl + (<usize>(g * FN) << 2), b0 = blocks + (<usize>(g * BLOCKS) << 2);
    let s: f64 = 0, m: f64 = 0;
    for (let i = 0; i < FN; i++) {
      const v = <f64>load<f32>(t + (<usize>i << 2));
      s += v * v;
      m += v;
    }
    const mean = m / <f64>FN;
    let v2: f64 = 0;
    for (let i = 0; i < FN; i++) {
      const d = <f64>load<f32>(t + (<usize>i << 2)) - mean;
      v2 += d * d;
    }
    store<f64>(g2 + (<usize>g << 3), s);
    store<f64>(gm + (<usize>g << 3), mean);
    store<f64>(spread + (<usize>g << 3), Math.sqrt(v2));
    let q: f64 = 0;
    for (let by = 0; by < FY / 2; by++) {
      for (let x = 0; x < FX / 2; x++) {
        const at = t + (<usize>(2 * by * FX + 2 * x) << 2);
        const mb = <f32>((((<f64>load<f32>(at) + <f64>load<f32>(at, 4)) + <f64>load<f32>(at + (<usize>FX << 2))) + <f64>load<f32>(at + (<usize>FX << 2), 4)) / 4);
        store<f32>(b0 + (<usize>(by * (FX / 2) + x) << 2), mb);
        q += <f64>mb * <f64>mb;
      }
    }
    let r: f64 = 0;
    for (let y = 0; y < FY; y++) {
      for (let x = 0; x < FX; x++) {
        const d = <f64>load<f32>(t + (<usize>(y * FX + x) << 2)) - <f64>load<f32>(b0 + (<usize>((y >> 1) * (FX / 2) + (x >> 1)) << 2));
        r += d * d;
      }
    }
    store<f64>(stats + (<usize>g << 4), 4 * q);
    store<f64>(stats + (<usize>g << 4), Math.sqrt(r), 8);
  }
}

/** Margin on the pruning bounds for the rounding of the f32 dot products. */
const SLACK: f64 = 1e-3;

/**
 * base - 2 c <fine, template g> + g2[g] + toneW (want - gm[g])^2. The dot product in four f32x4
 * accumulators, so the additions do not wait on each other: even rows' first and second halves
 * (a, b), odd rows' (c, d), each in row order; lane l then (a + c) + (b + d), and (l0 + l1) +
 * (l2 + l3) in f64.
 */
@inline function cellError(p: usize, tpl: usize, g: i32, base: f64, c: f64, want: f64, g2: usize, gm: usize, toneW: f64): f64 {
  const o = tpl + (<usize>(g * FN) << 2);
  let a = f32x4.splat(0), b = f32x4.splat(0), cc = f32x4.splat(0), d = f32x4.splat(0);
  // The fine raster and the template are both FX = 8 f32 per row, contiguous: row pair Y, Y + 1
  // is 64 bytes at Y * 32 in each. Four pairs per step (two steps instead of eight), the same adds
  // in the same order: a first render runs this as baseline (Liftoff) code, which pays a check on
  // every loop back-edge.
  for (let Y: usize = 0; Y < <usize>FN * 4; Y += 256) {
    a = mac4(a, p + Y, o + Y); b = mac4(b, p + Y + 16, o + Y + 16); cc = mac4(cc, p + Y + 32, o + Y + 32); d = mac4(d, p + Y + 48, o + Y + 48);
    a = mac4(a, p + Y + 64, o + Y + 64); b = mac4(b, p + Y + 80, o + Y + 80); cc = mac4(cc, p + Y + 96, o + Y + 96); d = mac4(d, p + Y + 112, o + Y + 112);
    a = mac4(a, p + Y + 128, o + Y + 128); b = mac4(b, p + Y + 144, o + Y + 144); cc = mac4(cc, p + Y + 160, o + Y + 160); d = mac4(d, p + Y + 176, o + Y + 176);
    a = mac4(a, p + Y + 192, o + Y + 192); b = mac4(b, p + Y + 208, o + Y + 208); cc = mac4(cc, p + Y + 224, o + Y + 224); d = mac4(d, p + Y + 240, o + Y + 240);
  }
  const acc = f32x4.add(f32x4.add(a, cc), f32x4.add(b, d));
  const dot = laneSum(acc);
  const dm = want - load<f64>(gm + (<usize>g << 3));
  return base - 2 * c * dot + load<f64>(g2 + (<usize>g << 3)) + toneW * dm * dm;
}
