import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parse } from 'parse5';
import { XMLParser, XMLValidator } from 'fast-xml-parser';
import { DEFAULTS, FORMATS, PARAMS, type Charset, type RenderParams } from '../src/core/params/definitions.js';
import { CELL_ASPECT, VERSION, type RenderResult } from '../src/core/types.js';
import { rng } from './helpers/images.js';
import Ajv2020Module from 'ajv/dist/2020.js';

// ajv is CommonJS: its default export may arrive wrapped.
const Ajv2020 = ((Ajv2020Module as unknown as { default?: unknown }).default ?? Ajv2020Module) as typeof Ajv2020Module.default;
import {
  BACKGROUND_ENCODING,
  Base64Error,
  CHROMA_ENCODING,
  CompactDecodeError,
  FORMAT_INFO,
  JSON_COMPACT_OUTPUT_SCHEMA,
  JSON_OUTPUT_SCHEMA,
  buildJsonOutput,
  compactToImage,
  contentTypeHeader,
  decodeBase64,
  decodeBase64Input,
  decodeCompact,
  encodeBase64,
  formatAnsi,
  formatCompact,
  formatHtml,
  formatJson,
  formatResult,
  formatSvg,
  formatText,
  groundFor,
  unwrapBase64,
  type JsonSchema,
} from '../src/core/format/index.js';

// ---------------------------------------------------------------------------------------------
// Fixtures

interface GridSpec {
  /** Rows of glyphs, one string per row (split into code points). */
  readonly rows: readonly string[];
  /** Per row, per cell, 0xRRGGBB; default all grey. */
  readonly colors?: readonly (readonly number[])[];
  readonly params?: Partial<RenderParams>;
  readonly charset?: Charset;
}

/** A synthetic RenderResult: glyph table built from the distinct glyphs, plausible reports. */
function makeResult(spec: GridSpec): RenderResult {
  const lines = spec.rows.map((r) => [...r]);
  const rows = lines.length;
  const columns = lines[0]!.length;
  const glyphs: string[] = [];
  const cells = new Uint16Array(rows * columns);
  const colors = new Uint8Array(rows * columns * 3);
  lines.forEach((line, y) => {
    assert.equal(line.length, columns, 'fixture rows must be equally long');
    line.forEach((g, x) => {
      let k = glyphs.indexOf(g);
      if (k < 0) k = glyphs.push(g) - 1;
      const i = y * columns + x;
      cells[i] = k;
      const c = spec.colors?.[y]?.[x] ?? 0x808080;
      colors[i * 3] = c >>> 16;
      colors[i * 3 + 1] = (c >>> 8) & 255;
      colors[i * 3 + 2] = c & 255;
    });
  });
  const charset = spec.charset ?? 'standard';
  return {
    version: VERSION,
    columns,
    rows,
    glyphs,
    cells,
    colors,
    charset,
    params: { ...DEFAULTS, columns, charset, ...spec.params },
    explicit: ['columns', 'charset'],
    codebook: { strategy: 'adaptive', glyphs: ' .#', size: 3, rampSize: 10, rmse: 0.02, maxRmse: 0.03, bitsPerCell: 1.5 },
    director: {
      status: 'target_met',
      rubric: 'balanced',
      score: 0.82,
      threshold: 0.7,
      strength: 0.9,
      metrics: { ssim: 0.8 },
      source: { noise: 0.1 },
      adjustments: { contrast: { from: 1.15, to: 1.3 } },
    },
    source: { width: 6, height: 6 },
    cellAspect: CELL_ASPECT,
  };
}

const RED = 0xff0000;
const GREEN = 0x00ff00;
const BLUE = 0x0000ff;

/** The 3x2 golden grid: row 0 "#. " red red blue, row 1 " #." green blue red. */
function tiny(color: boolean): RenderResult {
  return makeResult({
    rows: ['#. ', ' #.'],
    colors: [[RED, RED, BLUE], [GREEN, BLUE, RED]],
    params: { color },
  });
}

const codePoints = (s: string): number => [...s].length;
const ESC = '\x1b';

// ---------------------------------------------------------------------------------------------
// The output schemas, checked with a real JSON Schema 2020-12 validator (Ajv, as the server tests).

const ajv = new Ajv2020({ strict: true, allErrors: true });

function validate(schema: JsonSchema, v: unknown): string[] {
  const check = ajv.compile(schema);
  return check(v) ? [] : (check.errors ?? []).map((e) => `${e.instancePath || '$'}: ${e.message ?? e.keyword}`);
}

// ---------------------------------------------------------------------------------------------

describe('format table', () => {
  it('has the six formats of interface.md §2.3', () => {
    assert.deepEqual(Object.keys(FORMAT_INFO).sort(), [...FORMATS].sort());
    assert.deepEqual(FORMAT_INFO.ansi, { contentType: 'text/plain', extension: 'ans', label: 'ANSI, truecolor' });
    assert.deepEqual(FORMAT_INFO['json-compact'], { contentType: 'application/json', extension: 'json', label: 'compact JSON plus chroma', colors: true });
    // The formats that carry a mono render's colours (so it resamples them at once).
    assert.deepEqual(FORMATS.filter((f) => FORMAT_INFO[f].colors), ['json', 'json-compact']);
    assert.equal(FORMAT_INFO.svg.contentType, 'image/svg+xml');
    assert.equal(CHROMA_ENCODING, 'rgb24-b64-v1');
    assert.equal(contentTypeHeader('html'), 'text/html; charset=utf-8');
    assert.equal(contentTypeHeader('text'), 'text/plain; charset=utf-8');
  });

  it('formatResult uses params.format by default and each formatter otherwise', () => {
    const r = makeResult({ rows: ['ab'], params: { format: 'svg' } });
    const out = formatResult(r);
    assert.equal(out.contentType, 'image/svg+xml; charset=utf-8');
    assert.equal(out.extension, 'svg');
    assert.equal(out.body, formatSvg(r));
    assert.equal(formatResult(r, 'text').body, 'ab\n');
    assert.equal(formatResult(r, 'json-compact').body, formatCompact(r));
    assert.equal(formatResult(r, 'json').body, formatJson(r));
    assert.equal(formatResult(r, 'ansi').body, formatAnsi(r));
    assert.equal(formatResult(r, 'html').body, formatHtml(r));
  });
});

describe('golden outputs, 3x2', () => {
  it('text (colour is ignored)', () => {
    assert.equal(formatText(tiny(false)), '#. \n #.\n');
    assert.equal(formatText(tiny(true)), '#. \n #.\n');
  });

  it('ansi, mono', () => {
    assert.equal(
      formatAnsi(tiny(false)),
      `${ESC}[38;2;229;229;229m#. ${ESC}[0m\n${ESC}[38;2;229;229;229m #.${ESC}[0m\n`,
    );
  });

  it('ansi, colour: runs merged, blanks joined, leading blank before any SGR', () => {
    assert.equal(
      formatAnsi(tiny(true)),
      `${ESC}[38;2;255;0;0m#. ${ESC}[0m\n ${ESC}[38;2;0;0;255m#${ESC}[38;2;255;0;0m.${ESC}[0m\n`,
    );
  });

  const label = (colour: boolean): string => `Character art, 3 by 2 characters${colour ? ', in colour' : ''}`;
  const htmlHead = (colour: boolean): string =>
    '<!doctype html>\n' +
    '<html lang="en">\n' +
    '<head>\n' +
    '<meta charset="utf-8">\n' +
    '<meta name="viewport" content="width=device-width, initial-scale=1">\n' +
    '<meta name="generator" content="v2a 0.3.0">\n' +
    `<title>${label(colour)}</title>\n` +
    '<style>\n' +
    'html,body{margin:0;background:#0b0b0b}\n' +
    'pre{margin:0;padding:1em;color:#e5e5e5;background:#0b0b0b;' +
    'font:12px/1.2 "DejaVu Sans Mono","Menlo","Consolas","Liberation Mono",monospace;' +
    'letter-spacing:0;white-space:pre;font-variant-ligatures:none}\n' +
    '</style>\n' +
    '</head>\n' +
    '<body>\n' +
    `<pre role="img" aria-label="${label(colour)}">\n`;
  const HTML_TAIL = '</pre>\n</body>\n</html>\n';

  it('html, mono', () => {
    assert.equal(formatHtml(tiny(false)), htmlHead(false) + '#. \n #.' + HTML_TAIL);
  });

  it('html, colour', () => {
    assert.equal(
      formatHtml(tiny(true)),
      htmlHead(true) +
        '<span style="color:#ff0000">#. </span>\n' +
        ' <span style="color:#0000ff">#</span><span style="color:#ff0000">.</span>' +
        HTML_TAIL,
    );
  });

  const svgHead = (colour: boolean): string =>
    '<?xml version="1.0" encoding="UTF-8"?>\n' +
    '<svg xmlns="http://www.w3.org/2000/svg" version="1.1" width="18" height="24" viewBox="0 0 18 24" ' +
    `role="img" aria-label="${label(colour)}">\n` +
    `<title>${label(colour)}</title>\n` +
    '<rect x="0" y="0" width="18" height="24" fill="#0b0b0b"/>\n' +
    '<g font-family="\'DejaVu Sans Mono\',\'Menlo\',\'Consolas\',\'Liberation Mono\',monospace" font-size="10" ' +
    'fill="#e5e5e5" style="white-space:pre;font-variant-ligatures:none">\n';
  const SVG_TAIL = '</g>\n</svg>\n';
  const row = (y: string, body: string): string =>
    `<text x="0" y="${y}" textLength="18" lengthAdjust="spacing" xml:space="preserve">${body}</text>\n`;

  it('svg, mono', () => {
    assert.equal(formatSvg(tiny(false)), svgHead(false) + row('9.5', '#. ') + row('21.5', ' #.') + SVG_TAIL);
  });

  it('svg, colour', () => {
    assert.equal(
      formatSvg(tiny(true)),
      svgHead(true) +
        row('9.5', '<tspan fill="#ff0000">#. </tspan>') +
        row('21.5', ' <tspan fill="#0000ff">#</tspan><tspan fill="#ff0000">.</tspan>') +
        SVG_TAIL,
    );
  });

  const PARAMS_JSON =
    '{"columns":3,"charset":"standard","format":"text","color":false,"invert":false,"contrast":1.15,' +
    '"brightness":0,"saturation":1.4,"gamma":1,"edges":false,"edgeStrength":1.8,"dither":false,' +
    '"sharpen":0.35,"autoLevels":0.9,"structure":0.55,"denoise":0.35,"motionSensitivity":0.7,' +
    '"autoOptimize":0.9,"qualityTarget":"balanced","glyphStrategy":"adaptive","maxGlyphRmse":0.03,' +
    // Extensions at their defaults are not listed: the contract's parameters alone.
    '"monoColor":"#e5e5e5"}';
  const REPORTS_JSON =
    '"codebook":{"strategy":"adaptive","glyphs":" .#","size":3,"rampSize":10,"rmse":0.02,"maxRmse":0.03,"bitsPerCell":1.5},' +
    '"director":{"status":"target_met","rubric":"balanced","score":0.82,"threshold":0.7,"strength":0.9,' +
    '"metrics":{"ssim":0.8},"source":{"noise":0.1},"adjustments":{"contrast":{"from":1.15,"to":1.3}}},';
  const TAIL_JSON = ',"explicit":["columns","charset"],"source":{"width":6,"height":6}}';

  it('json, mono: no colors member', () => {
    assert.equal(
      formatJson(tiny(false)),
      '{"version":"0.3.0","format":"json","columns":3,"rows":2,"charset":"standard","cellAspect":0.5,' +
        '"lines":["#. "," #."],' +
        REPORTS_JSON +
        '"params":' + PARAMS_JSON + TAIL_JSON,
    );
  });

  it('json, colour: colors per row and cell', () => {
    assert.equal(
      formatJson(tiny(true)),
      '{"version":"0.3.0","format":"json","columns":3,"rows":2,"charset":"standard","cellAspect":0.5,' +
        '"lines":["#. "," #."],' +
        '"colors":[["#ff0000","#ff0000","#0000ff"],["#00ff00","#0000ff","#ff0000"]],' +
        REPORTS_JSON +
        '"params":' + PARAMS_JSON.replace('"color":false', '"color":true') + TAIL_JSON,
    );
  });

  it('json-compact: chroma always present, the same with and without colour', () => {
    // Bytes ff0000 ff0000 0000ff | 00ff00 0000ff ff0000 -> "/wAA" "/wAA" "AAD/" "AP8A" "AAD/" "/wAA".
    const expected =
      '{"v":1,"columns":3,"rows":2,"text":"#. \\n #.\\n",' +
      '"chroma":{"encoding":"rgb24-b64-v1","data":"/wAA/wAAAAD/AP8AAAD//wAA"}}';
    assert.equal(formatCompact(tiny(true)), expected);
    assert.equal(formatCompact(tiny(false)), expected);
  });
});

describe('text', () => {
  it('has exactly columns code points per row with Braille, blocks and astral glyphs', () => {
    const r = makeResult({
      rows: ['\u2800⠿▀█𝄞', '▄▌▐⣿ ', '#𝄞𝄞\u2800.'],
      charset: 'dots',
    });
    const body = formatText(r);
    assert.ok(body.endsWith('\n'));
    const lines = body.slice(0, -1).split('\n');
    assert.equal(lines.length, 3);
    for (const l of lines) assert.equal(codePoints(l), 5);
    assert.equal(lines[0], '\u2800⠿▀█𝄞');
  });

  it('rejects a grid that breaks its invariants', () => {
    const r = makeResult({ rows: ['ab'] });
    assert.throws(() => formatText({ ...r, glyphs: ['ab', 'c'] }), RangeError);
    assert.throws(() => formatText({ ...r, glyphs: ['\n', 'c'] }), RangeError);
    assert.throws(() => formatText({ ...r, glyphs: ['a'] }), RangeError);
    assert.throws(() => formatText({ ...r, cells: new Uint16Array(3) }), RangeError);
    // Colour bytes are checked by the formats that draw them; text never reads them (mono art
    // computes its colours on first read).
    assert.throws(() => formatCompact({ ...r, colors: new Uint8Array(3) }), RangeError);
    assert.throws(() => formatJson({ ...r, colors: new Uint8Array(3) }), RangeError);
    assert.doesNotThrow(() => formatText({ ...r, colors: new Uint8Array(3) }));
  });
});

function randomResult(seed: number, color: boolean): RenderResult {
  const rand = rng(seed);
  const ramp = [' ', '\u2800', '.', ':', '#', '▀', '⠿'];
  const palette = [RED, GREEN, BLUE, 0x123456];
  const columns = 1 + Math.floor(rand() * 20);
  const rows = 1 + Math.floor(rand() * 6);
  const glyphRows: string[] = [];
  const colors: number[][] = [];
  for (let y = 0; y < rows; y++) {
    let s = '';
    const c: number[] = [];
    for (let x = 0; x < columns; x++) {
      s += ramp[Math.floor(rand() * ramp.length)]!;
      // Long-ish runs: keep the previous colour most of the time.
      c.push(x > 0 && rand() < 0.6 ? c[x - 1]! : palette[Math.floor(rand() * palette.length)]!);
    }
    glyphRows.push(s);
    colors.push(c);
  }
  return makeResult({ rows: glyphRows, colors, params: { color } });
}

const SGR = /\x1b\[([0-9;]*)m/g;

describe('ansi', () => {
  it('paints every visible cell in its colour with the fewest SGRs (random grids)', () => {
    for (let seed = 1; seed <= 200; seed++) {
      const r = randomResult(seed, true);
      const body = formatAnsi(r);
      const lines = body.split('\n');
      assert.equal(lines.pop(), '');
      assert.equal(lines.length, r.rows);
      let expectedSgr = 0;
      for (let y = 0; y < r.rows; y++) {
        const line = lines[y]!;
        assert.ok(line.endsWith(`${ESC}[0m`), 'reset at row end');
        // Replay the row like a terminal.
        let current = -1;
        const glyphs: string[] = [];
        const painted: number[] = [];
        let last = 0;
        const consume = (s: string): void => {
          for (const ch of s) {
            glyphs.push(ch);
            painted.push(current);
          }
        };
        for (const m of line.matchAll(SGR)) {
          consume(line.slice(last, m.index));
          last = m.index + m[0].length;
          if (m[1] === '0') current = -1;
          else {
            const [a, b, rr, gg, bb] = m[1]!.split(';').map(Number);
            assert.equal(a, 38);
            assert.equal(b, 2);
            const c = (rr! << 16) | (gg! << 8) | bb!;
            assert.notEqual(c, current, 'no repeated SGR');
            current = c;
          }
        }
        consume(line.slice(last));
        assert.equal(glyphs.length, r.columns);
        let prev = -1;
        for (let x = 0; x < r.columns; x++) {
          const i = y * r.columns + x;
          assert.equal(glyphs[x], r.glyphs[r.cells[i]!]);
          if (glyphs[x] === ' ' || glyphs[x] === '\u2800') continue;
          const c = (r.colors[i * 3]! << 16) | (r.colors[i * 3 + 1]! << 8) | r.colors[i * 3 + 2]!;
          assert.equal(painted[x], c, `cell ${x},${y} painted in its colour`);
          if (c !== prev) expectedSgr++;
          prev = c;
        }
      }
      const sgrCount = [...body.matchAll(SGR)].filter((m) => m[1] !== '0').length;
      assert.equal(sgrCount, expectedSgr, 'one SGR per colour change among visible cells');
    }
  });

  it('uses monoColor for every row when color=false', () => {
    const r = makeResult({ rows: ['ab', 'cd', 'ef'], colors: [[RED, GREEN], [BLUE, RED], [RED, RED]], params: { monoColor: '#102030' } });
    const body = formatAnsi(r);
    const sgrs = [...body.matchAll(SGR)].map((m) => m[1]);
    assert.deepEqual(sgrs, ['38;2;16;32;48', '0', '38;2;16;32;48', '0', '38;2;16;32;48', '0']);
    assert.equal(body.replace(SGR, ''), 'ab\ncd\nef\n');
  });
});

interface P5Node {
  nodeName: string;
  value?: string;
  childNodes?: P5Node[];
  attrs?: { name: string; value: string }[];
}

function findAll(node: P5Node, name: string, out: P5Node[] = []): P5Node[] {
  if (node.nodeName === name) out.push(node);
  for (const c of node.childNodes ?? []) findAll(c, name, out);
  return out;
}
function textOf(node: P5Node): string {
  if (node.nodeName === '#text') return node.value ?? '';
  return (node.childNodes ?? []).map(textOf).join('');
}

function parseHtmlStrict(html: string): P5Node {
  const errors: string[] = [];
  const doc = parse(html, { onParseError: (e) => errors.push(`${e.code} at ${e.startOffset}`) });
  assert.deepEqual(errors, [], 'no HTML parse errors');
  return doc as unknown as P5Node;
}

const NASTY = ['<&"', "'>&", '&<a', '"\'<'];

describe('html', () => {
  for (const color of [false, true]) {
    it(`parses without errors, has no script, and its <pre> holds the text exactly (color=${color})`, () => {
      for (const r of [tiny(color), randomResult(7, color), makeResult({ rows: NASTY, colors: NASTY.map(() => [RED, BLUE, BLUE]), params: { color } })]) {
        const html = formatHtml(r);
        assert.ok(!/<script/i.test(html));
        const doc = parseHtmlStrict(html);
        const pres = findAll(doc, 'pre');
        assert.equal(pres.length, 1);
        assert.equal(textOf(pres[0]!), formatText(r).slice(0, -1));
        assert.equal(findAll(doc, 'title').length, 1);
        assert.equal(findAll(doc, 'span').length > 0, color, 'spans only with colour');
      }
    });
  }

  it('escapes < & " \' > in the art', () => {
    const html = formatHtml(makeResult({ rows: NASTY }));
    assert.ok(html.includes('&lt;&amp;&quot;\n&#39;&gt;&amp;\n&amp;&lt;a\n&quot;&#39;&lt;</pre>'));
  });

  it('picks a light ground under dark ink', () => {
    assert.equal(groundFor('#e5e5e5'), '#0b0b0b');
    assert.equal(groundFor('#222222'), '#fafafa');
    assert.equal(groundFor('#fff'), '#0b0b0b');
    const html = formatHtml(makeResult({ rows: ['ab'], params: { monoColor: '#202020' } }));
    assert.ok(html.includes('html,body{margin:0;background:#fafafa}'));
    assert.ok(html.includes('color:#202020;'));
  });
});

const xml = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: '@', preserveOrder: true, trimValues: false });

describe('svg', () => {
  for (const color of [false, true]) {
    it(`is well-formed XML with root svg, the grid's viewBox and no script (color=${color})`, () => {
      for (const r of [tiny(color), randomResult(11, color), makeResult({ rows: NASTY, colors: NASTY.map(() => [RED, BLUE, GREEN]), params: { color } })]) {
        const svg = formatSvg(r);
        assert.equal(XMLValidator.validate(svg), true);
        assert.ok(!/<script/i.test(svg));
        const tree = xml.parse(svg) as Record<string, unknown>[];
        const root = tree.find((n) => 'svg' in n)!;
        assert.ok(root, 'root element svg');
        const attrs = root[':@'] as Record<string, string>;
        assert.equal(attrs['@xmlns'], 'http://www.w3.org/2000/svg');
        assert.equal(attrs['@viewBox'], `0 0 ${r.columns * 6} ${r.rows * 12}`);
        assert.equal((svg.match(/<text /g) ?? []).length, r.rows);
      }
    });
  }

  it('escapes < & " \' > and the text survives an XML parse', () => {
    const r = makeResult({ rows: NASTY });
    const svg = formatSvg(r);
    assert.ok(svg.includes('xml:space="preserve">&lt;&amp;&quot;</text>'));
    const p = new XMLParser({ ignoreAttributes: true, trimValues: false, processEntities: true, htmlEntities: true });
    const texts = (p.parse(svg) as { svg: { g: { text: string[] } } }).svg.g.text;
    assert.deepEqual(texts, NASTY);
  });
});

describe('json', () => {
  it('has the required fields and matches its schema, with and without colour', () => {
    for (const color of [false, true]) {
      const r = randomResult(5, color);
      const parsed = JSON.parse(formatJson(r)) as Record<string, unknown>;
      for (const k of ['version', 'format', 'columns', 'rows', 'charset', 'cellAspect', 'lines', 'codebook', 'director', 'params', 'explicit', 'source']) {
        assert.ok(k in parsed, k);
      }
      assert.equal(parsed.format, 'json');
      assert.equal('colors' in parsed, color);
      assert.deepEqual(validate(JSON_OUTPUT_SCHEMA, parsed), []);
      assert.deepEqual(parsed, JSON.parse(JSON.stringify(buildJsonOutput(r))));
      const lines = parsed.lines as string[];
      assert.equal(lines.length, r.rows);
      for (const l of lines) assert.equal(codePoints(l), r.columns);
      if (color) {
        const colors = parsed.colors as string[][];
        assert.equal(colors.length, r.rows);
        for (const row of colors) assert.equal(row.length, r.columns);
      }
    }
  });

  it('lists explicit in the parameters\' own order, whatever the order they were given in: the same parameters, the same bytes', () => {
    const r = randomResult(5, false);
    const given = { ...r, explicit: ['invert', 'gamma', 'columns'] };
    const reordered = { ...r, explicit: ['columns', 'invert', 'gamma'] };
    assert.equal(formatJson(given), formatJson(reordered));
    assert.deepEqual((JSON.parse(formatJson(given)) as { explicit: string[] }).explicit, PARAMS.map((d) => d.name).filter((n) => ['invert', 'gamma', 'columns'].includes(n)));
  });

  it('schema params cover every parameter and the checker catches a bad output', () => {
    const props = (JSON_OUTPUT_SCHEMA.properties as Record<string, JsonSchema>).params!.properties as object;
    assert.deepEqual(Object.keys(props), PARAMS.map((d) => d.name));
    const bad = JSON.parse(formatJson(tiny(true))) as Record<string, unknown>;
    bad.rows = 'two';
    (bad.params as Record<string, unknown>).columns = 9999;
    bad.extra = 1;
    assert.equal(validate(JSON_OUTPUT_SCHEMA, bad).length, 3);
  });
});

describe('json-compact', () => {
  it('round-trips exactly through decodeCompact and matches its schema', () => {
    for (let seed = 1; seed <= 50; seed++) {
      const r = randomResult(seed, seed % 2 === 0);
      const body = formatCompact(r);
      const obj = JSON.parse(body) as { chroma: { data: string } };
      assert.deepEqual(validate(JSON_COMPACT_OUTPUT_SCHEMA, obj), []);
      assert.equal(Buffer.from(obj.chroma.data, 'base64').length, r.rows * r.columns * 3);
      for (const input of [body, obj]) {
        const d = decodeCompact(input);
        assert.equal(d.columns, r.columns);
        assert.equal(d.rows, r.rows);
        assert.equal(d.lines.join('\n') + '\n', formatText(r));
        assert.deepEqual(d.rgb, r.colors);
      }
    }
  });

  it('rejects malformed documents with CompactDecodeError', () => {
    const good = JSON.parse(formatCompact(tiny(true))) as Record<string, unknown>;
    const chroma = good.chroma as Record<string, unknown>;
    const variants: [string, unknown][] = [
      ['not JSON', '{"v":1,'],
      ['array', [good]],
      ['wrong version', { ...good, v: 2 }],
      ['missing text', { v: 1, columns: 3, rows: 2, chroma }],
      ['extra member', { ...good, extra: true }],
      // v2a's json output: named by its format, not by the first member json-compact lacks.
      ['the json format', { version: '0.3.0', format: 'json', columns: 3, rows: 2, lines: ['#. ', ' #.'] }],
      ['wrong encoding id', { ...good, chroma: { ...chroma, encoding: 'rgb24-b64-v2' } }],
      ['wrong data length', { ...good, chroma: { ...chroma, data: (chroma.data as string).slice(4) } }],
      ['bad base64', { ...good, chroma: { ...chroma, data: '*' + (chroma.data as string).slice(1) } }],
      ['padding in the middle', { ...good, chroma: { ...chroma, data: 'AA==' + (chroma.data as string).slice(4) } }],
      ['ragged lines', { ...good, text: '#.\n #. \n' }],
      ['short line', { ...good, text: '#. \n #\n' }],
      ['too many rows', { ...good, text: '#. \n #.\n...\n' }],
      ['no trailing newline', { ...good, text: '#. \n #.' }],
      ['control character', { ...good, text: '#.\t\n #.\n' }],
      ['columns not an integer', { ...good, columns: 1.5 }],
      ['rows zero', { ...good, rows: 0 }],
      ['columns mismatch', { ...good, columns: 4 }],
      ['chroma not an object', { ...good, chroma: 'x' }],
    ];
    for (const [name, input] of variants) {
      assert.throws(() => decodeCompact(input as object), CompactDecodeError, name);
    }
    // Code points, not UTF-16 units: an astral glyph is one cell.
    const astral = makeResult({ rows: ['𝄞a', 'b𝄞'] });
    assert.deepEqual(decodeCompact(formatCompact(astral)).lines, ['𝄞a', 'b𝄞']);
    assert.throws(() => decodeCompact({ ...good, text: '\ud834. \n #.\n' }), /lone surrogate/);
    assert.throws(() => decodeCompact({ ...good, chroma: { ...chroma, encoding: 'x' } }), /unsupported chroma encoding "x"/);
    assert.throws(() => decodeCompact({ format: 'json', columns: 3 }), /^CompactDecodeError: invalid json-compact: this is v2a's "json" output, not json-compact$/);
    // Another version is named as such, not by the first v1 member it lacks ("document lacks "columns"").
    assert.throws(() => decodeCompact('{"v":2}'), /^CompactDecodeError: invalid json-compact: unsupported version "v": 2, expected 1$/);
    assert.throws(() => decodeCompact({ v: '1', columns: 1, rows: 1, text: 'x\n', chroma, extra: 1 }), /unsupported version "v": "1", expected 1$/);
    assert.throws(() => decodeCompact({ columns: 1 }), /document lacks "v"$/);
  });

  it('compactToImage rebuilds an image of 1x2 blocks by default', () => {
    const d = decodeCompact(formatCompact(tiny(false)));
    const img = compactToImage(d);
    assert.equal(img.width, 3);
    assert.equal(img.height, 4);
    assert.equal(img.data.length, 3 * 4 * 4);
    const px = (x: number, y: number): number[] => [...img.data.slice((y * img.width + x) * 4, (y * img.width + x) * 4 + 4)];
    assert.deepEqual(px(0, 0), [255, 0, 0, 255]);
    assert.deepEqual(px(0, 1), [255, 0, 0, 255]);
    assert.deepEqual(px(2, 1), [0, 0, 255, 255]);
    assert.deepEqual(px(0, 2), [0, 255, 0, 255]);
    assert.deepEqual(px(0, 3), [0, 255, 0, 255]);
    assert.deepEqual(px(1, 3), [0, 0, 255, 255]);
    assert.deepEqual(px(2, 2), [255, 0, 0, 255]);

    const big = compactToImage(d, { cellWidth: 2, cellHeight: 3 });
    assert.equal(big.width, 6);
    assert.equal(big.height, 6);
    for (let y = 0; y < 6; y++) {
      for (let x = 0; x < 6; x++) {
        const cell = Math.floor(y / 3) * 3 + Math.floor(x / 2);
        const o = (y * 6 + x) * 4;
        assert.deepEqual([...big.data.slice(o, o + 4)], [...d.rgb.slice(cell * 3, cell * 3 + 3), 255], `${x},${y}`);
      }
    }
    assert.throws(() => compactToImage(d, { cellWidth: 0 }), RangeError);
    assert.throws(() => compactToImage(d, { cellHeight: 1.5 }), RangeError);
  });
});

describe('base64', () => {
  it('matches Buffer both ways on random data of lengths 0..100', () => {
    const rand = rng(42);
    for (let n = 0; n <= 100; n++) {
      const bytes = Uint8Array.from({ length: n }, () => Math.floor(rand() * 256));
      const ref = Buffer.from(bytes).toString('base64');
      assert.equal(encodeBase64(bytes), ref, `encode ${n}`);
      assert.deepEqual(decodeBase64(ref), bytes, `decode ${n}`);
    }
    const all = Uint8Array.from({ length: 256 }, (_, i) => i);
    assert.equal(encodeBase64(all), Buffer.from(all).toString('base64'));
    const large = Uint8Array.from({ length: 200_003 }, (_, i) => (i * 7919) & 255);
    assert.equal(encodeBase64(large), Buffer.from(large).toString('base64'));
    assert.deepEqual(decodeBase64(Buffer.from(large).toString('base64')), large);
  });

  it('rejects input that is not strict base64', () => {
    for (const bad of ['a', 'abc', 'abcde', 'ab=c', 'a===', '====', '=abc', 'ab c', 'YQ', 'Y Q==', 'YR==', 'YWI=YWI=',
      'YWJ=', '-_-_', 'YQ==\n', 'Y€==', 'data:text/plain;base64,YQ==']) {
      assert.throws(() => decodeBase64(bad), Base64Error, JSON.stringify(bad));
    }
    assert.deepEqual(decodeBase64(''), new Uint8Array(0));
    // A character outside the alphabet is named before the length: text that is no base64 (a
    // path, a URL) is not told to add padding.
    for (const [text, message] of [['!!!notbase64***', 'unexpected character "!" at offset 0'], ['probe/img/small.png', 'unexpected character "." at offset 15'], ['https://x.example/a.png', 'unexpected character ":" at offset 5']] as const) {
      assert.throws(() => decodeBase64(text), { name: 'Base64Error', message: `invalid base64: ${message}` }, text);
    }
  });

  it('unwraps data: URLs and whitespace only in the separate helper', () => {
    assert.deepEqual(unwrapBase64('data:image/PNG;base64,iVBO\r\nRw0K'), { base64: 'iVBORw0K', mediaType: 'image/png' });
    assert.deepEqual(unwrapBase64('  aGVs\n bG8=\n'), { base64: 'aGVsbG8=', mediaType: null });
    assert.deepEqual(unwrapBase64('DATA:;charset=utf-8;base64,YQ=='), { base64: 'YQ==', mediaType: null });
    assert.deepEqual(decodeBase64Input('data:text/plain;charset=utf-8;base64,aGVs\nbG8='), new TextEncoder().encode('hello'));
    assert.throws(() => decodeBase64Input('data:text/plain,hello'), Base64Error);
  });

  // The decoder reads its input in 64 K-character chunks, two characters a lookup, and leaves
  // the explanation of a refusal to a character-at-a-time twin: both must agree on every input.
  it('decodes and refuses alike across its chunks, naming the offset of a bad character', () => {
    const bytes = Uint8Array.from({ length: 150_001 }, (_, i) => (i * 2654435761) >>> 24);
    const good = Buffer.from(bytes).toString('base64'); // 200 004 characters, one '=' of padding
    assert.deepEqual(decodeBase64(good), bytes);
    for (const at of [0, 1, 2, 3, 65_535, 65_536, 65_537, 131_072, good.length - 5, good.length - 3]) {
      for (const ch of ['*', '=', '€', '\u0100', '\n']) {
        const bad = good.slice(0, at) + ch + good.slice(at + 1);
        const shown = ch === '=' ? "'=' before the end" : `character ${JSON.stringify(ch)}`;
        assert.throws(() => decodeBase64(bad), { name: 'Base64Error', message: `invalid base64: unexpected ${shown} at offset ${at}` }, `${JSON.stringify(ch)} at ${at}`);
      }
    }
    // The last group: canonical pad bits only, '=' only at the end.
    const two = Buffer.from(bytes.subarray(0, 150_002 - 2)).toString('base64'); // '==' padding
    assert.deepEqual(decodeBase64(two), bytes.subarray(0, 150_000));
    for (const bad of [good.slice(0, -2) + 'B=', two.slice(0, -3) + 'B==', good.slice(0, -1) + 'A', good.slice(0, -4) + '====']) {
      assert.throws(() => decodeBase64(bad), Base64Error);
    }
    // Line-wrapped, with a data: URL, over several chunks: the helper takes the whitespace out.
    const wrapped = `data:image/png;base64,${good.replace(/(.{76})/g, '$1\r\n')}\n`;
    assert.deepEqual(decodeBase64Input(wrapped), bytes);
    assert.throws(() => decodeBase64Input(wrapped.replace('\r\n', '\r\n*')), Base64Error);
    assert.throws(() => decodeBase64Input(wrapped + '€'), Base64Error);
  });

  it('decodes an input given as its character codes as it does the string', () => {
    const bytes = Uint8Array.from({ length: 100_000 }, (_, i) => (i * 40503) >>> 8);
    const good = Buffer.from(bytes).toString('base64');
    // Whole, and in parts of 1, 3, 65 536 and 7 bytes (quads straddle them), as a body's chunks come.
    const forms = (s: string): Uint8Array[][] => {
      const b = new TextEncoder().encode(s);
      const parts = [b.subarray(0, 1), b.subarray(1, 4)];
      for (let i = 4; i < b.length; i += 65_543) parts.push(b.subarray(i, i + 65_536), b.subarray(i + 65_536, i + 65_543));
      return [[b], parts];
    };
    for (const text of [good, ` \n${good}\r\n`, `data:image/png;base64,${good}`, `  DATA:image/png;charset=x;BASE64,${good}`,
      good.replace(/(.{76})/g, '$1\n'), `\v${good}`, `\u00a0${good}`, `${good}\ufeff`,
      // Whitespace at the ends that fills whole parts.
      `${' '.repeat(70_000)}${good}${'\n'.repeat(150_000)}`, `${'\t'.repeat(65_540)}data:image/png;base64,${good}`]) {
      for (const codes of forms(text)) assert.deepEqual(decodeBase64Input(codes), decodeBase64Input(text), `${JSON.stringify(text.slice(0, 30))} in ${codes.length}`);
    }
    for (const text of [good.slice(1), `data:image/png,${good}`, `data:image/png;base64${good}`, `${good.slice(0, 70_000)}*${good.slice(70_001)}`,
      `${good.slice(0, 1000)}é${good.slice(1001)}`, `${good.slice(0, -2)}B=`]) {
      let expected: unknown;
      try { decodeBase64Input(text); } catch (e) { expected = e; }
      assert.ok(expected instanceof Base64Error, JSON.stringify(text.slice(0, 30)));
      for (const codes of forms(text)) assert.throws(() => decodeBase64Input(codes), { name: 'Base64Error', message: (expected as Error).message });
    }
    for (const empty of ['', '   ', ' '.repeat(200_000)]) for (const codes of forms(empty)) assert.deepEqual(decodeBase64Input(codes), new Uint8Array(0));
  });
});

// ---------------------------------------------------------------------------------------------
// Extension: two colours per cell (a background plane beside the ink).

describe('background plane (cellColors extension)', () => {
  /** "▀ ▄" over "█ ▀": ink red/-/blue, background green/grey/green; second row one flat cell. */
  function twoColour(): RenderResult {
    const r = makeResult({ rows: ['▀ ▄', '█▀▀'], colors: [[RED, RED, BLUE], [GREEN, BLUE, BLUE]], params: { color: true }, charset: 'blocks' });
    const background = new Uint8Array(r.rows * r.columns * 3);
    const bgs = [GREEN, 0x808080, GREEN, GREEN, RED, RED];
    bgs.forEach((c, i) => { background[i * 3] = c >>> 16; background[i * 3 + 1] = (c >>> 8) & 255; background[i * 3 + 2] = c & 255; });
    return { ...r, background };
  }

  it('ansi: SGR 48 per run of equal ink and background; a blank shows only its background', () => {
    const fg = (c: number) => `${ESC}[38;2;${c >>> 16};${(c >>> 8) & 255};${c & 255}m`;
    const bg = (c: number) => `${ESC}[48;2;${c >>> 16};${(c >>> 8) & 255};${c & 255}m`;
    assert.equal(formatAnsi(twoColour()),
      fg(RED) + bg(GREEN) + '▀' + bg(0x808080) + ' ' + fg(BLUE) + bg(GREEN) + '▄' + `${ESC}[0m\n` +
      fg(GREEN) + bg(GREEN) + '█' + fg(BLUE) + bg(RED) + '▀▀' + `${ESC}[0m\n`);
  });

  it('html and svg draw the background; json and json-compact carry it and match their schemas', () => {
    const r = twoColour();
    const html = formatHtml(r);
    assert.match(html, /<span style="color:#ff0000;background:#00ff00">▀<\/span><span style="background:#808080"> <\/span>/);
    const svg = formatSvg(r);
    assert.ok(XMLValidator.validate(svg) === true);
    assert.match(svg, /<rect x="0" y="0" width="6" height="12" fill="#00ff00"\/>/);
    assert.match(svg, /<rect x="6" y="12" width="12" height="12" fill="#ff0000"\/>/);
    // html: the line pitch follows the cell aspect; blocks lines are stretched to it.
    assert.match(formatHtml({ ...r, cellAspect: 1 }), /font:12px\/1\.16 [^;]*;.*transform:scaleY\(0\.5172\)/);
    assert.match(formatHtml({ ...r, charset: 'standard', cellAspect: 1 }), /font:12px\/0\.6 /);
    assert.match(formatHtml({ ...r, charset: 'standard', cellAspect: 0.25 }), /font:12px\/2\.4 /);
    assert.match(formatHtml({ ...r, charset: 'standard' }), /font:12px\/1\.2 /);
    // Another cell aspect: the rects follow the rows (square cells, 6 units tall; 0.25, 24).
    const square = formatSvg({ ...r, cellAspect: 1 });
    assert.match(square, /viewBox="0 0 18 12"/);
    assert.match(square, /<rect x="6" y="6" width="12" height="6" fill="#ff0000"\/>/);
    assert.match(formatSvg({ ...r, cellAspect: 0.25 }), /<rect x="6" y="24" width="12" height="24" fill="#ff0000"\/>/);
    const json = JSON.parse(formatJson(r)) as Record<string, unknown>;
    assert.deepEqual(json.background, [['#00ff00', '#808080', '#00ff00'], ['#00ff00', '#ff0000', '#ff0000']]);
    // (The fixture's 3 columns are below the parameter's minimum of 8; the grid is what is checked.)
    assert.deepEqual(validate(JSON_OUTPUT_SCHEMA, { ...json, params: { ...(json.params as object), columns: 8 } }), []);
    // Without colour there is no background member even if the grid had one.
    assert.equal('background' in JSON.parse(formatJson({ ...r, params: { ...r.params, color: false } })), false);
    const compact = JSON.parse(formatCompact(r)) as Record<string, { encoding: string; data: string }>;
    assert.deepEqual(validate(JSON_COMPACT_OUTPUT_SCHEMA, compact), []);
    assert.equal(compact.chroma!.encoding, CHROMA_ENCODING);
    assert.equal(compact.background!.encoding, BACKGROUND_ENCODING);
    const d = decodeCompact(compact);
    assert.deepEqual(d.rgb, r.colors);
    assert.deepEqual(d.background, r.background);
    // One-colour documents are unchanged: no background member.
    assert.equal('background' in JSON.parse(formatCompact(tiny(true))), false);
    assert.equal(decodeCompact(formatCompact(tiny(true))).background, undefined);
  });

  it('the decoder refuses a bad background plane, and compactToImage mixes ink and background by coverage', () => {
    const good = JSON.parse(formatCompact(twoColour())) as Record<string, unknown>;
    const plane = good.background as Record<string, unknown>;
    for (const [name, bad] of [
      ['wrong id', { ...plane, encoding: CHROMA_ENCODING }],
      ['short', { ...plane, data: (plane.data as string).slice(4) }],
      ['not an object', 'x'],
      ['extra member', { ...plane, extra: 1 }],
    ] as const) {
      assert.throws(() => decodeCompact({ ...good, background: bad }), CompactDecodeError, name);
    }
    // A line of the CLI's NDJSON frames carries its display time: taken (a number, 0 or more), else refused.
    assert.equal(decodeCompact({ ...good, delayMs: 40 }).delayMs, 40);
    assert.equal(decodeCompact(good).delayMs, undefined);
    for (const bad of [-1, '40', null, Infinity]) assert.throws(() => decodeCompact({ ...good, delayMs: bad }), /"delayMs" must be a number/, String(bad));
    // Bytes are no document: said so, not "lacks v".
    assert.throws(() => decodeCompact(new TextEncoder().encode(formatCompact(twoColour()))), /^TypeError: decodeCompact: pass the document's text .*\(got a Uint8Array\)$/);
    const img = compactToImage(decodeCompact(good), { cellWidth: 1, cellHeight: 1 });
    const px = (x: number, y: number) => Array.from(img.data.subarray((y * 3 + x) * 4, (y * 3 + x) * 4 + 3));
    assert.deepEqual(px(0, 1), [0, 255, 0]); // full block: the ink
    const half = px(0, 0); // upper half block: red ink over green, about half each in linear light
    assert.ok(half[0]! > 150 && half[1]! > 150 && half[2]! === 0, String(half));
    assert.deepEqual(px(1, 0), [128, 128, 128]); // blank: the background
  });
});

describe('the exported format helpers refuse what they cannot use (a library caller\'s JavaScript)', () => {
  it('colours, formats and rows: a TypeError or RangeError naming the fault, not noise or a crash inside', async () => {
    const { hexOfPacked, parseHexColor, groundFor, fileSuffix, contentTypeHeader, rowRuns, rowPairRuns, blankTable } = await import('../src/core/format/index.js');
    const { normalizeHex, parseParams } = await import('../src/core/params/validate.js');
    const { render } = await import('../src/core/render.js');
    assert.equal(hexOfPacked(0xff8000), '#ff8000');
    assert.throws(() => hexOfPacked(-1), (e: unknown) => e instanceof RangeError && /0xffffff \(got -1\)/.test(e.message));
    assert.throws(() => hexOfPacked(0x1000000), RangeError);
    assert.throws(() => parseHexColor('red'), (e: unknown) => e instanceof TypeError && /"red"/.test(e.message));
    assert.throws(() => groundFor('nope'), TypeError);
    assert.equal(normalizeHex('ABC'), '#aabbcc');
    assert.throws(() => normalizeHex('zzz'), (e: unknown) => e instanceof TypeError && /"zzz"/.test(e.message));
    assert.equal(fileSuffix('json-compact'), '.compact.json');
    assert.throws(() => fileSuffix('gif' as never), (e: unknown) => e instanceof TypeError && /text, ansi/.test(e.message) && /"gif"/.test(e.message));
    assert.throws(() => contentTypeHeader('toString' as never), TypeError);
    assert.throws(() => parseParams({ columns: 10 }, 'xml' as never), (e: unknown) => e instanceof TypeError && /carrier/.test(e.message));
    assert.throws(() => parseParams({ columns: 10 }, undefined as never), TypeError);
    const img = { width: 16, height: 16, data: new Uint8Array(16 * 16 * 4).fill(200) };
    const r = render(img, { columns: 8, color: true });
    const blank = blankTable(r.glyphs);
    assert.equal(rowRuns(r, r.glyphs, blank, 0).length >= 1, true);
    assert.throws(() => rowRuns(r, r.glyphs, blank, 9999), (e: unknown) => e instanceof RangeError && /row must be an integer from 0 to/.test(e.message));
    assert.throws(() => rowPairRuns(r, r.glyphs, blank, 0), (e: unknown) => e instanceof TypeError && /no background plane/.test(e.message));
  });
});

describe('clear cells (a transparent source, two colours per cell) in the output schemas', () => {
  it('json\'s null backgrounds and json-compact\'s ground plane validate against the exported schemas', async () => {
    const { render } = await import('../src/core/render.js');
    const { formatResult } = await import('../src/core/format/index.js');
    // A red square in the middle of a transparent 64 x 64 picture.
    const data = new Uint8Array(64 * 64 * 4);
    for (let y = 16; y < 48; y++) for (let x = 16; x < 48; x++) data.set([220, 30, 30, 255], (y * 64 + x) * 4);
    for (const charset of ['blocks', 'dots'] as const) {
      const r = render({ width: 64, height: 64, data }, { columns: 16, charset, color: true });
      assert.ok(r.clear, `${charset}: clear cells`);
      const json = JSON.parse(formatResult(r, 'json').body as string) as { background: (string | null)[][] };
      assert.equal(json.background[0]![0], null);
      assert.deepEqual(validate(JSON_OUTPUT_SCHEMA, json), [], `${charset}: json`);
      assert.deepEqual(validate(JSON_COMPACT_OUTPUT_SCHEMA, JSON.parse(formatResult(r, 'json-compact').body as string)), [], `${charset}: json-compact`);
    }
  });
});
