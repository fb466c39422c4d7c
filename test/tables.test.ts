/**
 * The build's tables (src/core/tables.generated.ts, scripts/build-tables.ts) are the run-time code's
 * own results: the same bits as computing them now, so a stale generated file fails here.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { precomputed } from '../src/core/tables.js';
import { computeEncLut, encLut } from '../src/core/pipeline/linear.js';
import { computeFineTable, fineTable, FINE_BLUR_PASSES } from '../src/core/pipeline/refine.js';
import { computeGlyphSet, computeGlyphTextures, customGlyphSet, getGlyphSet, glyphTextures } from '../src/core/glyphs/charsets.js';

/** Bitwise equality of two typed arrays of the same kind. */
function sameBits(a: Float32Array | Float64Array, b: Float32Array | Float64Array, what: string): void {
  assert.equal(a.constructor, b.constructor, `${what}: element type`);
  assert.equal(a.length, b.length, `${what}: length`);
  assert.deepEqual(new Uint8Array(a.buffer, a.byteOffset, a.byteLength), new Uint8Array(b.buffer, b.byteOffset, b.byteLength), what);
}

describe('precomputed tables', () => {
  it('are there: the build (pretest, npm run build) generated them', () => {
    assert.ok(precomputed(), 'src/core/tables.generated.ts holds tables (run npm run build:wasm)');
  });

  it('the sRGB encoding table is the kernel\'s', () => {
    sameBits(encLut(), computeEncLut(), 'encLut');
  });

  it('the default charset\'s glyph set and textures are the font data\'s', () => {
    const got = getGlyphSet('detailed'), want = computeGlyphSet('detailed');
    assert.deepEqual(got.glyphs, want.glyphs);
    assert.equal(got.kind, want.kind);
    assert.equal(got.key, want.key);
    sameBits(got.coverage, want.coverage, 'detailed coverage');
    sameBits(got.templates, want.templates, 'detailed templates');
    sameBits(glyphTextures(got.glyphs), computeGlyphTextures(got.glyphs), 'detailed textures');
  });

  it('each ramp\'s fine table (and a custom ramp\'s, in its own order) is the computed one', () => {
    const ramps = [getGlyphSet('detailed').glyphs, getGlyphSet('standard').glyphs, customGlyphSet('detailed', '@%#*+=-:. ').glyphs, ['-', '|', '/', '\\', ' ', 'M']];
    for (const glyphs of ramps) {
      const got = fineTable(glyphs), want = computeFineTable(glyphs, FINE_BLUR_PASSES);
      for (const k of ['templates', 'g2', 'gm', 'spread', 'blocks', 'blockStats', 'taps'] as const) sameBits(got[k], want[k], `${glyphs.join('')} ${k}`);
    }
  });
});
