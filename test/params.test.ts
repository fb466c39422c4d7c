import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DEFAULTS, PARAMS, describeDomain, type ParamDef, kebabName, parseParams, paramsJsonSchema } from '../src/core/params/index.js';
import { render } from '../src/core/render.js';
import { formatResult } from '../src/core/format/index.js';
import { gradient, image, grey, lines, scene, square, withNoise } from './helpers/images.js';
import type { RenderResult } from '../src/core/types.js';
import { parseInteger } from '../src/settings/index.js';
import { getGlyphSet, glyphShape } from '../src/core/glyphs/charsets.js';

const OFF = { autoOptimize: 0 };

/** Displayed ink per cell: the measured coverage of each cell's glyph. */
function tones(r: RenderResult): Float64Array {
  const cov = r.glyphs.map((g) => glyphShape(g)?.coverage ?? 0);
  return Float64Array.from(r.cells, (c) => cov[c]!);
}

const mean = (a: ArrayLike<number>) => { let s = 0; for (let i = 0; i < a.length; i++) s += a[i]!; return s / a.length; };
const std = (a: ArrayLike<number>) => { const m = mean(a); return Math.sqrt(mean(Array.from(a, (v) => (v - m) ** 2))); };
const text = (r: RenderResult) => formatResult(r, 'text').body;

describe('parameter definitions', () => {
  it('list the extensions beyond the contract after it, each documented as one', () => {
    const ext = PARAMS.filter((d) => (d as ParamDef).extension);
    assert.deepEqual(ext.map((d) => [d.name, d.default]), [['glyphs', ''], ['cellAspect', 0.5], ['colorDepth', 'truecolor'], ['colorDither', false], ['cellColors', 'auto'], ['fineShapes', false]]);
    for (const d of ext) assert.match(d.description, /^Extension \(beyond the contract\)/, d.name);
    assert.ok(PARAMS.findIndex((d) => (d as ParamDef).extension) === PARAMS.length - ext.length, 'appended after the contract parameters');
  });

  it('match interface.md §2.2 exactly', () => {
    const expected: Record<string, unknown> = {
      columns: 120, charset: 'detailed', format: 'text', color: false, invert: false, contrast: 1.15, brightness: 0,
      saturation: 1.4, gamma: 1, edges: false, edgeStrength: 1.8, dither: false, sharpen: 0.35, autoLevels: 0.9,
      structure: 0.55, denoise: 0.35, motionSensitivity: 0.7, autoOptimize: 0.9, qualityTarget: 'balanced',
      glyphStrategy: 'adaptive', maxGlyphRmse: 0.03, monoColor: '#e5e5e5',
    };
    const contract = PARAMS.filter((d) => !(d as ParamDef).extension);
    assert.deepEqual(Object.fromEntries(contract.map((d) => [d.name, DEFAULTS[d.name]])), expected);
    // The contract's parameters come first; extensions beyond it (flagged on their definition) after them.
    assert.deepEqual(PARAMS.slice(0, Object.keys(expected).length).map((d) => d.name), Object.keys(expected));
    assert.equal(DEFAULTS.cellColors, 'auto');
    const ranges = Object.fromEntries(contract.filter((d) => 'min' in d).map((d) => [d.name, [(d as { min: number }).min, (d as { max: number }).max]]));
    assert.deepEqual(ranges, {
      columns: [8, 400], contrast: [0.2, 4], brightness: [-150, 150], saturation: [0, 4], gamma: [0.2, 3], edgeStrength: [0.1, 5],
      sharpen: [0, 1], autoLevels: [0, 1], structure: [0, 1], denoise: [0, 1], motionSensitivity: [0, 1], autoOptimize: [0, 1], maxGlyphRmse: [0.005, 0.1],
    });
  });

  it('generate a JSON schema and CLI names for every parameter', () => {
    const s = paramsJsonSchema();
    assert.equal(Object.keys(s.properties).length, PARAMS.length);
    assert.equal(kebabName('edgeStrength'), 'edge-strength');
    assert.match(describeDomain(PARAMS[0]), /integer from 8 to 400/);
  });
});

describe('the glyphs schema', () => {
  it('bounds what validation takes: maxLength is the most glyphs (JSON Schema counts code points, and every measured glyph is one)', () => {
    const glyphs = (n: number) => [' ', ...Array.from({ length: 94 }, (_, i) => String.fromCharCode(0x21 + i)), ...Array.from({ length: n - 95 }, (_, i) => String.fromCodePoint(0x2801 + i))].join('');
    const most = glyphs(256);
    assert.equal([...most].length, 256);
    assert.equal(paramsJsonSchema().properties.glyphs!.maxLength, 256);
    assert.ok(parseParams({ glyphs: most }, 'json').ok);
    assert.ok(!parseParams({ glyphs: glyphs(257) }, 'json').ok);
  });
});

describe('parameter validation', () => {
  const bad: [string, unknown][] = [];
  for (const d of PARAMS) {
    if (d.type === 'integer' || d.type === 'number') bad.push([d.name, d.max + 1], [d.name, d.min - 1], [d.name, 'abc']);
    if (d.type === 'integer') bad.push([d.name, 10.5]);
    if (d.type === 'boolean') bad.push([d.name, 'yes']);
    if (d.type === 'enum') bad.push([d.name, 'nope']);
    if (d.type === 'color') bad.push([d.name, 'red'], [d.name, '#12345']);
  }
  for (const [name, value] of bad) {
    it(`refuses ${name}=${JSON.stringify(value)} naming the parameter and its domain`, () => {
      for (const carrier of ['json', 'strings'] as const) {
        const v = carrier === 'strings' ? String(value) : value;
        const r = parseParams({ [name]: v }, carrier);
        assert.equal(r.ok, false, `${carrier} accepted ${name}=${String(v)}`);
        if (!r.ok) {
          assert.equal(r.errors[0]!.parameter, name);
          assert.match(r.errors[0]!.message, new RegExp(name));
        }
      }
    });
  }
  it('refuses unknown names and wrong JSON types, never clamps', () => {
    const r = parseParams({ colums: 80 }, 'json');
    assert.equal(r.ok, false);
    assert.equal(!r.ok && r.errors[0]!.parameter, 'colums');
    assert.equal(parseParams({ columns: '80' }, 'json').ok, false);
    assert.equal(parseParams({ color: 'true' }, 'json').ok, false);
    assert.throws(() => render(gradient(), { columns: 401 }), /columns must be an integer from 8 to 400/);
  });
  it('refuses an image whose pixel data does not match its size, instead of rendering garbage', () => {
    const img = gradient();
    assert.throws(() => render({ width: 64, height: 64, data: new Uint8ClampedArray(4) }, { columns: 16 }), /image\.data has 4 bytes; a 64 x 64 RGBA image has 16384/);
    assert.throws(() => render({ ...img, data: new Uint8Array(img.data.length + 4) }, { columns: 16 }), RangeError);
    assert.throws(() => render({ width: 10.5, height: 2, data: new Uint8Array(84) }, { columns: 16 }), /image\.width must be a positive integer \(got 10\.5\)/);
    assert.throws(() => render({ width: 2, height: 2, data: [1, 2, 3] as unknown as Uint8Array }, { columns: 16 }), TypeError);
    assert.throws(() => render({ width: 0, height: 2, data: new Uint8Array(0) }, { columns: 16 }), /^RangeError: render: image\.width must be a positive integer \(got 0\)$/);
  });
  it('a JSON array or a non-finite number is a value of the wrong type, named as it was given', () => {
    const message = (input: Record<string, unknown>, carrier: 'json' | 'strings' = 'json') => {
      const r = parseParams(input, carrier);
      assert.equal(r.ok, false);
      return !r.ok ? r.errors.map((e) => `${e.parameter}: ${e.message}`).join('; ') : '';
    };
    assert.equal(message({ columns: [] }), 'columns: columns must be an integer from 8 to 400 (got [])');
    assert.equal(message({ columns: [12] }), 'columns: columns must be an integer from 8 to 400 (got [12])');
    assert.equal(message({ columns: JSON.parse('1e999') }), 'columns: columns must be an integer from 8 to 400 (got Infinity)');
    assert.equal(message({ contrast: NaN }), `contrast: contrast must be ${describeDomain(PARAMS.find((d) => d.name === 'contrast')!)} (got NaN)`);
    // A text carrier's array is a name given more than once (?columns=40&columns=50).
    assert.equal(message({ columns: ['40', '50'] }, 'strings'), 'columns: columns was given more than once');
  });
  it('parses text carriers: numbers, 1/0 booleans, hex colours', () => {
    const r = parseParams({ columns: '80', color: '1', invert: 'false', contrast: '1.5', monoColor: 'ABC' }, 'strings');
    assert.ok(r.ok);
    assert.deepEqual(r.ok && r.params, { columns: 80, color: true, invert: false, contrast: 1.5, monoColor: '#aabbcc' });
    assert.equal(parseParams({ columns: '8e1' }, 'strings').ok, false);
    assert.equal(parseParams({ columns: '' }, 'strings').ok, false);
  });
});

describe('every parameter changes the output as its name promises', () => {
  const img = scene();
  it('columns sets the width; rows follow the aspect with a 1:2 cell', () => {
    const r = render(img, { ...OFF, columns: 40 });
    const rows = text(r).split('\n').slice(0, -1);
    assert.equal(r.columns, 40);
    assert.equal(rows.length, Math.round((40 * 240 * 0.5) / 320));
    for (const row of rows) assert.equal([...row].length, 40);
  });
  it('charset picks the glyph ramp', () => {
    for (const charset of ['standard', 'minimal', 'binary'] as const) {
      const r = render(img, { ...OFF, charset, structure: 0 });
      const allowed = new Set(getGlyphSet(charset).glyphs);
      for (const ch of text(r).replace(/\n/g, '')) assert.ok(allowed.has(ch), `${charset} used ${ch}`);
    }
    const dots = text(render(img, { ...OFF, charset: 'dots' })).replace(/\n/g, '');
    assert.ok([...dots].every((c) => c.codePointAt(0)! >= 0x2800 && c.codePointAt(0)! <= 0x28ff));
  });
  it('binary is two levels, blank and the densest glyph (decisions.md), whatever structure is', () => {
    // structure drew - / | \ into it: 173 of a line drawing's ink cells at the Director's 0.055.
    const allowed = new Set(getGlyphSet('binary').glyphs);
    for (const params of [{}, { structure: 1 }, { ...OFF, structure: 1 }, { fineShapes: true }]) {
      const r = render(img, { charset: 'binary', columns: 60, ...params });
      for (const ch of text(r).replace(/\n/g, '')) assert.ok(allowed.has(ch), `${JSON.stringify(params)} used ${ch}`);
    }
  });
  it('format sets the content type', () => {
    assert.match(formatResult(render(img, { ...OFF, columns: 20, format: 'svg' })).contentType, /image\/svg\+xml/);
  });
  it('color gives per-cell colours in ansi; mono uses monoColor', () => {
    const c = formatResult(render(img, { ...OFF, columns: 40, format: 'ansi', color: true }), 'ansi').body;
    const m = formatResult(render(img, { ...OFF, columns: 40, format: 'ansi', monoColor: '#102030' }), 'ansi').body;
    assert.ok(new Set(c.match(/38;2;\d+;\d+;\d+/g)).size > 10);
    assert.deepEqual([...new Set(m.match(/38;2;\d+;\d+;\d+/g))], ['38;2;16;32;48']);
  });
  it('invert flips the tone mapping', () => {
    const g = gradient();
    const a = tones(render(g, { ...OFF, columns: 40 }));
    const b = tones(render(g, { ...OFF, columns: 40, invert: true }));
    assert.ok(a[0]! < a[39]!, 'bright side dense by default');
    assert.ok(b[0]! > b[39]!, 'dark side dense when inverted');
  });
  it('contrast widens the tonal spread', () => {
    assert.ok(std(tones(render(img, { ...OFF, contrast: 2 }))) > std(tones(render(img, { ...OFF, contrast: 0.5 }))));
  });
  it('brightness adds ink (light ink on a dark ground)', () => {
    assert.ok(mean(tones(render(img, { ...OFF, brightness: 60 }))) > mean(tones(render(img, { ...OFF, brightness: -60 }))) + 0.02);
  });
  it('gamma above 1 lifts the midtones', () => {
    const g = gradient();
    assert.ok(mean(tones(render(g, { ...OFF, gamma: 2 }))) > mean(tones(render(g, { ...OFF, gamma: 0.5 }))) + 0.03);
  });
  it('saturation scales colourfulness', () => {
    const chroma = (r: RenderResult) => { let s = 0; for (let i = 0; i < r.colors.length; i += 3) s += Math.max(r.colors[i]!, r.colors[i + 1]!, r.colors[i + 2]!) - Math.min(r.colors[i]!, r.colors[i + 1]!, r.colors[i + 2]!); return s; };
    const grey0 = render(img, { ...OFF, saturation: 0 });
    assert.equal(chroma(grey0), 0);
    assert.ok(chroma(render(img, { ...OFF, saturation: 3 })) > chroma(render(img, { ...OFF, saturation: 1 })));
  });
  it('edges draws the outline only; edgeStrength adds ink', () => {
    const sq = square();
    const r = render(sq, { ...OFF, columns: 40, edges: true });
    const t = tones(r);
    const at = (x: number, y: number) => t[y * r.columns + x]!;
    assert.equal(at(20, Math.floor(r.rows / 2)), 0, 'interior blank');
    assert.equal(at(2, 2), 0, 'outside blank');
    assert.ok(at(10, Math.floor(r.rows / 2)) > 0, 'left edge drawn');
    assert.ok(mean(tones(render(img, { ...OFF, edges: true, edgeStrength: 4 }))) > mean(tones(render(img, { ...OFF, edges: true, edgeStrength: 0.5 }))));
  });
  it('dither spreads a flat grey over the available levels', () => {
    const flat = image(160, 160, () => grey(128));
    const plain = new Set(text(render(flat, { ...OFF, columns: 32, charset: 'binary', sharpen: 0, autoLevels: 0, contrast: 1 })).replace(/\n/g, ''));
    const dith = text(render(flat, { ...OFF, columns: 32, charset: 'binary', sharpen: 0, autoLevels: 0, contrast: 1, dither: true })).replace(/\n/g, '');
    assert.equal(plain.size, 1);
    const dense = [...dith].filter((c) => c !== ' ').length / dith.length;
    assert.ok(dense > 0.3 && dense < 0.7, `dense share ${dense}`);
  });
  it('sharpen raises local contrast between neighbouring cells', () => {
    const hf = (r: RenderResult) => { const t = tones(r); let s = 0; for (let i = 1; i < t.length; i++) s += Math.abs(t[i]! - t[i - 1]!); return s; };
    assert.ok(hf(render(img, { ...OFF, sharpen: 1 })) > hf(render(img, { ...OFF, sharpen: 0 })));
  });
  it('autoLevels stretches a flat histogram', () => {
    const dull = image(320, 160, (x) => grey(100 + Math.round((50 * x) / 319)));
    assert.ok(std(tones(render(dull, { ...OFF, autoLevels: 1 }))) > 1.5 * std(tones(render(dull, { ...OFF, autoLevels: 0 }))));
  });
  it('structure substitutes - / | \\ along contours', () => {
    const count = (r: RenderResult) => [...text(r)].filter((c) => '-/|\\'.includes(c)).length;
    const l = lines();
    assert.ok(count(render(l, { ...OFF, columns: 60, structure: 1 })) > count(render(l, { ...OFF, columns: 60, structure: 0 })) + 5);
  });
  it('denoise removes noise but keeps a step edge', () => {
    const step = withNoise(image(320, 160, (x) => grey(x < 160 ? 70 : 180)), 12, 3);
    const a = tones(render(step, { ...OFF, denoise: 0, sharpen: 0, columns: 40 }));
    const b = tones(render(step, { ...OFF, denoise: 1, sharpen: 0, columns: 40 }));
    const left = (t: Float64Array) => Array.from(t).filter((_, i) => i % 40 < 18);
    assert.ok(std(left(b)) <= std(left(a)), 'noise does not grow');
    const contrast = (t: Float64Array) => mean(Array.from(t).filter((_, i) => i % 40 > 21)) - mean(left(t));
    assert.ok(contrast(b) > 0.8 * contrast(a), 'edge contrast kept');
  });
  it('glyphStrategy and maxGlyphRmse size the codebook', () => {
    const fixed = render(img, { ...OFF, glyphStrategy: 'fixed' });
    assert.equal(fixed.codebook.size, 95);
    const loose = render(img, { ...OFF, maxGlyphRmse: 0.08 });
    const tight = render(img, { ...OFF, maxGlyphRmse: 0.015 });
    assert.ok(loose.codebook.size < tight.codebook.size);
    assert.ok(loose.codebook.rmse <= 0.08 && tight.codebook.rmse <= 0.015);
    // Below what the whole ramp can reach, the whole ramp is the best codebook, reported honestly.
    const beyond = render(img, { ...OFF, maxGlyphRmse: 0.005 });
    assert.equal(beyond.codebook.size, 95);
    assert.ok(beyond.codebook.rmse > 0.005);
    const used = new Set(text(loose).replace(/\n/g, ''));
    for (const ch of used) assert.ok(loose.codebook.glyphs.includes(ch) || '-/|\\'.includes(ch), `${ch} outside the codebook`);
  });
  it('autoOptimize tunes only what the caller left unset; 0 turns it off', () => {
    const dark = image(320, 240, (x, y) => grey(10 + Math.round((50 * (x + y)) / 560)));
    const off = render(dark, { autoOptimize: 0 });
    assert.deepEqual(off.director.adjustments, {});
    assert.deepEqual(off.params, { ...DEFAULTS, autoOptimize: 0 });
    const on = render(dark, { gamma: 1 });
    assert.ok(Object.keys(on.director.adjustments).length > 0);
    assert.equal(on.params.gamma, 1, 'explicit gamma untouched');
    assert.ok(!('gamma' in on.director.adjustments));
    // structure: aimed at 0 unless the caller asks for it (decided on bench:quality), scaled by
    // autoOptimize like every adjustment; a value given is kept.
    const aimed = Math.round(DEFAULTS.structure * (1 - DEFAULTS.autoOptimize) * 1000) / 1000;
    assert.deepEqual(on.director.adjustments.structure, { from: DEFAULTS.structure, to: aimed });
    assert.equal(render(dark, { structure: 0.7 }).params.structure, 0.7);
  });
  it('the Director tunes saturation only where colours show: colour art and the round-trip rubric', () => {
    // A grey image: colour art raises its saturation (proposed 1.7), mono art leaves it alone.
    const flatGrey = image(320, 240, (x, y) => grey(40 + Math.round((150 * (x + y)) / 560)));
    const scaled = (v: number) => Math.round((DEFAULTS.saturation + DEFAULTS.autoOptimize * (v - DEFAULTS.saturation)) * 1000) / 1000;
    const colour = render(flatGrey, { columns: 60, color: true });
    assert.deepEqual(colour.director.adjustments.saturation, { from: DEFAULTS.saturation, to: scaled(1.7) });
    const mono = render(flatGrey, { columns: 60 });
    assert.ok(!('saturation' in mono.director.adjustments));
    assert.equal(mono.params.saturation, DEFAULTS.saturation);
    // The round-trip rubric decodes json-compact's chroma: saturation 1 reproduces it, mono or not.
    for (const color of [false, true]) {
      assert.deepEqual(render(flatGrey, { columns: 60, color, qualityTarget: 'round-trip' }).director.adjustments.saturation, { from: DEFAULTS.saturation, to: scaled(1) });
    }
    // The glyphs are mono art's alone: the same as with saturation left at its default by hand.
    assert.deepEqual(mono.cells, render(flatGrey, { columns: 60, saturation: DEFAULTS.saturation }).cells);
  });
  it('balanced holds a crisp contrast (2.2-2.8) for crisp shapes, unless that crushes a region', () => {
    const scaled = (c: number) => Math.round((DEFAULTS.contrast + DEFAULTS.autoOptimize * (c - DEFAULTS.contrast)) * 1000) / 1000;
    const ladder = [2.2, 2.4, 2.6, 2.8].map(scaled);
    const held = render(scene(320, 240), { columns: 80 });
    assert.ok(ladder.includes(held.params.contrast), `contrast ${held.params.contrast}`);
    // At that contrast sharpening is aimed at 0 (scaled by autoOptimize like every adjustment).
    assert.equal(held.params.sharpen, Math.round(DEFAULTS.sharpen * (1 - DEFAULTS.autoOptimize) * 1000) / 1000);
    // A dark sky with a bright tower: at 2.2 and above the sky's gradient would go blank.
    const darkSky = image(320, 240, (x, y) => (Math.abs(x - 160) < 6 && y > 60 ? grey(230) : grey(20 + Math.round((40 * y) / 240))));
    const sky = render(darkSky, { columns: 80 });
    assert.ok(sky.params.contrast < ladder[0]!, `contrast ${sky.params.contrast}`);
    // Other rubrics search contrast freely; a contrast given is kept.
    assert.ok(!ladder.includes(render(scene(320, 240), { columns: 80, qualityTarget: 'portrait' }).params.contrast));
    assert.equal(render(scene(320, 240), { columns: 80, contrast: 1.5 }).params.contrast, 1.5);
    // A sharpen given is kept at the crisp contrast too, and autoOptimize 0 turns the search off.
    const given = render(scene(320, 240), { columns: 80, sharpen: 0.5 });
    assert.equal(given.params.sharpen, 0.5);
    assert.ok(ladder.includes(given.params.contrast), `contrast ${given.params.contrast}`);
    assert.equal(render(scene(320, 240), { columns: 80, autoOptimize: 0 }).params.contrast, DEFAULTS.contrast);
  });
  it('qualityTarget chooses the rubric', () => {
    const r = render(img, { qualityTarget: 'low-light' });
    assert.equal(r.director.rubric, 'low-light');
    assert.ok(['target_met', 'best_effort'].includes(r.director.status));
    assert.ok(render(img, { qualityTarget: 'round-trip' }).director.metrics.roundTrip! > render(img, { qualityTarget: 'balanced', color: true }).director.metrics.roundTrip!);
  });
  it('monoColor colours html and svg ink', () => {
    assert.match(formatResult(render(img, { ...OFF, columns: 20, format: 'html', monoColor: '#ff8800' }), 'html').body, /#ff8800/);
    assert.match(formatResult(render(img, { ...OFF, columns: 20, format: 'svg', monoColor: '#ff8800' }), 'svg').body, /#ff8800/);
  });
});

describe('settings: the one integer/size parser', () => {
  const range = { min: 1, max: 1024 ** 3, size: true };
  it('digits, separators and byte units', () => {
    assert.equal(parseInteger('16777216', range), 16777216);
    assert.equal(parseInteger(' 16_777_216 ', range), 16777216);
    assert.equal(parseInteger('16MiB', range), 16 * 1024 ** 2);
    assert.equal(parseInteger('512k', range), 512_000);
    assert.equal(parseInteger('1 GiB', range), 1024 ** 3);
  });
  it('refuses what is not a whole number in range, naming the range', () => {
    for (const bad of ['', '-1', '1.5', '0x10', '16_', '_16', '2GiB', '16 furlongs', '1e6', '0']) {
      assert.throws(() => parseInteger(bad, range), /must be an integer from 1 to 1073741824/, JSON.stringify(bad));
    }
    assert.throws(() => parseInteger('16k', { min: 1, max: 100000 }), /must be an integer from 1 to 100000$/);
  });
});
