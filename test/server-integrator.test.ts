/**
 * Replies an integrator reads closely: a bad query refused before the body is read (before
 * `100 Continue`, ahead of a body over its cap), the messages of a data: URL without `;base64` and
 * of an empty upload, and the per-client cap's message with one slot.
 */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { request } from 'node:http';
import { connect } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { assertProblem, call, photo, postForm, postJson, responseValidator, startTestServer, type ResponseValidator, type TestServer } from './server-helpers.js';

const RENDER = '/api/v1/render';

let server: TestServer;
let validator: ResponseValidator;

before(async () => {
  server = await startTestServer({ V2A_WORKERS: '1', V2A_MAX_IMAGE_BYTES: '100000' });
  validator = responseValidator((await call(`${server.base}/api/openapi.json`)).json);
});
after(async () => server?.close());

/** A request's head (and `body`) over a new connection; what came back until the server closed it or `waitMs` passed. */
function exchange(head: string, body = '', waitMs = 3000): Promise<string> {
  const { port } = new URL(server.base);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), '127.0.0.1', () => socket.write(head + body));
    let out = '';
    const timer = setTimeout(() => socket.destroy(), waitMs);
    socket.on('data', (d) => (out += d));
    socket.on('error', reject);
    socket.on('close', () => { clearTimeout(timer); resolve(out); });
  });
}

describe('a bad query string is refused before the body is read', () => {
  test('with Expect: 100-continue: 400 naming the parameter instead of 100 Continue, the connection closed', async () => {
    const out = await exchange(`POST ${RENDER}?columns=2 HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 20\r\nExpect: 100-continue\r\n\r\n`);
    assert.doesNotMatch(out, /100 Continue/);
    const [head, body] = out.split('\r\n\r\n') as [string, string];
    assert.match(head, /^HTTP\/1\.1 400 /);
    assert.match(head, /\r\nconnection: close/i);
    const p = JSON.parse(body);
    assert.equal(p.type, 'https://v2a.dev/problems/invalid-parameters');
    assert.deepEqual(p.errors.map((e: { parameter: string }) => e.parameter), ['columns']);
  });

  test('a bad query wins over a body over its cap, whether its length is declared or found while it streams', async () => {
    const json = 'Content-Type: application/json\r\n';
    const declared = await exchange(`POST ${RENDER}?columns=2 HTTP/1.1\r\nHost: x\r\n${json}Content-Length: 10000000\r\n\r\n`);
    assert.match(declared, /^HTTP\/1\.1 400 [^]*invalid-parameters/);
    const chunk = 'x'.repeat(200_000);
    const streamed = await exchange(`POST ${RENDER}?columns=2 HTTP/1.1\r\nHost: x\r\n${json}Transfer-Encoding: chunked\r\n\r\n`, `${chunk.length.toString(16)}\r\n${chunk}\r\n`);
    assert.match(streamed, /^HTTP\/1\.1 400 [^]*invalid-parameters/);
    // A good query: the size decides, as before.
    assert.match(await exchange(`POST ${RENDER}?columns=20 HTTP/1.1\r\nHost: x\r\n${json}Content-Length: 10000000\r\n\r\n`), /^HTTP\/1\.1 413 /);
  });

  test('a valid request with Expect: 100-continue is still sent 100 Continue and rendered', async () => {
    const image = JSON.stringify({ imageBase64: (await photo(32, 24)).toString('base64') });
    const url = new URL(`${RENDER}?columns=20`, server.base);
    const req = request(url, { method: 'POST', headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(image), expect: '100-continue' } });
    req.flushHeaders();
    await once(req, 'continue');
    req.end(image);
    const [res] = await once(req, 'response');
    res.resume();
    assert.equal(res.statusCode, 200);
  });
});

describe('imageBase64 and upload messages', () => {
  test('a data: URL without ;base64 is said to be one, not blamed for its length', async () => {
    const b64 = (await photo(32, 24)).toString('base64');
    const r = await postJson(`${server.base}${RENDER}`, { imageBase64: `data:image/png,${b64}` });
    validator.check('POST', RENDER, r);
    const p = assertProblem(r, 400, 'invalid-base64', /only base64 data: URLs are accepted \(data:<media type>;base64,<data>\), not one beginning "data:image\/png,"/);
    assert.doesNotMatch(p.detail, /multiple of 4/);
    assert.equal(p.errors[0].parameter, 'imageBase64');
  });

  test('an empty upload: the field\'s message says what the detail says', async () => {
    const r = await postForm(`${server.base}${RENDER}`, { image: Buffer.alloc(0) });
    validator.check('POST', RENDER, r);
    const p = assertProblem(r, 400, 'undecodable-image', /empty \(0 bytes\)/);
    assert.deepEqual(p.errors, [{ parameter: 'image', message: p.detail }]);
  });
});

test('the per-client cap with one slot says "at most 1 request in flight"', async () => {
  const capped = await startTestServer({ V2A_WORKERS: '1', V2A_CLIENT_SLOTS: '1' });
  try {
    const url = new URL(RENDER, capped.base);
    const stalled = request(url, { method: 'POST', headers: { 'content-type': 'application/json', 'content-length': '100000', expect: '100-continue' } });
    stalled.on('error', () => {});
    stalled.flushHeaders();
    await once(stalled, 'continue');
    const refused = await postJson(`${capped.base}${RENDER}`, { imageBase64: 'AAAA' });
    assertProblem(refused, 429, 'rate-limited', /at most 1 request in flight/);
    stalled.destroy();
  } finally {
    await capped.close();
  }
});
