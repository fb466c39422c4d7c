/**
 * The temporal filter's step as it was before the issue-16 speed work (src/core/temporal/filter.ts):
 * the oracle of test/temporal-equivalence.test.ts, which requires the same bits from the fast one.
 * Only step() and the noise update (with its quickselect) are the old code; the state, sizing and
 * constants are the filter's own, imported. Do not optimise this file; it is the specification.
 */
import {
  TemporalFilter as FastFilter,
  motionThreshold,
  CELL_W,
  CELL_H,
  CELL_N,
  R_MIN,
  R_MAX,
  Q_STATIC_RATIO,
  STABLE_BELOW,
  R_QUANTILE,
  R_QUANTILE_TEMPORAL,
  R_QUANTILE_SPATIAL,
  SPATIAL_TERMS,
  CLIP_MARGIN,
  R_MIN_CELLS,
  R_ALPHA,
  R_MAX_LOG_STEP,
  CUT_DELTA,
} from '../../src/core/temporal/filter.js';

export class TemporalFilter extends FastFilter {
  override step(raster: Float32Array, motionSensitivity: number, columns: number = this.cols): Float32Array {
    if (columns !== this.cols || raster.length !== this.est.length) {
      const rowLength = columns * CELL_N;
      const rows = rowLength > 0 ? raster.length / rowLength : NaN;
      if (!Number.isInteger(rows) || rows < 1) {
        throw new RangeError(`raster of ${raster.length} samples is not ${columns} columns x whole rows of ${CELL_W}x${CELL_H}-sample cells`);
      }
      this.resize(columns, rows);
    }
    const est = this.est;
    const prev = this.prev;
    if (this.frameCount === 0) {
      est.set(raster);
      prev.set(raster);
      this.variance.fill(this.r);
      this.motion.fill(1);
      this.stable.fill(0);
      this.lastGain = 1;
      this.lastMotionShare = 1;
      this.lastChangedShare = 1;
      this.lastMeanShift = 0;
      this.frameCount = 1;
      return est;
    }

    const width = this.width;
    const cols = this.cols;
    const rowsN = this.rowsN;
    const variance = this.variance;
    const motion = this.motion;
    const stable = this.stable;
    const scratch = this.scratch;
    const scratchSpatial = this.scratchSpatial;
    const r = this.r;
    const qStatic = Q_STATIC_RATIO * r;
    const t = motionThreshold(motionSensitivity);
    let gainSum = 0;
    let moving = 0;
    let changed = 0;
    let shift = 0;
    let eligible = 0;

    for (let cy = 0; cy < rowsN; cy++) {
      for (let cx = 0; cx < cols; cx++) {
        const c = cy * cols + cx;
        const base = cy * CELL_H * width + cx * CELL_W;
        // Pass 1: innovation energy against the prediction, raw frame difference for the noise
        // estimate (independent of the filter state, so a wrong R cannot confirm itself).
        let sumNu = 0;
        let sumNu2 = 0;
        let sumD2 = 0;
        let sumZ = 0;
        for (let sy = 0; sy < CELL_H; sy++) {
          const row = base + sy * width;
          for (let i = row; i < row + CELL_W; i++) {
            const z = raster[i]!;
            const nu = z - est[i]!;
            const d = z - prev[i]!;
            sumNu += nu;
            sumNu2 += nu * nu;
            sumD2 += d * d;
            sumZ += z;
            prev[i] = z;
          }
        }
        const p = variance[c]!;
        const s = p + qStatic + r;
        const meanNu2 = sumNu2 / CELL_N;
        const meanNu = sumNu / CELL_N;
        shift += meanNu;
        if (meanNu > CUT_DELTA || meanNu < -CUT_DELTA) changed++;
        const e = meanNu2 / s;
        let m = 0;
        if (e > 0) {
          const q = t / e;
          const q2 = q * q;
          const q4 = q2 * q2;
          // Motion likelihood m = 1 / (1 + (t/e)^8): steep, so that noise (e near 1) is not motion.
          m = 1 / (1 + q4 * q4);
        }
        // Unexplained innovation power becomes process noise: gain -> 1 for changes >> noise.
        const excess = meanNu2 - s;
        const pm = p + qStatic + (excess > 0 ? m * excess : 0);
        const k = pm / (pm + r);
        variance[c] = k * r; // (1 - K) * P- == K * R
        gainSum += k;
        motion[c] = m;
        const isStable = m < STABLE_BELOW ? 1 : 0;
        stable[c] = isStable;
        moving += 1 - isStable;

        // Pass 2: the update, while the cell's samples are still in cache.
        for (let sy = 0; sy < CELL_H; sy++) {
          const row = base + sy * width;
          for (let i = row; i < row + CELL_W; i++) {
            const x = est[i]! + k * (raster[i]! - est[i]!);
            est[i] = x;
          }
        }

        const mean = sumZ / CELL_N;
        if (mean > CLIP_MARGIN && mean < 1 - CLIP_MARGIN) {
          // Spatial second differences (white noise: variance 6 R each; linear gradients cancel).
          let sumS2 = 0;
          for (let sy = 0; sy < CELL_H; sy++) {
            const row = base + sy * width;
            for (let i = row + 1; i < row + CELL_W - 1; i++) {
              const d = raster[i - 1]! - 2 * raster[i]! + raster[i + 1]!;
              sumS2 += d * d;
            }
          }
          for (let sy = 1; sy < CELL_H - 1; sy++) {
            const row = base + sy * width;
            for (let i = row; i < row + CELL_W; i++) {
              const d = raster[i - width]! - 2 * raster[i]! + raster[i + width]!;
              sumS2 += d * d;
            }
          }
          scratch[eligible] = sumD2 / (2 * CELL_N);
          scratchSpatial[eligible++] = sumS2 / (6 * SPATIAL_TERMS);
        }
      }
    }

    this.lastGain = gainSum / this.cells;
    this.lastMotionShare = moving / this.cells;
    this.lastChangedShare = changed / this.cells;
    this.lastMeanShift = shift / this.cells;
    if (eligible >= R_MIN_CELLS) this.updateNoise(eligible);
    this.frameCount++;
    return est;
  }

  /**
   * Fold this frame's robust noise measurement into R, in the log domain. The temporal residual is
   * exact on static content but counts motion as noise when most of the frame moves (a pan); the
   * spatial one is blind to motion but counts texture as noise. Neither can read low (clipped cells
   * are skipped), so the smaller of the two lower quantiles is the measurement.
   */
  protected override updateNoise(n: number): void {
    const rank = Math.floor(R_QUANTILE * (n - 1));
    const temporal = selectKth(this.scratch, n, rank) / R_QUANTILE_TEMPORAL;
    const spatial = selectKth(this.scratchSpatial, n, rank) / R_QUANTILE_SPATIAL;
    const cap = spatial * this.spatialSlack;
    let measured = temporal < cap ? temporal : cap;
    measured = measured < R_MIN ? R_MIN : measured > R_MAX ? R_MAX : measured;
    this.rUpdates++;
    const alpha = Math.max(R_ALPHA, 1 / this.rUpdates);
    let stepLog = alpha * Math.log(measured / this.r);
    stepLog = stepLog > R_MAX_LOG_STEP ? R_MAX_LOG_STEP : stepLog < -R_MAX_LOG_STEP ? -R_MAX_LOG_STEP : stepLog;
    const next = this.r * Math.exp(stepLog);
    this.r = next < R_MIN ? R_MIN : next > R_MAX ? R_MAX : next;
  }
}

/** k-th smallest of a[0..n) by iterative quickselect (reorders a; no allocation, no recursion). */
function selectKth(a: Float32Array, n: number, k: number): number {
  let lo = 0;
  let hi = n - 1;
  while (hi > lo) {
    // Median-of-three pivot keeps sorted or constant inputs from going quadratic.
    const mid = (lo + hi) >>> 1;
    const x = a[lo]!;
    const y = a[mid]!;
    const z = a[hi]!;
    const pivot = x < y ? (y < z ? y : x < z ? z : x) : (x < z ? x : y < z ? z : y);
    let i = lo;
    let j = hi;
    while (i <= j) {
      while (a[i]! < pivot) i++;
      while (a[j]! > pivot) j--;
      if (i <= j) {
        const tmp = a[i]!;
        a[i] = a[j]!;
        a[j] = tmp;
        i++;
        j--;
      }
    }
    if (k <= j) hi = j;
    else if (k >= i) lo = i;
    else return a[k]!;
  }
  return a[k]!;
}
