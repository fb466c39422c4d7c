/**
 * Every request ends in the logs and the HTTP metrics, also those Fastify never routes: replies of
 * Node's own HTTP parser (400, 414, 431, 408: one line with the problem's traceId, counted under the
 * route `unparsed`, `instance` the path when it was read, else /) and requests whose client went away
 * before the reply (one "request aborted" line, counted with status 499; an abandoned render is
 * `cancelled` in v2a_renders_total, not an error).
 */
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { Writable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../src/server/app.js';
import { loadConfig } from '../src/server/config.js';
import { noise } from './server-helpers.js';

let app: FastifyInstance;
let port: number;
const lines: any[] = [];

before(async () => {
  const stream = new Writable({ write(chunk, _enc, cb) { for (const l of String(chunk).split('\n')) if (l) lines.push(JSON.parse(l)); cb(); } });
  const config = loadConfig({
    LOG_LEVEL: 'info', PORT: '0', HOST: '127.0.0.1', V2A_WORKERS: '1', V2A_RATE_LIMIT: '0', V2A_WARM_UP: 'false', V2A_METRICS: 'on',
    V2A_HEADERS_TIMEOUT_MS: '300', V2A_REQUEST_TIMEOUT_MS: '1000',
  });
  app = await buildApp(config, { logStream: stream });
  await app.listen({ port: 0, host: '127.0.0.1' });
  port = (app.server.address() as AddressInfo).port;
});
after(async () => {
  app.server.closeAllConnections();
  await app.close();
});

/** Writes `data` on a new connection; what came back once the server closed it. */
function exchange(data: string | Buffer): Promise<{ status: number; traceparent: string | undefined; problem: any }> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.write(data));
    let out = '';
    socket.setEncoding('latin1');
    socket.on('data', (d: string) => (out += d));
    socket.on('error', reject);
    socket.on('close', () => {
      const i = out.indexOf('\r\n\r\n');
      resolve({ status: Number(out.split(' ')[1]), traceparent: /traceparent: (\S+)/i.exec(out.slice(0, i))?.[1], problem: JSON.parse(out.slice(i + 4)) });
    });
  });
}

async function metric(name: string, labels: string): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${port}/api/v1/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(`${name}{${labels}} `));
  return line ? Number(line.split(' ')[1]) : 0;
}

describe('replies of Node\'s HTTP parser', () => {
  test('400, 414, 431 and 408 are each logged once with their traceId and counted under route="unparsed"; instance the path when it was read, else /', async () => {
    const before400 = await metric('v2a_http_requests_total', 'method="GET",route="unparsed",status="400"');
    const cases = [
      { data: 'GET /api/health HTTP/1.1\r\nHost: x\r\nX-A: a\0b\r\n\r\n', status: 400, slug: 'invalid-request', instance: '/api/health' },
      // (Its path counts as read only when the failed read holds all the connection sent: 20 kB
      // arrive in one read on loopback, but nothing promises it.)
      { data: `GET /api/health HTTP/1.1\r\nHost: x\r\nX-Filler: ${'q'.repeat(20_000)}\r\n\r\n`, status: 431, slug: 'headers-too-large', instance: ['/api/health', '/'] },
      { data: `GET /api/health?${'q'.repeat(20_000)} HTTP/1.1\r\nHost: x\r\n\r\n`, status: 414, slug: 'uri-too-long', instance: '/api/health' },
      { data: 'GET /api/hea', status: 408, slug: 'request-timeout', instance: '/' },
    ];
    for (const c of cases) {
      const r = await exchange(c.data);
      assert.equal(r.status, c.status);
      assert.equal(r.problem.type, `https://v2a.dev/problems/${c.slug}`);
      assert.equal(r.problem.traceId, r.traceparent?.split('-')[1]);
      const instances = Array.isArray(c.instance) ? c.instance : [c.instance];
      assert.ok(instances.includes(r.problem.instance), `instance ${r.problem.instance}: the path when it was read, else /`);
      const mine = lines.filter((l) => l.traceId === r.problem.traceId);
      assert.equal(mine.length, 1, `one log line for ${c.status}: ${JSON.stringify(mine)}`);
      assert.equal(mine[0].res?.statusCode, c.status);
      assert.equal(mine[0].level, c.status === 408 ? 30 : 40, 'info or warn, never error');
      assert.equal(mine[0].err, undefined, 'no error object, no stack');
    }
    assert.equal(await metric('v2a_http_requests_total', 'method="GET",route="unparsed",status="400"'), before400 + 1);
    assert.equal(await metric('v2a_http_requests_total', 'method="GET",route="unparsed",status="431"'), 1);
    assert.equal(await metric('v2a_http_requests_total', 'method="GET",route="unparsed",status="414"'), 1);
    assert.equal(await metric('v2a_http_requests_total', 'method="other",route="unparsed",status="408"'), 1);
  });
});

describe('a request target the router cannot read', () => {
  test('GET /% and an absolute URL without a host are 400s of the request lifecycle: security and CORS headers, one trace id in the body and the lines, "request completed", counted', async () => {
    for (const [target, detail] of [['/%', /not valid percent-encoding/], ['/api/v1/%C0', /not valid percent-encoding/], ['http:///x', /without a host/]] as const) {
      const count = lines.length;
      const before = await metric('v2a_http_requests_total', 'method="GET",route="unmatched",status="400"');
      const r = await new Promise<string>((resolve, reject) => {
        const socket = connect(port, '127.0.0.1', () => socket.write(`GET ${target} HTTP/1.1\r\nHost: x\r\nOrigin: https://app.example\r\nConnection: close\r\n\r\n`));
        let out = '';
        socket.on('data', (d) => (out += d));
        socket.on('error', reject);
        socket.on('close', () => resolve(out));
      });
      const [head, body] = r.split('\r\n\r\n') as [string, string];
      assert.match(head, /^HTTP\/1\.1 400 /, target);
      for (const h of ['x-frame-options: DENY', 'access-control-allow-origin: \\*', 'content-security-policy: ', 'content-type: application/problem\\+json']) assert.match(head, new RegExp(h, 'i'), `${target}: ${h}`);
      const problem = JSON.parse(body);
      assert.equal(problem.type, 'https://v2a.dev/problems/invalid-request');
      assert.match(problem.detail, detail, target);
      assert.doesNotMatch(problem.detail, /valid url component/);
      assert.equal(problem.traceId, /traceparent: 00-([0-9a-f]{32})-/i.exec(head)?.[1], head);
      const deadline = performance.now() + 2000;
      while (!lines.slice(count).some((l) => l.msg === 'request completed') && performance.now() < deadline) await new Promise((res) => setTimeout(res, 5));
      const mine = lines.slice(count).filter((l) => l.traceId === problem.traceId);
      assert.deepEqual(mine.map((l) => l.msg), ['incoming request', 'request completed'], `${target}: ${JSON.stringify(lines.slice(count))}`);
      assert.equal(mine[1].res.statusCode, 400);
      assert.equal(await metric('v2a_http_requests_total', 'method="GET",route="unmatched",status="400"'), before + 1, target);
    }
    // An OPTIONS that is no preflight asks what the path serves: this one has none to ask about.
    const options = await exchange('OPTIONS /% HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
    assert.equal(options.status, 400);
    assert.equal(options.problem.type, 'https://v2a.dev/problems/invalid-request');
  });
});

describe('requests whose client goes away', () => {
  test('a render abandoned mid-way ends with one "request aborted" line, status 499 in the metrics, and counts as cancelled, not as an error', { timeout: 60_000 }, async () => {
    const image = await noise(1600, 1200);
    const form = new FormData();
    form.append('image', new Blob([image]), 'x.png');
    const abort = new AbortController();
    const request = fetch(`http://127.0.0.1:${port}/api/v1/render?columns=400&format=html&color=true`, { method: 'POST', body: form, signal: abort.signal }).catch(() => 'aborted');
    while (app.v2a.pool.stats().running === 0) await new Promise((r) => setTimeout(r, 5));
    abort.abort();
    assert.equal(await request, 'aborted');
    const traceId = lines.find((l) => l.msg === 'incoming request' && l.req?.url?.startsWith('/api/v1/render'))?.traceId;
    assert.ok(traceId);
    while (!lines.some((l) => l.traceId === traceId && /aborted/.test(l.msg))) await new Promise((r) => setTimeout(r, 5));
    const ends = lines.filter((l) => l.traceId === traceId && l.msg !== 'incoming request');
    assert.equal(ends.length, 1, JSON.stringify(ends));
    assert.equal(typeof ends[0].responseTime, 'number');
    assert.equal(await metric('v2a_http_requests_total', 'method="POST",route="/api/v1/render",status="499"'), 1);
    assert.equal(await metric('v2a_renders_total', 'face="http",outcome="cancelled"'), 1);
    assert.equal(await metric('v2a_renders_total', 'face="http",outcome="error"'), 0);
  });

  test('requests pipelined on one connection that it drops before their turn are each ended as aborted, not left open', { timeout: 60_000 }, async () => {
    // Only the response being written has the socket: those waiting their turn never emit `close`.
    const before499 = await metric('v2a_http_requests_total', 'method="POST",route="/api/v1/render",status="499"');
    const image = await noise(1600, 1200);
    const body = Buffer.concat([Buffer.from('--B\r\nContent-Disposition: form-data; name="image"; filename="x.png"\r\n\r\n'), image, Buffer.from('\r\n--B--\r\n')]);
    const one = Buffer.concat([Buffer.from(`POST /api/v1/render?columns=400&format=html&color=true HTTP/1.1\r\nHost: x\r\nContent-Type: multipart/form-data; boundary=B\r\nContent-Length: ${body.length}\r\n\r\n`), body]);
    const count = lines.length;
    const socket = connect(port, '127.0.0.1', () => socket.write(Buffer.concat([one, one, one])));
    socket.on('error', () => {});
    const incoming = () => lines.slice(count).filter((l) => l.msg === 'incoming request').length;
    for (const deadline = performance.now() + 20_000; (incoming() < 3 || app.v2a.pool.stats().running === 0) && performance.now() < deadline;) await new Promise((r) => setTimeout(r, 5));
    assert.equal(incoming(), 3);
    socket.destroy();
    const aborted = () => lines.slice(count).filter((l) => /^request aborted/.test(l.msg)).length;
    for (const deadline = performance.now() + 10_000; aborted() < 3 && performance.now() < deadline;) await new Promise((r) => setTimeout(r, 10));
    assert.equal(aborted(), 3, 'one "request aborted" line each');
    assert.equal(await metric('v2a_http_requests_total', 'method="POST",route="/api/v1/render",status="499"'), before499 + 3);
  });

  test('a client that ends its side mid-upload is an aborted request (499), not a 400 of the HTTP parser', { timeout: 30_000 }, async () => {
    const unparsed = () => metric('v2a_http_requests_total', 'method="POST",route="unparsed",status="400"');
    const before400 = await unparsed();
    const before499 = await metric('v2a_http_requests_total', 'method="POST",route="/api/v1/render",status="499"');
    const count = lines.length;
    // Half the body announced, then FIN (curl --max-time, a closed laptop lid): llhttp's
    // HPE_INVALID_EOF_STATE, which was answered 400 at warn level and counted as unparsed.
    await new Promise<void>((resolve, reject) => {
      const socket = connect(port, '127.0.0.1', () => {
        const head = '--b\r\nContent-Disposition: form-data; name="image"; filename="x.png"\r\nContent-Type: image/png\r\n\r\n';
        socket.write(`POST /api/v1/render HTTP/1.1\r\nHost: x\r\nContent-Type: multipart/form-data; boundary=b\r\nContent-Length: 100000\r\n\r\n${head}${'x'.repeat(1000)}`);
        setTimeout(() => socket.end(), 100);
      });
      socket.on('error', reject);
      socket.on('close', () => resolve());
      socket.resume();
    });
    const deadline = performance.now() + 5000;
    while (!lines.slice(count).some((l) => /aborted/.test(l.msg)) && performance.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    const mine = lines.slice(count).filter((l) => l.msg !== 'incoming request');
    assert.deepEqual(mine.map((l) => [l.level, /^request aborted/.test(l.msg)]), [[30, true]], JSON.stringify(mine));
    assert.equal(await unparsed(), before400);
    assert.equal(await metric('v2a_http_requests_total', 'method="POST",route="/api/v1/render",status="499"'), before499 + 1);
  });
});

describe('probes and scrapes', () => {
  test('at LOG_LEVEL info the health probes, the metrics scrape and the status leave no line; other requests are logged', async () => {
    const from = lines.length;
    for (const path of ['/api/health', '/api/v1/health', '/api/v1/health/live', '/api/v1/health/ready', '/api/v1/metrics']) {
      assert.ok((await fetch(`http://127.0.0.1:${port}${path}`)).status < 500, path);
    }
    assert.deepEqual(lines.slice(from).map((l) => `${l.msg} ${l.req?.url ?? ''}`), []);
    assert.equal((await fetch(`http://127.0.0.1:${port}/llms.txt`)).status, 200);
    assert.deepEqual(lines.slice(from).map((l) => l.msg), ['incoming request', 'request completed']);
  });
});

describe('the lines of a request', () => {
  test('"request completed" names the method, URL, client and route; a proxy\'s X-Request-Id is on both lines and echoed (CORS allows and exposes it); one that is no single short token is neither', async () => {
    const from = lines.length;
    const r = await fetch(`http://127.0.0.1:${port}/llms.txt?x=1`, { headers: { 'x-request-id': 'envoy-7f3a9c' } });
    assert.equal(r.status, 200);
    assert.equal(r.headers.get('x-request-id'), 'envoy-7f3a9c');
    const [incoming, completed] = lines.slice(from);
    assert.equal(incoming.msg, 'incoming request');
    assert.equal(incoming.req.requestId, 'envoy-7f3a9c');
    assert.equal(completed.msg, 'request completed');
    assert.deepEqual([completed.req.method, completed.req.url, completed.req.requestId, completed.route, completed.res.statusCode, completed.traceId], ['GET', '/llms.txt', 'envoy-7f3a9c', '/llms.txt', 200, incoming.traceId]);
    assert.equal(typeof completed.req.remoteAddress, 'string');
    for (const bad of ['two words', 'x'.repeat(129)]) {
      const at = lines.length;
      const b = await fetch(`http://127.0.0.1:${port}/llms.txt`, { headers: { 'x-request-id': bad } });
      assert.equal(b.headers.get('x-request-id'), null);
      assert.ok(lines.slice(at).every((l) => l.req?.requestId === undefined));
    }
    const pre = await fetch(`http://127.0.0.1:${port}/api/v1/render`, { method: 'OPTIONS', headers: { origin: 'https://app.example', 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type,x-request-id' } });
    assert.match(pre.headers.get('access-control-allow-headers') ?? '', /x-request-id/);
    const simple = await fetch(`http://127.0.0.1:${port}/llms.txt`, { headers: { origin: 'https://app.example' } });
    assert.match(simple.headers.get('access-control-expose-headers') ?? '', /x-request-id/);
  });
});
