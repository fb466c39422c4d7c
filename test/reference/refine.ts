import { FINE_SAMPLES, FINE_X, FINE_Y, type FineTable } from '../../src/core/pipeline/refine.js';
import { NEIGHBOUR_CALM, TONE_WEIGHT } from '../../src/core/pipeline/match.js';

/**
 * The scalar twin of assembly/refine.ts (pipeline/refine.ts): the fine raster of the whole target
 * first, then every candidate of every cell by brute force (the kernel prunes its search with
 * bounds). f32 sums with Math.fround in the kernel's order (lane by lane), so the glyphs are the
 * same bit for bit. Not optimised: the specification. A cell whose 4 x 8 target samples' standard
 * deviation is below `minSpread`, or whose glyph is one of `keep`, keeps its glyph.
 */
export function refineGlyphs(target: Float32Array, width: number, cols: number, rows: number, fine: FineTable,
  candidates: Int32Array, scale: number, cells: Uint16Array, calm = NEIGHBOUR_CALM, minSpread = 0, keep: readonly number[] = []): Uint16Array {
  const f = Math.fround;
  const { taps, templates, g2, gm } = fine;
  const T = taps.length / 2, R = (T - 1) / 2;
  const height = rows * 8, fw = 2 * width, fh = 2 * height;
  // Along x: every coarse row to 2 x width fine samples; then along y.
  const across = new Float32Array(height * fw);
  for (let y = 0; y < height; y++) {
    for (let X = 0; X < fw; X++) {
      const x = X >> 1, ph = X & 1;
      let acc = 0;
      for (let k = 0; k < T; k++) acc = f(acc + f(taps[ph * T + k]! * target[y * width + clamp(x - R + k, width)]!));
      across[y * fw + X] = acc;
    }
  }
  const raster = new Float32Array(fh * fw);
  for (let Y = 0; Y < fh; Y++) {
    const y = Y >> 1, ph = Y & 1;
    for (let X = 0; X < fw; X++) {
      let acc = 0;
      for (let k = 0; k < T; k++) acc = f(acc + f(taps[ph * T + k]! * across[clamp(y - R + k, height) * fw + X]!));
      raster[Y * fw + X] = acc;
    }
  }
  const inBook = new Uint8Array(g2.length);
  candidates.forEach((g) => { inBook[g] = 1; });
  keep.forEach((g) => { inBook[g] = 0; });
  const toneW = TONE_WEIGHT * FINE_SAMPLES, c = scale;
  const out = cells.slice();
  const error = (cx: number, cy: number, g: number, base: number, want: number): number => {
    // Sixteen f32 sums: by row parity, row half and lane (X mod 4), each in row order; then per
    // lane (even first half + odd first half) + (even second half + odd second half).
    const part = new Array<number>(16).fill(0);
    for (let Y = 0; Y < FINE_Y; Y++) {
      for (let X = 0; X < FINE_X; X++) {
        const v = raster[(cy * FINE_Y + Y) * fw + cx * FINE_X + X]!, t = templates[g * FINE_SAMPLES + Y * FINE_X + X]!;
        const k = (Y & 1) * 8 + (X >> 2) * 4 + (X & 3);
        part[k] = f(part[k]! + f(v * t));
      }
    }
    const lane = (l: number) => f(f(part[l]! + part[8 + l]!) + f(part[4 + l]! + part[12 + l]!));
    const dot = (lane(0) + lane(1)) + (lane(2) + lane(3));
    const dm = want - gm[g]!;
    return base - 2 * c * dot + g2[g]! + toneW * dm * dm;
  };
  for (let cy = 0; cy < rows; cy++) {
    for (let cx = 0; cx < cols; cx++) {
      const cell = cy * cols + cx;
      if (!inBook[out[cell]!]) continue;
      if (minSpread > 0 && coarseVariance(target, width, cx, cy) < minSpread * minSpread) continue;
      // In four lanes (X mod 4: rows in order, X before X + 4), then (l0 + l1) + (l2 + l3).
      const ls = [0, 0, 0, 0], lq = [0, 0, 0, 0];
      for (let Y = 0; Y < FINE_Y; Y++) {
        for (let X = 0; X < FINE_X; X++) {
          const v = raster[(cy * FINE_Y + Y) * fw + cx * FINE_X + X]!;
          ls[X & 3]! += v;
          lq[X & 3]! += v * v;
        }
      }
      const sum = (ls[0]! + ls[1]!) + (ls[2]! + ls[3]!), sq = (lq[0]! + lq[1]!) + (lq[2]! + lq[3]!);
      const want = c * sum / FINE_SAMPLES, base = c * c * sq;
      // The least error; ties to the lower glyph index.
      let best = -1, bestE = Infinity;
      for (const g of candidates) {
        const e = error(cx, cy, g, base, want);
        if (e < bestE || (e === bestE && g < best)) { bestE = e; best = g; }
      }
      if (best < 0) continue;
      if (calm > 0 && cx > 0) {
        const g = out[cell - 1]!;
        if (g !== best && g < g2.length) {
          const e = error(cx, cy, g, base, want) * (1 - calm);
          if (e < bestE) { bestE = e; best = g; }
        }
      }
      out[cell] = best;
    }
  }
  return out;
}

/**
 * The variance of the cell's 4 x 8 target samples: f32 sums per column (lane) in row order, then
 * (l0 + l1) + (l2 + l3) in f64, as the kernel takes it.
 */
function coarseVariance(target: Float32Array, width: number, cx: number, cy: number): number {
  const f = Math.fround, s = [0, 0, 0, 0], q = [0, 0, 0, 0];
  for (let y = 0; y < 8; y++) {
    for (let x = 0; x < 4; x++) {
      const v = target[(cy * 8 + y) * width + cx * 4 + x]!;
      s[x] = f(s[x]! + v);
      q[x] = f(q[x]! + f(v * v));
    }
  }
  const m = ((s[0]! + s[1]!) + (s[2]! + s[3]!)) / 32;
  return ((q[0]! + q[1]!) + (q[2]! + q[3]!)) / 32 - m * m;
}

function clamp(i: number, n: number): number {
  return i < 0 ? 0 : i >= n ? n - 1 : i;
}
