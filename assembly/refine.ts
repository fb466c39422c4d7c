// AssemblyScript: the fine re-ranking of glyphs (pipeline/refine.ts), re-exported by
// assembly/kernels.ts. f32 arithmetic in a fixed order (lane by lane), so the scalar twin
// (test/reference/refine.ts) reproduces every choice bit for bit with Math.fround.

import { lowerBound } from './search';

/** The fine grid: 8 x 16 samples per cell, twice the matcher's 4 x 8 in each axis. */
const FX: i32 = 8;
const FY: i32 = 16;
const FN: i32 = FX * FY;
/** Coarse rows a cell row's fine rows read: its 8 and RADIUS above and below. */
const RADIUS: i32 = 2;
const TAPS: i32 = 2 * RADIUS + 1;
const WIN: i32 = 8 + 2 * RADIUS;

@inline function clampi(v: i32, lo: i32, hi: i32): i32 {
  return v < lo ? lo : v > hi ? hi : v;
}

/**
 * One coarse row (w samples from src) into 2w fine samples at dst: fine X = 2x + phase is
 * sum over k of taps[phase * TAPS + k] * src[clamp(x - RADIUS + k)], accumulated in f32 from 0
 * in k order. Four x at a time where no index clamps, interleaving the two phases.
 */
function upRow(src: usize, w: i32, taps: usize, dst: usize): void {
  let x = 0;
  for (; x < w && x < RADIUS; x++) upScalar(src, w, taps, dst, x);
  // x .. x + 3 read src[x - RADIUS .. x + 3 + RADIUS], all inside.
  for (; x + 3 + RADIUS < w; x += 4) {
    let e = f32x4.splat(0), o = f32x4.splat(0);
    const p = src + (<usize>(x - RADIUS) << 2);
    for (let k = 0; k < TAPS; k++) {
      const v = v128.load(p + (<usize>k << 2));
      e = f32x4.add(e, f32x4.mul(f32x4.splat(load<f32>(taps + (<usize>k << 2))), v));
      o = f32x4.add(o, f32x4.mul(f32x4.splat(load<f32>(taps + (<usize>(TAPS + k) << 2))), v));
    }
    const d = dst + (<usize>(2 * x) << 2);
    v128.store(d, i32x4.shuffle(e, o, 0, 4, 1, 5));
    v128.store(d, i32x4.shuffle(e, o, 2, 6, 3, 7), 16);
  }
  for (; x < w; x++) upScalar(src, w, taps, dst, x);
}

/** upRow() at one x, indices clamped: the same sums lane for lane. */
function upScalar(src: usize, w: i32, taps: usize, dst: usize, x: i32): void {
  let e: f32 = 0, o: f32 = 0;
  for (let k = 0; k < TAPS; k++) {
    const v = load<f32>(src + (<usize>clampi(x - RADIUS + k, 0, w - 1) << 2));
    e = e + load<f32>(taps + (<usize>k << 2)) * v;
    o = o + load<f32>(taps + (<usize>(TAPS + k) << 2)) * v;
  }
  store<f32>(dst + (<usize>(2 * x) << 2), e);
  store<f32>(dst + (<usize>(2 * x + 1) << 2), o);
}

/**
 * refineGlyphs(): chooses each cell's glyph again on a fine raster (pipeline/refine.ts). For cell
 * rows y0..y1 (exclusive) of the target (width x rows * 8, the matcher's unblurred 4 x 8 raster):
 * - the fine raster of the cell row: each axis upsampled by `taps` (2 phases x TAPS f32, the
 *   polyphase form of a 2x bilinear upsample and the fine viewing blur), rows first;
 * - per cell whose glyph out[cell] is a candidate (inBook[g] = 1): the candidate of least error,
 *   the squared distance of scale x its fine samples to the glyph's fine template (tpl: count x
 *   FN f32) plus toneW x (scale x mean - the template's mean)^2, ties to the lower glyph index;
 *   then the left neighbour's glyph when within `calm` of it.
 * The search: candidates by mean (cand: nc i32 sorted by cgm, their means cgm and zero-mean norms
 * csp as f64), from the mean nearest the cell's outwards, skipping those whose lower bound
 * (FN + toneW) dm^2 + (|t'| - |g'|)^2 (Cauchy-Schwarz) exceeds the best by more than SLACK,
 * stopping where the tone part alone does: the brute force's choice (test/reference/refine.ts).
 * `work`: WIN x 2 x width f32 (the rows pass), then FY x 2 x width f32 (the fine cell row).
 */
export function refineGlyphs(target: usize, width: i32, cols: i32, rows: i32, taps: usize,
  tpl: usize, g2: usize, gm: usize, count: i32, inBook: usize, cand: usize, cgm: usize, csp: usize, nc: i32,
  scale: f64, toneW: f64, calm: f64, out: usize, work: usize, y0: i32, y1: i32): void {
  const fw = 2 * width, height = rows * 8;
  const rowsUp = work;
  const fine = rowsUp + (<usize>(WIN * fw) << 2);
  const c = scale, c2 = scale * scale, bound = <f64>FN + toneW;
  for (let cy = y0; cy < y1; cy++) {
    // Coarse rows 8cy - RADIUS .. 8cy + 7 + RADIUS (clamped), each upsampled along x.
    for (let r = 0; r < WIN; r++) {
      const yy = clampi(cy * 8 - RADIUS + r, 0, height - 1);
      upRow(target + (<usize>(yy * width) << 2), width, taps, rowsUp + (<usize>(r * fw) << 2));
    }
    // Along y: fine row Y = 2y + phase reads local rows (Y >> 1) + k.
    for (let Y = 0; Y < FY; Y++) {
      const ph = Y & 1, base = Y >> 1;
      const d = fine + (<usize>(Y * fw) << 2);
      for (let X = 0; X < fw; X += 4) {
        let acc = f32x4.splat(0);
        for (let t = 0; t < TAPS; t++) {
          const v = v128.load(rowsUp + (<usize>((base + t) * fw + X) << 2));
          acc = f32x4.add(acc, f32x4.mul(f32x4.splat(load<f32>(taps + (<usize>(ph * TAPS + t) << 2))), v));
        }
        v128.store(d + (<usize>X << 2), acc);
      }
    }
    for (let cx = 0; cx < cols; cx++) {
      const cell = cy * cols + cx;
      if (load<u8>(inBook + <usize>load<u16>(out + (<usize>cell << 1))) == 0) continue;
      const p = fine + (<usize>(cx * FX) << 2);
      let sum: f64 = 0, sq: f64 = 0;
      for (let Y = 0; Y < FY; Y++) {
        const q = p + (<usize>(Y * fw) << 2);
        for (let X = 0; X < FX; X++) {
          const v = <f64>load<f32>(q + (<usize>X << 2));
          sum += v;
          sq += v * v;
        }
      }
      const mean = sum / <f64>FN, want = c * mean, base = c2 * sq;
      const var0 = sq - sum * mean;
      const spreadT = var0 > 0 ? c * Math.sqrt(var0) : 0;
      const lo = lowerBound(cgm, nc, want);
      let best = -1, bestE = Infinity;
      let up = lo, down = lo - 1;
      while (up < nc || down >= 0) {
        const du = up < nc ? load<f64>(cgm + (<usize>up << 3)) - want : Infinity;
        const dd = down >= 0 ? want - load<f64>(cgm + (<usize>down << 3)) : Infinity;
        let k: i32, dm: f64;
        if (du <= dd) { k = up++; dm = du; } else { k = down--; dm = dd; }
        const tone = bound * dm * dm;
        if (tone > bestE + SLACK) break;
        const ds = spreadT - load<f64>(csp + (<usize>k << 3));
        if (tone + ds * ds > bestE + SLACK) continue;
        const g = load<i32>(cand + (<usize>k << 2));
        const e = cellError(p, fw, tpl, g, base, c, want, g2, gm, toneW);
        if (e < bestE || (e == bestE && g < best)) { bestE = e; best = g; }
      }
      // No candidate (a NaN target): the matcher's choice stays.
      if (best < 0) continue;
      if (calm > 0 && cx > 0) {
        const g = <i32>load<u16>(out + (<usize>(cell - 1) << 1));
        if (g != best && g < count) {
          const e = cellError(p, fw, tpl, g, base, c, want, g2, gm, toneW) * (1 - calm);
          if (e < bestE) { bestE = e; best = g; }
        }
      }
      store<u16>(out + (<usize>cell << 1), <u16>best);
    }
  }
}

/** Margin on the pruning bounds for the rounding of the f32 dot products. */
const SLACK: f64 = 1e-3;

/**
 * base - 2 c <fine, template g> + g2[g] + toneW (want - gm[g])^2. The dot product in f32 lanes:
 * lane l sums the samples i = l mod 4 of each row in order, then (l0 + l1) + (l2 + l3) in f64.
 */
@inline function cellError(p: usize, fw: i32, tpl: usize, g: i32, base: f64, c: f64, want: f64, g2: usize, gm: usize, toneW: f64): f64 {
  const o = tpl + (<usize>(g * FN) << 2);
  let acc = f32x4.splat(0);
  for (let Y = 0; Y < FY; Y++) {
    const q = p + (<usize>(Y * fw) << 2), t = o + (<usize>(Y * FX) << 2);
    acc = f32x4.add(acc, f32x4.mul(v128.load(q), v128.load(t)));
    acc = f32x4.add(acc, f32x4.mul(v128.load(q, 16), v128.load(t, 16)));
  }
  const dot = (<f64>f32x4.extract_lane(acc, 0) + <f64>f32x4.extract_lane(acc, 1)) + (<f64>f32x4.extract_lane(acc, 2) + <f64>f32x4.extract_lane(acc, 3));
  const dm = want - load<f64>(gm + (<usize>g << 3));
  return base - 2 * c * dot + load<f64>(g2 + (<usize>g << 3)) + toneW * dm * dm;
}
