/**
 * Span export end to end: a real server with PLATFORM_API_KEY set exports to an in-process
 * OTLP/HTTP receiver on 127.0.0.1 (JSON encoding). A render and an MCP batch produce the expected
 * span tree (names, parent/child, the trace id and parent of the incoming traceparent, the server
 * span id of the response's traceparent); the key arrives as a header; and a search of every
 * exported byte finds no image data, no base64 of the image, no URL query or user info, no key.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { gunzipSync } from 'node:zlib';
import { after, before, describe, test } from 'node:test';
import { loopbackDns, startHttpsOrigin, type HttpsOrigin } from './helpers/https-origin.js';
import { call, photo, postForm, postJson, startTestServer, type TestServer } from './server-helpers.js';

// ---------------------------------------------------------------------------------------------
// The OTLP/HTTP receiver

interface Export {
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  kind: number;
  startTimeUnixNano: string;
  endTimeUnixNano: string;
  attributes: Record<string, unknown>;
  status: { code?: number; message?: string };
}

const exportsSeen: Export[] = [];
let otlp: http.Server;

function attributeValue(v: Record<string, unknown>): unknown {
  if ('stringValue' in v) return v.stringValue;
  if ('intValue' in v) return Number(v.intValue);
  if ('doubleValue' in v) return v.doubleValue;
  if ('boolValue' in v) return v.boolValue;
  if ('arrayValue' in v) return ((v.arrayValue as { values?: Array<Record<string, unknown>> }).values ?? []).map(attributeValue);
  return undefined;
}

function spans(): OtlpSpan[] {
  const out: OtlpSpan[] = [];
  for (const e of exportsSeen) {
    const doc = JSON.parse(e.body.toString('utf8'));
    for (const rs of doc.resourceSpans ?? []) {
      for (const ss of rs.scopeSpans ?? []) {
        for (const s of ss.spans ?? []) {
          out.push({
            ...s,
            parentSpanId: s.parentSpanId ?? '',
            attributes: Object.fromEntries((s.attributes ?? []).map((a: { key: string; value: Record<string, unknown> }) => [a.key, attributeValue(a.value)])),
            status: s.status ?? {},
          });
        }
      }
    }
  }
  return out;
}

function allExportedBytes(): Buffer {
  return Buffer.concat(exportsSeen.map((e) => Buffer.concat([Buffer.from(JSON.stringify(e.headers['content-type'] ?? '')), e.body])));
}

async function waitFor<T>(what: string, find: () => T | undefined, timeoutMs = 8000): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    await server.app.v2a.telemetry.forceFlush();
    const hit = find();
    if (hit !== undefined) return hit;
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}; spans: ${spans().map((s) => s.name).join(', ')}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/**
 * Absence without sleeping: a sampled marker request made after the one under test is exported
 * in order, so once the marker's server span is in, whatever the earlier request would have
 * exported is in too.
 */
async function assertNotExportedBefore(trace: string): Promise<void> {
  const marker = hex(16);
  const r = await call(`${server.base}/api/v1/agent`, { headers: { traceparent: `00-${marker}-${hex(8)}-01` } });
  assert.equal(r.status, 200);
  await waitFor('the marker request', () => spans().find((s) => s.traceId === marker));
  assert.ok(!spans().some((s) => s.traceId === trace), `trace ${trace} was exported`);
}

// ---------------------------------------------------------------------------------------------
// The server under test, an HTTPS image origin, the inputs

const KEY = `pk_${randomBytes(30).toString('base64url')}`;
let server: TestServer;
let origin: HttpsOrigin;
let originPort: number;
let png: Buffer;
let b64: string;

const lookup = loopbackDns('images.test');

before(async () => {
  otlp = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      let body = Buffer.concat(chunks);
      if (req.headers['content-encoding'] === 'gzip') body = gunzipSync(body);
      if (req.url === '/v1/traces' && req.method === 'POST') exportsSeen.push({ headers: req.headers, body });
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  otlp.listen(0, '127.0.0.1');
  await once(otlp, 'listening');
  // The standard variables, read by the exporter from the process environment.
  process.env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT = `http://127.0.0.1:${(otlp.address() as AddressInfo).port}/v1/traces`;
  process.env.OTEL_BSP_SCHEDULE_DELAY = '50';
  process.env.OTEL_SERVICE_NAME = 'v2a-test';

  png = await photo(96, 64, 'png');
  b64 = png.toString('base64');
  origin = await startHttpsOrigin(['images.test'], (request, response) => {
    if (request.url?.startsWith('/photo.png')) response.writeHead(200, { 'content-type': 'image/png' }).end(png);
    else response.writeHead(404).end('no');
  });
  originPort = origin.port;

  server = await startTestServer({
    PLATFORM_API_KEY: KEY,
    V2A_WORKERS: '1',
    V2A_RECEIVER_STATUS_URL: 'off',
    V2A_IMAGE_FETCH_ALLOWLIST: 'images.test',
    V2A_TEST_ALLOW_LOOPBACK_FETCH: 'true',
  }, { fetchLookup: lookup, fetchCa: origin.ca });
  assert.equal(server.app.v2a.telemetry.exporting, true);
});

after(async () => {
  await server?.close();
  await origin?.close();
  otlp?.closeAllConnections();
  await new Promise((r) => otlp?.close(r));
});

const hex = (n: number) => randomBytes(n).toString('hex');
const STAGES = ['v2a.input', 'v2a.queue', 'v2a.decode', 'v2a.director', 'v2a.render', 'v2a.format', 'v2a.reply'];

function childrenOf(parent: OtlpSpan): OtlpSpan[] {
  return spans().filter((s) => s.parentSpanId === parent.spanId && s.traceId === parent.traceId);
}

function serverSpanOf(traceparent: string | null): { traceId: string; spanId: string } {
  const m = /^00-([0-9a-f]{32})-([0-9a-f]{16})-01$/.exec(traceparent ?? '');
  assert.ok(m, `a sampled traceparent: ${traceparent}`);
  return { traceId: m[1]!, spanId: m[2]! };
}

describe('span export with PLATFORM_API_KEY', () => {
  test('a multipart render: v2a.request (server span of the response traceparent, child of the caller) with the stage spans', async () => {
    const trace = hex(16);
    const parent = hex(8);
    const form = new FormData();
    form.append('image', new Blob([png]), 'photo.png');
    form.append('columns', '32');
    form.append('format', 'json');
    const r = await call(`${server.base}/api/v1/render?charset=standard`, { method: 'POST', body: form, headers: { traceparent: `00-${trace}-${parent}-01`, tracestate: 'vendor=abc' } });
    assert.equal(r.status, 200, r.text);
    const ids = serverSpanOf(r.headers.get('traceparent'));
    assert.equal(ids.traceId, trace, 'trace id continued');

    const request = await waitFor('the request span', () => spans().find((s) => s.spanId === ids.spanId));
    assert.equal(request.name, 'v2a.request');
    assert.equal(request.traceId, trace);
    assert.equal(request.parentSpanId, parent, 'child of the caller\'s span');
    assert.equal(request.kind, 2, 'SERVER');
    assert.equal(request.attributes['http.request.method'], 'POST');
    assert.equal(request.attributes['http.route'], '/api/v1/render');
    assert.equal(request.attributes['url.path'], '/api/v1/render');
    assert.equal(request.attributes['http.response.status_code'], 200);
    assert.equal(request.attributes['v2a.format'], 'json');
    assert.equal(request.attributes['v2a.columns'], 32);
    assert.equal(request.attributes['v2a.charset'], 'standard');
    assert.equal(request.attributes['v2a.input.carrier'], 'upload');
    assert.match(String(request.attributes['v2a.director.status']), /^(target_met|best_effort)$/);
    assert.equal(request.attributes['v2a.output.bytes'], Buffer.byteLength(r.text));
    assert.equal(request.attributes['v2a.trace.continued'], true);

    const children = await waitFor('the stage spans', () => {
      const c = childrenOf(request);
      return STAGES.every((n) => c.some((s) => s.name === n)) ? c : undefined;
    });
    const by = (n: string) => children.find((s) => s.name === n)!;
    assert.deepEqual(by('v2a.input').attributes, { 'v2a.input.carrier': 'upload', 'v2a.input.bytes': png.length });
    assert.equal(by('v2a.decode').attributes['v2a.image.format'], 'png');
    assert.equal(by('v2a.decode').attributes['v2a.image.width'], 96);
    assert.equal(by('v2a.decode').attributes['v2a.image.height'], 64);
    assert.equal(by('v2a.decode').attributes['v2a.image.bytes'], png.length);
    assert.match(String(by('v2a.director').attributes['v2a.director.status']), /^(target_met|best_effort)$/);
    assert.equal(by('v2a.director').attributes['v2a.director.rubric'], 'balanced');
    assert.equal(by('v2a.render').attributes['v2a.columns'], 32);
    assert.equal(by('v2a.render').attributes['v2a.charset'], 'standard');
    assert.equal(typeof by('v2a.render').attributes['v2a.rows'], 'number');
    assert.equal(by('v2a.format').attributes['v2a.format'], 'json');
    assert.equal(by('v2a.format').attributes['v2a.output.bytes'], Buffer.byteLength(r.text));
    assert.equal(by('v2a.reply').attributes['http.response.status_code'], 200);
    // The stages follow one another inside the request (worker clocks: 5 ms slack).
    const t = (s: OtlpSpan, k: 'startTimeUnixNano' | 'endTimeUnixNano') => Number(BigInt(s[k]) / 1000n) / 1000;
    const slack = 5;
    let previousEnd = t(request, 'startTimeUnixNano') - slack;
    for (const name of STAGES) {
      const s = by(name);
      assert.ok(t(s, 'startTimeUnixNano') >= previousEnd - slack, `${name} starts after the previous stage`);
      assert.ok(t(s, 'endTimeUnixNano') >= t(s, 'startTimeUnixNano'), `${name} ends after it starts`);
      previousEnd = t(s, 'endTimeUnixNano');
    }
    assert.ok(previousEnd <= t(request, 'endTimeUnixNano') + slack, 'the stages end within the request');
  });

  test('a base64 render and a failing one: error type on the failed stage', async () => {
    const ok = await postJson(`${server.base}/api/v1/render`, { imageBase64: b64, columns: 20 });
    assert.equal(ok.status, 200);
    const okIds = serverSpanOf(ok.headers.get('traceparent'));
    const request = await waitFor('request', () => spans().find((s) => s.spanId === okIds.spanId));
    assert.equal(request.parentSpanId, '', 'a new trace: the server span is the root');
    assert.equal(request.attributes['v2a.trace.continued'], false);
    const input = await waitFor('input', () => childrenOf(request).find((s) => s.name === 'v2a.input'));
    assert.deepEqual(input.attributes, { 'v2a.input.carrier': 'base64', 'v2a.input.bytes': png.length });

    const bad = await postJson(`${server.base}/api/v1/render`, { imageBase64: png.subarray(0, 120).toString('base64') });
    assert.equal(bad.status, 400);
    const badIds = serverSpanOf(bad.headers.get('traceparent'));
    const failed = await waitFor('failed request', () => spans().find((s) => s.spanId === badIds.spanId));
    assert.equal(failed.attributes['error.type'], 'undecodable-image');
    assert.equal(failed.attributes['http.response.status_code'], 400);
    const decode = await waitFor('decode', () => childrenOf(failed).find((s) => s.name === 'v2a.decode'));
    assert.equal(decode.attributes['error.type'], 'undecodable-image');
    assert.equal(decode.status.code, 2, 'ERROR');
    assert.ok(!childrenOf(failed).some((s) => s.name === 'v2a.render'), 'no render stage after a failed decode');
  });

  test('an imageUrl render: the input span names origin and path only', async () => {
    const r = await postJson(`${server.base}/api/v1/render`, { imageUrl: `https://images.test:${originPort}/photo.png?sig=QUERYSECRET42&x=1#frag`, columns: 16 });
    assert.equal(r.status, 200, r.text);
    const ids = serverSpanOf(r.headers.get('traceparent'));
    const request = await waitFor('request', () => spans().find((s) => s.spanId === ids.spanId));
    const input = await waitFor('input', () => childrenOf(request).find((s) => s.name === 'v2a.input'));
    assert.equal(input.attributes['v2a.input.carrier'], 'url');
    assert.equal(input.attributes['url.full'], `https://images.test:${originPort}/photo.png`);
    assert.equal(input.attributes['server.address'], 'images.test');
    assert.equal(input.attributes['v2a.input.bytes'], png.length);

    const refused = await postJson(`${server.base}/api/v1/render`, { imageUrl: `https://user:PASSWORDXYZ42@images.test:${originPort}/photo.png?token=QUERYSECRET43` });
    assert.equal(refused.status, 400);
    const rIds = serverSpanOf(refused.headers.get('traceparent'));
    const rReq = await waitFor('refused request', () => spans().find((s) => s.spanId === rIds.spanId));
    const rInput = await waitFor('refused input', () => childrenOf(rReq).find((s) => s.name === 'v2a.input'));
    assert.equal(rInput.attributes['error.type'], 'image-url-not-allowed');
    assert.equal(rInput.attributes['url.full'], `https://images.test:${originPort}/photo.png`);
  });

  test('an MCP batch: one v2a.tool_call per tools/call, siblings under the request span', async () => {
    const trace = hex(16);
    const parent = hex(8);
    const batch = [
      { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'render_ascii', arguments: { imageBase64: b64, columns: 24 } } },
      { jsonrpc: '2.0', id: 'two', method: 'tools/call', params: { name: 'render_ascii', arguments: { imageBase64: b64, monoColor: KEY, charset: b64.slice(200, 260) } } },
      { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'no_such_tool', arguments: {} } },
      { jsonrpc: '2.0', id: 4, method: 'ping' },
    ];
    const r = await postJson(`${server.base}/api/mcp`, batch, { accept: 'application/json', traceparent: `00-${trace}-${parent}-01` });
    assert.equal(r.status, 200, r.text);
    assert.equal(r.json.length, 4);
    assert.equal(r.json[0].result.isError, undefined);
    assert.equal(r.json[1].result.isError, true);
    assert.equal(r.json[2].error.code, -32602);
    const ids = serverSpanOf(r.headers.get('traceparent'));
    assert.equal(ids.traceId, trace);

    const request = await waitFor('request', () => spans().find((s) => s.spanId === ids.spanId));
    assert.equal(request.name, 'v2a.request');
    assert.equal(request.parentSpanId, parent);
    assert.equal(request.attributes['http.route'], '/api/mcp');
    assert.equal(request.attributes['v2a.mcp.batch_size'], 4);
    const calls = await waitFor('three tool calls', () => {
      const c = childrenOf(request).filter((s) => s.name === 'v2a.tool_call');
      return c.length === 3 ? c : undefined;
    });
    assert.deepEqual(childrenOf(request).map((s) => s.name).sort(), ['v2a.reply', 'v2a.tool_call', 'v2a.tool_call', 'v2a.tool_call'], 'tool calls and the reply under the request; ping gets no span');
    const byId = (id: string) => calls.find((c) => c.attributes['jsonrpc.request.id'] === id)!;
    for (const c of calls) {
      assert.equal(c.attributes['mcp.method.name'], 'tools/call');
      assert.equal(c.attributes['gen_ai.operation.name'], 'execute_tool');
    }
    const ok = byId('1');
    assert.equal(ok.attributes['gen_ai.tool.name'], 'render_ascii');
    assert.equal(ok.attributes['v2a.tool.is_error'], false);
    assert.equal(ok.attributes['v2a.columns'], 24);
    const okStages = await waitFor('stages of the first call', () => {
      const c = childrenOf(ok);
      return STAGES.filter((n) => n !== 'v2a.reply').every((n) => c.some((s) => s.name === n)) ? c : undefined;
    });
    assert.equal(okStages.find((s) => s.name === 'v2a.input')!.attributes['v2a.input.carrier'], 'base64');

    const toolError = byId('two');
    assert.equal(toolError.attributes['v2a.tool.is_error'], true);
    assert.equal(toolError.attributes['error.type'], 'invalid-parameters');
    assert.equal(toolError.status.code, 2);
    assert.match(toolError.status.message ?? '', /monoColor/, 'the status message says what was wrong');
    assert.equal(childrenOf(toolError).length, 0, 'refused before rendering');

    const rpcError = byId('3');
    assert.equal(rpcError.attributes['gen_ai.tool.name'], '_unknown');
    assert.equal(rpcError.attributes['error.type'], 'jsonrpc_-32602');
  });

  test('every export request carries the key header; no exported byte holds image data, base64, a URL query or user info, or the key', async () => {
    await server.app.v2a.telemetry.forceFlush();
    assert.ok(exportsSeen.length > 0);
    for (const e of exportsSeen) {
      assert.equal(e.headers['x-platform-api-key'], KEY);
      assert.match(String(e.headers['content-type']), /^application\/json/);
    }
    const bytes = allExportedBytes();
    const text = bytes.toString('latin1');
    // Image bytes (a stretch of the PNG's compressed data) and its base64, at several places.
    assert.equal(bytes.indexOf(png.subarray(40, 72)), -1, 'no raw image bytes');
    for (const at of [0, 24, 100, 200, 400, b64.length - 40]) {
      const piece = b64.slice(at, at + 24);
      assert.ok(!text.includes(piece), `no base64 of the image (at ${at}: ${piece})`);
    }
    for (const secret of ['QUERYSECRET42', 'QUERYSECRET43', 'sig=', 'token=', '#frag', 'PASSWORDXYZ42', 'user:']) {
      assert.ok(!text.includes(secret), `no URL query, fragment or user info: ${secret}`);
    }
    assert.ok(!text.includes(KEY), 'not the key');
    for (let at = 0; at + 12 <= KEY.length; at += 6) assert.ok(!text.includes(KEY.slice(at, at + 12)), `no fragment of the key (at ${at})`);
    assert.ok(!text.includes('vendor=abc'), 'the caller\'s tracestate is not exported');
    // What is exported is useful: the service, the span names, the redaction markers where needed.
    assert.match(text, /"service\.name","value":\{"stringValue":"v2a-test"\}/);
    assert.match(text, /\[REDACTED/);
  });

  test('a caller\'s unsampled trace is continued but not exported', async () => {
    const trace = hex(16);
    const r = await postJson(`${server.base}/api/v1/render`, { imageBase64: b64, columns: 12 }, { traceparent: `00-${trace}-${hex(8)}-00` });
    assert.equal(r.status, 200);
    assert.match(r.headers.get('traceparent')!, new RegExp(`^00-${trace}-[0-9a-f]{16}-00$`));
    await assertNotExportedBefore(trace);
  });

  test('health probes are not traced', async () => {
    const trace = hex(16);
    const r = await call(`${server.base}/api/health`, { headers: { traceparent: `00-${trace}-${hex(8)}-01` } });
    assert.equal(r.status, 200);
    await assertNotExportedBefore(trace);
  });
});

describe('without PLATFORM_API_KEY', () => {
  test('nothing is exported, new traces are not sampled, and the telemetry is the no-op', async () => {
    const before = exportsSeen.length;
    const s = await startTestServer({ V2A_WORKERS: '1' });
    try {
      assert.equal(s.app.v2a.telemetry.exporting, false);
      assert.equal(s.app.v2a.telemetry.disabledReason, 'PLATFORM_API_KEY is not set');
      const r = await postForm(`${s.base}/api/v1/render`, { image: png, columns: '16' });
      assert.equal(r.status, 200);
      assert.match(r.headers.get('traceparent')!, /-00$/, 'new traces are not sampled');
      const m = await call(`${s.base}/api/mcp`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'render_ascii', arguments: { imageBase64: b64, columns: 10 } } }) });
      assert.equal(m.status, 200);
      // No exporter exists, so nothing can be in flight: the flush is the no-op's.
      await s.app.v2a.telemetry.forceFlush();
      assert.equal(exportsSeen.length, before, 'no export request');
    } finally {
      await s.close();
    }
  });

  test('OTEL_SDK_DISABLED=true turns the export off even with the key', async () => {
    process.env.OTEL_SDK_DISABLED = 'true';
    try {
      const s = await startTestServer({ V2A_WORKERS: '1', PLATFORM_API_KEY: KEY, V2A_RECEIVER_STATUS_URL: 'off' });
      try {
        assert.equal(s.app.v2a.telemetry.exporting, false);
        assert.equal(s.app.v2a.telemetry.disabledReason, 'OTEL_SDK_DISABLED is true');
      } finally {
        await s.close();
      }
    } finally {
      delete process.env.OTEL_SDK_DISABLED;
    }
  });
});

describe('an endpoint that is no URL', () => {
  test('is a start-up error naming the variable: the exporter fell back to localhost:4318, the key in clear text', async () => {
    const { createTelemetry, TelemetrySetupError } = await import('../src/server/telemetry/tracing.js');
    for (const [env, name] of [
      [{ OTEL_EXPORTER_OTLP_ENDPOINT: 'not a url' }, 'OTEL_EXPORTER_OTLP_ENDPOINT'],
      [{ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'ftp://collector.example/v1/traces' }, 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT'],
    ] as const) {
      await assert.rejects(createTelemetry({ key: KEY, env }), (e: Error) => e instanceof TelemetrySetupError && e.name === 'TelemetrySetupError'
        && e.message.startsWith(`${name} must be an http or https URL`), name);
    }
  });
});

describe('shutdown', () => {
  test('closing the app flushes the spans still batched', async () => {
    process.env.OTEL_BSP_SCHEDULE_DELAY = '60000';
    let s: TestServer | undefined;
    try {
      s = await startTestServer({ V2A_WORKERS: '1', PLATFORM_API_KEY: KEY, V2A_RECEIVER_STATUS_URL: 'off' });
      const r = await postJson(`${s.base}/api/v1/render`, { imageBase64: b64, columns: 10 });
      const ids = serverSpanOf(r.headers.get('traceparent'));
      assert.ok(!spans().some((x) => x.spanId === ids.spanId), 'still batched');
      await s.close();
      s = undefined;
      assert.ok(spans().some((x) => x.spanId === ids.spanId), 'exported on close');
    } finally {
      process.env.OTEL_BSP_SCHEDULE_DELAY = '50';
      await s?.close();
    }
  });
});
