/**
 * `fineShapes` (extension): glyphs chosen again on an 8 x 16 raster per cell. What it promises,
 * measured as bench:quality measures it (on the glyphs' own 8 x 16 bitmaps, the png format's):
 * the art's contours correlate better with the source's up close; what it leaves alone stays
 * byte for byte.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { glyphBitmap, BITMAP_CELL } from '../src/core/glyphs/bitmaps.js';
import { chooseCodebook } from '../src/core/pipeline/codebook.js';
import { FINE_BLUR_PASSES, FINE_SHAPE_SPAN, fineTable } from '../src/core/pipeline/refine.js';
import { matchGlyphs } from '../src/core/pipeline/match.js';
import { viewBlurTemplates } from '../src/core/pipeline/view-blur.js';
import { getGlyphSet } from '../src/core/glyphs/charsets.js';
import { render } from '../src/core/render.js';
import type { RenderResult, RgbaImage } from '../src/core/types.js';
import { lines, scene, withNoise } from './helpers/images.js';
import { photo as photoPng, startTestServer } from './server-helpers.js';

const CW = BITMAP_CELL.width, CH = BITMAP_CELL.height;

/** The art's ink, CW x CH px per cell, from the glyph bitmaps. */
function ink(r: RenderResult): Float32Array {
  const W = r.columns * CW, out = new Float32Array(W * r.rows * CH);
  for (let cy = 0; cy < r.rows; cy++) {
    for (let cx = 0; cx < r.columns; cx++) {
      const bmp = glyphBitmap(r.glyphs[r.cells[cy * r.columns + cx]!]!.codePointAt(0)!)!;
      for (let y = 0; y < CH; y++) for (let x = 0; x < CW; x++) out[(cy * CH + y) * W + cx * CW + x] = bmp[y * CW + x]! / (BITMAP_CELL.levels - 1);
    }
  }
  return out;
}

/** The source's luminance (box average) on the same raster. */
function sourceRaster(img: RgbaImage, w: number, h: number): Float32Array {
  const out = new Float32Array(w * h);
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) {
      const sx0 = Math.floor((x * img.width) / w), sx1 = Math.max(sx0 + 1, Math.floor(((x + 1) * img.width) / w));
      const sy0 = Math.floor((y * img.height) / h), sy1 = Math.max(sy0 + 1, Math.floor(((y + 1) * img.height) / h));
      let s = 0, n = 0;
      for (let yy = sy0; yy < sy1; yy++) {
        for (let xx = sx0; xx < sx1; xx++) {
          const i = (yy * img.width + xx) * 4;
          s += 0.2126 * img.data[i]! + 0.7152 * img.data[i + 1]! + 0.0722 * img.data[i + 2]!;
          n++;
        }
      }
      out[y * w + x] = s / n / 255;
    }
  }
  return out;
}

/** Box blur of radius r (twice: close to a Gaussian), edges clamped. */
function blur(d: Float32Array, w: number, h: number, r: number): Float32Array {
  let a = d;
  for (let pass = 0; pass < 2; pass++) {
    const t = new Float32Array(w * h), o = new Float32Array(w * h);
    for (let y = 0; y < h; y++) for (let x = 0; x < w; x++) { let s = 0; for (let k = -r; k <= r; k++) s += a[y * w + Math.min(w - 1, Math.max(0, x + k))]!; t[y * w + x] = s / (2 * r + 1); }
    for (let y = 0; y < h; y++) for (let x = 0; x < w; x++) { let s = 0; for (let k = -r; k <= r; k++) s += t[Math.min(h - 1, Math.max(0, y + k)) * w + x]!; o[y * w + x] = s / (2 * r + 1); }
    a = o;
  }
  return a;
}

function correlation(a: Float32Array, b: Float32Array): number {
  let ma = 0, mb = 0;
  for (let i = 0; i < a.length; i++) { ma += a[i]!; mb += b[i]!; }
  ma /= a.length; mb /= b.length;
  let ab = 0, aa = 0, bb = 0;
  for (let i = 0; i < a.length; i++) { const x = a[i]! - ma, y = b[i]! - mb; ab += x * y; aa += x * x; bb += y * y; }
  return ab / Math.sqrt(aa * bb);
}

/** Contour correlation: source and art blurred by about 0.08 cell heights. */
function contour(img: RgbaImage, r: RenderResult): number {
  const w = r.columns * CW, h = r.rows * CH;
  return correlation(blur(sourceRaster(img, w, h), w, h, 1), blur(ink(r), w, h, 1));
}

describe('fineShapes', () => {
  const photo = withNoise(scene(480, 360, 5), 4, 2);
  const art = lines(320, 320);

  it('draws contours closer to the source up close than the default, which chooses again only the cells with structure', () => {
    const base = render(photo, { columns: 60 });
    const fine = render(photo, { columns: 60, fineShapes: true });
    const changed = fine.cells.filter((g, i) => fine.glyphs[g] !== base.glyphs[base.cells[i]!]).length;
    assert.ok(changed > base.cells.length / 20, `scene: ${changed} cells changed`);
    const [a, b] = [contour(photo, base), contour(photo, fine)];
    assert.ok(b > a, `scene: contour r ${b.toFixed(4)} with fineShapes, ${a.toFixed(4)} without`);
    // Thin lines with edges (line art): the structure's contour glyphs stay, with and without it.
    for (const fineShapes of [false, true]) {
      const r = render(lines(160, 160), { columns: 24, edges: true, fineShapes });
      const drawn = r.cells.filter((g) => '/\\|'.includes(r.glyphs[g]!)).length;
      assert.ok(drawn > 40, `fineShapes ${fineShapes}: ${drawn} contour glyphs`);
    }
  });

  it('chooses from a codebook whose levels bring the glyphs up to FINE_SHAPE_SPAN above them', () => {
    const levels = Float64Array.from({ length: 40 }, (_, i) => (i * i) / 1521);
    const order = Int32Array.from(levels.keys());
    const targets = Float32Array.from({ length: 500 }, (_, i) => ((i * 37) % 500) / 500);
    for (const maxRmse of [0.005, 0.03, 0.08]) {
      const narrow = chooseCodebook(levels, order, targets, 'adaptive', maxRmse);
      const wide = chooseCodebook(levels, order, targets, 'adaptive', maxRmse, FINE_SHAPE_SPAN);
      // The levels are the adaptive codebook's, chosen under the bound; the shapes come on top.
      assert.deepEqual(wide.base, narrow.indices);
      if (narrow.indices.length < order.length) assert.ok(wide.indices.length > narrow.indices.length, `${wide.indices.length} vs ${narrow.indices.length} glyphs`);
      const chosen = [...narrow.indices].map((g) => levels[g]!);
      for (const g of order) {
        const inWide = wide.indices.includes(g), near = chosen.some((l) => levels[g]! >= l && levels[g]! - l < FINE_SHAPE_SPAN);
        assert.equal(inWide, near, `glyph ${g} (level ${levels[g]!.toFixed(3)}), max RMSE ${maxRmse}`);
      }
      // Its RMSE is measured over all its glyphs' levels: at most the chosen levels' alone.
      assert.ok(wide.rmse <= narrow.rmse, `${wide.rmse} <= ${narrow.rmse}`);
      if (narrow.indices.length < order.length) assert.ok(narrow.rmse <= maxRmse, `${narrow.rmse} <= ${maxRmse}`);
      let e = 0;
      const ls = [...wide.indices].map((g) => levels[g]!);
      for (const t of targets) e += Math.min(...ls.map((l) => (t - l) ** 2));
      assert.ok(Math.abs(wide.rmse - Math.sqrt(e / targets.length)) < 0.003, `rmse ${wide.rmse} against ${Math.sqrt(e / targets.length)}`);
    }
    // In a render: the report's codebook is the one the cells were chosen from, wider than where
    // the fine stage does not run (dither decides at 4 x 8).
    const base = render(photo, { columns: 60, dither: true }), fine = render(photo, { columns: 60 });
    assert.ok(fine.codebook.glyphs.length > base.codebook.glyphs.length, `${fine.codebook.glyphs} vs ${base.codebook.glyphs}`);
    const book = new Set(fine.codebook.glyphs);
    assert.ok(fine.cells.every((g) => book.has(fine.glyphs[g]!)));
  });

  it('searches its codebook exactly: a 4 x 8 start from a subset of it gives the same cells', () => {
    const cols = 40, rows = 20, W = cols * 4, H = rows * 8;
    const t = new Float32Array(W * H);
    for (let y = 0; y < H; y++) for (let x = 0; x < W; x++) t[y * W + x] = 0.5 + 0.3 * Math.sin(x * 0.07 + Math.sin(y * 0.05) * 3) * Math.cos(y * 0.04) + 0.15 * Math.sin(x * 0.9 + y * 0.3);
    const set = getGlyphSet('detailed');
    const order = Int32Array.from(set.glyphs.keys()).sort((a, b) => set.coverage[a]! - set.coverage[b]! || a - b);
    const scale = Math.max(...set.coverage);
    const table = { templates: viewBlurTemplates(set.templates), coverage: set.coverage };
    const refine = { table: fineTable(set.glyphs), candidates: order, minSpread: 0 };
    const o = { scale, directional: null, structure: null, structureAmount: 0, dither: false, blur: true, refine } as const;
    const whole = matchGlyphs(t, W, cols, rows, table, { ...o, candidates: order }, new Uint16Array(cols * rows));
    for (const step of [3, 9, 40]) {
      const starts = order.filter((_, i) => i % step === 0);
      const unrefined = matchGlyphs(t, W, cols, rows, table, { ...o, refine: null, candidates: starts }, new Uint16Array(cols * rows));
      const cells = matchGlyphs(t, W, cols, rows, table, { ...o, candidates: starts }, new Uint16Array(cols * rows));
      assert.deepEqual(cells, whole, `every ${step}th glyph as the start`);
      assert.ok(cells.some((g, i) => g !== unrefined[i]), 'the fine stage chose outside the starts');
    }
  });

  it('the search\'s block bound: each template splits exactly into its 2 x 2 block means and what they leave', () => {
    // assembly/refine.ts blockBound() prunes on |P(c t - g)|^2 + (|c t's rest| - |g's rest|)^2:
    // a lower bound only if blocks, blockStats and the templates agree.
    const fine = fineTable(getGlyphSet('detailed').glyphs);
    const n = fine.g2.length, bx = CW / 2;
    for (let g = 0; g < n; g++) {
      const t = fine.templates.subarray(g * CW * CH, (g + 1) * CW * CH);
      let blockPart = 0, rest = 0;
      for (let y = 0; y < CH; y++) {
        for (let x = 0; x < CW; x++) {
          const b = fine.blocks[g * (CW / 2) * (CH / 2) + (y >> 1) * bx + (x >> 1)]!;
          const mean = (t[(y & ~1) * CW + (x & ~1)]! + t[(y & ~1) * CW + (x | 1)]! + t[(y | 1) * CW + (x & ~1)]! + t[(y | 1) * CW + (x | 1)]!) / 4;
          assert.ok(Math.abs(b - mean) < 1e-6, `glyph ${g} block mean at ${x},${y}`);
          blockPart += b * b;
          rest += (t[y * CW + x]! - b) ** 2;
        }
      }
      assert.ok(Math.abs(fine.blockStats[2 * g]! - blockPart) < 1e-5, `glyph ${g} block part`);
      assert.ok(Math.abs(fine.blockStats[2 * g + 1]! - Math.sqrt(rest)) < 1e-5, `glyph ${g} rest`);
      // Pythagoras: the two parts make the template's whole squared norm.
      assert.ok(Math.abs(fine.blockStats[2 * g]! + fine.blockStats[2 * g + 1]! ** 2 - fine.g2[g]!) < 1e-4, `glyph ${g} split`);
    }
  });

  it('leaves blocks, dots and dithered art as they are', () => {
    for (const p of [{ charset: 'blocks' }, { charset: 'dots' }, { dither: true }, { charset: 'blocks', color: true }]) {
      const a = render(photo, { columns: 40, ...p }), b = render(photo, { columns: 40, ...p, fineShapes: true });
      assert.deepEqual(b.cells, a.cells, JSON.stringify(p));
    }
  });

  it('the fine table (decoded and computed in WebAssembly) is its definition, bit for bit', () => {
    for (const set of ['detailed', 'minimal'] as const) {
      const glyphs = getGlyphSet(set).glyphs;
      const fine = fineTable(glyphs);
      const n = fine.g2.length, N = CW * CH, B = (CW / 2) * (CH / 2);
      // The png format's bitmaps, levels / 15, through the viewing blur.
      const raw = new Float32Array(n * N);
      glyphs.forEach((ch, g) => glyphBitmap(ch.codePointAt(0)!)!.forEach((v, i) => { raw[g * N + i] = v / (BITMAP_CELL.levels - 1); }));
      assert.deepEqual(fine.templates, viewBlurTemplates(raw, CW, CH, FINE_BLUR_PASSES), `${set} templates`);
      for (let g = 0; g < n; g++) {
        const t = fine.templates.subarray(g * N, (g + 1) * N);
        let s = 0, m = 0;
        for (let i = 0; i < N; i++) { s += t[i]! * t[i]!; m += t[i]!; }
        const mean = m / N;
        let v = 0;
        for (let i = 0; i < N; i++) v += (t[i]! - mean) ** 2;
        assert.equal(fine.g2[g], s, `${set} glyph ${g} g2`);
        assert.equal(fine.gm[g], mean, `${set} glyph ${g} mean`);
        assert.equal(fine.spread[g], Math.sqrt(v), `${set} glyph ${g} spread`);
        let q = 0, r = 0;
        for (let by = 0; by < CH / 2; by++) {
          for (let x = 0; x < CW / 2; x++) {
            const at = 2 * by * CW + 2 * x;
            const b = Math.fround((t[at]! + t[at + 1]! + t[at + CW]! + t[at + CW + 1]!) / 4);
            assert.equal(fine.blocks[g * B + by * (CW / 2) + x], b, `${set} glyph ${g} block ${x},${by}`);
            q += b * b;
          }
        }
        for (let y = 0; y < CH; y++) for (let x = 0; x < CW; x++) r += (t[y * CW + x]! - fine.blocks[g * B + (y >> 1) * (CW / 2) + (x >> 1)]!) ** 2;
        assert.equal(fine.blockStats[2 * g], 4 * q, `${set} glyph ${g} block part`);
        assert.equal(fine.blockStats[2 * g + 1], Math.sqrt(r), `${set} glyph ${g} rest`);
      }
    }
  });

  it('works on every ASCII ramp, a custom ramp, edges and invert', () => {
    for (const p of [{ charset: 'standard' }, { charset: 'minimal' }, { charset: 'binary' }, { glyphs: ' .:-=+*#%@' }, { edges: true }, { invert: true }]) {
      const r = render(photo, { columns: 40, ...p, fineShapes: true });
      assert.equal(r.cells.length, r.columns * r.rows, JSON.stringify(p));
      assert.ok(r.cells.every((g) => g < r.glyphs.length), JSON.stringify(p));
      assert.equal(r.params.fineShapes, true);
    }
  });

  it('over HTTP: the server\'s render workers draw it (200, and other art than without it)', async () => {
    const server = await startTestServer();
    try {
      const png = (await photoPng(200, 150)).toString('base64');
      const body = async (extra: Record<string, unknown>) => {
        const res = await fetch(`${server.base}/api/v1/render`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ imageBase64: png, columns: 50, ...extra }) });
        assert.equal(res.status, 200, JSON.stringify(extra));
        return res.text();
      };
      assert.notEqual(await body({ fineShapes: true }), await body({}));
      const json = JSON.parse(await body({ fineShapes: true, format: 'json' })) as { params: Record<string, unknown> };
      assert.equal(json.params.fineShapes, true);
    } finally {
      await server.close();
    }
  });
});
