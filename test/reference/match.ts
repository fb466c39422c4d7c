import { SAMPLES, SUB_X, SUB_Y } from '../../src/core/glyphs/types.js';
import { FLAT_SPREAD, FLAT_TONE_BOOST, NEIGHBOUR_CALM, TONE_WEIGHT, type GlyphTable, type MatchOptions } from '../../src/core/pipeline/match.js';
import { cellStructure } from './structure.js';

export type { GlyphTable, MatchOptions };

/** pipeline/match.ts templateStats() as the TypeScript it was (the kernel's oracle): per template, f64 sums in sample order. */
export function templateStats(templates: Float32Array): { g2: Float32Array; gm: Float32Array; spread: Float32Array } {
  const N = SAMPLES;
  const count = templates.length / N;
  const g2 = new Float32Array(count), gm = new Float32Array(count), spread = new Float32Array(count);
  for (let g = 0; g < count; g++) {
    let s = 0, m = 0;
    for (let i = 0; i < N; i++) { const v = templates[g * N + i]!; s += v * v; m += v; }
    g2[g] = s;
    gm[g] = m / N;
    spread[g] = Math.sqrt(Math.max(0, s - m * m / N));
  }
  return { g2, gm, spread };
}

/**
 * Chooses each cell's glyph by shape: least squares between the cell's SUB_X x SUB_Y target ink
 * (scaled to the ramp) and each candidate's measured template, plus a tone term on the means.
 * Candidates are the codebook glyphs nearest in coverage (the tone term rules out the others
 * anyway). Floyd-Steinberg (serpentine) diffuses the cell-mean error when dithering; otherwise a
 * cell keeps its left neighbour's glyph when that is within `calm` of its best.
 */
export function matchGlyphs(target: Float32Array, width: number, cols: number, rows: number, table: GlyphTable, o: MatchOptions, out: Uint16Array): Uint16Array {
  const { templates, coverage } = table;
  const cand = o.candidates;
  const nc = cand.length;
  const c = o.scale;
  const { g2, gm, spread } = templateStats(templates);
  const candCov = new Float32Array(nc);
  for (let k = 0; k < nc; k++) candCov[k] = gm[cand[k]!]!;
  const t = new Float32Array(SAMPLES);
  const errCur = new Float32Array(cols + 2);
  const errNext = new Float32Array(cols + 2);
  const dir = o.directional;
  const st = o.structure === 'target' ? cellStructure(target, width, rows * SUB_Y, SUB_X, SUB_Y) : o.structure;
  const sAmt = st && dir ? o.structureAmount : 0;
  const prev = o.previous ?? null;
  const stable = o.stable ?? null;
  const hyst = o.hysteresis ?? 0;
  const calm = o.calm ?? NEIGHBOUR_CALM;
  const toneW0 = TONE_WEIGHT * SAMPLES;
  const flatBelow = FLAT_SPREAD * c;
  const subX = SUB_X, subY = SUB_Y, samples = SAMPLES;

  for (let cy = 0; cy < rows; cy++) {
    const ltr = (cy & 1) === 0 || !o.dither;
    for (let step = 0; step < cols; step++) {
      const cx = ltr ? step : cols - 1 - step;
      const cell = cy * cols + cx;
      const e = o.dither ? errCur[cx + 1]! : 0;
      let sum = 0, sq = 0;
      let p = cy * subY * width + cx * subX;
      for (let sy = 0, i = 0; sy < subY; sy++, p += width) {
        for (let sx = 0; sx < subX; sx++, i++) {
          const v = target[p + sx]! + e;
          t[i] = v;
          sum += v;
          sq += v * v;
        }
      }
      const mean = sum / samples;
      const want = c * mean;
      const base = c * c * sq;
      // Norm of the cell's zero-mean part: with each template's, a per-candidate lower bound.
      const var0 = sq - sum * mean;
      const spreadT = var0 > 0 ? c * Math.sqrt(var0) : 0;
      // A flat cell has no shape to match: its tone weighs up to 1 + FLAT_TONE_BOOST times more.
      const toneW = spreadT < flatBelow ? toneW0 * (1 + FLAT_TONE_BOOST * (1 - spreadT / flatBelow)) : toneW0;
      const bound = SAMPLES + toneW;

      // Tone-nearest candidate by binary search on coverage, then outwards on both sides. The
      // shape term splits into N * dm^2 (means) plus the zero-mean parts' distance, which by
      // Cauchy-Schwarz is at least (|t'| - |g'|)^2. Once (N + toneW) * dm^2 exceeds the best error
      // nothing further out on that side can win; the full bound skips single candidates.
      let lo = 0, hi = nc;
      while (lo < hi) {
        const mid = (lo + hi) >> 1;
        if (candCov[mid]! < want) lo = mid + 1; else hi = mid;
      }
      let best = -1;
      let bestE = Infinity;
      let up = lo, down = lo - 1;
      while (up < nc || down >= 0) {
        const du = up < nc ? candCov[up]! - want : Infinity;
        const dd = down >= 0 ? want - candCov[down]! : Infinity;
        const k = du <= dd ? up++ : down--;
        const dm = du <= dd ? du : dd;
        const tone = bound * dm * dm;
        if (tone >= bestE) break;
        const g = cand[k]!;
        const ds = spreadT - spread[g]!;
        if (tone + ds * ds > bestE + 1e-5) continue;
        const e2 = glyphError(t, templates, g, g2[g]!, gm[g]!, c, base, want, toneW);
        if (e2 < bestE) { bestE = e2; best = g; }
      }
      if (sAmt > 0) {
        const s = st!.strength[cell]! * sAmt;
        if (s > 0.05) {
          const g = dir![st!.direction[cell]!]!;
          const e2 = glyphError(t, templates, g, g2[g]!, gm[g]!, c, base, want, toneW) * (1 - s);
          if (e2 < bestE) { bestE = e2; best = g; }
        }
      }
      if (prev && hyst > 0 && (!stable || stable[cell] === 1)) {
        const g = prev[cell]!;
        if (g !== best && g < coverage.length) {
          const e2 = glyphError(t, templates, g, g2[g]!, gm[g]!, c, base, want, toneW) * (1 - hyst);
          if (e2 < bestE) { bestE = e2; best = g; }
        }
      }
      if (calm > 0 && !o.dither && cx > 0) {
        const g = out[cell - 1]!;
        if (g !== best && g < coverage.length) {
          const e2 = glyphError(t, templates, g, g2[g]!, gm[g]!, c, base, want, toneW) * (1 - calm);
          if (e2 < bestE) { bestE = e2; best = g; }
        }
      }
      out[cell] = best;

      if (o.dither) {
        const q = mean - coverage[best]! / c;
        if (ltr) {
          errCur[cx + 2]! += q * 0.4375;
          errNext[cx]! += q * 0.1875;
          errNext[cx + 1]! += q * 0.3125;
          errNext[cx + 2]! += q * 0.0625;
        } else {
          errCur[cx]! += q * 0.4375;
          errNext[cx + 2]! += q * 0.1875;
          errNext[cx + 1]! += q * 0.3125;
          errNext[cx]! += q * 0.0625;
        }
      }
    }
    if (o.dither) {
      errCur.set(errNext);
      errNext.fill(0);
    }
  }
  return out;
}

const N = SAMPLES;

function glyphError(t: Float32Array, templates: Float32Array, g: number, g2: number, cov: number, c: number, base: number, want: number, toneW: number): number {
  // In f32 (each operation rounded with Math.fround), as the kernel's f32x4 lanes: column l's
  // products, even rows in one sum and odd rows in another (each in row order), then the two;
  // the columns added (l0 + l1) + (l2 + l3).
  const f = Math.fround, lane = [0, 0, 0, 0];
  for (let l = 0; l < SUB_X; l++) {
    let even = 0, odd = 0;
    for (let y = 0; y < SUB_Y; y++) {
      const p = f(t[y * SUB_X + l]! * templates[g * N + y * SUB_X + l]!);
      if (y % 2 === 0) even = f(even + p); else odd = f(odd + p);
    }
    lane[l] = f(even + odd);
  }
  const dot = (lane[0]! + lane[1]!) + (lane[2]! + lane[3]!);
  const dm = want - cov;
  return base - 2 * c * dot + g2 + toneW * dm * dm;
}
