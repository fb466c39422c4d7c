/**
 * The WebAssembly kernels as V8's optimising compiler builds them, against the scalar reference.
 * A process runs a kernel in baseline (Liftoff) code until it tiers up, and test/wasm-kernels.test.ts
 * mostly sees that code; the two compilers once disagreed on a kernel (a load reordered past a
 * store in the optimised code only). Here Liftoff is off before the module is compiled, so every
 * kernel runs optimised from its first call.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { setFlagsFromString } from 'node:v8';

setFlagsFromString('--no-liftoff');

const { applyLut, bilateralDenoise, unsharpMask } = await import('./helpers/kernel-calls.js');
const { sobelInk } = await import('../src/core/pipeline/edges.js');
const { cellMeans } = await import('../src/core/pipeline/raster.js');
const { resampleImage } = await import('../src/core/pipeline/resample.js');
const { cellStructure } = await import('../src/core/pipeline/structure.js');
const { histogram, toneLut } = await import('../src/core/pipeline/tone.js');
const { TemporalFilter } = await import('../src/core/temporal/filter.js');
const ref = {
  denoise: (await import('./reference/denoise.js')).bilateralDenoise,
  sobel: (await import('./reference/edges.js')).sobelInk,
  cellMeans: (await import('./reference/raster.js')).cellMeans,
  resample: (await import('./reference/resample.js')).resampleImage,
  unsharp: (await import('./reference/sharpen.js')).unsharpMask,
  structure: (await import('./reference/structure.js')).cellStructure,
  tone: await import('./reference/tone.js'),
  TemporalFilter: (await import('./reference/temporal-filter.js')).TemporalFilter,
};
const { image, rng, scene, withNoise } = await import('./helpers/images.js');

function same(a: ArrayBufferView, b: ArrayBufferView, what: string): void {
  const x = new Uint8Array(a.buffer, a.byteOffset, a.byteLength), y = new Uint8Array(b.buffer, b.byteOffset, b.byteLength);
  assert.equal(x.length, y.length, `${what}: length`);
  const i = x.findIndex((v, k) => v !== y[k]);
  assert.ok(i < 0, `${what}: first difference at byte ${i}`);
}

/** Smooth tone, steps, noise and some overshoot beyond 0..1. */
function raster(w: number, h: number, seed: number): Float32Array {
  const r = rng(seed);
  const d = new Float32Array(w * h);
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) {
      const step = (x * 7 + y * 3) % 40 < 20 ? 0.2 : 0.7;
      d[y * w + x] = step + 0.2 * Math.sin(x * 0.3) * Math.cos(y * 0.2) + (r() - 0.5) * 0.1 + (r() < 0.02 ? (r() - 0.5) * 1.2 : 0);
    }
  }
  return d;
}

describe('wasm kernels in optimised code match the scalar reference bit for bit', () => {
  const tone = toneLut({ lo: 0.05, hi: 0.93, contrast: 1.15, brightness: 7, gamma: 1.3, invert: false });
  for (const [w, h] of [[7, 16], [33, 24], [161, 96]] as const) {
    it(`${w}x${h}: denoise, unsharp + tone, tone table, histogram, cell means, structure, Sobel`, () => {
      const n = w * h, d = raster(w, h, w * 7 + h);
      const src = { width: w, height: h, data: d };
      for (const s of [0.35, 0.8]) same(bilateralDenoise(src, s, new Float32Array(n)), ref.denoise(src, s, new Float32Array(n), new Float32Array(n)), `denoise ${s}`);
      for (const t of [undefined, tone]) {
        same(unsharpMask(d, w, h, 0.35, new Float32Array(n), t), ref.unsharp(d, w, h, 0.35, new Float32Array(n), new Float32Array(n), t), `unsharp tone ${!!t}`);
      }
      same(applyLut(d, tone, new Float32Array(n)), ref.tone.applyLut(d, tone, new Float32Array(n)), 'applyLut');
      for (const bins of [16, 1000, 1024]) same(histogram(src, bins), ref.tone.histogram(src, bins), `histogram ${bins}`);
      same(cellMeans(src, 4, 8), ref.cellMeans(src, 4, 8), 'cellMeans');
      const got = cellStructure(d, w, h, 4, 8), want = ref.structure(d, w, h, 4, 8);
      same(got.direction, want.direction, 'structure direction');
      same(got.strength, want.strength, 'structure strength');
      same(sobelInk(d, w, h, 1.8, new Float32Array(n)), ref.sobel(d, w, h, 1.8, new Float32Array(n)), 'sobel');
    });
  }
  it('resample: identity, down, alpha over either ground', () => {
    const r = rng(3);
    const alpha = image(97, 61, (x, y) => [(x * 5) % 256, (y * 9) % 256, (x * y) % 256, r() < 0.3 ? Math.floor(r() * 256) : 255]);
    for (const [img, cols, rows] of [[withNoise(scene(320, 240, 3), 6, 2), 80, 30], [scene(320, 240, 4), 61, 23], [alpha, 30, 9]] as const) {
      for (const ground of [0, 1]) {
        const got = resampleImage(img, cols, rows, 4, 8, ground);
        const luma = got.luma.data.slice();
        const want = ref.resample(img, cols, rows, 4, 8, ground);
        same(luma, want.luma.data, `resample luma ${cols}x${rows}`);
        same(got.cellLinearRgb, want.cellLinearRgb, `resample colour ${cols}x${rows}`);
      }
    }
  });
  it('temporal step: odd and even columns, noise, motion and a cut', () => {
    for (const [cols, rows] of [[37, 11], [40, 9]] as const) {
      const r = rng(cols), n = cols * rows * 32, w = cols * 4;
      const fast = new TemporalFilter({ columns: cols, rows }), slow = new ref.TemporalFilter({ columns: cols, rows });
      for (let f = 0; f < 8; f++) {
        const d = new Float32Array(n);
        for (let i = 0; i < n; i++) {
          const x = i % w, moving = f > 2 && x >= f * 9 && x < f * 9 + 30;
          d[i] = Math.min(1, Math.max(0, (f === 6 ? 0.8 : 0.2) + 0.5 * (x / w) + (moving ? 0.3 : 0) + (r() - 0.5) * 0.03));
        }
        same(fast.step(d, 0.7, cols), slow.step(d, 0.7, cols), `temporal ${cols}x${rows} frame ${f}`);
        same(fast.cellMotion, slow.cellMotion, `temporal motion ${cols}x${rows} frame ${f}`);
        assert.deepEqual(fast.stats, slow.stats, `temporal stats ${cols}x${rows} frame ${f}`);
      }
    }
  });
});
