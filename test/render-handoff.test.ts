/**
 * Handing an image to a render worker: what moves (transfer) and what is copied, an upload
 * given as the chunks of its multipart body renders exactly like the same bytes in one piece,
 * and the render service hands a form to the pool as its chunks, never joined on the event loop.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { loadConfig } from '../src/server/config.js';
import { createRenderPool, forTransfer, type RenderPool } from '../src/server/render-pool.js';
import { createRenderService } from '../src/server/render-service.js';
import { INLINE_BODY_BYTES } from '../src/server/request-body.js';
import type { BodyJob, RenderJob, RenderOutcome, RenderSource } from '../src/server/render-task.js';
import { photo } from './server-helpers.js';

const LIMITS = { maxBytes: 1 << 24, maxPixels: 50_000_000, decodeTimeoutSeconds: 30 };
const job = (source: RenderSource): RenderJob => ({ source, params: { columns: 60, format: 'json-compact' }, ...LIMITS });
const BOUNDARY = 'handoff-boundary';
const formJob = (chunks: readonly Uint8Array[]): BodyJob => ({
  body: { type: 'form', chunks, contentType: `multipart/form-data; boundary=${BOUNDARY}`, query: { columns: '60', format: 'json-compact' } }, ...LIMITS,
});
/** A multipart body with the file field image, as curl -F sends it. */
const multipart = (image: Uint8Array): Buffer => Buffer.concat([
  Buffer.from(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="image"; filename="a.jpg"\r\nContent-Type: image/jpeg\r\n\r\n`),
  image,
  Buffer.from(`\r\n--${BOUNDARY}--\r\n`),
]);

describe('render hand-off', () => {
  test('bytes owning their buffer move; views into a larger buffer are copied first', () => {
    const own = new Uint8Array(64);
    const a = forTransfer(job({ kind: 'bytes', bytes: own }));
    assert.deepEqual(a.transferList, [own.buffer]);
    const big = new Uint8Array(100);
    const view = big.subarray(10, 50);
    const b = forTransfer(job({ kind: 'bytes', bytes: view }));
    assert.equal(b.transferList.length, 1);
    assert.notEqual(b.transferList[0], big.buffer);
    assert.equal((b.task.source as { bytes: Uint8Array }).bytes.byteLength, 40);
  });

  test('a form\'s chunks: whole-buffer chunks move, partial views and repeated buffers are copied, each buffer listed once', () => {
    const whole1 = new Uint8Array([1, 2, 3]);
    const whole2 = new Uint8Array([4, 5]);
    const shared = new Uint8Array([9, 6, 7, 8, 9]);
    const chunks = [whole1, shared.subarray(1, 4), whole2, whole2];
    const { task, transferList } = forTransfer(formJob(chunks));
    const sent = task.body.chunks;
    assert.deepEqual(sent.map((c) => [...c]), [[1, 2, 3], [6, 7, 8], [4, 5], [4, 5]]);
    assert.equal(new Set(transferList).size, transferList.length);
    assert.ok(transferList.includes(whole1.buffer as ArrayBuffer) && transferList.includes(whole2.buffer as ArrayBuffer));
    assert.ok(!transferList.includes(shared.buffer as ArrayBuffer), 'a view into a larger buffer is not moved');
    assert.equal(transferList.length, 4);
  });

  test('a lifted imageBase64 (its text in parts): movable parts move with their buffers; others, or parts sharing a buffer, go as one copy', () => {
    const a = new Uint8Array(Buffer.from('QUJD'));
    const b = new Uint8Array(Buffer.from('REVG'));
    const moved = forTransfer(job({ kind: 'base64', text: [a, b], movable: true }));
    assert.deepEqual(moved.transferList, [a.buffer, b.buffer]);
    assert.deepEqual((moved.task.source as { text: readonly Uint8Array[] }).text, [a, b]);
    const shared = new Uint8Array(Buffer.from('xQUJDREVGx'));
    for (const source of [
      { kind: 'base64', text: [a, b] } as const,
      { kind: 'base64', text: [shared.subarray(1, 5), shared.subarray(5, 9)], movable: true } as const,
    ]) {
      const { task, transferList } = forTransfer(job(source));
      const text = (task.source as { text: readonly Uint8Array[] }).text;
      assert.equal(text.length, 1);
      assert.equal(Buffer.from(text[0]!).toString('latin1'), 'QUJDREVG');
      assert.deepEqual(transferList, [text[0]!.buffer]);
      assert.ok(!transferList.includes(shared.buffer as ArrayBuffer) && !transferList.includes(a.buffer as ArrayBuffer));
    }
    // A string goes as it is.
    assert.deepEqual(forTransfer(job({ kind: 'base64', text: 'QUJD' })).transferList, []);
  });

  test('an upload as the chunks of its form renders the same as in one piece, and the moved chunks are detached', { timeout: 60_000 }, async () => {
    const jpeg = new Uint8Array(await photo(320, 200, 'jpeg'));
    const pool = createRenderPool({ workers: 1, queueLimit: 4, timeoutMs: 30_000 });
    try {
      const whole = await pool.run(job({ kind: 'bytes', bytes: jpeg.slice() }));
      const body = multipart(jpeg);
      const chunks: Uint8Array[] = [];
      for (let o = 0; o < body.length; o += 1000) chunks.push(new Uint8Array(body.subarray(o, o + 1000)));
      const split = await pool.runBody(formJob(chunks));
      assert.ok(whole.ok && split.ok === true);
      assert.deepEqual(split.body, whole.body);
      assert.equal(split.image?.bytes, jpeg.length);
      assert.ok(chunks.every((c) => c.byteLength === 0), 'chunks were transferred, not copied');
    } finally {
      await pool.close();
    }
  });

  test('the render service hands a large body to the pool as its chunks, as they are; a small one it reads itself', async () => {
    const chunks = [new Uint8Array(INLINE_BODY_BYTES), new Uint8Array([3])];
    const seen: (BodyJob | RenderJob)[] = [];
    const refusal: RenderOutcome = { ok: false, slug: 'unsupported-image', detail: 'stub' };
    const pool: RenderPool = {
      run: async (j) => { seen.push(j); return refusal; },
      runBody: async (j) => { seen.push(j); return refusal; },
      stats: () => ({ workers: 1, running: 0, queued: 0, queueLimit: 1, completed: 0, threadsStarted: 1 }),
      retryAfterSeconds: () => 1,
      warm: () => true,
      stopAll: () => {},
      close: async () => undefined,
    };
    const service = createRenderService({ config: loadConfig({}), pool });
    await assert.rejects(service.renderBody({ type: 'form', chunks, byteLength: INLINE_BODY_BYTES + 1, contentType: 'multipart/form-data; boundary=x', query: { columns: '9' } }), /stub/);
    assert.equal(seen.length, 1);
    const big = seen[0] as BodyJob;
    assert.equal(big.body.chunks, chunks, 'the same array, not a joined copy');
    assert.deepEqual(big.body.query, { columns: '9' });
    // A small JSON body is parsed on the event loop: the pool gets the render job it asks for.
    const text = Buffer.from(JSON.stringify({ imageBase64: 'QUJD', columns: 9 }));
    await assert.rejects(service.renderBody({ type: 'json', chunks: [text], byteLength: text.length, contentType: 'application/json', query: {} }), /stub/);
    assert.equal(seen.length, 2);
    assert.deepEqual((seen[1] as RenderJob).source, { kind: 'base64', text: 'QUJD' });
    assert.deepEqual((seen[1] as RenderJob).params, { columns: 9 });
  });
});
