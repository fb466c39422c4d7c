/**
 * Faults a hostile or unlucky client causes, against a real server on loopback: abandoned renders
 * at every stage, trickling and stalled bodies, key floods, duplicate keys, unfinished MCP bodies,
 * a worker that fails, Node's own parser errors, `Expect: 100-continue`, and SIGTERM under load.
 * After each, a normal render succeeds, every admission slot is back, and RSS is near its start.
 * Nothing sleeps and then asserts: every wait is on an event (a reply, a socket closing, a job
 * reaching the pool).
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { EventEmitter, once } from 'node:events';
import { connect, type Socket } from 'node:net';
import { Writable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import type { AddressInfo } from 'node:net';
import sharp from 'sharp';
import { buildApp } from '../src/server/app.js';
import { loadConfig } from '../src/server/config.js';
import { createRenderPool, type RenderPool } from '../src/server/render-pool.js';
import type { BodyJob, RenderJob } from '../src/server/render-task.js';
import { startServer } from '../src/server/start.js';
import { assertProblem, call, noise, photo, postForm, postJson, startTestServer, type Reply, type TestServer } from './server-helpers.js';

const MB = 1024 * 1024;

/** Settings of the fault server: one worker, two waiting, short timeouts. */
const FAULT_ENV = {
  V2A_WORKERS: '1',
  V2A_QUEUE_LIMIT: '2',
  V2A_HEADERS_TIMEOUT_MS: '600',
  V2A_BODY_IDLE_TIMEOUT_MS: '400',
  V2A_REQUEST_TIMEOUT_MS: '1500',
  V2A_MAX_DECODED_BYTES: '32MiB',
  // One test client fills every slot on purpose.
  V2A_CLIENT_SLOTS: '0',
};
const CAPACITY = 3;

// ---------------------------------------------------------------------------------------------
// Raw HTTP over a socket

interface RawReply {
  status: number;
  headers: Record<string, string>;
  body: string;
  /** Every byte the server sent (interim 100 Continue included). */
  raw: string;
}

function parseReply(text: string): RawReply {
  // Skip interim responses (100 Continue).
  let rest = text;
  while (/^HTTP\/1\.1 1\d\d /.test(rest)) rest = rest.slice(rest.indexOf('\r\n\r\n') + 4);
  const end = rest.indexOf('\r\n\r\n');
  const head = end < 0 ? rest : rest.slice(0, end);
  const [statusLine = '', ...lines] = head.split('\r\n');
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const i = line.indexOf(':');
    if (i > 0) headers[line.slice(0, i).trim().toLowerCase()] = line.slice(i + 1).trim();
  }
  return { status: Number(statusLine.split(' ')[1] ?? 0), headers, body: end < 0 ? '' : rest.slice(end + 4), raw: text };
}

/** An open socket to the server that collects what comes back. */
class Client {
  readonly socket: Socket;
  private data = '';
  readonly closed: Promise<void>;
  constructor(port: number) {
    this.socket = connect(port, '127.0.0.1');
    this.socket.setEncoding('latin1');
    this.socket.on('data', (d: string) => { this.data += d; });
    this.socket.on('error', () => {});
    this.closed = new Promise((resolve) => this.socket.once('close', () => resolve()));
  }
  write(chunk: string | Buffer): Promise<void> {
    return new Promise((resolve) => {
      if (this.socket.destroyed || !this.socket.writable) return resolve();
      this.socket.write(chunk, () => resolve());
    });
  }
  /** Waits until the server has sent something containing `text`. */
  async until(text: string): Promise<void> {
    while (!this.data.includes(text)) {
      if (this.socket.destroyed) throw new Error(`closed before ${JSON.stringify(text)}: ${this.data.slice(0, 200)}`);
      await Promise.race([once(this.socket, 'data'), this.closed]);
    }
  }
  /** The reply, once the server closed the connection. */
  async reply(): Promise<RawReply> {
    await this.closed;
    return parseReply(this.data);
  }
  get received(): string {
    return this.data;
  }
  destroy(): void {
    this.socket.destroy();
  }
}

function head(method: string, path: string, headers: Record<string, string | number>): string {
  return `${method} ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\n${Object.entries(headers).map(([k, v]) => `${k}: ${v}\r\n`).join('')}\r\n`;
}

function assertRawProblem(r: RawReply, status: number, slug: string): any {
  assert.equal(r.status, status, r.raw.slice(0, 400));
  assert.match(r.headers['content-type'] ?? '', /^application\/problem\+json/);
  assert.match(r.headers.traceparent ?? '', /^00-[0-9a-f]{32}-[0-9a-f]{16}-0[01]$/);
  const p = JSON.parse(r.body);
  assert.equal(p.type, `https://v2a.dev/problems/${slug}`);
  assert.equal(p.traceId, r.headers.traceparent!.split('-')[1]);
  return p;
}

// ---------------------------------------------------------------------------------------------
// The pool seen from outside: an event per job handed to it, and a failing mode

class WatchedPool extends EventEmitter implements RenderPool {
  /** Jobs whose columns equal this fail in the worker (it receives a source it cannot read). */
  failColumns = -1;
  constructor(readonly inner: RenderPool) { super(); }
  run(job: RenderJob, signal?: AbortSignal) {
    const broken = job.params.columns === this.failColumns;
    const p = this.inner.run(broken ? { ...job, source: { kind: 'base64', text: undefined as unknown as string } } : job, signal);
    this.emit('run', job);
    return p;
  }
  /** A body's parameters are read in the worker: the query string's columns decide here. */
  runBody(job: BodyJob, signal?: AbortSignal) {
    const broken = Number(job.body.query.columns) === this.failColumns;
    const p = this.inner.runBody(broken ? { ...job, body: { ...job.body, query: null as unknown as Record<string, unknown> } } : job, signal);
    this.emit('run', job);
    return p;
  }
  stats() { return this.inner.stats(); }
  retryAfterSeconds() { return this.inner.retryAfterSeconds(); }
  warm() { return this.inner.warm(); }
  stopAll(err: Error) { this.inner.stopAll(err); }
  close() { return this.inner.close(); }
}

// ---------------------------------------------------------------------------------------------

let server: TestServer;
let pool: WatchedPool;
let port: number;
let small: Buffer;
let heavy: Buffer;

const rss = () => process.memoryUsage().rss;

async function normalRender(): Promise<void> {
  const r = await postForm(`${server.base}/api/v1/render?columns=24`, { image: small });
  assert.equal(r.status, 200, r.text.slice(0, 300));
  assert.ok(r.text.split('\n').length > 3);
}

/** After a fault: a normal render succeeds, no slot is held, RSS is within `slackMb` of `start`. */
async function assertRecovered(start: number, slackMb = 150): Promise<void> {
  await normalRender();
  assert.equal(server.app.v2a.admission.inFlight, 0, 'every admission slot is back');
  const grown = (rss() - start) / MB;
  assert.ok(grown < slackMb, `RSS grew ${grown.toFixed(0)} MB (limit ${slackMb})`);
}

function multipartBody(image: Buffer): { body: Buffer; type: string } {
  const boundary = 'faultboundary7d1';
  const body = Buffer.concat([
    Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="image"; filename="x.png"\r\nContent-Type: image/png\r\n\r\n`),
    image,
    Buffer.from(`\r\n--${boundary}--\r\n`),
  ]);
  return { body, type: `multipart/form-data; boundary=${boundary}` };
}

before(async () => {
  small = await photo(160, 120);
  heavy = await noise(1600, 1200);
  const config = loadConfig({ LOG_LEVEL: 'silent', V2A_RATE_LIMIT: '0', PORT: '0', HOST: '127.0.0.1', ...FAULT_ENV });
  pool = new WatchedPool(createRenderPool({ workers: config.workers, queueLimit: config.queueLimit, timeoutMs: config.renderTimeoutMs }));
  server = await startTestServer(FAULT_ENV, { pool });
  port = (server.app.server.address() as AddressInfo).port;
  await normalRender(); // the worker is warm
  // And has held one heavy render: its WebAssembly memory grows to what a render needs and keeps
  // it (wasm memory never shrinks), a plateau that RSS checks must not count as a leak.
  const warm = await postForm(`${server.base}/api/v1/render?columns=400&format=html&color=true`, { image: heavy });
  assert.equal(warm.status, 200, warm.text.slice(0, 300));
});
after(async () => { await server.close(); });

describe('abandoned renders', () => {
  it('frees every slot when clients go away while uploading, queued, running or reading the reply (40 heavy renders)', async () => {
    const start = rss();
    const { body, type } = multipartBody(heavy);
    const path = '/api/v1/render?columns=400&format=html&color=true';
    let abandoned = 0;
    // While uploading: half the body, then gone.
    for (let i = 0; i < 14; i++) {
      const c = new Client(port);
      await c.write(head('POST', path, { 'content-type': type, 'content-length': body.length }));
      await c.write(body.subarray(0, body.length >> 1));
      c.destroy();
      await c.closed;
      abandoned++;
    }
    // Queued or running: the whole body, gone once the job reached the pool (waves of CAPACITY).
    while (abandoned < 38) {
      const wave: Client[] = [];
      for (let i = 0; i < CAPACITY; i++) {
        const c = new Client(port);
        const handed = once(pool, 'run');
        await c.write(head('POST', path, { 'content-type': type, 'content-length': body.length }));
        await c.write(body);
        await handed;
        wave.push(c);
      }
      for (const c of wave) { c.destroy(); await c.closed; abandoned++; }
    }
    // Reading the reply: gone at its first bytes.
    for (let i = 0; i < 2; i++) {
      const c = new Client(port);
      await c.write(head('POST', path, { 'content-type': type, 'content-length': body.length }));
      await c.write(body);
      await c.until('HTTP/1.1');
      c.destroy();
      await c.closed;
      abandoned++;
    }
    assert.equal(abandoned, 40);
    await assertRecovered(start);
  });
});

describe('slow and stalled bodies', () => {
  it('answers 24 trickling uploads with 503 (over capacity) or 408 (request timeout), connection closed', async () => {
    const start = rss();
    const clients = await Promise.all(Array.from({ length: 24 }, async () => {
      const c = new Client(port);
      await c.write(head('POST', '/api/v1/render', { 'content-type': 'application/json', 'content-length': 100_000 }));
      return c;
    }));
    // One byte every 100 ms from each, until the server closes the connection.
    let open = clients.length;
    const trickle = setInterval(() => { for (const c of clients) void c.write('{'); }, 100);
    const replies = await Promise.all(clients.map(async (c) => { const r = await c.reply(); open--; return r; }));
    clearInterval(trickle);
    assert.equal(open, 0);
    const statuses = replies.map((r) => r.status).sort();
    assert.equal(statuses.filter((s) => s === 408).length, CAPACITY, `statuses ${statuses.join(',')}`);
    assert.equal(statuses.filter((s) => s === 503).length, 24 - CAPACITY);
    for (const r of replies) {
      assertRawProblem(r, r.status, r.status === 408 ? 'request-timeout' : 'overloaded');
      assert.equal(r.headers.connection, 'close');
    }
    await assertRecovered(start);
  });

  it('answers a body that stops arriving with 408 after the idle timeout', async () => {
    const c = new Client(port);
    await c.write(head('POST', '/api/v1/render', { 'content-type': 'application/json', 'content-length': 1000 }));
    await c.write('{"imageBase64":"');
    const r = await c.reply();
    const p = assertRawProblem(r, 408, 'request-timeout');
    assert.match(p.detail, /V2A_BODY_IDLE_TIMEOUT_MS/);
    assert.equal(r.headers.connection, 'close');
    await assertRecovered(rss());
  });

  it('answers a body that trickles, never silent but under 1 KiB per idle timeout, with 408', async () => {
    // A byte a second held its admission slot until the whole request's timeout (2 minutes).
    const c = new Client(port);
    await c.write(head('POST', '/api/v1/render', { 'content-type': 'application/json', 'content-length': 100_000 }));
    await c.write('{"imageBase64":"');
    const drip = setInterval(() => void c.write('AAAA'), 50);
    try {
      const r = await c.reply();
      const p = assertRawProblem(r, 408, 'request-timeout');
      assert.match(p.detail, /Fewer than 1024 bytes of the request body arrived in 400 ms \(V2A_BODY_IDLE_TIMEOUT_MS\)/);
    } finally {
      clearInterval(drip);
    }
  });

  it('answers headers that never finish with 408 problem+json', async () => {
    const c = new Client(port);
    await c.write('POST /api/v1/render HTTP/1.1\r\nHost: 127.0.0.1\r\n');
    assertRawProblem(await c.reply(), 408, 'request-timeout');
  });
});

describe('bounded JSON', () => {
  it('refuses 200k unknown keys with a small 400 problem, read while parsing', async () => {
    const start = rss();
    const keys: string[] = [];
    for (let i = 0; i < 200_000; i++) keys.push(`"k${i}":1`);
    const body = `{"imageBase64":"AAAA",${keys.join(',')}}`;
    for (const path of ['/api/v1/render', '/api/mcp']) {
      const r = await postJson(`${server.base}${path}`, path === '/api/mcp' ? `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"render_ascii","arguments":${body}}}` : body);
      const p = assertProblem(r, 400, 'json-too-complex');
      assert.match(p.detail, /more than 1024 keys/);
      assert.ok(r.text.length < 2000, `small body: ${r.text.length} bytes`);
    }
    // Keys alone did not bound it: 20 MB of array elements held the event loop for seconds on /api/mcp.
    const elements = `[${'1,'.repeat(2_000_000)}1]`;
    for (const path of ['/api/v1/render', '/api/mcp']) {
      const r = await postJson(`${server.base}${path}`, path === '/api/mcp' ? `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"render_ascii","arguments":{"columns":${elements}}}}` : `{"columns":${elements}}`);
      assert.match(assertProblem(r, 400, 'json-too-complex').detail, /more than 4096 array elements/);
    }
    assert.equal(assertProblem(await postJson(`${server.base}/api/mcp`, JSON.stringify(Array.from({ length: 4097 }, (_, i) => ({ jsonrpc: '2.0', id: i, method: 'ping' })))), 400, 'json-too-complex').status, 400);
    const deep = await postJson(`${server.base}/api/v1/render`, `${'['.repeat(100_000)}${']'.repeat(100_000)}`);
    assertProblem(deep, 400, 'json-too-complex', /deeper than 32/);
    await assertRecovered(start);
  });

  it('refuses duplicate keys with 400 naming the key (two imageBase64 are two images)', async () => {
    const b64 = small.toString('base64');
    const r = await postJson(`${server.base}/api/v1/render`, `{"imageBase64":"${b64}","columns":20,"imageBase64":"${b64}"}`);
    const p = assertProblem(r, 400, 'duplicate-key');
    assert.deepEqual(p.errors.map((e: { parameter: string }) => e.parameter), ['imageBase64']);
    const escaped = await postJson(`${server.base}/api/v1/render`, `{"columns":20,"colu\\u006dns":30}`);
    assert.equal(assertProblem(escaped, 400, 'duplicate-key').errors[0].parameter, 'columns');
    // The same key in two different objects is fine.
    const batch = await postJson(`${server.base}/api/mcp`, '[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2,"method":"ping"}]');
    assert.equal(batch.status, 200);
  });

  it('MCP: a refused key (twice in one object, or __proto__) refuses only its own message, as a JSON-RPC error', async () => {
    const b64 = small.toString('base64');
    // In the tool's arguments: -32602 with the request's id, naming the key and where it is.
    const args = await postJson(`${server.base}/api/mcp`, `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"render_ascii","arguments":{"imageBase64":"${b64}","columns":20,"imageBase64":"${b64}"}}}`);
    assert.equal(args.status, 200);
    assert.equal(args.json.id, 7);
    assert.equal(args.json.error.code, -32602);
    assert.match(args.json.error.message, /^Invalid params: The JSON body names a key twice: "imageBase64" is given twice/);
    assert.deepEqual(args.json.error.data.errors, [{ path: 'params.arguments.imageBase64', message: '"imageBase64" is given twice in one JSON object' }]);
    // In a batch: the others are answered; a refused id is answered with id null; a prototype key
    // is never read; a refused notification gets no reply.
    const batch = await postJson(`${server.base}/api/mcp`, [
      '{"jsonrpc":"2.0","id":1,"method":"ping"}',
      '{"jsonrpc":"2.0","id":2,"method":"ping","id":3}',
      '{"jsonrpc":"2.0","id":4,"method":"tools/list","params":{"__proto__":{"polluted":true}}}',
      '{"jsonrpc":"2.0","method":"notifications/initialized","method":"x"}',
      '{"jsonrpc":"2.0","id":5,"method":"ping","method":"ping"}',
    ].join(',').replace(/^/, '[').replace(/$/, ']'));
    assert.equal(batch.status, 200);
    const replies = batch.json as Array<{ id: unknown; result?: unknown; error?: { code: number; message: string } }>;
    assert.deepEqual(replies.map((r) => [r.id, r.error?.code ?? 'ok']), [[1, 'ok'], [null, -32600], [4, -32602], [5, -32600]]);
    assert.match(replies[2]!.error!.message, /may not contain the key "__proto__"/);
    assert.equal(({} as { polluted?: unknown }).polluted, undefined);
  });
});

describe('MCP bodies', () => {
  it('110 unfinished 21 MB bodies: only those holding a slot are read (408 when they stall), the rest 503 unread; RSS grows < 400 MB', async () => {
    const start = rss();
    let peak = start;
    let held = 0;
    const sampler = setInterval(() => { peak = Math.max(peak, rss()); held = Math.max(held, server.app.v2a.admission.inFlight); }, 20);
    const length = 21 * MB;
    const chunk = Buffer.alloc(MB, 0x41);
    const clients = await Promise.all(Array.from({ length: 110 }, async () => {
      const c = new Client(port);
      await c.write(head('POST', '/api/mcp', { 'content-type': 'application/json', 'content-length': length }));
      await c.write('{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"render_ascii","arguments":{"imageBase64":"');
      // 20 of 21 MB, then silence (the idle timeout ends the admitted ones).
      for (let i = 0; i < 20 && !c.socket.destroyed; i++) await c.write(chunk);
      return c;
    }));
    const replies = await Promise.all(clients.map((c) => c.reply()));
    clearInterval(sampler);
    peak = Math.max(peak, rss());
    // A body is read only while it holds a slot; later arrivals may take the slots of timed-out ones.
    const statuses = replies.map((r) => r.status);
    assert.ok(statuses.every((s) => s === 408 || s === 503), statuses.join(','));
    assert.ok(statuses.filter((s) => s === 408).length >= CAPACITY, statuses.join(','));
    assert.ok(statuses.filter((s) => s === 503).length > 110 / 2, statuses.join(','));
    assert.ok(held <= CAPACITY, `at most ${CAPACITY} bodies were read at a time (${held})`);
    for (const r of replies) assertRawProblem(r, r.status, r.status === 408 ? 'request-timeout' : 'overloaded');
    const grown = (peak - start) / MB;
    assert.ok(grown < 400, `RSS grew ${grown.toFixed(0)} MB during the flood`);
    await assertRecovered(start, 400);
  });

  it('counts every tools/call of a batch against admission: a batch larger than all the slots is a permanent -32600', async () => {
    const b64 = small.toString('base64');
    const call1 = (id: number) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'render_ascii', arguments: { imageBase64: b64, columns: 16 } } });
    const r = await postJson(`${server.base}/api/mcp`, [1, 2, 3, 4].map(call1));
    assert.equal(r.status, 200);
    assert.equal(r.json.error.code, -32600);
    assert.match(r.json.error.message, new RegExp(`runs at most ${CAPACITY} at once`));
    const ok = await postJson(`${server.base}/api/mcp`, [1, 2, 3].map(call1));
    assert.equal(ok.status, 200);
    assert.equal(ok.json.length, 3);
    assert.ok(ok.json.every((m: any) => m.result && !m.result.isError), ok.text.slice(0, 300));
    await assertRecovered(rss());
  });
});

describe('decoded memory', () => {
  it('refuses an image whose decoder memory (w x h x channels x bytes per sample) is over the limit, 413 naming it', async () => {
    const start = rss();
    // 2100 x 2100 x 4 channels x 16 bit, interlaced: 34 MiB to decode, from a small file.
    const deep = await sharp({ create: { width: 2100, height: 2100, channels: 4, background: { r: 10, g: 200, b: 90, alpha: 0.5 } } })
      .toColourspace('rgb16').png({ progressive: true }).toBuffer();
    assert.ok(deep.length < 1 * MB);
    const r = await postForm(`${server.base}/api/v1/render?columns=24`, { image: deep });
    const p = assertProblem(r, 413, 'image-too-large', /V2A_MAX_DECODED_BYTES/);
    assert.match(p.detail, /2100 x 2100 pixels x 4 channels x 16-bit/);
    // The same pixel count as a baseline JPEG shrinks while loading: well within the limit.
    const jpeg = await sharp({ create: { width: 2100, height: 2100, channels: 3, background: '#208040' } }).jpeg().toBuffer();
    assert.equal((await postForm(`${server.base}/api/v1/render?columns=24`, { image: jpeg })).status, 200);
    await assertRecovered(start);
  });
});

describe('MCP batches and the rate limit', () => {
  it('takes one rate-limit token per tools/call of a batch', async () => {
    const limited = await startTestServer({ V2A_RATE_LIMIT: '4', V2A_WORKERS: '1', V2A_QUEUE_LIMIT: '8' });
    try {
      // No image: each call fails fast as a tool error, but is counted all the same.
      const call1 = (id: number) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'render_ascii', arguments: { columns: 16 } } });
      const three = await postJson(`${limited.base}/api/mcp`, [1, 2, 3].map(call1));
      assert.equal(three.status, 200);
      assert.ok(three.json.every((m: any) => m.result?.isError === true));
      const fourth = await postJson(`${limited.base}/api/mcp`, call1(4));
      assert.equal(fourth.status, 200, 'the fourth call of the minute is allowed');
      const fifth = await postJson(`${limited.base}/api/mcp`, call1(5));
      assertProblem(fifth, 429, 'rate-limited', /^At most 4 requests per minute are allowed from one client; retry in \d+ s\.$/);
      // A ping takes no token: answered with the budget spent.
      assert.equal((await postJson(`${limited.base}/api/mcp`, { jsonrpc: '2.0', id: 6, method: 'ping' })).status, 200);
      const other = await startTestServer({ V2A_RATE_LIMIT: '4', V2A_WORKERS: '1', V2A_QUEUE_LIMIT: '8' });
      try {
        const batch = await postJson(`${other.base}/api/mcp`, [1, 2, 3, 4, 5].map(call1));
        assertProblem(batch, 429, 'rate-limited', /each tools\/call of a batch counts/);
      } finally {
        await other.close();
      }
    } finally {
      await limited.close();
    }
  });
});

describe('worker failures', () => {
  it('answers a render whose worker fails with a 500 problem and keeps serving', async () => {
    const start = rss();
    pool.failColumns = 13;
    try {
      for (let i = 0; i < 4; i++) {
        const r = await postForm(`${server.base}/api/v1/render?columns=13`, { image: small });
        assertProblem(r, 500, 'internal-error');
      }
    } finally {
      pool.failColumns = -1;
    }
    await assertRecovered(start);
  });
});

describe('HTTP-level errors', () => {
  it('answers oversized headers 431, an overlong request line 414 and a bad Content-Length 400 as problem+json, connection closed', async () => {
    const big = new Client(port);
    await big.write(head('GET', '/api/health', { 'x-filler': 'a'.repeat(20_000) }));
    const r431 = await big.reply();
    assertRawProblem(r431, 431, 'headers-too-large');
    assert.equal(r431.headers.connection, 'close');
    assert.ok(!Number.isNaN(Date.parse(r431.headers.date ?? '')), 'a Date header (RFC 9110 §6.6.1)');
    // A request line that alone overflows is 414 (RFC 9110 §15.5.15), sent in one write (one
    // read on loopback: a line over several reads cannot be told from headers and stays 431).
    const long = new Client(port);
    await long.write(head('GET', `/api/health?${'q'.repeat(20_000)}`, {}));
    const r414 = await long.reply();
    assertRawProblem(r414, 414, 'uri-too-long');
    assert.equal(r414.headers.connection, 'close');
    const bad = new Client(port);
    await bad.write(head('POST', '/api/v1/render', { 'content-type': 'application/json', 'content-length': 'ten' }));
    assertRawProblem(await bad.reply(), 400, 'invalid-request');
  });

  it('refuses an over-capacity upload with 503 + Connection: close and never sends 100 Continue', async () => {
    // Fill every slot with stalled uploads.
    const { body, type } = multipartBody(small);
    const holders: Client[] = [];
    for (let i = 0; i < CAPACITY; i++) {
      const c = new Client(port);
      await c.write(head('POST', '/api/v1/render', { 'content-type': type, 'content-length': body.length + 10, expect: '100-continue' }));
      await c.until('100 Continue');
      holders.push(c);
    }
    const refused = new Client(port);
    await refused.write(head('POST', '/api/v1/render', { 'content-type': type, 'content-length': body.length, expect: '100-continue' }));
    const r = await refused.reply();
    assert.doesNotMatch(r.raw, /100 Continue/);
    assertRawProblem(r, 503, 'overloaded');
    assert.equal(r.headers.connection, 'close');
    for (const c of holders) c.destroy();
    await Promise.all(holders.map((c) => c.closed));
    // With a free slot the interim reply comes, then the body is read.
    const accepted = new Client(port);
    await accepted.write(head('POST', '/api/v1/render?columns=20', { 'content-type': type, 'content-length': body.length, expect: '100-continue', connection: 'close' }));
    await accepted.until('100 Continue');
    await accepted.write(body);
    assert.equal((await accepted.reply()).status, 200);
    await assertRecovered(rss());
  });

  it('answers at once, without 100 Continue, what the headers alone refuse: 415, 413 by length, an image in the query, 404, 405', async () => {
    const cases: [string, string, Record<string, string | number>, number, string][] = [
      ['POST', '/api/v1/render', { 'content-type': 'text/plain', 'content-length': 9_000_000 }, 415, 'unsupported-media-type'],
      ['POST', '/api/v1/render', { 'content-type': 'application/json', 'content-length': 900_000_000 }, 413, 'request-too-large'],
      ['POST', '/api/v1/render?imageUrl=x', { 'content-type': 'application/json', 'content-length': 20 }, 400, 'invalid-request'],
      ['POST', '/nope', { 'content-type': 'application/json', 'content-length': 20 }, 404, 'not-found'],
      ['PUT', '/api/v1/render', { 'content-type': 'application/json', 'content-length': 20 }, 405, 'method-not-allowed'],
    ];
    await Promise.all(cases.map(async ([method, path, headers, status, slug]) => {
      const c = new Client(port);
      await c.write(head(method, path, { ...headers, expect: '100-continue' }));
      const r = await c.reply();
      assert.doesNotMatch(r.raw, /100 Continue/, `${method} ${path}`);
      assertRawProblem(r, status, slug);
      assert.equal(r.headers.connection, 'close');
    }));
  });

  it('no route: 404 or 405 before the body is parsed, and the unread body is not drained (Connection: close); nor after a GET', async () => {
    const cases: [string, string, Record<string, string | number>, string, number, string][] = [
      // A bad JSON body, one over the parser's 1 MiB limit, and 200 MB nobody reads.
      ['PUT', '/api/v1/render', { 'content-type': 'application/json', 'content-length': 2 }, '{x', 405, 'method-not-allowed'],
      ['POST', '/nope', { 'content-type': 'application/json', 'content-length': 5 * MB }, '{', 404, 'not-found'],
      ['POST', '/nope', { 'content-type': 'application/octet-stream', 'content-length': 200 * MB }, 'abc', 404, 'not-found'],
    ];
    await Promise.all(cases.map(async ([method, path, headers, body, status, slug]) => {
      const c = new Client(port);
      await c.write(head(method, path, headers) + body);
      const r = await c.reply();
      assertRawProblem(r, status, slug);
      if (status === 405) assert.equal(r.headers.allow, 'POST, OPTIONS');
      assert.equal(r.headers.connection, 'close');
    }));
    const get = new Client(port);
    await get.write(head('GET', '/api/health', { 'content-length': 200 * MB }) + 'abc');
    const r = await get.reply();
    assert.equal(r.status, 200);
    assert.equal(r.headers.connection, 'close');
  });

  it('serves a request with an expectation other than 100-continue as if it had none (no bare 417)', async () => {
    const probe = new Client(port);
    await probe.write(head('GET', '/api/health', { expect: 'foo', connection: 'close' }));
    const r = await probe.reply();
    assert.equal(r.status, 200);
    assert.match(r.headers.traceparent ?? '', /^00-[0-9a-f]{32}-/);
    const { body, type } = multipartBody(small);
    const upload = new Client(port);
    await upload.write(head('POST', '/api/v1/render?columns=20', { 'content-type': type, 'content-length': body.length, expect: 'something-else', connection: 'close' }));
    await upload.write(body);
    assert.equal((await upload.reply()).status, 200);
  });
});

describe('access log', () => {
  it('redacts query strings and carries the trace id on every line', async () => {
    const lines: any[] = [];
    const stream = new Writable({ write(chunk, _enc, cb) { for (const l of String(chunk).split('\n')) if (l) lines.push(JSON.parse(l)); cb(); } });
    const config = loadConfig({ LOG_LEVEL: 'info', PORT: '0', HOST: '127.0.0.1', V2A_WORKERS: '1' });
    const app = await buildApp(config, { logStream: stream });
    try {
      await app.listen({ port: 0, host: '127.0.0.1' });
      const base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
      const r = await call(`${base}/api/v1/agent?token=s3cret&imageBase64=QUJDREVGR0hJSktMTU5PUFFSU1RVVldY`);
      assert.equal(r.status, 200);
      const traceId = r.headers.get('traceparent')!.split('-')[1];
      const mine = lines.filter((l) => l.traceId === traceId);
      assert.ok(mine.length >= 2, 'incoming and completed lines carry the trace id');
      const text = JSON.stringify(lines);
      assert.doesNotMatch(text, /s3cret|QUJDREVG|token=/);
      assert.ok(mine.some((l) => l.req?.url === '/api/v1/agent'));
      for (const l of lines.filter((x) => x.req || x.res)) assert.match(l.traceId, /^[0-9a-f]{32}$/);
    } finally {
      await app.close();
    }
  });
});

describe('clients that go away', () => {
  it('an upload cut off mid-body is logged as the client\'s doing, not as a server error', async () => {
    const lines: any[] = [];
    const stream = new Writable({ write(chunk, _enc, cb) { for (const l of String(chunk).split('\n')) if (l) lines.push(JSON.parse(l)); cb(); } });
    const config = loadConfig({ LOG_LEVEL: 'info', PORT: '0', HOST: '127.0.0.1', V2A_WORKERS: '1', V2A_RATE_LIMIT: '0' });
    const app = await buildApp(config, { logStream: stream });
    try {
      await app.listen({ port: 0, host: '127.0.0.1' });
      const port = (app.server.address() as AddressInfo).port;
      const warm = Date.now() + 20_000;
      while (!lines.some((l) => l.msg === 'render workers warm') && Date.now() < warm) await new Promise((r) => setTimeout(r, 20));
      const { body, type } = multipartBody(small);
      for (const [path, contentType] of [['/api/v1/render', type], ['/api/mcp', 'application/json']] as const) {
        const c = new Client(port);
        await c.write(head('POST', path, { 'content-type': contentType, 'content-length': body.length }));
        await c.write(body.subarray(0, body.length >> 1));
        await new Promise((r) => setTimeout(r, 50));
        c.socket.resetAndDestroy();
        await c.closed;
      }
      // The server reads on after the cut until the body's end or close: give it a moment.
      await new Promise((r) => setTimeout(r, 500));
      assert.equal(lines.filter((l) => l.msg === 'incoming request').length, 2);
      assert.deepEqual(lines.filter((l) => l.level >= 50).map((l) => `${l.msg}: ${l.err?.message}`), [], 'no error-level line');
    } finally {
      await app.close();
    }
  });
});

describe('shutdown', () => {
  it('npm start on a PORT that is taken exits 2 with one line naming the address, as v2a serve does', async () => {
    const { createServer } = await import('node:net');
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const port = (taken.address() as { port: number }).port;
    try {
      const child = spawn(process.execPath, ['--import', 'tsx', 'src/server/main.ts'], {
        env: { ...process.env, ...FAULT_ENV, PORT: String(port), HOST: '127.0.0.1', V2A_WARM_UP: 'false', LOG_LEVEL: 'silent' },
        stdio: ['ignore', 'ignore', 'pipe'],
      });
      let err = '';
      child.stderr.setEncoding('utf8').on('data', (d: string) => { err += d; });
      const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
      assert.equal(code, 2, err);
      assert.equal(err, `v2a: cannot listen on 127.0.0.1:${port}: the address is already in use (another server on that port?)\n`);
    } finally {
      taken.close();
    }
  });

  it('SIGTERM during running renders, stalled uploads and unfinished MCP bodies exits 0 promptly', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/server/main.ts'], {
      env: { ...process.env, ...FAULT_ENV, V2A_BODY_IDLE_TIMEOUT_MS: '60000', V2A_REQUEST_TIMEOUT_MS: '120000', V2A_HEADERS_TIMEOUT_MS: '60000', PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info', V2A_RATE_LIMIT: '0' },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.setEncoding('utf8');
    const listening = new Promise<number>((resolve, reject) => {
      child.stdout.on('data', (d: string) => {
        out += d;
        const m = /listening at http:\/\/127\.0\.0\.1:(\d+)/.exec(out);
        if (m) resolve(Number(m[1]));
      });
      child.once('exit', (code) => reject(new Error(`exited ${code} before listening: ${out}`)));
    });
    const childPort = await listening;
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    // One render (its small body read at once), then a stalled upload and an unfinished MCP
    // body, each admitted (its 100 Continue came).
    const { body, type } = multipartBody(small);
    const running = new Client(childPort);
    await running.write(head('POST', '/api/v1/render?columns=400&format=html&color=true', { 'content-type': type, 'content-length': body.length }));
    await running.write(body);
    const stalled = new Client(childPort);
    await stalled.write(head('POST', '/api/v1/render', { 'content-type': type, 'content-length': body.length + 100, expect: '100-continue' }));
    await stalled.until('100 Continue');
    await stalled.write(body.subarray(0, 100));
    const mcp = new Client(childPort);
    await mcp.write(head('POST', '/api/mcp', { 'content-type': 'application/json', 'content-length': 5 * MB, expect: '100-continue' }));
    await mcp.until('100 Continue');
    await mcp.write('{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"arguments":{"imageBase64":"AAAA');
    child.kill('SIGTERM');
    // The stalled upload is answered 503, then its body comes whole (within the 2 s the rest of a
    // refused body is read and dropped): its render must not run, nor its route answer again.
    await stalled.until('shutting-down');
    await stalled.write(Buffer.concat([body.subarray(100), Buffer.alloc(100, 0x20)]));
    const [code, stalledReply, mcpReply, runningReply] = await Promise.all([exited, stalled.reply(), mcp.reply(), running.reply()]);
    assert.equal(code, 0, out.slice(-2000));
    assertRawProblem(stalledReply, 503, 'shutting-down');
    assertRawProblem(mcpReply, 503, 'shutting-down');
    assert.equal(runningReply.status, 200, 'the running render finished');
    assert.doesNotMatch(out, /already sent|Promise errored|"level":50/, 'a request answered 503 is not answered again, nor its error logged');
  });

  it('graceful shutdown in process cuts stalled uploads and completes', async () => {
    const config = loadConfig({ LOG_LEVEL: 'silent', PORT: '0', HOST: '127.0.0.1', V2A_RATE_LIMIT: '0', ...FAULT_ENV, V2A_BODY_IDLE_TIMEOUT_MS: '60000', V2A_REQUEST_TIMEOUT_MS: '120000' });
    const running = await startServer(config, { handleSignals: false, logger: false });
    const p = Number(new URL(running.url).port);
    const c = new Client(p);
    await c.write(head('POST', '/api/v1/render', { 'content-type': 'application/json', 'content-length': 1000, expect: '100-continue' }));
    await c.until('100 Continue');
    await c.write('{"imageBase64":"AAAA');
    const [graceful, r] = await Promise.all([running.shutdown('test'), c.reply()]);
    assert.equal(graceful, true);
    assertRawProblem(r, 503, 'shutting-down');
  });
});
