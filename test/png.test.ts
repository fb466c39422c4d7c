/**
 * The png format: real PNG files (decoded by sharp), the expected pixel size, pixels drawn from the
 * generated glyph bitmaps in the documents' ground and ink, colour per cell, the background
 * plane, previews at a smaller cell, and the png of a json-compact document equal to the png of
 * the render itself.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import sharp from 'sharp';
import { GLYPH_BITMAPS } from '../src/core/glyphs/bitmaps.generated.js';
import { GLYPH_DATA } from '../src/core/glyphs/font-data.generated.js';
import {
  compactGrid, contentTypeHeader, decodeCompact, FORMAT_INFO, formatResult, groundFor, parseHexColor, pngCell, pngSize, renderPng,
} from '../src/core/format/index.js';
import { render } from '../src/core/render.js';
import { zlibDeflate } from '../src/node/deflate.js';
import type { CellGrid } from '../src/core/types.js';
import { scene } from './helpers/images.js';

const photo = scene(160, 120, 3);

async function decode(png: Uint8Array): Promise<{ width: number; height: number; channels: number; data: Buffer }> {
  const { data, info } = await sharp(png).raw().toBuffer({ resolveWithObject: true });
  return { width: info.width, height: info.height, channels: info.channels, data };
}

const rgbOf = (packed: number) => [(packed >>> 16) & 255, (packed >>> 8) & 255, packed & 255];

describe('png format', () => {
  it('is registered as image/png with extension png and no charset', () => {
    assert.deepEqual({ ...FORMAT_INFO.png }, { contentType: 'image/png', extension: 'png', label: 'PNG image (extension)', binary: true, document: true });
    assert.equal(contentTypeHeader('png'), 'image/png');
    const out = formatResult(render(photo, { columns: 40, format: 'png' }));
    assert.ok(out.body instanceof Uint8Array);
    assert.equal(out.contentType, 'image/png');
    assert.equal(out.extension, 'png');
    // Asked for by name, its body is typed as the bytes it is (a type error before PngOutput).
    const bytes: Uint8Array = formatResult(render(photo, { columns: 40 }), 'png').body;
    assert.ok(bytes instanceof Uint8Array);
  });

  it('has a bitmap for every measured glyph', () => {
    assert.deepEqual(GLYPH_BITMAPS.map(([cp]) => cp), GLYPH_DATA.map(([cp]) => cp));
    for (const [cp, hex] of GLYPH_BITMAPS) assert.match(hex, /^([0-9a-f]{8} ){15}[0-9a-f]{8}$/, `U+${cp.toString(16)}`);
  });

  it('is a PNG of 8 x 16 px per cell, the same bytes every time', async () => {
    for (const columns of [8, 33, 120]) {
      const r = render(photo, { columns, format: 'png' });
      const body = formatResult(r).body as Uint8Array;
      const img = await decode(body);
      assert.deepEqual([img.width, img.height, img.channels], [columns * 8, r.rows * 16, 3]);
      assert.ok(Buffer.from(body).equals(Buffer.from(formatResult(render(photo, { columns, format: 'png' })).body as Uint8Array)));
    }
  });

  it('with a one-shot deflate (node:zlib, as the Node faces pass it) the pixels are the ones pako\'s streaming gives', async () => {
    const cases = [
      { params: { columns: 40 }, style: { color: false, monoColor: '#e5e5e5' } },
      { params: { columns: 40, color: true }, style: { color: true, monoColor: '#e5e5e5' } },
      { params: { columns: 40, color: true, charset: 'blocks' as const }, style: { color: true, monoColor: '#e5e5e5' } },
    ];
    for (const { params, style } of cases) {
      const r = render(photo, params);
      for (const scale of [1, 2, 8] as const) {
        const streamed = renderPng(r, { ...style, scale });
        // The deflate is told what it gets (it picks its level by it): a 4-bit palette image for mono art.
        const kinds: string[] = [];
        const oneShot = renderPng(r, { ...style, scale, deflate: (lines, kind) => (kinds.push(kind), zlibDeflate(lines, kind)) });
        assert.deepEqual(kinds, [style.color ? 'rgb' : 'palette']);
        const [a, b] = await Promise.all([decode(streamed), decode(oneShot)]);
        assert.deepEqual([b.width, b.height, b.channels], [a.width, a.height, a.channels]);
        assert.ok(a.data.equals(b.data), `${JSON.stringify(params)} at scale ${scale}`);
      }
    }
  });

  it('mono: the document ground where the cell is blank, the ink where the glyph is solid, nothing else', async () => {
    for (const monoColor of ['#e5e5e5', '#203040']) {
      const r = render(photo, { columns: 24, format: 'png', charset: 'blocks', monoColor });
      const { data, width } = await decode(formatResult(r).body as Uint8Array);
      const ground = rgbOf(parseHexColor(groundFor(monoColor)));
      const ink = rgbOf(parseHexColor(monoColor));
      let blank = 0;
      let full = 0;
      for (let y = 0; y < r.rows; y++) {
        for (let x = 0; x < r.columns; x++) {
          const g = r.glyphs[r.cells[y * r.columns + x]!]!;
          if (g !== ' ' && g !== '█') continue;
          const want = g === ' ' ? ground : ink;
          if (g === ' ') blank++; else full++;
          for (let py = 0; py < 16; py++) {
            for (let px = 0; px < 8; px++) {
              const o = ((y * 16 + py) * width + x * 8 + px) * 3;
              assert.deepEqual([data[o], data[o + 1], data[o + 2]], want, `cell ${x},${y} (${JSON.stringify(g)})`);
            }
          }
        }
      }
      assert.ok(blank > 0 && full > 0, 'the scene has blank and full cells');
      // Every pixel lies between ground and ink, channel by channel.
      for (let o = 0; o < data.length; o += 3) {
        for (let c = 0; c < 3; c++) {
          assert.ok(data[o + c]! >= Math.min(ground[c]!, ink[c]!) && data[o + c]! <= Math.max(ground[c]!, ink[c]!));
        }
      }
    }
  });

  it('colour: each glyph is inked in its cell colour', async () => {
    const r = render(photo, { columns: 20, format: 'png', color: true, charset: 'blocks', cellColors: 'fg' });
    const { data, width } = await decode(formatResult(r).body as Uint8Array);
    let checked = 0;
    for (let i = 0; i < r.columns * r.rows; i++) {
      if (r.glyphs[r.cells[i]!] !== '█') continue;
      const x = i % r.columns;
      const y = Math.floor(i / r.columns);
      const o = ((y * 16 + 8) * width + x * 8 + 4) * 3;
      assert.deepEqual([...data.subarray(o, o + 3)], [...r.colors.subarray(i * 3, i * 3 + 3)]);
      checked++;
    }
    assert.ok(checked > 0);
  });

  it('draws a background plane when the grid carries one', async () => {
    const grid: CellGrid & { background: Uint8Array } = {
      columns: 2, rows: 1, glyphs: [' ', '▀'], cells: Uint16Array.of(0, 1),
      colors: Uint8Array.of(1, 2, 3, 200, 10, 10), background: Uint8Array.of(10, 200, 10, 10, 10, 200),
    };
    const { data, width } = await decode(renderPng(grid, { color: true, monoColor: '#e5e5e5' }));
    const px = (x: number, y: number) => [...data.subarray((y * width + x) * 3, (y * width + x) * 3 + 3)];
    assert.deepEqual(px(3, 8), [10, 200, 10], 'a blank cell shows its background');
    assert.deepEqual(px(12, 2), [200, 10, 10], 'upper half: ink');
    assert.deepEqual(px(12, 13), [10, 10, 200], 'lower half: background');
  });

  it('previews at a smaller cell: scale 2, 4 and 8 divide the size, and average the pixels', async () => {
    const r = render(photo, { columns: 40, color: true });
    const full = await decode(renderPng(r, { color: true, monoColor: '#e5e5e5' }));
    for (const scale of [2, 4, 8] as const) {
      const img = await decode(renderPng(r, { color: true, monoColor: '#e5e5e5', scale }));
      assert.deepEqual([img.width, img.height], [full.width / scale, full.height / scale]);
      let sumFull = 0;
      let sumSmall = 0;
      for (const v of full.data) sumFull += v;
      for (const v of img.data) sumSmall += v;
      assert.ok(Math.abs(sumFull / full.data.length - sumSmall / img.data.length) < 2, `scale ${scale} keeps the mean tone`);
    }
    assert.throws(() => renderPng(r, { color: true, monoColor: '#e5e5e5', scale: 3 as 2 }), /scale/);
  });

  it('keeps the picture\'s proportions for another cellAspect: the cell is 8 px wide and 8 / cellAspect tall', async () => {
    // The grid's rows follow cellAspect; drawn in 8 x 16 cells, a 0.25 grid came out half as tall as its picture.
    const ref = await decode(formatResult(render(photo, { columns: 40, format: 'png' })).body as Uint8Array);
    assert.equal(Buffer.compare(
      formatResult(render(photo, { columns: 40, format: 'png', cellAspect: 0.5 })).body as Uint8Array,
      formatResult(render(photo, { columns: 40, format: 'png' })).body as Uint8Array), 0, 'the reference aspect is the 8 x 16 png');
    for (const [cellAspect, cellHeight] of [[0.25, 32], [0.45, 18], [0.6, 13], [1, 8]] as const) {
      const r = render(photo, { columns: 40, format: 'png', color: true, cellAspect });
      const img = await decode(formatResult(r).body as Uint8Array);
      assert.deepEqual([img.width, img.height], [320, r.rows * cellHeight], `cellAspect ${cellAspect}`);
      assert.deepEqual(pngSize(r.columns, r.rows, 1, cellAspect), { width: 320, height: r.rows * cellHeight });
      // The picture's height / width is the source's (160 x 120), within a row's rounding.
      assert.ok(Math.abs(img.height / img.width - 120 / 160) <= cellHeight / img.width, `cellAspect ${cellAspect}: ${img.width} x ${img.height}`);
      // Resampled bitmaps keep the glyphs' ink: the mean tone is the reference picture's.
      const mean = (d: Buffer) => d.reduce((a, v) => a + v, 0) / d.length;
      const refColour = await decode(formatResult(render(photo, { columns: 40, format: 'png', color: true })).body as Uint8Array);
      assert.ok(Math.abs(mean(img.data) - mean(refColour.data)) < 6, `cellAspect ${cellAspect}: mean ${mean(img.data)} vs ${mean(refColour.data)}`);
      for (const scale of [2, 8] as const) {
        const small = await decode(renderPng(r, { color: true, monoColor: '#e5e5e5', scale, cellAspect }));
        const cell = pngCell(scale, cellAspect);
        assert.deepEqual([small.width, small.height], [40 * cell.width, r.rows * cell.height]);
      }
    }
    assert.equal(ref.height, render(photo, { columns: 40 }).rows * 16);
  });

  it('the png of a json-compact render equals the png rendered directly', () => {
    for (const [charset, color, monoColor] of [['detailed', true, '#e5e5e5'], ['dots', false, '#ffcc00'], ['blocks', true, '#222222']] as const) {
      const params = { columns: 37, charset, color, monoColor } as const;
      const direct = formatResult(render(photo, { ...params, format: 'png' })).body as Uint8Array;
      const compact = formatResult(render(photo, { ...params, format: 'json-compact' }), 'json-compact').body;
      const rebuilt = renderPng(compactGrid(decodeCompact(compact)), { color, monoColor });
      assert.ok(Buffer.from(rebuilt).equals(Buffer.from(direct)), `${charset}: the rebuilt png equals the direct one`);
    }
  });

  it('refuses a glyph that has no bitmap (a renderer bug, not user input)', () => {
    const grid: CellGrid = { columns: 1, rows: 1, glyphs: ['é'], cells: Uint16Array.of(0), colors: new Uint8Array(3) };
    assert.throws(() => renderPng(grid, { color: false, monoColor: '#e5e5e5' }), /no bitmap/);
  });
});
