import { test } from 'node:test';
import assert from 'node:assert/strict';
import { TemporalFilter } from '../src/core/temporal/filter.js';
import { TemporalFilter as ReferenceFilter } from './reference/temporal-filter.js';
import { SUB_X, SUB_Y } from '../src/core/glyphs/types.js';
import { rng } from './helpers/images.js';

// The fast step (unrolled rows, fused passes, Floyd-Rivest selection) must give the same bits as
// the plain loops it replaced: every output sample, motion score, stability flag and statistic.

type Scene = (frame: number, x: number, y: number, w: number, h: number) => number;

const still: Scene = (_f, x, y, w, h) => 0.15 + 0.6 * (x / w) + 0.1 * (y / h) + 0.05 * Math.sin(x / 5) * Math.cos(y / 7);
const moving: Scene = (f, x, y, w, h) => {
  const bx = (f * 7) % w;
  return x >= bx && x < bx + 40 && y >= 10 && y < 50 ? 0.9 : still(f, x, y, w, h);
};
const pan: Scene = (f, x, y, w, h) => still(f, x + f * 3, y, w, h);
const cut: Scene = (f, x, y, w, h) => (Math.floor(f / 6) % 2 ? 0.85 - 0.5 * (y / h) + 0.1 * Math.cos(x / 3) : still(f, x, y, w, h));
const fade: Scene = (f, x, y, w, h) => still(f, x, y, w, h) * (1 - 0.04 * f);
/** Black and white bands: clipped cells the noise estimate skips, and too few eligible cells. */
const clipped: Scene = (_f, x, y) => ((x >> 5) + (y >> 4)) % 3 === 0 ? 0.5 + 0.01 * Math.sin(x) : (x >> 6) % 2 ? 1 : 0;

function run(scene: Scene, cols: number, rows: number, sigma: number, sens: number, frames: number, seed: number, upsampled = false): void {
  const rand = rng(seed);
  const w = cols * SUB_X, h = rows * SUB_Y;
  const ref = new ReferenceFilter({ columns: cols, rows });
  const fast = new TemporalFilter({ columns: cols, rows });
  ref.setUpsampled(upsampled);
  fast.setUpsampled(upsampled);
  const raster = new Float32Array(w * h);
  for (let f = 0; f < frames; f++) {
    for (let y = 0; y < h; y++) {
      for (let x = 0; x < w; x++) {
        const v = scene(f, x, y, w, h) + sigma * (rand() + rand() + rand() - 1.5);
        raster[y * w + x] = v < 0 ? 0 : v > 1 ? 1 : v;
      }
    }
    const a = ref.step(raster, sens, cols);
    const b = fast.step(raster, sens, cols);
    const where = `frame ${f} sens ${sens} sigma ${sigma} ${cols}x${rows}`;
    assert.deepEqual(b, a, `output, ${where}`);
    assert.deepEqual(fast.cellMotion, ref.cellMotion, `motion, ${where}`);
    assert.deepEqual(fast.cellStable, ref.cellStable, `stable, ${where}`);
    assert.deepEqual(fast.stats, ref.stats, `stats, ${where}`);
    if (f === frames - 3) {
      ref.reset();
      fast.reset();
    }
  }
}

const scenes: Record<string, Scene> = { still, moving, pan, cut, fade, clipped };
for (const [name, scene] of Object.entries(scenes)) {
  test(`temporal step is bit-identical to the reference: ${name}`, () => {
    let seed = 11;
    for (const sens of [0, 0.3, 0.7, 1, -1, 2, NaN]) {
      for (const sigma of [0, 1 / 255, 4 / 255, 20 / 255]) {
        run(scene, 37, 11, sigma, sens, 14, seed++, seed % 2 === 0);
      }
    }
  });
}

test('temporal step is bit-identical to the reference across a size change and at 200 columns (the sampling path of the selection)', () => {
  const rand = rng(5);
  const ref = new ReferenceFilter({ columns: 20, rows: 4 });
  const fast = new TemporalFilter({ columns: 20, rows: 4 });
  for (const [cols, rows] of [[20, 4], [200, 75], [13, 9], [200, 75]] as const) {
    const n = cols * rows * SUB_X * SUB_Y;
    for (let f = 0; f < 5; f++) {
      const raster = new Float32Array(n);
      // Odd frames quantised to 8 bits, as video is: many equal energies for the selection.
      for (let i = 0; i < n; i++) raster[i] = 0.3 + 0.4 * ((i % 977) / 977) + 0.02 * (rand() - 0.5);
      if (f % 2) for (let i = 0; i < n; i++) raster[i] = Math.round(raster[i]! * 255) / 255;
      assert.deepEqual(fast.step(raster, 0.7, cols), ref.step(raster, 0.7, cols));
      assert.deepEqual(fast.cellStable, ref.cellStable);
      assert.deepEqual(fast.stats, ref.stats);
    }
  }
});
