/**
 * The studio as a first-time user meets it, in real headless Chromium against a real server:
 * failures leave the last good picture and its exports intact and show the API's own words; the
 * webcam-stream handoff starts the camera itself and keeps its rate with the receiver in front;
 * the layout does not shift; axe-core finds nothing; screenshots at 1440x900 and 390x844 go to
 * test/out/ for a reviewer.
 */
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { after, before, describe, test } from 'node:test';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import sharp from 'sharp';
import { photo, startTestServer, type TestServer } from './server-helpers.js';
import { ensureStudioBuilt, findChromium, launchChromium, pageServer, receiverPage, type PageServer } from './studio-helpers.js';

/* eslint-disable @typescript-eslint/no-explicit-any */
declare const window: any, document: any, PerformanceObserver: any, getComputedStyle: any;

const OUT = new URL('./out/', import.meta.url);
mkdirSync(OUT, { recursive: true });
const shot = (name: string) => new URL(name, OUT).pathname;
const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

const chromium = findChromium();
const skip = 'reason' in chromium ? `browser tests skipped: ${chromium.reason}` : false;
if (skip) console.log(`# ${skip}`);

let server: TestServer;
let receiver: PageServer;
let browser: Browser;

before(async () => {
  if (skip) return;
  await ensureStudioBuilt();
  receiver = await pageServer('127.0.0.1', (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(receiverPage(false));
  });
  server = await startTestServer({ V2A_RECEIVER_URL: `http://localhost:${receiver.port}/receiver`, V2A_IMAGE_FETCH_ALLOWLIST: 'images.example.com' });
  browser = await launchChromium((chromium as { path: string }).path);
});

after(async () => {
  await browser?.close();
  await server?.close();
  await receiver?.close();
});

async function openStudio(context: BrowserContext): Promise<{ page: Page; problems: string[] }> {
  const page = await context.newPage();
  const problems: string[] = [];
  page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
  // Refused renders are 400s, which the browser itself logs: expected here, nothing else is.
  page.on('console', (m) => { if (m.type() === 'error' && !/status of 400/.test(m.text())) problems.push(`console: ${m.text()}`); });
  await page.goto(server.base + '/');
  await page.waitForFunction(() => document.querySelectorAll('[data-param]').length > 0);
  return { page, problems };
}

const results = (page: Page) => page.evaluate(() => window.__v2aStats.results as number);
async function waitResults(page: Page, from: number): Promise<void> {
  await page.waitForFunction((f) => window.__v2aStats.results > f, from, { timeout: 20_000 });
}

async function api(body: Record<string, unknown>): Promise<Response> {
  return fetch(`${server.base}/api/v1/render`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
}

async function downloadText(page: Page): Promise<{ name: string; body: string }> {
  const [d] = await Promise.all([page.waitForEvent('download'), page.click('#downloads [data-format="text"]')]);
  return { name: d.suggestedFilename(), body: readFileSync(await d.path(), 'utf8') };
}

describe('studio failures, handoff and layout in headless Chromium', { skip }, () => {
  test('a refused URL or a bad file leaves the picture and its downloads as they were; the next file renders', async () => {
    const context = await browser.newContext({ viewport: { width: 1440, height: 900 }, acceptDownloads: true });
    try {
      const { page, problems } = await openStudio(context);
      const png = await photo(160, 120, 'png');
      let n = await results(page);
      await page.setInputFiles('#image-file', { name: 'photo.png', mimeType: 'image/png', buffer: png });
      await waitResults(page, n);
      const art = await page.locator('#art').screenshot();
      const good = (await (await api({ imageBase64: png.toString('base64'), format: 'text' })).text());

      // The server allows images.example.com, so the URL box is there; another host is refused.
      assert.equal(await page.isVisible('#url-form'), true);
      const refusedUrl = 'https://elsewhere.example.org/cat.png';
      const refusal = (await (await api({ imageUrl: refusedUrl })).json()) as { detail: string };
      await page.fill('#url', refusedUrl);
      await page.click('#url-form button[type=submit]');
      await page.waitForFunction(() => window.__v2aStats.error !== null);
      assert.equal(await page.isVisible('#art-error'), true);
      assert.ok((await page.textContent('#art-error-text'))!.includes(refusal.detail), 'the API\'s own message is shown beside the art');
      assert.equal(await page.evaluate(() => window.__v2aStats.source), 'image');
      await page.screenshot({ path: shot('studio-1440-refused-url.png') });
      await page.click('#art-error-close');
      assert.ok((await page.locator('#art').screenshot()).equals(art), 'the previous picture stays');
      assert.deepEqual(await downloadText(page), { name: 'v2a-photo.txt', body: good });

      // A control change re-renders the picture on screen, not the refused URL.
      n = await results(page);
      await page.fill('#p-columns-n', '80');
      await waitResults(page, n);
      assert.equal(await page.evaluate(() => window.__v2aStats.columns), 80);
      const good80 = await (await api({ imageBase64: png.toString('base64'), columns: 80, format: 'text' })).text();

      // Files the browser cannot decode go to the server: its message for a damaged JPEG and an
      // SVG; a TIFF renders there.
      const jpeg = await photo(160, 120, 'jpeg');
      const truncated = jpeg.subarray(0, jpeg.length >> 1);
      const svg = Buffer.from('<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><rect width="10" height="10"/></svg>');
      const messages: string[] = [];
      for (const [name, mimeType, buffer] of [['truncated.jpg', 'image/jpeg', truncated], ['drawing.svg', 'image/svg+xml', svg]] as const) {
        const problem = (await (await api({ imageBase64: buffer.toString('base64'), columns: 80 })).json()) as { detail: string };
        await page.evaluate(() => { window.__v2aStats.error = null; });
        await page.setInputFiles('#image-file', { name, mimeType, buffer });
        await page.waitForFunction(() => window.__v2aStats.error !== null, undefined, { timeout: 20_000 });
        const shown = (await page.textContent('#art-error-text'))!;
        assert.ok(shown.includes(problem.detail), `${name}: "${shown}" carries the API's "${problem.detail}"`);
        messages.push(problem.detail);
        assert.deepEqual(await downloadText(page), { name: 'v2a-photo.txt', body: good80 }, `${name}: downloads still match the picture`);
      }
      assert.notEqual(messages[0], messages[1], 'SVG and damaged files are told apart');

      const tiff = await photo(160, 120, 'tiff');
      n = await results(page);
      await page.setInputFiles('#image-file', { name: 'scan.tiff', mimeType: 'image/tiff', buffer: tiff });
      await waitResults(page, n);
      assert.equal(await page.evaluate(() => window.__v2aStats.source), 'server');
      assert.equal(await page.isVisible('#art-error'), false, 'a success clears the error');
      const tiffText = await (await api({ imageBase64: tiff.toString('base64'), columns: 80, format: 'text' })).text();
      assert.deepEqual(await downloadText(page), { name: 'v2a-scan.txt', body: tiffText });

      // The next file renders in the browser again, and its downloads are its own.
      const other = await sharp(png).negate({ alpha: false }).png().toBuffer();
      n = await results(page);
      await page.setInputFiles('#image-file', { name: 'negative.png', mimeType: 'image/png', buffer: other });
      await waitResults(page, n);
      assert.equal(await page.evaluate(() => window.__v2aStats.source), 'image');
      const otherText = await (await api({ imageBase64: other.toString('base64'), columns: 80, format: 'text' })).text();
      assert.deepEqual(await downloadText(page), { name: 'v2a-negative.txt', body: otherText });
      assert.deepEqual(problems, []);
    } finally {
      await context.close();
    }
  });

  test('no URL box when the server allows no image host', async () => {
    const context = await browser.newContext({ viewport: { width: 1440, height: 900 } });
    try {
      const manifest = await (await fetch(`${server.base}/api/v1/agent`)).json() as { limits: { imageUrlHosts: string[] } };
      assert.deepEqual(manifest.limits.imageUrlHosts, ['images.example.com']);
      const page = await context.newPage();
      await page.route('**/api/v1/agent', (route) => route.fulfill({ json: { ...manifest, limits: { ...manifest.limits, imageUrlHosts: [] } } }));
      await page.goto(server.base + '/');
      await page.waitForFunction(() => document.querySelectorAll('[data-param]').length > 0);
      await page.waitForLoadState('networkidle');
      assert.equal(await page.isVisible('#url-form'), false);
    } finally {
      await context.close();
    }
  });

  test('webcam-stream from a cold start streams 10 s to another origin, also with the receiver in front', async () => {
    const context = await browser.newContext({ viewport: { width: 1440, height: 900 } });
    try {
      // Headless Chromium keeps every tab visible, so the studio's page is made to behave as a
      // hidden one does when the receiver's window is in front: no animation or video frame
      // callbacks, timers at most once a second.
      await context.addInitScript('globalThis.__name = (f) => f;');
      await context.addInitScript(() => {
        const w = window as any;
        w.__hidden = false;
        const raf = w.requestAnimationFrame.bind(w);
        w.requestAnimationFrame = (cb: any) => raf((t: number) => { if (!w.__hidden) cb(t); });
        const proto = w.HTMLVideoElement.prototype;
        const rvfc = proto.requestVideoFrameCallback;
        proto.requestVideoFrameCallback = function (this: any, cb: any) { return rvfc.call(this, (...a: any[]) => { if (!w.__hidden) cb(...a); }); };
        const st = w.setTimeout.bind(w), si = w.setInterval.bind(w);
        w.setTimeout = (f: any, ms = 0, ...a: any[]) => st(f, w.__hidden ? Math.max(ms, 1000) : ms, ...a);
        w.setInterval = (f: any, ms = 0, ...a: any[]) => si(f, w.__hidden ? Math.max(ms, 1000) : ms, ...a);
        w.__hide = () => {
          w.__hidden = true;
          Object.defineProperty(document, 'visibilityState', { get: () => 'hidden', configurable: true });
          Object.defineProperty(document, 'hidden', { get: () => true, configurable: true });
          document.dispatchEvent(new Event('visibilitychange'));
        };
      });
      const { page, problems } = await openStudio(context);
      assert.equal(await page.evaluate(() => window.__v2aStats.source), 'none', 'the camera is not running');
      await page.selectOption('#handoff-mode', 'webcam-stream');
      const [popup] = await Promise.all([page.waitForEvent('popup'), page.click('#handoff-start')]);
      const frameTimes = () => popup.evaluate(() => window.__got.filter((m: any) => m.data?.type === 'frame').map((m: any) => m.data.timestamp as number));
      await popup.waitForFunction(() => window.__got.some((m: any) => m.data?.type === 'frame'), undefined, { timeout: 20_000 });
      const t0 = Date.now();
      await page.waitForTimeout(5000);
      // The receiver's window in front: the studio's page is hidden and must not slow down.
      await popup.bringToFront();
      await page.evaluate(() => window.__hide());
      const t1 = Date.now();
      await popup.waitForTimeout(5000);
      const t2 = Date.now();
      const hidden = await page.evaluate(() => document.visibilityState);
      assert.equal(hidden, 'hidden');
      const times: number[] = await frameTimes();
      const state = await page.evaluate(() => window.__v2aStats.handoff.state);
      await page.click('#handoff-stop');
      const rate = (a: number, b: number) => times.filter((t) => t >= a && t < b).length / ((b - a) / 1000);
      const front = rate(t0, t1), behind = rate(t1 + 200, t2);
      let gap = 0;
      for (let i = 1; i < times.length; i++) if (times[i]! >= t0) gap = Math.max(gap, times[i]! - times[i - 1]!);
      console.log(`# handoff: ${front.toFixed(1)} frames/s with the studio in front, ${behind.toFixed(1)} with the receiver in front (studio ${hidden}); longest gap ${gap} ms`);
      assert.equal(state, 'ready', 'the handoff is still streaming after 10 s');
      assert.ok(front >= 10, `${front.toFixed(1)} frames/s with the studio in front`);
      assert.ok(behind >= 10, `${behind.toFixed(1)} frames/s with the receiver in front`);
      assert.ok(gap < 1000, `frames stopped for ${gap} ms`);
      assert.deepEqual(problems, []);
    } finally {
      await context.close();
    }
  });

  test('a scripted session: no layout shift, no axe violations, buttons named by their text; screenshots', async () => {
    // bypassCSP: only so that axe-core can be injected; the page itself runs under its CSP.
    const context = await browser.newContext({ viewport: { width: 1440, height: 900 }, bypassCSP: true, colorScheme: 'dark' });
    try {
      const page = await context.newPage();
      await page.addInitScript(() => {
        window.__cls = 0;
        new PerformanceObserver((list: any) => {
          for (const e of list.getEntries()) {
            if (e.hadRecentInput) continue;
            window.__cls += e.value;
            (window.__shifts ??= []).push(`${e.value.toFixed(3)} ${e.sources.map((s: any) => `${s.node?.id || s.node?.className || s.node?.nodeName} ${JSON.stringify(s.previousRect)}->${JSON.stringify(s.currentRect)}`).join(' | ')}`);
          }
        }).observe({ type: 'layout-shift', buffered: true });
      });
      await page.goto(server.base + '/');
      await page.waitForFunction(() => document.querySelectorAll('[data-param]').length > 0);
      let n = await results(page);
      await page.setInputFiles('#image-file', { name: 'photo.png', mimeType: 'image/png', buffer: await photo(640, 480, 'png') });
      await waitResults(page, n);
      for (const name of ['columns', 'contrast', 'charset', 'maxGlyphRmse', 'denoise']) await page.hover(`[data-param=${name}] .name`);
      n = await results(page);
      await page.click('[data-style="colour-blocks"]');
      await waitResults(page, n);
      await page.waitForTimeout(300);
      await page.screenshot({ path: shot('studio-1440-blocks.png') });
      await page.click('#side-by-side');
      await page.waitForFunction(() => document.getElementById('source-img').complete && !document.getElementById('source-img').hidden);
      await page.waitForTimeout(300);
      await page.screenshot({ path: shot('studio-1440-side-by-side.png') });
      await page.click('#side-by-side');
      n = await results(page);
      await page.click('[data-style="braille-colour"]');
      await waitResults(page, n);
      n = await results(page);
      await page.click('#ground-light');
      await waitResults(page, n);
      assert.equal(await page.getAttribute('#ground-light', 'aria-pressed'), 'true');
      const ground = await page.$eval('#viewport', (e: any) => getComputedStyle(e).backgroundColor);
      assert.equal(ground, 'rgb(250, 250, 250)', 'a light ground');
      await page.click('#webcam');
      await page.waitForFunction(() => window.__v2aStats.frames >= 10, undefined, { timeout: 20_000 });
      await page.click('#side-by-side');
      await page.waitForTimeout(500);
      await page.screenshot({ path: shot('studio-1440-webcam-side-by-side.png') });
      await page.click('#side-by-side');
      await page.click('#webcam');
      await page.click('#ground-dark');
      await page.waitForTimeout(300);
      const cls = await page.evaluate(() => window.__cls as number);
      console.log(`# cumulative layout shift ${cls.toFixed(4)}`);
      if (cls >= 0.05) console.log(await page.evaluate(() => window.__shifts.join('\n')));
      assert.ok(cls < 0.05, `cumulative layout shift ${cls}`);

      // The art fills the stage: most of the viewport box, which is most of the window.
      const fill = await page.evaluate(() => {
        const a = document.getElementById('art').getBoundingClientRect();
        return (a.width * a.height) / (window.innerWidth * window.innerHeight);
      });
      assert.ok(fill > 0.4, `the art covers ${(fill * 100).toFixed(0)}% of the window`);

      // Buttons with words are named by exactly those words (no aria-label that says otherwise).
      const misnamed = await page.$$eval('button', (els: any[]) => els
        .filter((b) => /[a-z]/i.test(b.textContent) && (b.hasAttribute('aria-label') || b.hasAttribute('aria-labelledby')))
        .map((b) => b.outerHTML.slice(0, 120)));
      assert.deepEqual(misnamed, []);
      assert.equal(await page.$$eval('h1', (els: any[]) => els.length), 1, 'one top-level heading');

      // axe-core, in both themes.
      await page.addScriptTag({ content: AXE });
      for (const theme of ['dark', 'light']) {
        await page.evaluate((t: any) => { document.documentElement.dataset.theme = t; }, theme);
        await page.waitForTimeout(400); // colour transitions settle
        const violations = await page.evaluate(async () => (await window.axe.run(document, { resultTypes: ['violations'] })).violations
          .map((v: any) => `${v.id}: ${v.help} (${v.nodes.map((x: any) => `${x.target.join(' ')}: ${x.failureSummary}`).slice(0, 3).join(', ')})`));
        assert.deepEqual(violations, [], `${theme} theme`);
      }
      await page.screenshot({ path: shot('studio-1440-light.png') });
    } finally {
      await context.close();
    }
  });

  test('on a phone the art stays in view while the settings scroll; no horizontal scrolling', async () => {
    const context = await browser.newContext({ viewport: { width: 390, height: 844 }, deviceScaleFactor: 2, isMobile: true, hasTouch: true });
    try {
      const { page, problems } = await openStudio(context);
      const n = await results(page);
      await page.setInputFiles('#image-file', { name: 'photo.png', mimeType: 'image/png', buffer: await photo(640, 480, 'png') });
      await waitResults(page, n);
      await page.screenshot({ path: shot('studio-390-top.png') });
      await page.locator('[data-param=contrast]').scrollIntoViewIfNeeded();
      await page.waitForTimeout(200);
      const inView = await page.evaluate(() => {
        const r = document.getElementById('viewport').getBoundingClientRect();
        const c = document.querySelector('[data-param=contrast]').getBoundingClientRect();
        return { top: r.top, bottom: r.bottom, control: c.top, h: window.innerHeight, scrolled: window.scrollY };
      });
      assert.ok(inView.scrolled > 200, `the page scrolled (${inView.scrolled}px)`);
      assert.ok(inView.top >= 0 && inView.bottom <= inView.h && inView.bottom - inView.top > 150, `the art is in view: ${JSON.stringify(inView)}`);
      assert.ok(inView.control >= inView.bottom - 1 && inView.control < inView.h, 'the control is below the art, on screen');
      await page.screenshot({ path: shot('studio-390-settings.png') });
      const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
      assert.ok(overflow <= 0, `horizontal overflow ${overflow}px`);
      assert.deepEqual(problems, []);
    } finally {
      await context.close();
    }
  });

  test('blocks leave no lines between rows: the preview and the html download of an all-ink picture', async () => {
    const white = await sharp({ create: { width: 160, height: 120, channels: 3, background: '#ffffff' } }).png().toBuffer();
    const context = await browser.newContext({ viewport: { width: 900, height: 700 }, acceptDownloads: true });
    try {
      const { page } = await openStudio(context);
      await page.selectOption('#p-charset', 'blocks');
      const n = await results(page);
      await page.setInputFiles('#image-file', { name: 'white.png', mimeType: 'image/png', buffer: white });
      await waitResults(page, n);
      // Every cell is a full block, so every pixel of the art must be ink.
      const darkRows = async (png: Buffer) => {
        const { data, info } = await sharp(png).greyscale().raw().toBuffer({ resolveWithObject: true });
        let rows = 0;
        for (let y = 2; y < info.height - 2; y++) {
          let dark = 0;
          for (let x = 2; x < info.width - 2; x++) if (data[y * info.width + x]! < 128) dark++;
          if (dark > (info.width - 4) / 2) rows++;
        }
        return rows;
      };
      assert.equal(await darkRows(await page.locator('#art').screenshot()), 0, 'preview');
      const [d] = await Promise.all([page.waitForEvent('download'), page.click('#downloads [data-format="html"]')]);
      const doc = await context.newPage();
      await doc.setContent(readFileSync(await d.path(), 'utf8'));
      const box = await doc.locator('pre').boundingBox();
      const pad = 12;
      const shotPng = await doc.screenshot({ clip: { x: box!.x + pad, y: box!.y + pad, width: box!.width - 2 * pad, height: 200 } });
      assert.equal(await darkRows(shotPng), 0, 'html download');
    } finally {
      await context.close();
    }
  });
});
