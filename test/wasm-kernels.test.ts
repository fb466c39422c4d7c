/**
 * Every WebAssembly kernel (assembly/kernels.ts) against the scalar TypeScript it replaced
 * (test/reference/): bit-identical outputs, since both do the same f64 operations in the same
 * order and round to f32 at the same points. Random rasters, odd sizes (SIMD tails), alpha,
 * values outside 0..1 (sharpening overshoot) and NaN-free edge cases.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DIRECTIONAL_CHARS, customGlyphSet, getGlyphSet, glyphShape } from '../src/core/glyphs/charsets.js';
import { SAMPLES } from '../src/core/glyphs/types.js';
import { matchBraille } from '../src/core/pipeline/braille.js';
import { applyLut, bilateralDenoise, unsharpMask } from './helpers/kernel-calls.js';
import { sobelInk } from '../src/core/pipeline/edges.js';
import { cellMeans, invertInFrame } from '../src/core/pipeline/raster.js';
import { boxTaps, resampleImage, resampleRgb } from '../src/core/pipeline/resample.js';
import { resampleRgb as refResampleRgb } from './reference/color-raster.js';
import { cellStructure } from '../src/core/pipeline/structure.js';
import { histogram, toneLut, type ToneSettings } from '../src/core/pipeline/tone.js';
import { matchGlyphs, templateStats, TONE_WEIGHT, type GlyphTable, type MatchOptions } from '../src/core/pipeline/match.js';
import { viewBlur, viewBlurTemplates } from '../src/core/pipeline/view-blur.js';
import { cellColors, colorTransform } from '../src/core/pipeline/colors.js';
import { chooseCodebook, entropyBits } from '../src/core/pipeline/codebook.js';
import { measureSource } from '../src/core/director/measure.js';
import { colorToneMetrics, glyphToneMetrics, roundTripMetric, simulatedMetrics, sourceCells } from '../src/core/director/metrics.js';
import { closeNested, frame, fromBase64, histogramWords, kernelBytes, kernelModule, nestedFrame, openNested } from '../src/core/wasm/kernels.js';
import { KERNELS_WASM_BASE64 } from '../src/core/wasm/kernels.generated.js';
import { matchBraille as refBraille } from './reference/braille.js';
import { bilateralDenoise as refDenoise } from './reference/denoise.js';
import { sobelInk as refSobel } from './reference/edges.js';
import { cellMeans as refCellMeans } from './reference/raster.js';
import { boxTaps as refBoxTaps, resampleImage as refResample } from './reference/resample.js';
import { unsharpMask as refUnsharp } from './reference/sharpen.js';
import { cellStructure as refStructure } from './reference/structure.js';
import { applyLut as refApplyLut, colorToneTable as refColorToneTable, histogram as refHistogram, toneTable as refToneTable } from './reference/tone.js';
import { matchGlyphs as refMatch, templateStats as refTemplateStats } from './reference/match.js';
import { complements as refComplements, matchBrailleTwoColor as refBrailleTwoColor, matchTwoColor as refTwoColor } from './reference/two-color.js';
import { complements, matchBrailleTwoColor, matchTwoColor, type TwoColorGlyphs } from '../src/core/pipeline/two-color.js';
import { refineGlyphs as refRefine } from './reference/refine.js';
import { FINE_MIN_SPREAD, fineTable, refineGlyphs } from '../src/core/pipeline/refine.js';
import { viewBlur as refViewBlur } from './reference/view-blur.js';
import { linearToSrgb as refLinearToSrgb } from './reference/linear.js';
import { SRGB8_TO_LINEAR, encLut, encodeLinear } from '../src/core/pipeline/linear.js';
import { cellColors as refCellColors } from './reference/colors.js';
import { chooseCodebook as refChooseCodebook } from './reference/codebook.js';
import { measureSource as refMeasureSource } from './reference/measure.js';
import { roundTripMetric as refRoundTrip, simulatedMetrics as refSimulatedMetrics, sourceCells as refSourceCells, toneMetrics as refToneMetrics } from './reference/metrics.js';
import { image, rng, scene, withNoise } from './helpers/images.js';

/** Bitwise equality of two typed arrays (so -0/+0 and NaN payloads count too). */
function same(actual: ArrayBufferView & { length: number }, expected: ArrayBufferView & { length: number }, what: string): void {
  assert.equal(actual.length, expected.length, `${what}: length`);
  const a = new Uint8Array(actual.buffer, actual.byteOffset, actual.byteLength);
  const b = new Uint8Array(expected.buffer, expected.byteOffset, expected.byteLength);
  const i = a.findIndex((v, k) => v !== b[k]);
  assert.ok(i < 0, `${what}: first difference at byte ${i}`);
}

/** A w x h raster: smooth tone, steps, noise, and `over` of overshoot beyond 0..1. */
function raster(w: number, h: number, seed: number, over = 0): Float32Array {
  const r = rng(seed);
  const d = new Float32Array(w * h);
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) {
      const step = (x * 7 + y * 3) % 40 < 20 ? 0.2 : 0.7;
      d[y * w + x] = step + 0.2 * Math.sin(x * 0.3) * Math.cos(y * 0.2) + (r() - 0.5) * 0.1 + (r() < 0.02 ? (r() - 0.5) * 2 * over : 0);
    }
  }
  return d;
}

const SIZES: readonly [number, number][] = [[1, 1], [3, 2], [4, 8], [5, 9], [7, 16], [33, 24], [160, 96], [321, 77]];

describe('wasm kernels match the scalar reference bit for bit', () => {
  it('the module compiles from the embedded bytes and exports every kernel', () => {
    const wasm = (globalThis as unknown as { WebAssembly: { Module: { exports(m: object): { name: string }[] } } }).WebAssembly;
    const names = wasm.Module.exports(kernelModule()).map((e) => e.name).sort();
    assert.deepEqual(names, ['applyLut', 'boxTaps', 'braille', 'cellChroma', 'cellColors', 'cellMeans', 'cellsBands', 'cellsRange', 'codebookDp', 'colorToneTable', 'complements', 'coverageTones', 'denoisePass', 'encTable', 'entryCounts', 'fineStats', 'gather', 'glyphCounts', 'heapBase', 'hexLevels', 'histPercentiles', 'histShares', 'histogram', 'lutIndices', 'matchBrailleTwoColor', 'matchGlyphs', 'matchTwoColor', 'measure', 'memory', 'oneMinus', 'quantileBin', 'quantizeTable', 'refineBook', 'refineGlyphs', 'resample', 'roundTripError', 'simSums', 'sobel', 'structure', 'templateStats', 'temporalStep', 'toneSums', 'toneTable', 'unsharp', 'unstable', 'viewBlur', 'viewBlurCells']);
    assert.deepEqual([...kernelBytes().subarray(0, 4)], [0, 0x61, 0x73, 0x6d], 'the wasm magic number');
  });

  it('the embedded base64 decodes alike through Buffer and through atob (a browser without Uint8Array.fromBase64)', () => {
    const g = globalThis as unknown as { Buffer: unknown };
    const viaBuffer = fromBase64(KERNELS_WASM_BASE64);
    const buffer = g.Buffer;
    let viaAtob: Uint8Array;
    try {
      g.Buffer = undefined;
      viaAtob = fromBase64(KERNELS_WASM_BASE64);
    } finally {
      g.Buffer = buffer;
    }
    assert.ok(!(viaAtob instanceof (buffer as typeof Buffer)), 'the atob path ran');
    assert.deepEqual([...viaAtob], [...viaBuffer]);
    assert.equal(viaBuffer.length, Math.floor((KERNELS_WASM_BASE64.replace(/=+$/, '').length * 3) / 4));
    assert.deepEqual([...fromBase64('AAEC/w==')], [0, 1, 2, 255]);
  });

  it('the sRGB encoding table, every entry (WebAssembly\'s pow rounded to f32 against Math.pow\'s)', () => {
    const t = encLut();
    assert.equal(t.length, 16385);
    for (let i = 0; i < t.length; i++) {
      if (t[i] !== Math.fround(refLinearToSrgb(i / 16384))) assert.fail(`entry ${i}: ${t[i]} vs ${Math.fround(refLinearToSrgb(i / 16384))}`);
    }
  });

  it('the tone tables (toneLut, colorTransform\'s), over random settings and ranges, and nested in an open frame', () => {
    const next = rng(20261127);
    const settings: ToneSettings[] = [
      { lo: 0, hi: 1, contrast: 1, brightness: 0, gamma: 1, invert: false },
      { lo: 0.05, hi: 0.93, contrast: 1.15, brightness: 7, gamma: 1.3, invert: true },
      { lo: 0.3, hi: 0.4, contrast: 4, brightness: -150, gamma: 0.2, invert: false },
    ];
    for (let k = 0; k < 200; k++) {
      const lo = next() * 0.5;
      settings.push({ lo, hi: lo + 0.1 + next() * (1 - lo - 0.1), contrast: 0.2 + next() * 3.8, brightness: Math.round(next() * 300 - 150), gamma: k % 5 === 0 ? 1 : 0.2 + next() * 2.8, invert: k % 3 === 0 });
    }
    for (const [k, s] of settings.entries()) {
      same(toneLut(s), refToneTable(s, 4096), `toneLut ${JSON.stringify(s)}`);
      const from = Math.floor(next() * 600) - 50, to = from + Math.floor(next() * 600);
      same(toneLut(s, 1024, from, to), refToneTable(s, 1024, from, to), `toneLut 1024 ${from}..${to} ${JSON.stringify(s)}`);
      if (k % 4 === 0) same(colorTransform(1, s).lut, refColorToneTable(s, 1024), `colorTransform ${JSON.stringify(s)}`);
    }
    // Asked for between the kernels of an open frame (pipeline/detail.ts): that frame's memory stays.
    const f = frame();
    const p = f.f32(1000);
    f.ready();
    const mark = Float32Array.from({ length: 1000 }, (_, i) => i * 0.5);
    f.viewF32(p, 1000).set(mark);
    const s = { lo: 0.01, hi: 0.99, contrast: 1.7, brightness: 3, gamma: 0.77, invert: false };
    same(toneLut(s, 2048), refToneTable(s, 2048), 'toneLut nested');
    same(colorTransform(1.4, s).lut, refColorToneTable(s, 1024), 'colorTransform nested');
    same(f.viewF32(p, 1000), mark, 'the open frame\'s memory');
  });

  it('bilateral denoise (1 and 2 passes)', () => {
    for (const [w, h] of SIZES) {
      for (const strength of [0.1, 0.35, 0.6, 1]) {
        const src = { width: w, height: h, data: raster(w, h, w * 31 + h) };
        const got = bilateralDenoise(src, strength, new Float32Array(w * h));
        const want = refDenoise(src, strength, new Float32Array(w * h), new Float32Array(w * h));
        same(got, want, `denoise ${w}x${h} strength ${strength}`);
      }
    }
  });

  it('unsharp mask with and without the tone curve, and the tone table alone', () => {
    const tone = toneLut({ lo: 0.05, hi: 0.93, contrast: 1.15, brightness: 7, gamma: 1.3, invert: false });
    for (const [w, h] of SIZES) {
      const src = raster(w, h, w + h * 17, 0.6);
      for (const sharpen of [0, 0.35, 1]) {
        for (const t of [undefined, tone]) {
          const got = unsharpMask(src, w, h, sharpen, new Float32Array(w * h), t);
          const want = refUnsharp(src, w, h, sharpen, new Float32Array(w * h), new Float32Array(w * h), t);
          same(got, want, `unsharp ${w}x${h} sharpen ${sharpen} tone ${t ? 'on' : 'off'}`);
        }
      }
      same(applyLut(src, tone, new Float32Array(w * h)), refApplyLut(src, tone, new Float32Array(w * h)), `applyLut ${w}x${h}`);
    }
  });

  it('invert (1 - v rounded to f32), odd lengths, values outside 0..1, extremes and NaN', () => {
    const r = rng(71);
    for (const n of [0, 1, 2, 3, 640 * 480 + 1]) {
      const special = [0, -0, 1, 0.5, 1e-30, -1e-30, 3e38, -3e38, 1.0000001, Number.NaN, Number.POSITIVE_INFINITY];
      const data = Float32Array.from({ length: n }, (_, i) => (i < special.length ? special[i]! : r() * 1.4 - 0.2));
      const expected = Float32Array.from(data, (v) => 1 - v);
      // In a frame, as the glyph stage runs it.
      const f = frame();
      const p = f.f32(n);
      f.ready();
      f.viewF32(p, n).set(data);
      invertInFrame(f, p, n);
      const got = f.viewF32(p, n).slice();
      assert.deepEqual(got, expected, `invert n ${n}`);
    }
  });

  it('histogram, including values outside 0..1', () => {
    for (const [w, h] of SIZES) {
      const r = { width: w, height: h, data: raster(w, h, 5 + w, 1) };
      for (const bins of [16, 1024]) same(histogram(r, bins), refHistogram(r, bins), `histogram ${w}x${h} bins ${bins}`);
    }
  });

  it('cell means, structure tensor and Sobel', () => {
    for (const [w, h] of SIZES) {
      const d = raster(w, h, 99 + w * h, 0.3);
      for (const [cw, ch] of [[4, 8], [2, 4], [1, 1]] as const) {
        same(cellMeans({ width: w, height: h, data: d }, cw, ch), refCellMeans({ width: w, height: h, data: d }, cw, ch), `cellMeans ${w}x${h} ${cw}x${ch}`);
        const got = cellStructure(d, w, h, cw, ch), want = refStructure(d, w, h, cw, ch);
        same(got.direction, want.direction, `structure direction ${w}x${h} ${cw}x${ch}`);
        same(got.strength, want.strength, `structure strength ${w}x${h} ${cw}x${ch}`);
      }
      for (const k of [0.1, 1.8, 5]) same(sobelInk(d, w, h, k, new Float32Array(w * h)), refSobel(d, w, h, k, new Float32Array(w * h)), `sobel ${w}x${h} ${k}`);
    }
  });

  it('the Director\'s source measurements (noise, edges, chroma)', () => {
    for (const [w, h] of [...SIZES, [2, 9], [640, 240]] as const) {
      const d = raster(w, h, 31 + w * h, 0.4);
      const r = rng(w + h);
      const cells = Math.max(1, Math.floor((w * h) / 8));
      const rgb = Float32Array.from({ length: cells * 3 }, () => (r() < 0.05 ? r() * 1.2 - 0.1 : r()));
      assert.deepEqual(measureSource({ width: w, height: h, data: d }, { cellLinearRgb: rgb }), refMeasureSource({ width: w, height: h, data: d }, rgb), `measure ${w}x${h}`);
    }
    {
      // The chroma (max - min of each cell's encoded channels, taken on the channels before the
      // encoding): NaN, -0, infinities and values on and between the table's entries.
      const d = raster(16, 12, 5), r = rng(17);
      const odd = [NaN, -0, 0, -1e-30, Infinity, -Infinity, 1, 1 + 1e-7, 1 / 16384, 2 / 16384, 16383 / 16384, 0.5, 0.5 + 1e-12];
      const rgb = Float32Array.from({ length: 3 * 24 }, (_, i) => (i % 4 === 0 ? r() : odd[Math.floor(r() * odd.length)]!));
      assert.deepEqual(measureSource({ width: 16, height: 12, data: d }, { cellLinearRgb: rgb }), refMeasureSource({ width: 16, height: 12, data: d }, rgb), 'measure, odd colours');
    }
    // Histograms with one value (every percentile in one bin), two extremes, values past 0..1.
    const w = 64, h = 48, rgb = new Float32Array(3 * 48);
    for (const [name, at] of [['flat', () => 0.37], ['black', () => 0], ['two', (i: number) => (i % 3 ? 0 : 1)], ['over', (i: number) => (i % 5) * 0.4 - 0.3]] as const) {
      const d = Float32Array.from({ length: w * h }, (_, i) => at(i));
      assert.deepEqual(measureSource({ width: w, height: h, data: d }, { cellLinearRgb: rgb }), refMeasureSource({ width: w, height: h, data: d }, rgb), `measure ${name}`);
    }
  });

  it('the Director\'s tone metrics and candidate simulation', () => {
    const r = rng(41);
    for (const n of [0, 1, 2, 7, 300, 2048, 9600]) {
      // Source luminance with ties, extremes and overshoot; rendered tones on a few levels.
      const values = Float32Array.from({ length: n }, () => (r() < 0.1 ? Math.round(r() * 4) / 4 : r() < 0.05 ? r() * 1.4 - 0.2 : r()));
      const source = sourceCells(values);
      assert.deepEqual(source, refSourceCells(values), `sourceCells n ${n}`);
      const lin = Float32Array.from({ length: n * 3 }, () => (r() < 0.02 ? r() * 1.2 - 0.1 : r() ** 2));
      const bytes = Uint8Array.from(lin, (v) => Math.max(0, Math.min(255, Math.round(Math.sqrt(Math.max(0, v)) * 255 + (r() - 0.5) * 20))));
      assert.equal(roundTripMetric(bytes, lin), refRoundTrip(bytes, lin), `roundTrip n ${n}`);
      for (const levels of [2, 9, 70]) {
        // Cells on `levels` glyphs whose coverages are the levels themselves (scale 1): those tones.
        const coverage = Float32Array.from({ length: levels }, (_, g) => g / (levels - 1));
        const cells = Uint16Array.from({ length: n }, () => Math.round(r() * (levels - 1)));
        const rendered = Float32Array.from(cells, (g) => coverage[g]!);
        assert.deepEqual(glyphToneMetrics(cells, coverage, 1, false, source), refToneMetrics(rendered, source), `toneMetrics n ${n} levels ${levels}`);
        // A tone table over -0.5..1.5 (zero outside from..to, as toneLut leaves it), the ramp's levels.
        const ramp = Float64Array.from({ length: levels }, (_, i) => (i / (levels - 1)) ** 1.1);
        // And with a level below 2^-17, where the kernel's sum of tones by table entry would not
        // be exact: it sums the cells in order instead.
        const tiny = Float64Array.from(ramp, (v, i) => (i === 1 && levels > 2 ? 3e-7 : v));
        // The entries the cells and their +-sigma probes look up (director.ts lutIndex).
        const at = (v: number) => Math.min(1024, Math.max(0, Math.floor((v + 0.5) * 512)));
        const from = at(source.min - 0.03), to = at(source.max + 0.03);
        const lut = Float32Array.from({ length: 1025 }, (_, k) => (k < from || k > to ? 0 : Math.min(1, Math.max(0, (k - 256) / 512)) ** 0.8));
        const lutAt = Uint16Array.from(values, at);
        for (const invert of [false, true]) {
          for (const sigma of [undefined, 0.004, 0.03]) {
            assert.deepEqual(simulatedMetrics(lut, from, to, ramp, invert, lutAt, source, sigma), refSimulatedMetrics(lut, from, to, ramp, invert, lutAt, source, sigma), `simulation n ${n} levels ${levels} sigma ${sigma} invert ${invert}`);
          }
          assert.deepEqual(simulatedMetrics(lut, from, to, tiny, invert, lutAt, source), refSimulatedMetrics(lut, from, to, tiny, invert, lutAt, source), `simulation n ${n} levels ${levels} tiny level invert ${invert}`);
        }
      }
    }
  });

  it('the simulation\'s shared inputs are laid out again once another kernel call has reused their memory', () => {
    // simulatedMetrics() keeps the cells, their entries and the counts per entry in kernel
    // memory between candidates; a frame() in between (any other kernel call) writes over them.
    const r = rng(47);
    const values = Float32Array.from({ length: 2048 }, () => r());
    const source = sourceCells(values);
    const at = (v: number) => Math.min(1024, Math.max(0, Math.floor((v + 0.5) * 512)));
    const from = at(source.min), to = at(source.max);
    const lut = Float32Array.from({ length: 1025 }, (_, k) => (k < from || k > to ? 0 : Math.min(1, Math.max(0, (k - 256) / 512))));
    const lutAt = Uint16Array.from(values, at);
    const ramp = Float64Array.from({ length: 12 }, (_, i) => i / 11);
    const want = refSimulatedMetrics(lut, from, to, ramp, false, lutAt, source);
    assert.deepEqual(simulatedMetrics(lut, from, to, ramp, false, lutAt, source), want, 'first');
    assert.deepEqual(simulatedMetrics(lut, from, to, ramp, false, lutAt, source), want, 'again, the inputs kept');
    // A raster over the same memory: its histogram's frame overwrites the arena with other data.
    histogram({ width: 640, height: 480, data: Float32Array.from({ length: 640 * 480 }, () => r() * 3 - 1) });
    assert.deepEqual(simulatedMetrics(lut, from, to, ramp, false, lutAt, source), want, 'after another frame');
  });

  it('the Director\'s cell-level helpers: glyph tones, table entries, sampled cells, glyph counts, template statistics', () => {
    const r = rng(43);
    for (const n of [0, 1, 5, 300, 9600]) {
      const values = Float32Array.from({ length: n }, () => (r() < 0.05 ? r() * 1.4 - 0.2 : r()));
      const source = sourceCells(values);
      for (const glyphs of [2, 33, 95, 256]) {
        // Coverages past the scale (tones clipped at 1), zero and tiny ones.
        const coverage = Float32Array.from({ length: glyphs }, (_, g) => (g === 0 ? 0 : r() < 0.1 ? 1e-7 : r() * 0.7));
        const scale = 0.35 + r() * 0.2;
        const cells = Uint16Array.from({ length: n }, () => Math.floor(r() * glyphs));
        for (const invert of [false, true]) {
          // The loop scoreResult ran in TypeScript, then toneMetrics' oracle.
          const rendered = new Float32Array(n);
          for (let i = 0; i < n; i++) { const t = Math.min(1, coverage[cells[i]!]! / scale); rendered[i] = invert ? 1 - t : t; }
          assert.deepEqual(glyphToneMetrics(cells, coverage, scale, invert, source), refToneMetrics(rendered, source), `glyph tones n ${n} glyphs ${glyphs} invert ${invert}`);
        }
        // Two colours per cell: the mix's luminance in linear light, encoded (the scalar form), then the oracle.
        const ink = Uint8Array.from({ length: 3 * n }, () => Math.floor(r() * 256));
        const background = Uint8Array.from({ length: 3 * n }, () => Math.floor(r() * 256));
        const mixed = new Float32Array(n);
        for (let i = 0; i < n; i++) {
          const m = coverage[cells[i]!]!;
          const ch = (k: number) => SRGB8_TO_LINEAR[background[3 * i + k]!]! + m * (SRGB8_TO_LINEAR[ink[3 * i + k]!]! - SRGB8_TO_LINEAR[background[3 * i + k]!]!);
          mixed[i] = encodeLinear(0.2126 * ch(0) + 0.7152 * ch(1) + 0.0722 * ch(2));
        }
        assert.deepEqual(colorToneMetrics(cells, coverage, ink, background, source), refToneMetrics(mixed, source), `colour tones n ${n} glyphs ${glyphs}`);
        // entropyBits: counts in the kernel; an index past the table is not counted, as a typed array's store past its end is not.
        const odd = Uint16Array.from(cells, (g) => (r() < 0.01 ? glyphs + 3 : g));
        for (const c of [cells, odd]) {
          const h = new Uint32Array(glyphs);
          for (let i = 0; i < c.length; i++) h[c[i]!]!++;
          let e = 0;
          for (let g = 0; g < glyphs; g++) if (h[g]! > 0) { const p = h[g]! / c.length; e -= p * Math.log2(p); }
          assert.equal(entropyBits(c, glyphs), e, `entropyBits n ${n} glyphs ${glyphs}`);
        }
      }
      // director.ts lutIndex() of each tone, and sampleCells()' strided copy (1 and 3 values per cell).
      const f = frame();
      const pv = f.f32(n), pi = f.bytes(2 * n), pr = f.f32(3 * n), pg = f.f32(3 * n);
      const k = f.ready();
      f.viewF32(pv, n).set(values);
      k.lutIndices(pv, n, pi);
      assert.deepEqual(f.viewU16(pi, n).slice(), Uint16Array.from(values, (v) => { const x = (v + 0.5) * 512; return x <= 0 ? 0 : x >= 1024 ? 1024 : x | 0; }), `lutIndices n ${n}`);
      const rgb = Float32Array.from({ length: 3 * n }, () => r());
      f.viewF32(pr, 3 * n).set(rgb);
      for (const stride of [1, 2, 4, 7]) {
        const m = Math.floor(n / stride);
        k.gather(pv, stride, m, 1, pg);
        assert.deepEqual(f.viewF32(pg, m).slice(), Float32Array.from({ length: m }, (_, j) => values[j * stride]!), `gather 1 n ${n} stride ${stride}`);
        k.gather(pr, stride, m, 3, pg);
        assert.deepEqual(f.viewF32(pg, 3 * m).slice(), Float32Array.from({ length: 3 * m }, (_, j) => rgb[Math.floor(j / 3) * stride * 3 + (j % 3)]!), `gather 3 n ${n} stride ${stride}`);
      }
    }
    // The matcher's per-template sums: the charsets' templates and random ones, f32 results bit for bit.
    const tables = [...(['detailed', 'standard', 'blocks', 'dots'] as const).map((c) => getGlyphSet(c).templates),
      Float32Array.from({ length: 40 * SAMPLES }, () => (r() < 0.2 ? 0 : r() < 0.1 ? 1 : r()))];
    for (const t of tables) assert.deepEqual(templateStats(t), refTemplateStats(t), `templateStats of ${t.length / SAMPLES} templates`);
  });

  it('the codebook\'s dynamic programme', () => {
    const r = rng(57);
    for (const glyphs of [2, 5, 16, 95, 256]) {
      // Levels with ties (one code) and near-ties, in a shuffled glyph order.
      const levels = Float32Array.from({ length: glyphs }, (_, g) => (g === 0 ? 0 : r() < 0.1 ? Math.round(r() * 8) / 8 : r()));
      const order = Int32Array.from(levels.keys()).sort((a, b) => levels[a]! - levels[b]! || a - b);
      for (const cells of [1, 50, 9600]) {
        const targets = Float32Array.from({ length: cells }, () => (r() < 0.3 ? Math.round(r() * 4) / 4 : r() < 0.05 ? r() * 1.4 - 0.2 : r() ** 1.5));
        for (const maxRmse of [0.005, 0.01, 0.02, 0.03, 0.1, 0.5]) {
          assert.deepEqual(chooseCodebook(levels, order, targets, 'adaptive', maxRmse), refChooseCodebook(levels, order, targets, 'adaptive', maxRmse), `codebook ${glyphs} glyphs, ${cells} cells, rmse ${maxRmse}`);
        }
      }
    }
  });

  it('cell colours: tone curve, OKLab saturation with the gamut bisection, ink over coverage', () => {
    const r = rng(23);
    const n = 4099;
    // Greys, saturated primaries, near-black, black, subnormal, over-range, and random colours.
    const rgb = Float32Array.from({ length: n * 3 }, (_, i) => {
      const c = Math.floor(i / 3);
      if (c < 40) return c / 39;
      if (c < 80) return (c + i) % 3 === 0 ? 1 : r() * 0.02;
      if (c < 100) return r() * 1e-7;
      // Black beside colour (a zero lane next to a normal one), subnormal light.
      if (c < 120) return c % 2 ? 0 : c % 3 ? 5e-310 : r();
      return r() < 0.01 ? 1 + r() * 0.1 : r() ** 2;
    });
    const coverage = Float32Array.from({ length: 70 }, (_, g) => (g === 0 ? 0 : (g / 69) * 0.6));
    const cells = Uint16Array.from({ length: n }, () => Math.floor(r() * 70));
    const tones = [
      { lo: 0, hi: 1, contrast: 1, brightness: 0, gamma: 1, invert: false },
      { lo: 0.05, hi: 0.9, contrast: 1.7, brightness: 12, gamma: 0.7, invert: false },
      { lo: 0.1, hi: 0.95, contrast: 2.6, brightness: -30, gamma: 1.2, invert: true },
      // Clips the shadows to 0: toned black is exactly zero.
      { lo: 0.2, hi: 0.8, contrast: 2, brightness: -40, gamma: 1, invert: false },
    ];
    for (const tone of tones) {
      for (const sat of [0, 1, 1.15, 1.7, 3]) {
        const t = colorTransform(sat, tone);
        for (const ink of [undefined, { coverage, cells }]) {
          same(cellColors(rgb, t, new Uint8Array(n * 3), ink), refCellColors(rgb, t, new Uint8Array(n * 3), ink), `colours sat ${sat} ink ${!!ink} ${JSON.stringify(tone)}`);
        }
      }
    }
  });

  it('resample in linear light: down, up, identity, odd sizes, alpha over either ground', () => {
    // The box taps themselves: down, up, identity, coprime and extreme ratios.
    for (const [src, dst] of [[640, 640], [640, 160], [480, 480], [1, 1], [1, 7], [7, 1], [3, 2], [2, 3], [4000, 120], [120, 4000], [1155, 481], [97, 89], [512, 320], [600, 232]]) {
      assert.deepEqual(boxTaps(src!, dst!), refBoxTaps(src!, dst!), `boxTaps ${src} -> ${dst}`);
    }
    const r = rng(7);
    const alpha = image(97, 61, (x, y) => [(x * 5) % 256, (y * 9) % 256, (x * y) % 256, r() < 0.3 ? Math.floor(r() * 256) : 255]);
    const cases: [ReturnType<typeof scene>, number, number][] = [
      [withNoise(scene(640, 480, 3), 6, 2), 160, 60],
      [scene(640, 480, 4), 40, 15],
      [alpha, 30, 9],
      [alpha, 97, 40],
      // Identity at 4 samples per cell (the cells' colour taken straight from the pixels), with
      // alpha in some cells.
      [image(96, 64, (x, y) => [(x * 7) % 256, (y * 3) % 256, (x + y) % 256, r() < 0.2 ? Math.floor(r() * 256) : 255]), 24, 8],
      [scene(13, 7, 5), 8, 3],
      [scene(3, 200, 6), 8, 50],
      // Over the 2^20-pixel source window: several bands, a band boundary inside a cell row.
      [withNoise(scene(1500, 1100, 8), 4, 3), 123, 47],
      [scene(2100, 900, 9), 400, 86],
    ];
    for (const [img, cols, rows] of cases) {
      for (const ground of [0, 1]) {
        const got = resampleImage(img, cols, rows, 4, 8, ground);
        const gotLuma = got.luma.data.slice();
        const want = refResample(img, cols, rows, 4, 8, ground);
        same(gotLuma, want.luma.data, `resample luma ${img.width}x${img.height} -> ${cols}x${rows} ground ${ground}`);
        same(got.cellLinearRgb, want.cellLinearRgb, `resample colour ${img.width}x${img.height} -> ${cols}x${rows} ground ${ground}`);
        // Colours later (video): the same luminance without the RGB pass, the same RGB on read.
        const later = resampleImage(img, cols, rows, 4, 8, ground, undefined, 'later');
        same(later.luma.data, want.luma.data, `resample luma, colours later ${img.width}x${img.height} -> ${cols}x${rows} ground ${ground}`);
        same(later.cellLinearRgb, want.cellLinearRgb, `resample colour, read later ${img.width}x${img.height} -> ${cols}x${rows} ground ${ground}`);
        // Colour below cell resolution (two colours per cell): the kernel's colour pass per sample.
        same(resampleRgb(img, cols * 4, rows * 8, ground), refResampleRgb(img, cols * 4, rows * 8, ground), `resampleRgb ${img.width}x${img.height} -> ${cols * 4}x${rows * 8} ground ${ground}`);
      }
    }
  });

  it('Braille: dots, thresholds, serpentine dithering, hysteresis with and without the stable mask', () => {
    const r = rng(11);
    for (const [cols, rows] of [[1, 1], [3, 2], [40, 13], [81, 30]] as const) {
      const w = cols * 4, h = rows * 8;
      const target = raster(w, h, cols * 7 + rows, 0.4);
      const previous = Uint16Array.from({ length: cols * rows }, () => Math.floor(r() * 256));
      const stable = Uint8Array.from({ length: cols * rows }, () => (r() < 0.7 ? 1 : 0));
      for (const dither of [false, true]) {
        for (const [prev, st, hyst] of [[null, null, 0], [previous, null, 1], [previous, stable, 0.35], [previous, stable, 0]] as const) {
          const got = matchBraille(target, w, cols, rows, dither, new Uint16Array(cols * rows), prev, st, hyst);
          const want = refBraille(target, w, cols, rows, dither, new Uint16Array(cols * rows), prev, st, hyst);
          same(got, want, `braille ${cols}x${rows} dither ${dither} previous ${prev ? 'yes' : 'no'} stable ${st ? 'yes' : 'no'} hysteresis ${hyst}`);
        }
      }
    }
  });

  it('viewing blur, of rasters and of the glyph templates', () => {
    for (const [w, h] of [...SIZES, [2, 1], [1, 5], [6, 3], [640, 480]] as [number, number][]) {
      const src = raster(w, h, w * 13 + h, 0.5);
      same(viewBlur(src, w, h, new Float32Array(w * h)), refViewBlur(src, w, h, new Float32Array(w * h), new Float32Array(w * h)), `viewBlur ${w}x${h}`);
    }
    const t = getGlyphSet('detailed').templates;
    const want = new Float32Array(t.length);
    for (let g = 0; g < t.length / SAMPLES; g++) {
      want.set(refViewBlur(t.subarray(g * SAMPLES, (g + 1) * SAMPLES), 4, 8, new Float32Array(SAMPLES), new Float32Array(SAMPLES)), g * SAMPLES);
    }
    same(viewBlurTemplates(t), want, 'viewBlurTemplates detailed');
  });

  it('glyph matching: charsets, custom ramps, codebooks, dithering, structure, hysteresis, odd sizes', () => {
    const r = rng(23);
    // Tables as render.ts builds them: blurred templates, the directional glyphs appended to a ramp.
    const tableOf = (set: ReturnType<typeof getGlyphSet>, directional: boolean) => {
      const glyphs = [...set.glyphs];
      let templates = set.templates, coverage = set.coverage;
      let dir: Int32Array | null = null;
      if (directional) {
        const chars = [DIRECTIONAL_CHARS.horizontal, DIRECTIONAL_CHARS.diagonalUp, DIRECTIONAL_CHARS.vertical, DIRECTIONAL_CHARS.diagonalDown];
        const extra = chars.filter((ch) => !glyphs.includes(ch));
        templates = new Float32Array((glyphs.length + extra.length) * SAMPLES);
        templates.set(set.templates);
        coverage = new Float32Array(glyphs.length + extra.length);
        coverage.set(set.coverage);
        extra.forEach((ch, k) => {
          templates.set(glyphShape(ch)!.template, (glyphs.length + k) * SAMPLES);
          coverage[glyphs.length + k] = glyphShape(ch)!.coverage;
        });
        glyphs.push(...extra);
        dir = Int32Array.from(chars, (ch) => glyphs.indexOf(ch));
      }
      const order = Int32Array.from(set.glyphs.map((_, i) => i)).sort((a, b) => set.coverage[a]! - set.coverage[b]! || a - b);
      const table: GlyphTable = { templates: viewBlurTemplates(templates), coverage };
      return { table, dir, order, scale: Math.max(...set.coverage) };
    };
    const tables = [
      ['detailed', tableOf(getGlyphSet('detailed'), true)],
      ['standard', tableOf(getGlyphSet('standard'), true)],
      ['blocks', tableOf(getGlyphSet('blocks'), false)],
      ['custom " .:-=+*#%@"', tableOf(customGlyphSet('detailed', ' .:-=+*#%@'), false)],
      ['custom "@ -|/\\"', tableOf(customGlyphSet('detailed', '@ -|/\\'), true)],
    ] as const;
    for (const [name, { table, dir, order, scale }] of tables) {
      for (const [cols, rows] of [[1, 1], [3, 2], [17, 9], [37, 13]] as const) {
        const W = cols * 4 + (cols % 3), H = rows * 8, n = cols * rows;
        const target = raster(W, H, cols * 5 + rows + name.length, 0.4);
        const previous = Uint16Array.from({ length: n }, () => order[Math.floor(r() * order.length)]!);
        const stable = Uint8Array.from({ length: n }, () => (r() < 0.7 ? 1 : 0));
        const structure = cellStructure(target, W, H, 4, 8);
        // Every other glyph of the ramp: a codebook with gaps in coverage.
        const books = [order, order.filter((_, i) => i % 2 === 0 || i === order.length - 1)];
        for (const candidates of books) {
          for (const dither of [false, true]) {
            // 'target': the kernel takes the tensor itself, lazily (at 0.06, as the Director's 0.055,
            // most cells skip it; at 1 none can).
            for (const [st, amount] of [[null, 0], [structure, 0.6], [structure, 1], ['target', 0.06], ['target', 0.6], ['target', 1]] as const) {
              for (const [prev, stab, hyst, calm] of [[null, null, 0, undefined], [null, null, 0, 0], [null, null, 0, 0.3], [previous, null, 0.35, undefined], [previous, stable, 0.35, 0], [previous, stable, 1, 0.3]] as const) {
                const o: MatchOptions = { scale, candidates, directional: dir, structure: st, structureAmount: amount, dither, previous: prev, stable: stab, hysteresis: hyst, ...(calm === undefined ? {} : { calm }) };
                const what = `match ${name} ${cols}x${rows} book ${candidates.length} dither ${dither} structure ${amount} previous ${prev ? 'yes' : 'no'} stable ${stab ? 'yes' : 'no'} hysteresis ${hyst} calm ${calm ?? 'default'}`;
                const want = refMatch(target, W, cols, rows, table, o, new Uint16Array(n));
                same(matchGlyphs(target, W, cols, rows, table, o, new Uint16Array(n)), want, what);
                // Blurred in the kernel's frame = the reference blur, then the reference match.
                const seen = refViewBlur(target, W, H, new Float32Array(W * H), new Float32Array(W * H));
                // 'target' with the blur: the contours of the unblurred target, as render.ts wants them.
                const seenO = st === 'target' ? { ...o, structure: refStructure(target, W, H, 4, 8) } : o;
                same(matchGlyphs(target, W, cols, rows, table, { ...o, blur: true }, new Uint16Array(n)),
                  refMatch(seen, W, cols, rows, table, seenO, new Uint16Array(n)), `${what} blur`);
              }
            }
          }
        }
      }
    }
  });

  it('glyph matching: clean contours whose strength sits at the structure threshold', () => {
    // Straight edges (coherence 1) in four directions, their step sweeping from 0 to 0.8 across
    // the columns: a cell's strength is then its energy factor e / (e + 0.004), and at each amount
    // below some cells fall just short of the threshold (strength x amount > 0.05) and some just
    // pass it. The kernel skips the tensor where its f32 energy bound cannot pass (assembly/tensor.ts
    // strengthBound); the reference takes every cell's tensor.
    const set = getGlyphSet('detailed');
    const chars = [DIRECTIONAL_CHARS.horizontal, DIRECTIONAL_CHARS.diagonalUp, DIRECTIONAL_CHARS.vertical, DIRECTIONAL_CHARS.diagonalDown];
    const dir = Int32Array.from(chars, (ch) => set.glyphs.indexOf(ch));
    const order = Int32Array.from(set.glyphs.map((_, i) => i)).sort((a, b) => set.coverage[a]! - set.coverage[b]! || a - b);
    const table: GlyphTable = { templates: viewBlurTemplates(set.templates), coverage: set.coverage };
    const cols = 64, rows = 24, W = cols * 4, H = rows * 8, n = cols * rows;
    const target = new Float32Array(W * H);
    for (let y = 0; y < H; y++) {
      for (let x = 0; x < W; x++) {
        const s = (0.8 * x) / W, band = Math.floor(y / 48);
        // Edges: vertical, horizontal, and both diagonals, every 4 to 8 samples.
        const u = band === 0 ? x : band === 1 ? y : band === 2 ? x + y : x - y + H;
        target[y * W + x] = 0.3 + ((u >> 2) % 2 === 0 ? s : 0);
      }
    }
    let substituted = 0;
    for (const amount of [0.06, 0.07, 0.1, 0.3]) {
      const o: MatchOptions = { scale: Math.max(...set.coverage), candidates: order, directional: dir, structure: 'target', structureAmount: amount, dither: false };
      const got = matchGlyphs(target, W, cols, rows, table, o, new Uint16Array(n));
      same(got, refMatch(target, W, cols, rows, table, { ...o, structure: refStructure(target, W, H, 4, 8) }, new Uint16Array(n)), `contours at structure ${amount}`);
      for (let c = 0; c < n; c++) if (dir.includes(got[c]!)) substituted++;
    }
    assert.ok(substituted > 0, 'some cells take a directional glyph');
  });

  it('fine re-ranking: charsets, custom ramps, codebooks, calm, cells outside the codebook, odd sizes, against brute force', () => {
    const r = rng(29);
    for (const [name, set] of [
      ['detailed', getGlyphSet('detailed')],
      ['standard', getGlyphSet('standard')],
      ['custom " .:-=+*#%@"', customGlyphSet('detailed', ' .:-=+*#%@')],
    ] as const) {
      // The ramp and a directional glyph after it, as render.ts appends them (outside the codebook).
      const glyphs = [...set.glyphs, ...['/'].filter((ch) => !set.glyphs.includes(ch))];
      const order = Int32Array.from(set.glyphs.map((_, i) => i)).sort((a, b) => set.coverage[a]! - set.coverage[b]! || a - b);
      const scale = Math.max(...set.coverage);
      for (const passes of [2, 3]) {
        const fine = fineTable(glyphs, passes);
        for (const [cols, rows] of [[1, 1], [2, 1], [3, 2], [17, 9], [37, 13]] as const) {
          const W = cols * 4 + (cols % 3), n = cols * rows;
          const target = raster(W, rows * 8, cols * 7 + rows + name.length + passes, 0.4);
          // Half its cells flattened to their mean with some noise left (std 0.006 to 0.15, about the cutoff).
          const calmer = target.slice();
          for (let cy = 0; cy < rows; cy++) {
            for (let cx = (cy & 1); cx < cols; cx += 2) {
              let m = 0;
              for (let y = 0; y < 8; y++) for (let x = 0; x < 4; x++) m += target[(cy * 8 + y) * W + cx * 4 + x]!;
              const amp = 0.02 + 0.5 * r();
              for (let y = 0; y < 8; y++) for (let x = 0; x < 4; x++) calmer[(cy * 8 + y) * W + cx * 4 + x] = m / 32 + (r() - 0.5) * amp;
            }
          }
          for (const candidates of [order, order.filter((_, i) => i % 2 === 0 || i === order.length - 1)]) {
            // Some cells hold a glyph outside the codebook: those stay as they are.
            const start = Uint16Array.from({ length: n }, () => (r() < 0.15 ? Math.floor(r() * glyphs.length) : candidates[Math.floor(r() * candidates.length)]!));
            for (const calm of [0, 0.05, 0.3]) {
              const want = refRefine(target, W, cols, rows, fine, candidates, scale, start, calm);
              // Random cells are far from their best: the twin must move many of them.
              if (n > 100) assert.ok(want.filter((g, i) => g !== start[i]).length > n / 4, 'the refinement changes cells');
              same(refineGlyphs(target, W, cols, rows, fine, { candidates, scale, toneWeight: TONE_WEIGHT, calm, minSpread: 0 }, start), want,
                `refine ${name} passes ${passes} ${cols}x${rows} book ${candidates.length} calm ${calm}`);
              // Only the cells with structure: every other cell of `calmer` is nearly flat and keeps its start.
              const some = refRefine(calmer, W, cols, rows, fine, candidates, scale, start, calm, FINE_MIN_SPREAD);
              if (n > 100) {
                const kept = some.filter((g, i) => g === start[i]).length, moved = n - kept;
                assert.ok(kept > n / 5 && moved > n / 4, `cells kept ${kept}, moved ${moved}`);
              }
              same(refineGlyphs(calmer, W, cols, rows, fine, { candidates, scale, toneWeight: TONE_WEIGHT, calm, minSpread: FINE_MIN_SPREAD }, start), some,
                `refine ${name} passes ${passes} ${cols}x${rows} book ${candidates.length} calm ${calm} min spread`);
              // Cells holding a kept glyph (a third of the codebook) stay, the rest as before.
              const keep = candidates.filter((_, i) => i % 3 === 1);
              const kept = refRefine(target, W, cols, rows, fine, candidates, scale, start, calm, 0, [...keep]);
              if (n > 100) assert.ok(start.every((g, i) => !keep.includes(g) || kept[i] === g) && kept.some((g, i) => g !== start[i]), 'kept cells stay, others move');
              same(refineGlyphs(target, W, cols, rows, fine, { candidates, scale, toneWeight: TONE_WEIGHT, calm, minSpread: 0, keep }, start), kept,
                `refine ${name} passes ${passes} ${cols}x${rows} book ${candidates.length} calm ${calm} keep`);
            }
          }
        }
      }
    }
  });

  it('glyph matching with the fine re-ranking in its frame = the reference match, then the twin', () => {
    const cols = 57, rows = 21, W = cols * 4 + 1, H = rows * 8, n = cols * rows;
    const target = raster(W, H, 31, 0.3);
    const set = getGlyphSet('detailed');
    const table = { templates: viewBlurTemplates(set.templates), coverage: set.coverage };
    const order = Int32Array.from(set.glyphs.keys()).sort((a, b) => set.coverage[a]! - set.coverage[b]! || a - b);
    const scale = Math.max(...set.coverage);
    const fine = fineTable(set.glyphs);
    const seen = refViewBlur(target, W, H, new Float32Array(W * H), new Float32Array(W * H));
    const books = [order, order.filter((_, i) => i % 3 === 0 || i === order.length - 1)];
    for (const candidates of books) {
      const o: MatchOptions = { scale, candidates, directional: null, structure: null, structureAmount: 0, dither: false };
      const coarse = refMatch(seen, W, cols, rows, table, o, new Uint16Array(n));
      same(matchGlyphs(target, W, cols, rows, table, { ...o, blur: true, refine: { table: fine, minSpread: 0 } }, new Uint16Array(n)),
        refRefine(target, W, cols, rows, fine, candidates, scale, coarse), `match then refine, book ${candidates.length}`);
    }
  });

  it('glyph matching on a resampled, denoised, toned scene, as render.ts feeds it', () => {
    const cols = 120, rows = 45, W = cols * 4, H = rows * 8, n = W * H;
    const luma = { width: W, height: H, data: refResample(withNoise(scene(640, 480, 12), 5, 4), cols, rows, 4, 8, 0).luma.data.slice() };
    const den = refDenoise(luma, 0.35, new Float32Array(n), new Float32Array(n)).slice();
    const tone = toneLut({ lo: 0.04, hi: 0.96, contrast: 1.15, brightness: 0, gamma: 1, invert: false });
    const toned = refUnsharp(den, W, H, 0.35, new Float32Array(n), new Float32Array(n), tone).slice();
    const set = getGlyphSet('detailed');
    const table = { templates: viewBlurTemplates(set.templates), coverage: set.coverage };
    const order = Int32Array.from(set.glyphs.keys()).sort((a, b) => set.coverage[a]! - set.coverage[b]! || a - b);
    const directional = Int32Array.from(['-', '/', '|', '\\'], (ch) => set.glyphs.indexOf(ch));
    const seen = refViewBlur(toned, W, H, new Float32Array(n), new Float32Array(n));
    for (const dither of [false, true]) {
      const o: MatchOptions = { scale: Math.max(...set.coverage), candidates: order, directional, structure: refStructure(toned, W, H, 4, 8), structureAmount: 0.55, dither };
      same(matchGlyphs(toned, W, cols, rows, table, { ...o, blur: true }, new Uint16Array(cols * rows)),
        refMatch(seen, W, cols, rows, table, o, new Uint16Array(cols * rows)), `scene dither ${dither}`);
    }
  });

  it('glyph matching: a NaN sample gives the same glyphs (no candidate wins; dithering spreads it)', () => {
    const { templates, coverage } = getGlyphSet('detailed');
    const table = { templates: viewBlurTemplates(templates), coverage };
    const order = Int32Array.from(coverage.keys()).sort((a, b) => coverage[a]! - coverage[b]! || a - b);
    const cols = 9, rows = 4, W = cols * 4, H = rows * 8;
    const target = raster(W, H, 3);
    target[(H >> 1) * W + (W >> 1)] = NaN;
    for (const dither of [false, true]) {
      const o: MatchOptions = { scale: Math.max(...coverage), candidates: order, directional: null, structure: null, structureAmount: 0, dither };
      same(matchGlyphs(target, W, cols, rows, table, o, new Uint16Array(cols * rows)), refMatch(target, W, cols, rows, table, o, new Uint16Array(cols * rows)), `NaN dither ${dither}`);
    }
  });
  it('two colours per cell: blocks, a custom set, complements, flat cells, hysteresis with stable cells, odd sizes', () => {
    // The complementary pairs: blocks, the ASCII ramp, random masks with exact complements planted.
    const rc = rng(83);
    const randomTemplates = Float32Array.from({ length: 40 * SAMPLES }, () => (rc() < 0.5 ? 0 : rc() < 0.5 ? 1 : rc()));
    for (let g = 20; g < 30; g++) for (let i = 0; i < SAMPLES; i++) randomTemplates[g * SAMPLES + i] = 1 - randomTemplates[(g - 20) * SAMPLES + i]!;
    for (const [name, t, count] of [['blocks', getGlyphSet('blocks').templates, getGlyphSet('blocks').glyphs.length], ['detailed', getGlyphSet('detailed').templates, getGlyphSet('detailed').glyphs.length], ['random', randomTemplates, 40]] as const) {
      const all = Int32Array.from({ length: count }, (_, i) => i);
      for (const cand of [all, all.filter((i) => i % 3 !== 1)]) assert.deepEqual(complements(t, cand, count), refComplements(t, cand, count), `complements ${name} of ${cand.length}`);
    }
    const sets: TwoColorGlyphs[] = [];
    for (const glyphs of [getGlyphSet('blocks'), customGlyphSet('blocks', ' .:-=+*#%@\u2580\u2584\u2588')]) {
      const blank = glyphs.glyphs.indexOf(' '), full = glyphs.glyphs.indexOf('\u2588');
      const candidates = Int32Array.from(glyphs.glyphs.map((_, i) => i).filter((i) => i !== blank && i !== full));
      sets.push({ templates: glyphs.templates, candidates, complement: complements(glyphs.templates, candidates, glyphs.glyphs.length),
        blank: Math.max(0, blank), full: full >= 0 ? full : Math.max(0, blank) });
    }
    for (const [cols, rows, seed] of [[7, 3, 1], [16, 5, 2], [1, 1, 3], [33, 9, 4]] as const) {
      const n = cols * rows, W = cols * 4, H = rows * 8;
      const r = rng(seed);
      // Smooth colour with edges, noise, flat patches (cells below the variance floor) and exact 0 and 1.
      const rgb = new Float32Array(W * H * 3);
      for (let y = 0; y < H; y++) {
        for (let x = 0; x < W; x++) {
          const flat = ((x >> 2) + (y >> 3)) % 5 === 0;
          for (let c = 0; c < 3; c++) {
            const v = flat ? 0.3 + 0.1 * c : (x * (c + 1)) / W * 0.7 + (y > H / 2 ? 0.3 : 0) + (r() - 0.5) * 0.2;
            rgb[(y * W + x) * 3 + c] = v < 0 ? 0 : v > 1 ? 1 : v;
          }
        }
      }
      for (const set of sets) {
        for (const lightInk of [true, false]) {
          const run = (fn: typeof refTwoColor, previous: Uint16Array | null, stable: Uint8Array | null, hysteresis: number) => {
            const cells = new Uint16Array(n), fg = new Float32Array(n * 3), bg = new Float32Array(n * 3);
            fn(rgb, W, cols, rows, set, lightInk, cells, fg, bg, previous, stable, hysteresis);
            return { cells, fg, bg };
          };
          const a = run(matchTwoColor, null, null, 0), b = run(refTwoColor, null, null, 0);
          const what = `${cols}x${rows} ${set.candidates.length} glyphs lightInk ${lightInk}`;
          same(a.cells, b.cells, `${what}: cells`);
          same(a.fg, b.fg, `${what}: fg`);
          same(a.bg, b.bg, `${what}: bg`);
          // Video: the previous cells shuffled, half the cells still.
          const previous = a.cells.map((g, i) => (i % 3 === 0 ? set.blank : i % 3 === 1 ? a.cells[(i * 7) % n]! : g));
          const stable = Uint8Array.from({ length: n }, (_, i) => (i * 5) % 2);
          for (const st of [null, stable]) {
            const va = run(matchTwoColor, previous, st, 0.35), vb = run(refTwoColor, previous, st, 0.35);
            same(va.cells, vb.cells, `${what} video: cells`);
            same(va.fg, vb.fg, `${what} video: fg`);
            same(va.bg, vb.bg, `${what} video: bg`);
          }
          if (n > 20) assert.ok(a.cells.some((g) => g !== set.blank && g !== set.full) && a.cells.some((g) => g === set.blank || g === set.full), `${what}: shaped and flat cells`);
        }
      }
    }
  });
  it('two colours per cell from the image itself (resampled in the kernel\'s memory) = from its colour raster', () => {
    const img = withNoise(scene(320, 240, 21), 6, 3);
    const blocks = getGlyphSet('blocks');
    const blank = blocks.glyphs.indexOf(' '), full = blocks.glyphs.indexOf('\u2588');
    const candidates = Int32Array.from(blocks.glyphs.map((_, i) => i).filter((i) => i !== blank && i !== full));
    const set: TwoColorGlyphs = { templates: blocks.templates, candidates, complement: complements(blocks.templates, candidates, blocks.glyphs.length), blank, full };
    const dots = getGlyphSet('dots').templates;
    for (const [cols, rows] of [[40, 15], [33, 7]] as const) {
      for (const ground of [0, 1]) {
        const n = cols * rows, raster = resampleRgb(img, cols * 4, rows * 8, ground);
        for (const braille of [false, true]) {
          const out = (rgb: Float32Array | { image: typeof img; ground: number }) => {
            const cells = new Uint16Array(n), fg = new Float32Array(n * 3), bg = new Float32Array(n * 3);
            if (braille) matchBrailleTwoColor(rgb, cols * 4, cols, rows, dots, true, cells, fg, bg);
            else matchTwoColor(rgb, cols * 4, cols, rows, set, true, cells, fg, bg);
            return [cells, fg, bg] as const;
          };
          const a = out({ image: img, ground }), b = out(raster);
          for (let i = 0; i < 3; i++) same(a[i]!, b[i]!, `${braille ? 'braille' : 'blocks'} ${cols}x${rows} ground ${ground}: ${['cells', 'fg', 'bg'][i]}`);
        }
      }
    }
  });

  it('Braille with two colours: both ink sides, ties between dots, flat cells, hysteresis, the filtered luminance, odd sizes', () => {
    const { templates } = getGlyphSet('dots');
    for (const [cols, rows, seed] of [[7, 3, 11], [16, 5, 12], [1, 1, 13], [33, 9, 14]] as const) {
      const n = cols * rows, W = cols * 4, H = rows * 8;
      const r = rng(seed);
      const rgb = new Float32Array(W * H * 3);
      const luma = new Float32Array(W * H);
      for (let y = 0; y < H; y++) {
        for (let x = 0; x < W; x++) {
          // Flat patches, equal dots (steps of 2 samples: ties for the sort to keep in order), noise.
          const kind = ((x >> 2) + (y >> 3)) % 4;
          for (let c = 0; c < 3; c++) {
            const v = kind === 0 ? 0.2 + 0.2 * c : kind === 1 ? ((x >> 1) + (y >> 1)) % 2 * 0.6 + 0.1 * c : (x / W) * 0.8 + (r() - 0.5) * 0.3;
            rgb[(y * W + x) * 3 + c] = v < 0 ? 0 : v > 1 ? 1 : v;
          }
          luma[y * W + x] = r();
        }
      }
      for (const lightInk of [true, false]) {
        const run = (fn: typeof refBrailleTwoColor, previous: Uint16Array | null, stable: Uint8Array | null, hysteresis: number, filtered: Float32Array | null) => {
          const cells = new Uint16Array(n), fg = new Float32Array(n * 3), bg = new Float32Array(n * 3);
          fn(rgb, W, cols, rows, templates, lightInk, cells, fg, bg, previous, stable, hysteresis, filtered);
          return { cells, fg, bg };
        };
        const a = run(matchBrailleTwoColor, null, null, 0, null), b = run(refBrailleTwoColor, null, null, 0, null);
        const what = `${cols}x${rows} lightInk ${lightInk}`;
        same(a.cells, b.cells, `${what}: cells`);
        same(a.fg, b.fg, `${what}: fg`);
        same(a.bg, b.bg, `${what}: bg`);
        if (n > 20) assert.ok(a.cells.some((g) => g !== 0) && a.cells.some((g) => g === 0), `${what}: dotted and flat cells`);
        const previous = a.cells.map((g, i) => (i % 3 === 0 ? 0 : i % 3 === 1 ? a.cells[(i * 7) % n]! : g ^ 0x11));
        const stable = Uint8Array.from({ length: n }, (_, i) => (i * 5) % 2);
        for (const [st, filtered] of [[null, null], [stable, null], [stable, luma]] as const) {
          const va = run(matchBrailleTwoColor, previous, st, 0.6, filtered), vb = run(refBrailleTwoColor, previous, st, 0.6, filtered);
          same(va.cells, vb.cells, `${what} video${filtered ? ', filtered luminance' : ''}: cells`);
          same(va.fg, vb.fg, `${what} video: fg`);
          same(va.bg, vb.bg, `${what} video: bg`);
        }
      }
    }
  });
});

describe('nested frames', () => {
  it('allocate above the open frame, leave its contents alone and give their room back', () => {
    const f = frame();
    const p = f.f32(64);
    f.ready();
    f.viewF32(p, 64).fill(7);
    const n = openNested();
    let q = 0;
    try {
      q = n.f32(256);
      assert.ok(q >= p + 64 * 4, 'the nested room lies above the open frame');
      n.ready();
      n.viewF32(q, 256).fill(-1);
      // A nested frame inside it, by the callback form, closes first.
      const inner = nestedFrame((g) => g.f32(16));
      assert.ok(inner >= q + 256 * 4);
    } finally {
      closeNested();
    }
    assert.deepEqual([...f.viewF32(p, 64)], new Array(64).fill(7));
    // Given back: the next nested frame starts where the closed one did, also after a throw.
    assert.throws(() => nestedFrame((g) => { assert.equal(g.f32(8), q); throw new Error('inside'); }), /inside/);
    assert.equal(nestedFrame((g) => g.f32(8)), q);
    // The open frame goes on allocating above its own room, not above the closed frames'.
    assert.equal(f.f32(4), p + 64 * 4);
  });
});

describe('histogram kernel', () => {
  it('counts as the reference at every remainder of its eight-sample steps, and writes only histogramWords(bins)', () => {
    for (const bins of [16, 1000, 1024]) {
      for (const n of [0, 1, 3, 4, 7, 8, 11, 15, 16, 1021]) {
        // Values spread over -0.1..1.1 (clamped into the end bins), in runs, with a NaN.
        const data = Float32Array.from({ length: n }, (_, i) => (i === 5 ? NaN : (((i >> 2) * 0.137) % 1.2) - 0.1));
        const f = frame();
        const pd = f.f32(n + 1), ph = f.f32(histogramWords(bins)), guard = f.f32(8);
        const k = f.ready();
        f.viewF32(pd, n).set(data);
        f.viewF32(guard, 8).fill(-3);
        k.histogram(pd, n, bins, ph);
        assert.deepEqual([...f.viewU32(ph, bins)], [...refHistogram({ width: n, height: 1, data }, bins)], `bins ${bins}, n ${n}`);
        assert.deepEqual([...f.viewF32(guard, 8)], new Array(8).fill(-3), `bins ${bins}, n ${n}: nothing written past its words`);
      }
    }
  });
});
