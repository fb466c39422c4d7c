/**
 * The stdio face's framing (src/server/mcp/stdio-lines.ts) and what serveStdio answers for lines
 * the SDK's own transport used to drop or die on: malformed JSON, batches, refused keys, a line
 * past the bound. In process, over PassThrough streams.
 */
import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { pathToFileURL } from 'node:url';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { readLines, TOO_LONG_PREFIX_BYTES } from '../src/server/mcp/stdio-lines.js';
import { serveStdio } from '../src/server/mcp/stdio.js';
import { Roots, realFolder } from '../src/server/mcp/roots.js';
import { MOST_IN_LINE } from '../src/server/mcp/stdio.js';
import { Turns } from '../src/server/mcp/turns.js';
import sharp from 'sharp';

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
  test('a UTF-8 byte-order mark before a line (Windows writers) is dropped, also split across chunks', async () => {
    assert.deepEqual(await lines(['\uFEFF{"a":1}\r\n', '\uFEFF[1]\n'], 100), ['line {"a":1}', 'line [1]']);
    const bom = Buffer.from('\uFEFF{"b":2}\n');
    assert.deepEqual(await lines([bom.subarray(0, 2), bom.subarray(2)], 100), ['line {"b":2}']);
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
  test('a too-long line is reported with its last bytes too (where JSON.stringify puts a request\'s id)', async () => {
    const input = new PassThrough();
    const seen: string[] = [];
    const done = readLines(input, 100, { line: () => undefined, tooLong: (_p, n, suffix) => seen.push(`${n} ${suffix}`) });
    const big = `{"method":"x","params":"${'y'.repeat(5000)}","jsonrpc":"2.0","id":9}`;
    input.write(big.slice(0, 50));
    input.write(big.slice(50, 4000));
    input.write(`${big.slice(4000)}\r\n`);
    input.write(`${'z'.repeat(150)}\n`);
    input.end();
    await done;
    assert.deepEqual(seen, [`${big.length + 1} ${big.slice(-TOO_LONG_PREFIX_BYTES + 1)}`, `150 ${'z'.repeat(150)}`]);
  });
  test('a multi-byte character cut by the prefix is not split', async () => {
    const got = await lines([`${'é'.repeat(2000)}\n`], 10);
    assert.equal(got[0], `long 4000 ${'é'.repeat(TOO_LONG_PREFIX_BYTES / 2)}`);
  });
});

describe('serveStdio answers every line', () => {
  const dir = mkdtempSync(join(tmpdir(), 'v2a-stdio-lines-'));
  after(() => rmSync(dir, { recursive: true, force: true }));

  /** The replies to `input`, written a line at a time, or all in one chunk (`together`). */
  async function session(input: readonly string[], maxBytes = 1000, together = false): Promise<unknown[]> {
    const stdin = new PassThrough();
    const stdout = new PassThrough();
    let text = '';
    stdout.on('data', (d: Buffer) => { text += d.toString(); });
    const served = serveStdio({ roots: new Roots([await realFolder(dir)]), maxChars: 60_000, limits: { maxBytes, maxPixels: 1e6 }, fetch: { imageFetchAllowlist: [], fetchTimeoutMs: 10_000 }, stdin, stdout });
    if (together) stdin.write(input.map((line) => `${line}\n`).join(''));
    else for (const line of input) stdin.write(`${line}\n`);
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
      // As the MCP SDK writes a request (JSON.stringify): the id last.
      `{"method":"tools/call","params":{"name":"render_ascii","arguments":{"imageBase64":"${'A'.repeat(3_000_000)}"}},"jsonrpc":"2.0","id":"late"}`,
      `{"method":"ping","params":{"a":${'['.repeat(40)}${']'.repeat(40)}},"jsonrpc":"2.0","id":6}`,
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
      ['late', -32600],
      [6, -32600],
    ]));
    const messages = replies.map((r) => (r as { error?: { message: string } }).error?.message ?? '');
    assert.ok(messages.some((m) => /deeper than 32 levels/.test(m)), messages.join('\n'));
    const big = replies.find((r) => (r as { id?: unknown }).id === 'big') as { error: { message: string } };
    assert.match(big.error.message, /^Invalid Request: the message is \d+ bytes, over the \d+-byte bound of one line \(an image of at most 1000 bytes as base64/);
  });
});

describe('stdio calls: cancels and turns', () => {
  const dir = mkdtempSync(join(tmpdir(), 'v2a-stdio-turns-'));
  after(() => rmSync(dir, { recursive: true, force: true }));

  async function session(input: string): Promise<Array<{ id: unknown; result?: { isError?: boolean; content: Array<{ text?: string }> } }>> {
    const stdin = new PassThrough();
    const stdout = new PassThrough();
    let text = '';
    stdout.on('data', (d: Buffer) => { text += d.toString(); });
    const served = serveStdio({ roots: new Roots([await realFolder(dir)]), maxChars: 0, limits: { maxBytes: 1 << 20, maxPixels: 1e6 }, fetch: { imageFetchAllowlist: [], fetchTimeoutMs: 10_000 }, stdin, stdout });
    stdin.end(input);
    await served;
    return text.split('\n').filter(Boolean).map((l) => JSON.parse(l));
  }
  const callLine = (id: number, args: Record<string, unknown>) => JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'render_ascii', arguments: args } });
  const cancelLine = (id: number) => JSON.stringify({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: id } });

  test('a cancel read in the same chunk as its call stops the call: no reply for it, the next call is answered', async () => {
    writeFileSync(join(dir, 'a.png'), await sharp({ create: { width: 64, height: 48, channels: 3, background: '#808080' } }).png().toBuffer());
    const replies = await session([callLine(1, { imagePath: 'a.png', columns: 20 }), cancelLine(1), callLine(2, { imagePath: 'a.png', columns: 20 })].join('\n') + '\n');
    assert.deepEqual(replies.map((r) => r.id), [2]);
    assert.ok(replies[0]!.result && !replies[0]!.result.isError, JSON.stringify(replies[0]).slice(0, 300));
  });

  test(`calls beyond ${MOST_IN_LINE} in line for their turn are refused as overloaded; the others are answered`, async () => {
    writeFileSync(join(dir, 'b.png'), await sharp({ create: { width: 32, height: 24, channels: 3, background: '#404040' } }).png().toBuffer());
    const n = MOST_IN_LINE + 4;
    const replies = await session(Array.from({ length: n }, (_, i) => callLine(i + 1, { imagePath: 'b.png', columns: 8 })).join('\n') + '\n');
    assert.equal(replies.length, n);
    const refused = replies.filter((r) => r.result?.isError);
    // All arrive in one chunk, long before the first render ends.
    assert.equal(refused.length, n - MOST_IN_LINE);
    for (const r of refused) assert.match(r.result!.content[0]!.text!, /32 calls are already in line \(this server renders one at a time\)/);
  });
});

describe('Turns', () => {
  const later = () => new Promise<void>((r) => setTimeout(r, 5));

  test('one at a time, first come first served; a waiter that is cancelled leaves, the one behind it still waits its turn', async () => {
    const turns = new Turns(8);
    const log: string[] = [];
    let running = 0;
    const job = (name: string) => async () => {
      running++;
      assert.equal(running, 1, `${name} runs alone`);
      log.push(`start ${name}`);
      await later();
      log.push(`end ${name}`);
      running--;
      return name;
    };
    const cancel = new AbortController();
    const a = turns.run(new AbortController().signal, job('a'));
    const b = turns.run(cancel.signal, job('b'));
    const c = turns.run(new AbortController().signal, job('c'));
    assert.equal(turns.size, 3);
    cancel.abort(new Error('cancelled'));
    await assert.rejects(b, /cancelled/);
    assert.deepEqual(await Promise.all([a, c]), ['a', 'c']);
    assert.deepEqual(log, ['start a', 'end a', 'start c', 'end c']);
    assert.equal(turns.size, 0);
  });

  test('past mostWaiting a call is refused at once; a failed turn passes the turn on', async () => {
    const turns = new Turns(1);
    const first = turns.run(new AbortController().signal, async () => { await later(); throw new Error('boom'); });
    await assert.rejects(turns.run(new AbortController().signal, async () => 'never'), (err: Error & { code?: string }) => err.code === 'overloaded');
    await assert.rejects(first, /boom/);
    assert.equal(await turns.run(new AbortController().signal, async () => 'next'), 'next');
  });
});

describe('realFolder', () => {
  test('a root spelled with ~/ or as a file: URI (no shell expands a client\'s JSON arguments) is the folder it names', async () => {
    const home = await realFolder(homedir());
    assert.deepEqual(await realFolder('~'), home);
    assert.equal((await realFolder(pathToFileURL(homedir()).href)).real, home.real);
    await assert.rejects(realFolder('~/no-such-folder-v2a'), /root "~\/no-such-folder-v2a" does not exist/);
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
