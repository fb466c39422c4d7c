/**
 * The markup and ANSI formats write bytes (src/core/format/bytes.ts): each document must equal,
 * byte for byte, what the string formats before them wrote (test/reference/markup-formats.ts),
 * over renders of every kind of grid: mono and colour, one and two colours per cell, palettes with
 * and without dithering, glyphs that markup must escape, other cell aspects.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FORMATS, formatBytes, formatResult, render } from '../src/core/index.js';
import { ByteWriter, glyphBytes } from '../src/core/format/bytes.js';
import { textDecoder } from '../src/core/text-codec.js';
import { ansiBytes } from '../src/core/format/ansi.js';
import { htmlBytes } from '../src/core/format/html.js';
import { svgBytes } from '../src/core/format/svg.js';
import { refAnsi, refHtml, refSvg } from './reference/markup-formats.js';
import { rng } from './helpers/images.js';

/** A w x h RGBA image: noise over a gradient, so runs are both long and one cell short. */
function picture(w: number, h: number, seed: number): { width: number; height: number; data: Uint8Array } {
  const next = rng(seed);
  const data = new Uint8Array(w * h * 4);
  for (let i = 0; i < w * h; i++) {
    const x = i % w, flat = next() < 0.5;
    for (let c = 0; c < 3; c++) data[i * 4 + c] = flat ? Math.round((x / w) * 255) & 0xf0 : Math.floor(next() * 256);
    data[i * 4 + 3] = 255;
  }
  return { width: w, height: h, data };
}

const CASES: Array<Record<string, unknown>> = [
  { columns: 24 },
  { columns: 24, color: true },
  { columns: 31, color: true, charset: 'blocks' },
  { columns: 31, color: true, charset: 'blocks', cellColors: 'fg' },
  { columns: 20, color: true, charset: 'dots', cellColors: 'fg-bg' },
  { columns: 27, color: true, charset: 'standard', cellColors: 'fg-bg' },
  { columns: 22, color: true, colorDepth: '256' },
  { columns: 22, color: true, colorDepth: '16', colorDither: true },
  { columns: 22, color: true, charset: 'blocks', colorDepth: '256', colorDither: true },
  { columns: 18, color: true, glyphs: ' <>&"\'' },
  { columns: 18, glyphs: ' <>&"\'', monoColor: '#102030' },
  { columns: 25, color: true, cellAspect: 0.37 },
  { columns: 25, charset: 'detailed', cellAspect: 0.8, invert: true },
];

describe('markup and ANSI written as bytes', () => {
  for (const [k, params] of CASES.entries()) {
    it(`equals the string formats: ${JSON.stringify(params)}`, () => {
      const r = render(picture(96 + k * 7, 64 + k * 3, k + 1), params);
      for (const [name, bytes, ref] of [['svg', svgBytes, refSvg], ['html', htmlBytes, refHtml], ['ansi', ansiBytes, refAnsi]] as const) {
        const want = ref(r);
        const got = bytes(r);
        assert.equal(textDecoder().decode(got), want, name);
        // The bytes are the string's UTF-8 (what the server sends), and formatResult gives the same string.
        assert.deepEqual(got, new TextEncoder().encode(want), `${name}: UTF-8`);
        assert.equal(formatResult(r, name).body, want, `${name}: formatResult`);
      }
      // formatBytes: every format, as formatResult's body in UTF-8 (png's bytes as they are).
      for (const f of FORMATS) {
        const text = formatResult(r, f), bytes = formatBytes(r, f);
        assert.deepEqual(bytes.body, typeof text.body === 'string' ? new TextEncoder().encode(text.body) : text.body, f);
        assert.deepEqual([bytes.contentType, bytes.extension], [text.contentType, text.extension], f);
      }
    });
  }

  it('ByteWriter writes text as TextEncoder does, integers as String does, colours as hex', () => {
    const w = new ByteWriter(4);
    // Lone surrogates become U+FFFD, as TextEncoder writes them; a pair is one code point.
    const texts = ['a', 'é', '€', '😀', '\ud800x', 'x\udc00', '\u2800', 'z\ud83d'];
    const ints = [0, 9, 10, 42, 99, 100, 255, 999, 1000, 2400, 65535, 123456789, Number.MAX_SAFE_INTEGER, 2 ** 60, 1e21, -1, 12.5, Number.NaN];
    const hexes = [0, 0xabcdef, 0x0f00f0, 0xffffff];
    for (const t of texts) w.text(t);
    for (const v of ints) w.uint(v);
    for (const c of hexes) w.hex6(c);
    const table = glyphBytes(['<', '&amp;', '▀', '😀']);
    w.glyphs(Uint16Array.of(0, 3, 1, 2, 2), 1, 5, table);
    const want = texts.join('') + ints.map(String).join('') + hexes.map((c) => c.toString(16).padStart(6, '0')).join('') + '😀&amp;▀▀';
    assert.deepEqual(w.done(), new TextEncoder().encode(want));
    assert.deepEqual(new ByteWriter().done(), new Uint8Array(0));
  });
});
