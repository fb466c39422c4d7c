/**
 * Adaptive Bayesian temporal filter for video: a per-sample scalar Kalman filter over the
 * renderer's working raster (SUB_X x SUB_Y samples per character cell) with
 *
 * - measurement noise R estimated online from the data (robust lower quantile over cells of the
 *   frame-to-frame residual energy, capped by the same quantile of a spatial second-difference
 *   energy so a camera pan cannot pass for noise; smoothed in the log domain, bounded), and
 * - process noise Q adapted per cell from a motion likelihood computed on the cell's normalised
 *   innovation energy: Q = Q_static + motion * Q_motion.
 *
 * No Node or DOM types. The per-sample pass is a WebAssembly kernel (assembly/temporal.ts) working
 * in a kernel instance of the filter's own, where its state lives between frames; the decisions
 * (noise estimate, statistics, resets) are here. After the first frame `step` allocates nothing.
 */

import { SAMPLES, SUB_X, SUB_Y } from '../glyphs/types.js';
import { checkOptions } from '../args.js';
import { MAX_GRID_CELLS } from '../pipeline/geometry.js';
import { layout, ownKernels, type KernelExports, type Ptr } from '../wasm/kernels.js';

// The cell geometry, exported (as are the other constants) for the test oracle's slow twin of step().
export const CELL_W = SUB_X;
export const CELL_H = SUB_Y;
export const CELL_N = SAMPLES;
// The kernel is written for 4 x 8-sample cells.
if (CELL_W !== 4 || CELL_H !== 8) throw new Error(`temporal filter: cells of ${CELL_W}x${CELL_H} samples, step() is written for 4x8`);

/** Prior measurement noise variance before anything is measured: sigma = 3/255. */
export const R_PRIOR = (3 / 255) ** 2;
/** Bounds of the estimated measurement noise variance (sigma 0.5/255 .. 16/255). */
export const R_MIN = (0.5 / 255) ** 2;
export const R_MAX = (16 / 255) ** 2;
/**
 * Static process noise as a fraction of R. With Q = 0.05 R the Kalman steady state has gain exactly
 * 0.2 (P- = 0.25 R): pure noise is averaged over ~9 frames (output noise variance K/(2-K) = 0.11 of
 * the input), and a change too small to count as motion still decays as 0.8^n, so nothing freezes.
 */
export const Q_STATIC_RATIO = 0.05;
/** Motion threshold t(s) = 1 + T_SPAN * T_BASE^(1 - s): t(1) = 1.5, t(0.7) = 2.39, t(0) = 16. */
const T_SPAN = 0.5;
const T_BASE = 30;
/** A cell is reported stable (glyph hysteresis allowed) when its motion score is below this. */
export const STABLE_BELOW = 0.5;

/** Lower quantile used for the noise estimate: robust to up to 75% of cells moving or textured. */
export const R_QUANTILE = 0.25;
/** 25% quantile of chi^2_32 / 32 (32 samples per cell): turns the temporal quantile into R. */
export const R_QUANTILE_TEMPORAL = 0.822;
/** 25% quantile of the spatial energy below for white noise of variance 1 (measured, 2e5 cells). */
export const R_QUANTILE_SPATIAL = 0.760;
/** Second differences per cell: 2 horizontal x SUB_Y rows + SUB_X columns x (SUB_Y - 2) vertical. */
export const SPATIAL_TERMS = (CELL_W - 2) * CELL_H + CELL_W * (CELL_H - 2);
/** Cells whose mean is this close to 0 or 1 are clipped, so their noise is understated: skipped. */
export const CLIP_MARGIN = 0.02;
/** Fewer eligible cells than this give no trustworthy noise estimate for the frame. */
export const R_MIN_CELLS = 16;
/** EMA weight floor for the log-R update (after the first updates, which average 1/n). */
export const R_ALPHA = 0.1;
/** Largest per-frame change of R (factor 2): one odd frame cannot swing the noise estimate far. */
export const R_MAX_LOG_STEP = Math.log(2);
/**
 * A cell whose mean moved this far (linear light, 0..1) from the filter's estimate in one frame
 * changed for real: cell-mean noise is ~sigma/sqrt(32) (under 0.012 even for sensor noise of
 * 16/255), so 0.05 is over 4 of its standard deviations whatever the noise estimate says.
 */
export const CUT_DELTA = 0.05;
/**
 * A whole-frame mean change this large (linear light) is real too (a fade, an exposure step):
 * noise averages out over the frame (sd under 0.0005 for 1000 cells of 32 noisy samples).
 */
export const SHIFT_DELTA = 0.005;
/**
 * How far the temporal noise measurement may exceed the spatial one when the raster upsamples its
 * source. Upsampling (a 640 px camera at 200 columns is 800 samples across) repeats source pixels,
 * so second differences read the noise low: measured temporal/spatial on a still noisy scene is
 * 1.8 at 1.25x, 2.8 at 2x, 5.6 at 2.5x. Without slack the cap pins R low and noise reads as motion.
 * 8 still bounds R in a pan to under 3 noise sigmas.
 */
export const UPSAMPLED_SPATIAL_SLACK = 8;

export interface TemporalFilterOptions {
  readonly columns: number;
  readonly rows: number;
}

const FILTER_OPTIONS: ReadonlySet<string> = new Set<keyof TemporalFilterOptions>(['columns', 'rows']);

export interface TemporalStats {
  /** Mean Kalman gain over all samples of the last step (1 on the first frame). */
  readonly meanGain: number;
  /** Share 0..1 of cells judged in motion (motion score >= 0.5) in the last step. */
  readonly motionShare: number;
  /** Current estimate of the measurement noise standard deviation (raster units, 0..1). */
  readonly noiseSigma: number;
  /** Frames filtered since construction or the last reset. */
  readonly frames: number;
  /** Share 0..1 of cells whose mean moved more than CUT_DELTA from the estimate in the last step:
   * a change no noise level explains (a scene cut moves most cells). 1 on a first frame. */
  readonly changedShare: number;
  /** Mean over all samples of the last step's innovation (signed, linear light): a fade moves it
   * by its step, noise leaves it near 0. 0 on a first frame. */
  readonly meanShift: number;
}

/**
 * Motion threshold on the normalised innovation energy for a motionSensitivity s in [0, 1].
 * Under the static hypothesis the energy is chi^2_32 / 32 (mean 1, sd 0.25).
 */
export function motionThreshold(motionSensitivity: number): number {
  const s = motionSensitivity >= 0 ? (motionSensitivity <= 1 ? motionSensitivity : 1) : 0;
  return 1 + T_SPAN * Math.pow(T_BASE, 1 - s);
}

/**
 * Temporal filter for a raster of `columns*SUB_X` x `rows*SUB_Y` tone-mapped samples in [0, 1].
 *
 * Per cell and frame: the innovation nu = z - x (the filter predicts "no change") is normalised by
 * its predicted variance S = P + Q_static + R to the energy e = mean(nu^2) / S over the cell's 32
 * samples. The motion score is m = 1 / (1 + (t/e)^8) with the threshold t = motionThreshold(s).
 * Q for the cell is then Q_static + m * max(0, mean(nu^2) - S), i.e. the innovation power the
 * static model cannot explain, so a change far above the noise gives a gain near 1 in that very
 * frame, while pure noise (e ~ 1) keeps the static gain and is averaged down.
 *
 * motionSensitivity semantics: it only moves the threshold t. At 1 a cell counts as moving once its
 * innovation energy is 1.5x what noise explains (about 2 sd of the static distribution: fastest,
 * least smoothing); at the default 0.7, 2.39x; at 0, 16x (RMS innovation 4 noise sigmas). Even at
 * 0 a real scene change (innovation >> noise) is therefore taken in the same frame, and a change
 * below the threshold is still followed with the static gain >= ~0.2 per frame (90% after ~10
 * frames): the filter never freezes.
 */
export class TemporalFilter {
  protected cols = 0;
  protected rowsN = 0;
  protected width = 0;
  protected cells = 0;
  /** The kernel instance whose memory holds every array below (views, valid until resize; the
   * kernel takes their byte offsets). */
  protected kernels: KernelExports | null = null;
  protected est: Float32Array = new Float32Array(0);
  protected prev: Float32Array = new Float32Array(0);
  /** The frame being filtered, copied into the kernel's memory. */
  protected input: Float32Array = new Float32Array(0);
  /** Posterior variance per cell. Q is per cell and R global, so all 32 samples of a cell share
   * one variance exactly; storing it once per cell is the same filter, 32x cheaper. */
  protected variance: Float32Array = new Float32Array(0);
  /** Per-cell temporal and spatial noise energies for the quantiles (reordered by selection). */
  protected scratch: Float32Array = new Float32Array(0);
  protected scratchSpatial: Float32Array = new Float32Array(0);
  protected motion: Float32Array = new Float32Array(0);
  protected stable: Uint8Array = new Uint8Array(0);
  /** The kernel's frame sums: gains, mean innovations, changed cells, moving cells. */
  protected sums: Float64Array = new Float64Array(4);
  protected r = R_PRIOR;
  protected rUpdates = 0;
  protected frameCount = 0;
  protected lastGain = 1;
  protected lastMotionShare = 1;
  protected lastChangedShare = 1;
  protected lastMeanShift = 0;
  protected spatialSlack = 1;

  constructor(options: TemporalFilterOptions) {
    checkOptions(options, FILTER_OPTIONS, 'TemporalFilter');
    this.resize(options.columns, options.rows);
  }

  get columns(): number { return this.cols; }
  get rows(): number { return this.rowsN; }

  /** Motion score 0..1 per cell (row-major, columns x rows) of the last step; 1 on a first frame. */
  get cellMotion(): Float32Array { return this.motion; }

  /** 1 where the last step judged the cell static (motion < 0.5); 0 on a first frame. */
  get cellStable(): Uint8Array { return this.stable; }

  get stats(): TemporalStats {
    return {
      meanGain: this.lastGain,
      motionShare: this.lastMotionShare,
      noiseSigma: Math.sqrt(this.r),
      frames: this.frameCount,
      changedShare: this.lastChangedShare,
      meanShift: this.lastMeanShift,
    };
  }

  /** Forget all history including the noise estimate; the next frame passes through unchanged. */
  reset(): void {
    this.frameCount = 0;
    this.r = R_PRIOR;
    this.rUpdates = 0;
    this.lastGain = 1;
    this.lastMotionShare = 1;
    this.lastChangedShare = 1;
    this.lastMeanShift = 0;
    this.motion.fill(1);
    this.stable.fill(0);
  }

  /**
   * Whether the raster upsamples its source (more samples than source pixels on some axis): the
   * spatial noise measurement then reads low, and may cap the temporal one only within
   * UPSAMPLED_SPATIAL_SLACK. Set by the caller, which knows the source size.
   */
  setUpsampled(upsampled: boolean): void {
    this.spatialSlack = upsampled ? UPSAMPLED_SPATIAL_SLACK : 1;
  }

  /**
   * Filter one frame. Returns the filter's own estimate, overwritten by the next step: read it, do
   * not keep it across steps (copy it if needed) and never write to it, since it is the state the
   * next frame is filtered against. It is a view into the filter's kernel memory: its buffer
   * cannot be transferred. (A separate output copy cost ~2 % of a 200-column studio
   * frame: one more store per sample.) The first frame after construction,
   * reset or a size change passes through unchanged. If `raster.length` no longer matches, the
   * filter resets and re-sizes: with `columns` given that is the new column count, otherwise the
   * column count is kept and the rows follow from the length. Throws RangeError if the length is
   * not a whole number of rows of cells. Samples must be finite (a NaN would stick in the state);
   * motionSensitivity is clamped to [0, 1], NaN counting as 0.
   */
  step(raster: Float32Array, motionSensitivity: number, columns: number = this.cols): Float32Array {
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

    // The per-sample pass in WebAssembly (assembly/temporal.ts), in the same f64 operations and
    // order as the loops it replaced, two cells at a time: the same bits
    // (test/temporal-equivalence.test.ts). It also copies this frame into prev.
    this.input.set(raster);
    const r = this.r;
    const eligible = this.kernels!.temporalStep(this.input.byteOffset, this.est.byteOffset, this.prev.byteOffset, this.width, this.cols, this.rowsN,
      this.variance.byteOffset, this.motion.byteOffset, this.stable.byteOffset, this.scratch.byteOffset, this.scratchSpatial.byteOffset,
      r, Q_STATIC_RATIO * r, motionThreshold(motionSensitivity), STABLE_BELOW, CUT_DELTA, CLIP_MARGIN, this.sums.byteOffset);
    const sums = this.sums;
    this.lastGain = sums[0]! / this.cells;
    this.lastMotionShare = sums[3]! / this.cells;
    this.lastChangedShare = sums[2]! / this.cells;
    this.lastMeanShift = sums[1]! / this.cells;
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
  protected updateNoise(n: number): void {
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

  protected resize(columns: number, rows: number): void {
    if (!Number.isInteger(columns) || !Number.isInteger(rows) || columns < 1 || rows < 1) {
      throw new RangeError(`columns and rows must be positive integers, got ${columns} x ${rows}`);
    }
    // The largest grid a render makes: more would only fail later, growing kernel memory.
    if (columns * rows > MAX_GRID_CELLS) throw new RangeError(`columns x rows must be at most ${MAX_GRID_CELLS} cells (the largest grid a render makes), got ${columns} x ${rows}`);
    this.cols = columns;
    this.rowsN = rows;
    this.width = columns * CELL_W;
    this.cells = columns * rows;
    const n = this.cells * CELL_N;
    // Laid out in the kernel instance's memory, each array 16-byte aligned.
    const c4 = this.cells * 4;
    const { at, size } = layout([n * 4, n * 4, n * 4, c4, c4, c4, c4, this.cells, 32]);
    const [input, est, prev, variance, scratch, scratchSpatial, motion, stable, sums] = at as [Ptr, Ptr, Ptr, Ptr, Ptr, Ptr, Ptr, Ptr, Ptr];
    const { k, base } = ownKernels(size);
    this.kernels = k;
    const buf = k.memory.buffer;
    this.input = new Float32Array(buf, base + input, n);
    this.est = new Float32Array(buf, base + est, n);
    this.prev = new Float32Array(buf, base + prev, n);
    this.variance = new Float32Array(buf, base + variance, this.cells);
    this.scratch = new Float32Array(buf, base + scratch, this.cells);
    this.scratchSpatial = new Float32Array(buf, base + scratchSpatial, this.cells);
    this.motion = new Float32Array(buf, base + motion, this.cells);
    this.stable = new Uint8Array(buf, base + stable, this.cells);
    this.sums = new Float64Array(buf, base + sums, 4);
    this.reset();
  }
}

/**
 * k-th smallest of a[0..n) (reorders a; no allocation). Floyd-Rivest selection: the partition
 * pivot comes from a recursive select on a small sample around the expected rank, so one pass over
 * the range leaves a small remainder (about n + k compares against quickselect's ~3n). Exact: it
 * returns the same order statistic as any selection, so the noise estimate is unchanged.
 */
function selectKth(a: Float32Array, n: number, k: number): number {
  floydRivest(a, k, 0, n - 1);
  return a[k]!;
}

/** Moves the k-th smallest of a[left..right] to a[k], smaller ones before, larger ones after. */
function floydRivest(a: Float32Array, k: number, left: number, right: number): void {
  while (right > left) {
    if (right - left > 600) {
      // Narrow to a sample range that holds the k-th smallest with high probability; recursion
      // depth is about log log n (each level works on ~n^(2/3) elements).
      const n = right - left + 1;
      const m = k - left + 1;
      const z = Math.log(n);
      const s = 0.5 * Math.exp((2 * z) / 3);
      const sd = 0.5 * Math.sqrt((z * s * (n - s)) / n) * (m - n / 2 < 0 ? -1 : 1);
      const newLeft = Math.max(left, Math.floor(k - (m * s) / n + sd));
      const newRight = Math.min(right, Math.floor(k + ((n - m) * s) / n + sd));
      floydRivest(a, k, newLeft, newRight);
    }
    const t = a[k]!;
    let i = left;
    let j = right;
    let tmp = a[left]!;
    a[left] = a[k]!;
    a[k] = tmp;
    if (a[right]! > t) {
      tmp = a[left]!;
      a[left] = a[right]!;
      a[right] = tmp;
    }
    while (i < j) {
      tmp = a[i]!;
      a[i] = a[j]!;
      a[j] = tmp;
      i++;
      j--;
      while (a[i]! < t) i++;
      while (a[j]! > t) j--;
    }
    if (a[left] === t) {
      tmp = a[left]!;
      a[left] = a[j]!;
      a[j] = tmp;
    } else {
      j++;
      tmp = a[j]!;
      a[j] = a[right]!;
      a[right] = tmp;
    }
    if (j <= k) left = j + 1;
    if (k <= j) right = j - 1;
  }
}
