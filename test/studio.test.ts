/**
 * The studio without a browser: how the server serves it (headers, caching, the page when it was
 * not built), the decode width it shares with the server's render worker, and the handoff
 * helpers' refusal of manifests without a fixed target origin; what it reads from an image file's
 * bytes (a colour profile, CMYK). The browser tests are in studio-e2e.test.ts and the other
 * studio-*.test.ts.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import Fastify from 'fastify';
import sharp from 'sharp';
import { buildHandoffManifest, HANDOFF_PROTOCOL, LAUNCH_PARAMETERS } from '../src/contract/handoff.js';
import { STUDIO_CSP, loadStudio, studioRoutes } from '../src/server/routes/studio.js';
import { PIXELS_PER_COLUMN, decodeWidth } from '../src/studio/decode-width.js';
import { imageFacts } from '../src/studio/image-facts.js';
import { ndjsonParts } from '../src/studio/ndjson.js';
import { DECODE_PIXELS_PER_COLUMN } from '../src/core/pipeline/geometry.js';
import { runJob } from '../src/core/job.js';
import { freshTraceId, launchUrl, randomHex32, targetOriginOf } from '../src/studio/launch.js';
import type { AppContext } from '../src/server/context.js';
import { startTestServer, type TestServer } from './server-helpers.js';
import { ensureStudioBuilt } from './studio-helpers.js';

describe('serving the studio', () => {
  let server: TestServer;
  before(async () => {
    await ensureStudioBuilt();
    server = await startTestServer();
  });
  after(async () => server?.close());

  test('/ is the page: no-cache with an ETag, the studio CSP, camera allowed to this origin only, popups keep their opener', async () => {
    const res = await server.app.inject({ method: 'GET', url: '/' });
    assert.equal(res.statusCode, 200);
    assert.equal(res.headers['content-type'], 'text/html; charset=utf-8');
    assert.equal(res.headers['cache-control'], 'no-cache');
    assert.match(String(res.headers.etag), /^"[\w-]{27}"$/);
    assert.equal(res.headers['content-security-policy'], STUDIO_CSP);
    assert.equal(res.headers['permissions-policy'], 'camera=(self), microphone=(), geolocation=(), display-capture=()');
    assert.equal(res.headers['cross-origin-opener-policy'], 'same-origin-allow-popups');
    assert.equal(res.headers['x-frame-options'], 'DENY');
    assert.equal(res.headers['x-content-type-options'], 'nosniff');
    assert.match(res.body, /<title>v2a studio<\/title>/);
    // No inline script or style anywhere: the CSP would block it.
    assert.doesNotMatch(res.body, /<script(?![^>]*\bsrc=)[^>]*>/);
    assert.doesNotMatch(res.body, /<style|\sstyle=/);

    const again = await server.app.inject({ method: 'GET', url: '/', headers: { 'if-none-match': String(res.headers.etag) } });
    assert.equal(again.statusCode, 304);
    assert.equal(again.body, '');
    // Weak comparison (a proxy that compresses makes the tag weak), and `*`; another tag is a miss.
    for (const [inm, status] of [[`W/${res.headers.etag}`, 304], ['*', 304], ['"other", ' + String(res.headers.etag), 304], ['W/"other"', 200]] as const) {
      assert.equal((await server.app.inject({ method: 'GET', url: '/', headers: { 'if-none-match': inm } })).statusCode, status, inm);
    }
    const head = await server.app.inject({ method: 'HEAD', url: '/' });
    assert.equal(head.statusCode, 200);
  });

  test('the CSP is strict: nothing inline, nothing from elsewhere, no framing', () => {
    const d = Object.fromEntries(STUDIO_CSP.split('; ').map((x) => [x.split(' ')[0], x.split(' ').slice(1)]));
    assert.deepEqual(d['default-src'], ["'none'"]);
    assert.deepEqual(d['script-src'], ["'self'"]);
    assert.deepEqual(d['style-src'], ["'self'"]);
    assert.deepEqual(d['connect-src'], ["'self'"]);
    assert.deepEqual(d['worker-src'], ["'self'", 'blob:']);
    assert.deepEqual(d['img-src'], ["'self'", 'data:', 'blob:']);
    assert.deepEqual(d['media-src'], ["'self'", 'blob:', 'mediastream:']);
    assert.deepEqual(d['frame-ancestors'], ["'none'"]);
    assert.ok(!STUDIO_CSP.includes('unsafe'), 'no unsafe-inline or unsafe-eval');
  });

  test('hashed assets are immutable; the worker and the stylesheet are served with their types', async () => {
    const page = (await server.app.inject({ method: 'GET', url: '/' })).body;
    // Relative to the page (Vite base './'), so that it also works under a proxy's path prefix.
    assert.doesNotMatch(page, /\s(?:src|href)="\//, 'no address from the site root');
    const script = new URL(/src="(\.\/assets\/[^"]+\.js)"/.exec(page)![1]!, 'http://x/').pathname;
    const css = new URL(/href="(\.\/assets\/[^"]+\.css)"/.exec(page)![1]!, 'http://x/').pathname;
    const js = await server.app.inject({ method: 'GET', url: script });
    assert.equal(js.headers['cache-control'], 'public, max-age=31536000, immutable');
    assert.equal(js.headers['content-type'], 'text/javascript; charset=utf-8');
    const worker = /[`'"](worker-[\w-]+\.js)[`'"]/.exec(js.body)?.[1];
    assert.ok(worker, 'the page script names its worker');
    const w = await server.app.inject({ method: 'GET', url: `/assets/${worker}` });
    assert.equal(w.statusCode, 200);
    assert.equal(w.headers['cache-control'], 'public, max-age=31536000, immutable');
    assert.equal((await server.app.inject({ method: 'GET', url: css })).headers['content-type'], 'text/css; charset=utf-8');
    const icon = await server.app.inject({ method: 'GET', url: '/favicon.svg' });
    assert.equal(icon.headers['cache-control'], 'public, max-age=3600');
    // Unknown paths stay problem+json 404s; API replies keep their own CSP.
    const missing = await server.app.inject({ method: 'GET', url: '/assets/nope.js' });
    assert.equal(missing.statusCode, 404);
    assert.match(String(missing.headers['content-type']), /problem\+json/);
    const api = await server.app.inject({ method: 'GET', url: '/api/v1/a2v-handoff' });
    assert.notEqual(api.headers['content-security-policy'], STUDIO_CSP);
    assert.match(String(api.headers['permissions-policy']), /camera=\(\)/);
  });

  test('without a build, / says how to build the studio (503) and nothing else changes', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'v2a-studio-'));
    try {
      assert.equal(loadStudio(dir), null);
      const app = Fastify();
      await app.register(studioRoutes, { ctx: {} as AppContext, dir });
      const res = await app.inject({ method: 'GET', url: '/' });
      assert.equal(res.statusCode, 503);
      assert.match(res.body, /npm run build:studio/);
      await app.close();

      mkdirSync(join(dir, 'assets'));
      writeFileSync(join(dir, 'index.html'), '<!doctype html><title>x</title>');
      writeFileSync(join(dir, 'assets', 'a-123.js'), 'export {}');
      writeFileSync(join(dir, 'notes.unknown'), 'skipped');
      const files = loadStudio(dir)!;
      assert.deepEqual([...files.keys()].sort(), ['/assets/a-123.js', '/index.html']);
      assert.equal(files.get('/index.html')!.cacheControl, 'no-cache');
      assert.equal(files.get('/assets/a-123.js')!.cacheControl, 'public, max-age=31536000, immutable');
      // A file that vanishes while the build is read (a rebuild empties the folder first; here a
      // link to nothing): no build, not a failed start.
      symlinkSync(join(dir, 'assets', 'gone.js'), join(dir, 'assets', 'b-456.js'));
      assert.equal(loadStudio(dir), null);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('studio helpers', () => {
  test('the codebook card says what its size means: chosen for the bound, the whole set asked for, or the whole set short of the bound', async () => {
    const { codebookNote } = await import('../src/studio/codebook-note.js');
    const c = { strategy: 'adaptive', glyphs: ' .:-=+*#%@', size: 10, rampSize: 10, rmse: 0.04, maxRmse: 0.03, bitsPerCell: 2 } as const;
    // "The fewest characters whose tone error (0.04) stays within 0.03" contradicted itself.
    assert.match(codebookNote(c), /^Even every character leaves a tone error of 0\.04, over the bound of 0\.03/);
    assert.match(codebookNote({ ...c, size: 6, rmse: 0.02 }), /^The fewest characters whose tone error \(0\.02\) stays within 0\.03/);
    assert.match(codebookNote({ ...c, strategy: 'fixed' }), /^The whole set, as asked \(fixed\)/);
    // Dots and two-colour art use every glyph whatever the strategy reported: within the bound it is not "the fewest".
    assert.match(codebookNote({ ...c, size: 256, rampSize: 256, rmse: 0.024 }), /^Every character of the set, for this style/);
  });

  test('the studio decodes stills at the width the render job asks decoders for', async () => {
    let asked = 0;
    const image = { width: 480, height: 360, data: new Uint8Array(480 * 360 * 4).fill(128), format: 'png', sourceWidth: 4000, sourceHeight: 3000 };
    await runJob({ kind: 'bytes', bytes: new Uint8Array(1) }, { columns: 120 }, {
      decoder: async (_bytes, request) => {
        asked = request.targetWidth;
        // The job's warm-up, offered for the decode's wait: safe to call, and it never throws.
        assert.equal(typeof request.whileDecoding, 'function');
        request.whileDecoding!();
        return image;
      },
      limits: { maxBytes: 10, maxPixels: 1e9 },
    });
    assert.equal(asked, decodeWidth(4000, 3000, 120).width);
    assert.equal(PIXELS_PER_COLUMN, DECODE_PIXELS_PER_COLUMN);
    assert.equal(PIXELS_PER_COLUMN, 4);
    assert.deepEqual(decodeWidth(160, 120, 120), { width: 160, height: 120 });
    assert.deepEqual(decodeWidth(4000, 3000, 120), { width: 480, height: 360 });
    assert.deepEqual(decodeWidth(481, 10, 120), { width: 480, height: 10 });
  });

  test('the studio reads a colour profile and CMYK from a file\'s bytes', async () => {
    const raw = () => sharp(Buffer.alloc(48 * 32 * 3, 90), { raw: { width: 48, height: 32, channels: 3 } });
    const facts = async (image: ReturnType<typeof raw>) => imageFacts(new Uint8Array(await image.toBuffer()));
    assert.deepEqual(await facts(raw().jpeg()), { icc: false, cmyk: false });
    assert.deepEqual(await facts(raw().toColourspace('cmyk').jpeg()), { icc: false, cmyk: true });
    assert.deepEqual(await facts(raw().toColourspace('cmyk').withIccProfile('cmyk').jpeg()), { icc: true, cmyk: true });
    assert.deepEqual(await facts(raw().withIccProfile('p3').jpeg({ progressive: true })), { icc: true, cmyk: false });
    assert.deepEqual(await facts(raw().withIccProfile('p3').png()), { icc: true, cmyk: false });
    assert.deepEqual(await facts(raw().png()), { icc: false, cmyk: false });
  });

  test('a json-compact recording longer than the longest string still makes its file', async () => {
    assert.equal(await new Blob(ndjsonParts(['{"a":1}', '{"b":2}'])).text(), '{"a":1}\n{"b":2}\n');
    // Five lines of 2^27 characters (one string, shared): 671M characters, past V8's longest string.
    const line = 'x'.repeat(2 ** 27);
    const lines = Array<string>(5).fill(line);
    assert.throws(() => lines.join('\n'), RangeError, 'joined, the recording was lost');
    const parts = ndjsonParts(lines);
    assert.equal(parts.length, 10);
    assert.ok(parts.every((p) => p.length <= line.length));
  });

  test('the handoff needs a fixed target origin that is the launch address\'s own', () => {
    const manifest = buildHandoffManifest({ receiverUrl: 'https://a2v.example/receiver?x=1', platformKeyConfigured: false });
    assert.equal(targetOriginOf(manifest), 'https://a2v.example');
    const wild = { ...manifest, transport: { ...manifest.transport, targetOrigin: '*' } };
    assert.throws(() => targetOriginOf(wild), /fixed target origin/);
    const other = { ...manifest, transport: { ...manifest.transport, targetOrigin: 'https://evil.example' } };
    assert.throws(() => targetOriginOf(other), /fixed target origin/);
    assert.throws(() => targetOriginOf({ ...manifest, protocol: 'other.v9' }), /not platform\.v2a/);
  });

  test('the launch address carries handoff, protocol, mode, source and traceId; trace ids are 32 hex', () => {
    const manifest = buildHandoffManifest({ receiverUrl: 'https://a2v.example/receiver?x=1', platformKeyConfigured: false });
    const trace = freshTraceId();
    assert.match(trace, /^[0-9a-f]{32}$/);
    assert.notEqual(freshTraceId(), trace);
    const handoff = randomHex32();
    const url = new URL(launchUrl(manifest, { handoff, mode: 'webcam-stream', source: 'http://127.0.0.1:8080', traceId: trace }));
    assert.equal(url.origin + url.pathname, 'https://a2v.example/receiver');
    assert.equal(url.searchParams.get('x'), '1');
    for (const p of LAUNCH_PARAMETERS) assert.ok(url.searchParams.has(p.name), p.name);
    assert.equal(url.searchParams.get('handoff'), handoff);
    assert.equal(url.searchParams.get('protocol'), HANDOFF_PROTOCOL);
    assert.equal(url.searchParams.get('mode'), 'webcam-stream');
    assert.equal(url.searchParams.get('source'), 'http://127.0.0.1:8080');
    assert.equal(url.searchParams.get('traceId'), trace);
    assert.throws(() => launchUrl(manifest, { handoff, mode: 'latest-frame', source: 'http://x', traceId: 'not-hex' }), /32 lowercase hex/);
  });
});
