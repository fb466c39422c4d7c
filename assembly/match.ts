// AssemblyScript: glyph matching (pipeline/match.ts) and its viewing blur (pipeline/view-blur.ts),
// re-exported by assembly/kernels.ts. Same rules as there: the scalar reference's operations in
// its order (test/reference/match.ts, view-blur.ts), so the glyph choices are bit-identical to
// it; the viewing blur and the candidates' dot products in f32 lanes, the rest in f64.

import { lowerBound } from './search';
import { strengthBound, tensorAt } from './tensor';
import { laneSum, ld, ldf32, mac4, st, stf32 } from './mem';

/** The template grid: SUB_X x SUB_Y of glyphs/types.ts. */
const SUB_X: i32 = 4;
const SUB_Y: i32 = 8;
const SAMPLES: i32 = SUB_X * SUB_Y;

// --- Viewing blur (pipeline/view-blur.ts) -------------------------------------------------------

/** The four f32 lanes of v as two f64x2: lo4 the low pair, hi4 the high pair. */
@inline function lo4(v: v128): v128 {
  return f64x2.promote_low_f32x4(v);
}

@inline function hi4(v: v128): v128 {
  return f64x2.promote_low_f32x4(i32x4.shuffle(v, v, 2, 3, 0, 1));
}

/** (a + 2b + c) * q (q: 0.25 in every lane) per lane in f32 arithmetic, in that order. */
@inline function tap121x4(a: v128, b: v128, c: v128, q: v128): v128 {
  return f32x4.mul(f32x4.add(f32x4.add(a, f32x4.add(b, b)), c), q);
}

/**
 * 0.25 in four f32 lanes, loaded before a loop: a v128.const in a loop body is rebuilt on every
 * iteration by V8.
 */
const QUARTER = memory.data<f32>([0.25, 0.25, 0.25, 0.25]);

/** The scalar form of tap121x4(). */
@inline function tap121(a: f32, b: f32, c: f32): f32 {
  return ((a + (b + b)) + c) * <f32>0.25;
}

/**
 * viewBlur() over `count` cells of w x h samples each (src and out: count x w x h f32, tmp: 3 x w),
 * each cell on its own (edges clamped within it): a glyph table's templates in one call.
 */
export function viewBlurCells(src: usize, count: i32, w: i32, h: i32, out: usize, tmp: usize): void {
  const size = <usize>(w * h) << 2;
  for (let g = 0; g < count; g++) viewBlur(src + <usize>g * size, w, h, out + <usize>g * size, tmp);
}

/**
 * viewBlur(): [1 2 1]/4 along x (edges clamped) from src into a ring of three rows at tmp (3 x w
 * f32), then along y into out (not src). In f32 arithmetic, four samples at a time (f32x4;
 * test/reference/view-blur.ts is the scalar twin, with Math.fround). The ring holds the rows a
 * row of out needs (above, itself, below): a whole raster of tmp would be 1.2 MB more memory for
 * a 640 x 480 target, touched for the first time (page faults) in every fresh process.
 */
export function viewBlur(src: usize, w: i32, h: i32, out: usize, tmp: usize): void {
  const rowBytes = <usize>w << 2, q = v128.load(QUARTER);
  blurRowX(src, w, tmp);
  for (let y = 0; y < h; y++) {
    if (y + 1 < h) blurRowX(src + <usize>(y + 1) * rowBytes, w, tmp + <usize>((y + 1) % 3) * rowBytes);
    const tu = tmp + <usize>((y > 0 ? y - 1 : y) % 3) * rowBytes, tr = tmp + <usize>(y % 3) * rowBytes;
    const td = tmp + <usize>((y < h - 1 ? y + 1 : y) % 3) * rowBytes, o = out + <usize>y * rowBytes;
    let x = 0;
    for (; x + 3 < w; x += 4) {
      const b = <usize>x << 2;
      v128.store(o + b, tap121x4(v128.load(tu + b), v128.load(tr + b), v128.load(td + b), q));
    }
    for (; x < w; x++) stf32(o, x, tap121(ldf32(tu, x), ldf32(tr, x), ldf32(td, x)));
  }
}

/** viewBlur()'s pass along x of one row (w samples at s) into t. */
function blurRowX(s: usize, w: i32, t: usize): void {
  if (w == 1) { stf32(t, 0, ldf32(s, 0)); return; }
  // The border sample is its own outer neighbour: tap121(s0, s0, s1).
  stf32(t, 0, tap121(ldf32(s, 0), ldf32(s, 0), ldf32(s, 1)));
  let i = 1;
  const end = w - 1, q = v128.load(QUARTER);
  for (; i + 3 < end; i += 4) {
    const p = s + (<usize>i << 2);
    v128.store(t + (<usize>i << 2), tap121x4(v128.load(p - 4), v128.load(p), v128.load(p + 4), q));
  }
  for (; i < end; i++) stf32(t, i, tap121(ldf32(s, i - 1), ldf32(s, i), ldf32(s, i + 1)));
  stf32(t, end, tap121(ldf32(s, end - 1), ldf32(s, end), ldf32(s, end)));
}

// --- Glyph matching (pipeline/match.ts) ---------------------------------------------------------

/** Bytes of one template (or cell target): SAMPLES f32, a row of SUB_X = 4 per v128. */
const ROW32: usize = <usize>SAMPLES << 2;

/**
 * glyphError(): squared distance of the cell (t, SAMPLES f32) to template g (templates, SAMPLES
 * f32 per glyph) plus the tone term. The dot product in f32 arithmetic: lane l sums column l's
 * products, even rows in one accumulator and odd rows in another (each in row order), then the
 * two; the lanes added (l0 + l1) + (l2 + l3) in f64 (test/reference/match.ts does the same with
 * Math.fround). f32 rather than the f64 of exact products: half the loads and a quarter of the
 * lane operations per candidate, and two short chains of additions instead of two long ones.
 */
@inline function glyphError(t: usize, templates: usize, g: i32, g2: f64, cov: f64, c: f64, base: f64, want: f64, toneW: f64): f64 {
  const o = templates + <usize>g * ROW32;
  let a = f32x4.splat(0), b = f32x4.splat(0);
  if (ROW32 == 128) {
    // The 4 x 8 grid written out: a first render runs this as baseline (Liftoff) code, which
    // pays a check on every loop back-edge.
    a = mac4(a, t, o); b = mac4(b, t + 16, o + 16);
    a = mac4(a, t + 32, o + 32); b = mac4(b, t + 48, o + 48);
    a = mac4(a, t + 64, o + 64); b = mac4(b, t + 80, o + 80);
    a = mac4(a, t + 96, o + 96); b = mac4(b, t + 112, o + 112);
  } else {
    for (let i: usize = 0; i < ROW32; i += 32) {
      a = mac4(a, t + i, o + i);
      b = mac4(b, t + i + 16, o + i + 16);
    }
  }
  const l = f32x4.add(a, b);
  const dot = laneSum(l);
  const dm = want - cov;
  return base - 2 * c * dot + g2 + toneW * dm * dm;
}

/**
 * The samples of cell row cy into rowT (f32, cell after cell, SUB_X per row), with each cell's
 * sum and sum of squares (in f64, in sample order) into rowS. Two neighbouring cells at a time,
 * one per f64x2 lane for the sums, each lane adding its own cell's terms in the scalar order (the
 * same bits); an odd last cell alone.
 */
function loadRow(target: usize, width: i32, cols: i32, cy: i32, rowT: usize, rowS: usize): void {
  const zero = f64x2.splat(0);
  const row0 = cy * SUB_Y * width;
  let cx = 0;
  for (; cx + 1 < cols; cx += 2) {
    let s = zero, q = zero;
    const ta = rowT + <usize>cx * ROW32;
    for (let sy = 0, p = row0 + cx * SUB_X; sy < SUB_Y; sy++, p += width) {
      const a = v128.load(target + (<usize>p << 2)), b = v128.load(target + (<usize>p << 2), 16);
      const o = ta + (<usize>sy << 4);
      v128.store(o, a);
      v128.store(o + ROW32, b);
      const l = v128.shuffle<f32>(a, b, 0, 4, 1, 5), h = v128.shuffle<f32>(a, b, 2, 6, 3, 7);
      const v0 = f64x2.add(lo4(l), zero), v1 = f64x2.add(hi4(l), zero);
      const v2 = f64x2.add(lo4(h), zero), v3 = f64x2.add(hi4(h), zero);
      s = f64x2.add(f64x2.add(f64x2.add(f64x2.add(s, v0), v1), v2), v3);
      q = f64x2.add(f64x2.add(f64x2.add(f64x2.add(q, f64x2.mul(v0, v0)), f64x2.mul(v1, v1)), f64x2.mul(v2, v2)), f64x2.mul(v3, v3));
    }
    const so = rowS + (<usize>cx << 4);
    store<f64>(so, f64x2.extract_lane(s, 0));
    store<f64>(so, f64x2.extract_lane(q, 0), 8);
    store<f64>(so, f64x2.extract_lane(s, 1), 16);
    store<f64>(so, f64x2.extract_lane(q, 1), 24);
  }
  if (cx < cols) {
    let sum: f64 = 0, sq: f64 = 0;
    const tc = rowT + <usize>cx * ROW32;
    let p = row0 + cx * SUB_X;
    for (let sy = 0, i = 0; sy < SUB_Y; sy++, p += width) {
      for (let sx = 0; sx < SUB_X; sx++, i++) {
        const v = ld(target, p + sx) + 0;
        store<f32>(tc + (<usize>i << 2), <f32>v);
        sum += v;
        sq += v * v;
      }
    }
    store<f64>(rowS + (<usize>cx << 4), sum);
    store<f64>(rowS + (<usize>cx << 4), sq, 8);
  }
}

/**
 * matchGlyphs(): per cell, the tone-nearest codebook candidates outwards with the Cauchy-Schwarz
 * bound, then the structure substitution and hysteresis, then serpentine Floyd-Steinberg of the
 * cell-mean error. Arrays: templates (count x SAMPLES f32) with their g2, gm, spread (count f32);
 * coverage (ncov f32); cand (nc i32, ascending coverage); directional (4 i32), direction (u8 per
 * cell) and strength (f32 per cell), used when sAmt > 0; previous (u16 per cell) and stable (u8
 * per cell, or 0), used when previous != 0 and hyst > 0; calm: the neighbour margin (pipeline/match.ts
 * NEIGHBOUR_CALM), 0 for none. Writes out (u16 per cell) for cell
 * rows y0..y1 (exclusive): called band by band, y0 = 0 first, with the same `work` kept. `work`:
 * SAMPLES f32 and 8 bytes, 2 * nc + 1 f64, then 2 * (cols + 2) f32, then (16-byte aligned) cols *
 * SAMPLES f32 and cols * 2 f64 for loadRow(); 16-byte aligned.
 * `tensorSrc` (the unblurred target, or 0): direction and strength are not given but taken here, by
 * tensorAt(), in a cell only when a directional glyph could still beat its best (both are then
 * scratch of one u8 and one f32 per cell); the same glyphs as with the whole raster's tensor.
 */
export function matchGlyphs(target: usize, width: i32, cols: i32, rows: i32,
  templates: usize, g2: usize, gm: usize, spread: usize, count: i32, coverage: usize, ncov: i32, scale: f64,
  cand: usize, nc: i32, directional: usize, direction: usize, strength: usize, sAmt: f64,
  dither: bool, previous: usize, stable: usize, hyst: f64, toneWeight: f64, flatBoost: f64, flatSpread: f64, calm: f64, out: usize, work: usize, y0: i32, y1: i32,
  tensorSrc: usize, tan225: f64): void {
  // The cell's samples (f32, when dithering); per candidate (in codebook order) its mean with
  // -Inf and +Inf sentinels at both ends, and its spread.
  const tf = templates;
  const t = work;
  const cc = t + ROW32 + 8;
  const cs = cc + (<usize>(nc + 1) << 3);
  const errCur = cs + (<usize>nc << 3);
  const errNext = errCur + (<usize>(cols + 2) << 2);
  // Without dithering a cell's samples do not depend on its neighbours' choices: a row's are
  // loaded ahead, two cells at a time (rowT: cols x SAMPLES f64, rowS: their sums and sums of squares).
  const rowT = (errNext + (<usize>(cols + 2) << 2) + 15) & ~(<usize>15);
  const rowS = rowT + <usize>cols * ROW32;
  if (y0 == 0) {
    for (let k = 0; k < nc; k++) {
      const g = load<i32>(cand + (<usize>k << 2));
      store<f64>(cc + (<usize>k << 3), ld(gm, g));
      store<f64>(cs + (<usize>k << 3), ld(spread, g));
    }
    store<f64>(cc - 8, -Infinity);
    store<f64>(cc + (<usize>nc << 3), Infinity);
    memory.fill(errCur, 0, <usize>(cols + 2) << 3);
  }
  const c = scale;
  const toneW0 = toneWeight * <f64>SAMPLES;
  const flatBelow = flatSpread * scale;
  const hysteresis = previous != 0 && hyst > 0;
  // The most a contour can take off a directional glyph's error: strength stays below 1 + rounding.
  const keep = 1 - sAmt * 1.001;
  const height = rows * SUB_Y, inv = 1 / <f64>SAMPLES;

  for (let cy = y0; cy < y1; cy++) {
    const ltr = (cy & 1) == 0 || !dither;
    if (!dither) loadRow(target, width, cols, cy, rowT, rowS);
    for (let step = 0; step < cols; step++) {
      const cx = ltr ? step : cols - 1 - step;
      const cell = cy * cols + cx;
      let tc = t, sum: f64 = 0, sq: f64 = 0;
      if (!dither) {
        tc = rowT + <usize>cx * ROW32;
        sum = load<f64>(rowS + (<usize>cx << 4));
        sq = load<f64>(rowS + (<usize>cx << 4), 8);
      } else {
        const e = ld(errCur, cx + 1);
        let p = cy * SUB_Y * width + cx * SUB_X;
        for (let sy = 0, i = 0; sy < SUB_Y; sy++, p += width) {
          for (let sx = 0; sx < SUB_X; sx++, i++) {
            const v = ld(target, p + sx) + e;
            store<f32>(t + (<usize>i << 2), <f32>v);
            sum += v;
            sq += v * v;
          }
        }
      }
      const mean = sum / <f64>SAMPLES;
      const want = c * mean;
      const base = c * c * sq;
      const var0 = sq - sum * mean;
      const spreadT = var0 > 0 ? c * Math.sqrt(var0) : 0;
      // A flat cell's tone weighs more (pipeline/match.ts FLAT_TONE_BOOST).
      const toneW = spreadT < flatBelow ? toneW0 * (1 + flatBoost * (1 - spreadT / flatBelow)) : toneW0;
      const bound = <f64>SAMPLES + toneW;

      // Tone-nearest candidate by binary search on the means, then outwards on both sides. The
      // shape term splits into N * dm^2 (means) plus the zero-mean parts' distance, which by
      // Cauchy-Schwarz is at least (|t'| - |g'|)^2. Once (N + toneW) * dm^2 exceeds the best
      // error nothing further out can win; the full bound skips single candidates.
      const lo = lowerBound(cc, nc, want);
      let best = -1;
      let bestE = Infinity, lim = Infinity;
      let up = lo, down = lo - 1;
      // A NaN target: the TS stops at once (no candidate); the sentinels would not.
      if (want != want) { up = nc; down = -1; }
      while (up < nc || down >= 0) {
        const du = load<f64>(cc + (<isize>up << 3)) - want;
        const dd = want - load<f64>(cc + (<isize>down << 3));
        let k: i32, dm: f64;
        if (du <= dd) { k = up++; dm = du; } else { k = down--; dm = dd; }
        const tone = bound * dm * dm;
        if (tone >= bestE) break;
        const ds = spreadT - load<f64>(cs + (<usize>k << 3));
        if (tone + ds * ds > lim) continue;
        const g = load<i32>(cand + (<usize>k << 2));
        const e2 = glyphError(tc, tf, g, ld(g2, g), ld(gm, g), c, base, want, toneW);
        if (e2 < bestE) { bestE = e2; best = g; lim = bestE + 1e-5; }
      }
      if (sAmt > 0) {
        if (tensorSrc != 0) {
          store<f32>(strength + (<usize>cell << 2), 0);
          store<u8>(direction + <usize>cell, 0);
          // Its error is at least the search's bound (tone and spread, with the search's slack
          // for rounding) for each direction: where even the largest discount leaves the nearest
          // of the four above the best, no contour can win and the tensor is not needed.
          let lb = Infinity;
          for (let d = 0; d < 4; d++) {
            const g = load<i32>(directional + (<usize>d << 2));
            const dm = want - ld(gm, g), ds = spreadT - ld(spread, g);
            const e = bound * dm * dm + ds * ds;
            if (e < lb) lb = e;
          }
          // Nor where the cell's gradient energy alone keeps its strength x amount at or below
          // the threshold below (its strength then stays 0: no contour, as the tensor would say).
          if (!((lb - 1e-5) * keep >= bestE) && strengthBound(tensorSrc, width, height, SUB_X, SUB_Y, cx, cy, inv) * sAmt * 1.000001 > 0.05) {
            tensorAt(tensorSrc, width, height, SUB_X, SUB_Y, cx, cy, inv, tan225, cell, direction, strength);
          }
        }
        const s = ld(strength, cell) * sAmt;
        if (s > 0.05) {
          const g = load<i32>(directional + (<usize>load<u8>(direction + <usize>cell) << 2));
          const e2 = glyphError(tc, tf, g, ld(g2, g), ld(gm, g), c, base, want, toneW) * (1 - s);
          if (e2 < bestE) { bestE = e2; best = g; }
        }
      }
      if (hysteresis && (!stable || load<u8>(stable + <usize>cell) == 1)) {
        const g = <i32>load<u16>(previous + (<usize>cell << 1));
        if (g != best && g < ncov) {
          const e2 = glyphError(tc, tf, g, ld(g2, g), ld(gm, g), c, base, want, toneW) * (1 - hyst);
          if (e2 < bestE) { bestE = e2; best = g; }
        }
      }
      // Calm: the left neighbour's glyph within `calm` of the best error wins (not with dithering,
      // whose error diffusion wants each cell's own choice).
      if (calm > 0 && !dither && cx > 0) {
        const g = <i32>load<u16>(out + (<usize>(cell - 1) << 1));
        if (g != best && g < ncov) {
          const e2 = glyphError(tc, tf, g, ld(g2, g), ld(gm, g), c, base, want, toneW) * (1 - calm);
          if (e2 < bestE) { bestE = e2; best = g; }
        }
      }
      store<u16>(out + (<usize>cell << 1), <u16>best);

      if (dither) {
        // No candidate (a NaN target): the TS read coverage[-1], undefined, so q is NaN.
        const q = best >= 0 ? mean - ld(coverage, best) / c : NaN;
        if (ltr) {
          st(errCur, cx + 2, ld(errCur, cx + 2) + q * 0.4375);
          st(errNext, cx, ld(errNext, cx) + q * 0.1875);
          st(errNext, cx + 1, ld(errNext, cx + 1) + q * 0.3125);
          st(errNext, cx + 2, ld(errNext, cx + 2) + q * 0.0625);
        } else {
          st(errCur, cx, ld(errCur, cx) + q * 0.4375);
          st(errNext, cx + 2, ld(errNext, cx + 2) + q * 0.1875);
          st(errNext, cx + 1, ld(errNext, cx + 1) + q * 0.3125);
          st(errNext, cx, ld(errNext, cx) + q * 0.0625);
        }
      }
    }
    if (dither) {
      memory.copy(errCur, errNext, <usize>(cols + 2) << 2);
      memory.fill(errNext, 0, <usize>(cols + 2) << 2);
    }
  }
}

/**
 * templateStats() of pipeline/match.ts: for each of `count` templates (SAMPLES f32 each), the sum
 * of squares (g2), the mean (gm) and the zero-mean norm (spread), f32 each; f64 sums in sample
 * order, as the TypeScript took them (a first render ran that loop interpreted, a boxed double
 * per operation).
 */
export function templateStats(templates: usize, count: i32, g2: usize, gm: usize, spread: usize): void {
  for (let g = 0; g < count; g++) {
    let s: f64 = 0, m: f64 = 0;
    const t = templates + (<usize>(g * SAMPLES) << 2);
    for (let i = 0; i < SAMPLES; i++) {
      const v = <f64>load<f32>(t + (<usize>i << 2));
      s += v * v;
      m += v;
    }
    const o = <usize>g << 2;
    store<f32>(g2 + o, <f32>s);
    store<f32>(gm + o, <f32>(m / <f64>SAMPLES));
    store<f32>(spread + o, <f32>Math.sqrt(Math.max(0, s - m * m / <f64>SAMPLES)));
  }
}
