// AssemblyScript: two colours per cell (pipeline/two-color.ts matchTwoColor), re-exported by
// assembly/kernels.ts. f64 maths in the TypeScript's order, rounded to f32 exactly where it
// stored into a Float32Array, so glyphs and colours are bit-identical to the scalar reference
// (test/reference/two-color.ts). The glyph search scores two candidates at a time, one per
// f64x2 lane, each lane's sums in the scalar order.

import { ld, ld64, ldi, st } from './mem';

const SUB_X: i32 = 4;
const SUB_Y: i32 = 8;
const SAMPLES: i32 = SUB_X * SUB_Y;
const CBRT_STEPS: f64 = 4096;
const REC709_R: f64 = 0.2126;
const REC709_G: f64 = 0.7152;
const REC709_B: f64 = 0.0722;

/** The cube root on 0..1 by the table at `cbrt` (CBRT_STEPS + 2 f32), as cbrt01(). */
@inline function cbrt01(cbrt: usize, v: f64): f64 {
  const f = (v <= 0 ? 0 : v >= 1 ? 1 : v) * CBRT_STEPS;
  const i = <i32>f;
  const a = ld(cbrt, i);
  return a + (f - <f64>i) * (ld(cbrt, i + 1) - a);
}

/** fitClamped() of pipeline/two-color.ts: one channel of ink and ground into 0..1, the mean kept. */
@inline function fitClamped(f: f64, b: f64, mean: f64, m: f64, fg: usize, bg: usize, o: i32): void {
  if (f < 0 || f > 1) {
    f = f < 0 ? 0 : f > 1 ? 1 : f;
    if (m < 1) b = (mean - m * f) / (1 - m);
  }
  if (b < 0 || b > 1) {
    b = b < 0 ? 0 : b > 1 ? 1 : b;
    if (m > 0) {
      f = (mean - (1 - m) * b) / m;
      f = f < 0 ? 0 : f > 1 ? 1 : f;
    }
  }
  st(fg, o, f);
  st(bg, o, b);
}

/**
 * matchTwoColor() of pipeline/two-color.ts over every cell. The mask statistics come from there:
 * `centred` (nc x SAMPLES f32), `invSmm`, `mean` (nc f32), `cand` (nc i32: glyph of each
 * candidate), `complement` and `candidateOf` (per glyph, i32, `glyphs` of them); `pairs`: the
 * scored candidates two by two, sample-major (np x SAMPLES x 2 f32), with `pairInv` (np x 2 f32,
 * 0 in an unused lane) and `pairK` (np x 2 i32, the candidate index). `previous` (u16 per cell)
 * and `stable` (u8 per cell) may be 0. `work`: 6 x SAMPLES f64.
 */
export function matchTwoColor(rgb: usize, width: i32, cols: i32, rows: i32, cbrt: usize,
  centred: usize, invSmm: usize, mean: usize, cand: usize, complement: usize, candidateOf: usize, glyphs: i32,
  pairs: usize, pairInv: usize, pairK: usize, np: i32, blank: i32, full: i32, lightInk: bool,
  cells: usize, fg: usize, bg: usize, previous: usize, stable: usize, hysteresis: f64, work: usize): void {
  // Perceptual (x, rounded to f32 as stored there) and linear (l) samples of the cell, as f64.
  const xr = work, xg = xr + (<usize>SAMPLES << 3), xb = xg + (<usize>SAMPLES << 3);
  const lr = xb + (<usize>SAMPLES << 3), lg = lr + (<usize>SAMPLES << 3), lb = lg + (<usize>SAMPLES << 3);
  for (let cy = 0; cy < rows; cy++) {
    for (let cx = 0; cx < cols; cx++) {
      const cell = cy * cols + cx;
      let mr: f64 = 0, mg: f64 = 0, mb: f64 = 0, qr: f64 = 0, qg: f64 = 0, qb: f64 = 0;
      for (let sy = 0, i = 0; sy < SUB_Y; sy++) {
        let p = ((cy * SUB_Y + sy) * width + cx * SUB_X) * 3;
        for (let sx = 0; sx < SUB_X; sx++, i++, p += 3) {
          const r = ld(rgb, p), g = ld(rgb, p + 1), b = ld(rgb, p + 2);
          const o = <usize>i << 3;
          store<f64>(lr + o, r); store<f64>(lg + o, g); store<f64>(lb + o, b);
          mr += r; mg += g; mb += b;
          const pr = cbrt01(cbrt, r), pg = cbrt01(cbrt, g), pb = cbrt01(cbrt, b);
          store<f64>(xr + o, <f64><f32>pr); store<f64>(xg + o, <f64><f32>pg); store<f64>(xb + o, <f64><f32>pb);
          qr += pr; qg += pg; qb += pb;
        }
      }
      mr /= SAMPLES; mg /= SAMPLES; mb /= SAMPLES;
      qr /= SAMPLES; qg /= SAMPLES; qb /= SAMPLES;
      let ss: f64 = 0, ssLin: f64 = 0;
      for (let i = 0; i < SAMPLES; i++) {
        const dr = ld64(xr, i) - qr, dg = ld64(xg, i) - qg, db = ld64(xb, i) - qb;
        ss += dr * dr + dg * dg + db * db;
        const er = ld64(lr, i) - mr, eg = ld64(lg, i) - mg, eb = ld64(lb, i) - mb;
        ssLin += er * er + eg * eg + eb * eb;
      }
      let best = -1;
      let bestGain: f64 = 0;
      if (ssLin > 1e-6) {
        for (let q = 0; q < np; q++) {
          let ar = f64x2.splat(0), ag = f64x2.splat(0), ab = f64x2.splat(0);
          let d = pairs + (<usize>(q * SAMPLES) << 3);
          for (let i = 0; i < SAMPLES; i++, d += 8) {
            const d2 = f64x2.promote_low_f32x4(v128.load64_zero(d));
            const o = <usize>i << 3;
            ar = f64x2.add(ar, f64x2.mul(d2, v128.load64_splat(xr + o)));
            ag = f64x2.add(ag, f64x2.mul(d2, v128.load64_splat(xg + o)));
            ab = f64x2.add(ab, f64x2.mul(d2, v128.load64_splat(xb + o)));
          }
          const inv = f64x2.promote_low_f32x4(v128.load64_zero(pairInv + (<usize>q << 3)));
          const gain = f64x2.mul(f64x2.add(f64x2.add(f64x2.mul(ar, ar), f64x2.mul(ag, ag)), f64x2.mul(ab, ab)), inv);
          const g0 = f64x2.extract_lane(gain, 0), g1 = f64x2.extract_lane(gain, 1);
          if (g0 > bestGain) { bestGain = g0; best = ldi(pairK, q * 2); }
          if (g1 > bestGain) { bestGain = g1; best = ldi(pairK, q * 2 + 1); }
        }
      }
      // Residual error ss - gain: the previous choice stays while within the hysteresis margin.
      let keep = -1;
      let flat = best < 0 || bestGain < 0.02 * ss;
      if (previous != 0 && hysteresis > 0 && (stable == 0 || load<u8>(stable + <usize>cell) == 1)) {
        const pg = <i32>load<u16>(previous + (<usize>cell << 1));
        const pk = pg < glyphs ? ldi(candidateOf, pg) : -1;
        const bestE = flat ? ss : ss - bestGain;
        if (pk < 0) {
          if (pg == blank || pg == full) flat = flat || ss * (1 - hysteresis) <= bestE;
        } else if (!flat || ssLin > 1e-6) {
          let ar: f64 = 0, ag: f64 = 0, ab: f64 = 0;
          for (let i = 0, o = pk * SAMPLES; i < SAMPLES; i++, o++) {
            const dd = ld(centred, o);
            ar += dd * ld64(xr, i); ag += dd * ld64(xg, i); ab += dd * ld64(xb, i);
          }
          const inv = ld(invSmm, pk);
          const e = ss - (ar * ar + ag * ag + ab * ab) * inv;
          if (inv > 0 && e * (1 - hysteresis) <= bestE) { best = pk; flat = false; keep = pg; }
        }
      }
      const o3 = cell * 3;
      if (flat) {
        const light = REC709_R * mr + REC709_G * mg + REC709_B * mb > 0.214;
        let glyph = light == lightInk ? full : blank;
        if (previous != 0 && hysteresis > 0) {
          const pg = <i32>load<u16>(previous + (<usize>cell << 1));
          if (pg == blank || pg == full) glyph = pg;
        }
        store<u16>(cells + (<usize>cell << 1), <u16>glyph);
        st(fg, o3, mr); st(bg, o3, mr);
        st(fg, o3 + 1, mg); st(bg, o3 + 1, mg);
        st(fg, o3 + 2, mb); st(bg, o3 + 2, mb);
        continue;
      }
      // The chosen mask's colours, by least squares on the linear samples.
      let sr: f64 = 0, sg: f64 = 0, sb: f64 = 0;
      for (let i = 0, o = best * SAMPLES; i < SAMPLES; i++, o++) {
        const dd = ld(centred, o);
        sr += dd * ld64(lr, i); sg += dd * ld64(lg, i); sb += dd * ld64(lb, i);
      }
      const inv = ld(invSmm, best);
      sr *= inv; sg *= inv; sb *= inv;
      const m = ld(mean, best);
      const chosen = ldi(cand, best);
      let g = chosen;
      let br = mr - sr * m, bgc = mg - sg * m, bb = mb - sb * m;
      let fr = br + sr, fgc = bgc + sg, fb = bb + sb;
      const inkLighter = REC709_R * sr + REC709_G * sg + REC709_B * sb > 0;
      const comp = ldi(complement, g);
      // A kept glyph keeps its orientation (the complement draws the same picture).
      if (keep >= 0 ? keep != g : inkLighter != lightInk && comp >= 0) {
        g = comp;
        let t = fr; fr = br; br = t;
        t = fgc; fgc = bgc; bgc = t;
        t = fb; fb = bb; bb = t;
      }
      store<u16>(cells + (<usize>cell << 1), <u16>g);
      const mk = g == chosen ? m : 1 - m;
      fitClamped(fr, br, mr, mk, fg, bg, o3);
      fitClamped(fgc, bgc, mg, mk, fg, bg, o3 + 1);
      fitClamped(fb, bb, mb, mk, fg, bg, o3 + 2);
    }
  }
}

/** Braille dot bits: dot (dx, dy) at index dy * 2 + dx. */
@inline function dotBit(i: i32): i32 {
  return <i32>load<u8>(DOT_BITS + <usize>i);
}
const DOT_BITS = memory.data<u8>([0x01, 0x08, 0x02, 0x10, 0x04, 0x20, 0x40, 0x80]);

/**
 * matchBrailleTwoColor() of pipeline/two-color.ts over every cell: `templates` (256 x SAMPLES f32),
 * `lumaLin` (one f64 per sample, the filtered luminance in linear light, or 0: luminance from
 * `rgb`), `previous`/`stable` as matchTwoColor. `work`: 3 x SAMPLES f64, 8 f32 and 8 i32, whose
 * dot order carries from cell to cell as the TypeScript's array does (its sort is stable).
 */
export function matchBrailleTwoColor(rgb: usize, width: i32, cols: i32, rows: i32, templates: usize, lightInk: bool,
  cells: usize, fg: usize, bg: usize, previous: usize, stable: usize, hysteresis: f64, lumaLin: usize, work: usize): void {
  const xr = work, xg = xr + (<usize>SAMPLES << 3), xb = xg + (<usize>SAMPLES << 3);
  const dotY = xb + (<usize>SAMPLES << 3), order = dotY + 32;
  for (let i = 0; i < 8; i++) store<i32>(order + (<usize>i << 2), i);
  const hx = SUB_X / 2, hy = SUB_Y / 4;
  for (let cy = 0; cy < rows; cy++) {
    for (let cx = 0; cx < cols; cx++) {
      const cell = cy * cols + cx;
      let mr: f64 = 0, mg: f64 = 0, mb: f64 = 0;
      for (let i = 0; i < 8; i++) store<f32>(dotY + (<usize>i << 2), 0);
      for (let sy = 0, i = 0; sy < SUB_Y; sy++) {
        let p = ((cy * SUB_Y + sy) * width + cx * SUB_X) * 3;
        for (let sx = 0; sx < SUB_X; sx++, i++, p += 3) {
          const r = ld(rgb, p), g = ld(rgb, p + 1), b = ld(rgb, p + 2);
          const o = <usize>i << 3;
          store<f64>(xr + o, r); store<f64>(xg + o, g); store<f64>(xb + o, b);
          mr += r; mg += g; mb += b;
          const d = dotY + (<usize>((sy / hy) * 2 + sx / hx) << 2);
          const y = lumaLin != 0 ? load<f64>(lumaLin + (<usize>(p / 3) << 3)) : REC709_R * r + REC709_G * g + REC709_B * b;
          store<f32>(d, <f32>(<f64>load<f32>(d) + y));
        }
      }
      mr /= SAMPLES; mg /= SAMPLES; mb /= SAMPLES;
      // Insertion sort by dot value, stable, from the last cell's order (as Array#sort on 8).
      for (let i = 1; i < 8; i++) {
        const k = ldi(order, i);
        const v = ld(dotY, k);
        let j = i - 1;
        while (j >= 0 && ld(dotY, ldi(order, j)) - v > 0) {
          store<i32>(order + (<usize>(j + 1) << 2), ldi(order, j));
          j--;
        }
        store<i32>(order + (<usize>(j + 1) << 2), k);
      }
      // Otsu: split point maximising between-group variance of the sorted dot values.
      let total: f64 = 0;
      for (let i = 0; i < 8; i++) total += ld(dotY, i);
      let bestSplit = 0;
      let bestVar: f64 = 0, acc: f64 = 0;
      for (let s = 1; s < 8; s++) {
        acc += ld(dotY, ldi(order, s - 1));
        const m0 = acc / <f64>s, m1 = (total - acc) / <f64>(8 - s);
        const v = <f64>(s * (8 - s)) * (m0 - m1) * (m0 - m1);
        if (v > bestVar) { bestVar = v; bestSplit = s; }
      }
      const spread = (ld(dotY, ldi(order, 7)) - ld(dotY, ldi(order, 0))) / <f64>(hx * hy);
      const o3 = cell * 3;
      let pattern = 0;
      if (spread > 0.01 && bestSplit > 0) {
        const from = lightInk ? bestSplit : 0, to = lightInk ? 8 : bestSplit;
        for (let k = from; k < to; k++) pattern |= dotBit(ldi(order, k));
      }
      if (previous != 0 && hysteresis > 0 && (stable == 0 || load<u8>(stable + <usize>cell) == 1)) {
        // Within-group sums of squares of the dot values: total minus between-group.
        let sq: f64 = 0;
        for (let i = 0; i < 8; i++) sq += ld(dotY, i) * ld(dotY, i);
        const totalSS = sq - (total * total) / 8;
        const bestSS = pattern != 0 ? totalSS - bestVar / 8 : totalSS;
        const prev = <i32>load<u16>(previous + (<usize>cell << 1)) & 0xff;
        let n1 = 0;
        let s1: f64 = 0;
        for (let i = 0; i < 8; i++) if ((prev & dotBit(i)) != 0) { n1++; s1 += ld(dotY, i); }
        const m1: f64 = n1 != 0 ? s1 / <f64>n1 : 0, m0: f64 = n1 < 8 ? (total - s1) / <f64>(8 - n1) : 0;
        const prevSS = prev != 0 && n1 < 8 && spread > 0.005 ? totalSS - (<f64>(n1 * (8 - n1)) * (m1 - m0) * (m1 - m0)) / 8 : totalSS;
        // A flat cell also stays flat until its spread clears the flat threshold by the margin.
        if (prev == 0 ? spread <= 0.01 / (1 - hysteresis) || prevSS * (1 - hysteresis) <= bestSS : spread > 0.005 && prevSS * (1 - hysteresis) <= bestSS) pattern = prev;
      }
      store<u16>(cells + (<usize>cell << 1), <u16>pattern);
      if (pattern == 0) {
        st(fg, o3, mr); st(bg, o3, mr);
        st(fg, o3 + 1, mg); st(bg, o3 + 1, mg);
        st(fg, o3 + 2, mb); st(bg, o3 + 2, mb);
        continue;
      }
      const o = pattern * SAMPLES;
      let mm: f64 = 0;
      for (let i = 0; i < SAMPLES; i++) mm += ld(templates, o + i);
      mm /= SAMPLES;
      let smm: f64 = 0, ar: f64 = 0, ag: f64 = 0, ab: f64 = 0;
      for (let i = 0; i < SAMPLES; i++) {
        const d = ld(templates, o + i) - mm;
        smm += d * d;
        ar += d * ld64(xr, i); ag += d * ld64(xg, i); ab += d * ld64(xb, i);
      }
      const inv: f64 = smm > 1e-6 ? 1 / smm : 0;
      const sr = ar * inv, sg = ag * inv, sb = ab * inv;
      const br = mr - sr * mm, bgc = mg - sg * mm, bb = mb - sb * mm;
      fitClamped(br + sr, br, mr, mm, fg, bg, o3);
      fitClamped(bgc + sg, bgc, mg, mm, fg, bg, o3 + 1);
      fitClamped(bb + sb, bb, mb, mm, fg, bg, o3 + 2);
    }
  }
}

/**
 * complements() of pipeline/two-color.ts: for each of the nc candidates (i32 glyph indices), the
 * other candidate whose template (SAMPLES f32 per glyph) sums with its own to nearest 1 everywhere
 * (squared error in f64, in sample order, under 0.05 per sample; the first of equals), into out
 * at the candidate's index (i32; -1 when none). A set's pairs are found once, on its first
 * two-colour render, which ran this interpreted (n^2 x 32 operations).
 */
export function complements(templates: usize, cand: usize, nc: i32, out: usize): void {
  for (let j = 0; j < nc; j++) {
    const a = load<i32>(cand + (<usize>j << 2));
    const ta = templates + (<usize>(a * SAMPLES) << 2);
    let best = -1, bestE: f64 = 0.05 * <f64>SAMPLES;
    for (let m = 0; m < nc; m++) {
      const b = load<i32>(cand + (<usize>m << 2));
      if (a == b) continue;
      const tb = templates + (<usize>(b * SAMPLES) << 2);
      let e: f64 = 0;
      for (let i = 0; i < SAMPLES; i++) {
        const d = <f64>load<f32>(ta + (<usize>i << 2)) + <f64>load<f32>(tb + (<usize>i << 2)) - 1;
        e += d * d;
      }
      if (e < bestE) { bestE = e; best = b; }
    }
    store<i32>(out + (<usize>a << 2), best);
  }
}
