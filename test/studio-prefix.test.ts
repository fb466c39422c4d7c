/**
 * The studio published under a path prefix by a reverse proxy that strips it (Traefik's
 * StripPrefix, nginx `location /v2a/ { proxy_pass http://v2a:8080/; }`): the browser sees
 * http://proxy/v2a/, the server only `/`. In headless Chromium through a small such proxy, every
 * request of the page (its assets, favicon, workers, API calls) stays under /v2a/, a still renders
 * in the page, a TIFF on the server and the webcam live, and the "Same render over the API"
 * command names the proxied address (and runs as shown); so does the page at /v2a/index.html. The
 * studio at `/` is every other studio-*.test.ts.
 */
import assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { after, before, describe, test } from 'node:test';
import type { Browser } from 'playwright-core';
import { photo, startTestServer, type TestServer } from './server-helpers.js';
import {
  chromiumNoise, downloadText, ensureStudioBuilt, findChromium, forgetSettings, launchChromium, openStill, pageServer, results, waitResults, type PageServer,
} from './studio-helpers.js';

/* eslint-disable @typescript-eslint/no-explicit-any */
declare const window: any, document: any;

const PREFIX = '/v2a';
const chromium = findChromium();
const skip = 'reason' in chromium ? `browser tests skipped: ${chromium.reason}` : false;
if (skip) console.log(`# ${skip}`);
const has = (tool: string) => spawnSync('sh', ['-c', `command -v ${tool}`]).status === 0;

let server: TestServer;
let proxy: PageServer;
let browser: Browser;
let dir: string;
/** Every request that reached the proxy, as `METHOD /path?query`. */
const seen: string[] = [];

before(async () => {
  if (skip) return;
  await ensureStudioBuilt();
  // /v2a/... goes to the server without /v2a; anything else is the proxy's own 404.
  proxy = await pageServer('127.0.0.1', (req, res) => {
    seen.push(`${req.method} ${req.url}`);
    if (!req.url!.startsWith(`${PREFIX}/`)) {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not under the prefix\n');
      return;
    }
    const { port } = new URL(server.base);
    const upstream = request({ host: '127.0.0.1', port, method: req.method, path: req.url!.slice(PREFIX.length), headers: req.headers }, (answer) => {
      res.writeHead(answer.statusCode!, answer.headers);
      answer.pipe(res);
    });
    upstream.on('error', () => { if (!res.headersSent) res.writeHead(502).end(); else res.destroy(); });
    req.pipe(upstream);
  });
  server = await startTestServer({ V2A_PUBLIC_URL: `http://127.0.0.1:${proxy.port}${PREFIX}`, V2A_IMAGE_FETCH_ALLOWLIST: 'images.example.com' });
  browser = await launchChromium((chromium as { path: string }).path);
  dir = mkdtempSync(join(tmpdir(), 'v2a-studio-prefix-'));
});

after(async () => {
  await browser?.close();
  await proxy?.close();
  await server?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('the studio behind a proxy that strips a path prefix', { skip }, () => {
  test('loads, renders in the page, on the server and live, and shows the proxied API command, all under the prefix', async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, acceptDownloads: true });
    try {
      const page = await context.newPage();
      await forgetSettings(page);
      const problems: string[] = [];
      page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
      page.on('console', (m) => { if (m.type() === 'error' && !chromiumNoise(m.text())) problems.push(`console: ${m.text()}`); });
      const base = `http://127.0.0.1:${proxy.port}${PREFIX}/`;
      const outside = () => seen.filter((r) => !r.split(' ')[1]!.startsWith(`${PREFIX}/`));

      await page.goto(base);
      // The load event has waited for the page's script and stylesheet: anything they asked of the
      // proxy's root is known by now (with absolute paths the page got no further).
      assert.deepEqual(outside(), [], 'nothing asked outside the prefix');
      await page.waitForFunction(() => document.querySelectorAll('[data-param]').length > 0);
      // Both manifests came through the prefix: the agent's limits show the URL box, the handoff's
      // names the receiver.
      await page.waitForFunction(() => /^Receiver: /.test(document.querySelector('#handoff-receiver').textContent));
      await page.waitForSelector('#url-form', { state: 'visible' });
      const icon = await page.evaluate(() => document.querySelector('link[rel=icon]').href as string);
      assert.equal(icon, `${base}favicon.svg`);
      assert.equal(await page.evaluate(async (u) => (await window.fetch(u)).status, icon), 200);

      // A PNG renders in the page's workers (their scripts load from under the prefix too).
      await openStill(page, await photo(160, 120, 'png'));
      assert.equal(await page.evaluate(() => window.__v2aStats.source), 'image');

      // A TIFF goes to the server's render, through the proxy.
      const tiff = await photo(160, 120, 'tiff');
      const n = await results(page);
      await page.setInputFiles('#image-file', { name: 'scan.tiff', mimeType: 'image/tiff', buffer: tiff });
      await waitResults(page, n);
      assert.equal(await page.evaluate(() => window.__v2aStats.source), 'server');
      assert.equal(await page.isVisible('#art-error'), false);
      assert.ok(seen.includes(`POST ${PREFIX}/api/v1/render`), 'the server render went through the prefix');

      // The command names the page's own base, and runs as shown (when curl is here).
      const command = (await page.textContent('#curl'))!;
      assert.match(command, new RegExp(`^curl -sS http://127\\.0\\.0\\.1:${proxy.port}/v2a/api/v1/render \\\\\\n {2}-F image=@scan\\.tiff`));
      if (has('curl')) {
        writeFileSync(join(dir, 'scan.tiff'), tiff);
        const { stdout } = await promisify(execFile)('bash', ['-c', command], { cwd: dir, encoding: 'utf8' });
        assert.equal(stdout, (await downloadText(page)).body, 'the command\'s answer is the page\'s art');
      }

      // The webcam's frames go through the front worker, which the render worker starts from its own
      // (relative) URL; with one core there is none.
      await page.evaluate(() => { window.__v2aStats.frames = -1e9; });
      await page.click('#webcam');
      await page.waitForFunction(() => window.__v2aStats.source === 'webcam' && window.__v2aStats.frames >= 5, undefined, { timeout: 20_000 });
      const workers = ['worker', ...(await page.evaluate(() => window.navigator.hardwareConcurrency >= 2) ? ['front-worker'] : [])];
      for (const w of workers) assert.ok(seen.some((r) => new RegExp(`^GET ${PREFIX}/assets/${w}-[\\w-]+\\.js$`).test(r)), `${w} came from under the prefix`);

      // The server serves the page at /index.html too: under the prefix it resolves the same way.
      const other = await context.newPage();
      other.on('pageerror', (e) => problems.push(`index.html pageerror: ${e.message}`));
      await other.goto(`${base}index.html`);
      await other.waitForFunction(() => /^Receiver: /.test(document.querySelector('#handoff-receiver').textContent));
      assert.match((await other.textContent('#curl'))!, new RegExp(`^curl -sS http://127\\.0\\.0\\.1:${proxy.port}/v2a/api/v1/render `));

      assert.deepEqual(outside(), [], 'nothing asked outside the prefix');
      assert.deepEqual(problems, []);
    } finally {
      await context.close();
    }
  });
});
