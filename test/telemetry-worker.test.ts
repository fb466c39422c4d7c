/**
 * The render worker runs render() of the core in timed stages (decode, director, render,
 * format) so that spans and metrics can show them: the output must be exactly what render()
 * gives, and every outcome carries its stage times and image facts.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { formatResult } from '../src/core/format/index.js';
import { render } from '../src/core/render.js';
import { DECODE_PIXELS_PER_COLUMN } from '../src/core/pipeline/geometry.js';
import { decodeImage } from '../src/node/index.js';
import { transferableSymbol, valueSymbol } from 'piscina';
import runTask, { runRenderJob, warmUpReport } from '../src/server/render-worker.js';
import { warmUpFailure, warmUpMs } from '../src/server/warm-up.js';
import type { RenderJob } from '../src/server/render-task.js';
import { photo } from './server-helpers.js';

const job = (bytes: Uint8Array, params: Record<string, unknown>, base64 = false): RenderJob => ({
  source: base64 ? { kind: 'base64', text: Buffer.from(bytes).toString('base64') } : { kind: 'bytes', bytes: Uint8Array.from(bytes) },
  params,
  maxBytes: 1 << 24,
  maxPixels: 50_000_000,
  decodeTimeoutSeconds: 10,
});

describe('staged render in the worker', () => {
  const cases: Array<Record<string, unknown>> = [
    {},
    { columns: 40, charset: 'standard' },
    { columns: 33, charset: 'blocks', color: true, format: 'ansi' },
    { columns: 24, charset: 'dots', format: 'json' },
    { columns: 30, edges: true, dither: true, qualityTarget: 'portrait', format: 'json-compact' },
    { columns: 28, autoOptimize: 0, charset: 'binary', invert: true },
    { columns: 36, qualityTarget: 'round-trip', glyphStrategy: 'fixed', format: 'svg' },
  ];
  for (const params of cases) {
    test(`same output as render(): ${JSON.stringify(params)}`, async () => {
      const png = await photo(120, 80, 'png');
      const out = await runRenderJob(job(png, params));
      assert.ok(out.ok, JSON.stringify(out));
      const columns = typeof params.columns === 'number' ? params.columns : 120;
      const decoded = await decodeImage(png, { maxPixels: 50_000_000, maxBytes: 1 << 24, targetWidth: columns * DECODE_PIXELS_PER_COLUMN, timeoutSeconds: 10 });
      const expected = formatResult(render(decoded, params));
      // The worker hands the text over as its UTF-8 bytes.
      assert.equal(new TextDecoder().decode(out.body), expected.body);
      assert.equal(out.contentType, expected.contentType);
    });
  }

  test('the pool\'s task hands the body over as its buffer, moved, not copied: a 30 MB svg was held twice more on the main thread', async () => {
    const png = await photo(100, 60, 'png');
    for (const format of ['svg', 'png'] as const) {
      const task = (await runTask(job(png, { columns: 24, format }))) as unknown as Record<symbol, unknown>;
      const outcome = task[valueSymbol] as { ok: true; body: Uint8Array };
      assert.ok(outcome?.ok, format);
      assert.equal(task[transferableSymbol], outcome.body.buffer, `${format}: the body's own buffer is the one moved`);
    }
    // A failure has no body: it comes back as it is.
    const failed = await runTask(job(png.subarray(0, 100), {}));
    assert.equal(failed.ok, false);
  });

  test('the warm-up tells the pool why it failed where a render of its scene did: such a worker cannot render', async () => {
    const ok = await warmUpReport(runRenderJob);
    assert.ok((warmUpMs(ok) ?? -1) >= 0);
    assert.equal(warmUpFailure(ok), null);
    const failing = await warmUpReport(async () => ({ ok: false, slug: 'internal-error', detail: 'Internal error.', internal: 'RangeError: WebAssembly.Instance(): Out of memory\n    at ownKernels' }));
    assert.equal(warmUpFailure(failing), 'internal-error: RangeError: WebAssembly.Instance(): Out of memory');
    const throwing = await warmUpReport(async () => { throw new Error('sharp did not load'); });
    assert.equal(warmUpFailure(throwing), 'sharp did not load');
  });

  test('stage times are ordered and the image facts are reported', async () => {
    const png = await photo(100, 60, 'png');
    const out = await runRenderJob(job(png, { columns: 20 }, true));
    assert.ok(out.ok);
    const order = ['input', 'decode', 'director', 'render', 'format'] as const;
    let last = out.startedAt;
    for (const stage of order) {
      const t = out.stages[stage];
      assert.ok(t, stage);
      assert.ok(t[0] >= last - 0.001 && t[1] >= t[0], `${stage}: ${t}`);
      last = t[1];
    }
    assert.deepEqual(out.image, { bytes: png.length, format: 'png', width: 100, height: 60 });
    assert.equal(out.charset, 'detailed');
    assert.ok(out.codebook.size > 0);
    assert.ok(Array.isArray(out.adjusted));
    assert.ok(Math.abs(out.startedAt - Date.now()) < 60_000, 'epoch milliseconds');
  });

  test('a failure names its stage and keeps the times of the stages it reached', async () => {
    const png = await photo(100, 60, 'png');
    const out = await runRenderJob(job(png.subarray(0, 100), {}));
    assert.equal(out.ok, false);
    if (out.ok) return;
    assert.equal(out.slug, 'undecodable-image');
    assert.equal(out.failedStage, 'decode');
    assert.ok(out.stages?.decode);
    assert.equal(out.stages?.render, undefined);
    const bad = await runRenderJob({ ...job(png, {}), source: { kind: 'base64', text: '!!!not base64!!!' } });
    assert.equal(bad.ok, false);
    if (bad.ok) return;
    assert.equal(bad.failedStage, 'input');
    assert.equal(bad.slug, 'invalid-base64');
  });
});
