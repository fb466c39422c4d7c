import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { CHARSETS } from '../src/core/params/definitions.js';
import { DIRECTIONAL_CHARS, MEASURED_CELL_ASPECT, REFERENCE_FONT, getGlyphSet, glyphShape } from '../src/core/glyphs/charsets.js';
import { SAMPLES, SUB_X, SUB_Y } from '../src/core/glyphs/types.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

/** Template of a measured glyph. */
function tpl(ch: string): Float32Array {
  const s = glyphShape(ch);
  assert.ok(s, `no shape for ${JSON.stringify(ch)}`);
  return s.template;
}

/** Mean template value over sub-cell rows [r0, r1) and columns [c0, c1). */
function region(t: Float32Array, r0: number, r1: number, c0: number, c1: number): number {
  let s = 0;
  for (let r = r0; r < r1; r++) for (let c = c0; c < c1; c++) s += t[r * SUB_X + c]!;
  return s / ((r1 - r0) * (c1 - c0));
}

/** Ink centroid (0..1, 0..1) of a template. */
function centroid(t: Float32Array): { x: number; y: number } {
  let m = 0, x = 0, y = 0;
  for (let r = 0; r < SUB_Y; r++) {
    for (let c = 0; c < SUB_X; c++) {
      const v = t[r * SUB_X + c]!;
      m += v;
      x += v * (c + 0.5) / SUB_X;
      y += v * (r + 0.5) / SUB_Y;
    }
  }
  return { x: x / m, y: y / m };
}

const EXPECTED_SIZES = { standard: 10, minimal: 6, detailed: 95, binary: 2, blocks: 33, dots: 256 } as const;

test('every charset has the documented glyphs, blank first with coverage 0', () => {
  for (const name of CHARSETS) {
    const set = getGlyphSet(name);
    assert.equal(set.name, name);
    assert.equal(set.glyphs.length, EXPECTED_SIZES[name], name);
    assert.equal(new Set(set.glyphs).size, set.glyphs.length, `${name} has duplicates`);
    assert.equal(set.glyphs[0], name === 'dots' ? '\u2800' : ' ', name);
    assert.equal(set.coverage[0], 0, name);
    assert.equal(set.coverage.length, set.glyphs.length);
    assert.equal(set.templates.length, set.glyphs.length * SAMPLES, name);
    for (const v of set.templates) assert.ok(v >= 0 && v <= 1, `${name}: template value ${v}`);
    for (const v of set.coverage) assert.ok(v >= 0 && v <= 1, `${name}: coverage ${v}`);
    assert.equal(getGlyphSet(name), set, 'cached');
  }
  assert.deepEqual([...getGlyphSet('standard').glyphs].sort(), [...' .:-=+*#%@'].sort());
  assert.deepEqual([...getGlyphSet('minimal').glyphs].sort(), [...' .:-+*'].sort());
  assert.deepEqual([...getGlyphSet('blocks').glyphs].sort(), [...' ░▒▓█▀▄▌▐▖▗▘▝▙▚▛▜▞▟▁▂▃▅▆▇▏▎▍▋▊▉▔▕'].sort());
  const ascii = Array.from({ length: 95 }, (_, i) => String.fromCharCode(0x20 + i));
  assert.deepEqual([...getGlyphSet('detailed').glyphs].sort(), ascii.sort());
});

test('ramps are sorted by measured coverage ascending, ties by code point', () => {
  for (const name of CHARSETS.filter((n) => n !== 'dots')) {
    const set = getGlyphSet(name);
    for (let i = 1; i < set.glyphs.length; i++) {
      const a = set.coverage[i - 1]!, b = set.coverage[i]!;
      assert.ok(a < b || (a === b && set.glyphs[i - 1]!.codePointAt(0)! < set.glyphs[i]!.codePointAt(0)!),
        `${name}: ${set.glyphs[i - 1]} (${a}) before ${set.glyphs[i]} (${b})`);
    }
    assert.equal(set.kind, name === 'blocks' ? 'blocks' : 'ramp');
    set.glyphs.forEach((ch, i) => {
      assert.equal(set.coverage[i], Math.fround(glyphShape(ch)!.coverage));
      assert.deepEqual(set.templates.subarray(i * SAMPLES, (i + 1) * SAMPLES), tpl(ch));
    });
  }
});

test('binary is blank plus the densest printable ASCII glyph', () => {
  const detailed = getGlyphSet('detailed');
  const binary = getGlyphSet('binary');
  assert.equal(binary.glyphs[1], detailed.glyphs[detailed.glyphs.length - 1]);
  assert.equal(binary.coverage[1], Math.max(...detailed.coverage));
});

test('dots: the 256 Braille patterns in code-point order (index = dot bits)', () => {
  const dots = getGlyphSet('dots');
  assert.equal(dots.kind, 'braille');
  dots.glyphs.forEach((ch, i) => assert.equal(ch.codePointAt(0), 0x2800 + i));
  // Coverage grows with the number of dots.
  assert.ok(dots.coverage[0xff]! > dots.coverage[0x0f]! && dots.coverage[0x0f]! > dots.coverage[0x01]!);
});

test('coverage is the mean of the template', () => {
  for (const ch of getGlyphSet('detailed').glyphs.concat(getGlyphSet('blocks').glyphs, getGlyphSet('dots').glyphs)) {
    const t = tpl(ch);
    const mean = t.reduce((a, b) => a + b, 0) / SAMPLES;
    assert.ok(Math.abs(mean - glyphShape(ch)!.coverage) < 0.005, `${ch}: ${mean} vs ${glyphShape(ch)!.coverage}`);
  }
});

test('glyph shapes come from the real font: placement in the cell', () => {
  // '_' only in the bottom row, '^' only in the top half.
  const under = tpl('_');
  assert.equal(region(under, 0, SUB_Y - 1, 0, SUB_X), 0);
  assert.ok(region(under, SUB_Y - 1, SUB_Y, 0, SUB_X) > 0.15);
  const caret = tpl('^');
  assert.ok(region(caret, 0, SUB_Y / 2, 0, SUB_X) > 0.05);
  assert.equal(region(caret, SUB_Y / 2, SUB_Y, 0, SUB_X), 0);
  // '|' in the middle columns.
  const bar = tpl('|');
  assert.ok(region(bar, 1, SUB_Y, 1, 3) > 0.2);
  assert.ok(region(bar, 0, SUB_Y, 0, 1) + region(bar, 0, SUB_Y, 3, 4) < 0.01);
  // '-' in the middle rows.
  const dash = tpl('-');
  assert.ok(region(dash, 3, 6, 0, SUB_X) > 0.05);
  assert.equal(region(dash, 0, 2, 0, SUB_X) + region(dash, 7, 8, 0, SUB_X), 0);
  // '/' top-right and bottom-left, '\' the other diagonal.
  const tl = (t: Float32Array) => region(t, 0, 4, 0, 2), tr = (t: Float32Array) => region(t, 0, 4, 2, 4);
  const bl = (t: Float32Array) => region(t, 4, 8, 0, 2), br = (t: Float32Array) => region(t, 4, 8, 2, 4);
  const slash = tpl('/');
  assert.ok(tr(slash) + bl(slash) > 2 * (tl(slash) + br(slash)));
  const back = tpl('\\');
  assert.ok(tl(back) + br(back) > 2 * (tr(back) + bl(back)));
  // Blocks fill exactly their part of the cell.
  assert.ok(glyphShape('█')!.coverage > 0.98);
  assert.ok(region(tpl('▀'), 0, SUB_Y / 2, 0, SUB_X) > 0.97);
  assert.ok(region(tpl('▀'), SUB_Y / 2, SUB_Y, 0, SUB_X) < 0.01);
  assert.ok(region(tpl('▄'), SUB_Y / 2, SUB_Y, 0, SUB_X) > 0.97);
  assert.ok(region(tpl('▌'), 0, SUB_Y, 0, SUB_X / 2) > 0.97);
  assert.ok(region(tpl('▐'), 0, SUB_Y, 0, SUB_X / 2) < 0.01);
  assert.ok(region(tpl('▗'), SUB_Y / 2, SUB_Y, SUB_X / 2, SUB_X) > 0.97);
  assert.ok(glyphShape('▗')!.coverage < 0.26);
  const shades = ['░', '▒', '▓'].map((c) => glyphShape(c)!.coverage);
  assert.ok(shades[0]! < shades[1]! && shades[1]! < shades[2]! && shades[2]! < 1);
});

test('Braille dots follow the Unicode layout (1-2-3 and 7 left, 4-5-6 and 8 right, top-down)', () => {
  // dot k (1-based) -> bit k-1; [column, row] of each dot.
  const layout: Array<[number, number]> = [[0, 0], [0, 1], [0, 2], [1, 0], [1, 1], [1, 2], [0, 3], [1, 3]];
  layout.forEach(([col, row], bit) => {
    const c = centroid(tpl(String.fromCodePoint(0x2800 + (1 << bit))));
    assert.equal(c.x < 0.5 ? 0 : 1, col, `dot ${bit + 1} column`);
    assert.ok(Math.abs(c.y - (row + 0.5) / 4) < 0.125, `dot ${bit + 1} row: centroid y ${c.y}`);
  });
  // U+2801 (dot 1) only in the top-left quadrant, U+2880 (dot 8) only in the bottom-right one.
  const d1 = tpl('\u2801');
  assert.ok(region(d1, 0, 2, 0, 2) > 0.1);
  assert.ok(region(d1, 2, 8, 0, 4) + region(d1, 0, 2, 2, 4) < 0.002); // antialiasing only
  const d8 = tpl('\u2880');
  assert.ok(region(d8, 6, 8, 2, 4) > 0.1);
  assert.ok(region(d8, 0, 6, 0, 4) + region(d8, 6, 8, 0, 2) < 0.002);
  // Centred in the cell: the left and right dot columns are mirror images in coverage.
  const full = tpl('\u28ff');
  assert.ok(Math.abs(region(full, 0, 8, 0, 2) - region(full, 0, 8, 2, 4)) < 0.02);
});

test('directional glyphs', () => {
  const detailed = getGlyphSet('detailed');
  // The detailed ramp holds all four; the shorter ramps lack some, which the renderer adds.
  for (const ch of Object.values(DIRECTIONAL_CHARS)) assert.ok(detailed.glyphs.includes(ch), ch);
  for (const name of ['standard', 'minimal', 'binary'] as const) {
    assert.ok(Object.values(DIRECTIONAL_CHARS).some((ch) => !getGlyphSet(name).glyphs.includes(ch)), name);
  }
  for (const ch of Object.values(DIRECTIONAL_CHARS)) {
    const s = glyphShape(ch);
    assert.ok(s && s.coverage > 0 && s.template.length === SAMPLES);
  }
  // glyphShape returns a copy.
  glyphShape('/')!.template.fill(9);
  assert.ok(glyphShape('/')!.template.every((v) => v <= 1));
  assert.equal(glyphShape('é'), undefined);
});

test('font identity and measured cell aspect', () => {
  assert.equal(REFERENCE_FONT.family, 'DejaVu Sans Mono');
  assert.ok(Math.abs(MEASURED_CELL_ASPECT - 1233 / 2384) < 1e-4);
});

test('font-data.generated.ts is current (npm run glyphs -- --check)', { timeout: 180_000 }, async () => {
  const { code, stdout, stderr } = await new Promise<{ code: number; stdout: string; stderr: string }>((done) => {
    execFile(process.execPath, ['--import', 'tsx', 'scripts/measure-glyphs.ts', '--check'],
      { cwd: ROOT, timeout: 170_000 }, (err, stdout, stderr) => done({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr }));
  });
  assert.equal(code, 0, `--check failed:\n${stdout}\n${stderr}`);
  assert.match(stdout, /is current/);
});
