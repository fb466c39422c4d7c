import type { QualityTarget } from '../params/definitions.js';

/**
 * A rubric is a weighted sum of metrics (each 0..1, higher is better) and the score that counts
 * as meeting it. The metrics are measured on the rendered grid against the source cells:
 * - fidelity: Pearson correlation of rendered cell tone with source cell luminance;
 * - range: share of the tonal range used (p95 - p5 of rendered tone, 0.8 counts as full);
 * - separation: the standard deviation of rendered tone (0.36 counts as full): regions drawn
 *   apart, which at glyph scale (bench:quality's contour score) read as crisp shapes;
 * - levels: entropy of rendered tones over 16 bins, normalised (tonal detail);
 * - clipping: 1 - 4x the share of cells crushed to an extreme whose source is visibly off it;
 * - shadows / midtones / highlights: the levels metric within the darkest quarter, middle half
 *   and brightest quarter of the source;
 * - stability: 1 - predicted share of glyph changes per frame under the measured sensor noise;
 * - roundTrip: 1 - RMSE/0.25 of the image rebuilt from json-compact's chroma against the source.
 */
export interface Rubric {
  readonly weights: Readonly<Record<string, number>>;
  readonly threshold: number;
}

export const RUBRICS: Readonly<Record<QualityTarget, Rubric>> = {
  balanced: { weights: { fidelity: 0.45, separation: 0.25, range: 0.05, levels: 0.1, clipping: 0.15 }, threshold: 0.75 },
  portrait: { weights: { fidelity: 0.25, separation: 0.15, midtones: 0.2, highlights: 0.1, clipping: 0.2, levels: 0.1 }, threshold: 0.72 },
  motion: { weights: { stability: 0.45, fidelity: 0.3, levels: 0.1, range: 0.15 }, threshold: 0.7 },
  'low-light': { weights: { shadows: 0.3, fidelity: 0.25, separation: 0.15, range: 0.1, stability: 0.2 }, threshold: 0.65 },
  'round-trip': { weights: { roundTrip: 0.6, fidelity: 0.4 }, threshold: 0.8 },
};

export function rubricScore(rubric: Rubric, metrics: Readonly<Record<string, number>>): number {
  let s = 0, w = 0;
  // The weights' entries listed once per rubric (the Director scores ~60 candidates a render).
  let entries = weightEntries.get(rubric);
  if (!entries) weightEntries.set(rubric, (entries = Object.entries(rubric.weights)));
  for (const [k, wt] of entries) {
    s += wt * (metrics[k] ?? 0);
    w += wt;
  }
  return w ? s / w : 0;
}

const weightEntries = new WeakMap<Rubric, readonly (readonly [string, number])[]>();
