import assert from 'node:assert/strict';
import { gzipSync } from 'node:zlib';
import { once } from 'node:events';
import https from 'node:https';
import net, { type AddressInfo, type LookupFunction } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { fakeDns, selfSignedCert } from './helpers/https-origin.js';
import {
  fetchImage,
  ImageFetchError,
  type FetchImageOptions,
} from '../src/server/fetch-image.js';
import { matchesHostPattern, parseAllowlist, TRUSTED_IMAGE_HOSTS } from '../src/server/net/image-hosts.js';
import { isLoopbackAddress, isPublicAddress, nonPublicReason } from '../src/server/net/ip-policy.js';

// ---------------------------------------------------------------- ip policy

describe('ip-policy', () => {
  const refused: [string, string][] = [
    ['0.0.0.0', 'unspecified'], ['0.255.255.255', 'unspecified'],
    ['10.0.0.1', 'private'], ['10.255.255.255', 'private'],
    ['100.64.0.1', 'CGNAT'], ['100.127.255.255', 'CGNAT'],
    ['127.0.0.1', 'loopback'], ['127.255.255.254', 'loopback'],
    ['169.254.169.254', 'link-local'],
    ['172.16.0.1', 'private'], ['172.31.255.255', 'private'],
    ['192.0.0.8', 'IETF protocol assignments'],
    ['192.0.2.1', 'TEST-NET-1'],
    ['192.88.99.1', '6to4 relay'],
    ['192.168.1.1', 'private'],
    ['198.18.0.1', 'benchmarking'], ['198.19.255.255', 'benchmarking'],
    ['198.51.100.7', 'TEST-NET-2'],
    ['203.0.113.9', 'TEST-NET-3'],
    ['224.0.0.1', 'multicast'], ['239.255.255.250', 'multicast'],
    ['240.0.0.1', 'reserved'], ['255.255.255.255', 'reserved'],
    ['::', 'unspecified'],
    ['::1', 'loopback'], ['0:0:0:0:0:0:0:1', 'loopback'],
    ['::ffff:127.0.0.1', 'IPv4-mapped'], ['::ffff:7f00:1', 'IPv4-mapped'],
    ['::ffff:8.8.8.8', 'IPv4-mapped'], ['::ffff:a00:1', 'IPv4-mapped'],
    ['::127.0.0.1', 'IPv4-compatible'], ['::8.8.8.8', 'IPv4-compatible'],
    ['::ffff:0:a00:1', 'IPv4-translated'],
    ['64:ff9b::a00:1', 'NAT64'], ['64:ff9b::808:808', 'NAT64'], ['64:ff9b:1::1', 'NAT64'],
    ['100::1', 'discard-only'],
    ['2001::1', 'Teredo'], ['2001:0:4136:e378:8000:63bf:3fff:fdd2', 'Teredo'],
    ['2001:2::1', 'IETF protocol assignments'], ['2001:10::1', 'IETF protocol assignments'],
    ['2001:db8::1', 'documentation'], ['3fff::1', 'documentation'],
    ['2002:a00:1::', '6to4'], ['2002:808:808::1', '6to4'],
    ['fc00::1', 'unique local'], ['fd12:3456::1', 'unique local'],
    ['fe80::1', 'link-local'], ['febf::1', 'link-local'],
    ['fec0::1', 'site-local'],
    ['ff02::1', 'multicast'], ['ff0e::1', 'multicast'],
    ['4000::1', 'not global unicast'], ['1::1', 'not global unicast'],
    ['fe80::1%eth0', 'not an IP'], ['example.com', 'not an IP'], ['', 'not an IP'], ['1.2.3', 'not an IP'],
  ];
  for (const [address, why] of refused) {
    test(`refuses ${address || '(empty)'} (${why})`, () => {
      const reason = nonPublicReason(address);
      assert.ok(reason !== undefined, `${address} should not be public`);
      assert.ok(reason.toLowerCase().includes(why.toLowerCase()) || why === 'not an IP', `${address}: ${reason}`);
      assert.equal(isPublicAddress(address), false);
    });
  }

  const allowed = [
    '8.8.8.8', '1.1.1.1', '9.255.255.255', '11.0.0.0', '100.63.255.255', '100.128.0.0',
    '172.15.255.255', '172.32.0.0', '192.167.255.255', '192.169.0.0', '198.17.255.255', '198.20.0.0',
    '223.255.255.255', '2606:4700::1111', '2001:4860:4860::8888', '2a00:1450:4001:80b::200e',
    '2001:200::1', // just past 2001::/23
    '2003::1', // just past 2002::/16
  ];
  for (const address of allowed) {
    test(`allows public ${address}`, () => assert.equal(nonPublicReason(address), undefined));
  }

  test('loopback detection for the test-only switch is plain loopback only', () => {
    assert.equal(isLoopbackAddress('127.0.0.1'), true);
    assert.equal(isLoopbackAddress('127.1.2.3'), true);
    assert.equal(isLoopbackAddress('::1'), true);
    assert.equal(isLoopbackAddress('::ffff:127.0.0.1'), false);
    assert.equal(isLoopbackAddress('10.0.0.1'), false);
    assert.equal(isLoopbackAddress('localhost'), false);
  });
});

// ---------------------------------------------------------------- allowlist

describe('allowlist', () => {
  test('parseAllowlist trims, lowercases, drops trailing dots and empty entries', () => {
    assert.deepEqual(parseAllowlist(undefined), []);
    assert.deepEqual(parseAllowlist(''), []);
    assert.deepEqual(parseAllowlist(' Images.Example.COM , *.CDN.example.net., ,localhost'), [
      'images.example.com',
      '*.cdn.example.net',
      'localhost',
    ]);
    assert.deepEqual(parseAllowlist('bücher.example'), ['xn--bcher-kva.example']);
  });

  test('parseAllowlist throws on garbage', () => {
    for (const bad of ['*', '*.', '*.com', 'http://x', 'x.com/path', 'x.com:443', 'user@x.com', '127.0.0.1',
      '[::1]', 'a..b', '-a.com', 'a_b.com', 'foo.123', '*.*.example.com', 'a.*.example.com', 'ex ample.com']) {
      assert.throws(() => parseAllowlist(`good.example,${bad}`), /invalid host pattern/, bad);
    }
  });

  test('*.suffix matches strict subdomains only, case-insensitive, trailing-dot tolerant', () => {
    assert.equal(matchesHostPattern('a.example.com', '*.example.com'), true);
    assert.equal(matchesHostPattern('b.a.example.com', '*.example.com'), true);
    assert.equal(matchesHostPattern('A.Example.COM.', '*.example.com'), true);
    assert.equal(matchesHostPattern('a.example.com', '*.example.com.'), true);
    assert.equal(matchesHostPattern('example.com', '*.example.com'), false);
    assert.equal(matchesHostPattern('badexample.com', '*.example.com'), false);
    assert.equal(matchesHostPattern('example.com.evil.net', '*.example.com'), false);
    assert.equal(matchesHostPattern('.example.com', '*.example.com'), false);
  });

  test('exact patterns match only that host', () => {
    assert.equal(matchesHostPattern('example.com', 'example.com'), true);
    assert.equal(matchesHostPattern('EXAMPLE.com.', 'example.com'), true);
    assert.equal(matchesHostPattern('a.example.com', 'example.com'), false);
    assert.equal(matchesHostPattern('example.co', 'example.com'), false);
  });

  test('the built-in trusted list is empty: the operator decides', () => {
    assert.deepEqual(TRUSTED_IMAGE_HOSTS, []);
  });
});

// ---------------------------------------------------------------- fetching

const IMAGE = Buffer.from(Array.from({ length: 70_000 }, (_, i) => (i * 31 + 7) & 0xff));
const CHUNK = Buffer.alloc(16 * 1024, 0xab);

const DNS: Record<string, string[]> = {
  'images.test': ['127.0.0.1'],
  'other.test': ['127.0.0.1'],
  'evil.test': ['127.0.0.1'],
  'private.test': ['10.0.0.1'],
  'mixed.test': ['127.0.0.1', '10.0.0.1'],
  'mapped.test': ['::ffff:127.0.0.1'],
};

/** Test DNS: only the names above, always answering the way dns.lookup does. */
const lookup = fakeDns(DNS);

let server: https.Server;
let stallServer: net.Server;
let port = 0;
let stallPort = 0;
let ca = '';
const hits: string[] = [];
const stallSockets = new Set<net.Socket>();
let endlessClosed: Promise<void> = Promise.resolve();
let bigClosed: Promise<void> = Promise.resolve();

before(async () => {
  const pems = selfSignedCert(['images.test', 'other.test', 'evil.test', 'localhost']);
  ca = pems.cert;
  server = https.createServer(pems, (req, res) => {
    const url = new URL(req.url ?? '/', `https://${req.headers.host}`);
    hits.push(`${url.hostname}${url.pathname}`);
    const hop = /^\/r\/(\d+)$/.exec(url.pathname);
    if (url.pathname === '/img' || hop?.[1] === '0') {
      res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': IMAGE.length });
      res.end(IMAGE);
    } else if (hop) {
      res.writeHead(302, { location: `/r/${Number(hop[1]) - 1}` });
      res.end();
    } else if (url.pathname === '/redirect') {
      res.writeHead(301, { location: url.searchParams.get('to') ?? '' });
      res.end();
    } else if (url.pathname === '/endless') {
      endlessClosed = once(res, 'close').then(() => {});
      res.writeHead(200, { 'content-type': 'image/png' });
      const pump = (): void => {
        while (!res.destroyed && res.write(CHUNK));
        if (!res.destroyed) res.once('drain', pump);
      };
      pump();
    } else if (url.pathname === '/big-cl') {
      bigClosed = once(res, 'close').then(() => {});
      res.writeHead(200, { 'content-type': 'image/png', 'content-length': 10_000_000 });
      res.write(CHUNK); // then stall: reading the body would only end at the timeout
    } else if (url.pathname === '/gzipped') {
      // Whatever the request asked for: a server that compresses anyway.
      const gz = gzipSync(IMAGE);
      res.writeHead(200, { 'content-type': 'image/png', 'content-encoding': 'gzip', 'content-length': gz.length });
      res.end(gz);
    } else if (url.pathname === '/stall') {
      // accept and never answer
    } else if (url.pathname === '/status') {
      // Any status, with the image's bytes and a Location (a 304 or 300 with one is no redirect).
      res.writeHead(Number(url.searchParams.get('code')), { location: '/img', 'content-length': IMAGE.length });
      res.end(IMAGE);
    } else if (url.pathname === '/empty') {
      res.writeHead(200, { 'content-type': 'image/png', 'content-length': 0 });
      res.end();
    } else {
      res.writeHead(404, { 'content-type': 'text/plain' });
      res.end('not found');
    }
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  port = (server.address() as AddressInfo).port;

  // Accepts TCP and never speaks TLS: a stall inside the connect phase.
  stallServer = net.createServer((socket) => {
    stallSockets.add(socket);
    socket.on('close', () => stallSockets.delete(socket));
  });
  stallServer.listen(0, '127.0.0.1');
  await once(stallServer, 'listening');
  stallPort = (stallServer.address() as AddressInfo).port;
});

after(async () => {
  server.closeAllConnections();
  for (const socket of stallSockets) socket.destroy();
  await Promise.all([
    new Promise((resolve) => server.close(resolve)),
    new Promise((resolve) => stallServer.close(resolve)),
  ]);
});

function options(extra: Partial<FetchImageOptions> = {}): FetchImageOptions {
  return {
    allowlist: ['images.test', 'other.test', 'private.test', 'mixed.test', 'mapped.test', 'localhost'],
    maxBytes: 100_000,
    timeoutMs: 3000,
    allowLoopback: true,
    lookup,
    ca,
    ...extra,
  };
}

async function refusal(promise: Promise<unknown>, status: number, code: string): Promise<ImageFetchError> {
  const err = await promise.then(
    () => assert.fail(`expected ${status} ${code}`),
    (e: unknown) => e,
  );
  assert.ok(err instanceof ImageFetchError, `not an ImageFetchError: ${String(err)}`);
  assert.equal(err.code, code, err.message);
  assert.equal(err.status, status);
  assert.doesNotMatch(err.message, /\n\s+at /, 'no stack in the message');
  return err;
}

const at = (host: string, path: string, p = port) => `https://${host}:${p}${path}`;

describe('fetchImage', () => {
  test('fetches the exact bytes from an allowed host', { timeout: 10_000 }, async () => {
    const bytes = await fetchImage(at('images.test', '/img'), options());
    assert.ok(bytes instanceof Uint8Array);
    assert.deepEqual(Buffer.from(bytes), IMAGE);
  });

  test('host patterns from trustedHosts count as well as the allowlist', { timeout: 10_000 }, async () => {
    const bytes = await fetchImage(at('images.test', '/img'), options({ allowlist: [], trustedHosts: ['*.test'] }));
    assert.equal(bytes.length, IMAGE.length);
  });

  test('refuses other schemes', async () => {
    for (const url of [at('images.test', '/img').replace('https:', 'http:'), 'ftp://images.test/img', 'data:image/png;base64,AAAA', 'file:///etc/passwd']) {
      await refusal(fetchImage(url, options()), 400, 'scheme_not_allowed');
    }
  });

  test('refuses credentials in the URL and invalid URLs', async () => {
    await refusal(fetchImage(`https://user:pass@images.test:${port}/img`, options()), 400, 'credentials_not_allowed');
    await refusal(fetchImage('not a url', options()), 400, 'invalid_url');
  });

  test('refuses IP literals in every form', async () => {
    for (const url of [at('127.0.0.1', '/img'), at('[::1]', '/img'), 'https://2130706433/', 'https://0x7f.1/', 'https://[::ffff:127.0.0.1]/']) {
      await refusal(fetchImage(url, options()), 400, 'ip_literal');
    }
    assert.deepEqual(hits.filter((h) => !h.endsWith('.test/img') && !h.startsWith('localhost')), []);
  });

  test('refuses hosts that are not allowlisted, before any DNS', async () => {
    let looked = 0;
    const counting: LookupFunction = (h, o, cb) => { looked++; lookup(h, o, cb); };
    const err = await refusal(fetchImage(at('evil.test', '/img'), options({ lookup: counting })), 400, 'host_not_allowed');
    assert.match(err.message, /evil\.test/);
    await refusal(fetchImage(at('sub.images.test', '/img'), options({ lookup: counting })), 400, 'host_not_allowed');
    const off = await refusal(fetchImage(at('images.test', '/img'), options({ allowlist: [] })), 400, 'host_not_allowed');
    // The default, an empty list: the message says imageUrl is off and what to send instead.
    assert.match(off.message, /^Host images\.test is not on the image host allowlist, which is empty on this server \(V2A_IMAGE_FETCH_ALLOWLIST\): imageUrl is off here; send the image itself \(imageBase64\) instead$/);
    assert.match(err.message, /allowlist$/, 'a list with hosts is not called empty');
    assert.equal(looked, 0);
    // A 54 KB host name was echoed whole (twice in the problem): at most a DNS name's 253 characters.
    const long = await refusal(fetchImage(`https://${'a'.repeat(60)}.${'b'.repeat(54_000)}/x.png`, options()), 400, 'host_not_allowed');
    assert.ok(long.message.length < 400, `${long.message.length} characters`);
  });

  test('refuses a name resolving to loopback unless the test-only switch is on', async () => {
    const before = hits.length;
    const err = await refusal(fetchImage(at('images.test', '/img'), options({ allowLoopback: false })), 400, 'address_not_public');
    assert.match(err.message, /images\.test/);
    assert.doesNotMatch(err.message, /127\.0\.0\.1/);
    assert.equal(hits.length, before, 'never reached the server');
  });

  test('refuses loopback through the real resolver too (localhost)', async () => {
    await refusal(fetchImage(at('localhost', '/img'), options({ allowLoopback: false, lookup: undefined })), 400, 'address_not_public');
  });

  test('refuses names resolving to private or IPv4-mapped addresses, even with allowLoopback', { timeout: 10_000 }, async () => {
    const err = await refusal(fetchImage(at('private.test', '/img'), options()), 400, 'address_not_public');
    assert.doesNotMatch(err.message, /10\.0\.0\.1/);
    await refusal(fetchImage(at('mapped.test', '/img'), options()), 400, 'address_not_public');
  });

  test('refuses when any one of several addresses is not public', { timeout: 10_000 }, async () => {
    await refusal(fetchImage(at('mixed.test', '/img'), options()), 400, 'address_not_public');
  });

  test('an unresolvable allowlisted name is 502 unreachable', { timeout: 10_000 }, async () => {
    await refusal(fetchImage(at('missing.test', '/img'), options({ allowlist: ['missing.test'] })), 502, 'unreachable');
  });

  test('follows a redirect to another allowed host', { timeout: 10_000 }, async () => {
    const before = hits.length;
    const to = encodeURIComponent(at('other.test', '/img'));
    const bytes = await fetchImage(at('images.test', `/redirect?to=${to}`), options());
    assert.deepEqual(Buffer.from(bytes), IMAGE);
    assert.deepEqual(hits.slice(before), ['images.test/redirect', 'other.test/img']);
  });

  test('follows up to 3 redirects and refuses a 4th', { timeout: 10_000 }, async () => {
    assert.equal((await fetchImage(at('images.test', '/r/3'), options())).length, IMAGE.length);
    await refusal(fetchImage(at('images.test', '/r/4'), options()), 502, 'too_many_redirects');
    await refusal(fetchImage(at('images.test', '/r/1'), options({ maxRedirects: 0 })), 502, 'too_many_redirects');
  });

  test('re-checks every redirect target', { timeout: 10_000 }, async () => {
    const via = (target: string) => at('images.test', `/redirect?to=${encodeURIComponent(target)}`);
    await refusal(fetchImage(via(at('evil.test', '/img')), options()), 400, 'host_not_allowed');
    await refusal(fetchImage(via(at('127.0.0.1', '/img')), options()), 400, 'ip_literal');
    await refusal(fetchImage(via(at('images.test', '/img').replace('https:', 'http:')), options()), 400, 'scheme_not_allowed');
    await refusal(fetchImage(via(at('private.test', '/img')), options()), 400, 'address_not_public');
  });

  test('cuts an endless body at the cap: 413, quickly, and the response is torn down', { timeout: 10_000 }, async () => {
    const started = Date.now();
    await refusal(fetchImage(at('images.test', '/endless'), options({ maxBytes: 64 * 1024, timeoutMs: 8000 })), 413, 'too_large');
    assert.ok(Date.now() - started < 2000, 'no waiting for the timeout');
    await endlessClosed; // the test's own timeout catches a hang here
  });

  test('refuses a declared Content-Length over the cap without reading', { timeout: 10_000 }, async () => {
    const started = Date.now();
    await refusal(fetchImage(at('images.test', '/big-cl'), options({ timeoutMs: 8000 })), 413, 'too_large');
    assert.ok(Date.now() - started < 2000);
    await bigClosed;
  });

  test('a server that never answers is a 502 timeout within ~timeoutMs', { timeout: 10_000 }, async () => {
    const started = Date.now();
    await refusal(fetchImage(at('images.test', '/stall'), options({ timeoutMs: 500 })), 502, 'timeout');
    const elapsed = Date.now() - started;
    assert.ok(elapsed >= 450 && elapsed < 2000, `${elapsed} ms`);
  });

  test('a stall in the TLS handshake is a 502 timeout too', { timeout: 10_000 }, async () => {
    const started = Date.now();
    await refusal(fetchImage(at('images.test', '/img', stallPort), options({ timeoutMs: 500 })), 502, 'timeout');
    assert.ok(Date.now() - started < 2000);
  });

  test('a non-2xx final status is 502', { timeout: 10_000 }, async () => {
    const err = await refusal(fetchImage(at('images.test', '/nope'), options()), 502, 'upstream_status');
    assert.match(err.message, /404/);
  });

  test('only a whole image is read: 206, 204 and an empty 200 are 502; only 301, 302, 303, 307 and 308 are followed', { timeout: 10_000 }, async () => {
    // They were read as the image (a 206 is part of one) and an empty body blamed on the client
    // (400 undecodable); a 304 or 300 with a Location was followed as a redirect.
    for (const code of [206, 204, 304, 300]) {
      const err = await refusal(fetchImage(at('images.test', `/status?code=${code}`), options()), 502, 'upstream_status');
      assert.match(err.message, new RegExp(`answered HTTP ${code} for the image URL`));
    }
    const empty = await refusal(fetchImage(at('images.test', '/empty'), options()), 502, 'upstream_status');
    assert.match(empty.message, /answered HTTP 200 with an empty body/);
    for (const code of [200, 203, 307]) {
      assert.deepEqual(Buffer.from(await fetchImage(at('images.test', `/status?code=${code}`), options())), IMAGE, String(code));
    }
  });

  test('a compressed body is refused naming its Content-Encoding, not read as an image of an unknown format', { timeout: 10_000 }, async () => {
    const err = await refusal(fetchImage(at('images.test', '/gzipped'), options()), 502, 'upstream_status');
    assert.match(err.message, /Content-Encoding "gzip"; v2a reads images uncompressed \(identity\) only/);
  });

  test('an untrusted certificate is 502 unreachable; the log names the TLS code the reply leaves out', { timeout: 10_000 }, async () => {
    const err = await refusal(fetchImage(at('images.test', '/img'), options({ ca: undefined })), 502, 'unreachable');
    // The server's 'request failed' line carries the codes of the cause chain (plugins/errors.ts).
    const { causeCodes } = await import('../src/server/plugins/errors.js');
    const codes = causeCodes(err);
    assert.ok(codes.some((c) => /CERT|SIGNATURE|ISSUER/.test(c)), JSON.stringify(codes));
    // As the server answers it: the problem made from the table's error, the fetch error its cause.
    const { fetchFailure } = await import('../src/server/fetch-image.js');
    const { HttpProblem } = await import('../src/server/problem.js');
    const problem = HttpProblem.from(fetchFailure(err));
    assert.deepEqual([problem.slug, problem.status, problem.errors?.[0]?.parameter], ['image-fetch-failed', 502, 'imageUrl']);
    assert.deepEqual(causeCodes(problem), codes);
  });

  test('a caller abort rejects with the caller reason', { timeout: 10_000 }, async () => {
    const reason = new Error('client went away');
    const err = await fetchImage(at('images.test', '/stall'), options({ signal: AbortSignal.timeout(100) })).catch((e: unknown) => e);
    assert.ok(!(err instanceof ImageFetchError));
    const controller = new AbortController();
    const pending = fetchImage(at('images.test', '/stall'), options({ signal: controller.signal }));
    setTimeout(() => controller.abort(reason), 50);
    await assert.rejects(pending, (e) => e === reason);
  });
});
