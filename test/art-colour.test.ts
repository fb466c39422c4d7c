import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { render } from '../src/core/render.js';
import { formatResult, decodeCompact, compactToImage } from '../src/core/format/index.js';
import { glyphShape } from '../src/core/glyphs/charsets.js';
import { colorTransform } from '../src/core/pipeline/colors.js';
// The scalar twin of the cell-colour kernel (bit-identical, test/wasm-kernels.test.ts): one colour in linear light.
import { transformColor } from './reference/colors.js';
import { image, scene } from './helpers/images.js';
import type { RgbaImage } from '../src/core/types.js';

const lin = (c: number) => { const v = c / 255; return v <= 0.04045 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; };

/** An image of 8 x 16 px cells, each split into a left and a right half of two colours. */
function halves(cols: number, rows: number, left: readonly number[], right: readonly number[]): RgbaImage {
  const w = cols * 8, h = rows * 16;
  const data = new Uint8Array(w * h * 4);
  for (let y = 0; y < h; y++) for (let x = 0; x < w; x++) data.set([...(x % 8 < 4 ? left : right), 255], (y * w + x) * 4);
  return { width: w, height: h, data };
}

describe('two colours per cell (cellColors)', () => {
  it('blocks+colour: each cell is the half block with the exact pair of colours', () => {
    const img = halves(8, 4, [200, 40, 30], [20, 60, 180]);
    const r = render(img, { columns: 8, charset: 'blocks', color: true, autoOptimize: 0, saturation: 1, contrast: 1, autoLevels: 0 });
    assert.ok(r.background, 'a background plane');
    for (let i = 0; i < r.cells.length; i++) {
      const g = r.glyphs[r.cells[i]!];
      // The lighter colour is the ink: left red is lighter than right blue here.
      assert.equal(g, '▌', `cell ${i}: ${g}`);
      // Within a few levels: the measured ▌ covers a little more than half its cell (overhang).
      const near = (a: Uint8Array, want: number[]) => want.every((v, k) => Math.abs(a[i * 3 + k]! - v) <= 4);
      assert.ok(near(r.colors, [200, 40, 30]), `ink ${Array.from(r.colors.subarray(i * 3, i * 3 + 3))}`);
      assert.ok(near(r.background, [20, 60, 180]), `background ${Array.from(r.background.subarray(i * 3, i * 3 + 3))}`);
    }
    assert.match(formatResult(r, 'ansi').body, /\x1b\[48;2;20;60;180m/);
  });

  it('a custom ramp under blocks or dots has two-colour glyphs of its own, whatever was rendered before (both orders)', () => {
    const img = scene(96, 72, 3);
    const custom = { columns: 30, color: true, glyphs: ' .oO@' } as const;
    // Each render alone in a fresh cache is the reference; here they run in both orders.
    for (const charset of ['blocks', 'dots'] as const) {
      const plainFirst = render(img, { columns: 30, charset, color: true });
      const customAfter = render(img, { ...custom, charset });
      assert.ok(Array.from(customAfter.cells).every((c) => c < customAfter.glyphs.length), `${charset}: cells index the custom ramp`);
      assert.ok(Array.from(customAfter.cells).some((c) => customAfter.glyphs[c] !== ' '), `${charset}: some ink`);
      const plainAfter = render(img, { columns: 30, charset, color: true });
      assert.deepEqual(plainAfter.cells, plainFirst.cells, `${charset}: the charset's own render is unchanged by the custom one`);
      assert.deepEqual(plainAfter.glyphs, plainFirst.glyphs);
      assert.deepEqual(render(img, { ...custom, charset }).cells, customAfter.cells);
    }
  });

  it('not for plain text, which shows no colour: render() with format text and the render job give color=false\'s glyphs', async () => {
    const { runJob } = await import('../src/core/job.js');
    const img = scene(96, 72, 3);
    for (const charset of ['blocks', 'dots'] as const) {
      const mono = formatResult(render(img, { columns: 24, charset }), 'text').body;
      assert.equal(formatResult(render(img, { columns: 24, charset, color: true, format: 'text' })).body, mono, charset);
      assert.equal((await runJob({ kind: 'image', image: img }, { columns: 24, charset, color: true }, { limits: { maxBytes: 1 << 20, maxPixels: 1 << 20 } })).output.body, mono, `${charset}: job`);
      // Rendered without a format, a result may be formatted in any: it keeps two colours.
      assert.ok(render(img, { columns: 24, charset, color: true }).background, charset);
      // Frames too (v2a play --format text --color, the studio's temporal path).
      const { FrameRenderer } = await import('../src/core/video.js');
      assert.equal(formatResult(new FrameRenderer({ columns: 24, charset, color: true, format: 'text' }).render(img), 'text').body,
        formatResult(new FrameRenderer({ columns: 24, charset, format: 'text' }).render(img), 'text').body, `${charset}: frames`);
    }
  });

  it('is on by default for blocks and dots with colour, off for ASCII, for mono, and with cellColors=fg', () => {
    const img = scene(96, 72, 3);
    assert.ok(render(img, { columns: 16, charset: 'blocks', color: true }).background);
    assert.ok(render(img, { columns: 16, charset: 'dots', color: true }).background);
    assert.equal(render(img, { columns: 16, color: true }).background, undefined);
    assert.ok(render(img, { columns: 16, color: true, cellColors: 'fg-bg' }).background);
    assert.equal(render(img, { columns: 16, charset: 'blocks', color: true, cellColors: 'fg' }).background, undefined);
    assert.equal(render(img, { columns: 16, charset: 'blocks' }).background, undefined);
    assert.throws(() => render(img, { columns: 16, cellColors: 'both' }), /cellColors/);
  });

  it('the Director scores what a two-colour cell shows, ink and background mixed: fidelity near 1 where the cells\' colours match the source (a glyph\'s coverage alone read 0 to 0.4, and best_effort)', () => {
    const gradient = image(200, 100, (x, y) => [(x * 255) / 200, (y * 255) / 100, 128]);
    for (const img of [gradient, scene(160, 120, 5)]) {
      for (const charset of ['blocks', 'dots'] as const) {
        const two = render(img, { columns: 60, charset, color: true });
        assert.ok(two.background, 'two colours per cell');
        const d = two.director!;
        assert.ok(d.metrics.fidelity! >= 0.95, `${charset}: fidelity ${d.metrics.fidelity}`);
        assert.equal(d.status, 'target_met', `${charset}: ${d.status} ${d.score}`);
      }
    }
  });

  it('reproduces the cells of a photo-like scene closely (mean colour per cell, decoded from json-compact)', () => {
    const img = scene(160, 120, 7);
    const r = render(img, { columns: 20, charset: 'blocks', color: true, format: 'json-compact', autoOptimize: 0, saturation: 1, contrast: 1, autoLevels: 0 });
    const shown = compactToImage(decodeCompact(formatResult(r).body), { cellWidth: 1, cellHeight: 1 });
    // Source cell means in linear light.
    const cw = 160 / 20, ch = 120 / r.rows;
    let err = 0;
    for (let cy = 0; cy < r.rows; cy++) {
      for (let cx = 0; cx < 20; cx++) {
        for (let k = 0; k < 3; k++) {
          let s = 0, n = 0;
          for (let y = Math.floor(cy * ch); y < Math.floor((cy + 1) * ch); y++) for (let x = cx * cw; x < (cx + 1) * cw; x++) { s += lin(img.data[(y * 160 + x) * 4 + k]!); n++; }
          err += Math.abs(lin(shown.data[(cy * 20 + cx) * 4 + k]!) - s / n);
        }
      }
    }
    assert.ok(err / (r.rows * 20 * 3) < 0.02, `mean linear error ${err / (r.rows * 20 * 3)}`);
  });
});

describe('colour carries tone once', () => {
  it('a saturated colour the tone curve lifts keeps its hue and chroma: pure red, green and blue ramps are not inked white', () => {
    for (const [name, c] of [['red', 0], ['green', 1], ['blue', 2]] as const) {
      const w = 64, h = 32, data = new Uint8Array(w * h * 4);
      for (let i = 0; i < w * h; i++) { data[i * 4 + c] = Math.round((255 * (i % w)) / (w - 1)); data[i * 4 + 3] = 255; }
      // At defaults: auto-levels lift the ramp's top (luminance 0.07-0.72) toward white.
      for (const charset of ['standard', 'blocks'] as const) {
        const r = render({ width: w, height: h, data }, { columns: 16, color: true, charset });
        for (let i = 0; i < r.cells.length; i++) {
          const rgb = Array.from(r.colors.subarray(i * 3, i * 3 + 3));
          if (Math.max(...rgb) < 128) continue;
          // Its own channel leads by far (OKLab keeps blue's hue with a little green: #0037ff).
          assert.ok(rgb.every((v, k) => k === c || v <= rgb[c]! / 3), `${name} ${charset} cell ${i}: ink ${rgb}`);
        }
      }
    }
  });

  it('ink-only colour: coverage x ink matches a mid-grey source instead of darkening it twice', () => {
    const data = new Uint8Array(64 * 32 * 4).fill(128);
    for (let i = 3; i < data.length; i += 4) data[i] = 255;
    const img: RgbaImage = { width: 64, height: 32, data };
    const r = render(img, { columns: 16, color: true, autoOptimize: 0, contrast: 1, autoLevels: 0 });
    const g = r.glyphs[r.cells[0]!]!;
    const cov = glyphShape(g)!.coverage;
    const shown = cov * lin(r.colors[0]!);
    // The glyph alone is dimmer than the source; with the ink brightened the cell is as bright
    // as it can be (white ink) or matches.
    assert.ok(shown <= lin(128) + 0.01);
    assert.ok(r.colors[0]! === 255 || Math.abs(shown - lin(128)) < 0.01, `ink ${r.colors[0]}, glyph ${g} (${cov})`);
    // Without colour the chroma is the cell's own colour (the round trip stays exact).
    const mono = render(img, { columns: 16, autoOptimize: 0, contrast: 1, autoLevels: 0 });
    assert.ok(Math.abs(mono.colors[0]! - 128) <= 1);
  });

  it('saturation scales chroma in OKLab and keeps the hue; 0 is grey', () => {
    const t = (s: number) => colorTransform(s, { lo: 0, hi: 1, contrast: 1, brightness: 0, gamma: 1, invert: false });
    const out = new Float64Array(3);
    // OKLab hue angle (Ottosson's matrices).
    const hue = (c: Float64Array) => {
      const l = Math.cbrt(0.4122214708 * c[0]! + 0.5363325363 * c[1]! + 0.0514459929 * c[2]!);
      const m = Math.cbrt(0.2119034982 * c[0]! + 0.6806995451 * c[1]! + 0.1073969566 * c[2]!);
      const s = Math.cbrt(0.0883024619 * c[0]! + 0.2817188376 * c[1]! + 0.6299787005 * c[2]!);
      return Math.atan2(0.0259040371 * l + 0.7827717662 * m - 0.808675766 * s, 1.9779984951 * l - 2.428592205 * m + 0.4505937099 * s);
    };
    transformColor(t(1), 0.4, 0.2, 0.1, out);
    const h1 = hue(out);
    transformColor(t(1.4), 0.4, 0.2, 0.1, out);
    assert.ok(Math.abs(hue(out) - h1) < 0.01, `hue kept: ${hue(out)} vs ${h1}`);
    assert.ok(out[0]! - out[2]! > 0.3, 'more chroma');
    transformColor(t(0), 0.4, 0.2, 0.1, out);
    assert.ok(Math.abs(out[0]! - out[2]!) < 1e-3, 'grey');
  });
});

/** A red disc on a transparent ground (alpha 0 outside, 255 inside), cols x rows cells of 8 x 16 px. */
function disc(cols: number, rows: number): RgbaImage {
  const w = cols * 8, h = rows * 16, data = new Uint8Array(w * h * 4);
  for (let y = 0; y < h; y++) for (let x = 0; x < w; x++) {
    if ((x - w / 2) ** 2 + (y - h / 2) ** 2 < (h / 3) ** 2) data.set([220, 40, 40, 255], (y * w + x) * 4);
  }
  return { width: w, height: h, data };
}

describe('two colours per cell over a transparent source', () => {
  const params = { columns: 20, charset: 'blocks', color: true } as const;
  /** Cell i of the disc's grid lies wholly outside the disc (all its pixels transparent). */
  const outside = (i: number) => {
    const w = 160, h = 160, cx = i % 20, cy = Math.floor(i / 20), r = h / 3;
    // The cell's nearest point to the centre.
    const nx = Math.max(cx * 8, Math.min(w / 2, cx * 8 + 7)), ny = Math.max(cy * 16, Math.min(h / 2, cy * 16 + 15));
    return (nx - w / 2) ** 2 + (ny - h / 2) ** 2 >= r * r + 2 * r;
  };

  it('no black box: cells transparent throughout are blank, at the disc\'s edge the glyph draws the opaque part; both show the terminal\'s own background (ESC[49m)', () => {
    const r = render(disc(20, 10), params);
    assert.ok(r.clear, 'a clear plane');
    let edges = 0;
    for (let i = 0; i < r.cells.length; i++) {
      const g = r.glyphs[r.cells[i]!]!;
      if (outside(i)) {
        assert.equal(r.clear[i], 1, `cell ${i} outside the disc is clear`);
        assert.equal(g, ' ', `cell ${i} outside the disc is blank`);
      } else if (r.clear[i] && g !== ' ') {
        edges++;
        // Drawn in the disc's red, not darkened by the black it was composited over.
        const ink = Array.from(r.colors.subarray(i * 3, i * 3 + 3));
        assert.ok(ink[0]! > 180 && ink[1]! < 90, `edge cell ${i} inked ${ink}`);
      }
    }
    assert.ok(edges >= 8, `the disc's edge cells draw its shape over the viewer's ground (${edges})`);
    // The middle of the disc keeps two colours of its own.
    assert.equal(r.clear[5 * 20 + 10], 0);
    const ansi = formatResult(r, 'ansi').body;
    assert.match(ansi.split('\n')[0]!, /^\x1b\[49m {20}\x1b\[0m$/, 'a row of ground alone: default background, no colour');
    assert.doesNotMatch(ansi, /48;2;0;0;0/, 'no black background anywhere');
    assert.match(ansi, /\x1b\[48;2;\d+;\d+;\d+m/, 'the disc keeps its backgrounds');
  });

  it('html and svg paint no background there, png the document\'s ground, json says null', () => {
    const r = render(disc(20, 10), params);
    const html = formatResult(r, 'html').body;
    const lines = html.split('\n');
    const firstRow = lines[lines.findIndex((l) => l.startsWith('<pre')) + 1]!;
    assert.equal(firstRow, ' '.repeat(20), 'no span over a clear row');
    assert.doesNotMatch(html, /background:#000000/);
    const svg = formatResult(r, 'svg').body;
    // The document's ground is one rect of the whole picture; the first row of cells (all clear) gets none.
    assert.doesNotMatch(svg, /<rect x="\d+" y="0" width="\d+" height="12"/, 'no cell rect over the clear first row');
    assert.match(svg, /<rect x="\d+" y="60" width="\d+" height="12" fill="#[0-9a-f]{6}"/, 'the disc\'s middle row has its own');
    const json = JSON.parse(formatResult(r, 'json').body) as { background: (string | null)[][] };
    assert.equal(json.background[0]![0], null);
    assert.match(json.background[5]![10]!, /^#[0-9a-f]{6}$/);
    const clearPng = formatResult(r, 'png');
    // The same grid without the flags draws the composited black there.
    const { clear: _, ...boxed } = r;
    const boxedPng = formatResult(boxed as typeof r, 'png');
    assert.notDeepEqual(clearPng.body, boxedPng.body);
  });

  it('edges of a small image drawn larger, translucent areas and thin strokes still show; json-compact keeps the ground under clear cells', () => {
    // 10 x 10 px, a hard-edged square in its middle: fewer pixels than the grid's samples (40 x 40).
    const small = { width: 10, height: 10, data: new Uint8Array(400) };
    for (let y = 3; y < 7; y++) for (let x = 3; x < 7; x++) small.data.set([30, 200, 60, 255], (y * 10 + x) * 4);
    const a = render(small, { columns: 10, charset: 'blocks', color: true });
    const inked = (r: typeof a) => [...r.cells].filter((g) => r.glyphs[g] !== ' ').length;
    assert.ok(inked(a) >= 4, `the square is drawn (${inked(a)} cells)`);
    assert.ok(a.clear && a.clear[0] === 1 && a.clear[2 * 10 + 5] === 0, 'ground clear, the square\'s middle (10 x 5 cells) its own');
    // Alpha 100 of 255 everywhere: drawn in its colour over the viewer's ground, not dropped.
    const faint = { width: 40, height: 40, data: new Uint8Array(40 * 40 * 4).map((_, i) => (i % 4 === 3 ? 100 : i % 4 === 0 ? 240 : 20)) };
    const f = render(faint, { columns: 10, charset: 'blocks', color: true });
    assert.ok(f.clear && f.clear.every((v) => v === 1));
    assert.equal(inked(f), f.cells.length, 'every cell inked');
    assert.ok(f.colors[0]! > 200 && f.colors[1]! < 60, `in the source's red (${Array.from(f.colors.subarray(0, 3))})`);
    // Alpha 200 everywhere: evenly translucent, drawn as opaque (two colours of its own), not as shade glyphs.
    const even = render({ ...faint, data: faint.data.map((v, i) => (i % 4 === 3 ? 200 : v)) }, { columns: 10, charset: 'blocks', color: true });
    assert.equal(even.clear, undefined);
    // A 2 px white line across a transparent ground, between the samples' rows: still drawn.
    const line = { width: 200, height: 100, data: new Uint8Array(200 * 100 * 4) };
    for (let y = 49; y < 51; y++) for (let x = 0; x < 200; x++) line.data.set([255, 255, 255, 255], (y * 200 + x) * 4);
    const l = render(line, { columns: 20, charset: 'blocks', color: true });
    assert.ok(inked(l) >= 20, `the line is drawn across (${inked(l)} cells)`);
    // json-compact has no clear flags: its background plane holds the ground there (black; white with invert).
    const d = render(disc(20, 10), params);
    const doc = decodeCompact(formatResult(d, 'json-compact').body);
    assert.deepEqual(Array.from(doc.background!.subarray(0, 3)), [0, 0, 0]);
    const inv = render(disc(20, 10), { ...params, invert: true });
    assert.deepEqual(Array.from(decodeCompact(formatResult(inv, 'json-compact').body).background!.subarray(0, 3)), [255, 255, 255]);
  });

  it('Braille: an edge cell\'s dots are those of its opaque part (a fit to the dots\' masks drew every edge as a full ⣿)', () => {
    const r = render(disc(40, 20), { columns: 40, charset: 'dots', color: true });
    assert.ok(r.clear);
    const edge = [...r.cells.keys()].filter((i) => r.clear![i] && r.glyphs[r.cells[i]!] !== '\u2800');
    assert.ok(edge.length >= 16, `edge cells drawn (${edge.length})`);
    const full = edge.filter((i) => r.glyphs[r.cells[i]!] === '\u28ff').length;
    assert.ok(full < edge.length / 4, `${full} of ${edge.length} edge cells are full`);
    // The disc's top edge: dots in the lower half of the cell, where the disc is.
    const top = Math.min(...edge);
    const bits = r.glyphs[r.cells[top]!]!.codePointAt(0)! - 0x2800;
    assert.ok((bits & 0xc0) !== 0, `the top edge cell ${r.glyphs[r.cells[top]!]} has its lowest dots`);
  });

  it('Braille over a faint area: as many dots a cell as its coverage is eighths, not one', () => {
    const faint = { width: 80, height: 80, data: new Uint8Array(80 * 80 * 4).map((_, i) => (i % 4 === 3 ? 80 : i % 4 === 0 ? 240 : 20)) };
    const r = render(faint, { columns: 20, charset: 'dots', color: true });
    assert.ok(r.clear && r.clear.every((v) => v === 1));
    // Alpha 80 of 255: about 0.31 of each cell shows, so 2 or 3 dots of 8.
    const dots = [...r.cells].map((g) => (r.glyphs[g]!.codePointAt(0)! - 0x2800).toString(2).replace(/0/g, '').length);
    assert.ok(dots.every((k) => k >= 2 && k <= 3), `dots per cell: ${[...new Set(dots)]}`);
  });

  it('a 1 px transparent frame round an opaque picture: Braille border cells stay opaque (not full ⣿ on the viewer\'s ground), on every side alike', () => {
    for (const [w, h] of [[800, 600], [1600, 1200]] as const) {
      const data = new Uint8Array(w * h * 4);
      for (let y = 0; y < h; y++) for (let x = 0; x < w; x++) {
        const o = (y * w + x) * 4;
        data.set([180, 90, 40, x === 0 || y === 0 || x === w - 1 || y === h - 1 ? 0 : 255], o);
      }
      const r = render({ width: w, height: h, data }, { columns: 50, charset: 'dots', color: true });
      const clearFull = [...r.cells.keys()].filter((i) => r.clear?.[i] && r.glyphs[r.cells[i]!] === '\u28ff');
      assert.deepEqual(clearFull, [], `${w} x ${h}: clear full cells`);
    }
  });

  it('an image marked opaque (a decoder without an alpha band) is not looked through', () => {
    const img = disc(20, 10);
    assert.equal(render({ ...img, opaque: true }, params).clear, undefined);
    assert.throws(() => render({ ...img, opaque: 'yes' as never }, params), (e: unknown) => e instanceof TypeError && /image\.opaque/.test(e.message));
  });

  it('an opaque source (alpha 255, or 240 throughout), or one colour per cell, has no clear plane and the same cells', () => {
    const opaque = halves(8, 4, [200, 40, 30], [20, 60, 180]);
    const almost = { ...opaque, data: opaque.data.map((v, i) => (i % 4 === 3 ? 240 : v)) };
    const a = render(opaque, { columns: 8, charset: 'blocks', color: true }), b = render(almost, { columns: 8, charset: 'blocks', color: true });
    assert.equal(a.clear, undefined);
    assert.equal(b.clear, undefined);
    assert.deepEqual(b.cells, a.cells);
    assert.equal(render(disc(20, 10), { ...params, cellColors: 'fg' }).clear, undefined);
    assert.equal(render(disc(20, 10), { columns: 20, charset: 'blocks' }).clear, undefined);
  });
});
