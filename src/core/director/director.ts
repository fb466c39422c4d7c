import { DEFAULTS, PARAM_BY_NAME, type NumberDef, type QualityTarget, type RenderParams } from '../params/definitions.js';
import { cellColors, colorTransform } from '../pipeline/colors.js';
import { stretch, toneLut, type ToneSettings } from '../pipeline/tone.js';
import { usesTwoColors } from '../pipeline/two-color.js';
import { mixCoverages, mixedCellColors } from '../format/compact.js';
import { gridLines } from '../format/grid.js';
import { isPending, lazyProperty } from '../lazy.js';
import type { DirectorReport, RenderResult } from '../types.js';
import { measureSource, type SourceStats } from './measure.js';
import { colorToneMetrics, glyphToneMetrics, roundTripMetric, simulatedMetrics, sourceCells, type SourceCells } from './metrics.js';
import { RUBRICS, rubricScore } from './rubrics.js';
import { frame } from '../wasm/kernels.js';

/** What the Director needs of the pipeline's prepared source and the glyph ramp. */
export interface DirectorInput {
  readonly prep: {
    readonly resampled: { readonly luma: { width: number; height: number; data: Float32Array }; readonly cellLinearRgb: Float32Array };
    readonly cellLuma: Float32Array;
  };
  /** Ink per glyph of the ramp and its densest ink. */
  readonly coverage: Float32Array;
  /** Texture up close per glyph (charsets.ts glyphTextures), in ink units. */
  readonly texture: Float32Array;
  readonly scale: number;
  readonly order: Int32Array;
}

/** The Director's working set: the sampled cells and what every candidate's metrics reuse. */
interface SimInput extends Omit<DirectorInput, 'prep'> {
  /** The sampled cells' mean luminance. */
  readonly cellLuma: Float32Array;
  /** Their linear RGB (3 each), only where the rubric reads colours (readsColors()), else null. */
  readonly cellRgb: Float32Array | null;
  readonly cells: SourceCells;
  /** Each sampled cell's entry in the simulation's tone table (the same for every candidate). */
  readonly lutAt: Uint16Array;
}

type Tunable = 'contrast' | 'brightness' | 'gamma' | 'saturation' | 'sharpen' | 'autoLevels' | 'structure' | 'denoise' | 'edgeStrength' | 'maxGlyphRmse';
const TUNABLE: readonly Tunable[] = ['contrast', 'brightness', 'gamma', 'saturation', 'sharpen', 'autoLevels', 'structure', 'denoise', 'edgeStrength', 'maxGlyphRmse'];

/** Median tone each rubric aims the midtones at (round-trip aims at the source itself). */
const TARGET_MEDIAN: Readonly<Record<QualityTarget, number>> = {
  balanced: 0.4, portrait: 0.45, motion: 0.46, 'low-light': 0.42, 'round-trip': 0.46,
};

function inRange(name: Tunable, v: number): number {
  const d = PARAM_BY_NAME.get(name) as NumberDef;
  return Math.round(Math.min(d.max, Math.max(d.min, v)) * 1000) / 1000;
}

/** A first guess from the measurements alone, per rubric. */
function propose(p: RenderParams, s: SourceStats, crisp?: { readonly contrast: number; readonly sharpen: number }): Partial<Record<Tunable, number>> {
  const r = p.qualityTarget;
  const sigma255 = s.noise * 255;
  if (usesTwoColors(p)) {
    // Two colours per cell reproduce each cell's colour exactly: its tone and chroma are the
    // source's own, and any boost only moves them away (no ink is diluted by a dark ground).
    return { saturation: 1, contrast: 1, brightness: 0, gamma: 1, autoLevels: 0 };
  }
  if (r === 'round-trip') {
    // The chroma must reproduce the source: an identity tone curve and no saturation boost.
    return { saturation: 1, contrast: 1, brightness: 0, gamma: 1, autoLevels: 0, denoise: Math.min(1, sigma255 / 10), sharpen: 0.2 };
  }
  let denoise = Math.min(1, Math.max(0, (sigma255 - 0.6) / 7));
  if (r === 'motion') denoise = Math.min(1, denoise + 0.25);
  if (r === 'low-light') denoise = Math.min(1, denoise + 0.15);
  // Soft images gain from more sharpening, noisy ones lose; portraits keep skin smooth.
  let sharpen = 0.45 - 0.8 * s.edgeDensity - 0.03 * sigma255;
  if (r === 'portrait') sharpen *= 0.6;
  if (r === 'motion') sharpen *= 0.7;
  if (crisp) sharpen = crisp.sharpen;
  // Directional glyph substitution is a look the caller may ask for, not fidelity: on the
  // bench:quality images (photos, silhouettes, line art, text) structure 0 scored higher SSIM at
  // both viewing distances than any positive amount (0.940/0.979 vs 0.935/0.977 at the default
  // 0.55). A step edge is drawn better by the least-squares glyph than by a thin - / | \ line.
  const structure = 0;
  const autoLevels = r === 'low-light' ? 1 : s.dynamicRange < 0.5 ? 1 : 0.9;
  const contrast = crisp?.contrast ?? (s.dynamicRange < 0.3 ? 1.3 : p.contrast);
  // Gamma that brings the stretched median to the rubric's target median.
  const { lo, hi } = stretch(s.levelsLow, s.levelsHigh, autoLevels);
  const m = Math.min(0.98, Math.max(0.02, ((s.p50 - lo) / (hi - lo) - 0.5) * contrast + 0.5));
  const gamma = Math.log(m) / Math.log(TARGET_MEDIAN[r]);
  // Read only where the Director reads colours (readsColors(); here, past round-trip, colour art):
  // elsewhere saturation is left alone, and reading the colourfulness would measure the cells' RGB.
  const saturation = !readsColors(p) ? p.saturation : s.colorfulness < 0.08 ? 1.7 : s.colorfulness > 0.3 ? 1.15 : p.saturation;
  const edgeStrength = s.edgeP90 > 0.005 ? 0.45 / s.edgeP90 : p.edgeStrength;
  return {
    denoise: inRange('denoise', denoise),
    sharpen: inRange('sharpen', sharpen),
    structure: inRange('structure', structure),
    autoLevels: inRange('autoLevels', autoLevels),
    contrast: inRange('contrast', contrast),
    gamma: inRange('gamma', Math.min(1.2, Math.max(0.55, gamma))),
    saturation: inRange('saturation', saturation),
    edgeStrength: inRange('edgeStrength', edgeStrength),
  };
}

/**
 * Where a rubric wants shapes that read: crisp contrasts, and how much truer (cell fidelity) or
 * less crushed (clipping) the freely searched settings must be to replace one. The simulation's
 * tone metrics see cell tones only, so its free search prefers 1.3-1.7; on bench:quality's mono
 * cases a crisp 2.2 raised the contour score while gamma and a finer codebook (0.007 in the grid
 * below) held the tone score. The guards keep the free search where a crisp contrast crushes a
 * region (the rocket's dark sky went blank at 2.2: cell r 0.97 -> 0.89). At such contrasts edges
 * are steep already: unsharp's overshoot then costs both scores (sharpen aimed at 0 instead of the
 * measured proposal, mono: contour r 0.610 -> 0.613, tone r 0.885 -> 0.886, 10 -> 13 of 26 cases at
 * least chafa's on both). Of the crisp contrasts that pass the guards, the search keeps the one
 * with the best contour metric (metrics.ts: the cells' tones against their glyphs' texture up
 * close). Against 2.2 alone (a later session, mono, 26 cases): contour r 0.628 -> 0.634, tone r
 * 0.888 -> 0.887, 15 -> 19 cases; the highest contrast that passes instead of the best contour:
 * 0.633 / 0.887, 18 cases (the horse at 80 columns lost, contour 0.710 -> 0.682).
 */
interface Crisp { readonly contrasts: readonly number[]; readonly sharpen: number; readonly fidelity: number; readonly clipping: number }
const CRISP: Partial<Readonly<Record<QualityTarget, Crisp>>> = {
  balanced: { contrasts: [2.2, 2.4, 2.6, 2.8], sharpen: 0, fidelity: 0.05, clipping: 0.1 },
};
/**
 * Of the crisp searches' results, the one with the best contour metric among those that may
 * replace the free search's (`searched`): not clearly less true (fidelity lower by more than
 * `guards.fidelity`) nor clearly more crushed (clipping lower by more than `guards.clipping`).
 * Ties keep the earlier (lower) contrast; undefined when none may.
 */
export function crispest<T extends { readonly sim: { readonly metrics: Readonly<Record<string, number>> } }>(searched: T, crisps: readonly T[], guards: { readonly fidelity: number; readonly clipping: number }): T | undefined {
  const free = searched.sim.metrics;
  let best: T | undefined;
  for (const c of crisps) {
    const m = c.sim.metrics;
    const truer = free.fidelity! > m.fidelity! + guards.fidelity;
    const fewerCrushed = free.clipping! > m.clipping! + guards.clipping;
    if (!truer && !fewerCrushed && (!best || m.contour! > best.sim.metrics.contour!)) best = c;
  }
  return best;
}

/**
 * Tone settings whose promise is a direction (brighter, more contrast, lifted midtones). Where the
 * caller sets one, the others are searched as if it were at its default and the caller's value
 * applies on top: searched with it, the Director made up for it (on a dark scan brightness -50
 * drew more ink than 0, gamma going 0.46 -> 0.87; gamma 2 drew no lighter than 1).
 */
const TONE_INTENTS = ['brightness', 'gamma', 'contrast'] as const;

/** `requested` with the caller's tone intents (TONE_INTENTS it set) at their defaults, for the search. */
function neutralTone(requested: RenderParams, explicit: readonly string[]): RenderParams {
  if (!TONE_INTENTS.some((t) => explicit.includes(t))) return requested;
  const neutral: RenderParams = { ...requested };
  for (const t of TONE_INTENTS) if (explicit.includes(t)) neutral[t] = DEFAULTS[t];
  return neutral;
}

const NONE: ReadonlySet<Tunable> = new Set();
const CONTRAST: ReadonlySet<Tunable> = new Set(['contrast']);

/** Tone settings searched on the rubric, in this order, with these values. */
const TONE_GRID: readonly (readonly [Tunable, readonly number[]])[] = [
  // Never below 1: contrast pivots on mid-grey, so less of it lifts black off the blank ground.
  // Contrast first: it decides how far regions are drawn apart, gamma then places the midtones.
  ['contrast', [1, 1.3, 1.7, 2.2, 2.6]],
  // Midtones deepened rather than lifted: faces and regions separate (on the quality bench a
  // lifted gamma above 1 drew flat, low-contrast texture). 0.4 is taken only by the
  // low-contrast scans of the bench (text, moon), whose strokes and spots a mid-grey field of
  // `2`s and `Z`s had swallowed: text at 80 / 160 columns contour r 0.410 / 0.473 -> 0.455 /
  // 0.492 and tone r 0.799 / 0.815 -> 0.812 / 0.831 (cell r stays >= 0.93); 0.3 drew text's
  // cells less truly than that (cell r 0.918).
  ['gamma', [0.4, 0.55, 0.7, 0.85, 1]],
  ['autoLevels', [0.6, 0.9, 1]],
  // The codebook's error budget: the rubric weighs finer tone against the rate of more glyphs.
  ['maxGlyphRmse', [0.007, 0.01, 0.02, 0.03]],
];
const TONE_SEARCH = new Set<Tunable>(TONE_GRID.map(([n]) => n));

interface Sim { readonly metrics: Record<string, number>; readonly score: number }

/** Renders the cells' tones through the candidate's tone curve and ramp levels, and scores it. */
function simulate(input: SimInput, stats: SourceStats, p: RenderParams, ramp: Float64Array, colors: Uint8Array, contour = false): Sim {
  const rampLevels = simulatedLevels(p, ramp);
  const src = input.cellLuma;
  const n = src.length;
  // Built field by field: a spread of stretch()'s result here took a slow copy on every candidate
  // (about 5 µs each, warm: 0.3 ms of a render's ~60 candidates).
  const { lo, hi } = stretch(stats.levelsLow, stats.levelsHigh, p.autoLevels);
  const tone: ToneSettings = { lo, hi, contrast: p.contrast, brightness: p.brightness, gamma: p.gamma, invert: false };
  const rubric = RUBRICS[p.qualityTarget];
  const stable = 'stability' in rubric.weights;
  const sigma = stable ? Math.max(stats.noise, 1 / 255) * (1 - 0.8 * p.denoise) * (1 + 0.5 * p.sharpen) : 0;
  // Only the entries the cells (and their +-sigma stability probes) can look up.
  const from = lutIndex(input.cells.min - sigma), to = lutIndex(input.cells.max + sigma);
  // toneLut() keeps the tables by their settings: candidates that differ only in the codebook share one.
  const lut = toneLut(tone, SIM_LUT_SIZE, from, to);
  // Cells that share a table entry render alike: each entry is quantized once, not each cell.
  const { metrics, unstable } = simulatedMetrics(lut, from, to, rampLevels, p.invert, input.lutAt, input.cells, stable ? sigma : undefined, contour ? levelTextures(input, rampLevels, ramp) : undefined, 1 / (input.scale * input.scale));
  // A level crossing within +-sigma flips on roughly half of the frames.
  if (stable) metrics.stability = Math.max(0, 1 - unstable / n);
  if ('roundTrip' in rubric.weights) {
    cellColors(input.cellRgb!, colorTransform(p.saturation, tone), colors);
    metrics.roundTrip = roundTripMetric(colors, input.cellRgb!);
  }
  return { metrics, score: rubricScore(rubric, metrics) };
}

/**
 * The texture of each simulated level (tone units: ink over the ramp's densest, squared): a ramp
 * level's glyph's own; a uniform level's (an adaptive codebook's, see simulatedLevels) the mean
 * of the ramp glyphs within half a step of it, else the nearest one's.
 */
function levelTextures(input: SimInput, levels: Float64Array, ramp: Float64Array): Float64Array {
  // By the glyph table's texture array and the levels (the ramp's, or one of the shared uniform ones).
  let known = levelTextureCache.get(input.texture);
  if (!known) levelTextureCache.set(input.texture, (known = new Map()));
  const key = levels === ramp ? 'ramp' : levels;
  let t = known.get(key);
  if (t) return t;
  const unit = 1 / (input.scale * input.scale);
  const { texture, order } = input;
  t = new Float64Array(levels.length);
  if (levels === ramp) for (let j = 0; j < levels.length; j++) t[j] = texture[order[j]!]! * unit;
  else {
    // Both ascending: the ramp glyphs within half a step of each level lie in a window that
    // only moves up.
    const half = 0.5 / (levels.length - 1);
    let lo = 0;
    for (let i = 0; i < levels.length; i++) {
      const v = levels[i]!;
      while (lo < ramp.length - 1 && ramp[lo]! < v - half) lo++;
      let sum = 0, count = 0;
      for (let j = lo; j < ramp.length && ramp[j]! <= v + half; j++) { sum += texture[order[j]!]!; count++; }
      if (count) t[i] = (sum / count) * unit;
      else {
        // None within: the nearest (lo is the first at or above v - half; lo - 1 is below).
        const j = lo > 0 && v - ramp[lo - 1]! < ramp[lo]! - v ? lo - 1 : lo;
        t[i] = texture[order[j]!]! * unit;
      }
    }
  }
  known.set(key, t);
  return t;
}

const levelTextureCache = new WeakMap<Float32Array, Map<Float64Array | 'ramp', Float64Array>>();

/** The simulation's tone table is coarser than the renderer's: cell means need no finer. */
const SIM_LUT_SIZE = 1024;

function lutIndex(v: number): number {
  const x = (v + 0.5) * (SIM_LUT_SIZE / 2);
  return x <= 0 ? 0 : x >= SIM_LUT_SIZE ? SIM_LUT_SIZE : x | 0;
}

/**
 * The levels a candidate is simulated with. An adaptive codebook keeps about as many levels as a
 * uniform quantizer whose error is maxGlyphRmse (step = rmse * sqrt(12)); simulating with the
 * whole ramp instead would reward tone detail the codebook then merges away.
 */
function simulatedLevels(p: RenderParams, ramp: Float64Array): Float64Array {
  if (p.glyphStrategy === 'fixed' || p.charset === 'dots') return ramp;
  const step = p.maxGlyphRmse * Math.sqrt(12);
  const n = Math.max(2, Math.min(ramp.length, Math.round(1 / step) + 1));
  let levels = uniformLevels.get(n);
  if (!levels) uniformLevels.set(n, (levels = Float64Array.from({ length: n }, (_, i) => i / (n - 1))));
  return levels;
}

/** n uniform levels over 0..1 by n (at most the largest ramp's length): shared, read only. */
const uniformLevels = new Map<number, Float64Array>();

function withoutContour(m: Record<string, number>): Record<string, number> {
  const { contour: _, ...rest } = m;
  return rest;
}

function roundMetrics(m: Record<string, number>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const k in m) out[k] = Math.round(m[k]! * 10000) / 10000;
  return out;
}

/** Cells the candidate simulation looks at, at most: its metrics are statistics of the grid. */
const SIM_CELLS = 2048;

/**
 * An even, strided sample of the cells (all of them on small grids): their tones, and their linear
 * RGB from `rgb` (the source cells', read by the caller before: see direct()) where given.
 */
function sampleCells(cellLuma: Float32Array, rgb: Float32Array | null): { cellLuma: Float32Array; cellRgb: Float32Array | null } {
  const n = cellLuma.length;
  const stride = Math.max(1, Math.floor(n / SIM_CELLS));
  if (stride === 1) return { cellLuma, cellRgb: rgb };
  const m = Math.floor(n / stride);
  // In WebAssembly (assembly/metrics.ts gather): a first render copied these interpreted, a boxed
  // double per value.
  const f = frame();
  const pl = f.f32(n), ql = f.f32(m), pr = rgb ? f.f32(n * 3) : 0, qr = rgb ? f.f32(m * 3) : 0;
  const k = f.ready();
  f.viewF32(pl, n).set(cellLuma);
  k.gather(pl, stride, m, 1, ql);
  if (rgb) {
    f.viewF32(pr, n * 3).set(rgb.subarray(0, n * 3));
    k.gather(pr, stride, m, 3, qr);
  }
  return { cellLuma: f.viewF32(ql, m).slice(), cellRgb: rgb ? f.viewF32(qr, m * 3).slice() : null };
}

/**
 * Whether a render's Director reads the source's colours: colour art, and the round-trip rubric
 * (its metric decodes json-compact's chroma). Otherwise it leaves saturation alone, which only
 * colours show, and never needs the cells' RGB.
 */
export function readsColors(p: RenderParams): boolean {
  return p.color || 'roundTrip' in RUBRICS[p.qualityTarget].weights;
}

/** lutIndex() of each cell's tone, in WebAssembly (assembly/metrics.ts lutIndices). */
function lutIndices(cellLuma: Float32Array): Uint16Array {
  const m = cellLuma.length;
  const f = frame();
  const pl = f.f32(m), po = f.bytes(2 * m);
  const k = f.ready();
  f.viewF32(pl, m).set(cellLuma);
  k.lutIndices(pl, m, po);
  return f.viewU16(po, m).slice();
}

/** What a render's tone searches share (direct()). */
interface SearchContext {
  readonly input: SimInput;
  readonly stats: SourceStats;
  readonly requested: RenderParams;
  readonly rampLevels: Float64Array;
  readonly colors: Uint8Array;
  readonly free: ReadonlySet<Tunable>;
  readonly twoColor: boolean;
}

/**
 * A coordinate search on the rubric from `guess` (the free settings it gives; tone settings only
 * where `fixed` holds them, or with two colours per cell): TONE_GRID's settings in order, each
 * step keeping the best so far. A function of the module, not a closure in direct(): see
 * wasm/kernels.ts openNested() on closures made for every render.
 */
function searchTones(c: SearchContext, guess: Partial<Record<Tunable, number>>, fixed: ReadonlySet<Tunable>): { best: RenderParams; sim: Sim } {
  const { input, stats, requested, rampLevels, colors, free, twoColor } = c;
  const start: RenderParams = { ...requested };
  for (const t of free) if (guess[t] !== undefined && (twoColor || !TONE_SEARCH.has(t) || fixed.has(t))) (start as Record<Tunable, number>)[t] = guess[t]!;
  let best = start;
  let bestSim = simulate(input, stats, start, rampLevels, colors);
  for (const [name, values] of twoColor ? [] : TONE_GRID) {
    if (!free.has(name) || fixed.has(name)) continue;
    const around = best;
    const tried: number[] = [];
    for (const v of [...values, guess[name]]) {
      if (v === undefined || v === around[name]) continue;
      // A value tried already scores the same again and cannot beat the best.
      const r = inRange(name, v);
      if (r === around[name] || tried.includes(r)) continue;
      tried.push(r);
      const cand: RenderParams = { ...around, [name]: r };
      const sim = simulate(input, stats, cand, rampLevels, colors);
      if (sim.score > bestSim.score + 1e-6) { best = cand; bestSim = sim; }
    }
  }
  return { best, sim: bestSim };
}

/**
 * The Auto Director: measures the source, proposes settings for the rubric, scores a small set
 * of candidates around the proposal on a cell-level rendering, and applies the best one scaled by
 * autoOptimize — only to parameters the caller did not set. autoOptimize = 0 changes nothing.
 */
export function direct(prep: DirectorInput['prep'], requested: RenderParams, explicit: readonly string[], ramp: Omit<DirectorInput, 'prep'>): { params: RenderParams; report: DirectorReport } {
  // The cells' RGB (render.ts colorsWhen() resamples it at once where it is read here; should a
  // caller's prepare() have deferred it, it is computed now, before any kernel frame is open).
  const colorsRead = readsColors(requested);
  const sampled = sampleCells(prep.cellLuma, colorsRead ? prep.resampled.cellLinearRgb : null);
  const lutAt = lutIndices(sampled.cellLuma);
  const input: SimInput = {
    ...sampled, cells: sourceCells(sampled.cellLuma), coverage: ramp.coverage, texture: ramp.texture, scale: ramp.scale, order: ramp.order,
    lutAt,
  };
  const stats = measureSource(prep.resampled.luma, prep.resampled);
  const rampLevels = new Float64Array(ramp.order.length);
  for (let j = 0; j < rampLevels.length; j++) rampLevels[j] = ramp.coverage[ramp.order[j]!]! / ramp.scale;
  const colors = new Uint8Array(input.cellLuma.length * 3);
  const strength = requested.autoOptimize;
  const free = new Set<Tunable>(TUNABLE.filter((t) => !explicit.includes(t)));
  if (!requested.edges) free.delete('edgeStrength');
  if (!colorsRead) free.delete('saturation');
  if (requested.glyphStrategy === 'fixed' || requested.charset === 'dots') free.delete('maxGlyphRmse');

  let best = requested;
  let bestSim: Sim;
  // The requested settings are scored only when no search replaces them with its start.
  if (!(strength > 0 && free.size > 0)) bestSim = simulate(input, stats, requested, rampLevels, colors);
  else {
    // Detail settings come from the measurements; tone settings from a coordinate search on
    // the rubric (contrast, then gamma, then levels, then the codebook), each step keeping the
    // best so far.
    // With two colours per cell the colours carry the tone: no search on glyph tone.
    const twoColor = usesTwoColors(requested);
    const neutral = neutralTone(requested, explicit);
    const ctx: SearchContext = { input, stats, requested: neutral, rampLevels, colors, free, twoColor };
    let found = searchTones(ctx, propose(neutral, stats), NONE);
    const crisp = CRISP[requested.qualityTarget];
    if (crisp && !twoColor && free.has('contrast')) {
      // The same search at each crisp contrast. One counts unless it draws the cells' tones
      // clearly less truly, or crushes clearly more of them to blank or full, than the free
      // search; of those that count, the one whose shapes should read best up close (the
      // contour metric) replaces the free search's result.
      // Ascending: a contrast the guards turn down crushes more, or draws less truly, than the
      // next lower one, so the higher ones are not searched.
      const crisps: (typeof found)[] = [];
      for (const contrast of crisp.contrasts) {
        const c = searchTones(ctx, propose(neutral, stats, { contrast, sharpen: crisp.sharpen }), CONTRAST);
        // The contour metric of the search's result only (the rubric does not weigh it).
        c.sim = simulate(input, stats, c.best, rampLevels, colors, true);
        crisps.push(c);
        if (!crispest(found, [c], crisp)) break;
      }
      found = crispest(found, crisps, crisp) ?? found;
    }
    best = found.best;
    bestSim = found.sim;
  }

  const params: RenderParams = { ...requested };
  const adjustments: Record<string, { from: number; to: number }> = {};
  if (strength > 0) {
    for (const t of free) {
      const from = requested[t];
      const to = inRange(t, from + strength * (best[t] - from));
      if (Math.abs(to - from) > 1e-9) {
        (params as Record<Tunable, number>)[t] = to;
        adjustments[t] = { from, to };
      }
    }
  }
  const rubric = RUBRICS[requested.qualityTarget];
  // A colourfulness not measured yet (measure.ts) in its place, measured when first read here.
  const later = isPending(stats, 'colorfulness');
  const source = roundMetrics({
    median: stats.p50, dynamicRange: stats.dynamicRange, noise: stats.noise, edgeDensity: stats.edgeDensity,
    shadowShare: stats.shadowShare, highlightShare: stats.highlightShare, colorfulness: later ? 0 : stats.colorfulness,
  });
  if (later) lazyProperty(source, 'colorfulness', () => roundMetrics({ colorfulness: stats.colorfulness }).colorfulness!);
  const report: DirectorReport = {
    status: bestSim.score >= rubric.threshold ? 'target_met' : 'best_effort',
    rubric: requested.qualityTarget,
    score: Math.round(bestSim.score * 10000) / 10000,
    threshold: rubric.threshold,
    strength,
    // The contour metric chose among crisp contrasts; the report keeps the rubric's metrics.
    metrics: roundMetrics(withoutContour(bestSim.metrics)),
    source,
    adjustments,
  };
  return { params, report };
}

/**
 * Re-scores the report on the real output grid: the tone each cell shows (its glyph's coverage, or
 * with two colours per cell their mix) against the source cells, and the real chroma for round-trip. Stability stays the Director's prediction
 * (it needs a second frame to measure).
 */
export function scoreResult(result: RenderResult, prep: { readonly cellLuma: Float32Array; readonly resampled: { readonly cellLinearRgb: Float32Array } }, coverage: Float32Array, scale: number, report: DirectorReport): DirectorReport {
  // The tone each cell shows: with two colours per cell, ink and background mixed by the glyph's
  // coverage (as json-compact decodes it); else the glyph's coverage.
  const source = sourceCells(prep.cellLuma);
  const metrics: Record<string, number> = result.background
    ? colorToneMetrics(result.cells, mixCoverages(result.glyphs), result.colors, result.background, source)
    : glyphToneMetrics(result.cells, coverage, scale, result.params.invert, source);
  if (report.metrics.stability !== undefined) metrics.stability = report.metrics.stability;
  // What json-compact decodes to: with two colours per cell, ink and background mixed.
  const resampled = prep.resampled;
  const roundTrip = () => roundTripMetric(result.background ? mixedCellColors(result.columns, result.rows, gridLines(result), result.colors, result.background) : result.colors, resampled.cellLinearRgb);
  const rubric = RUBRICS[report.rubric];
  // Scored only where the rubric weighs it; else measured when the report is read (it reads the
  // colours, which mono art computes on first read: render.ts).
  const scored = 'roundTrip' in rubric.weights;
  if (scored) metrics.roundTrip = roundTrip();
  const score = rubricScore(rubric, metrics);
  const rounded = roundMetrics(metrics);
  if (!scored) lazyProperty(rounded, 'roundTrip', () => roundMetrics({ roundTrip: roundTrip() }).roundTrip!);
  return {
    ...report,
    status: score >= rubric.threshold ? 'target_met' : 'best_effort',
    score: Math.round(score * 10000) / 10000,
    metrics: rounded,
  };
}
