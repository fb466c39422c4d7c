/**
 * The kernel bench's child (bundled by bench/speed.ts with esbuild and run in a plain node process):
 * each hot kernel as the scalar TypeScript it was (test/reference/, the tests' oracle) and as
 * shipped (src/core/pipeline/*, and test/helpers/kernel-calls.ts for the detail stage's kernels one
 * at a time, calling the WebAssembly module), on the same inputs, interleaved.
 * argv: raw RGBA file, width, height, columns. Prints JSON: wasm instantiation ms, then per kernel
 * the first call (in this fresh process) and the median and min of warm calls, for both.
 */
import { readFileSync } from 'node:fs';
import { getGlyphSet } from '../../src/core/glyphs/charsets.js';
import { SUB_X, SUB_Y } from '../../src/core/glyphs/types.js';
import { matchBraille } from '../../src/core/pipeline/braille.js';
import { sobelInk } from '../../src/core/pipeline/edges.js';
import { gridRows } from '../../src/core/pipeline/geometry.js';
import { cellMeans } from '../../src/core/pipeline/raster.js';
import { resampleImage } from '../../src/core/pipeline/resample.js';
import { cellStructure } from '../../src/core/pipeline/structure.js';
import { histogram, toneLut } from '../../src/core/pipeline/tone.js';
import { matchGlyphs, type MatchOptions } from '../../src/core/pipeline/match.js';
import { viewBlur, viewBlurTemplates } from '../../src/core/pipeline/view-blur.js';
import { kernelModule } from '../../src/core/wasm/kernels.js';
import { bilateralDenoise, unsharpMask } from '../../test/helpers/kernel-calls.js';
import { matchBraille as refBraille } from '../../test/reference/braille.js';
import { bilateralDenoise as refDenoise } from '../../test/reference/denoise.js';
import { sobelInk as refSobel } from '../../test/reference/edges.js';
import { cellMeans as refCellMeans } from '../../test/reference/raster.js';
import { resampleImage as refResample } from '../../test/reference/resample.js';
import { unsharpMask as refUnsharp } from '../../test/reference/sharpen.js';
import { cellStructure as refStructure } from '../../test/reference/structure.js';
import { histogram as refHistogram } from '../../test/reference/tone.js';
import { matchGlyphs as refMatch } from '../../test/reference/match.js';
import { viewBlur as refViewBlur } from '../../test/reference/view-blur.js';

const [file, width, height, columns] = [process.argv[2]!, Number(process.argv[3]), Number(process.argv[4]), Number(process.argv[5])];
const img = { width, height, data: new Uint8Array(readFileSync(file)) };

const t0 = performance.now();
kernelModule();
const compileMs = performance.now() - t0;

const rows = gridRows(width, height, columns);
const W = columns * SUB_X, H = rows * SUB_Y, n = W * H;
// Inputs as the render sees them at defaults: resampled luma, denoised, toned.
const luma = { width: W, height: H, data: refResample(img, columns, rows, SUB_X, SUB_Y, 0).luma.data.slice() };
const denoised = refDenoise(luma, 0.35, new Float32Array(n), new Float32Array(n)).slice();
const tone = toneLut({ lo: 0.04, hi: 0.96, contrast: 1.15, brightness: 0, gamma: 1, invert: false });
const toned = refUnsharp(denoised, W, H, 0.35, new Float32Array(n), new Float32Array(n), tone).slice();
const out = new Float32Array(n), tmp = new Float32Array(n), cells = new Uint16Array(columns * rows);
// Glyph matching: detailed ramp, every glyph a candidate, the contract's default structure 0.55 from a
// given tensor; and as render.ts runs it at defaults, the tensor taken from the target at the Director's 0.055.
const set = getGlyphSet('detailed');
const table = { templates: viewBlurTemplates(set.templates), coverage: set.coverage };
const order = Int32Array.from(set.glyphs.keys()).sort((a, b) => set.coverage[a]! - set.coverage[b]! || a - b);
const directional = Int32Array.from(['-', '/', '|', '\\'], (ch) => set.glyphs.indexOf(ch));
const seen = refViewBlur(toned, W, H, new Float32Array(n), new Float32Array(n)).slice();
const match: MatchOptions = {
  scale: Math.max(...set.coverage), candidates: order, directional, structure: cellStructure(toned, W, H, SUB_X, SUB_Y),
  structureAmount: 0.55, dither: false,
};
const dithered: MatchOptions = { ...match, dither: true };
const directed: MatchOptions = { ...match, structure: 'target', structureAmount: 0.055 };

type Fn = () => unknown;
const kernels: [string, Fn, Fn][] = [
  ['resample (linear light)', () => refResample(img, columns, rows, SUB_X, SUB_Y, 0), () => resampleImage(img, columns, rows, SUB_X, SUB_Y, 0)],
  ['bilateral denoise (1 pass)', () => refDenoise(luma, 0.35, out, tmp), () => bilateralDenoise(luma, 0.35, out)],
  ['bilateral denoise (2 passes)', () => refDenoise(luma, 0.8, out, tmp), () => bilateralDenoise(luma, 0.8, out)],
  ['histogram', () => refHistogram({ width: W, height: H, data: denoised }), () => histogram({ width: W, height: H, data: denoised })],
  ['unsharp mask + tone curve', () => refUnsharp(denoised, W, H, 0.35, out, tmp, tone), () => unsharpMask(denoised, W, H, 0.35, out, tone)],
  ['cell means', () => refCellMeans({ width: W, height: H, data: toned }, SUB_X, SUB_Y), () => cellMeans({ width: W, height: H, data: toned }, SUB_X, SUB_Y)],
  ['structure tensor', () => refStructure(toned, W, H, SUB_X, SUB_Y), () => cellStructure(toned, W, H, SUB_X, SUB_Y)],
  ['Sobel', () => refSobel(toned, W, H, 1.8, out), () => sobelInk(toned, W, H, 1.8, out)],
  ['Braille', () => refBraille(toned, W, columns, rows, false, cells), () => matchBraille(toned, W, columns, rows, false, cells)],
  ['view blur', () => refViewBlur(toned, W, H, out, tmp), () => viewBlur(toned, W, H, out)],
  ['glyph match', () => refMatch(seen, W, columns, rows, table, match, cells), () => matchGlyphs(seen, W, columns, rows, table, match, cells)],
  ['glyph match, tensor from the target at 0.055', () => refMatch(seen, W, columns, rows, table, directed, cells), () => matchGlyphs(seen, W, columns, rows, table, directed, cells)],
  ['glyph match + Floyd-Steinberg', () => refMatch(seen, W, columns, rows, table, dithered, cells), () => matchGlyphs(seen, W, columns, rows, table, dithered, cells)],
  ['view blur + glyph match (one frame)', () => refMatch(refViewBlur(toned, W, H, out, tmp), W, columns, rows, table, match, cells),
    () => matchGlyphs(toned, W, columns, rows, table, { ...match, blur: true }, cells)],
  ['Braille + Floyd-Steinberg', () => refBraille(toned, W, columns, rows, true, cells), () => matchBraille(toned, W, columns, rows, true, cells)],
];

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;
const time = (f: Fn) => {
  const t = performance.now();
  f();
  return performance.now() - t;
};
const results = kernels.map(([name, ts, wasm]) => {
  const first = { ts: time(ts), wasm: time(wasm) };
  for (let i = 0; i < 10; i++) { ts(); wasm(); }
  const warm = { ts: [] as number[], wasm: [] as number[] };
  for (let i = 0; i < 40; i++) {
    warm.ts.push(time(ts));
    warm.wasm.push(time(wasm));
  }
  return {
    name,
    ts: { firstMs: first.ts, medianMs: median(warm.ts), minMs: Math.min(...warm.ts) },
    wasm: { firstMs: first.wasm, medianMs: median(warm.wasm), minMs: Math.min(...warm.wasm) },
  };
});
process.stdout.write(JSON.stringify({ columns, rows, samples: n, compileMs, results }));
