/**
 * The stdio face's framing (src/server/mcp/stdio-lines.ts) and what serveStdio answers for lines
 * the SDK's own transport used to drop or die on: malformed JSON, batches, refused keys, a line
 * past the bound. In process, over PassThrough streams.
 */
import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { readLines, TOO_LONG_PREFIX_BYTES } from '../src/server/mcp/stdio-lines.js';
import { serveStdio } from '../src/server/mcp/stdio.js';
import { Roots, realFolder } from '../src/server/mcp/roots.js';

async function lines(chunks: readonly (string | Buffer)[], max: number): Promise<string[]> {
  const input = new PassThrough();
  const seen: string[] = [];
  const done = readLines(input, max, { line: (t) => seen.push(`line ${t}`), tooLong: (p, n) => seen.push(`long ${n} ${p}`) });
  for (const c of chunks) input.write(c);
  input.end();
  await done;
  return seen;
}

describe('readLines', () => {
  test('lines across chunks, \\r\\n, blank lines skipped, a last line without a newline', async () => {
    assert.deepEqual(await lines(['{"a"', ':1}\r\n\n  \n[1,', '2]\n', 'tail'], 100), ['line {"a":1}', 'line [1,2]', 'line tail']);
  });
  test('a line past the bound is skipped to its newline and reported with its first bytes; the next is read', async () => {
    const big = `{"id":7,"x":"${'y'.repeat(5000)}"}`;
    const got = await lines([big.slice(0, 10), big.slice(10, 3000), big.slice(3000), '\n{"id":8}\n'], 100);
    assert.equal(got.length, 2);
    assert.equal(got[0], `long ${big.length} ${big.slice(0, TOO_LONG_PREFIX_BYTES)}`);
    assert.equal(got[1], 'line {"id":8}');
    // Exactly at the bound is a line; one byte over is not.
    assert.deepEqual(await lines(['x'.repeat(100) + '\n', 'y'.repeat(101) + '\n'], 100), [`line ${'x'.repeat(100)}`, `long 101 ${'y'.repeat(101)}`]);
  });
  test('a multi-byte character cut by the prefix is not split', async () => {
    const got = await lines([`${'é'.repeat(2000)}\n`], 10);
    assert.equal(got[0], `long 4000 ${'é'.repeat(TOO_LONG_PREFIX_BYTES / 2)}`);
  });
});

describe('serveStdio answers every line', () => {
  const dir = mkdtempSync(join(tmpdir(), 'v2a-stdio-lines-'));
  after(() => rmSync(dir, { recursive: true, force: true }));

  async function session(input: readonly string[], maxBytes = 1000): Promise<unknown[]> {
    const stdin = new PassThrough();
    const stdout = new PassThrough();
    let text = '';
    stdout.on('data', (d: Buffer) => { text += d.toString(); });
    const served = serveStdio({ roots: new Roots([await realFolder(dir)]), maxChars: 60_000, limits: { maxBytes, maxPixels: 1e6 }, env: {}, stdin, stdout });
    for (const line of input) stdin.write(`${line}\n`);
    stdin.end();
    await served;
    return text.split('\n').filter(Boolean).map((l) => JSON.parse(l) as unknown);
  }

  test('malformed JSON, a batch, refused keys, too complex and too long lines: each answered, the session goes on', async () => {
    const replies = await session([
      '{not json',
      '[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2,"method":"nosuch"},{"jsonrpc":"2.0","method":"notifications/initialized"}]',
      '[]',
      '{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{"cursor":"a","cursor":"b"}}',
      `{"jsonrpc":"2.0","id":4,"method":"ping","params":${'['.repeat(40)}${']'.repeat(40)}}`,
      `{"jsonrpc":"2.0","id":"big","method":"tools/call","params":{"name":"render_ascii","arguments":{"imageBase64":"${'A'.repeat(3_000_000)}"}}}`,
      '"text"',
      '{"jsonrpc":"2.0","id":5,"method":"ping"}',
    ]);
    const summary = replies.map((r) => {
      if (Array.isArray(r)) return r.map((x: { id: unknown; error?: { code: number } }) => [x.id, x.error?.code ?? 'ok']);
      const m = r as { id: unknown; error?: { code: number; message: string } };
      return [m.id, m.error?.code ?? 'ok'];
    });
    // Replies come as each is ready (JSON-RPC does not keep order): compared as a set.
    const sorted = (xs: unknown[]) => xs.map((x) => JSON.stringify(x)).sort();
    assert.deepEqual(sorted(summary), sorted([
      [null, -32700],
      [[1, 'ok'], [2, -32601]],
      [null, -32600],
      [3, -32602],
      // Too complex to parse, but its id is in its first bytes: the client's call ends.
      [4, -32600],
      ['big', -32600],
      [null, -32600],
      [5, 'ok'],
    ]));
    const messages = replies.map((r) => (r as { error?: { message: string } }).error?.message ?? '');
    assert.ok(messages.some((m) => /deeper than 32 levels/.test(m)), messages.join('\n'));
    const big = replies.find((r) => (r as { id?: unknown }).id === 'big') as { error: { message: string } };
    assert.match(big.error.message, /^Invalid Request: the message is \d+ bytes, over the \d+-byte bound of one line \(an image of at most 1000 bytes as base64/);
  });
});

describe('Roots.read', () => {
  test('a file that reports size 0 until read (/proc) is read to its end, bounded by maxBytes', async (t) => {
    if (process.platform !== 'linux') return t.skip('needs /proc');
    const roots = new Roots([await realFolder('/proc')]);
    const bytes = await roots.read('/proc/self/status', 1 << 20);
    assert.ok(bytes.length > 100, `read ${bytes.length} bytes`);
    assert.match(Buffer.from(bytes).toString('latin1'), /^Name:/);
    await assert.rejects(roots.read('/proc/self/status', 50), (err: Error & { code?: string }) => err.code === 'image-too-large' && /more than 50 bytes/.test(err.message));
  });
});
