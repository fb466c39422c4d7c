/**
 * The HTTP service end to end: a real server on 127.0.0.1, real images made with sharp, every
 * reply checked against the served OpenAPI document (server-helpers.ts).
 */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import http from 'node:http';
import net from 'node:net';
import { gzipSync } from 'node:zlib';
import { after, before, describe, test } from 'node:test';
import sharp from 'sharp';
import { loopbackDns, startHttpsOrigin, type HttpsOrigin } from './helpers/https-origin.js';
import { contentTypeHeader, FORMAT_INFO } from '../src/core/format/info.js';
import { DEFAULTS, FORMATS, PARAMS, describeDomain } from '../src/core/params/definitions.js';
import { VERSION } from '../src/core/types.js';
import { ConfigError, describeConfig, jsonBodyLimit, loadConfig, strayVariables, strayVariablesOf } from '../src/server/config.js';
import { FORM_OVERHEAD_BYTES } from '../src/server/form-body.js';
import { INLINE_BODY_BYTES } from '../src/server/request-body.js';
import { DATA_CSP, DOCUMENT_CSP } from '../src/server/plugins/security-headers.js';
import { HttpProblem } from '../src/server/problem.js';
import { createRenderPool } from '../src/server/render-pool.js';
import { startServer } from '../src/server/start.js';
import { parseTraceparent, parseTracestate } from '../src/server/trace-context.js';
import { cgroupCpuQuota, defaultWorkers, sizeThreadPool } from '../src/settings/thread-pool.js';
import {
  assertProblem, badValues, call, counterValue, headersOnly, noise, photo, pngClaiming, postForm, postJson, responseValidator, startTestServer, SVG,
  validatingCaller, type Reply, type ResponseValidator, type TestServer,
} from './server-helpers.js';

const RENDER = '/api/v1/render';

let server: TestServer;
let validator: ResponseValidator | undefined;
let req: ReturnType<typeof validatingCaller>;
let png: Buffer;
let jpeg: Buffer;
let tinyB64: string;

/** Refused by the rate limit (an MCP tools/call too, as a render): a 429 problem. */
const rateLimited = (r: { status: number; json: any }): boolean => r.status === 429 && r.json?.type === 'https://v2a.dev/problems/rate-limited';
/** Answered, not over the rate limit. */
const served = (r: { status: number }): boolean => r.status === 200;

before(async () => {
  server = await startTestServer();
  req = validatingCaller(() => validator, server.base);
  const doc = await call(`${server.base}/api/openapi.json`);
  validator = responseValidator(doc.json);
  validator.check('GET', '/api/openapi.json', doc);
  [png, jpeg] = await Promise.all([photo(160, 120, 'png'), photo(160, 120, 'jpeg')]);
  tinyB64 = (await photo(32, 24, 'png')).toString('base64');
});

after(async () => {
  await server?.close();
});

/** POST /api/v1/render with a JSON body, validated. */
const renderJson = (body: unknown, query?: string, headers: Record<string, string> = {}) =>
  req('POST', RENDER, { headers: { 'content-type': 'application/json', ...headers }, body: typeof body === 'string' ? body : JSON.stringify(body), ...(query ? { query } : {}) });

/** POST /api/v1/render as multipart, validated. */
async function renderForm(fields: Record<string, string | Buffer | Array<string | Buffer>>, query?: string): Promise<Reply> {
  const r = await postForm(`${server.base}${RENDER}${query ? `?${query}` : ''}`, fields);
  validator!.check('POST', RENDER, r);
  return r;
}

/** One request written as is over a new connection; the reply as text, once the server closes. */
function rawExchange(request: string | Buffer): Promise<{ head: string; status: number; problem: any }> {
  const { port } = new URL(server.base);
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(port), '127.0.0.1', () => socket.write(request));
    let out = '';
    socket.on('data', (d) => (out += d));
    socket.on('close', () => {
      const i = out.indexOf('\r\n\r\n');
      const head = out.slice(0, i);
      const json = /content-type: application\/problem\+json/i.test(head) ? JSON.parse(out.slice(i + 4)) : undefined;
      resolve({ head, status: Number(head.split(' ')[1]), problem: json });
    });
    socket.on('error', reject);
  });
}

/** A raw reply is a problem of `slug` whose traceId is its traceparent's. */
function assertRawProblem(r: { head: string; status: number; problem: any }, status: number, slug: string): void {
  assert.equal(r.status, status, r.head);
  assert.equal(r.problem?.type, `https://v2a.dev/problems/${slug}`, r.head);
  assert.equal(r.problem.traceId, /traceparent: 00-([0-9a-f]{32})-/i.exec(r.head)?.[1], r.head);
}

function assertCommonHeaders(r: Reply): void {
  assert.equal(r.headers.get('x-content-type-options'), 'nosniff');
  assert.equal(r.headers.get('x-frame-options'), 'DENY');
  assert.equal(r.headers.get('referrer-policy'), 'no-referrer');
  assert.match(r.headers.get('content-security-policy') ?? '', /frame-ancestors 'none'/);
  const tp = parseTraceparent(r.headers.get('traceparent') ?? undefined);
  assert.ok(tp, `valid traceparent: ${r.headers.get('traceparent')}`);
  assert.equal(tp.version, '00');
}

// ---------------------------------------------------------------------------------------------

describe('configuration', () => {
  test('defaults', () => {
    const c = loadConfig({});
    assert.equal(c.port, 8080);
    assert.equal(c.host, '0.0.0.0');
    assert.equal(c.maxImageBytes, 16 * 1024 * 1024);
    assert.equal(c.maxImagePixels, 50_000_000);
    assert.deepEqual(c.imageFetchAllowlist, []);
    assert.equal(c.fetchTimeoutMs, 10_000);
    assert.ok(c.workers >= 1);
    assert.equal(c.queueLimit, c.workers * 8);
    assert.equal(c.rateLimit, 120);
    assert.equal(c.corsOrigins, '*');
    assert.equal(c.mcpMaxBatch, 16);
    assert.equal(c.receiverUrl, 'https://a2v.v2a.dev/receiver');
    assert.equal(c.trustProxy, false);
    assert.equal(c.testAllowLoopbackFetch, false);
    assert.equal(c.logLevel, 'info');
    assert.equal(c.platformKeyConfigured, false);
  });

  test('values are parsed', () => {
    const c = loadConfig({
      PORT: '0', V2A_WORKERS: '3', V2A_CORS_ORIGINS: 'https://a.example, http://localhost:3000', V2A_TRUST_PROXY: '10.0.0.0/8,127.0.0.1',
      V2A_IMAGE_FETCH_ALLOWLIST: 'images.example.com,*.cdn.example.net', PLATFORM_API_KEY: 'k', V2A_RATE_LIMIT: '0', V2A_PUBLIC_URL: 'https://v2a.example.com/',
    });
    assert.equal(c.port, 0);
    assert.equal(c.queueLimit, 24);
    assert.deepEqual(c.corsOrigins, ['https://a.example', 'http://localhost:3000']);
    assert.deepEqual(c.trustProxy, ['10.0.0.0/8', '127.0.0.1']);
    assert.deepEqual(c.imageFetchAllowlist, ['images.example.com', '*.cdn.example.net']);
    assert.equal(c.platformKeyConfigured, true);
    assert.equal(c.rateLimit, 0);
    assert.equal(c.publicUrl, 'https://v2a.example.com');
    assert.equal(JSON.stringify(c).includes('"k"'), false, 'the key itself is not kept');
  });

  test('bad values: one start-up error naming every variable, never echoing the key', () => {
    const bad = {
      PORT: '70000', V2A_MAX_IMAGE_BYTES: '-1', V2A_WORKERS: 'many', V2A_QUEUE_LIMIT: '1.5', V2A_CORS_ORIGINS: 'https://a.example/path',
      V2A_IMAGE_FETCH_ALLOWLIST: 'http://x', V2A_RECEIVER_URL: 'http://receiver.example', V2A_TRUST_PROXY: 'yes please',
      V2A_TEST_ALLOW_LOOPBACK_FETCH: 'perhaps', V2A_FETCH_TIMEOUT_MS: '5s', LOG_LEVEL: 'loud', V2A_MCP_MAX_BATCH: '0',
    };
    assert.throws(() => loadConfig(bad), (err: unknown) => {
      assert.ok(err instanceof ConfigError);
      for (const name of Object.keys(bad)) assert.ok(err.problems.some((p) => p.startsWith(name + ' ')), `${name} named: ${err.problems.join(' | ')}`);
      return true;
    });
  });

  test('V2A_* variables that are no setting are named with the setting they are likely meant as', () => {
    const env = { V2A_WORKER: '2', v2a_workers: '1', V2A_RATELIMIT: '5', V2A_SOMETHING_ELSE_ENTIRELY: 'x', V2A_WORKERS: '2', V2A_DEBUG: '1', PORT: '0', HOME: '/x' };
    assert.deepEqual(strayVariables(env), [
      'V2A_RATELIMIT is no v2a setting and is ignored (did you mean V2A_RATE_LIMIT?)',
      'V2A_SOMETHING_ELSE_ENTIRELY is no v2a setting and is ignored',
      'V2A_WORKER is no v2a setting and is ignored (did you mean V2A_WORKERS?)',
      'v2a_workers is no v2a setting and is ignored (did you mean V2A_WORKERS?)',
    ]);
    // Two swapped pairs are two edits, as for the CLI's flags (four without swaps: no suggestion).
    assert.deepEqual(strayVariables({ V2A_WROKRES: '1' }), ['V2A_WROKRES is no v2a setting and is ignored (did you mean V2A_WORKERS?)']);
    assert.deepEqual(strayVariablesOf(loadConfig(env)), strayVariables(env));
    assert.deepEqual(strayVariables({ V2A_WORKERS: '2', V2A_MCP_MAX_CHARS: '0' }), []);
  });

  test('UV_THREADPOOL_SIZE: libuv\'s 4 when unset, 1 to 1024 when set; npm start\'s and v2a serve\'s sizing is V2A_WORKERS + 4, an operator\'s own value kept', () => {
    assert.equal(loadConfig({}).threadPoolSize, 4, 'unset at start: libuv runs its default');
    assert.equal(loadConfig({ UV_THREADPOOL_SIZE: '24' }).threadPoolSize, 24);
    for (const raw of ['0', '1025', 'lots', '-3']) assert.throws(() => loadConfig({ UV_THREADPOOL_SIZE: raw }), /UV_THREADPOOL_SIZE must be an integer from 1 to 1024/, raw);
    const env: Record<string, string | undefined> = { V2A_WORKERS: '12' };
    assert.equal(sizeThreadPool(env), 16);
    assert.equal(loadConfig(env).threadPoolSize, 16);
    const cores: Record<string, string | undefined> = {};
    sizeThreadPool(cores);
    assert.equal(Number(cores.UV_THREADPOOL_SIZE), loadConfig({}).workers + 4, 'default workers + 4');
    const own = { V2A_WORKERS: '12', UV_THREADPOOL_SIZE: '6' };
    assert.equal(sizeThreadPool(own), undefined);
    assert.equal(own.UV_THREADPOOL_SIZE, '6', 'an operator\'s value is left alone');
    const bad: Record<string, string | undefined> = { V2A_WORKERS: 'many' };
    assert.equal(sizeThreadPool(bad), undefined);
    assert.equal(bad.UV_THREADPOOL_SIZE, undefined, 'a refused V2A_WORKERS is left for the server to refuse');
  });

  test('V2A_WORKERS\'s default: the available cores, at most the whole CPUs of a cgroup CPU quota (v2 cpu.max, v1 cfs quota / period), at least 1', () => {
    const files = (map: Record<string, string>) => (path: string) => map[path];
    assert.equal(cgroupCpuQuota(files({ '/sys/fs/cgroup/cpu.max': '50000 100000\n' })), 0.5);
    assert.equal(cgroupCpuQuota(files({ '/sys/fs/cgroup/cpu.max': 'max 100000\n' })), undefined, 'no quota');
    assert.equal(cgroupCpuQuota(files({ '/sys/fs/cgroup/cpu/cpu.cfs_quota_us': '250000\n', '/sys/fs/cgroup/cpu/cpu.cfs_period_us': '100000\n' })), 2.5);
    assert.equal(cgroupCpuQuota(files({ '/sys/fs/cgroup/cpu,cpuacct/cpu.cfs_quota_us': '400000', '/sys/fs/cgroup/cpu,cpuacct/cpu.cfs_period_us': '100000' })), 4);
    assert.equal(cgroupCpuQuota(files({ '/sys/fs/cgroup/cpu/cpu.cfs_quota_us': '-1\n', '/sys/fs/cgroup/cpu/cpu.cfs_period_us': '100000\n' })), undefined, 'v1: -1 is no quota');
    assert.equal(cgroupCpuQuota(files({})), undefined, 'no cgroup files');
    // Without a cgroup namespace, or under systemd's CPUQuota=, the quota is the process's own
    // cgroup's (from /proc/self/cgroup), or a parent's where that is smaller: the least binds.
    const service = { '/proc/self/cgroup': '0::/system.slice/v2a.service\n' };
    assert.equal(cgroupCpuQuota(files({ ...service, '/sys/fs/cgroup/system.slice/v2a.service/cpu.max': '150000 100000\n' })), 1.5, 'its own cgroup');
    assert.equal(cgroupCpuQuota(files({ ...service, '/sys/fs/cgroup/system.slice/v2a.service/cpu.max': 'max 100000\n', '/sys/fs/cgroup/system.slice/cpu.max': '300000 100000\n' })), 3, 'a parent\'s');
    assert.equal(cgroupCpuQuota(files({ ...service, '/sys/fs/cgroup/system.slice/v2a.service/cpu.max': '400000 100000\n', '/sys/fs/cgroup/system.slice/cpu.max': '200000 100000\n' })), 2, 'the least of them');
    assert.equal(cgroupCpuQuota(files({ ...service, '/sys/fs/cgroup/system.slice/v2a.service/cpu.max': 'max 100000\n' })), undefined, 'none on the way up');
    assert.equal(cgroupCpuQuota(files({ '/proc/self/cgroup': '4:cpu,cpuacct:/docker/abc\n', '/sys/fs/cgroup/cpu,cpuacct/docker/abc/cpu.cfs_quota_us': '50000', '/sys/fs/cgroup/cpu,cpuacct/docker/abc/cpu.cfs_period_us': '100000' })), 0.5, 'v1, its own cgroup');
    assert.equal(defaultWorkers(64, 0.5), 1, 'half a CPU on a 64-core host');
    assert.equal(defaultWorkers(64, 2.5), 2, 'whole CPUs of the quota');
    assert.equal(defaultWorkers(4, 16), 4, 'never more than the cores');
    assert.equal(defaultWorkers(8, undefined), 8);
    assert.equal(loadConfig({}).workers, defaultWorkers(), 'the setting\'s default is this one');
  });

  test('V2A_TRUST_PROXY: true, false, addresses, hop counts from 1 to 16', () => {
    assert.equal(loadConfig({ V2A_TRUST_PROXY: 'true' }).trustProxy, true);
    assert.deepEqual(loadConfig({ V2A_TRUST_PROXY: '::1, 192.168.0.0/16' }).trustProxy, ['::1', '192.168.0.0/16']);
    assert.deepEqual(loadConfig({ V2A_TRUST_PROXY: '2' }).trustProxy, { hops: 2 });
    for (const raw of ['0', '17']) assert.throws(() => loadConfig({ V2A_TRUST_PROXY: raw }), /V2A_TRUST_PROXY must be an integer from 1 to 16/, raw);
    // A boolean's other spellings say nothing of whom to trust: the message names the forms.
    for (const raw of ['yes', 'on']) assert.throws(() => loadConfig({ V2A_TRUST_PROXY: raw }), /is not an IP address or CIDR \(use false, true, a number of proxy hops such as 1, or proxy addresses\)/, raw);
  });

  test('describeConfig documents every variable with a default and a meaning', () => {
    const names = describeConfig().map((c) => c.name);
    for (const n of ['PORT', 'HOST', 'V2A_MAX_IMAGE_BYTES', 'V2A_MAX_IMAGE_PIXELS', 'V2A_IMAGE_FETCH_ALLOWLIST', 'V2A_FETCH_TIMEOUT_MS', 'V2A_WORKERS',
      'V2A_QUEUE_LIMIT', 'V2A_RENDER_TIMEOUT_MS', 'V2A_RATE_LIMIT', 'V2A_CORS_ORIGINS', 'V2A_MCP_MAX_BATCH', 'V2A_RECEIVER_URL', 'V2A_TRUST_PROXY',
      'V2A_TEST_ALLOW_LOOPBACK_FETCH', 'LOG_LEVEL', 'PLATFORM_API_KEY', 'UV_THREADPOOL_SIZE']) {
      assert.ok(names.includes(n), n);
    }
    for (const c of describeConfig()) assert.ok(c.default && c.meaning.length > 10, c.name);
    assert.equal(describeConfig().find((c) => c.name === 'V2A_TEST_ALLOW_LOOPBACK_FETCH')?.testOnly, true);
  });
});

describe('health', () => {
  for (const path of ['/api/health', '/api/v1/health']) {
    test(`GET ${path}`, async () => {
      const r = await req('GET', path);
      assert.equal(r.status, 200);
      assert.match(r.contentType, /^application\/json/);
      assertCommonHeaders(r);
      assert.equal(r.headers.get('content-security-policy'), DATA_CSP);
      assert.equal(r.headers.get('cache-control'), 'no-store');
      assert.equal(r.json.status, 'ok');
      assert.equal(r.json.version, VERSION);
      assert.equal(r.json.traceId, r.headers.get('traceparent')!.split('-')[1]);
      assert.equal(r.json.pool.workers, 2);
      assert.deepEqual(r.json.capabilities.formats, [...FORMATS]);
    });
  }

  test('HEAD works, other methods are 405 with Allow', async () => {
    const head = await call(`${server.base}/api/health`, { method: 'HEAD' });
    assert.equal(head.status, 200);
    const del = await req('DELETE', '/api/health');
    assertProblem(del, 405, 'method-not-allowed');
    // The same Allow as OPTIONS answers (OPTIONS is served on the path too).
    assert.equal(del.headers.get('allow'), 'GET, HEAD, OPTIONS');
    assert.equal((await call(`${server.base}/api/health`, { method: 'OPTIONS' })).headers.get('allow'), 'GET, HEAD, OPTIONS');
    for (const method of ['PUT', 'PATCH', 'TRACE', 'PROPFIND']) {
      // Raw: fetch refuses to send TRACE.
      const r = await rawExchange(`${method} /api/health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`);
      assertRawProblem(r, 405, 'method-not-allowed');
      assert.equal(/^allow: (.*)$/im.exec(r.head)?.[1], 'GET, HEAD, OPTIONS', method);
    }
  });

  test('a pool whose warm-up render failed (a worker that cannot render) is 503 `failed` with why, not `ready`', async () => {
    const broken = await startTestServer({ V2A_WORKERS: '1' }, {
      pool: {
        run: async () => { throw new Error('unused'); },
        runBody: async () => { throw new Error('unused'); },
        stats: () => ({ workers: 1, running: 0, queued: 0, queueLimit: 0, completed: 0, threadsStarted: 1 }),
        retryAfterSeconds: () => 1,
        warm: () => false,
        warmUpFailure: () => 'internal-error: RangeError: WebAssembly.Instance(): Out of memory',
        stopAll: () => {},
        close: async () => {},
      },
    });
    try {
      const r = await call(`${broken.base}/api/v1/health/ready`);
      validator!.check('GET', '/api/v1/health/ready', r);
      assert.equal(r.status, 503);
      assert.equal(r.json.status, 'failed');
      // The why is the log's (an internal message may name the server's files): not told here.
      assert.equal(r.json.reason, 'a render worker cannot render its warm-up image: the server log says why');
    } finally {
      await broken.close();
    }
  });

  test('V2A_WARM_UP (the default): readiness is 503 `warming` until every worker has warmed up, then 200; renders wait for it', { timeout: 90_000 }, async () => {
    assert.equal(loadConfig({}).warmUp, true);
    assert.equal(loadConfig({ V2A_WARM_UP: 'false' }).warmUp, false);
    assert.throws(() => loadConfig({ V2A_WARM_UP: 'soon' }), /V2A_WARM_UP/);
    const warm: number[] = [];
    const pool = createRenderPool({ workers: 2, queueLimit: 2, timeoutMs: 60_000, warmUp: true, onWarm: (ms) => warm.push(ms) });
    const warming = await startTestServer({ V2A_WARM_UP: 'true', V2A_WORKERS: '2' }, { pool });
    try {
      // Starting a worker thread and rendering the warm-up's four jobs takes far longer than this.
      const first = await call(`${warming.base}/api/v1/health/ready`);
      assert.equal(first.status, 503);
      assert.equal(first.json.status, 'warming');
      assert.equal(pool.warm(), false);
      // A render sent now waits for a warm worker, and succeeds.
      const r = await postJson(`${warming.base}${RENDER}`, { imageBase64: tinyB64, columns: 8 });
      assert.equal(r.status, 200, r.text);
      let ready = first;
      const deadline = performance.now() + 60_000;
      while (ready.status !== 200 && performance.now() < deadline) {
        await new Promise((res) => setTimeout(res, 50));
        ready = await call(`${warming.base}/api/v1/health/ready`);
      }
      assert.equal(ready.status, 200);
      assert.equal(ready.json.status, 'ready');
      assert.equal(warm.length, 1, 'told once, when the last worker is warm');
      assert.ok(warm[0]! > 0);
    } finally {
      await warming.close();
    }
    // Off: ready from the start.
    const cold = createRenderPool({ workers: 1, queueLimit: 0, timeoutMs: 1000, warmUp: false });
    assert.equal(cold.warm(), true);
    await cold.close();
  });
});

describe('trace context', () => {
  const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
  const PARENT = '00f067aa0ba902b7';

  test('a valid traceparent is continued with a new span id; tracestate is returned', async () => {
    for (const path of ['/api/health', '/api/v1/health']) {
      const r = await req('GET', path, { headers: { traceparent: `00-${TRACE}-${PARENT}-01`, tracestate: 'congo=t61rcWkgMzE, rojo=00f067aa0ba902b7' } });
      const tp = parseTraceparent(r.headers.get('traceparent')!)!;
      assert.equal(tp.traceId, TRACE);
      assert.notEqual(tp.parentId, PARENT);
      assert.equal(tp.flags, '01');
      assert.equal(r.headers.get('tracestate'), 'congo=t61rcWkgMzE,rojo=00f067aa0ba902b7');
      assert.equal(r.json.traceId, TRACE);
    }
  });

  test('render and errors carry the trace too', async () => {
    const r = await renderJson({ imageBase64: tinyB64, columns: 16 }, undefined, { traceparent: `00-${TRACE}-${PARENT}-00` });
    assert.equal(r.status, 200);
    assert.equal(parseTraceparent(r.headers.get('traceparent')!)!.traceId, TRACE);
    const p = await renderJson({}, undefined, { traceparent: `00-${TRACE}-${PARENT}-00` });
    assert.equal(assertProblem(p, 400, 'missing-image').traceId, TRACE);
    const nf = await req('GET', '/nope', { headers: { traceparent: `00-${TRACE}-${PARENT}-00` } });
    assert.equal(assertProblem(nf, 404, 'not-found').traceId, TRACE);
  });

  const invalid: Array<[string, string]> = [
    ['uppercase hex', `00-${TRACE.toUpperCase()}-${PARENT}-01`],
    ['version ff', `ff-${TRACE}-${PARENT}-01`],
    ['all-zero trace id', `00-${'0'.repeat(32)}-${PARENT}-01`],
    ['all-zero parent id', `00-${TRACE}-${'0'.repeat(16)}-01`],
    ['short trace id', `00-${TRACE.slice(1)}-${PARENT}-01`],
    ['version 00 with trailing data', `00-${TRACE}-${PARENT}-01-extra`],
    ['bad flags', `00-${TRACE}-${PARENT}-0x`],
    ['garbage', 'hello'],
    ['wrong separators', `00_${TRACE}_${PARENT}_01`],
  ];
  for (const [why, value] of invalid) {
    test(`invalid traceparent (${why}) starts a new trace and drops tracestate`, async () => {
      const r = await req('GET', '/api/health', { headers: { traceparent: value, tracestate: 'a=b' } });
      const tp = parseTraceparent(r.headers.get('traceparent')!)!;
      assert.notEqual(tp.traceId, TRACE);
      assert.equal(tp.flags, '00');
      assert.equal(r.headers.get('tracestate'), null);
    });
  }

  test('a higher version with extra fields is accepted (forward compatibility) and answered as 00', async () => {
    const r = await req('GET', '/api/health', { headers: { traceparent: `01-${TRACE}-${PARENT}-01-whatever` } });
    assert.equal(r.headers.get('traceparent')!.slice(0, 35), `00-${TRACE}`);
  });

  test('no traceparent: a new trace each time', async () => {
    const [a, b] = await Promise.all([req('GET', '/api/health'), req('GET', '/api/health')]);
    assert.notEqual(a.headers.get('traceparent'), b.headers.get('traceparent'));
    assert.equal(a.headers.get('tracestate'), null);
  });

  test('tracestate kept only when well formed and within 32 members / 512 characters', async () => {
    const cases: Array<[string, string | null]> = [
      ['vendor@tenant=x, a=1', 'vendor@tenant=x,a=1'],
      ['a=1,a=2', null],
      ['A=1', null],
      ['a=', null],
      ['a=1,c', null],
      ['a=b\u00e9', null],
      [Array.from({ length: 33 }, (_, i) => `k${i}=v`).join(','), null],
      [Array.from({ length: 32 }, (_, i) => `k${i}=v`).join(','), Array.from({ length: 32 }, (_, i) => `k${i}=v`).join(',')],
      [`a=${'x'.repeat(255)},b=${'y'.repeat(255)}`, null],
      ['t@sys=1,,  b=2 ', 't@sys=1,b=2'],
    ];
    for (const [value, expected] of cases) {
      assert.equal(parseTracestate(value) ?? null, expected, value.slice(0, 40));
      const r = await req('GET', '/api/health', { headers: { traceparent: `00-${TRACE}-${PARENT}-01`, tracestate: value } });
      assert.equal(r.headers.get('tracestate'), expected, value.slice(0, 40));
    }
  });
});

describe('render: success', () => {
  test('plain text ignores color (interface.md §2.2): the same art with and without it, for every charset', async () => {
    // Blocks and dots chose their glyphs for an ink and background pair text cannot show.
    for (const charset of ['blocks', 'dots', 'standard']) {
      for (const cellColors of [undefined, 'fg-bg']) {
        const extra: Record<string, string> = cellColors ? { cellColors } : {};
        const mono = await renderForm({ image: png, columns: '40', charset, ...extra });
        const colour = await renderForm({ image: png, columns: '40', charset, color: 'true', ...extra });
        const json = await renderJson({ imageBase64: png.toString('base64'), columns: 40, charset, color: true, format: 'text', ...extra });
        assert.equal(colour.status, 200, colour.text);
        assert.equal(colour.text, mono.text, `${charset} ${cellColors ?? ''}`);
        assert.equal(json.text, mono.text, `${charset} ${cellColors ?? ''} (json)`);
      }
    }
    // A format that shows colour keeps two colours per cell.
    const ansi = await renderForm({ image: png, columns: '40', charset: 'blocks', color: 'true', format: 'ansi' });
    assert.match(ansi.text, /\x1b\[48;2;/);
  });

  for (const format of FORMATS) {
    test(`multipart, format=${format}: content type, disposition, Auto Director header`, async () => {
      const r = await renderForm({ image: png, format, columns: '48', color: 'true' });
      assert.equal(r.status, 200, r.text);
      assert.equal(r.headers.get('content-type'), contentTypeHeader(format));
      assert.equal(r.headers.get('content-disposition'), `inline; filename="ascii.${FORMAT_INFO[format].extension}"`);
      assert.match(r.headers.get('x-auto-director') ?? '', /^(target_met|best_effort); rubric=balanced; score=(0|1|0\.\d+)$/);
      assertCommonHeaders(r);
      const document = format === 'html' || format === 'svg';
      assert.equal(r.headers.get('content-security-policy'), document ? DOCUMENT_CSP : DATA_CSP);
      if (format === 'text') {
        const lines = r.text.replace(/\n$/, '').split('\n');
        assert.ok(lines.length > 5);
        for (const line of lines) assert.equal([...line].length, 48);
      }
      if (format === 'html') assert.match(r.text, /<pre[\s>]/);
      if (format === 'svg') assert.match(r.text, /<svg[\s>]/);
      if (format === 'ansi') assert.match(r.text, /\x1b\[38;2;/);
      if (format === 'json') {
        assert.equal(r.json.columns, 48);
        assert.equal(r.json.colors.length, r.json.rows);
        assert.ok(r.json.explicit.includes('columns'));
      }
      if (format === 'json-compact') assert.equal(r.json.chroma.encoding, 'rgb24-b64-v1');
      if (format === 'png') {
        // The art drawn at 8 x 16 px per cell: a real PNG of 48 columns by the rows of the same render as text.
        const meta = await sharp(r.bytes).metadata();
        assert.equal(meta.format, 'png');
        const text = await renderForm({ image: png, format: 'text', columns: '48', color: 'true' });
        const rows = text.text.replace(/\n$/, '').split('\n').length;
        assert.deepEqual([meta.width, meta.height], [48 * 8, rows * 16]);
      }
    });
  }

  test('imageBase64 as a multipart field says to upload the file as image, also when it is longer than a text field may be (it said only that)', async () => {
    for (const b64 of [tinyB64, jpeg.toString('base64').repeat(8)]) {
      const r = await postForm(`${server.base}${RENDER}`, { imageBase64: b64, columns: '20' });
      const p = assertProblem(r, 400, 'invalid-request');
      assert.equal(p.detail.includes('imageBase64 is accepted in a JSON body only; in multipart/form-data upload the file as the field image'), true, p.detail);
      assert.equal(p.errors[0].parameter, 'imageBase64');
    }
  });

  test('JSON with imageBase64 (also as a data: URL), parameters typed', async () => {
    const r = await renderJson({ imageBase64: jpeg.toString('base64'), columns: 30, charset: 'blocks', invert: true, contrast: 1.5, format: 'json', autoOptimize: 0 });
    assert.equal(r.status, 200, r.text);
    assert.equal(r.json.charset, 'blocks');
    assert.equal(r.json.params.contrast, 1.5);
    assert.equal(r.json.director.strength, 0);
    const data = await renderJson({ imageBase64: `data:image/jpeg;base64,${jpeg.toString('base64').replace(/(.{76})/g, '$1\n')}`, columns: 20 });
    assert.equal(data.status, 200, data.text);
  });

  test('query-string parameters with multipart and with JSON; booleans as 1/0', async () => {
    const a = await renderForm({ image: png }, 'columns=24&format=json&color=1&dither=0');
    assert.equal(a.status, 200, a.text);
    assert.equal(a.json.columns, 24);
    assert.equal(a.json.params.color, true);
    const b = await renderJson({ imageBase64: tinyB64, format: 'json' }, 'columns=20&edges=true');
    assert.equal(b.status, 200, b.text);
    assert.deepEqual([b.json.columns, b.json.params.edges], [20, true]);
  });

  test('defaults apply when nothing is set', async () => {
    const r = await renderForm({ image: png });
    assert.equal(r.status, 200);
    assert.equal(r.headers.get('content-type'), contentTypeHeader(DEFAULTS.format));
    assert.equal(r.text.split('\n')[0]!.length, DEFAULTS.columns);
  });

  test('every accepted input format decodes', async () => {
    for (const f of ['webp', 'gif', 'tiff', 'avif'] as const) {
      const r = await renderForm({ image: await photo(64, 48, f), columns: '16' });
      assert.equal(r.status, 200, `${f}: ${r.text}`);
    }
  });
});

describe('render: bad input', () => {
  test('no image: JSON {} and a multipart body without a file; errors names the image fields of that carrier', async () => {
    const json = assertProblem(await renderJson({}), 400, 'missing-image', /No image/);
    assert.deepEqual(json.errors, ['imageUrl', 'imageBase64'].map((parameter) => ({ parameter, message: 'not given: send exactly one of imageUrl, imageBase64' })));
    const form = assertProblem(await renderForm({ columns: '40' }), 400, 'missing-image', /No image/);
    assert.deepEqual(form.errors, ['image', 'imageUrl'].map((parameter) => ({ parameter, message: 'not given: send exactly one of image, imageUrl' })));
  });

  test('two images: imageUrl + imageBase64, image + imageUrl, two files', async () => {
    const a = assertProblem(await renderJson({ imageUrl: 'https://images.example.com/a.png', imageBase64: tinyB64 }), 400, 'multiple-images', /imageUrl, imageBase64/);
    assert.deepEqual(a.errors.map((e: { parameter: string }) => e.parameter), ['imageUrl', 'imageBase64']);
    assertProblem(await renderForm({ image: png, imageUrl: 'https://images.example.com/a.png' }), 400, 'multiple-images', /image, imageUrl/);
    assertProblem(await renderForm({ image: [png, png] }), 400, 'multiple-images');
  });

  test('every parameter out of range / wrong type / wrong value, in the query and in JSON, is 400 naming it', async () => {
    for (const def of PARAMS) {
      for (const bad of badValues(def)) {
        if (bad.strings !== undefined) {
          const r = await renderJson({ imageBase64: tinyB64 }, `${def.name}=${encodeURIComponent(bad.strings)}`);
          const p = assertProblem(r, 400, 'invalid-parameters');
          assert.deepEqual(p.errors.map((e: { parameter: string }) => e.parameter), [def.name], `${def.name}=${bad.strings}`);
          assert.ok(p.errors[0].message.includes(describeDomain(def)), p.errors[0].message);
        }
        if (bad.json !== undefined) {
          const r = await renderJson({ imageBase64: tinyB64, [def.name]: bad.json });
          const p = assertProblem(r, 400, 'invalid-parameters');
          assert.deepEqual(p.errors.map((e: { parameter: string }) => e.parameter), [def.name], `${def.name}: ${JSON.stringify(bad.json)}`);
          assert.ok(p.detail.includes(def.name));
        }
      }
    }
  });

  test('form fields are validated the same way, and a repeated field is refused', async () => {
    const p = assertProblem(await renderForm({ image: png, columns: '7', charset: 'emoji' }), 400, 'invalid-parameters');
    assert.deepEqual(p.errors.map((e: { parameter: string }) => e.parameter).sort(), ['charset', 'columns']);
    assertProblem(await renderForm({ image: png, columns: ['40', '50'] }), 400, 'invalid-parameters', /more than once/);
  });

  test('a large form (read in a worker): part limits 413, a reserved field name 400, a JSON part that does not parse 400 naming it', async () => {
    const big = Buffer.alloc(INLINE_BODY_BYTES, 7);
    const b = 'LimitsBoundary';
    const form = (parts: string[]) => Buffer.concat([
      ...parts.map((p) => Buffer.from(`--${b}\r\n${p}\r\n`)),
      Buffer.from(`--${b}\r\nContent-Disposition: form-data; name="image"; filename="a.png"\r\nContent-Type: image/png\r\n\r\n`), big,
      Buffer.from(`\r\n--${b}--\r\n`),
    ]);
    const post = (parts: string[]) => req('POST', RENDER, { headers: { 'content-type': `multipart/form-data; boundary=${b}` }, body: form(parts) });
    const file = 'Content-Disposition: form-data; name="image"; filename="x.png"\r\nContent-Type: image/png\r\n\r\nxx';
    assertProblem(await post([file, file, file, file]), 413, 'request-too-large', /too many (files|parts)/);
    assertProblem(await post(['Content-Disposition: form-data; name="__proto__"\r\n\r\n1']), 400, 'invalid-request', /field name is not allowed/);
    const json = assertProblem(await post(['Content-Disposition: form-data; name="columns"\r\nContent-Type: application/json\r\n\r\n{']), 400, 'invalid-request');
    assert.deepEqual(json.errors.map((e: { parameter: string }) => e.parameter), ['columns']);
  });

  test('unknown parameters and fields are 400 naming them', async () => {
    const q = assertProblem(await renderJson({ imageBase64: tinyB64 }, 'colums=80'), 400, 'invalid-parameters', /colums/);
    assert.equal(q.errors[0].parameter, 'colums');
    assert.equal(assertProblem(await renderJson({ imageBase64: tinyB64, width: 80 }), 400, 'invalid-parameters', /width/).errors[0].parameter, 'width');
    assert.equal(assertProblem(await renderForm({ image: png, shade: 'x' }), 400, 'invalid-parameters').errors[0].parameter, 'shade');
    assertProblem(await renderForm({ photo: png }), 400, 'invalid-request', /unknown file field "photo"/);
    assertProblem(await renderJson({ image: tinyB64 }), 400, 'invalid-request', /multipart/);
    assertProblem(await renderForm({ imageBase64: tinyB64 }), 400, 'invalid-request', /JSON body only/);
    assertProblem(await renderJson({ imageBase64: tinyB64 }, 'imageUrl=https://x.example/a.png'), 400, 'invalid-request', /query string/);
    // A name of 100,000 characters is named in part, not echoed whole.
    const long = assertProblem(await renderJson({ imageBase64: tinyB64, ['x'.repeat(100_000)]: 1 }), 400, 'invalid-parameters');
    assert.equal(long.errors[0].parameter, `${'x'.repeat(61)}...`);
    assert.ok(JSON.stringify(long).length < 2000, `${JSON.stringify(long).length} characters`);
    // A part without a name is malformed, not a parameter called "undefined".
    const body = Buffer.from('--b\r\nContent-Disposition: form-data\r\n\r\n80\r\n--b--\r\n');
    const unnamed = await req('POST', RENDER, { headers: { 'content-type': 'multipart/form-data; boundary=b' }, body });
    assertProblem(unnamed, 400, 'invalid-request', /a part has no name/);
  });

  test('the same parameter in two carriers is 400', async () => {
    const a = assertProblem(await renderJson({ imageBase64: tinyB64, columns: 40 }, 'columns=40'), 400, 'invalid-parameters', /given twice/);
    assert.equal(a.errors[0].parameter, 'columns');
    assertProblem(await renderForm({ image: png, format: 'json' }, 'format=json'), 400, 'invalid-parameters', /query string and in the form fields/);
  });

  test('wrong JSON types of the image fields', async () => {
    assert.equal(assertProblem(await renderJson({ imageUrl: 42 }), 400, 'invalid-request').errors[0].parameter, 'imageUrl');
    assert.equal(assertProblem(await renderJson({ imageBase64: '' }), 400, 'invalid-request').errors[0].parameter, 'imageBase64');
    assertProblem(await renderJson([1, 2]), 400, 'invalid-request', /must be an object/);
  });

  test('undecodable bytes, a truncated JPEG, an SVG: each names the field the image came in', async () => {
    const named = (p: { errors?: { parameter: string }[] }) => p.errors?.map((e) => e.parameter);
    assert.deepEqual(named(assertProblem(await renderForm({ image: Buffer.from('this is not an image at all, just text') }), 400, 'unsupported-image')), ['image']);
    const truncated = jpeg.subarray(0, Math.floor(jpeg.length * 0.6));
    assert.deepEqual(named(assertProblem(await renderForm({ image: truncated }), 400, 'undecodable-image', /damaged|truncated|decoded/)), ['image']);
    const brokenPng = Buffer.concat([png.subarray(0, 60), Buffer.alloc(200, 7)]);
    assert.deepEqual(named(assertProblem(await renderJson({ imageBase64: brokenPng.toString('base64') }), 400, 'undecodable-image')), ['imageBase64']);
    // Large enough to be decoded in a worker (the body itself goes there), not on the event loop.
    const bigBroken = Buffer.concat([png.subarray(0, 60), Buffer.alloc(300_000, 7)]);
    assert.deepEqual(named(assertProblem(await renderJson({ imageBase64: bigBroken.toString('base64') }), 400, 'undecodable-image')), ['imageBase64']);
    assert.deepEqual(named(assertProblem(await renderForm({ image: Buffer.concat([SVG, Buffer.alloc(300_000, 32)]) }), 400, 'unsupported-image', /SVG/)), ['image']);
    assertProblem(await renderForm({ image: SVG }), 400, 'unsupported-image', /SVG/);
    assertProblem(await renderForm({ image: Buffer.alloc(0) }), 400, 'undecodable-image', /empty/);
  });

  test('a decompression bomb (header claiming 10 gigapixels) is 413 before any decode', async () => {
    const started = Date.now();
    const p = assertProblem(await renderForm({ image: await pngClaiming(100_000, 100_000) }), 413, 'image-too-large', /too many pixels/);
    assert.equal(p.errors[0].parameter, 'image');
    assert.ok(Date.now() - started < 2000);
  });

  test('an image too tall for the grid is 400 naming columns', async () => {
    const tall = await photo(8, 2000, 'png');
    const p = assertProblem(await renderForm({ image: tall, columns: '400' }), 400, 'image-too-tall', /rows/);
    assert.equal(p.errors[0].parameter, 'columns');
    // Refused from the header, before any pixel: this PNG has none (a 1 x 40,000,000 one passes
    // the pixel limit, and libvips spent minutes decoding it only for the grid to refuse it).
    const claimed = assertProblem(await renderForm({ image: await pngClaiming(1, 40_000_000) }), 400, 'image-too-tall', /even at 8 columns, the fewest/);
    assert.equal(claimed.errors[0].parameter, 'columns');
    assertProblem(await renderForm({ image: await pngClaiming(40, 4000), columns: '200' }), 400, 'image-too-tall', /too tall for 200 columns/);
  });

  test('bad base64 is 400 naming imageBase64', async () => {
    const p = assertProblem(await renderJson({ imageBase64: 'iVBORw0KGgo$$$$' }), 400, 'invalid-base64');
    assert.equal(p.errors[0].parameter, 'imageBase64');
    assertProblem(await renderJson({ imageBase64: 'abc' }), 400, 'invalid-base64', /multiple of 4/);
  });

  test('malformed JSON, an empty JSON body, no body at all', async () => {
    assertProblem(await renderJson('{"imageBase64": '), 400, 'invalid-request', /not valid JSON/);
    assertProblem(await renderJson(''), 400, 'invalid-request');
    const none = assertProblem(await req('POST', RENDER), 400, 'invalid-request', /body is required/);
    // Each image field is named, as a body without an image names those of its carrier.
    assert.deepEqual(none.errors.map((e: { parameter: string }) => e.parameter), ['image', 'imageUrl', 'imageBase64']);
  });

  test('a JSON body may start with a UTF-8 byte order mark (RFC 8259 §8.1); a BOM alone or twice is still refused', async () => {
    const BOM = '\uFEFF';
    // A small body is parsed on the event loop, one over 64 KiB in a worker with its imageBase64 lifted.
    for (const image of [png, await noise(200, 150)]) {
      const r = await renderJson(BOM + JSON.stringify({ imageBase64: image.toString('base64'), columns: 20 }));
      assert.equal(r.status, 200, r.text.slice(0, 300));
    }
    assertProblem(await renderJson(BOM), 400, 'invalid-request', /not valid JSON/);
    assertProblem(await renderJson(`${BOM}${BOM}{}`), 400, 'invalid-request', /not valid JSON/);
  });

  test('wrong content types are 415', async () => {
    for (const type of ['text/plain', 'application/x-www-form-urlencoded', 'image/png', 'application/xml']) {
      const p = assertProblem(await req('POST', RENDER, { headers: { 'content-type': type }, body: 'x=1' }), 415, 'unsupported-media-type', /; send application\/json or multipart\/form-data\.$/);
      assert.deepEqual(p.errors, [{ parameter: 'Content-Type', message: 'not application/json or multipart/form-data' }]);
    }
    // A body with no Content-Type at all.
    const none = await rawExchange(`POST ${RENDER} HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nConnection: close\r\n\r\nabc`);
    assertRawProblem(none, 415, 'unsupported-media-type');
    assert.equal(none.problem.detail, 'A Content-Type header is required: application/json or multipart/form-data.');
    assert.deepEqual(none.problem.errors, [{ parameter: 'Content-Type', message: 'missing' }]);
  });

  test('a compressed body (Content-Encoding) is 415 naming the coding, on render and MCP; identity is read', async () => {
    const json = JSON.stringify({ imageBase64: tinyB64, columns: 16 });
    for (const [path, coding] of [[RENDER, 'gzip'], [RENDER, 'identity, br'], ['/api/mcp', 'deflate']] as const) {
      const r = await req('POST', path, { headers: { 'content-type': 'application/json', 'content-encoding': coding }, body: gzipSync(json) });
      assertProblem(r, 415, 'unsupported-media-type', /Content-Encoding .* is not accepted: send the body uncompressed/);
      assert.equal(r.headers.get('accept-encoding'), 'identity');
      assert.deepEqual(r.json.errors, [{ parameter: 'Content-Encoding', message: 'only identity is accepted' }]);
    }
    const plain = await req('POST', RENDER, { headers: { 'content-type': 'application/json', 'content-encoding': 'identity' }, body: json });
    assert.equal(plain.status, 200);
  });

  test('a JSON body in a charset other than UTF-8 is 415 naming it, on render and MCP; utf-8 and us-ascii are read', async () => {
    const json = JSON.stringify({ imageBase64: tinyB64, columns: 16 });
    for (const [path, type] of [[RENDER, 'application/json; charset=utf-16'], [RENDER, 'application/json;charset="ISO-8859-1"'], ['/api/mcp', 'application/json; charset=latin1']] as const) {
      const r = await req('POST', path, { headers: { 'content-type': type }, body: path === RENDER ? json : '{"jsonrpc":"2.0","id":1,"method":"ping"}' });
      assertProblem(r, 415, 'unsupported-media-type', /Content-Type charset "(utf-16|iso-8859-1|latin1)" is not accepted: a JSON body is UTF-8/);
      assert.deepEqual(r.json.errors, [{ parameter: 'Content-Type', message: 'charset must be utf-8' }]);
    }
    for (const type of ['application/json; charset=UTF-8', 'application/json; charset=utf8', 'application/json; charset=us-ascii']) {
      assert.equal((await req('POST', RENDER, { headers: { 'content-type': type }, body: json })).status, 200, type);
    }
  });

  test('a transfer coding other than chunked (gzip, chunked) is 415 naming it, before the body is read as plain', async () => {
    const gz = gzipSync(JSON.stringify({ imageBase64: tinyB64, columns: 16 }));
    for (const path of [RENDER, '/api/mcp']) {
      const head = `POST ${path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: gzip, chunked\r\n\r\n${gz.length.toString(16)}\r\n`;
      const r = await rawExchange(Buffer.concat([Buffer.from(head), gz, Buffer.from('\r\n0\r\n\r\n')]));
      assertRawProblem(r, 415, 'unsupported-media-type');
      assert.match(r.problem.detail, /Transfer-Encoding "gzip" is not accepted/);
      assert.deepEqual(r.problem.errors, [{ parameter: 'Transfer-Encoding', message: 'only chunked is accepted' }]);
    }
    const chunked = JSON.stringify({ imageBase64: tinyB64, columns: 16 });
    const plain = await rawExchange(`POST ${RENDER} HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n${chunked.length.toString(16)}\r\n${chunked}\r\n0\r\n\r\n`);
    assert.equal(plain.status, 200, plain.head);
  });

  test('Host: missing on HTTP/1.1, given twice or invalid is a 400 problem with a trace (RFC 9112 §3.2); HTTP/1.0 needs none', async () => {
    const missing = await rawExchange('GET /api/health HTTP/1.1\r\n\r\n');
    assertRawProblem(missing, 400, 'invalid-request');
    assert.deepEqual(missing.problem.errors, [{ parameter: 'Host', message: 'missing' }]);
    assert.equal(missing.problem.instance, '/api/health');
    const twice = await rawExchange('GET /api/health HTTP/1.1\r\nHost: a.example\r\nHost: b.example\r\n\r\n');
    assertRawProblem(twice, 400, 'invalid-request');
    assert.deepEqual(twice.problem.errors, [{ parameter: 'Host', message: 'given more than once' }]);
    assert.equal((await rawExchange('GET /api/health HTTP/1.0\r\n\r\n')).status, 200);
    // An invalid Host never reaches the manifests' links (V2A_PUBLIC_URL unset).
    for (const host of ['"><script>x</script>', 'evil.example/path?x=', 'a b', 'host:port', 'localhost:99999']) {
      const bad = await rawExchange(`GET /api/v1/agent HTTP/1.1\r\nHost: ${host}\r\n\r\n`);
      assertRawProblem(bad, 400, 'invalid-request');
      assert.deepEqual(bad.problem.errors, [{ parameter: 'Host', message: 'invalid' }], host);
    }
    for (const host of ['v2a.example.com', 'localhost:8080', '127.0.0.1:1', '[::1]:8080', 'xn--bcher-kva.example']) {
      const ok = await rawExchange(`GET /api/health HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`);
      assert.equal(ok.status, 200, host);
    }
  });

  test('two Content-Type headers are a 400 naming it, not the first one read as the body\'s type', async () => {
    const json = JSON.stringify({ imageBase64: tinyB64, columns: 16 });
    for (const path of [RENDER, '/api/mcp']) {
      const r = await rawExchange(`POST ${path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Type: multipart/form-data; boundary=b\r\nContent-Length: ${json.length}\r\n\r\n${json}`);
      assertRawProblem(r, 400, 'invalid-request');
      assert.deepEqual(r.problem.errors, [{ parameter: 'Content-Type', message: 'given more than once' }], path);
    }
    const once = await rawExchange(`POST ${RENDER} HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: ${json.length}\r\n\r\n${json}`);
    assert.equal(once.status, 200, once.head);
  });

  test('CONNECT is a 405 problem with a trace, not a socket closed without a word', async () => {
    const r = await rawExchange('CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n');
    assertRawProblem(r, 405, 'method-not-allowed');
    assert.match(r.problem.detail, /not a proxy/);
    assert.equal(r.problem.instance, '/', 'the target is no path of this server');
    // RFC 9110 §15.5.6: a 405 names what is served; the target is no resource, so the server's methods.
    assert.equal(/^allow: (.*)$/im.exec(r.head)?.[1], 'GET, HEAD, POST, OPTIONS', r.head);
  });

  test('a form whose Content-Type is spelt in capitals or with spaces is read as a form', async () => {
    const boundary = 'SpeltBoundary';
    const body = Buffer.concat([
      Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="columns"\r\n\r\n24\r\n--${boundary}\r\nContent-Disposition: form-data; name="image"; filename="a.png"\r\nContent-Type: image/png\r\n\r\n`),
      png,
      Buffer.from(`\r\n--${boundary}--\r\n`),
    ]);
    for (const type of [`Multipart/Form-Data; boundary=${boundary}`, `multipart/form-data ; boundary=${boundary}`]) {
      const r = await req('POST', RENDER, { headers: { 'content-type': type }, body });
      assert.equal(r.status, 200, `${type}: ${r.text}`);
      assert.equal(r.text.split('\n')[0]!.length, 24, type);
    }
  });

  test('an empty or malformed multipart body', async () => {
    const empty = await req('POST', RENDER, { headers: { 'content-type': 'multipart/form-data; boundary=XYZ' }, body: '--XYZ--\r\n' });
    assertProblem(empty, 400, 'missing-image');
    const nothing = await req('POST', RENDER, { headers: { 'content-type': 'multipart/form-data; boundary=XYZ' }, body: '' });
    assertProblem(nothing, 400, 'missing-image');
    const noBoundary = await req('POST', RENDER, { headers: { 'content-type': 'multipart/form-data' }, body: 'garbage' });
    assert.equal(noBoundary.status, 400);
    assert.match(noBoundary.contentType, /problem\+json/);
  });

  test('a malformed URL is a 400 problem with a trace', async () => {
    const { port } = new URL(server.base);
    const text = await new Promise<string>((resolve, reject) => {
      const socket = net.connect(Number(port), '127.0.0.1', () => socket.write('GET /api/%zz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n'));
      let out = '';
      socket.on('data', (d) => (out += d));
      socket.on('end', () => resolve(out));
      socket.on('error', reject);
    });
    const [head, body] = text.split('\r\n\r\n') as [string, string];
    assert.match(head, /^HTTP\/1\.1 400/);
    assert.match(head, /content-type: application\/problem\+json/i);
    const trace = /traceparent: 00-([0-9a-f]{32})-/i.exec(head);
    assert.ok(trace, head);
    const p = JSON.parse(body);
    assert.equal(p.type, 'https://v2a.dev/problems/invalid-request');
    assert.equal(p.traceId, trace[1]);
  });

  test('unexpected errors are 500 problems without the message or a stack', async () => {
    const SECRET = 'secret at /internal/path/render.ts:12';
    const failing = await startTestServer({ V2A_WORKERS: '1' }, {
      pool: {
        run: async () => { throw new Error(SECRET); },
        runBody: async () => { throw new Error(SECRET); },
        stats: () => ({ workers: 1, running: 0, queued: 0, queueLimit: 0, completed: 0, threadsStarted: 1 }),
        retryAfterSeconds: () => 1,
        warm: () => true,
        stopAll: () => {},
        close: async () => {},
      },
    });
    try {
      const r = await postJson(`${failing.base}${RENDER}`, { imageBase64: tinyB64 });
      validator!.check('POST', RENDER, r);
      assertProblem(r, 500, 'internal-error');
      assert.ok(!r.text.includes('secret'));
      const f = await postForm(`${failing.base}${RENDER}`, { image: png });
      assertProblem(f, 500, 'internal-error');
      assert.ok(!f.text.includes('secret'));
      const m = await postJson(`${failing.base}/api/mcp`, { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'render_ascii', arguments: { imageBase64: tinyB64 } } });
      assert.equal(m.json.result.isError, true);
      assert.ok(!m.text.includes('secret'));
      assert.match(m.json.result.content[0].text, /Internal error/);
    } finally {
      await failing.close();
    }
  });

  test('unknown paths are 404 and GET on render is 405, as problems', async () => {
    assertProblem(await req('GET', '/api/v2/render'), 404, 'not-found', /\/api\/v2\/render/);
    // Disabled platform actions (no key, V2A_METRICS off) are unknown paths for every method.
    for (const path of ['/api/v1/status', '/api/v1/metrics']) {
      for (const method of ['GET', 'POST', 'DELETE']) assertProblem(await call(`${server.base}${path}`, { method }), 404, 'not-found');
    }
    assertProblem(await req('GET', '/api/health/'), 404, 'not-found');
    const r = await req('GET', RENDER);
    assertProblem(r, 405, 'method-not-allowed');
    assert.equal(r.headers.get('allow'), 'POST, OPTIONS');
  });
});

describe('render: size limits while streaming', () => {
  let small: TestServer;
  const LIMIT = 200_000;

  before(async () => {
    small = await startTestServer({ V2A_MAX_IMAGE_BYTES: String(LIMIT), V2A_MAX_IMAGE_PIXELS: '1000000', V2A_WORKERS: '1' });
  });
  after(async () => small?.close());

  test('an upload over the limit is 413 while the client is still sending; the rest is never read', { timeout: 20_000 }, async () => {
    const TOTAL = 64 * 1024 * 1024;
    const boundary = 'v2a-boundary';
    const { port } = new URL(small.base);
    const result = await new Promise<{ status: number; body: string; written: number }>((resolve, reject) => {
      const request = http.request({ host: '127.0.0.1', port, method: 'POST', path: RENDER, headers: { 'content-type': `multipart/form-data; boundary=${boundary}` } });
      let written = 0;
      let answered = false;
      request.on('response', (res) => {
        answered = true;
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => { resolve({ status: res.statusCode!, body: Buffer.concat(chunks).toString(), written }); request.destroy(); });
        res.on('error', reject);
      });
      request.on('error', (err) => { if (!answered) reject(err); });
      request.write(`--${boundary}\r\nContent-Disposition: form-data; name="image"; filename="big.png"\r\nContent-Type: image/png\r\n\r\n`);
      const chunk = Buffer.alloc(64 * 1024, 0x42);
      const pump = () => {
        while (!answered && !request.destroyed && written < TOTAL) {
          written += chunk.length;
          if (!request.write(chunk)) return void request.once('drain', pump);
        }
        if (!answered && !request.destroyed) request.end(`\r\n--${boundary}--\r\n`);
      };
      pump();
    });
    assert.equal(result.status, 413);
    const p = JSON.parse(result.body);
    assert.equal(p.type, 'https://v2a.dev/problems/image-too-large');
    assert.match(p.detail, new RegExp(`${LIMIT}-byte`));
    assert.ok(result.written < TOTAL / 4, `the server stopped reading early (client wrote ${result.written} of ${TOTAL})`);
  });

  test('a png reply is an image too: over V2A_MAX_IMAGE_PIXELS it is refused naming format, the same grid as text is not', async () => {
    // A 4 KB upload at cellAspect 0.25 and 400 columns was an 82 MP png (seconds of a worker).
    const image = (await photo(320, 240)).toString('base64');
    // 160 x 60 cells of 8 x 16 px: 1280 x 960 px, over the 1,000,000 of this server.
    const p = assertProblem(await postJson(`${small.base}${RENDER}`, { imageBase64: image, columns: 160, format: 'png' }), 400, 'invalid-parameters',
      /1280 x 960 px, over the limit of 1,000,000 pixels \(V2A_MAX_IMAGE_PIXELS\): ask for 144 columns or fewer/);
    // The most that fit do.
    assert.equal((await postJson(`${small.base}${RENDER}`, { imageBase64: image, columns: 144, format: 'png' })).status, 200);
    assert.equal((await postJson(`${small.base}${RENDER}`, { imageBase64: image, columns: 145, format: 'png' })).status, 400);
    assert.equal(p.errors[0].parameter, 'format');
    assert.equal((await postJson(`${small.base}${RENDER}`, { imageBase64: image, columns: 160, format: 'text' })).status, 200);
    const fits = await postJson(`${small.base}${RENDER}`, { imageBase64: image, columns: 100, format: 'png' });
    assert.equal(fits.status, 200);
    assert.equal(fits.contentType, 'image/png');
  });

  test('a client still sending when the 413 comes reads it (a lingering close), not a reset: fetch streaming a body over the cap', async () => {
    // undici writes on after the reply; a socket destroyed with its bytes unread was reset, and
    // fetch failed with EPIPE instead of showing the 413 (the MCP SDK's transport is fetch). Seen
    // with caps of some megabytes (the reply comes after the socket buffers have filled).
    const server = await startTestServer({ V2A_MAX_IMAGE_BYTES: '8000000', V2A_WORKERS: '1' });
    try {
      const body = new TextEncoder().encode(JSON.stringify({ imageBase64: 'A'.repeat(20_000_000) }));
      for (const path of [RENDER, '/api/mcp']) {
        for (let i = 0; i < 3; i++) {
          const stream = new ReadableStream({ start(c) { for (let o = 0; o < body.length; o += 1 << 20) c.enqueue(body.subarray(o, o + (1 << 20))); c.close(); } });
          const r = await fetch(`${server.base}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: stream, duplex: 'half' } as RequestInit);
          assert.equal(r.status, 413, path);
          assert.equal(r.headers.get('connection'), 'close');
          assert.equal(((await r.json()) as { type: string }).type, 'https://v2a.dev/problems/request-too-large');
        }
      }
    } finally {
      await server.close();
    }
  });

  test('a JSON body over the limit for base64 of the maximum image is 413', async () => {
    const limit = jsonBodyLimit(LIMIT);
    const r = await postJson(`${small.base}${RENDER}`, { imageBase64: 'A'.repeat(limit + 10) });
    validator!.check('POST', RENDER, r);
    assertProblem(r, 413, 'request-too-large');
  });

  test('a declared Content-Length over the cap is 413 before any of the body is read; an empty JSON body is 400', async () => {
    for (const [type, length, slug] of [['application/json', jsonBodyLimit(LIMIT) + 1, 'request-too-large'], ['multipart/form-data; boundary=b', LIMIT + FORM_OVERHEAD_BYTES + 1, 'image-too-large']] as const) {
      const answer = await headersOnly(small.base, RENDER, { 'content-type': type, 'content-length': String(length) });
      assert.equal(answer.status, 413, type);
      assert.equal(JSON.parse(answer.body).type, `https://v2a.dev/problems/${slug}`);
    }
    assertProblem(await req('POST', RENDER, { headers: { 'content-type': 'application/json' }, body: '' }), 400, 'invalid-request', /JSON body is empty/);
  });

  test('base64 that decodes to more than the limit is 413', async () => {
    const big = Buffer.alloc(LIMIT + 3000, 1);
    const r = await postJson(`${small.base}${RENDER}`, { imageBase64: big.toString('base64') });
    validator!.check('POST', RENDER, r);
    assertProblem(r, 413, 'image-too-large');
  });

  test('an image over the pixel limit is 413', async () => {
    const r = await postForm(`${small.base}${RENDER}`, { image: await photo(1200, 1000, 'jpeg') });
    validator!.check('POST', RENDER, r);
    assertProblem(r, 413, 'image-too-large', /pixels/);
  });

  test('an upload just under the limit renders', async () => {
    const r = await postForm(`${small.base}${RENDER}`, { image: png, columns: '20' });
    validator!.check('POST', RENDER, r);
    assert.equal(r.status, 200, r.text);
  });
});

describe('render: imageUrl through the real fetcher (local HTTPS, test-only loopback)', () => {
  let origin: HttpsOrigin;
  let fetchServer: TestServer;
  let port = 0;
  const BIG = Buffer.alloc(300_000, 9);

  const lookup = loopbackDns('images.test', 'other.test');

  before(async () => {
    origin = await startHttpsOrigin(['images.test', 'other.test'], (request, response) => {
      if (request.url === '/photo.png') response.writeHead(200, { 'content-type': 'image/png' }).end(png);
      else if (request.url === '/big.png') response.writeHead(200, { 'content-type': 'image/png' }).end(BIG);
      else response.writeHead(404).end('no');
    });
    port = origin.port;
    fetchServer = await startTestServer(
      { V2A_IMAGE_FETCH_ALLOWLIST: 'images.test', V2A_TEST_ALLOW_LOOPBACK_FETCH: 'true', V2A_MAX_IMAGE_BYTES: '200000', V2A_WORKERS: '1' },
      { fetchLookup: lookup, fetchCa: origin.ca },
    );
  });
  after(async () => {
    await fetchServer?.close();
    await origin?.close();
  });

  const post = async (body: unknown) => {
    const r = await postJson(`${fetchServer.base}${RENDER}`, body);
    validator!.check('POST', RENDER, r);
    return r;
  };

  test('an allowlisted https URL renders (JSON and multipart field)', async () => {
    const r = await post({ imageUrl: `https://images.test:${port}/photo.png`, columns: 32 });
    assert.equal(r.status, 200, r.text);
    assert.equal(r.text.split('\n')[0]!.length, 32);
    const f = await postForm(`${fetchServer.base}${RENDER}`, { imageUrl: `https://images.test:${port}/photo.png`, columns: '20' });
    validator!.check('POST', RENDER, f);
    assert.equal(f.status, 200, f.text);
    // Bodies over INLINE_BODY_BYTES are read in a worker, which hands the URL back to be fetched:
    // JSON padded with whitespace, a form with a preamble before its first part.
    const padded = `{"imageUrl": "https://images.test:${port}/photo.png",${' '.repeat(INLINE_BODY_BYTES)}"columns": 24}`;
    const pj = await postJson(`${fetchServer.base}${RENDER}`, padded);
    assert.equal(pj.status, 200, pj.text);
    assert.equal(pj.text.split('\n')[0]!.length, 24);
    const b = 'PaddedBoundary';
    const form = `${'preamble '.repeat(INLINE_BODY_BYTES / 8)}\r\n--${b}\r\nContent-Disposition: form-data; name="imageUrl"\r\n\r\nhttps://images.test:${port}/photo.png\r\n--${b}\r\nContent-Disposition: form-data; name="columns"\r\n\r\n28\r\n--${b}--\r\n`;
    const pf = await call(`${fetchServer.base}${RENDER}`, { method: 'POST', headers: { 'content-type': `multipart/form-data; boundary=${b}` }, body: form });
    assert.equal(pf.status, 200, pf.text);
    assert.equal(pf.text.split('\n')[0]!.length, 28);
  });

  test('a large JSON body (read in a worker) renders its imageBase64, and is refused as a small one is', async () => {
    const big = await sharp({ create: { width: 200, height: 150, channels: 3, background: '#000', noise: { type: 'gaussian', mean: 128, sigma: 30 } } }).png().toBuffer();
    assert.ok(big.length * 4 / 3 > INLINE_BODY_BYTES && big.length < 200_000, String(big.length));
    const r = await post({ imageBase64: big.toString('base64'), columns: 30 });
    assert.equal(r.status, 200, r.text);
    assert.equal(r.text.split('\n')[0]!.length, 30);
    const bad = assertProblem(await post({ imageBase64: big.toString('base64'), columns: 1 }), 400, 'invalid-parameters');
    assert.equal(bad.errors[0].parameter, 'columns');
    assertProblem(await post({ imageBase64: big.toString('base64'), imageUrl: `https://images.test:${port}/photo.png` }), 400, 'multiple-images');
  });

  test('a host off the allowlist, http, an IP literal: 400 naming imageUrl', async () => {
    for (const url of [`https://other.test:${port}/photo.png`, `http://images.test:${port}/photo.png`, `https://127.0.0.1:${port}/photo.png`]) {
      const p = assertProblem(await post({ imageUrl: url }), 400, 'image-url-not-allowed');
      assert.equal(p.errors[0].parameter, 'imageUrl');
    }
  });

  test('an upstream 404 is 502; a body over the limit is 413', async () => {
    assertProblem(await post({ imageUrl: `https://images.test:${port}/missing.png` }), 502, 'image-fetch-failed', /404/);
    assertProblem(await post({ imageUrl: `https://images.test:${port}/big.png` }), 413, 'image-too-large', /200000-byte/);
  });
});

describe('overload, timeouts, rate limits, CORS, shutdown', () => {
  let slow: Buffer;
  before(async () => {
    slow = await noise(1600, 1600).then((b) => b); // ~0.3-0.5 s per render at 400 columns
  });

  test('queue full: 503 with Retry-After, while /api/health answers promptly', { timeout: 30_000 }, async () => {
    const busy = await startTestServer({ V2A_WORKERS: '1', V2A_QUEUE_LIMIT: '0' });
    try {
      const form = () => postForm(`${busy.base}${RENDER}`, { image: slow, columns: '400' });
      const renders = Promise.all([form(), form(), form()]);
      let rendered = false;
      void renders.then(() => { rendered = true; });
      await new Promise((r) => setTimeout(r, 60));
      const health = await call(`${busy.base}/api/health`);
      // Health is answered while the render is still running: it never waits for a worker.
      const answeredDuringRender = !rendered;
      validator!.check('GET', '/api/health', health);
      const replies = await renders;
      assert.equal(health.status, 200);
      assert.ok(answeredDuringRender, 'health answered before the renders finished');
      const statuses = replies.map((r) => r.status).sort();
      assert.ok(statuses.includes(200) && statuses.includes(503), `statuses ${statuses}`);
      for (const r of replies) {
        validator!.check('POST', RENDER, r);
        if (r.status === 503) {
          assertProblem(r, 503, 'overloaded', /busy/);
          assert.match(r.headers.get('retry-after') ?? '', /^\d+$/);
        }
      }
    } finally {
      await busy.close();
    }
  });

  test('the pool queue: FIFO, bounded by the queue limit; a waiting render leaves it when its caller goes', { timeout: 30_000 }, async () => {
    const pool = createRenderPool({ workers: 1, queueLimit: 1, timeoutMs: 20_000 });
    const job = (bytes: Uint8Array, columns: number) => ({
      source: { kind: 'bytes' as const, bytes }, params: { columns }, maxBytes: 1 << 24, maxPixels: 50_000_000, decodeTimeoutSeconds: 30, structured: false,
    });
    try {
      const a = pool.run(job(Uint8Array.from(slow), 400));
      const gone = new AbortController();
      const b = pool.run(job(Uint8Array.from(slow), 400), gone.signal);
      b.catch(() => {});
      assert.deepEqual([pool.stats().running, pool.stats().queued], [1, 1]);
      await assert.rejects(pool.run(job(Uint8Array.from(slow), 400)), (e: unknown) => e instanceof HttpProblem && e.slug === 'overloaded' && e.status === 503);
      gone.abort(new Error('client gone'));
      await assert.rejects(b, /client gone/);
      assert.equal(pool.stats().queued, 0);
      const c = pool.run(job(Buffer.from(tinyB64, 'base64'), 8));
      assert.equal(pool.stats().queued, 1);
      const [ra, rc] = await Promise.all([a, c]);
      assert.equal(ra.ok && ra.columns, 400);
      assert.equal(rc.ok && rc.columns, 8);
      assert.deepEqual([pool.stats().running, pool.stats().queued, pool.stats().completed], [0, 0, 2]);
    } finally {
      await pool.close();
    }
    await assert.rejects(pool.run(job(Buffer.from(tinyB64, 'base64'), 8)), (e: unknown) => e instanceof HttpProblem && e.slug === 'shutting-down');
  });

  test('a render over V2A_RENDER_TIMEOUT_MS is answered 503 render-timeout at once and stops at its next stage: its thread is kept', { timeout: 60_000 }, async () => {
    const timed = await startTestServer({ V2A_WORKERS: '1', V2A_RENDER_TIMEOUT_MS: '100' });
    try {
      const pool = timed.app.v2a.pool;
      const deadline = performance.now() + 45_000;
      // A tiny render, retried past timeouts: on a loaded machine even it can take over 100 ms.
      const tiny = async () => {
        let r = await postJson(`${timed.base}${RENDER}`, { imageBase64: tinyB64, columns: 8, autoOptimize: 0 });
        while (r.status !== 200 && performance.now() < deadline) {
          await new Promise((res) => setTimeout(res, 150));
          r = await postJson(`${timed.base}${RENDER}`, { imageBase64: tinyB64, columns: 8, autoOptimize: 0 });
        }
        return r;
      };
      // The thread loaded (tsx and sharp can take seconds on a loaded machine, past the stop's grace).
      await tiny();
      const timeouts = await counterValue(timed.app.v2a.metrics.renders, { face: 'http', outcome: 'timeout' });
      const completed = pool.stats().completed;
      const r = await postForm(`${timed.base}${RENDER}`, { image: slow, columns: '400' });
      validator!.check('POST', RENDER, r);
      assertProblem(r, 503, 'render-timeout');
      // The worker is busy until its render reaches the next stage, then free: the same thread.
      // Terminating it (piscina's abort) leaked libvips' memory, ~2.5 MB a timeout.
      while (pool.stats().running > 0 && performance.now() < deadline) await new Promise((res) => setTimeout(res, 20));
      assert.equal(pool.stats().running, 0);
      assert.equal(pool.stats().threadsStarted, 1, 'no thread replaced');
      // A stopped render counts as a timeout, not as a completed render nor as an error.
      assert.equal(pool.stats().completed, completed);
      assert.deepEqual(await Promise.all(['timeout', 'error'].map((outcome) => counterValue(timed.app.v2a.metrics.renders, { face: 'http', outcome }))), [timeouts + 1, 0]);
      assert.match(await timed.app.v2a.metrics.expose(), /^v2a_render_pool_threads_started_total 1$/m);
      // The same thread renders again.
      const ok = await tiny();
      assert.equal(ok.status, 200, ok.text);
      assert.equal(pool.stats().threadsStarted, 1);
    } finally {
      await timed.close();
    }
  });

  test('rate limit: RateLimit-* headers, then 429 with Retry-After; health is not limited', async () => {
    const limited = await startTestServer({ V2A_RATE_LIMIT: '3', V2A_WORKERS: '1' });
    try {
      const send = async () => {
        const r = await postJson(`${limited.base}${RENDER}`, {});
        validator!.check('POST', RENDER, r);
        return r;
      };
      // A tools/call takes a token (without an image it fails fast, as a tool error); a ping none.
      const toolCall = { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'render_ascii', arguments: { columns: 16 } } };
      const mcpCall = await postJson(`${limited.base}/api/mcp`, toolCall);
      assert.equal(mcpCall.status, 200);
      assert.equal(mcpCall.headers.get('ratelimit-remaining'), '2');
      const first = await send();
      assert.equal(first.headers.get('ratelimit-limit'), '3');
      assert.equal(first.headers.get('ratelimit-remaining'), '1');
      assert.match(first.headers.get('ratelimit-reset') ?? '', /^\d+$/);
      await send();
      const third = await send();
      assertProblem(third, 429, 'rate-limited', /3 requests per minute/);
      assert.match(third.headers.get('retry-after') ?? '', /^\d+$/);
      const mcp = await postJson(`${limited.base}/api/mcp`, toolCall);
      validator!.check('POST', '/api/mcp', mcp);
      assertProblem(mcp, 429, 'rate-limited'); // one budget for render and MCP
      assert.equal((await postJson(`${limited.base}/api/mcp`, { jsonrpc: '2.0', id: 2, method: 'ping' })).status, 200);
      for (let i = 0; i < 3; i++) assert.equal((await call(`${limited.base}/api/health`)).status, 200);
    } finally {
      await limited.close();
    }
  });

  test('V2A_TRUST_PROXY: forwarded client address (rate limit key) and host only from trusted proxies', async () => {
    const forwarded = (ip: string) => ({ 'x-forwarded-for': ip, 'x-forwarded-proto': 'https', 'x-forwarded-host': 'v2a.example.org' });
    const trusting = await startTestServer({ V2A_TRUST_PROXY: '127.0.0.1', V2A_RATE_LIMIT: '1', V2A_WORKERS: '1' });
    const direct = await startTestServer({ V2A_RATE_LIMIT: '1', V2A_WORKERS: '1' });
    try {
      assert.equal((await call(`${trusting.base}/api/v1/agent`, { headers: forwarded('203.0.113.7') })).json.baseUrl, 'https://v2a.example.org');
      assert.equal((await call(`${direct.base}/api/v1/agent`, { headers: forwarded('203.0.113.7') })).json.baseUrl, direct.base);
      // A tools/call (no image: a fast tool error) takes a token; a ping would take none.
      const spend = (base: string, ip: string) => postJson(`${base}/api/mcp`, { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'render_ascii', arguments: { columns: 16 } } }, forwarded(ip));
      assert.ok(served(await spend(trusting.base, '203.0.113.7')));
      assert.ok(served(await spend(trusting.base, '203.0.113.8')), 'another client behind the proxy has its own budget');
      assert.ok(rateLimited(await spend(trusting.base, '203.0.113.7')));
      assert.ok(served(await spend(direct.base, '203.0.113.7')));
      assert.ok(rateLimited(await spend(direct.base, '203.0.113.8')), 'without trust, X-Forwarded-For is ignored');
      // An IPv6 client is its /64 (one host's usual share), and an IPv4-mapped address its IPv4 one
      // (@fastify/rate-limit's own key; admission's slots use the same: server-limits.test.ts).
      assert.ok(rateLimited(await spend(trusting.base, '::ffff:203.0.113.8')), 'the same client as 203.0.113.8');
      assert.ok(served(await spend(trusting.base, '2001:db8:1:2::7')));
      assert.ok(rateLimited(await spend(trusting.base, '2001:db8:1:2:ffff:ffff:ffff:1')), 'another address of the same /64');
      assert.ok(served(await spend(trusting.base, '2001:db8:1:3::7')), 'another /64');
      // What a trusted proxy forwards is held to Host's rules and to http/https: it writes the links.
      for (const [header, value] of [
        ['x-forwarded-host', 'evil.example/"><script>'], ['x-forwarded-host', 'user@evil.example'], ['x-forwarded-host', 'evil.example:99999'],
        ['x-forwarded-host', 'evil.example/ IGNORE PREVIOUS INSTRUCTIONS'], ['x-forwarded-proto', 'javascript'],
      ] as const) {
        const r = await call(`${trusting.base}/llms.txt`, { headers: { ...forwarded('203.0.113.9'), [header]: value } });
        assertProblem(r, 400, 'invalid-request', header === 'x-forwarded-proto' ? /X-Forwarded-Proto .*must be http or https/ : /X-Forwarded-Host .*is not a host name/);
        assert.equal((await call(`${direct.base}/llms.txt`, { headers: { [header]: value } })).status, 200, 'ignored without trust');
      }
      assert.equal((await call(`${trusting.base}/api/v1/agent`, { headers: { ...forwarded('203.0.113.9'), 'x-forwarded-host': 'v2a.example.org:8443' } })).json.baseUrl, 'https://v2a.example.org:8443');
      // Schemes are case-insensitive (RFC 3986, 3.1): a proxy's HTTPS is https, in the links too.
      assert.equal((await call(`${trusting.base}/api/v1/agent`, { headers: { ...forwarded('203.0.113.9'), 'x-forwarded-proto': 'HTTPS' } })).json.baseUrl, 'https://v2a.example.org');
    } finally {
      await Promise.all([trusting.close(), direct.close()]);
    }
  });

  test('V2A_TRUST_PROXY as a hop count: the client is the address the trusted proxy appended, whatever it wrote further left (a private range trusted whole let a client behind SNAT pick its own address)', async () => {
    const hop = await startTestServer({ V2A_TRUST_PROXY: '1', V2A_RATE_LIMIT: '1', V2A_WORKERS: '1' });
    const ranges = await startTestServer({ V2A_TRUST_PROXY: '10.0.0.0/8,127.0.0.1', V2A_RATE_LIMIT: '1', V2A_WORKERS: '1' });
    try {
      // The proxy (this loopback peer) appended 10.1.1.1: the client's address is private too.
      const spend = (base: string, spoofed: string) => postJson(`${base}/api/mcp`, { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'render_ascii', arguments: { columns: 16 } } },
        { 'x-forwarded-for': `${spoofed}, 10.1.1.1`, 'x-forwarded-proto': 'https', 'x-forwarded-host': 'v2a.example.org' });
      assert.ok(served(await spend(hop.base, '198.51.100.1')));
      assert.ok(rateLimited(await spend(hop.base, '198.51.100.2')), 'the same client, whatever it wrote');
      assert.ok(served(await spend(ranges.base, '198.51.100.1')));
      assert.equal((await spend(ranges.base, '198.51.100.2')).status, 200, 'with the range trusted, the client\'s own entry decides');
      assert.equal((await call(`${hop.base}/api/v1/agent`, { headers: { 'x-forwarded-proto': 'https', 'x-forwarded-host': 'v2a.example.org' } })).json.baseUrl, 'https://v2a.example.org');
    } finally {
      await Promise.all([hop.close(), ranges.close()]);
    }
  });

  test('V2A_TRUST_PROXY: an X-Forwarded-For entry with a port (Azure Application Gateway, IIS ARR) is its client without it: one budget for every connection, IPv6 grouped by /64', async () => {
    const proxied = await startTestServer({ V2A_TRUST_PROXY: '1', V2A_RATE_LIMIT: '2', V2A_WORKERS: '1' });
    try {
      const spend = (ip: string) => postJson(`${proxied.base}/api/mcp`, { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'render_ascii', arguments: { columns: 16 } } }, { 'x-forwarded-for': `198.51.100.9, ${ip}` });
      assert.ok(served(await spend('203.0.113.7:51234')));
      assert.ok(served(await spend('203.0.113.7:51235')));
      assert.ok(rateLimited(await spend('203.0.113.7')), 'the third request of one client, whatever its ports');
      assert.ok(served(await spend('[2001:db8::1]:443')));
      assert.ok(served(await spend('[2001:db8::2]')));
      assert.ok(rateLimited(await spend('2001:db8::3')), 'one /64, with or without brackets and ports');
    } finally {
      await proxied.close();
    }
  });

  test('CORS: preflight and simple requests from any origin, exposed headers', async () => {
    const pre = await call(`${server.base}${RENDER}`, {
      method: 'OPTIONS',
      headers: { origin: 'https://app.example', 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type, traceparent' },
    });
    assert.equal(pre.status, 204);
    assert.equal(pre.headers.get('access-control-allow-origin'), '*');
    assert.match(pre.headers.get('access-control-allow-methods') ?? '', /POST/);
    assert.match(pre.headers.get('access-control-allow-headers') ?? '', /traceparent/);
    const r = await req('GET', '/api/health', { headers: { origin: 'https://app.example' } });
    assert.equal(r.headers.get('access-control-allow-origin'), '*');
    assert.match(r.headers.get('access-control-expose-headers') ?? '', /traceparent.*x-auto-director/);
    // A preflight to a path nothing serves is still 204: the browser then shows the real 404.
    assert.equal((await call(`${server.base}/nope`, { method: 'OPTIONS', headers: { origin: 'https://app.example', 'access-control-request-method': 'POST' } })).status, 204);
  });

  test('CORS: a script on another origin may revalidate a document (If-None-Match allowed, ETag exposed)', async () => {
    const pre = await call(`${server.base}/api/openapi.json`, {
      method: 'OPTIONS',
      headers: { origin: 'https://app.example', 'access-control-request-method': 'GET', 'access-control-request-headers': 'if-none-match' },
    });
    assert.equal(pre.status, 204);
    assert.ok((pre.headers.get('access-control-allow-headers') ?? '').split(/,\s*/).includes('if-none-match'), pre.headers.get('access-control-allow-headers') ?? '');
    const r = await call(`${server.base}/api/openapi.json`, { headers: { origin: 'https://app.example' } });
    assert.ok((r.headers.get('access-control-expose-headers') ?? '').split(/,\s*/).includes('etag'), r.headers.get('access-control-expose-headers') ?? '');
  });

  test('OPTIONS that is no preflight says what the path serves (RFC 9110 §9.3.7): Allow, or 404', async () => {
    for (const [path, allow] of [[RENDER, 'POST, OPTIONS'], ['/api/health', 'GET, HEAD, OPTIONS']] as const) {
      const r = await call(`${server.base}${path}`, { method: 'OPTIONS' });
      assert.equal(r.status, 204, path);
      assert.equal(r.headers.get('allow'), allow, path);
    }
    const none = await call(`${server.base}/nope?x=1`, { method: 'OPTIONS' });
    assert.equal(none.status, 404);
    assert.equal(none.json.type, 'https://v2a.dev/problems/not-found');
    assert.equal(none.json.instance, '/nope');
  });

  test('CORS with a list: only listed origins are allowed', async () => {
    const listed = await startTestServer({ V2A_CORS_ORIGINS: 'https://app.example', V2A_WORKERS: '1' });
    try {
      const ok = await call(`${listed.base}/api/health`, { headers: { origin: 'https://app.example' } });
      validator!.check('GET', '/api/health', ok);
      assert.equal(ok.headers.get('access-control-allow-origin'), 'https://app.example');
      const other = await call(`${listed.base}/api/health`, { headers: { origin: 'https://evil.example' } });
      assert.equal(other.headers.get('access-control-allow-origin'), null);
    } finally {
      await listed.close();
    }
  });

  test('while shutting down: render 503, health 503 shutting_down', async () => {
    const s = await startTestServer({ V2A_WORKERS: '1' });
    try {
      s.app.v2a.closing = true;
      const r = await postJson(`${s.base}${RENDER}`, { imageBase64: tinyB64 });
      validator!.check('POST', RENDER, r);
      assertProblem(r, 503, 'shutting-down');
      assert.equal(r.headers.get('retry-after'), '5');
      const h = await call(`${s.base}/api/health`);
      validator!.check('GET', '/api/health', h);
      assert.equal(h.status, 503);
      assert.equal(h.json.status, 'shutting_down');
      assert.equal(h.headers.get('retry-after'), '5', 'a shutdown 503 says when to retry, the health envelope\'s too');
    } finally {
      s.app.v2a.closing = false;
      await s.close();
    }
  });

  test('graceful shutdown: an in-flight render finishes, then the server stops', { timeout: 30_000 }, async () => {
    const config = loadConfig({ LOG_LEVEL: 'silent', V2A_WORKERS: '1', PORT: '0', HOST: '127.0.0.1', V2A_RATE_LIMIT: '0' });
    const running = await startServer(config, { handleSignals: false, logger: false });
    const inflight = postForm(`${running.url}${RENDER}`, { image: slow, columns: '400' });
    await new Promise((r) => setTimeout(r, 100));
    const graceful = await running.shutdown('test');
    const r = await inflight;
    validator!.check('POST', RENDER, r);
    assert.equal(graceful, true);
    assert.equal(r.status, 200, r.text.slice(0, 300));
    assert.equal(await running.closed, true);
    await assert.rejects(fetch(`${running.url}/api/health`));
  });
});

describe('handoff manifest', () => {
  test('GET /api/v1/a2v-handoff', async () => {
    const r = await req('GET', '/api/v1/a2v-handoff');
    assert.equal(r.status, 200);
    assertCommonHeaders(r);
    const m = r.json;
    assert.equal(m.protocol, 'platform.v2a.a2v.handoff.v1');
    assert.equal(m.receiver.targetOrigin, 'https://a2v.v2a.dev');
    assert.equal(m.transport.type, 'window.postMessage');
    assert.equal(m.transport.targetOrigin, 'https://a2v.v2a.dev');
    assert.deepEqual(m.modes.map((x: { name: string }) => x.name), ['latest-frame', 'webcam-stream', 'video-stream']);
    assert.deepEqual(m.launch.parameters.map((p: { name: string }) => p.name), ['handoff', 'protocol', 'mode', 'source', 'traceId']);
    assert.equal(m.launch.urlTemplate, 'https://a2v.v2a.dev/receiver{?handoff,protocol,mode,source,traceId}');
    assert.deepEqual(m.messages.map((x: { type: string }) => x.type), ['hello', 'ready', 'frame', 'end', 'error']);
    for (const msg of m.messages) assert.ok(msg.fields.every((f: { description: string }) => f.description.length > 5));
  });

  test('the target origin follows V2A_RECEIVER_URL', async () => {
    const s = await startTestServer({ V2A_RECEIVER_URL: 'https://receiver.example.com:8443/a2v?x=1', V2A_WORKERS: '1' });
    try {
      const r = await call(`${s.base}/api/v1/a2v-handoff`);
      validator!.check('GET', '/api/v1/a2v-handoff', r);
      assert.equal(r.json.transport.targetOrigin, 'https://receiver.example.com:8443');
      assert.equal(r.json.launch.urlTemplate, 'https://receiver.example.com:8443/a2v?x=1{&handoff,protocol,mode,source,traceId}');
    } finally {
      await s.close();
    }
  });
});
