/**
 * The platform key on the protected platform actions (GET /api/v1/metrics, GET /api/v1/status):
 * both schemes of interface.md §5, wrong and missing keys (401 problem with WWW-Authenticate),
 * no key configured (404, like any unknown path), the constant-time comparison, and the public
 * endpoints staying credential-free. Every reply is validated against the served OpenAPI document.
 */
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { after, before, describe, mock, test } from 'node:test';
import { platformKeyVerifier, presentedCredentials, WWW_AUTHENTICATE, WWW_AUTHENTICATE_INVALID } from '../src/server/plugins/platform-auth.js';
import {
  assertProblem, call, photo, postJson, responseValidator, startTestServer, validatingCaller, type ResponseValidator, type TestServer,
} from './server-helpers.js';

const KEY = `pk_${crypto.randomBytes(30).toString('base64url')}`;
const PROTECTED = ['/api/v1/metrics', '/api/v1/status'];

let keyed: TestServer;
let open: TestServer;
let validator: ResponseValidator;
let req: ReturnType<typeof validatingCaller>;
let reqOpen: ReturnType<typeof validatingCaller>;

before(async () => {
  // No span export and no receiver checks here: only the key on the routes is under test.
  process.env.OTEL_TRACES_EXPORTER = 'none';
  keyed = await startTestServer({ PLATFORM_API_KEY: KEY, V2A_RECEIVER_STATUS_URL: 'off', V2A_WORKERS: '1' });
  open = await startTestServer({ V2A_WORKERS: '1' });
  validator = responseValidator((await call(`${keyed.base}/api/openapi.json`)).json);
  req = validatingCaller(() => validator, keyed.base);
  reqOpen = validatingCaller(() => validator, open.base);
});
after(async () => {
  await keyed?.close();
  await open?.close();
});

describe('with PLATFORM_API_KEY configured', () => {
  for (const path of PROTECTED) {
    test(`${path}: Authorization: Bearer <key>`, async () => {
      const r = await req('GET', path, { headers: { authorization: `Bearer ${KEY}` } });
      assert.equal(r.status, 200, r.text);
      assert.equal(r.headers.get('cache-control'), 'no-store');
      const lower = await req('GET', path, { headers: { authorization: `bearer   ${KEY}` } });
      assert.equal(lower.status, 200, 'the scheme is case-insensitive');
    });

    test(`${path}: X-Platform-API-Key: <key>`, async () => {
      const r = await req('GET', path, { headers: { 'x-platform-api-key': KEY } });
      assert.equal(r.status, 200, r.text);
    });

    test(`${path}: no key -> 401 with WWW-Authenticate: Bearer realm="v2a"`, async () => {
      const r = await req('GET', path);
      assertProblem(r, 401, 'unauthorized', /Authorization: Bearer <key> or X-Platform-API-Key/);
      assert.equal(r.headers.get('www-authenticate'), WWW_AUTHENTICATE);
      // Another scheme is not a platform credential.
      const basic = await req('GET', path, { headers: { authorization: `Basic ${Buffer.from(`x:${KEY}`).toString('base64')}` } });
      assertProblem(basic, 401, 'unauthorized');
      assert.equal(basic.headers.get('www-authenticate'), WWW_AUTHENTICATE);
      const empty = await req('GET', path, { headers: { authorization: 'Bearer' } });
      assertProblem(empty, 401, 'unauthorized');
    });

    test(`${path}: a wrong key -> 401 invalid_token, in either header, whatever its length`, async () => {
      const cases: Array<Record<string, string>> = [
        { authorization: `Bearer ${KEY}x` },
        { authorization: 'Bearer k' },
        { authorization: `Bearer ${KEY.slice(0, -1)}` },
        { 'x-platform-api-key': KEY.toUpperCase() },
        { 'x-platform-api-key': 'x'.repeat(5000) },
        // Both schemes: both must hold the key.
        { authorization: `Bearer ${KEY}`, 'x-platform-api-key': 'wrong' },
        { authorization: 'Bearer wrong', 'x-platform-api-key': KEY },
      ];
      for (const headers of cases) {
        const r = await req('GET', path, { headers });
        assertProblem(r, 401, 'unauthorized', /not valid/);
        assert.equal(r.headers.get('www-authenticate'), WWW_AUTHENTICATE_INVALID);
        assert.ok(!r.text.includes(KEY.slice(3, 20)), 'the reply does not echo the key');
      }
      const both = await req('GET', path, { headers: { authorization: `Bearer ${KEY}`, 'x-platform-api-key': KEY } });
      assert.equal(both.status, 200);
    });
  }

  test('HEAD is protected the same way', async () => {
    assert.equal((await call(`${keyed.base}/api/v1/status`, { method: 'HEAD' })).status, 401);
    assert.equal((await call(`${keyed.base}/api/v1/status`, { method: 'HEAD', headers: { 'x-platform-api-key': KEY } })).status, 200);
  });

  test('the keys are compared in constant time: timingSafeEqual on SHA-256 digests, for every credential sent', async () => {
    const spy = mock.method(crypto, 'timingSafeEqual');
    try {
      await req('GET', '/api/v1/metrics', { headers: { authorization: 'Bearer a-short-wrong-key' } });
      assert.equal(spy.mock.callCount(), 1);
      const [a, b] = spy.mock.calls[0]!.arguments as [Buffer, Buffer];
      assert.equal(a.length, 32);
      assert.equal(b.length, 32, 'equal-length digests whatever was sent');
      await req('GET', '/api/v1/metrics', { headers: { authorization: 'Bearer wrong', 'x-platform-api-key': KEY } });
      assert.equal(spy.mock.callCount(), 3, 'both credentials compared, no short cut');
      await req('GET', '/api/v1/metrics');
      assert.equal(spy.mock.callCount(), 3, 'nothing to compare without a credential');
    } finally {
      spy.mock.restore();
    }
  });

  test('public endpoints stay credential-free, and ignore a wrong key', async () => {
    const png = await photo(64, 48);
    const cases: Array<Record<string, string>> = [{}, { authorization: 'Bearer wrong' }, { 'x-platform-api-key': 'wrong' }];
    for (const headers of cases) {
      assert.equal((await req('GET', '/api/health', { headers })).status, 200);
      assert.equal((await req('GET', '/api/v1/a2v-handoff', { headers })).status, 200);
      assert.equal((await req('GET', '/api/openapi.json', { headers })).status, 200);
      const r = await postJson(`${keyed.base}/api/v1/render`, { imageBase64: png.toString('base64'), columns: 16 }, headers);
      assert.equal(r.status, 200, r.text);
      const m = await postJson(`${keyed.base}/api/mcp`, { jsonrpc: '2.0', id: 1, method: 'ping' }, headers);
      assert.equal(m.status, 200);
    }
  });

  test('CORS lets browsers send both headers and read WWW-Authenticate', async () => {
    const pre = await call(`${keyed.base}/api/v1/status`, {
      method: 'OPTIONS',
      headers: { origin: 'https://app.example', 'access-control-request-method': 'GET', 'access-control-request-headers': 'authorization, x-platform-api-key' },
    });
    assert.equal(pre.status, 204);
    assert.match(pre.headers.get('access-control-allow-headers') ?? '', /authorization.*x-platform-api-key/);
    const r = await call(`${keyed.base}/api/v1/status`, { headers: { origin: 'https://app.example' } });
    assert.match(r.headers.get('access-control-expose-headers') ?? '', /www-authenticate/);
  });
});

describe('without PLATFORM_API_KEY', () => {
  for (const path of PROTECTED) {
    test(`${path} is 404, with or without credentials, like an unknown path`, async () => {
      const unknown = await call(`${open.base}/api/v1/nothing-here`);
      const cases: Array<Record<string, string>> = [{}, { authorization: `Bearer ${KEY}` }, { 'x-platform-api-key': KEY }];
      for (const headers of cases) {
        const r = await reqOpen('GET', path, { headers });
        const p = assertProblem(r, 404, 'not-found');
        assert.equal(p.detail, `There is nothing at ${path}.`);
        assert.equal(r.headers.get('www-authenticate'), null);
        assert.deepEqual(Object.keys(p).sort(), Object.keys(unknown.json).sort());
        assert.equal(p.title, unknown.json.title);
      }
    });
  }
});

describe('the verifier', () => {
  test('accepts the key only', () => {
    const verify = platformKeyVerifier(KEY);
    assert.equal(verify(KEY), true);
    assert.equal(verify(`${KEY} `), false);
    assert.equal(verify(''), false);
    assert.equal(verify(KEY.slice(1)), false);
  });

  test('reads both schemes', () => {
    assert.deepEqual(presentedCredentials({ headers: { authorization: 'Bearer abc' } }), ['abc']);
    assert.deepEqual(presentedCredentials({ headers: { authorization: 'Basic abc' } }), []);
    assert.deepEqual(presentedCredentials({ headers: { 'x-platform-api-key': ' abc ' } }), ['abc']);
    assert.deepEqual(presentedCredentials({ headers: { authorization: 'bearer a', 'x-platform-api-key': 'b' } }), ['a', 'b']);
    assert.deepEqual(presentedCredentials({ headers: {} }), []);
  });
});
