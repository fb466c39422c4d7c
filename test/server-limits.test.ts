/**
 * What one client may hold of a server on the open internet: admission slots (V2A_CLIENT_SLOTS,
 * so slow uploads or unread replies from one address cannot take them all), the time to take a
 * reply (V2A_SEND_TIMEOUT_MS) and open connections (V2A_MAX_CONNECTIONS). Raw sockets, some bound
 * to 127.0.0.2 to be another client.
 */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { existsSync, readFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { loadConfig } from '../src/server/config.js';
import { counterValue, noise, photo, postForm, postJson, startTestServer, type TestServer } from './server-helpers.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Waits for `p`, at most `ms`. The timer goes once `p` settles: one left pending (as with
 * Promise.race and a sleep) keeps this file's process alive after its last test until it fires.
 */
function within(p: Promise<unknown>, ms: number): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    const done = () => { clearTimeout(timer); resolve(); };
    p.then(done, done);
  });
}

/** A socket to the server from `from` (a loopback address) that collects what comes back. */
function open(port: number, from = '127.0.0.1'): { socket: Socket; data: () => string; closed: Promise<void> } {
  const socket = connect({ port, host: '127.0.0.1', localAddress: from });
  let data = '';
  socket.setEncoding('latin1');
  socket.on('data', (d: string) => { data += d; });
  socket.on('error', () => {});
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  return { socket, data: () => data, closed };
}

function multipart(image: Buffer): { body: Buffer; type: string } {
  const boundary = 'limitsboundary';
  return {
    body: Buffer.concat([
      Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="image"; filename="x.png"\r\nContent-Type: image/png\r\n\r\n`),
      image,
      Buffer.from(`\r\n--${boundary}--\r\n`),
    ]),
    type: `multipart/form-data; boundary=${boundary}`,
  };
}

const head = (path: string, headers: Record<string, string | number>) =>
  `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\n${Object.entries(headers).map(([k, v]) => `${k}: ${v}\r\n`).join('')}\r\n`;

async function until(check: () => boolean, ms: number): Promise<boolean> {
  for (const end = Date.now() + ms; Date.now() < end; await sleep(20)) if (check()) return true;
  return check();
}

describe('defaults', () => {
  test('a client may hold half the slots, never fewer than the workers; connections stop short of the open-file limit', () => {
    assert.equal(loadConfig({ V2A_WORKERS: '2' }).clientSlots, 9); // 2 + 16 slots
    assert.equal(loadConfig({ V2A_WORKERS: '4', V2A_QUEUE_LIMIT: '0' }).clientSlots, 4);
    assert.equal(loadConfig({ V2A_WORKERS: '1', V2A_CLIENT_SLOTS: '0' }).clientSlots, 0);
    assert.equal(loadConfig({}).sendTimeoutMs, 60_000);
    const max = loadConfig({}).maxConnections;
    const soft = /^Max open files\s+(\d+)/m.exec((existsSync('/proc/self/limits') ? readFileSync('/proc/self/limits', 'latin1') : ''))?.[1];
    if (soft) assert.equal(max, Math.max(16, Math.min(10_000, Number(soft) - 256)));
    assert.throws(() => loadConfig({ V2A_MAX_CONNECTIONS: '0' }), /V2A_MAX_CONNECTIONS/);
  });
});

describe('one client cannot hold every slot', () => {
  let server: TestServer;
  let port: number;
  let heavy: Buffer;
  before(async () => {
    // 1 worker + 3 waiting = 4 slots; one client may hold 2 (the default: half).
    server = await startTestServer({ V2A_WORKERS: '1', V2A_QUEUE_LIMIT: '3', V2A_CLIENT_SLOTS: '', V2A_SEND_TIMEOUT_MS: '1000', V2A_BODY_IDLE_TIMEOUT_MS: '30000' });
    port = Number(new URL(server.base).port);
    heavy = await noise(1600, 1200);
  });
  after(async () => server?.close());

  test('stalled uploads take the client\'s share; its next request is 429, another client is served', async () => {
    assert.equal(server.config.clientSlots, 2);
    const { body, type } = multipart(heavy);
    const stalled = [0, 1].map(() => open(port));
    for (const c of stalled) {
      c.socket.write(head('/api/v1/render?columns=40', { 'content-type': type, 'content-length': body.length }));
      c.socket.write(body.subarray(0, 1000));
    }
    assert.ok(await until(() => server.app.v2a.admission.inFlight === 2, 3000), 'both uploads admitted');
    const small = await photo(64, 48);
    const refused = await postForm(`${server.base}/api/v1/render?columns=20`, { image: small });
    assert.equal(refused.status, 429);
    assert.equal(refused.json.type, 'https://v2a.dev/problems/rate-limited');
    assert.match(refused.json.detail, /at most 2 requests in flight/);
    assert.equal(refused.headers.get('retry-after'), '1');
    // Another address: served from the slots left.
    const other = open(port, '127.0.0.2');
    const form = multipart(small);
    other.socket.write(head('/api/v1/render?columns=20', { 'content-type': form.type, 'content-length': form.body.length, connection: 'close' }));
    other.socket.write(form.body);
    await other.closed;
    assert.match(other.data(), /^HTTP\/1\.1 200 /);
    for (const c of stalled) c.socket.destroy();
    assert.ok(await until(() => server.app.v2a.admission.inFlight === 0, 3000));
  });

  test('behind a trusted proxy an IPv6 client\'s share is its /64\'s, as the rate limit\'s budget is', async () => {
    const proxied = await startTestServer({ V2A_WORKERS: '1', V2A_QUEUE_LIMIT: '3', V2A_CLIENT_SLOTS: '', V2A_TRUST_PROXY: '127.0.0.1', V2A_BODY_IDLE_TIMEOUT_MS: '30000' });
    const proxiedPort = Number(new URL(proxied.base).port);
    try {
      const { body, type } = multipart(heavy);
      const stalled = ['2001:db8:1:2::7', '2001:db8:1:2::8'].map((ip) => {
        const c = open(proxiedPort);
        c.socket.write(head('/api/v1/render?columns=40', { 'content-type': type, 'content-length': body.length, 'x-forwarded-for': ip }));
        c.socket.write(body.subarray(0, 1000));
        return c;
      });
      assert.ok(await until(() => proxied.app.v2a.admission.inFlight === 2, 3000), 'both uploads admitted');
      const small = await photo(64, 48);
      const from = (ip: string) => postForm(`${proxied.base}/api/v1/render?columns=20`, { image: small }, { 'x-forwarded-for': ip });
      const refused = await from('2001:db8:1:2:ffff::9');
      assert.equal(refused.status, 429, 'a third address of the same /64');
      assert.match(refused.json.detail, /at most 2 requests in flight/);
      assert.equal((await from('2001:db8:1:3::1')).status, 200, 'another /64');
      for (const c of stalled) c.socket.destroy();
      assert.ok(await until(() => proxied.app.v2a.admission.inFlight === 0, 3000));
    } finally {
      await proxied.close();
    }
  });

  test('an MCP batch with more calls than one client may hold is a permanent -32600, not a 429 to retry', async () => {
    const tiny = (await photo(32, 24)).toString('base64');
    const batch = [1, 2, 3].map((id) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'render_ascii', arguments: { imageBase64: tiny, columns: 12 } } }));
    const r = await postJson(`${server.base}/api/mcp`, batch);
    assert.equal(r.status, 200);
    assert.equal(r.json.error.code, -32600);
    assert.match(r.json.error.message, /runs at most 2 at once for one client \(V2A_CLIENT_SLOTS\)/);
    const two = await postJson(`${server.base}/api/mcp`, batch.slice(0, 2));
    assert.equal(two.json.length, 2);
  });

  test('a client that stops reading its reply loses the connection at V2A_SEND_TIMEOUT_MS, and its slot', async () => {
    const { body, type } = multipart(heavy);
    const c = open(port);
    // A reply of about 5.7 MB (svg of colour blocks at 400 columns), never read: the socket is
    // paused before it comes, so the kernel's buffers stay small.
    c.socket.pause();
    c.socket.write(head('/api/v1/render?columns=400&format=svg&color=true&charset=blocks', { 'content-type': type, 'content-length': body.length }));
    c.socket.write(body);
    assert.ok(await until(() => server.app.v2a.admission.inFlight === 1, 3000), 'admitted');
    // Rendered (under a second or two), then 1 s to be taken: the slot is back long before the
    // reply could have been (it never would: the client never reads).
    assert.ok(await until(() => server.app.v2a.admission.inFlight === 0, 8000), 'its slot is back');
    // Reading now, the client finds the connection cut short of the whole reply.
    c.socket.resume();
    await within(c.closed, 5000);
    assert.ok(c.socket.destroyed, 'the server closed the connection');
    assert.match(c.data(), /^HTTP\/1\.1 200 /);
    assert.ok(!c.data().trimEnd().endsWith('</svg>'), 'the reply was not completed');
  });

  test('a client that keeps reading a large reply slowly gets all of it, past V2A_SEND_TIMEOUT_MS', async () => {
    // A send timeout of its own: a slow reader's window closes now and then, and the kernel's
    // probes of a closed window leave gaps of up to a second or so with nothing taken.
    const slow = await startTestServer({ V2A_WORKERS: '1', V2A_SEND_TIMEOUT_MS: '1500' });
    try {
      const { body, type } = multipart(heavy);
      const c = open(Number(new URL(slow.base).port));
      // The same 5.7 MB reply, read in pieces with a pause after each: longer than the send
      // timeout in all (the old bound on the whole reply cut it), far above MIN_SEND_RATE.
      c.socket.on('data', () => { c.socket.pause(); setTimeout(() => c.socket.resume(), 40); });
      const started = Date.now();
      c.socket.write(head('/api/v1/render?columns=400&format=svg&color=true&charset=blocks', { 'content-type': type, 'content-length': body.length, connection: 'close' }));
      c.socket.write(body);
      await within(c.closed, 30_000);
      const ms = Date.now() - started;
      assert.match(c.data(), /^HTTP\/1\.1 200 /);
      assert.ok(c.data().trimEnd().endsWith('</svg>'), `the whole reply (${c.data().length} bytes in ${ms} ms)`);
      assert.ok(ms > 1500, `taken over more than a send timeout (${ms} ms)`);
    } finally {
      await slow.close();
    }
  });
});

describe('refusals for now spend no rate-limit token', () => {
  test('a 503 while every slot is taken, and an MCP call refused a slot, leave the client\'s budget as it was', async () => {
    // 1 worker, no queue: one slot; one client may hold 2 of them, so it is the server that is full.
    const server = await startTestServer({ V2A_WORKERS: '1', V2A_QUEUE_LIMIT: '0', V2A_CLIENT_SLOTS: '2', V2A_RATE_LIMIT: '10', V2A_BODY_IDLE_TIMEOUT_MS: '30000' });
    try {
      const port = Number(new URL(server.base).port);
      const { body, type } = multipart(await noise(800, 600));
      const stalled = open(port);
      stalled.socket.write(head('/api/v1/render?columns=40', { 'content-type': type, 'content-length': body.length }));
      stalled.socket.write(body.subarray(0, 1000));
      assert.ok(await until(() => server.app.v2a.admission.inFlight === 1, 3000), 'the upload admitted');
      const small = await photo(64, 48);
      for (let i = 0; i < 3; i++) {
        const refused = await postForm(`${server.base}/api/v1/render?columns=20`, { image: small });
        assert.equal(refused.status, 503);
        assert.equal(refused.headers.get('ratelimit-remaining'), null, 'the limiter was not asked');
        // A small MCP body is read first, then refused its slot in the result: no token either.
        const call = await postJson(`${server.base}/api/mcp`, { jsonrpc: '2.0', id: i, method: 'tools/call', params: { name: 'render_ascii', arguments: { imageBase64: small.toString('base64'), columns: 20 } } });
        assert.equal(call.status, 200);
        assert.equal(call.json.result.isError, true);
      }
      stalled.socket.destroy();
      assert.ok(await until(() => server.app.v2a.admission.inFlight === 0, 3000));
      const served = await postForm(`${server.base}/api/v1/render?columns=20`, { image: small });
      assert.equal(served.status, 200);
      // 10, less the stalled upload's token and this one's: the refusals took none (they took 3 to 6).
      assert.equal(served.headers.get('ratelimit-remaining'), '8');
    } finally {
      await server.close();
    }
  });
});

describe('open connections', () => {
  let server: TestServer;
  let port: number;
  /** Connections the server accepted and has not closed yet (those it closes at the cap included). */
  let openCount = 0;
  before(async () => {
    server = await startTestServer({ V2A_MAX_CONNECTIONS: '4' });
    port = Number(new URL(server.base).port);
    server.app.server.on('connection', (socket: Socket) => {
      openCount++;
      socket.once('close', () => openCount--);
    });
  });
  after(async () => server?.close());

  /** A connection with a request in progress: a render's headers and part of its body. */
  async function midRequest(): Promise<ReturnType<typeof open>> {
    const { body, type } = multipart(await photo(64, 48));
    const c = open(port);
    c.socket.write(head('/api/v1/render?columns=20', { 'content-type': type, 'content-length': body.length }));
    c.socket.write(body.subarray(0, 100));
    return c;
  }

  test('past V2A_MAX_CONNECTIONS, every connection with a request in progress, a new connection is closed at once; one freed is usable again', async () => {
    const held = await Promise.all(Array.from({ length: 4 }, () => midRequest()));
    assert.ok(await until(() => server.app.v2a.connections.busy === 4, 3000), 'four requests in progress');
    const extra = open(port);
    extra.socket.write('GET /api/health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
    await within(extra.closed, 3000);
    assert.ok(extra.socket.destroyed, 'closed');
    assert.equal(extra.data(), '');
    // Counted, so an operator sees the cap (it left no trace).
    assert.equal(await counterValue(server.app.v2a.metrics.droppedConnections), 1);
    assert.match(await server.app.v2a.metrics.expose(), /^v2a_connections_dropped_total 1$/m);
    assert.deepEqual(held.map((c) => c.socket.destroyed), [false, false, false, false], 'no request in progress was cut');
    held[0]!.socket.destroy();
    await held[0]!.closed;
    await sleep(100);
    const again = open(port);
    again.socket.write('GET /api/health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n');
    await again.closed;
    assert.match(again.data(), /^HTTP\/1\.1 200 /);
    for (const c of held) c.socket.destroy();
    assert.ok(await until(() => openCount === 0, 3000), 'all closed');
  });

  test('at V2A_MAX_CONNECTIONS with none idle between requests, a new connection closes the oldest that has sent no whole request, and is served (silent ones kept health probes out)', async (t) => {
    const dropped = await counterValue(server.app.v2a.metrics.droppedConnections);
    // Oldest first: a request in progress (never closed for room), then one that sent nothing, one
    // whose headers are still arriving and another that sent nothing.
    const busy = await midRequest();
    const silent: ReturnType<typeof open>[] = [];
    t.after(async () => {
      for (const c of [busy, ...silent]) c.socket.destroy();
      await until(() => openCount === 0, 3000);
    });
    assert.ok(await until(() => server.app.v2a.connections.busy === 1, 3000), 'the request in progress');
    for (const text of ['', 'GET /api/v1/health/live HTTP/1.1\r\nHost: 127.0.0.1\r\n', '']) {
      const c = open(port);
      await once(c.socket, 'connect');
      if (text) c.socket.write(text);
      silent.push(c);
      await sleep(30);
    }
    const probe = async (): Promise<void> => {
      const c = open(port);
      c.socket.write('GET /api/v1/health/live HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n');
      await within(c.closed, 5000);
      assert.match(c.data(), /^HTTP\/1\.1 200 /);
    };
    await probe();
    await within(silent[0]!.closed, 3000);
    assert.deepEqual(silent.map((c) => c.socket.destroyed), [true, false, false], 'the oldest silent one closed');
    // The probe's connection closed: one more silent connection takes the cap again.
    assert.ok(await until(() => openCount === 3, 3000));
    const last = open(port);
    await once(last.socket, 'connect');
    silent.push(last);
    await probe();
    await within(silent[1]!.closed, 3000);
    assert.deepEqual(silent.map((c) => c.socket.destroyed), [true, true, false, false], 'then the next oldest, headers half sent');
    assert.equal(silent[1]!.data(), '', 'closed unanswered');
    assert.equal(busy.socket.destroyed, false, 'the request in progress was kept');
    assert.equal(await counterValue(server.app.v2a.metrics.droppedConnections), dropped, 'none dropped');
  });

  test('at V2A_MAX_CONNECTIONS a keep-alive connection idle between requests makes room before an older silent one', async () => {
    const silent = open(port);
    await once(silent.socket, 'connect');
    await sleep(30);
    const kept: ReturnType<typeof open>[] = [];
    for (let i = 0; i < 3; i++) {
      const c = open(port);
      c.socket.write('GET /api/health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
      assert.ok(await until(() => /\r\n\r\n/.test(c.data()), 5000));
      kept.push(c);
    }
    const fresh = open(port);
    fresh.socket.write('GET /api/v1/health/live HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n');
    await within(fresh.closed, 5000);
    assert.match(fresh.data(), /^HTTP\/1\.1 200 /);
    await within(kept[0]!.closed, 3000);
    assert.deepEqual([silent, ...kept].map((c) => c.socket.destroyed), [false, true, false, false], 'the idle keep-alive connection closed, not the silent one');
    for (const c of [silent, ...kept]) c.socket.destroy();
    assert.ok(await until(() => openCount === 0, 3000), 'all closed');
  });

  test('at V2A_MAX_CONNECTIONS a new connection closes the one idle longest between requests, and is served', async () => {
    // Idle keep-alive clients kept every new one out (health probes too) for their keep-alive timeout.
    const dropped = await counterValue(server.app.v2a.metrics.droppedConnections);
    const kept: ReturnType<typeof open>[] = [];
    for (let i = 0; i < 4; i++) {
      const c = open(port);
      c.socket.write('GET /api/health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
      for (const deadline = Date.now() + 5000; !/\r\n\r\n/.test(c.data()) && Date.now() < deadline;) await sleep(10);
      assert.match(c.data(), /^HTTP\/1\.1 200 /);
      kept.push(c);
      await sleep(20);
    }
    const fresh = open(port);
    fresh.socket.write('GET /api/health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n');
    await within(fresh.closed, 5000);
    assert.match(fresh.data(), /^HTTP\/1\.1 200 /);
    await within(kept[0]!.closed, 3000);
    assert.deepEqual(kept.map((c) => c.socket.destroyed), [true, false, false, false], 'the longest idle one closed, the others kept');
    assert.equal(await counterValue(server.app.v2a.metrics.droppedConnections), dropped, 'none dropped');
    for (const c of kept) c.socket.destroy();
  });
});
