/**
 * The render job stops between stages: a caller gone (`signal`, `interrupted`) or out of time
 * (`deadline`, `render-timeout`). An AbortSignal is aborted by an event, so the job lets the
 * event loop turn between stages: a cancel read meanwhile (MCP over stdio) stops the stages that
 * would otherwise run back to back, with no I/O of their own between them.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import sharp from 'sharp';
import { runJob, type Decoder } from '../src/core/job.js';
import { decodeImage } from '../src/node/index.js';

const LIMITS = { maxBytes: 1 << 24, maxPixels: 1 << 24 };

async function fixture(): Promise<{ bytes: Uint8Array; decoder: Decoder }> {
  const bytes = await sharp({ create: { width: 320, height: 160, channels: 3, background: '#7a4020' } }).png().toBuffer();
  const image = await decodeImage(bytes, { maxPixels: LIMITS.maxPixels });
  // Decoded already: resolves with no I/O, as a job whose stages are all in memory.
  return { bytes, decoder: async () => image };
}

const code = (err: unknown) => (err as { code?: string }).code;

describe('the render job stops between stages', () => {
  test('an AbortSignal aborted by an event while the stages run: interrupted', async () => {
    const { bytes, decoder } = await fixture();
    const abort = new AbortController();
    // An event that comes once the job has started (the cancel read from stdin, say).
    setImmediate(() => abort.abort());
    await assert.rejects(runJob({ kind: 'bytes', bytes }, { columns: 40 }, { decoder, limits: LIMITS, signal: abort.signal }), (err) => code(err) === 'interrupted');
  });

  test('aborted before it starts: interrupted; past its deadline: render-timeout; neither: the art', async () => {
    const { bytes, decoder } = await fixture();
    const input = { kind: 'bytes', bytes } as const;
    await assert.rejects(runJob(input, { columns: 40 }, { decoder, limits: LIMITS, signal: AbortSignal.abort() }), (err) => code(err) === 'interrupted');
    await assert.rejects(runJob(input, { columns: 40 }, { decoder, limits: LIMITS, deadline: { aborted: true } }), (err) => code(err) === 'render-timeout');
    const { result } = await runJob(input, { columns: 40 }, { decoder, limits: LIMITS, signal: new AbortController().signal, deadline: { aborted: false } });
    assert.equal(result.columns, 40);
  });
});
