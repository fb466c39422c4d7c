/**
 * GET /api/v1/status (version, uptime, pool, span export, effective non-secret configuration,
 * the handoff receiver's status check against a local HTTPS receiver) and GET /api/v1/metrics
 * (Prometheus text exposition 0.0.4 whose counters move with the traffic). Replies are validated
 * against the served OpenAPI document.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { loopbackDns, startHttpsOrigin, type HttpsOrigin } from './helpers/https-origin.js';
import { VERSION } from '../src/core/types.js';
import { describeConfig } from '../src/server/config.js';
import {
  call, photo, postForm, postJson, responseValidator, startTestServer, validatingCaller, type Reply, type ResponseValidator, type TestServer,
} from './server-helpers.js';

const KEY = `pk_${randomBytes(30).toString('base64url')}`;
const auth = { 'x-platform-api-key': KEY };

let receiver: HttpsOrigin;
let receiverPort: number;
const receiverHits: Array<{ url: string; key: string | undefined; ua: string | undefined }> = [];

const lookup = loopbackDns('receiver.test');

let server: TestServer;
let validator: ResponseValidator;
let req: ReturnType<typeof validatingCaller>;

function receiverEnv(extra: Record<string, string> = {}): Record<string, string> {
  return {
    PLATFORM_API_KEY: KEY,
    V2A_WORKERS: '1',
    V2A_RECEIVER_URL: `https://receiver.test:${receiverPort}/receiver`,
    V2A_RECEIVER_CHECK_INTERVAL_MS: '0',
    V2A_TEST_ALLOW_LOOPBACK_FETCH: 'true',
    ...extra,
  };
}

before(async () => {
  process.env.OTEL_TRACES_EXPORTER = 'none';
  receiver = await startHttpsOrigin(['receiver.test'], (request, response) => {
    const key = request.headers['x-platform-api-key'] as string | undefined;
    receiverHits.push({ url: request.url ?? '', key, ua: request.headers['user-agent'] });
    if (request.url === '/redirect') return response.writeHead(302, { location: '/api/v1/status' }).end();
    if (request.url === '/slow') return setTimeout(() => response.writeHead(200).end('{}'), 8000).unref();
    if (request.url !== '/api/v1/status') return response.writeHead(404).end();
    if (key !== KEY) return response.writeHead(401, { 'content-type': 'application/problem+json' }).end('{"status":401}');
    response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ status: 'ok', version: '1.2.3', extra: 'x'.repeat(200) }));
  });
  receiverPort = receiver.port;

  server = await startTestServer(receiverEnv(), { fetchLookup: lookup, fetchCa: receiver.ca });
  validator = responseValidator((await call(`${server.base}/api/openapi.json`)).json);
  req = validatingCaller(() => validator, server.base);
});

after(async () => {
  await server?.close();
  await receiver?.close();
});

async function status(s: TestServer = server, headers: Record<string, string> = auth): Promise<Reply> {
  const r = await call(`${s.base}/api/v1/status`, { headers });
  validator.check('GET', '/api/v1/status', r);
  return r;
}

describe('GET /api/v1/status', () => {
  test('version, uptime, pool, span export state, trace id', async () => {
    const r = await req('GET', '/api/v1/status', { headers: auth });
    assert.equal(r.status, 200, r.text);
    const b = r.json;
    assert.equal(b.service, 'v2a');
    assert.equal(b.version, VERSION);
    assert.equal(b.status, 'ok');
    assert.ok(b.uptimeSeconds >= 0);
    assert.ok(Date.parse(b.startedAt) <= Date.parse(b.time));
    assert.equal(b.traceId, r.headers.get('traceparent')!.split('-')[1]);
    assert.equal(b.node, process.version);
    assert.deepEqual(Object.keys(b.pool).sort(), ['completed', 'queueLimit', 'queued', 'running', 'threadsStarted', 'workers']);
    assert.equal(b.pool.workers, 1);
    assert.deepEqual(b.telemetry, { exporting: false, disabledReason: 'OTEL_TRACES_EXPORTER is none' });
  });

  test('the effective configuration: every setting, values of non-secrets, never the key', async () => {
    const r = await status();
    const config: Array<{ name: string; value?: unknown; set?: boolean; secret?: boolean }> = r.json.config;
    assert.deepEqual(config.map((c) => c.name), describeConfig().map((c) => c.name));
    const get = (name: string) => config.find((c) => c.name === name)!;
    assert.equal(get('V2A_WORKERS').value, 1);
    assert.equal(get('V2A_RATE_LIMIT').value, 0);
    assert.equal(get('HOST').value, '127.0.0.1');
    assert.equal(get('V2A_RECEIVER_URL').value, `https://receiver.test:${receiverPort}/receiver`);
    assert.equal(get('V2A_RECEIVER_STATUS_URL').value, `https://receiver.test:${receiverPort}/api/v1/status`);
    assert.equal(get('V2A_TEST_ALLOW_LOOPBACK_FETCH').value, true);
    assert.deepEqual(get('PLATFORM_API_KEY'), { name: 'PLATFORM_API_KEY', set: true, default: '(unset)', secret: true });
    assert.ok(!r.text.includes(KEY), 'the key is not in the status');
    assert.ok(!r.text.includes(KEY.slice(3, 15)));
  });

  test('the receiver check: reachable, 2xx, key accepted, its status and version; sent with the key; cached', async () => {
    const before = receiverHits.length;
    const r = await status();
    const { receiver: rec } = r.json;
    assert.equal(rec.statusUrl, `https://receiver.test:${receiverPort}/api/v1/status`);
    assert.equal(rec.intervalMs, 0);
    const check = rec.check;
    assert.equal(check.url, `https://receiver.test:${receiverPort}/api/v1/status`);
    assert.equal(check.reachable, true);
    assert.equal(check.ok, true);
    assert.equal(check.authenticated, true);
    assert.equal(check.httpStatus, 200);
    assert.equal(check.receiverStatus, 'ok');
    assert.equal(check.receiverVersion, '1.2.3');
    assert.ok(check.latencyMs >= 0);
    assert.ok(Math.abs(Date.parse(check.checkedAt) - Date.now()) < 60_000);
    const hits = receiverHits.slice(before);
    assert.ok(hits.length <= 1);
    assert.ok(receiverHits.length >= 1);
    const hit = receiverHits.at(-1)!;
    assert.equal(hit.url, '/api/v1/status');
    assert.equal(hit.key, KEY, 'the key is sent as X-Platform-API-Key');
    assert.match(hit.ua ?? '', /^v2a\//);
    const again = await status();
    assert.deepEqual(again.json.receiver.check, check, 'a fresh result is reused');
    assert.equal(receiverHits.length, before + hits.length, 'no second request');
  });

  test('a receiver that refuses the key, a redirect, a non-public address, a timeout', async () => {
    const cases: Array<[Record<string, string>, (check: any) => void]> = [
      [{ PLATFORM_API_KEY: 'another-key-of-some-length' }, (c) => {
        assert.equal(c.reachable, true);
        assert.equal(c.ok, false);
        assert.equal(c.authenticated, false);
        assert.equal(c.httpStatus, 401);
      }],
      [{ V2A_RECEIVER_STATUS_URL: `https://receiver.test:${receiverPort}/redirect` }, (c) => {
        assert.equal(c.ok, false);
        assert.equal(c.httpStatus, 302);
        assert.equal(c.error, 'redirect');
      }],
      [{ V2A_TEST_ALLOW_LOOPBACK_FETCH: 'false' }, (c) => {
        assert.equal(c.reachable, false);
        assert.equal(c.error, 'address_not_public');
      }],
      [{ V2A_FETCH_TIMEOUT_MS: '300', V2A_RECEIVER_STATUS_URL: `https://receiver.test:${receiverPort}/slow` }, (c) => {
        assert.equal(c.reachable, false);
        assert.equal(c.error, 'timeout');
      }],
      [{ V2A_RECEIVER_STATUS_URL: 'https://nowhere.test/api/v1/status' }, (c) => {
        assert.equal(c.reachable, false);
        assert.equal(c.error, 'unreachable');
      }],
    ];
    for (const [env, check] of cases) {
      const s = await startTestServer(receiverEnv(env), { fetchLookup: lookup, fetchCa: receiver.ca });
      try {
        const k = env.PLATFORM_API_KEY ?? KEY;
        const r = await status(s, { authorization: `Bearer ${k}` });
        assert.equal(r.status, 200);
        check(r.json.receiver.check);
      } finally {
        await s.close();
      }
    }
    // The redirect was not followed with the key.
    const redirects = receiverHits.filter((h) => h.url === '/redirect').length;
    assert.equal(redirects, 1);
  });

  test('background checks start with the server; V2A_RECEIVER_STATUS_URL=off turns them off', async () => {
    const before = receiverHits.length;
    const s = await startTestServer(receiverEnv({ V2A_RECEIVER_CHECK_INTERVAL_MS: '1000' }), { fetchLookup: lookup, fetchCa: receiver.ca });
    try {
      for (let i = 0; i < 100 && receiverHits.length === before; i++) await new Promise((r) => setTimeout(r, 20));
      assert.ok(receiverHits.length > before, 'a check at start, without any status request');
      const r = await status(s);
      assert.equal(r.json.receiver.intervalMs, 1000);
      assert.equal(r.json.receiver.check.ok, true);
    } finally {
      await s.close();
    }
    const off = await startTestServer(receiverEnv({ V2A_RECEIVER_STATUS_URL: 'off' }), { fetchLookup: lookup, fetchCa: receiver.ca });
    try {
      const r = await status(off);
      assert.deepEqual(r.json.receiver, { statusUrl: null, intervalMs: 0, check: null });
    } finally {
      await off.close();
    }
  });
});

// ---------------------------------------------------------------------------------------------
// Prometheus text exposition

interface Family { type: string; help: string; samples: Array<{ name: string; labels: Record<string, string>; value: number }> }

/**
 * A strict reader of the text format 0.0.4: each family once, HELP and TYPE before its samples, a
 * family's samples together, valid names and labels. Empty lines are ignored, as the format says
 * (prom-client puts one between families).
 */
function parseExposition(text: string): Map<string, Family> {
  assert.ok(text.endsWith('\n'), 'ends with a line feed');
  const families = new Map<string, Family>();
  const NAME = '[a-zA-Z_:][a-zA-Z0-9_:]*';
  const seen = new Set<string>();
  let current: Family | undefined;
  for (const line of text.slice(0, -1).split('\n')) {
    if (line === '') continue;
    let m: RegExpExecArray | null;
    if ((m = new RegExp(`^# HELP (${NAME}) (.*)$`).exec(line))) {
      assert.ok(!families.has(m[1]!), `one HELP for ${m[1]}`);
      current = { type: '', help: m[2]!, samples: [] };
      families.set(m[1]!, current);
      continue;
    }
    if ((m = new RegExp(`^# TYPE (${NAME}) (counter|gauge|histogram|summary|untyped)$`).exec(line))) {
      const f = families.get(m[1]!);
      assert.ok(f && f.type === '' && f.samples.length === 0, `TYPE after HELP, before samples: ${line}`);
      f.type = m[2]!;
      continue;
    }
    m = new RegExp(`^(${NAME})(?:\\{(.*)\\})? (\\S+)$`).exec(line);
    assert.ok(m, `a sample line: ${JSON.stringify(line)}`);
    const [, name, labelText, value] = m as unknown as [string, string, string | undefined, string];
    const labels: Record<string, string> = {};
    if (labelText) {
      const re = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\["\\n])*)"(,|$)/y;
      let pos = 0;
      while (pos < labelText.length) {
        re.lastIndex = pos;
        const l = re.exec(labelText);
        assert.ok(l, `labels of ${line}`);
        labels[l[1]!] = l[2]!.replace(/\\n/g, '\n').replace(/\\"/g, '"').replace(/\\\\/g, '\\');
        pos = re.lastIndex;
      }
    }
    const family = families.get(name) ?? families.get(name.replace(/_(bucket|sum|count)$/, ''));
    assert.ok(family && family.type, `sample ${name} after its HELP and TYPE`);
    assert.equal(family, current, `sample ${name} with the rest of its family`);
    if (family.type !== 'histogram') assert.ok(families.has(name));
    const key = `${name}${JSON.stringify(labels)}`;
    assert.ok(!seen.has(key), `one sample per series: ${key}`);
    seen.add(key);
    // prom-client writes NaN as `Nan` (an event-loop mean over no samples); Prometheus reads it with
    // Go's ParseFloat, which takes NaN in any case.
    assert.ok(/^(NaN|Nan|[+-]Inf|-?\d+(\.\d+)?(e[+-]?\d+)?)$/.test(value), `value ${value}`);
    family.samples.push({ name, labels, value: Number(value.replace('Inf', 'Infinity')) });
  }
  return families;
}

function sample(families: Map<string, Family>, name: string, labels: Record<string, string> = {}): number {
  const family = families.get(name) ?? families.get(name.replace(/_(bucket|sum|count)$/, ''));
  const s = family?.samples.find((x) => x.name === name && Object.entries(labels).every(([k, v]) => x.labels[k] === v));
  return s?.value ?? 0;
}

describe('GET /api/v1/metrics', () => {
  async function scrape(): Promise<Map<string, Family>> {
    const r = await req('GET', '/api/v1/metrics', { headers: auth });
    assert.equal(r.status, 200);
    assert.equal(r.headers.get('content-type'), 'text/plain; version=0.0.4; charset=utf-8');
    return parseExposition(r.text);
  }

  test('parses as Prometheus text with HELP and TYPE for every metric', async () => {
    const m = await scrape();
    for (const [name, type] of [
      ['v2a_http_requests_total', 'counter'], ['v2a_http_request_duration_seconds', 'histogram'], ['v2a_render_stage_duration_seconds', 'histogram'],
      ['v2a_render_pool_queue_depth', 'gauge'], ['v2a_render_pool_running', 'gauge'], ['v2a_render_pool_workers', 'gauge'],
      ['v2a_rejected_inputs_total', 'counter'], ['v2a_renders_total', 'counter'], ['v2a_mcp_tool_calls_total', 'counter'],
      ['v2a_build_info', 'gauge'], ['v2a_uptime_seconds', 'gauge'], ['process_resident_memory_bytes', 'gauge'],
    ] as const) {
      assert.equal(m.get(name)?.type, type, name);
      assert.ok(m.get(name)!.help.length > 10, `${name} has help`);
    }
    assert.equal(sample(m, 'v2a_build_info', { version: VERSION }), 1);
    assert.equal(sample(m, 'v2a_render_pool_workers'), 1);
    assert.equal(sample(m, 'v2a_render_pool_queue_depth'), 0);
    assert.equal(sample(m, 'v2a_admission_slots'), server.config.workers + server.config.queueLimit);
    assert.equal(sample(m, 'v2a_admission_slots_in_use'), 0);
  });

  test('counters and histograms move with renders, rejections and tool calls', async () => {
    const before = await scrape();
    const ok = { method: 'POST', route: '/api/v1/render', status: '200' };
    const png = await photo(80, 60);
    assert.equal((await postForm(`${server.base}/api/v1/render`, { image: png, columns: '20' })).status, 200);
    assert.equal((await postJson(`${server.base}/api/v1/render`, { imageBase64: png.toString('base64'), columns: 20 })).status, 200);
    assert.equal((await postJson(`${server.base}/api/v1/render`, { columns: 20 })).status, 400);
    assert.equal((await postJson(`${server.base}/api/v1/render`, { imageBase64: png.toString('base64'), columns: 2 })).status, 400);
    const mcp = await postJson(`${server.base}/api/mcp`, [
      { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'render_ascii', arguments: { imageBase64: png.toString('base64'), columns: 12 } } },
      { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'render_ascii', arguments: {} } },
    ]);
    assert.equal(mcp.status, 200);
    // Refused before the dispatcher: an HTTP problem of the MCP face.
    assert.equal((await postJson(`${server.base}/api/mcp`, { jsonrpc: '2.0', id: 3, method: 'ping' }, { 'mcp-protocol-version': '1999-01-01' })).status, 400);
    await call(`${server.base}/no/such/path?x=1`);
    const after = await scrape();
    const delta = (name: string, labels: Record<string, string> = {}) => sample(after, name, labels) - sample(before, name, labels);

    assert.equal(delta('v2a_http_requests_total', ok), 2);
    assert.equal(delta('v2a_http_requests_total', { method: 'POST', route: '/api/v1/render', status: '400' }), 2);
    assert.equal(delta('v2a_http_requests_total', { method: 'GET', route: 'unmatched', status: '404' }), 1, 'unknown paths share one label');
    assert.equal(delta('v2a_http_request_duration_seconds_count', { method: 'POST', route: '/api/v1/render' }), 4);
    assert.equal(delta('v2a_rejected_inputs_total', { face: 'http', cause: 'missing-image' }), 1);
    assert.equal(delta('v2a_rejected_inputs_total', { face: 'http', cause: 'invalid-parameters' }), 1);
    assert.equal(delta('v2a_rejected_inputs_total', { face: 'mcp', cause: 'missing-image' }), 1);
    assert.equal(delta('v2a_renders_total', { face: 'http', outcome: 'ok' }), 2);
    assert.equal(delta('v2a_renders_total', { face: 'mcp', outcome: 'ok' }), 1);
    // Refused before rendering counts as a render error on both faces.
    assert.equal(delta('v2a_renders_total', { face: 'http', outcome: 'error' }), 2);
    assert.equal(delta('v2a_renders_total', { face: 'mcp', outcome: 'error' }), 1);
    assert.equal(delta('v2a_rejected_inputs_total', { face: 'mcp', cause: 'invalid-request' }), 1);
    assert.equal(delta('v2a_mcp_tool_calls_total', { tool: 'render_ascii', outcome: 'ok' }), 1);
    assert.equal(delta('v2a_mcp_tool_calls_total', { tool: 'render_ascii', outcome: 'tool_error' }), 1);
    for (const stage of ['queue', 'decode', 'director', 'render', 'format']) {
      assert.equal(delta('v2a_render_stage_duration_seconds_count', { stage }), 3, stage);
    }
    assert.equal(delta('v2a_render_stage_duration_seconds_count', { stage: 'input' }), 3, 'upload, base64 and the tool\'s base64');
    assert.equal(delta('v2a_render_pool_completed_total'), 3);

    // Histogram invariants: cumulative buckets, +Inf = count.
    const family = after.get('v2a_render_stage_duration_seconds')!;
    const buckets = family.samples.filter((s) => s.name.endsWith('_bucket') && s.labels.stage === 'decode');
    for (let i = 1; i < buckets.length; i++) assert.ok(buckets[i]!.value >= buckets[i - 1]!.value);
    assert.equal(buckets.at(-1)!.labels.le, '+Inf');
    assert.equal(buckets.at(-1)!.value, sample(after, 'v2a_render_stage_duration_seconds_count', { stage: 'decode' }));
    assert.ok(sample(after, 'v2a_render_stage_duration_seconds_sum', { stage: 'decode' }) > 0);
  });

  test('receiver checks are counted and gauged', async () => {
    await status();
    const m = await scrape();
    assert.ok(sample(m, 'v2a_receiver_checks_total', { result: 'ok' }) >= 1);
    assert.equal(sample(m, 'v2a_receiver_up'), 1);
    assert.ok(m.get('v2a_receiver_check_latency_seconds')!.samples.length === 1);
  });

  test('two scrapes at once: the event-loop statistics of an empty interval are left out, not 9223372036 s and NaN', async () => {
    const metrics = server.app.v2a.metrics;
    await metrics.expose();
    // Within the delay histogram's resolution (10 ms): the second finds it empty.
    const [a, b] = await Promise.all([metrics.expose(), metrics.expose()]);
    for (const text of [a, b]) {
      for (const stat of ['min', 'max', 'mean', 'stddev', 'p50', 'p90', 'p99']) {
        const samples = parseExposition(text).get(`nodejs_eventloop_lag_${stat}_seconds`)!.samples;
        assert.ok(samples.length <= 1, stat);
        for (const s of samples) assert.ok(Number.isFinite(s.value) && s.value >= 0 && s.value < 60, `${stat} ${s.value}`);
      }
    }
    // Once the loop has turned again, they are back.
    await new Promise((r) => setTimeout(r, 50));
    assert.equal(parseExposition(await metrics.expose()).get('nodejs_eventloop_lag_p99_seconds')!.samples.length, 1);
  });

  test('two apps in one process: each exposition is valid, with its own app metrics, then the process metrics once', async () => {
    const PROCESS = [
      'process_cpu_seconds_total', 'process_start_time_seconds', 'process_resident_memory_bytes', 'nodejs_heap_size_total_bytes',
      'nodejs_heap_size_used_bytes', 'nodejs_external_memory_bytes', 'nodejs_eventloop_lag_seconds', 'nodejs_version_info', 'nodejs_gc_duration_seconds',
    ];
    const check = (text: string): Map<string, Family> => {
      const m = parseExposition(text);
      for (const name of PROCESS) {
        assert.equal(text.split(`\n# TYPE ${name} `).length, 2, `${name} once`);
        assert.ok(m.get(name)!.samples.length > 0, name);
      }
      const names = [...m.keys()];
      const firstOther = names.findIndex((n) => !n.startsWith('v2a_'));
      assert.ok(firstOther > 0 && names.slice(firstOther).every((n) => !n.startsWith('v2a_')), 'app metrics first');
      return m;
    };
    const second = await startTestServer(receiverEnv(), { fetchLookup: lookup, fetchCa: receiver.ca });
    try {
      const scrapeSecond = async () => {
        const r = await call(`${second.base}/api/v1/metrics`, { headers: auth });
        assert.equal(r.status, 200);
        return r.text;
      };
      check((await req('GET', '/api/v1/metrics', { headers: auth })).text);
      const fresh = check(await scrapeSecond());
      // Its own registry: none of the first app's requests, and no receiver check yet (absent, not 0).
      assert.equal(fresh.get('v2a_http_requests_total')!.samples.length, 0);
      assert.equal(fresh.get('v2a_receiver_up')!.samples.length, 0);
      assert.equal(fresh.get('v2a_admission_slots')!.samples.length, 1);
      check(await scrapeSecond());
    } finally {
      await second.close();
    }
    // Closing an app leaves the process metrics to the others.
    check((await req('GET', '/api/v1/metrics', { headers: auth })).text);
  });
});
