import { histogramWords, nestedFrame } from '../wasm/kernels.js';
import type { Raster } from './raster.js';

/** Bins of the tone histogram over 0..1. */
export const HIST_BINS = 1024;
export const TONE_LUT_SIZE = 4096;

/** Percentiles of the auto-levels stretch: robust to a few specular or dead pixels. */
export const LEVELS_LOW_PERCENTILE = 0.005;
export const LEVELS_HIGH_PERCENTILE = 0.995;
/** Both, as histPercentiles() reads its shares (f64, ascending). */
export const LEVEL_POINTS: Float64Array = Float64Array.of(LEVELS_LOW_PERCENTILE, LEVELS_HIGH_PERCENTILE);

export interface ToneSettings {
  /** Input black and white points after auto-levels. */
  readonly lo: number;
  readonly hi: number;
  readonly contrast: number;
  /** Offset on a 0-255 scale. */
  readonly brightness: number;
  readonly gamma: number;
  readonly invert: boolean;
}

export function histogram(r: Raster, bins = HIST_BINS): Uint32Array {
  const n = r.data.length;
  // In WebAssembly (assembly/kernels.ts), in a nested frame (the codebook's, inside render.ts's
  // glyph stage frame).
  return nestedFrame((f) => {
    const pd = f.f32(n), ph = f.f32(histogramWords(bins));
    const k = f.ready();
    f.viewF32(pd, n).set(r.data);
    k.histogram(pd, n, bins, ph);
    return f.viewU32(ph, bins).slice();
  });
}

/**
 * Black and white points from a histogram's LEVEL_POINTS values (its LEVELS_LOW/HIGH_PERCENTILE
 * percentiles: assembly/measure.ts histPercentiles): `autoLevels` blends from none (0..1) to the
 * full percentile stretch. A nearly flat image keeps a minimum span so noise is not blown up into
 * full contrast.
 */
export function stretch(pLo: number, pHi: number, autoLevels: number): { lo: number; hi: number } {
  let lo = autoLevels * pLo;
  let hi = 1 - autoLevels * (1 - pHi);
  const minSpan = 0.1;
  if (hi - lo < minSpan) {
    const mid = (hi + lo) / 2;
    lo = Math.max(0, mid - minSpan / 2);
    hi = Math.min(1, lo + minSpan);
    lo = hi - minSpan;
  }
  return { lo, hi };
}

/** The tone curve: levels, contrast about mid-grey, brightness, clamp, gamma, invert. */
export function toneValue(v: number, s: ToneSettings): number {
  let u = (v - s.lo) / (s.hi - s.lo);
  u = (u - 0.5) * s.contrast + 0.5 + s.brightness / 255;
  // Clamped ends skip the pow: pow(0, 1/gamma) is 0 and pow(1, 1/gamma) is 1 for gamma > 0.
  u = u <= 0 ? 0 : u >= 1 ? 1 : s.gamma !== 1 ? Math.pow(u, 1 / s.gamma) : u;
  return s.invert ? 1 - u : u;
}

/**
 * LUT over inputs -0.5..1.5 (sharpening overshoots 0..1; levels must still see it). Entries
 * outside `from..to` (indices) stay 0, for callers that only look up a narrower input range.
 * Tables are kept by their settings (a render, the Director's candidates and the next frame ask
 * for the same few again): the result is shared, read it only.
 */
export function toneLut(s: ToneSettings, size = TONE_LUT_SIZE, from = 0, to = size): Float32Array {
  // By a hash of the settings' bits, the settings then compared: a string of them cost about
  // 1.5 µs a lookup (nine numbers printed), some 0.1 ms of the Director's ~60 candidates a render.
  const key = toneKey(s, size, from, to);
  const hit = toneLuts.get(key);
  let lut = hit && hit.lo === s.lo && hit.hi === s.hi && hit.contrast === s.contrast && hit.brightness === s.brightness && hit.gamma === s.gamma
    && hit.invert === s.invert && hit.size === size && hit.from === from && hit.to === to ? hit.lut : undefined;
  if (!lut) {
    // In WebAssembly (assembly/tone.ts toneTable): toneValue() of each entry's input, the same
    // arithmetic in the same order. In a frame of its own nested in any open one: detail.ts asks
    // for the render's table between its kernels.
    const n = size + 1;
    lut = nestedFrame((f) => {
      const p = f.f32(n);
      f.ready().toneTable(p, size, from, to, s.lo, s.hi - s.lo, s.contrast, s.brightness / 255, 1 / s.gamma, s.gamma !== 1, s.invert);
      return f.viewF32(p, n).slice();
    });
    if (!hit && toneLuts.size >= MAX_TONE_LUTS) toneLuts.delete(toneLuts.keys().next().value!);
    // A hash shared with other settings: the newer table takes the slot (a later miss recomputes).
    toneLuts.set(key, { lo: s.lo, hi: s.hi, contrast: s.contrast, brightness: s.brightness, gamma: s.gamma, invert: s.invert, size, from, to, lut });
  }
  return lut;
}

interface ToneLutEntry extends ToneSettings {
  readonly size: number;
  readonly from: number;
  readonly to: number;
  readonly lut: Float32Array;
}

/** toneLut() tables by toneKey(); a few dozen cover the Director's candidates of a render. */
const toneLuts = new Map<number, ToneLutEntry>();
const MAX_TONE_LUTS = 64;

const keyBits = new Float64Array(5);
const keyWords = new Uint32Array(keyBits.buffer);
/** A 32-bit hash of toneLut()'s arguments (the settings' f64 bits, then the integers). */
function toneKey(s: ToneSettings, size: number, from: number, to: number): number {
  keyBits[0] = s.lo; keyBits[1] = s.hi; keyBits[2] = s.contrast; keyBits[3] = s.brightness; keyBits[4] = s.gamma;
  let h = (s.invert ? 0x9e3779b9 : 0x85ebca6b) ^ size;
  for (let i = 0; i < 10; i++) h = Math.imul(h ^ keyWords[i]!, 0x5bd1e995) ^ (h >>> 15);
  h = Math.imul(h ^ from, 0x5bd1e995) ^ (h >>> 13);
  return (Math.imul(h ^ to, 0x5bd1e995) ^ (h >>> 15)) >>> 0;
}
