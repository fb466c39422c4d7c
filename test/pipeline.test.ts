/**
 * Stage-level checks of the fast paths: each one against a plain reference computation, so an
 * optimisation can never change what a stage computes.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { getGlyphSet } from '../src/core/glyphs/charsets.js';
import { SAMPLES, SUB_X, SUB_Y } from '../src/core/glyphs/types.js';
import { NEIGHBOUR_CALM, TONE_WEIGHT, matchGlyphs } from '../src/core/pipeline/match.js';
import { resampleImage } from '../src/core/pipeline/resample.js';
import { encodeLinear, SRGB8_TO_LINEAR } from '../src/core/pipeline/linear.js';
import { viewBlurTemplates } from '../src/core/pipeline/view-blur.js';
import { image, rng } from './helpers/images.js';
import { percentile as refPercentile, percentiles as refPercentiles } from './reference/tone.js';
import { detailInFrame } from '../src/core/pipeline/detail.js';
import { toneLut } from '../src/core/pipeline/tone.js';
import { measureSource } from '../src/core/director/measure.js';
import { frame, keptAt } from '../src/core/wasm/kernels.js';
import { prepare, renderPrepared, render } from '../src/core/render.js';
import { withDefaults } from '../src/core/params/validate.js';

describe('resampleImage', () => {
  const random = rng(7);
  const src = image(37, 23, () => [random() * 255, random() * 255, random() * 255, random() < 0.3 ? random() * 255 : 255]);

  it("colours 'later': no RGB until read, then the same values, and the raster in use stays", () => {
    const now = resampleImage(src, 9, 3, SUB_X, SUB_Y, 0);
    const rgb = Float32Array.from(now.cellLinearRgb);
    const later = resampleImage(src, 9, 3, SUB_X, SUB_Y, 0, undefined, 'later');
    const luma = Float32Array.from(later.luma.data);
    assert.equal(typeof Object.getOwnPropertyDescriptor(later, 'cellLinearRgb')!.get, 'function', 'computed on first read');
    // A frame's colours read once another raster went through the resampler: still this frame's.
    const other = image(11, 5, () => [255, 0, 0, 255]);
    resampleImage(other, 2, 1, SUB_X, SUB_Y, 0);
    const again = resampleImage(src, 9, 3, SUB_X, SUB_Y, 0, undefined, 'later');
    assert.deepEqual(again.cellLinearRgb, rgb);
    // Reading them does not overwrite the luminance raster the render is working on.
    assert.deepEqual(again.luma.data, luma);
    assert.deepEqual(later.cellLinearRgb, rgb);
  });

  it('gives the same raster from aligned and unaligned pixel bytes', () => {
    const aligned = new Uint8Array(src.data);
    const shifted = new Uint8Array(aligned.length + 1).subarray(1);
    shifted.set(aligned);
    for (const [cols, rows] of [[9, 3], [37 / SUB_X, 23 / SUB_Y], [20, 8]] as const) {
      const c = Math.floor(cols), r = Math.floor(rows);
      const a = resampleImage({ ...src, data: aligned }, c, r, SUB_X, SUB_Y, 0);
      const luma = Float32Array.from(a.luma.data);
      const rgb = Float32Array.from(a.cellLinearRgb);
      const b = resampleImage({ ...src, data: shifted }, c, r, SUB_X, SUB_Y, 0);
      assert.deepEqual(b.luma.data, luma, `luma at ${c}x${r}`);
      assert.deepEqual(b.cellLinearRgb, rgb, `colour at ${c}x${r}`);
    }
  });

  it('averages light, not code values, and composites alpha over the ground', () => {
    // A 1-pixel black/white checker averages to half the light: sRGB ~0.735, not 0.5.
    const checker = image(8, 16, (x, y) => ((x + y) & 1 ? [255, 255, 255] : [0, 0, 0]));
    const r = resampleImage(checker, 1, 1, 1, 1, 0);
    assert.ok(Math.abs(r.luma.data[0]! - encodeLinear(0.5)) < 1e-3, `got ${r.luma.data[0]}`);
    // Half-transparent white over a white ground is white; over black, half the light.
    const half = image(4, 8, () => [255, 255, 255, 128]);
    const a = 128 / 255;
    assert.ok(Math.abs(resampleImage(half, 1, 1, 1, 1, 1).luma.data[0]! - 1) < 1e-3);
    assert.ok(Math.abs(resampleImage(half, 1, 1, 1, 1, 0).luma.data[0]! - encodeLinear(a * SRGB8_TO_LINEAR[255]!)) < 1e-3);
  });
});

/** The full matching error of glyph g for cell (cx, cy), by brute force: shape plus the tone term. */
function bruteError(target: Float32Array, W: number, templates: Float32Array, scale: number, cx: number, cy: number, g: number): number {
  let e = 0, tm = 0, gm = 0;
  for (let sy = 0; sy < SUB_Y; sy++) {
    for (let sx = 0; sx < SUB_X; sx++) {
      const t = scale * target[(cy * SUB_Y + sy) * W + cx * SUB_X + sx]!;
      const v = templates[g * SAMPLES + sy * SUB_X + sx]!;
      e += (t - v) ** 2;
      tm += t / SAMPLES;
      gm += v / SAMPLES;
    }
  }
  return e + TONE_WEIGHT * SAMPLES * (tm - gm) ** 2;
}

describe('the resampled luminance kept in kernel memory', () => {
  const random = rng(11);
  const src = image(90, 70, (x, y) => { const v = 40 + ((x * 5 + y * 3) % 160) + random() * 40; return [v, v * 0.8, 255 - v, 255]; });

  it('is read where it is kept by the detail stage and the Director, never written over, with the results of a copy', () => {
    const r = resampleImage(src, 20, 8, SUB_X, SUB_Y, 0);
    const { width, height } = r.luma;
    assert.notEqual(keptAt(r.luma), null, 'the resample kept its luminance');
    // KeptLuma's copy (private in TypeScript): made when `data` is first read.
    const copied = (): boolean => Reflect.get(r.luma, 'copy') !== null;
    assert.equal(copied(), false, 'not copied out until read');
    const rgb = Float32Array.from(r.cellLinearRgb);
    const detail = (raster: { width: number; height: number; data: Float32Array }, denoise: number, sharpen: number): Float32Array => {
      const f = frame();
      const { result } = detailInFrame(f, raster, denoise, sharpen, () => toneLut({ lo: 0.05, hi: 0.95, contrast: 1.2, brightness: 0, gamma: 0.9, invert: false }));
      return f.viewF32(result, width * height).slice();
    };
    // Read in place before its data is ever copied out: the Director's measurement, then the
    // detail stage with no denoise pass, one and two (denoise > 0.5), each with and without
    // sharpening (the passes and the in-place tone step must not write over it).
    const measured = measureSource(r.luma, { cellLinearRgb: rgb });
    const runs = [0, 0.3, 0.8].flatMap((denoise) => [0, 0.6].map((sharpen) => ({ denoise, sharpen, got: detail(r.luma, denoise, sharpen) })));
    assert.equal(copied(), false, 'still not copied out');
    const data = r.luma.data;
    assert.equal(copied(), true);
    assert.notEqual(keptAt(r.luma), null, 'still kept once copied out');
    // Only the raster object stands for it: its copy may be scratch memory another resample writes.
    const plain = { width, height, data };
    assert.equal(keptAt(plain), null, 'an equal raster is not the kept one');
    assert.equal(keptAt(data), null, 'nor is its copy');
    for (const { denoise, sharpen, got } of runs) {
      assert.deepEqual(got, detail(plain, denoise, sharpen), `denoise ${denoise} sharpen ${sharpen}`);
    }
    assert.deepEqual(measured, measureSource(plain, { cellLinearRgb: rgb }));
    assert.deepEqual(measureSource(r.luma, { cellLinearRgb: rgb }), measured, 'the raster left as it was');
  });

  it('a preparation whose luminance was read renders as if alone after another resample; one never read fails clearly', () => {
    // The same raster size: the two share the resampler's scratch array.
    const other = image(90, 70, (x) => [x * 2, 255 - x * 2, 128, 255]);
    const p = withDefaults({ columns: 24 });
    const alone = render(src, { columns: 24 });
    const prep = prepare(src, 24, false);
    assert.ok(prep.resampled.luma.data.length > 0);
    prepare(other, 24, false);
    const after = renderPrepared(prep, p, ['columns'], src);
    assert.deepEqual(after.cells, alone.cells);
    assert.deepEqual(after.colors, alone.colors);
    assert.deepEqual(after.params, alone.params);
    const unread = prepare(src, 24, false);
    prepare(other, 24, false);
    assert.throws(() => renderPrepared(unread, p, ['columns'], src), /read after the next resample/);
  });

  it('a frame copied out (video) leaves the kept raster to its still, and is read as its own', () => {
    const frameImage = image(90, 70, (x, y) => [(x * y) % 256, 90, 200, 255]);
    const p = withDefaults({ columns: 24 });
    const alone = render(src, { columns: 24 });
    const still = prepare(src, 24, false);
    assert.ok(still.resampled.luma.data.length > 0, 'copied out into the scratch raster');
    // The same size: the frame's copy goes into the same scratch raster.
    const frameprep = prepare(frameImage, 24, false, undefined, 'now', 'copied');
    assert.equal(keptAt(frameprep.resampled.luma), null);
    const own = { ...frameprep.resampled.luma, data: Float32Array.from(frameprep.resampled.luma.data) };
    assert.deepEqual(measureSource(frameprep.resampled.luma, frameprep.resampled), measureSource(own, frameprep.resampled));
    const after = renderPrepared(still, p, ['columns'], src);
    assert.deepEqual(after.cells, alone.cells, 'the still still renders from its kept raster');
  });
});

describe('matchGlyphs', () => {
  it('a flat cell\'s tone outweighs the texture its glyph adds: a square of grey 140 on grey 110 stays visible', () => {
    // Before FLAT_TONE_BOOST both greys drew one glyph, whole ramp or codebook: the square vanished.
    const img = image(200, 200, (x, y) => (x >= 50 && x < 150 && y >= 50 && y < 150 ? [140, 140, 140] : [110, 110, 110]));
    for (const params of [{ autoOptimize: 0, autoLevels: 0, structure: 0 }, { autoOptimize: 0, autoLevels: 0, structure: 0, glyphStrategy: 'fixed' }, {}] as const) {
      const r = render(img, { columns: 30, ...params });
      const at = (cx: number, cy: number) => r.glyphs[r.cells[cy * r.columns + cx]!];
      assert.notEqual(at(15, Math.floor(r.rows / 2)), at(2, Math.floor(r.rows / 2)), JSON.stringify(params));
      assert.equal(at(1, 1), at(28, r.rows - 2), `${JSON.stringify(params)}: the ground is one glyph`);
    }
  });

  it('calm: a cell keeps its left neighbour\'s glyph only within the margin, so flat texture alternates less', () => {
    const set = getGlyphSet('detailed');
    const templates = viewBlurTemplates(set.templates);
    const table = { templates, coverage: set.coverage };
    const scale = Math.max(...set.coverage);
    const order = Int32Array.from(set.glyphs.map((_, i) => i)).sort((a, b) => set.coverage[a]! - set.coverage[b]!);
    const cols = 40, rows = 10, W = cols * SUB_X;
    const random = rng(5);
    // A mid-grey wall, cell tones scattered around 0.45, with texture inside each cell.
    const tone = Float32Array.from({ length: cols * rows }, () => 0.45 + 0.2 * (random() - 0.5));
    const target = Float32Array.from({ length: W * rows * SUB_Y }, (_, i) => tone[Math.floor(i / W / SUB_Y) * cols + Math.floor((i % W) / SUB_X)]! + 0.1 * (random() - 0.5));
    const base = { scale, candidates: order, directional: null, structure: null, structureAmount: 0, dither: false } as const;
    const own = matchGlyphs(target, W, cols, rows, table, { ...base, calm: 0 }, new Uint16Array(cols * rows));
    const calm = matchGlyphs(target, W, cols, rows, table, base, new Uint16Array(cols * rows));
    const switches = (g: Uint16Array) => { let n = 0; for (let i = 0; i < g.length; i++) if (i % cols > 0 && g[i] !== g[i - 1]) n++; return n; };
    assert.ok(switches(calm) < switches(own), `switches ${switches(calm)} vs ${switches(own)}`);
    // Where the choice differs, it is the left neighbour's glyph, and that glyph is within the
    // margin of the cell's own best (errors by brute force).
    const err = (cx: number, cy: number, g: number) => bruteError(target, W, templates, scale, cx, cy, g);
    let kept = 0;
    for (let i = 0; i < cols * rows; i++) {
      if (calm[i] === own[i]) continue;
      kept++;
      assert.equal(calm[i], calm[i - 1], `cell ${i} took a glyph that is not its neighbour's`);
      const cx = i % cols, cy = Math.floor(i / cols);
      assert.ok(err(cx, cy, calm[i]!) * (1 - NEIGHBOUR_CALM) < err(cx, cy, own[i]!) + 1e-6, `cell ${i} beyond the margin`);
    }
    assert.ok(kept > 0);
  });
  it('prunes candidates without changing the least-squares choice', () => {
    const set = getGlyphSet('detailed');
    const templates = viewBlurTemplates(set.templates);
    const scale = Math.max(...set.coverage);
    const order = Int32Array.from(set.glyphs.map((_, i) => i)).sort((a, b) => set.coverage[a]! - set.coverage[b]!);
    const cols = 24, rows = 12, W = cols * SUB_X;
    const random = rng(11);
    const target = new Float32Array(W * rows * SUB_Y);
    // Flat, textured and edge cells.
    for (let i = 0; i < target.length; i++) {
      const x = i % W, y = Math.floor(i / W);
      const kind = (Math.floor(x / SUB_X) + Math.floor(y / SUB_Y)) % 3;
      target[i] = kind === 0 ? 0.4 : kind === 1 ? random() : x % SUB_X < 2 ? 0.9 : 0.1;
    }
    const out = matchGlyphs(target, W, cols, rows, { templates, coverage: set.coverage }, {
      scale, candidates: order, directional: null, structure: null, structureAmount: 0, dither: false, calm: 0,
    }, new Uint16Array(cols * rows));

    // Brute force: the full error of every candidate, including the tone term (calm 0: each
    // cell's own best).
    for (let cy = 0; cy < rows; cy++) {
      for (let cx = 0; cx < cols; cx++) {
        let best = -1, bestE = Infinity;
        for (const g of order) {
          const e = bruteError(target, W, templates, scale, cx, cy, g);
          if (e < bestE - 1e-9) { bestE = e; best = g; }
        }
        assert.equal(out[cy * cols + cx], best, `cell ${cx},${cy}`);
      }
    }
  });
});

/** The kernel's percentiles of `h` (assembly/measure.ts histPercentiles), as the detail stage and the Director read them. */
function kernelPercentiles(h: Uint32Array, ps: readonly number[]): number[] {
  const f = frame();
  const ph = f.f32(h.length), pq = f.bytes(8 * ps.length), pv = f.bytes(8 * ps.length);
  const k = f.ready();
  f.viewU32(ph, h.length).set(h);
  f.viewF64(pq, ps.length).set(ps);
  k.histPercentiles(ph, h.length, pq, ps.length, pv);
  return Array.from(f.viewF64(pv, ps.length));
}

describe('percentiles', () => {
  it('the kernel and its one-walk reference equal one walk per value on dense, sparse, one-bin and empty histograms', () => {
    const next = rng(7);
    const ps = [0, 0.005, 0.01, 0.5, 0.9, 0.99, 0.995, 1];
    const cases: Uint32Array[] = [new Uint32Array(1024), Uint32Array.from({ length: 256 }, () => Math.floor(next() * 50))];
    for (let k = 0; k < 20; k++) cases.push(Uint32Array.from({ length: 1024 }, () => (next() < 0.9 ? 0 : Math.floor(next() * 1000))));
    const one = new Uint32Array(1024);
    one[700] = 12;
    cases.push(one);
    for (const h of cases) {
      const oneWalkEach = ps.map((p) => refPercentile(h, p));
      assert.deepEqual(kernelPercentiles(h, ps), oneWalkEach);
      assert.deepEqual(refPercentiles(h, ps), oneWalkEach);
    }
  });
});

describe('warm-up', () => {
  it('never throws, and a render after it is the render without it', async () => {
    const { warmUp, render } = await import('../src/core/render.js');
    const { withDefaults } = await import('../src/core/params/validate.js');
    const img = image(64, 48, (x, y) => [(x * 4) & 255, (y * 5) & 255, 128, 255]);
    const before = render(img, { columns: 16, charset: 'standard' });
    // A ramp the glyph table refuses (unmeasured glyph; validation keeps it from a render) is the
    // render's to report, not the warm-up's: the first call (the priming render) and a later one
    // (the tables) both meet it.
    const refused = { ...withDefaults({}), glyphs: '\u4e00x' };
    assert.doesNotThrow(() => warmUp(refused));
    assert.doesNotThrow(() => warmUp(refused));
    for (const charset of ['standard', 'blocks', 'dots'] as const) warmUp(withDefaults({ charset, color: true }));
    assert.deepEqual(render(img, { columns: 16, charset: 'standard' }).cells, before.cells);
  });
});

describe('grid geometry', () => {
  it('a grid over the row limit names the columns that fit, or says that only a crop helps', async () => {
    const { gridRows, GeometryError } = await import('../src/core/pipeline/geometry.js');
    // 16 x 2000 px at 400 columns: 25,000 rows; round(c x 62.5) <= 800 up to 12 columns.
    assert.throws(() => gridRows(16, 2000, 400), (e: unknown) => e instanceof GeometryError && /use 12 columns or fewer, or crop it\.$/.test(e.message));
    assert.equal(gridRows(16, 2000, 12), 750);
    assert.throws(() => gridRows(16, 2000, 13), GeometryError);
    // 10 x 2000 px: 800 rows at 8 columns, 900 at 9: fewer than 8 is no advice to give.
    assert.throws(() => gridRows(10, 2000, 120), (e: unknown) => e instanceof GeometryError && /it would need 12000 rows \(at most 800\); use 8 columns, the fewest, or crop it\.$/.test(e.message));
    // 1 x 3000 px: 12,000 rows even at 8 columns, the fewest: no column count helps.
    assert.throws(() => gridRows(1, 3000, 8), (e: unknown) => e instanceof GeometryError && /even at 8 columns, the fewest, it would need 12000 rows \(at most 800\); crop it\.$/.test(e.message) && !/fewer/.test(e.message));
  });

  it('a box that limits the rows gets the columns that keep the aspect at that many rows, not the widest that rounds to it', async () => {
    const { fitColumns, gridRows } = await import('../src/core/pipeline/geometry.js');
    // 1000 x 140 px in 1:2 cells is 14.3 columns a row. The widest count that still rounds to one
    // row, 21, drew the image half as wide again as it is (--size 100x1).
    assert.equal(fitColumns(1000, 140, 100, 1), 14);
    assert.equal(fitColumns(1000, 140, 100, 2), 29);
    assert.equal(fitColumns(1000, 140, 100, 5), 71);
    for (const rows of [1, 2, 5]) assert.equal(gridRows(1000, 140, fitColumns(1000, 140, 100, rows)), rows);
    // A box wider than the image's aspect is limited by its columns, as before.
    assert.equal(fitColumns(1000, 140, 40, 24), 40);
    // Where a column is more than a row's worth of image, the rounded count steps down to fit.
    assert.equal(fitColumns(16, 2000, 400, 800), 12);
    // No box, only the row limit: the widest count within it, which a "too tall" refusal offers
    // (541 x 1013 px: 855 columns are exactly 800 rows; the rounded count would be 854).
    assert.equal(fitColumns(541, 1013, 900), 855);
    assert.equal(fitColumns(541, 1013, 900, 800), 854);
    assert.throws(() => gridRows(541, 1013, 900), /use 855 columns or fewer, or crop it\.$/);
  });
});
