import { frame, nestedFrame } from '../wasm/kernels.js';
import { encLut } from './linear.js';
import type { ToneSettings } from './tone.js';

const LUT_SIZE = 1024;

/** What every colour of a render goes through: the tone curve on its luminance, then saturation. */
export interface ColorTransform {
  /** Perceptual luminance -> toned linear luminance, tabulated (the curve has a pow per value). */
  readonly lut: Float32Array;
  readonly saturation: number;
}

export function colorTransform(saturation: number, tone: ToneSettings): ColorTransform {
  // Not invert: that is a glyph-mapping choice, the colours stay the image's.
  const key = `${tone.lo} ${tone.hi} ${tone.contrast} ${tone.brightness} ${tone.gamma}`;
  let lut = luts.get(key);
  if (!lut) {
    // In WebAssembly (assembly/tone.ts colorToneTable): srgbToLinear(toneValue(i / LUT_SIZE, tone)),
    // the same arithmetic in the same order; nested, like toneLut(), in any open frame.
    lut = nestedFrame((f) => {
      const p = f.f32(LUT_SIZE + 1);
      f.ready().colorToneTable(p, LUT_SIZE, tone.lo, tone.hi - tone.lo, tone.contrast, tone.brightness / 255, 1 / tone.gamma, tone.gamma !== 1);
      return f.viewF32(p, LUT_SIZE + 1).slice();
    });
    if (luts.size >= MAX_LUTS) luts.delete(luts.keys().next().value!);
    luts.set(key, lut);
  }
  return { lut, saturation };
}

/**
 * Tables by tone settings (two pows an entry): a render, the Director's round-trip candidates
 * and the next frame ask for the same few again. Shared: read only.
 */
const luts = new Map<string, Float32Array>();
const MAX_LUTS = 32;

/** Ink-only colour output: each cell's glyph, and the ink of each glyph. */
export interface InkCoverage {
  readonly coverage: Float32Array;
  readonly cells: Uint16Array;
}

/**
 * Each cell's colour, as sRGB bytes into `out`: its mean linear-light RGB with its luminance moved
 * along the tone curve (chromaticity kept), no further than its largest channel reaching 1 (lifted
 * past that, the lightness kept leaves no room for chroma: a saturated red would turn white), then its OKLab chroma scaled by `saturation` with
 * lightness and hue kept; where the result leaves the sRGB gamut the chroma is reduced (never the
 * hue or the lightness, by bisection) until it fits. With `ink` (ink-only colour output), the
 * colour is the *ink*: divided by the cell's glyph coverage, so that coverage x ink reproduces the
 * cell (tone carried once, by glyph and ink together, not darkened twice); where that would exceed
 * white the ink is scaled down as a whole (hue and chroma ratio kept).
 */
export function cellColors(linearRgb: Float32Array, t: ColorTransform, out: Uint8Array, ink?: InkCoverage): Uint8Array {
  const n = linearRgb.length / 3;
  // In WebAssembly (assembly/measure.ts).
  const enc = encLut();
  const f = frame();
  const pr = f.f32(n * 3), pl = f.f32(LUT_SIZE + 1), pe = f.f32(enc.length), po = f.bytes(n * 3);
  const pc = ink ? f.f32(ink.coverage.length) : 0, pg = ink ? f.bytes(n * 2) : 0;
  const k = f.ready();
  f.viewF32(pr, n * 3).set(linearRgb);
  f.viewF32(pl, LUT_SIZE + 1).set(t.lut);
  f.viewF32(pe, enc.length).set(enc);
  if (ink) {
    f.viewF32(pc, ink.coverage.length).set(ink.coverage);
    f.viewU16(pg, n).set(ink.cells.subarray(0, n));
  }
  k.cellColors(pr, n, pl, t.saturation, pe, pc, pg, po);
  out.set(f.viewU8(po, n * 3));
  return out;
}
