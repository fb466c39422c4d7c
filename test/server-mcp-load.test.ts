/**
 * POST /api/mcp under load, as the official SDK client meets it: notifications/cancelled stops a
 * call (scoped by the Mcp-Session-Id handed out with initialize) and frees its slot; a server whose
 * render slots are full still answers initialize, tools/list and ping; a batch with more calls
 * than the server has slots is a permanent -32600, not a 503 to retry; a batch's rate-limit
 * tokens are taken only when they all fit, and RateLimit-Remaining says what is left; small
 * protocol messages and cancels take none.
 */
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { buildApp } from '../src/server/app.js';
import { loadConfig } from '../src/server/config.js';
import { heldPost, noise, photo, postJson, startTestServer, type TestServer } from './server-helpers.js';

const MCP = '/api/mcp';
const callTool = (id: number | string, args: Record<string, unknown>) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'render_ascii', arguments: args } });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The value of a Prometheus sample, 0 when absent. */
async function metric(base: string, name: string, labels: string): Promise<number> {
  const text = await (await fetch(`${base}/api/v1/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(labels ? `${name}{${labels}} ` : `${name} `));
  return line ? Number(line.split(' ').pop()) : 0;
}

describe('a busy server (1 worker, 1 queue place: 2 slots)', () => {
  let app: FastifyInstance;
  let base: string;
  const logs: any[] = [];
  let slowB64: string;
  let tinyB64: string;

  before(async () => {
    const stream = new Writable({ write(chunk, _enc, cb) { for (const l of String(chunk).split('\n')) if (l) logs.push(JSON.parse(l)); cb(); } });
    const config = loadConfig({
      LOG_LEVEL: 'info', PORT: '0', HOST: '127.0.0.1', V2A_WORKERS: '1', V2A_QUEUE_LIMIT: '1', V2A_RATE_LIMIT: '0', V2A_WARM_UP: 'false', V2A_METRICS: 'on',
      V2A_MCP_MAX_CHARS: '0', // the slow call's reply is large: no budget refusal ends it early
      V2A_CLIENT_SLOTS: '0', // one test client fills both slots on purpose
    });
    app = await buildApp(config, { logStream: stream });
    await app.listen({ port: 0, host: '127.0.0.1' });
    base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
    slowB64 = (await noise(1600, 1200)).toString('base64');
    tinyB64 = (await photo(48, 32, 'png')).toString('base64');
  });
  after(async () => {
    app.server.closeAllConnections();
    await app.close();
  });

  const slowCall = { imageBase64: '', columns: 400, format: 'html', color: true };

  async function connect(statuses: number[] = []): Promise<{ client: Client; transport: StreamableHTTPClientTransport }> {
    const client = new Client({ name: 'v2a-load-test', version: '1.0.0' });
    const recording = async (url: string | URL, init?: RequestInit): Promise<Response> => {
      const res = await fetch(url, init);
      if (init?.method === 'POST') statuses.push(res.status);
      return res;
    };
    const transport = new StreamableHTTPClientTransport(new URL(`${base}${MCP}`), { fetch: recording });
    await client.connect(transport);
    return { client, transport };
  }

  test('initialize hands out a session id; a cancelled call stops, its POST is answered 202, its slot is free again, nothing is logged as an error', async () => {
    const statuses: number[] = [];
    const { client, transport } = await connect(statuses);
    try {
      assert.match(transport.sessionId ?? '', /^[0-9a-f-]{36}$/);
      const before = await metric(base, 'v2a_mcp_tool_calls_total', 'tool="render_ascii",outcome="cancelled"');
      const abort = new AbortController();
      const started = performance.now();
      const call = client.callTool({ name: 'render_ascii', arguments: { ...slowCall, imageBase64: slowB64 } }, undefined, { signal: abort.signal });
      await sleep(300);
      abort.abort();
      await assert.rejects(call, /abort/i);
      // The call's own POST ends at once with 202 (the client expects no answer), not when the render would have.
      for (let i = 0; i < 100 && statuses.length < 4; i++) await sleep(20);
      assert.deepEqual(statuses.slice(2), [202, 202], 'cancel notification, then the cancelled call');
      assert.ok(performance.now() - started < 3000);
      assert.equal(await metric(base, 'v2a_mcp_tool_calls_total', 'tool="render_ascii",outcome="cancelled"'), before + 1);
      // Its admission slot is free at once; its worker finishes the abandoned render on its own,
      // and the next call waits for it in the queue.
      for (let i = 0; i < 2; i++) {
        const next = await client.callTool({ name: 'render_ascii', arguments: { imageBase64: tinyB64, columns: 20 } });
        assert.equal(next.isError, undefined, JSON.stringify(next.content));
      }
      assert.deepEqual(logs.filter((l) => l.level >= 50), []);
      // One info line per call, with its outcome and the request's trace id.
      const lines = logs.filter((l) => l.msg === 'tool call');
      assert.deepEqual(lines.map((l) => l.outcome), ['cancelled', 'ok', 'ok']);
      assert.ok(lines.every((l) => l.level === 30 && l.tool === 'render_ascii' && /^[0-9a-f]{32}$/.test(l.traceId) && l.responseTime >= 0), JSON.stringify(lines));
    } finally {
      await client.close();
    }
  });

  test('a call whose client goes away counts as cancelled, not as a tool error', async () => {
    const cancelled = () => metric(base, 'v2a_mcp_tool_calls_total', 'tool="render_ascii",outcome="cancelled"');
    const toolError = () => metric(base, 'v2a_mcp_tool_calls_total', 'tool="render_ascii",outcome="tool_error"');
    const [c0, e0] = [await cancelled(), await toolError()];
    const abort = new AbortController();
    const call = fetch(`${base}${MCP}`, {
      method: 'POST', signal: abort.signal,
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify(callTool(9, { ...slowCall, imageBase64: slowB64 })),
    }).catch(() => 'gone');
    for (let i = 0; i < 200 && (await metric(base, 'v2a_render_pool_running', '')) < 1; i++) await sleep(10);
    abort.abort();
    assert.equal(await call, 'gone');
    for (let i = 0; i < 200 && (await cancelled()) === c0; i++) await sleep(10);
    assert.deepEqual([await cancelled(), await toolError()], [c0 + 1, e0]);
    // Its worker stops at the render's next stage: free again for the next call.
    for (let i = 0; i < 300 && (await metric(base, 'v2a_render_pool_running', '')) > 0; i++) await sleep(10);
    assert.equal(await metric(base, 'v2a_render_pool_running', ''), 0);
  });

  test('a cancel from another session, or from none, does not stop a call', async () => {
    const session = 'the-callers-session';
    const call = postJson(`${base}${MCP}`, callTool(7, { imageBase64: tinyB64, columns: 30 }), { accept: 'application/json', 'mcp-session-id': session });
    const cancel = { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 7 } };
    const [, other, none] = await Promise.all([
      sleep(0),
      postJson(`${base}${MCP}`, cancel, { accept: 'application/json', 'mcp-session-id': 'someone-else' }),
      postJson(`${base}${MCP}`, cancel, { accept: 'application/json' }),
    ]);
    assert.equal(other.status, 202);
    assert.equal(none.status, 202);
    const r = await call;
    assert.equal(r.status, 200);
    assert.equal(r.json.id, 7);
    assert.equal(r.json.result.isError, undefined);
  });

  test('a cancel that overtakes its call (still uploading) stops the call once its body is in: 202, no render', async () => {
    const session = 'an-early-cancel';
    const cancelledBefore = await metric(base, 'v2a_mcp_tool_calls_total', 'tool="render_ascii",outcome="cancelled"');
    const held = heldPost(`${base}${MCP}`, callTool('e1', { imageBase64: tinyB64, columns: 30 }), { accept: 'application/json', 'mcp-session-id': session });
    await sleep(50);
    const cancel = await postJson(`${base}${MCP}`, { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'e1' } }, { accept: 'application/json', 'mcp-session-id': session });
    assert.equal(cancel.status, 202);
    held.finish();
    const r = await held.replied;
    assert.deepEqual([r.status, r.text], [202, ''], 'cancelled: no answer');
    assert.equal(await metric(base, 'v2a_mcp_tool_calls_total', 'tool="render_ascii",outcome="cancelled"'), cancelledBefore + 1);
  });

  test('with every slot taken by renders, a new client connects, lists tools and pings; a call is refused (isError, retry in N s)', async () => {
    const held = [0, 1].map((i) => postJson(`${base}${MCP}`, callTool(100 + i, { ...slowCall, imageBase64: slowB64 }), { accept: 'application/json' }));
    // Both uploads are admitted before their bodies are read.
    for (let i = 0; i < 200 && (await metric(base, 'v2a_render_pool_running', '')) + (await metric(base, 'v2a_render_pool_queue_depth', '')) < 2; i++) await sleep(10);
    const statuses: number[] = [];
    const { client } = await connect(statuses);
    try {
      assert.equal((await client.listTools()).tools[0]!.name, 'render_ascii');
      assert.deepEqual(await client.ping(), {});
      // Refused as the tool's failure the agent reads, not as an HTTP 503.
      const busy = await client.callTool({ name: 'render_ascii', arguments: { imageBase64: tinyB64, columns: 20 } });
      assert.equal(busy.isError, true);
      assert.match((busy.content as Array<{ text: string }>)[0]!.text, /busy.*retry in \d+ s/);
      assert.ok(!statuses.slice(0, 3).includes(503), `initialize, initialized and tools/list were served: ${statuses}`);
    } finally {
      await client.close();
      for (const r of await Promise.all(held)) assert.equal(r.status, 200);
    }
  });

  test('a batch with more tools/call than the server has slots is one -32600 naming the most it runs, on an idle server', async () => {
    const batch = [1, 2, 3].map((id) => callTool(id, { imageBase64: tinyB64, columns: 20 }));
    const r = await postJson(`${base}${MCP}`, batch, { accept: 'application/json' });
    assert.equal(r.status, 200);
    assert.equal(r.json.error.code, -32600);
    assert.match(r.json.error.message, /3 tools\/call requests; this server runs at most 2 at once \(V2A_WORKERS \+ V2A_QUEUE_LIMIT\)/);
    assert.deepEqual(r.json.error.data, { maxToolCalls: 2 });
    const two = await postJson(`${base}${MCP}`, batch.slice(0, 2), { accept: 'application/json' });
    assert.deepEqual(two.json.map((m: any) => m.result.isError), [undefined, undefined]);
  });
});

describe('rate limit (V2A_RATE_LIMIT=6)', () => {
  let server: TestServer;
  let tinyB64: string;
  before(async () => {
    server = await startTestServer({ V2A_RATE_LIMIT: '6' });
    tinyB64 = (await photo(48, 32, 'png')).toString('base64');
  });
  after(async () => server?.close());

  const ping = { jsonrpc: '2.0', id: 'p', method: 'ping' };

  test('a batch takes a token per call and RateLimit-Remaining counts them; one that cannot fit is refused having spent at most one more', async () => {
    const batch = (n: number) => Array.from({ length: n }, (_, i) => callTool(i + 1, { imageBase64: tinyB64, columns: 16 }));
    const three = await postJson(`${server.base}${MCP}`, batch(3), { accept: 'application/json' });
    assert.equal(three.status, 200);
    assert.equal(three.headers.get('ratelimit-remaining'), '3');
    // 3 left: a batch of 4 takes its request's token and one more, then is refused.
    const four = await postJson(`${server.base}${MCP}`, batch(4), { accept: 'application/json' });
    assert.equal(four.status, 429);
    assert.match(four.json.detail, /this batch needs 4/);
    // 2 tokens left, for the two calls below: protocol messages and cancels of at
    // most 16 KiB take no token, so a client can still stop the renders it has in flight.
    for (const message of [ping, ping, { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 1 } }, ping]) {
      const r = await postJson(`${server.base}${MCP}`, message, { accept: 'application/json' });
      assert.ok(r.status === 200 || r.status === 202, `${JSON.stringify(message)}: ${r.status}`);
      assert.equal(r.headers.get('ratelimit-remaining'), null);
    }
    for (const left of ['1', '0']) {
      const one = await postJson(`${server.base}${MCP}`, callTool(20, { imageBase64: tinyB64, columns: 16 }), { accept: 'application/json' });
      assert.equal(one.status, 200);
      assert.equal(one.headers.get('ratelimit-remaining'), left);
    }
    const refused = await postJson(`${server.base}${MCP}`, callTool(21, { imageBase64: tinyB64, columns: 16 }), { accept: 'application/json' });
    assert.equal(refused.status, 429);
    assert.match(refused.json.detail, /^At most 6 requests per minute are allowed from one client; retry in \d+ s\.$/);
    assert.ok(Number(refused.headers.get('retry-after')) >= 1);
  });
});

describe('a full batch (16 tools/call, the default V2A_MCP_MAX_BATCH)', () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer({ V2A_WORKERS: '1', V2A_QUEUE_LIMIT: '16', V2A_RATE_LIMIT: '0' });
  });
  after(async () => server?.close());

  test('is served without a MaxListenersExceededWarning (a non-JSON line in the logs)', async () => {
    const warnings: string[] = [];
    const onWarning = (w: Error) => warnings.push(`${w.name}: ${w.message}`);
    process.on('warning', onWarning);
    try {
      const tiny = (await photo(48, 32, 'png')).toString('base64');
      const batch = Array.from({ length: 16 }, (_, i) => callTool(i + 1, { imageBase64: tiny, columns: 12 }));
      const r = await postJson(`${server.base}${MCP}`, batch, { accept: 'application/json' });
      assert.equal(r.status, 200);
      assert.equal(r.json.length, 16);
      assert.ok(r.json.every((m: any) => m.result && m.result.isError === undefined));
      await sleep(50);
    } finally {
      process.off('warning', onWarning);
    }
    assert.deepEqual(warnings, []);
  });
});
