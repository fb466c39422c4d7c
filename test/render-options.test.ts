/**
 * render()'s options come from callers of the public API too: glyph indices that would send the
 * WebAssembly kernels past their tables are a RangeError naming the option, never a trap.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { render, type RgbaImage } from '../src/core/index.js';

function image(width = 64, height = 48): RgbaImage {
  const data = new Uint8ClampedArray(width * height * 4);
  for (let i = 0; i < width * height; i++) data.set([(i * 7) & 255, (i * 3) & 255, (i * 11) & 255, 255], i * 4);
  return { width, height, data };
}

test('a codebook with indices outside the charset, or a previous frame of another grid, is a RangeError naming the option', () => {
  const img = image();
  const ok = render(img, { columns: 16 });
  for (const codebook of [new Int32Array([9999]), new Int32Array([-1]), new Int32Array([])]) {
    assert.throws(() => render(img, { columns: 16 }, { codebook }), (e: Error) => e instanceof RangeError && /codebook/.test(e.message), String(codebook));
  }
  assert.throws(() => render(img, { columns: 16 }, { previous: new Uint16Array(3) }), (e: Error) => e instanceof RangeError && /previous must be a Uint16Array of the grid's \d+ cells/.test(e.message));
  // Valid ones render; the process carries on as before.
  assert.equal(render(img, { columns: 16 }, { previous: new Uint16Array(ok.columns * ok.rows) }).columns, 16);
  assert.deepEqual(render(img, { columns: 16 }).cells, ok.cells);
});

test('the error table is exported: a caller narrows on code without deep imports', async () => {
  const core = await import('../src/core/index.js');
  let caught: unknown;
  try {
    core.render(image(), { columns: 2 });
  } catch (err) {
    caught = err;
  }
  assert.ok(core.isV2aError(caught) && caught instanceof core.V2aError);
  assert.equal(caught.code, 'invalid-parameters');
  assert.equal(core.ERRORS[caught.code].status, 400);
});
