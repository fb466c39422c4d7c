/**
 * Compressed replies (plugins/compress.ts) on a real server, read with node:http and an explicit
 * Accept-Encoding and decoded here with node:zlib (fetch decodes silently, which would hide
 * whether the server coded at all): what is coded and what never is, that a coded body is the
 * identity one byte for byte, Vary and ETags (304 for a client that got a coded reply), HEAD,
 * V2A_COMPRESS=off, and a client that leaves in the middle of a coded reply.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import zlib from 'node:zlib';
import { after, before, describe, test } from 'node:test';
import { acceptsCoding, compressible } from '../src/server/plugins/compress.js';
import { noise, startTestServer, type TestServer } from './server-helpers.js';

const RENDER = '/api/v1/render';
const ORIGIN = 'https://app.example';

interface RawReply {
  status: number;
  headers: http.IncomingHttpHeaders;
  /** The body as it came over the wire (not decoded). */
  bytes: Buffer;
}

/** One request on its own connection; the reply's bytes as sent. */
function raw(base: string, method: string, path: string, headers: Record<string, string> = {}, body?: string): Promise<RawReply> {
  return new Promise((resolve, reject) => {
    const req = http.request(`${base}${path}`, { method, headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, bytes: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** The body decoded as its Content-Encoding says (identity when none). */
function decoded(r: RawReply): Buffer {
  switch (r.headers['content-encoding']) {
    case undefined: return r.bytes;
    case 'gzip': return zlib.gunzipSync(r.bytes);
    case 'br': return zlib.brotliDecompressSync(r.bytes);
    case 'deflate': return zlib.inflateSync(r.bytes);
    default: assert.fail(`unexpected Content-Encoding ${r.headers['content-encoding']}`);
  }
}

const varyFields = (r: RawReply): string[] => String(r.headers.vary ?? '').split(',').map((f) => f.trim().toLowerCase()).filter(Boolean);

let server: TestServer;
let image: string;

/** POST /api/v1/render with a JSON body (the image as base64). */
const render = (params: Record<string, unknown>, headers: Record<string, string> = {}, base = server.base) =>
  raw(base, 'POST', RENDER, { 'content-type': 'application/json', ...headers }, JSON.stringify({ imageBase64: image, ...params }));

const HTML = { format: 'html', color: true, columns: 160 };

before(async () => {
  // Noise: a colour html render of 160 columns of it is some 100s of KB (every cell its own colour).
  image = (await noise(320, 240)).toString('base64');
  server = await startTestServer({ V2A_CORS_ORIGINS: ORIGIN });
});

after(async () => {
  await server?.close();
});

describe('compressed replies', () => {
  test('an html render (color, 160 columns) comes back gzip, br or deflate as asked, and decodes to exactly the identity reply', async () => {
    const identity = await render(HTML);
    assert.equal(identity.status, 200, identity.bytes.toString().slice(0, 300));
    assert.equal(identity.headers['content-encoding'], undefined);
    assert.ok(identity.bytes.length > 100_000, `a large render (${identity.bytes.length} bytes)`);
    assert.ok(varyFields(identity).includes('accept-encoding'), 'an identity reply of a coded type varies on Accept-Encoding too');
    for (const coding of ['gzip', 'br', 'deflate']) {
      const r = await render(HTML, { 'accept-encoding': coding });
      assert.equal(r.status, 200);
      assert.equal(r.headers['content-encoding'], coding);
      assert.match(String(r.headers['content-type']), /^text\/html/);
      assert.ok(varyFields(r).includes('accept-encoding'), coding);
      assert.ok(r.bytes.length < identity.bytes.length / 3, `${coding}: ${r.bytes.length} of ${identity.bytes.length} bytes`);
      assert.ok(decoded(r).equals(identity.bytes), `${coding} decodes to the identity body`);
      assert.equal(r.headers['x-auto-director'], identity.headers['x-auto-director']);
    }
    // The client's preference: br ranked above gzip gets br; q=0 refuses a coding.
    assert.equal((await render(HTML, { 'accept-encoding': 'gzip;q=0.5, br' })).headers['content-encoding'], 'br');
    assert.equal((await render(HTML, { 'accept-encoding': 'br;q=0, gzip' })).headers['content-encoding'], 'gzip');
  });

  test('no Accept-Encoding, identity, or every coding refused: the reply is identity', async () => {
    for (const headers of [{}, { 'accept-encoding': 'identity' }, { 'accept-encoding': 'gzip;q=0, br;q=0, deflate;q=0' }, { 'accept-encoding': 'compress' }] as Array<Record<string, string>>) {
      const r = await render({ ...HTML, columns: 60 }, headers);
      assert.equal(r.status, 200);
      assert.equal(r.headers['content-encoding'], undefined, JSON.stringify(headers));
      assert.match(r.bytes.toString('utf8', 0, 100), /<!doctype html>|<html/i);
    }
  });

  test('json, svg and ansi renders are coded too; png never is', async () => {
    for (const format of ['json', 'svg', 'ansi']) {
      const r = await render({ format, color: true, columns: 120 }, { 'accept-encoding': 'gzip, br' });
      assert.equal(r.status, 200, format);
      assert.equal(r.headers['content-encoding'], 'br', format);
      if (format === 'json') JSON.parse(decoded(r).toString('utf8'));
    }
    const png = await render({ format: 'png', color: true, columns: 160 }, { 'accept-encoding': 'gzip, deflate, br' });
    assert.equal(png.status, 200);
    assert.equal(png.headers['content-type'], 'image/png');
    assert.equal(png.headers['content-encoding'], undefined);
    assert.ok(!varyFields(png).includes('accept-encoding'), 'a png does not vary on Accept-Encoding');
    assert.ok(png.bytes.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])), 'the PNG as it is');
  });

  test('a reply under 1 KiB (health) is identity; a problem reply decodes to a valid problem', async () => {
    const health = await raw(server.base, 'GET', '/api/v1/health', { 'accept-encoding': 'gzip, br' });
    assert.equal(health.status, 200);
    assert.ok(health.bytes.length < 1024, String(health.bytes.length));
    assert.equal(health.headers['content-encoding'], undefined);
    assert.equal(JSON.parse(health.bytes.toString()).status, 'ok');

    const bad = await render({ format: 'nope', columns: 5, color: 'maybe', charset: 'nope', invert: 3 }, { 'accept-encoding': 'gzip' });
    assert.equal(bad.status, 400);
    assert.match(String(bad.headers['content-type']), /^application\/problem\+json/);
    const problem = JSON.parse(decoded(bad).toString('utf8'));
    assert.equal(problem.type, 'https://v2a.dev/problems/invalid-parameters');
    assert.equal(problem.traceId, String(bad.headers.traceparent).split('-')[1]);
    if (bad.headers['content-encoding'] === undefined) assert.equal(Number(bad.headers['content-length']), bad.bytes.length);
  });

  test('the studio\'s JavaScript is coded, and revalidates (304) with the weak tag of the coded reply', async (t) => {
    const page = await raw(server.base, 'GET', '/');
    if (page.status !== 200) return t.skip('the studio is not built (dist/studio)');
    const script = new URL(/src="(\.\/assets\/[^"]+\.js)"/.exec(page.bytes.toString())![1]!, 'http://x/').pathname;
    const identity = await raw(server.base, 'GET', script);
    const coded = await raw(server.base, 'GET', script, { 'accept-encoding': 'gzip, deflate, br' });
    assert.equal(coded.status, 200);
    assert.match(String(coded.headers['content-type']), /^text\/javascript/);
    assert.equal(coded.headers['content-encoding'], 'br');
    assert.ok(decoded(coded).equals(identity.bytes));
    assert.match(String(identity.headers.etag), /^"[\w-]{27}"$/, 'strong to a client that accepts no coding');
    assert.equal(coded.headers.etag, `W/${identity.headers.etag}`, 'weak to one that does');
    const again = await raw(server.base, 'GET', script, { 'accept-encoding': 'gzip, deflate, br', 'if-none-match': String(coded.headers.etag) });
    assert.equal(again.status, 304);
    assert.equal(again.bytes.length, 0);
    assert.equal(again.headers.etag, coded.headers.etag);
  });

  test('If-None-Match with the ETag of a coded document is 304 (the same weak tag, Vary kept, no body); HEAD has no body', async () => {
    for (const path of ['/api/openapi.json', '/llms-full.txt', '/api/v1/agent']) {
      const coded = await raw(server.base, 'GET', path, { 'accept-encoding': 'gzip', origin: ORIGIN });
      assert.equal(coded.status, 200, path);
      assert.equal(coded.headers['content-encoding'], 'gzip', path);
      const etag = String(coded.headers.etag);
      assert.match(etag, /^W\/"[\w-]{27}"$/, path);
      const identity = await raw(server.base, 'GET', path, { origin: ORIGIN });
      assert.equal(identity.headers.etag, etag.slice(2), `${path}: the identity reply keeps the strong tag`);
      assert.ok(decoded(coded).equals(identity.bytes), path);

      const again = await raw(server.base, 'GET', path, { 'accept-encoding': 'gzip', origin: ORIGIN, 'if-none-match': etag });
      assert.equal(again.status, 304, path);
      assert.equal(again.bytes.length, 0, path);
      assert.equal(again.headers.etag, etag, `${path}: a 304 carries the tag its 200 would`);
      assert.equal(again.headers['content-encoding'], undefined);
      assert.deepEqual(varyFields(again), varyFields(coded), path);
      // The strong tag matches as well (weak comparison), and a client that accepts no coding gets it back.
      const strong = await raw(server.base, 'GET', path, { 'if-none-match': etag.slice(2) });
      assert.equal(strong.status, 304, path);
      assert.equal(strong.headers.etag, etag.slice(2), path);

      const head = await raw(server.base, 'HEAD', path, { 'accept-encoding': 'gzip' });
      assert.equal(head.status, 200, path);
      assert.equal(head.bytes.length, 0, path);
      assert.equal(head.headers.etag, etag, path);
      // The fields its GET has (RFC 9110 section 9.3.2): coded as the GET is, with the GET's
      // length where the GET sends one (a small body coded in one call), never the identity's.
      assert.equal(head.headers['content-encoding'], 'gzip', `${path}: HEAD coded as its GET`);
      assert.equal(head.headers['content-length'], coded.headers['content-length'], `${path}: HEAD's length is its GET's`);
      assert.deepEqual(varyFields(head), varyFields(coded), path);
      const plain = await raw(server.base, 'HEAD', path);
      assert.equal(plain.headers['content-encoding'], undefined, path);
      assert.equal(plain.headers['content-length'], String(identity.bytes.length), `${path}: identity HEAD, identity length`);
    }
  });

  test('Vary names Accept-Encoding once and keeps Origin (CORS) and the Host fields (discovery documents)', async () => {
    const doc = await raw(server.base, 'GET', '/api/openapi.json', { 'accept-encoding': 'br', origin: ORIGIN });
    assert.equal(doc.headers['access-control-allow-origin'], ORIGIN);
    assert.deepEqual(varyFields(doc).sort(), ['accept-encoding', 'host', 'origin', 'x-forwarded-host', 'x-forwarded-proto']);
    assert.match(String(doc.headers.vary), /Accept-Encoding/, 'spelt as the other fields are');
    const art = await render(HTML, { 'accept-encoding': 'gzip', origin: ORIGIN });
    assert.equal(art.headers['content-encoding'], 'gzip');
    assert.equal(art.headers['access-control-allow-origin'], ORIGIN);
    assert.deepEqual(varyFields(art).sort(), ['accept-encoding', 'origin']);
  });

  test('a client that leaves in the middle of a coded reply leaves no zlib work behind, and the server serves the next request', async () => {
    // node:zlib as the plugin and the library reach it (its exports, looked up at each call): the
    // library's own coder (a zlib stream, left open when its reply is gone before its input all
    // arrived) is never made, and every one-call coding finishes.
    const streams: string[] = [];
    let started = 0;
    let finished = 0;
    type Coder = (body: Buffer, options: object, done: (err: Error | null, out: Buffer) => void) => void;
    const patched = {
      createGzip: (original: (options?: object) => unknown) => (options?: object) => (streams.push('gzip'), original(options)),
      createBrotliCompress: (original: (options?: object) => unknown) => (options?: object) => (streams.push('br'), original(options)),
      gzip: (original: Coder): Coder => (body, options, done) => { started++; original(body, options, (err, out) => { finished++; done(err, out); }); },
      brotliCompress: (original: Coder): Coder => (body, options, done) => { started++; original(body, options, (err, out) => { finished++; done(err, out); }); },
    };
    const originals = new Map<string, unknown>();
    for (const [name, wrap] of Object.entries(patched)) {
      const original = (zlib as unknown as Record<string, unknown>)[name];
      originals.set(name, original);
      Object.defineProperty(zlib, name, { configurable: true, enumerable: true, value: (wrap as (f: unknown) => unknown)(original) });
    }
    try {
      for (const coding of ['gzip', 'br']) {
        for (const leave of ['at the headers', 'at the first chunk']) {
          await new Promise<void>((resolve, reject) => {
            const req = http.request(`${server.base}${RENDER}`, { method: 'POST', agent: false, headers: { 'content-type': 'application/json', 'accept-encoding': coding } }, (res) => {
              assert.equal(res.headers['content-encoding'], coding);
              if (leave === 'at the headers') {
                req.destroy();
                return resolve();
              }
              res.once('data', () => {
                req.destroy();
                resolve();
              });
            });
            req.on('error', (err) => (req.destroyed ? undefined : reject(err)));
            req.end(JSON.stringify({ imageBase64: image, ...HTML }));
          });
        }
      }
      const deadline = Date.now() + 5000;
      while ((server.app.v2a.connections.busy > 0 || finished < started) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      assert.equal(server.app.v2a.connections.busy, 0, 'no request left in progress');
      assert.ok(started >= 4, `the large replies were coded in one call each (${started})`);
      assert.equal(finished, started, 'every coding finished');
      assert.deepEqual(streams, [], 'no zlib stream of the library\'s was made');
    } finally {
      for (const [name, original] of originals) Object.defineProperty(zlib, name, { configurable: true, enumerable: true, value: original });
    }
    const health = await raw(server.base, 'GET', '/api/v1/health');
    assert.equal(health.status, 200);
    const next = await render(HTML, { 'accept-encoding': 'gzip' });
    assert.equal(next.status, 200);
    assert.equal(next.headers['content-encoding'], 'gzip');
    decoded(next);
  });
});

describe('V2A_COMPRESS=off', () => {
  let off: TestServer;
  before(async () => {
    off = await startTestServer({ V2A_COMPRESS: 'off' });
  });
  after(async () => off?.close());

  test('every reply is identity, its ETag strong, and Vary does not name Accept-Encoding', async () => {
    const all = 'gzip, deflate, br';
    const art = await render(HTML, { 'accept-encoding': all }, off.base);
    assert.equal(art.status, 200);
    assert.equal(art.headers['content-encoding'], undefined);
    assert.ok(art.bytes.length > 100_000);
    assert.ok(!varyFields(art).includes('accept-encoding'));
    for (const path of ['/api/openapi.json', '/llms-full.txt', '/']) {
      const r = await raw(off.base, 'GET', path, { 'accept-encoding': all });
      assert.equal(r.headers['content-encoding'], undefined, path);
      assert.ok(!varyFields(r).includes('accept-encoding'), path);
      if (r.status === 200) assert.match(String(r.headers.etag), /^"[\w-]{27}"$/, path);
    }
    const page = await raw(off.base, 'GET', '/');
    const script = /src="\.(\/assets\/[^"]+\.js)"/.exec(page.bytes.toString())?.[1];
    if (script) assert.equal((await raw(off.base, 'GET', script, { 'accept-encoding': all })).headers['content-encoding'], undefined);
    const settings = (await raw(off.base, 'GET', '/api/openapi.json')).bytes.toString();
    assert.match(settings, /Replies are not compressed \(V2A_COMPRESS is off\)/);
  });

  test('the setting reads on/off, true/false, 1/0, yes/no', async () => {
    const { loadConfig } = await import('../src/server/config.js');
    for (const [raw, want] of [['on', true], ['yes', true], ['1', true], ['TRUE', true], ['off', false], ['no', false], ['0', false], ['false', false], ['', true]] as const) {
      assert.equal(loadConfig({ V2A_COMPRESS: raw }).compress, want, raw);
    }
    assert.equal(loadConfig({}).compress, true);
    assert.throws(() => loadConfig({ V2A_COMPRESS: 'sometimes' }), /V2A_COMPRESS must be true or false/);
  });
});

describe('what is coded', () => {
  test('text-like types, not event streams, images or fonts', () => {
    for (const type of ['text/plain', 'text/html; charset=utf-8', 'application/json; charset=utf-8', 'application/problem+json', 'image/svg+xml', 'text/markdown; charset=utf-8', 'text/javascript; charset=utf-8', 'text/css', 'text/plain; version=0.0.4; charset=utf-8']) {
      assert.ok(compressible(type), type);
    }
    for (const type of ['text/event-stream', 'image/png', 'image/webp', 'font/woff2', 'application/octet-stream', '']) assert.ok(!compressible(type), type);
  });

  test('Accept-Encoding: a coding sent here with q above 0', () => {
    for (const h of ['gzip', 'br', 'deflate, gzip', 'GZIP', 'x-gzip', '*', 'identity, br;q=0.1', 'gzip;q=1.0']) assert.ok(acceptsCoding(h), h);
    for (const h of [undefined, '', 'identity', 'compress', 'gzip;q=0', 'br;q=0, gzip;q=0.000']) assert.ok(!acceptsCoding(h), String(h));
  });
});
