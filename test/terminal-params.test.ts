/**
 * The terminal's extension parameters in the core: `glyphs` (a custom ramp measured from the
 * reference font), `cellAspect`, and `colorDepth`/`colorDither` of ansi output (OKLab palettes).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { bodyText, formatResult as formatAny } from '../src/core/format/index.js';
import type { RenderResult } from '../src/core/types.js';
import { nearestEntry, paletteOf, quantizePlane } from '../src/core/format/palette.js';
import { glyphShape } from '../src/core/glyphs/charsets.js';
import { parseParams } from '../src/core/params/index.js';
import { render } from '../src/core/render.js';
import { gradient, scene } from './helpers/images.js';

/** These tests format text outputs only. */
const formatResult = (r: RenderResult, format?: Parameters<typeof formatAny>[1]) => ({ body: bodyText(formatAny(r, format)) });

const photo = scene(192, 144, 11);

describe('glyphs (custom ramp)', () => {
  it('is off by default: the empty ramp changes nothing', () => {
    for (const format of ['text', 'ansi', 'svg'] as const) {
      const a = formatResult(render(photo, { columns: 40, format, color: true })).body;
      const b = formatResult(render(photo, { columns: 40, format, color: true, glyphs: '', cellAspect: 0.5, colorDepth: 'truecolor', colorDither: false })).body;
      assert.ok(b === a, format);
    }
    assert.ok(!('glyphs' in JSON.parse(formatResult(render(photo, { columns: 20, format: 'json' })).body).params), 'json params at defaults');
  });

  it('renders with only the given glyphs plus the space, ordered by measured coverage', () => {
    const r = render(photo, { columns: 40, glyphs: 'o.O@', structure: 0.8 });
    const used = new Set(formatResult(r, 'text').body.replace(/\n/g, ''));
    for (const ch of used) assert.ok(' o.O@'.includes(ch), `unexpected glyph ${JSON.stringify(ch)}`);
    assert.ok(used.size >= 3, 'several ramp glyphs used');
    const cov = r.glyphs.map((g) => glyphShape(g)!.coverage);
    for (let i = 1; i < cov.length; i++) assert.ok(cov[i]! >= cov[i - 1]!, 'sorted by coverage');
    assert.equal(r.glyphs[0], ' ');
    const json = JSON.parse(formatResult(render(photo, { columns: 20, format: 'json', glyphs: 'o.O@' })).body);
    assert.equal(json.params.glyphs, 'o.O@');
  });

  it('differs from the charset it replaces, and block and Braille glyphs are measured too', () => {
    const base = formatResult(render(photo, { columns: 40 }), 'text').body;
    assert.notEqual(formatResult(render(photo, { columns: 40, glyphs: ' .:' }), 'text').body, base);
    const blocks = formatResult(render(photo, { columns: 40, glyphs: '░▒▓█' }), 'text').body;
    assert.ok([...blocks.replace(/\n/g, '')].every((c) => ' ░▒▓█'.includes(c)));
  });

  it('refuses unknown, non-printable and repeated glyphs, naming the character', () => {
    const cases: [string, RegExp][] = [
      [' .é@', /^glyphs must be up to 256 measured glyphs \(printable ASCII, block elements, Braille\), or empty: "é" \(U\+00E9\) was not measured from the reference font$/],
      ['ab\tc', /: U\+0009 is not printable$/],
      ['ab\u001bc', /: U\+001B is not printable$/],
      ['abca', /: "a" \(U\+0061\) is given twice$/],
      ['   ', /: " " \(U\+0020\) is given twice$/],
      [' ', /: it has no glyph with ink/],
      ['x'.repeat(1), /^$/],
    ];
    for (const [value, re] of cases) {
      for (const carrier of ['json', 'strings'] as const) {
        const r = parseParams({ glyphs: value }, carrier);
        if (re.source === '^$') { assert.ok(r.ok, JSON.stringify(value)); continue; }
        assert.ok(!r.ok, JSON.stringify(value));
        if (!r.ok) {
          assert.equal(r.errors[0]!.parameter, 'glyphs');
          assert.match(r.errors[0]!.message, re);
        }
      }
    }
    const long = parseParams({ glyphs: '⠁'.repeat(1) + Array.from({ length: 256 }, (_, i) => String.fromCodePoint(0x2800 + i)).join('') }, 'json');
    assert.ok(!long.ok && /: it has 257$/.test(long.errors[0]!.message));
    assert.ok(!parseParams({ glyphs: 5 }, 'json').ok);
  });
});

describe('cellAspect', () => {
  it('sets the row count; the default is the 1:2 reference cell', () => {
    const img = gradient(200, 100);
    assert.equal(render(img, { columns: 40 }).rows, 10);
    assert.equal(render(img, { columns: 40, cellAspect: 0.5 }).rows, 10);
    assert.equal(render(img, { columns: 40, cellAspect: 1 }).rows, 20);
    assert.equal(render(img, { columns: 40, cellAspect: 0.25 }).rows, 5);
    const json = JSON.parse(formatResult(render(img, { columns: 40, format: 'json', cellAspect: 0.6 })).body);
    assert.equal(json.cellAspect, 0.6);
    assert.equal(json.rows, 12);
    assert.equal(json.params.cellAspect, 0.6);
  });
  it('is refused outside 0.25..1', () => {
    for (const v of [0.2, 1.5, 0, -1, 'wide']) {
      const r = parseParams({ cellAspect: v }, 'json');
      assert.ok(!r.ok && r.errors[0]!.message === `cellAspect must be a number from 0.25 to 1 (got ${JSON.stringify(v)})`, String(v));
    }
  });
});

const SGR = /\x1b\[([0-9;]*)m/g;
const codes = (s: string) => [...s.matchAll(SGR)].map((m) => m[1]!);

describe('colorDepth', () => {
  it('truecolor is the contract output', () => {
    const a = formatResult(render(photo, { columns: 30, format: 'ansi', color: true })).body;
    assert.equal(formatResult(render(photo, { columns: 30, format: 'ansi', color: true, colorDepth: 'truecolor' })).body, a);
  });
  it('256 writes only 38;5;n with n in 16..255, 16 only 30-37 and 90-97', () => {
    for (const color of [true, false]) {
      const c256 = codes(formatResult(render(photo, { columns: 30, format: 'ansi', color, colorDepth: '256' })).body);
      for (const c of c256) assert.ok(c === '0' || /^38;5;(\d+)$/.test(c) && Number(c.slice(5)) >= 16 && Number(c.slice(5)) <= 255, c);
      const c16 = codes(formatResult(render(photo, { columns: 30, format: 'ansi', color, colorDepth: '16' })).body);
      for (const c of c16) assert.ok(c === '0' || /^(3[0-7]|9[0-7])$/.test(c), c);
      if (color) assert.ok(new Set(c16).size > 3 && new Set(c256).size > 10, 'several colours');
    }
  });
  it('chooses the nearest palette colour in OKLab', () => {
    const p256 = paletteOf('256');
    const idx = (rgb: number) => p256.fg[nearestEntry(p256, rgb)];
    assert.equal(idx(0xff0000), '38;5;196');
    assert.equal(idx(0x000000), '38;5;16');
    assert.equal(idx(0x808080), '38;5;244');
    const p16 = paletteOf('16');
    assert.equal(p16.fg[nearestEntry(p16, 0xee1111)], '91');
    assert.equal(p16.fg[nearestEntry(p16, 0x0a0a0a)], '30');
    assert.equal(p16.bg[nearestEntry(p16, 0xe0e0e0)], '47');
    // A dark desaturated blue is nearer, perceptually, to a dark grey than to the bright blue.
    assert.equal(p16.fg[nearestEntry(p16, 0x202030)], '30');
  });
  it('16 colours: every grey stays grey (mid-greys were cyan), a coloured one keeps its hue', () => {
    const p16 = paletteOf('16');
    for (let v = 0; v < 256; v++) assert.match(p16.fg[nearestEntry(p16, v * 0x010101)]!, /^(30|37|90|97)$/, `grey ${v}`);
    assert.equal(p16.fg[nearestEntry(p16, 0xaaaaaa)], '90');
    // Chromatic colours keep the hue they had: a mid blue, a teal-ish sky, a dark red.
    assert.equal(p16.fg[nearestEntry(p16, 0x3060a0)], '94');
    assert.equal(p16.fg[nearestEntry(p16, 0x70b0ff)], '36');
    assert.equal(p16.fg[nearestEntry(p16, 0xa00000)], '31');
  });
  it('colorDither spreads the error: a smooth ramp averages closer to its source', () => {
    const cols = 64, rows = 8;
    const plane = new Uint8Array(cols * rows * 3);
    for (let y = 0; y < rows; y++) for (let x = 0; x < cols; x++) plane.fill(40 + x, (y * cols + x) * 3, (y * cols + x) * 3 + 3);
    const p = paletteOf('16');
    const mean = (e: Uint16Array) => e.reduce((s, k) => s + (p.rgb[k]! & 255), 0) / e.length;
    const src = plane.reduce((s, v) => s + v, 0) / plane.length;
    const flat = quantizePlane(plane, cols, rows, p, false);
    const dith = quantizePlane(plane, cols, rows, p, true);
    assert.ok(Math.abs(mean(dith) - src) < Math.abs(mean(flat) - src), `${mean(dith)} vs ${mean(flat)} for ${src}`);
    const a = formatResult(render(photo, { columns: 30, format: 'ansi', color: true, colorDepth: '16' })).body;
    const b = formatResult(render(photo, { columns: 30, format: 'ansi', color: true, colorDepth: '16', colorDither: true })).body;
    assert.notEqual(a, b);
  });
});

describe('cellAspect in svg', () => {
  it('keeps the picture proportions: the row height follows the cell', () => {
    const img = gradient(200, 100);
    const at = (cellAspect: number) => formatResult(render(img, { columns: 40, format: 'svg', cellAspect })).body;
    assert.match(at(0.5), /viewBox="0 0 240 120"/);
    // 0.6: 12 rows of 10 units; 1.0: 20 rows of 6 units — the same 240 x 120 picture.
    assert.match(at(0.6), /viewBox="0 0 240 120"/);
    assert.match(at(1), /viewBox="0 0 240 120"/);
    assert.match(at(1), /<text x="0" y="6.5"/);
  });
});
