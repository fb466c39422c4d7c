import { SAMPLES, SUB_X, SUB_Y } from '../../src/core/glyphs/types.js';
import { REC709_B, REC709_G, REC709_R, srgbToLinear } from '../../src/core/pipeline/linear.js';
import { maskStats, type TwoColorGlyphs } from '../../src/core/pipeline/two-color.js';

/**
 * The scalar twins of assembly/two-color.ts (pipeline/two-color.ts matchTwoColor and
 * matchBrailleTwoColor), as they were in TypeScript: every candidate of every cell one at a
 * time. Not optimised: the specification. The glyph set's mask statistics are the pipeline's
 * (computed once per set in TypeScript, inputs of the kernel, not part of it).
 */
/** Cube root on 0..1 by table (linear between 4096 steps): glyph choice needs no more, Math.cbrt costs 3 per sample. */
const CBRT_STEPS = 4096;
const CBRT = (() => {
  const t = new Float32Array(CBRT_STEPS + 2);
  for (let i = 0; i <= CBRT_STEPS + 1; i++) t[i] = Math.cbrt(Math.min(1, i / CBRT_STEPS));
  return t;
})();
function cbrt01(v: number): number {
  const f = (v <= 0 ? 0 : v >= 1 ? 1 : v) * CBRT_STEPS;
  const i = f | 0;
  return CBRT[i]! + (f - i) * (CBRT[i + 1]! - CBRT[i]!);
}

/**
 * Chooses each cell's glyph and its ink and background colours (linear light, 3 floats per cell)
 * from the cell's SUB_X x SUB_Y linear RGB samples (`rgb`, row-major, `width` samples per row).
 * `lightInk`: of two complementary glyphs giving the same picture, take the one whose ink is the
 * lighter colour (light ink on a dark ground, as the text formats read); false: the darker.
 *
 * Video (`previous` cells, `stable` per cell or null for all, `hysteresis` 0..1): a still cell
 * keeps its previous glyph, or its previous flat look, unless the best one leaves less than
 * (1 - hysteresis) of its residual error; a glyph and its complement count as the same shape.
 */
export function matchTwoColor(rgb: Float32Array, width: number, cols: number, rows: number, set: TwoColorGlyphs, lightInk: boolean,
  cells: Uint16Array, fg: Float32Array, bg: Float32Array,
  previous: Uint16Array | null = null, stable: Uint8Array | null = null, hysteresis = 0): void {
  const { centred, invSmm, mean, candidateOf, pairK } = maskStats(set);
  // The candidates scored (a uniform mask scores nothing; of a complementary pair, the first).
  const scored = new Uint8Array(set.candidates.length);
  for (const k of pairK) if (k >= 0) scored[k] = 1;
  const cand = set.candidates;
  const nc = cand.length;
  // Perceptual (x) and linear (l) samples of the cell.
  const xr = new Float32Array(SAMPLES), xg = new Float32Array(SAMPLES), xb = new Float32Array(SAMPLES);
  const lr = new Float32Array(SAMPLES), lg = new Float32Array(SAMPLES), lb = new Float32Array(SAMPLES);
  for (let cy = 0; cy < rows; cy++) {
    for (let cx = 0; cx < cols; cx++) {
      const cell = cy * cols + cx;
      let mr = 0, mg = 0, mb = 0, qr = 0, qg = 0, qb = 0;
      for (let sy = 0, i = 0; sy < SUB_Y; sy++) {
        let p = ((cy * SUB_Y + sy) * width + cx * SUB_X) * 3;
        for (let sx = 0; sx < SUB_X; sx++, i++, p += 3) {
          const r = rgb[p]!, g = rgb[p + 1]!, b = rgb[p + 2]!;
          lr[i] = r; lg[i] = g; lb[i] = b;
          mr += r; mg += g; mb += b;
          const pr = cbrt01(r), pg = cbrt01(g), pb = cbrt01(b);
          xr[i] = pr; xg[i] = pg; xb[i] = pb;
          qr += pr; qg += pg; qb += pb;
        }
      }
      mr /= SAMPLES; mg /= SAMPLES; mb /= SAMPLES;
      qr /= SAMPLES; qg /= SAMPLES; qb /= SAMPLES;
      let ss = 0, ssLin = 0;
      for (let i = 0; i < SAMPLES; i++) {
        const dr = xr[i]! - qr, dg = xg[i]! - qg, db = xb[i]! - qb;
        ss += dr * dr + dg * dg + db * db;
        const er = lr[i]! - mr, eg = lg[i]! - mg, eb = lb[i]! - mb;
        ssLin += er * er + eg * eg + eb * eb;
      }
      let best = -1, bestGain = 0;
      // Nothing to draw below a variance floor (in linear light: the cube root would magnify
      // the noise of black), or below 2 % of the cell's variance: a flat cell.
      if (ssLin > 1e-6) {
        for (let k = 0; k < nc; k++) {
          const inv = invSmm[k]!;
          if (inv === 0 || scored[k] === 0) continue;
          let ar = 0, ag = 0, ab = 0;
          for (let i = 0, o = k * SAMPLES; i < SAMPLES; i++, o++) {
            const d = centred[o]!;
            ar += d * xr[i]!; ag += d * xg[i]!; ab += d * xb[i]!;
          }
          const gain = (ar * ar + ag * ag + ab * ab) * inv;
          if (gain > bestGain) { bestGain = gain; best = k; }
        }
      }
      // Residual error ss - gain: the previous choice stays while within the hysteresis margin.
      let keep = -1;
      let flat = best < 0 || bestGain < 0.02 * ss;
      if (previous && hysteresis > 0 && (!stable || stable[cell] === 1)) {
        const pg = previous[cell]!;
        const pk = pg < candidateOf.length ? candidateOf[pg]! : -1;
        const bestE = flat ? ss : ss - bestGain;
        if (pk < 0) {
          // Previously flat (blank or full block): stays flat unless a shape clearly pays.
          if (pg === set.blank || pg === set.full) flat = flat || ss * (1 - hysteresis) <= bestE;
        } else if (!flat || ssLin > 1e-6) {
          let ar = 0, ag = 0, ab = 0;
          for (let i = 0, o = pk * SAMPLES; i < SAMPLES; i++, o++) {
            const d = centred[o]!;
            ar += d * xr[i]!; ag += d * xg[i]!; ab += d * xb[i]!;
          }
          const e = ss - (ar * ar + ag * ag + ab * ab) * invSmm[pk]!;
          if (invSmm[pk]! > 0 && e * (1 - hysteresis) <= bestE) { best = pk; flat = false; keep = pg; }
        }
      }
      const o3 = cell * 3;
      if (flat) {
        // Flat: ink and ground alike; the glyph only matters to text readers: a light cell is a
        // full block under light ink (0.214 = mid-grey in linear light), else the blank.
        const light = REC709_R * mr + REC709_G * mg + REC709_B * mb > 0.214;
        cells[cell] = light === lightInk ? set.full : set.blank;
        // Video: a flat cell looks the same either way, so it keeps its previous flat glyph.
        if (previous && hysteresis > 0 && (previous[cell] === set.blank || previous[cell] === set.full)) cells[cell] = previous[cell]!;
        fg[o3] = bg[o3] = mr; fg[o3 + 1] = bg[o3 + 1] = mg; fg[o3 + 2] = bg[o3 + 2] = mb;
        continue;
      }
      // The chosen mask's colours, by least squares on the linear samples.
      let sr = 0, sg = 0, sb = 0;
      for (let i = 0, o = best * SAMPLES; i < SAMPLES; i++, o++) {
        const d = centred[o]!;
        sr += d * lr[i]!; sg += d * lg[i]!; sb += d * lb[i]!;
      }
      const inv = invSmm[best]!;
      sr *= inv; sg *= inv; sb *= inv;
      const m = mean[best]!;
      let g = cand[best]!;
      let br = mr - sr * m, bgc = mg - sg * m, bb = mb - sb * m;
      let fr = br + sr, fgc = bgc + sg, fb = bb + sb;
      const inkLighter = REC709_R * sr + REC709_G * sg + REC709_B * sb > 0;
      const comp = set.complement[g]!;
      // A kept glyph keeps its orientation (the complement draws the same picture).
      if (keep >= 0 ? keep !== g : inkLighter !== lightInk && comp >= 0) {
        g = comp;
        [fr, br] = [br, fr];
        [fgc, bgc] = [bgc, fgc];
        [fb, bb] = [bb, fb];
      }
      cells[cell] = g;
      const mk = g === cand[best]! ? m : 1 - m;
      fitClamped(fr, br, mr, mk, fg, bg, o3);
      fitClamped(fgc, bgc, mg, mk, fg, bg, o3 + 1);
      fitClamped(fb, bb, mb, mk, fg, bg, o3 + 2);
    }
  }
}

const clamp01 = (v: number) => (v < 0 ? 0 : v > 1 ? 1 : v);

/**
 * One channel of ink f and ground b into 0..1 keeping the cell's mean (b + m (f - b) = mean, m the
 * mask's mean coverage): the least-squares pair can overshoot (a thin mask extrapolates its ink).
 */
function fitClamped(f: number, b: number, mean: number, m: number, fg: Float32Array, bg: Float32Array, o: number): void {
  if (f < 0 || f > 1) {
    f = clamp01(f);
    if (m < 1) b = (mean - m * f) / (1 - m);
  }
  if (b < 0 || b > 1) {
    b = clamp01(b);
    if (m > 0) f = clamp01((mean - (1 - m) * b) / m);
  }
  fg[o] = f;
  bg[o] = b;
}

/**
 * Braille with two colours: the 2x4 dots of a cell split by luminance into two groups (the split
 * of the 8 dot values with the least within-group variance: Otsu on 8 values), the lighter group
 * drawn as dots (`lightInk`; else the darker), then ink and background by least squares on the
 * glyph's measured mask. A cell whose dots differ by less than `flat` is one colour.
 * Video (`previous`, `stable`, `hysteresis` as for matchTwoColor): a still cell keeps its previous
 * pattern while that split's within-group variance is within the hysteresis margin of the best,
 * and the dots are split on `filteredLuma` (the temporal filter's sRGB-encoded luminance, same
 * sample grid) instead of the raw frame, whose sensor noise reorders near-equal dots every frame.
 */
export function matchBrailleTwoColor(rgb: Float32Array, width: number, cols: number, rows: number, templates: Float32Array, lightInk: boolean,
  cells: Uint16Array, fg: Float32Array, bg: Float32Array,
  previous: Uint16Array | null = null, stable: Uint8Array | null = null, hysteresis = 0, filteredLuma: Float32Array | null = null): void {
  const BIT = [0x01, 0x08, 0x02, 0x10, 0x04, 0x20, 0x40, 0x80]; // dot (dx, dy) at index dy * 2 + dx
  const dotY = new Float32Array(8);
  const order = [0, 1, 2, 3, 4, 5, 6, 7];
  const xr = new Float32Array(SAMPLES), xg = new Float32Array(SAMPLES), xb = new Float32Array(SAMPLES);
  const hx = SUB_X / 2, hy = SUB_Y / 4;
  for (let cy = 0; cy < rows; cy++) {
    for (let cx = 0; cx < cols; cx++) {
      const cell = cy * cols + cx;
      let mr = 0, mg = 0, mb = 0;
      dotY.fill(0);
      for (let sy = 0, i = 0; sy < SUB_Y; sy++) {
        let p = ((cy * SUB_Y + sy) * width + cx * SUB_X) * 3;
        for (let sx = 0; sx < SUB_X; sx++, i++, p += 3) {
          const r = rgb[p]!, g = rgb[p + 1]!, b = rgb[p + 2]!;
          xr[i] = r; xg[i] = g; xb[i] = b;
          mr += r; mg += g; mb += b;
          dotY[((sy / hy) | 0) * 2 + ((sx / hx) | 0)]! += filteredLuma ? srgbToLinear(filteredLuma[p / 3]!) : REC709_R * r + REC709_G * g + REC709_B * b;
        }
      }
      mr /= SAMPLES; mg /= SAMPLES; mb /= SAMPLES;
      order.sort((a, b) => dotY[a]! - dotY[b]!);
      // Otsu: split point maximising between-group variance of the sorted dot values.
      let total = 0;
      for (let i = 0; i < 8; i++) total += dotY[i]!;
      let bestSplit = 0, bestVar = 0, acc = 0;
      for (let s = 1; s < 8; s++) {
        acc += dotY[order[s - 1]!]!;
        const m0 = acc / s, m1 = (total - acc) / (8 - s);
        const v = s * (8 - s) * (m0 - m1) * (m0 - m1);
        if (v > bestVar) { bestVar = v; bestSplit = s; }
      }
      const spread = (dotY[order[7]!]! - dotY[order[0]!]!) / (hx * hy);
      const o3 = cell * 3;
      let pattern = 0;
      if (spread > 0.01 && bestSplit > 0) {
        const from = lightInk ? bestSplit : 0, to = lightInk ? 8 : bestSplit;
        for (let k = from; k < to; k++) pattern |= BIT[order[k]!]!;
      }
      if (previous && hysteresis > 0 && (!stable || stable[cell] === 1)) {
        // Within-group sums of squares of the dot values: total minus between-group.
        let sq = 0;
        for (let i = 0; i < 8; i++) sq += dotY[i]! * dotY[i]!;
        const totalSS = sq - (total * total) / 8;
        const bestSS = pattern ? totalSS - bestVar / 8 : totalSS;
        const prev = previous[cell]! & 0xff;
        let n1 = 0, s1 = 0;
        for (let i = 0; i < 8; i++) if (prev & BIT[i]!) { n1++; s1 += dotY[i]!; }
        const m1 = n1 ? s1 / n1 : 0, m0 = n1 < 8 ? (total - s1) / (8 - n1) : 0;
        const prevSS = prev && n1 < 8 && spread > 0.005 ? totalSS - (n1 * (8 - n1) * (m1 - m0) * (m1 - m0)) / 8 : totalSS;
        // A flat cell also stays flat until its spread clears the flat threshold by the margin.
        if (prev === 0 ? spread <= 0.01 / (1 - hysteresis) || prevSS * (1 - hysteresis) <= bestSS : spread > 0.005 && prevSS * (1 - hysteresis) <= bestSS) pattern = prev;
      }
      cells[cell] = pattern;
      if (pattern === 0) {
        fg[o3] = bg[o3] = mr; fg[o3 + 1] = bg[o3 + 1] = mg; fg[o3 + 2] = bg[o3 + 2] = mb;
        continue;
      }
      const o = pattern * SAMPLES;
      let mm = 0;
      for (let i = 0; i < SAMPLES; i++) mm += templates[o + i]!;
      mm /= SAMPLES;
      let smm = 0, ar = 0, ag = 0, ab = 0;
      for (let i = 0; i < SAMPLES; i++) {
        const d = templates[o + i]! - mm;
        smm += d * d;
        ar += d * xr[i]!; ag += d * xg[i]!; ab += d * xb[i]!;
      }
      const inv = smm > 1e-6 ? 1 / smm : 0;
      const sr = ar * inv, sg = ag * inv, sb = ab * inv;
      const br = mr - sr * mm, bgc = mg - sg * mm, bb = mb - sb * mm;
      fitClamped(br + sr, br, mr, mm, fg, bg, o3);
      fitClamped(bgc + sg, bgc, mg, mm, fg, bg, o3 + 1);
      fitClamped(bb + sb, bb, mb, mm, fg, bg, o3 + 2);
    }
  }
}

/** pipeline/two-color.ts complements() as the TypeScript it was (assembly/two-color.ts complements' oracle). */
export function complements(templates: Float32Array, candidates: Int32Array, glyphCount: number): Int32Array {
  const out = new Int32Array(glyphCount).fill(-1);
  for (const a of candidates) {
    let best = -1, bestE = 0.05 * SAMPLES;
    for (const b of candidates) {
      if (a === b) continue;
      let e = 0;
      for (let i = 0; i < SAMPLES; i++) {
        const d = templates[a * SAMPLES + i]! + templates[b * SAMPLES + i]! - 1;
        e += d * d;
      }
      if (e < bestE) { bestE = e; best = b; }
    }
    out[a] = best;
  }
  return out;
}
