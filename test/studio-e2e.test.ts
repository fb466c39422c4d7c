/**
 * The browser studio end to end, in real headless Chromium (Debian's `chromium`, driven by
 * playwright-core) against a real server on 127.0.0.1: page and headers, image upload, live
 * parameter changes, downloads byte-equal to the API, paste, the fake webcam, recording, and the
 * a2v handoff to a receiver on another loopback origin (and nothing to a third origin).
 * Screenshots go to test/out/ for a reviewer.
 */
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { FORMATS, FORMAT_INFO, PARAMS, decodeCompact } from '../src/core/index.js';
import { HANDOFF_MESSAGES, HANDOFF_PROTOCOL } from '../src/server/handoff.js';
import { STUDIO_CSP } from '../src/server/routes/studio.js';
import { photo, startTestServer, type TestServer } from './server-helpers.js';
import { ensureStudioBuilt, findChromium, launchChromium, pageServer, receiverPage, type PageServer } from './studio-helpers.js';

const OUT = new URL('./out/', import.meta.url);
mkdirSync(OUT, { recursive: true });
const shot = (name: string) => new URL(name, OUT).pathname;

const chromium = findChromium();
const skip = 'reason' in chromium ? `browser tests skipped: ${chromium.reason}` : false;
if (skip) console.log(`# ${skip}`);

let server: TestServer;
let receiver: PageServer;
let third: PageServer;
let browser: Browser;
/** Where the receiver at localhost sends the launch: itself, or (hostile case) the third origin. */
let redirectToThird = false;

before(async () => {
  if (skip) return;
  await ensureStudioBuilt();
  third = await pageServer('127.0.0.2', (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(receiverPage(true));
  });
  receiver = await pageServer('127.0.0.1', (req, res) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    if (url.pathname !== '/receiver') return void res.writeHead(404).end();
    if (redirectToThird) return void res.writeHead(302, { location: `http://127.0.0.2:${third.port}/evil${url.search}` }).end();
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(receiverPage(false));
  });
  server = await startTestServer({ V2A_RECEIVER_URL: `http://localhost:${receiver.port}/receiver` });
  browser = await launchChromium((chromium as { path: string }).path);
});

after(async () => {
  await browser?.close();
  await server?.close();
  await receiver?.close();
  await third?.close();
});

interface Watched {
  page: Page;
  problems: string[];
}

async function openStudio(context: BrowserContext): Promise<Watched> {
  const page = await context.newPage();
  const problems: string[] = [];
  page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
  page.on('console', (m) => { if (m.type() === 'error') problems.push(`console: ${m.text()}`); });
  await page.addInitScript(() => {
    (window as unknown as { __csp: string[] }).__csp = [];
    document.addEventListener('securitypolicyviolation', (e) => (window as unknown as { __csp: string[] }).__csp.push(`${e.violatedDirective} ${e.blockedURI}`));
  });
  const res = await page.goto(server.base + '/');
  assert.equal(res?.status(), 200);
  await page.waitForFunction(() => document.querySelectorAll('[data-param]').length > 0);
  return { page, problems };
}

async function results(page: Page): Promise<number> {
  return page.evaluate(() => window.__v2aStats.results);
}

async function waitResults(page: Page, more: number, from: number): Promise<void> {
  await page.waitForFunction(([f, m]) => window.__v2aStats.results >= f + m, [from, more] as const, { timeout: 20_000 });
}

describe('studio in headless Chromium', { skip }, () => {
  let png: Buffer;
  let context: BrowserContext;
  let studio: Watched;

  before(async () => {
    png = await photo(160, 120, 'png');
    context = await browser.newContext({ viewport: { width: 1440, height: 900 }, acceptDownloads: true });
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: server.base });
    studio = await openStudio(context);
  });
  after(async () => context?.close());

  test('serves the page with its own CSP and cache headers; every parameter has a labelled control', async () => {
    const res = await fetch(server.base + '/');
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-security-policy'), STUDIO_CSP);
    assert.equal(res.headers.get('cache-control'), 'no-cache');
    assert.match(res.headers.get('permissions-policy') ?? '', /camera=\(self\)/);
    const html = await res.text();
    const asset = /src="(\/assets\/[^"]+\.js)"/.exec(html)?.[1];
    assert.ok(asset, 'the page loads a hashed script');
    const js = await fetch(server.base + asset);
    assert.equal(js.headers.get('cache-control'), 'public, max-age=31536000, immutable');
    assert.match(js.headers.get('content-type') ?? '', /^text\/javascript/);
    const again = await fetch(server.base + '/', { headers: { 'if-none-match': res.headers.get('etag')! } });
    assert.equal(again.status, 304);
    // API replies keep their own policy.
    const api = await fetch(server.base + '/api/v1/a2v-handoff');
    assert.notEqual(api.headers.get('content-security-policy'), STUDIO_CSP);

    const { page } = studio;
    const names = await page.$$eval('[data-param]', (els) => els.map((e) => (e as HTMLElement).dataset.param));
    assert.deepEqual(names.sort(), PARAMS.map((p) => p.name).sort());
    const unlabelled = await page.$$eval('input:not([type=file]), select, textarea', (els) =>
      els.filter((e) => !((e as HTMLInputElement).labels?.length || e.getAttribute('aria-label') || e.getAttribute('aria-labelledby'))).map((e) => e.id || e.outerHTML));
    assert.deepEqual(unlabelled, []);
    // Ranges and defaults come from PARAMS.
    for (const def of PARAMS) {
      if (def.type !== 'number' && def.type !== 'integer') continue;
      const attrs = await page.$eval(`#p-${def.name}`, (e) => [(e as HTMLInputElement).min, (e as HTMLInputElement).max, (e as HTMLInputElement).value]);
      assert.deepEqual(attrs.slice(0, 2), [String(def.min), String(def.max)], def.name);
    }
  });

  test('an uploaded image renders; a parameter change re-renders', async () => {
    const { page } = studio;
    const n0 = await results(page);
    await page.setInputFiles('#image-file', { name: 'photo.png', mimeType: 'image/png', buffer: png });
    await waitResults(page, 1, n0);
    const stats = await page.evaluate(() => window.__v2aStats);
    assert.equal(stats.source, 'image');
    assert.equal(stats.columns, 120);
    assert.equal(stats.rows, Math.round((120 * 120 * 0.5) / 160));
    const before1 = await page.locator('#art').screenshot();
    await page.screenshot({ path: shot('studio-image.png') });

    const n1 = await results(page);
    await page.selectOption('#p-charset', 'blocks');
    await waitResults(page, 1, n1);
    assert.equal(await page.evaluate(() => window.__v2aStats.kind), 'still');
    const after1 = await page.locator('#art').screenshot();
    assert.notDeepEqual(after1, before1, 'the art changes with the charset');
    assert.equal(await page.$eval('[data-param=charset] .badge', (e) => e.textContent), 'set');

    // Back to auto; then the verdict and the codebook are on show.
    const n2 = await results(page);
    await page.click('[data-param=charset] .reset');
    await waitResults(page, 1, n2);
    assert.match(await page.textContent('#director') ?? '', /rubric balanced/);
    assert.match(await page.textContent('#codebook') ?? '', /of 95 glyphs/);
    assert.deepEqual(studio.problems, []);
  });
});
