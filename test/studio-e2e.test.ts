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
import { HANDOFF_MESSAGES, HANDOFF_PROTOCOL } from '../src/contract/handoff.js';
import { STUDIO_CSP } from '../src/server/routes/studio.js';
import { photo, startTestServer, type TestServer } from './server-helpers.js';
import { artSettlesTo, chromiumNoise, ensureStudioBuilt, forgetSettings, settledArt, findChromium, launchChromium, pageServer, receiverPage, type PageServer } from './studio-helpers.js';

// Callbacks of page.evaluate run in the page. This Node program has no DOM types (tsconfig.json),
// so the browser globals they use are declared here, loosely, for this module only.
/* eslint-disable @typescript-eslint/no-explicit-any */
declare const window: any, document: any, navigator: any, DataTransfer: any, ClipboardEvent: any, createImageBitmap: any, ImageData: any;
type HTMLElement = any;
type HTMLInputElement = any;

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
  page.on('console', (m) => { if (m.type() === 'error' && !chromiumNoise(m.text())) problems.push(`console: ${m.text()}`); });
  await forgetSettings(page);
  await page.addInitScript(() => {
    window.__csp = [];
    document.addEventListener('securitypolicyviolation', (e: any) => window.__csp.push(`${e.violatedDirective} ${e.blockedURI}`));
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

/**
 * Waits for `more` results and then for the still to settle: the result counted may be an earlier
 * render's (a change that came while one was in flight is rendered after it, and a video frame
 * posted before the stream stopped arrives after), so a screenshot or handoff taken on the count
 * alone can catch the picture before the last change (seen under a loaded full test run).
 */
async function waitSettled(page: Page, more: number, from: number): Promise<void> {
  await page.waitForFunction(([f, m]) => window.__v2aStats.results >= f + m && window.__v2aStudio.settled(), [from, more] as const, { timeout: 20_000 });
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

  test('the core bundled for the browser renders on a page\'s main thread (its WebAssembly compiled there, synchronously) what it renders in Node', async () => {
    const { build } = await import('esbuild');
    const { render, formatResult } = await import('../src/core/index.js');
    const bundle = await build({ entryPoints: [new URL('../src/core/index.ts', import.meta.url).pathname], bundle: true, format: 'iife', globalName: 'v2a', platform: 'browser', write: false, logLevel: 'silent' });
    const gradient = (w: number, h: number) => {
      const data = new Uint8Array(w * h * 4);
      for (let i = 0; i < w * h; i++) data.fill(Math.round(((i % w) / (w - 1)) * 255), i * 4, i * 4 + 3), data[i * 4 + 3] = 255;
      return { width: w, height: h, data };
    };
    const page = await context.newPage();
    try {
      await page.setContent('<p>core</p>');
      await page.addScriptTag({ content: bundle.outputFiles[0]!.text });
      // The same image, made in the page by the same function.
      const inPage = await page.evaluate((src: string) => {
        const make = new Function(`return (${src})`)();
        return window.v2a.formatResult(window.v2a.render(make(64, 32), { columns: 20, color: true, format: 'ansi' })).body;
      }, gradient.toString());
      assert.equal(inPage, formatResult(render(gradient(64, 32), { columns: 20, color: true, format: 'ansi' })).body);
    } finally {
      await page.close();
    }
  });

  test('serves the page with its own CSP and cache headers; every parameter has a labelled control', async () => {
    const res = await fetch(server.base + '/');
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-security-policy'), STUDIO_CSP);
    assert.equal(res.headers.get('cache-control'), 'no-cache');
    assert.match(res.headers.get('permissions-policy') ?? '', /camera=\(self\)/);
    const html = await res.text();
    // Relative to the page (Vite base './'): it also works under a proxy's path prefix.
    const asset = /src="(\.\/assets\/[^"]+\.js)"/.exec(html)?.[1];
    assert.ok(asset, 'the page loads a hashed script');
    const js = await fetch(new URL(asset, server.base + '/'));
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
    // The worker's warm-up (started with it, long done by now) renders without posting or painting.
    assert.equal(n0, 0, 'no result before an image');
    assert.equal(await page.evaluate(() => window.__v2aStats.kind), null);
    await page.setInputFiles('#image-file', { name: 'photo.png', mimeType: 'image/png', buffer: png });
    await waitResults(page, 1, n0);
    const stats = await page.evaluate(() => window.__v2aStats);
    assert.equal(stats.source, 'image');
    assert.equal(stats.columns, 120);
    assert.equal(stats.rows, Math.round((120 * 120 * 0.5) / 160));
    const before1 = await settledArt(page);
    await page.screenshot({ path: shot('studio-image.png') });

    const n1 = await results(page);
    await page.selectOption('#p-charset', 'blocks');
    await waitResults(page, 1, n1);
    assert.equal(await page.evaluate(() => window.__v2aStats.kind), 'still');
    const after1 = await settledArt(page, before1);
    assert.notDeepEqual(after1, before1, 'the art changes with the charset');
    assert.equal(await page.$eval('[data-param=charset] .badge', (e) => e.textContent), 'set');

    // Back to auto; then the verdict and the codebook are on show.
    const n2 = await results(page);
    await page.click('[data-param=charset] .reset');
    await waitResults(page, 1, n2);
    assert.match(await page.textContent('#director .verdict') ?? '', /Looks right for balanced|Best effort for balanced/);
    assert.match(await page.textContent('#director details') ?? '', /Rubric balanced: score/);
    assert.match(await page.textContent('#codebook') ?? '', /of 95 characters/);
    assert.deepEqual(studio.problems, []);
  });

  test('downloads in every format equal the API\'s replies for the same PNG and parameters (fineShapes on)', async () => {
    const { page } = studio;
    let n = await results(page);
    await page.fill('#p-columns-n', '64');
    await waitResults(page, 1, n);
    n = await results(page);
    await page.click('#ink-color');
    await waitResults(page, 1, n);
    // fineShapes loads its glyph bitmaps (a chunk of their own) in the worker when first asked for.
    n = await results(page);
    await page.check('#p-fineShapes');
    await waitResults(page, 1, n);
    const explicit = await page.evaluate(() => window.__v2aStudio.explicit());
    assert.deepEqual(explicit, { columns: 64, color: true, fineShapes: true });
    for (const format of FORMATS) {
      const [download] = await Promise.all([page.waitForEvent('download'), page.click(`#downloads [data-format="${format}"]`)]);
      const name = download.suggestedFilename();
      assert.ok(name.endsWith(`.${FORMAT_INFO[format].extension}`), `${format}: ${name}`);
      // The button names the end of the file's name it saves (json-compact's read .json, saved .compact.json).
      const label = await page.$eval(`#downloads [data-format="${format}"] small`, (e: any) => e.textContent as string);
      assert.equal(label, name.slice(name.indexOf('.')), `${format}: the button says ${label}, the file is ${name}`);
      const got = readFileSync(await download.path());
      const res = await fetch(`${server.base}/api/v1/render`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ imageBase64: png.toString('base64'), ...explicit, format }),
      });
      assert.equal(res.status, 200);
      const api = Buffer.from(await res.arrayBuffer());
      assert.ok(got.equals(api), `${format}: the studio's file (${got.length} bytes) differs from the API's reply (${api.length} bytes)`);
    }
    // Copy puts the selected format's output on the clipboard.
    await page.click('#copy');
    await page.waitForFunction(() => /Copied/.test(document.getElementById('status')!.textContent ?? ''));
    const clip = await page.evaluate(() => navigator.clipboard.readText());
    const text = await (await fetch(`${server.base}/api/v1/render`, {
      method: 'POST', headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ imageBase64: png.toString('base64'), ...explicit, format: 'text' }),
    })).text();
    assert.equal(clip, text);
    await page.screenshot({ path: shot('studio-image-colour.png') });
    // Back to the default for the tests that follow (they compare with { columns: 64, color: true }).
    n = await results(page);
    await page.click('[data-param=fineShapes] .reset');
    await waitResults(page, 1, n);
    assert.deepEqual(await page.evaluate(() => window.__v2aStudio.explicit()), { columns: 64, color: true });
  });

  test('a repaint that draws only the cells that changed shows what a full paint does, in colour and in mono', async () => {
    const { page } = studio;
    const art = (not?: Buffer) => settledArt(page, not);
    const step = async (act: () => Promise<void>) => {
      const n = await results(page);
      await act();
      await waitSettled(page, 1, n);
    };
    const button = { colour: '#ink-color', mono: '#ink-mono' } as const;
    for (const [mode, other] of [['colour', 'mono'], ['mono', 'colour']] as const) {
      await step(() => page.click(button[mode]));
      const before = await art();
      // The same glyph table and size: the painter redraws only the cells whose glyph or colour moved.
      await step(async () => {
        await page.fill('#p-contrast-n', '2.9');
        await page.dispatchEvent('#p-contrast-n', 'change');
      });
      const changed = await art(before);
      assert.notDeepEqual(changed, before, `${mode}: contrast changes the art`);
      // To the other ink and back: the same render, painted whole (what the painter keeps no longer matches).
      await step(() => page.click(button[other]));
      await step(() => page.click(button[mode]));
      assert.ok(await artSettlesTo(page, changed), `${mode}: the cells drawn over the last picture make the picture a whole paint makes`);
      await step(() => page.click('[data-param=contrast] .reset'));
    }
    await step(() => page.click('#ink-color'));
  });

  test('a pasted image renders', async () => {
    const { page } = studio;
    const n = await results(page);
    const small = await photo(96, 64, 'png');
    await page.evaluate((b64) => {
      const bytes = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
      const dt = new DataTransfer();
      dt.items.add(new File([bytes], 'clip.png', { type: 'image/png' }));
      document.dispatchEvent(new ClipboardEvent('paste', { clipboardData: dt, bubbles: true, cancelable: true }));
    }, small.toString('base64'));
    await waitResults(page, 1, n);
    const stats = await page.evaluate(() => window.__v2aStats);
    assert.equal(stats.source, 'image');
    assert.equal(stats.rows, Math.round((64 * 64 * 0.5) / 96));
  });

  test('a png download the API would refuse for its pixels is refused here too, naming the columns that fit (the tab spent seconds and hundreds of MB on it)', async () => {
    const { page } = studio;
    const settle = async (act: () => Promise<unknown>) => {
      const n = await results(page);
      await act();
      await waitResults(page, 1, n);
    };
    await settle(async () => page.setInputFiles('#image-file', { name: 'tall.png', mimeType: 'image/png', buffer: await photo(100, 600, 'png') }));
    // The aspect first: 400 columns at 0.5 would be 1200 rows, more than a grid may have.
    for (const [id, value] of [['#p-cellAspect-n', '0.25'], ['#p-columns-n', '400']] as const) {
      await settle(async () => {
        await page.fill(id, value);
        await page.dispatchEvent(id, 'change');
      });
    }
    await page.click('#downloads [data-format="png"]');
    await page.waitForSelector('#art-error', { state: 'visible' });
    assert.match((await page.textContent('#art-error-text'))!, /^Export failed: a png of 400 x 600 cells is 3200 x 19200 px, over the limit of 50,000,000 pixels \(V2A_MAX_IMAGE_PIXELS\): ask for \d+ columns or fewer, or another format$/);
    await page.click('#art-error-close');
    // As the tests before left it: 64 columns, the default cell aspect (in that order, as above).
    await settle(async () => {
      await page.fill('#p-columns-n', '64');
      await page.dispatchEvent('#p-columns-n', 'change');
    });
    await settle(() => page.click('[data-param=cellAspect] .reset'));
  });

  test('the fake webcam streams through the temporal filter; clips record as json-compact lines', async () => {
    const { page } = studio;
    await page.click('#webcam');
    await page.waitForFunction(() => window.__v2aStats.frames >= 20, undefined, { timeout: 20_000 });
    const stats = await page.evaluate(() => window.__v2aStats);
    assert.equal(stats.source, 'webcam');
    assert.equal(stats.kind, 'frame');
    assert.ok(stats.fps > 1, `fps ${stats.fps}`);
    assert.equal(typeof stats.flicker, 'number');
    // On two or more cores each frame's front half (FrameFront) runs on the worker's front thread.
    if (await page.evaluate(() => navigator.hardwareConcurrency) >= 2) assert.ok(stats.sumFrontMs > 0, 'frames rendered on one thread');
    assert.match(await page.textContent('#fps') ?? '', /\d/);
    await page.screenshot({ path: shot('studio-webcam.png') });

    // A WebM clip of the art (MediaRecorder on the art canvas): an EBML file with frames in it.
    await page.click('#record');
    // Until the encoder has written data (its 1 s timeslices; later on a busy machine): the meter
    // shows the clip's size then. A clip stopped before has nothing to save and is refused.
    await page.waitForFunction(() => /● [1-9]\d* s, \d+ KiB/.test(document.getElementById('rec-info')!.textContent ?? ''));
    const [clip] = await Promise.all([page.waitForEvent('download'), page.click('#record')]);
    assert.match(clip.suggestedFilename(), /^v2a-webcam-clip\.webm$/);
    const webmClip = readFileSync(await clip.path());
    assert.ok(webmClip.subarray(0, 4).equals(Buffer.from([0x1a, 0x45, 0xdf, 0xa3])), 'a WebM (EBML) file');
    assert.ok(webmClip.length > 2000, `${webmClip.length} bytes`);

    await page.selectOption('#record-as', 'ndjson');
    // At 64 columns the worker shrinks each camera frame on a canvas; at 160 (a frame at most 4x
    // the grid) it reads the frame with VideoFrame.copyTo in RGBA: both must carry the picture.
    for (const columns of [64, 160]) {
      if (columns !== 64) {
        await page.fill('#p-columns-n', String(columns));
        await page.waitForFunction((c) => window.__v2aStats.columns === c && window.__v2aStats.frames >= 3, columns);
      }
      await page.click('#record');
      await page.waitForFunction(() => Number(/\d+/.exec(document.getElementById('rec-info')!.textContent ?? '')?.[0] ?? 0) >= 8);
      const [download] = await Promise.all([page.waitForEvent('download'), page.click('#record')]);
      assert.match(download.suggestedFilename(), /\.ndjson$/);
      const lines = readFileSync(await download.path(), 'utf8').trimEnd().split('\n');
      assert.ok(lines.length >= 5, `${lines.length} frames`);
      for (const line of lines) {
        const frame = decodeCompact(JSON.parse(line));
        assert.equal(frame.columns, columns);
        assert.equal(frame.lines.length, frame.rows);
        // The camera's picture reached the art: a frame read as black would render blank. (The
        // fake camera's darkest region, its flat green ground, may render blank too: levels and
        // contrast take it to the ground; the disc, the corners and the counter stay inked.)
        const inked = frame.lines.join('').replace(/\s/g, '').length;
        assert.ok(inked > frame.columns * frame.rows * 0.02, `${columns} columns: only ${inked} inked cells`);
      }
    }
    // A clip that cannot be made into a file (a recording too long for the browser's memory) is
    // told beside the art, not lost without a word.
    await page.click('#record');
    await page.waitForFunction(() => Number(/\d+/.exec(document.getElementById('rec-info')!.textContent ?? '')?.[0] ?? 0) >= 2);
    await page.evaluate(() => {
      const B = window.Blob;
      window.__Blob = B;
      window.Blob = function (parts: unknown, opts: any) {
        if (opts?.type === 'application/x-ndjson') throw new RangeError('Invalid string length');
        return new B(parts, opts);
      };
    });
    await page.click('#record');
    await page.waitForFunction(() => !document.getElementById('art-error').hidden && /clip could not be saved: Invalid string length/.test(document.getElementById('art-error-text').textContent));
    await page.evaluate(() => { window.Blob = window.__Blob; });
    await page.click('#art-error-close');
    await page.fill('#p-columns-n', '64');
    await page.waitForFunction(() => window.__v2aStats.columns === 64);

    // Pause holds the frame; a snapshot turns it into a still for every export format. By
    // keyboard: `p` pauses and resumes wherever the focus is but in a field (here: the webcam
    // button, where Space would press the button).
    await page.focus('#webcam');
    await page.keyboard.press('p');
    assert.equal(await page.textContent('#pause'), 'Resume');
    const held = await page.evaluate(() => window.__v2aStats.frames);
    await page.waitForTimeout(300);
    assert.ok((await page.evaluate(() => window.__v2aStats.frames)) <= held + 2, 'paused: no new frames');
    await page.keyboard.press('p');
    await page.waitForFunction((h) => window.__v2aStats.frames > h + 2, held);
    const n = await results(page);
    await page.focus('#snapshot');
    await page.keyboard.press('Enter');
    await page.waitForFunction((m) => window.__v2aStats.results > m && window.__v2aStats.kind === 'still', n);
    // The still's render does not replace the news of the snapshot before it is read: it follows it.
    await page.waitForFunction(() => /^Snapshot taken: a still you can tune and export in every format\. \S+-snapshot: 64×\d+ characters, rendered in \d+ ms after decoding\.$/.test(document.querySelector('#status')?.textContent ?? ''), undefined, { timeout: 5000 });
    // Snapshot's bar is disabled now: the focus went to the webcam button, not to the page's body.
    assert.equal(await page.evaluate(() => document.activeElement?.id), 'webcam');
    assert.equal(await page.evaluate(() => window.__v2aStats.source), 'image');
    assert.equal(await page.evaluate(() => window.__v2aStats.columns), 64);
    await page.click('#webcam');
    await page.waitForFunction(() => window.__v2aStats.source === 'webcam' && window.__v2aStats.frames >= 5);
  });

  test('hands frames to the receiver on another origin with the documented payload and trace id', async () => {
    const { page } = studio;
    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
    await page.selectOption('#handoff-mode', 'webcam-stream');
    await page.fill('#trace-id', traceId);
    const [popup] = await Promise.all([page.waitForEvent('popup'), page.click('#handoff-start')]);
    await popup.waitForLoadState();
    assert.equal(new URL(popup.url()).origin, `http://localhost:${receiver.port}`);
    await popup.waitForFunction(() => (window as any).__got.filter((m: any) => m.data?.type === 'frame').length >= 6, undefined, { timeout: 20_000 });
    const params = await popup.evaluate(() => (window as any).__params as Record<string, string>);
    const handoff = await page.evaluate(() => window.__v2aStats.handoff);
    assert.deepEqual(params, { handoff: handoff.handoff!, protocol: HANDOFF_PROTOCOL, mode: 'webcam-stream', source: server.base, traceId });
    assert.equal(handoff.traceId, traceId);
    assert.equal(handoff.state, 'ready');
    await popup.screenshot({ path: shot('studio-handoff-receiver.png') });
    // Behind the popup the studio's frames come about once a second, and a screenshot or a click
    // waits for them: the studio in front for what the test does in it.
    await page.bringToFront();
    await page.screenshot({ path: shot('studio-handoff.png') });

    await page.click('#handoff-stop');
    await popup.waitForFunction(() => (window as any).__got.some((m: any) => m.data?.type === 'end'));
    const got = await popup.evaluate(() => (window as any).__got as { origin: string; data: Record<string, unknown>; fromOpener: boolean }[]);
    for (const m of got) {
      assert.equal(m.origin, server.base);
      assert.equal(m.fromOpener, true);
    }
    const spec = new Map(HANDOFF_MESSAGES.map((d) => [d.type, d]));
    const types = new Set(got.map((m) => m.data.type));
    assert.ok(types.has('hello') && types.has('frame') && types.has('end'), [...types].join());
    let seq = -1;
    for (const { data } of got) {
      const def = spec.get(data.type as never)!;
      assert.ok(def, `documented type ${String(data.type)}`);
      for (const f of def.fields) if (f.required) assert.ok(f.name in data, `${def.type} has ${f.name}`);
      const known = new Set(def.fields.map((f) => f.name));
      for (const k of Object.keys(data)) assert.ok(known.has(k), `${def.type}.${k} is documented`);
      assert.equal(data.protocol, HANDOFF_PROTOCOL);
      assert.equal(data.handoff, handoff.handoff);
      if (data.type === 'hello') assert.equal(data.traceId, traceId);
      if (data.type === 'frame') {
        assert.equal(data.seq, seq + 1);
        seq = data.seq as number;
        assert.equal(typeof data.timestamp, 'number');
        const text = data.text as string;
        const rows = text.split('\n').slice(0, -1);
        assert.equal(rows.length, data.rows);
        for (const r of rows) assert.equal([...r].length, data.columns);
        // Colour is on (set earlier): chroma decodes to rows x columns x 3 bytes.
        const chroma = data.chroma as { encoding: string; data: string };
        assert.equal(chroma.encoding, 'rgb24-b64-v1');
        assert.equal(Buffer.from(chroma.data, 'base64').length, (data.rows as number) * (data.columns as number) * 3);
        assert.deepEqual(Object.keys(data.director as object).sort(), ['rubric', 'score', 'status']);
      }
      if (data.type === 'end') {
        assert.equal(data.reason, 'stopped');
        assert.equal(data.frames, seq + 1);
      }
    }
    await popup.close();
  });

  test('a page on a third origin receives nothing, and its replies are ignored', async () => {
    const { page } = studio;
    redirectToThird = true;
    try {
      await page.fill('#trace-id', '');
      const [popup] = await Promise.all([page.waitForEvent('popup'), page.click('#handoff-start')]);
      await popup.waitForURL(/127\.0\.0\.2/);
      await popup.waitForLoadState();
      // Hellos go out every 250 ms and the hostile page answers ready every 100 ms.
      await page.waitForTimeout(2000);
      const got = await popup.evaluate(() => (window as any).__got as unknown[]);
      assert.deepEqual(got, []);
      const handoff = await page.evaluate(() => window.__v2aStats.handoff);
      assert.equal(handoff.state, 'waiting');
      assert.match(handoff.traceId!, /^[0-9a-f]{32}$/);
      const params = await popup.evaluate(() => (window as any).__params as Record<string, string>);
      assert.equal(params.traceId, handoff.traceId, 'a fresh trace id is generated and put in the launch address');
      await page.bringToFront(); // as above
      await page.click('#handoff-stop');
      await popup.close();
    } finally {
      redirectToThird = false;
    }
    await page.click('#webcam');
    assert.deepEqual(studio.problems, []);
    assert.deepEqual(await page.evaluate(() => (window as any).__csp), []);
  });

  test('a video file streams (video-stream handoff); latest-frame hands over one frame of a still', async () => {
    const { page } = studio;
    // A short WebM made in the page (MediaRecorder of a moving canvas).
    const webm = Buffer.from(await page.evaluate(async () => {
      const c = document.createElement('canvas');
      c.width = 320;
      c.height = 240;
      const ctx = c.getContext('2d');
      const rec = new (window as any).MediaRecorder(c.captureStream(25), { mimeType: 'video/webm' });
      const chunks: any[] = [];
      rec.ondataavailable = (e: any) => chunks.push(e.data);
      const done = new Promise((resolve) => (rec.onstop = resolve));
      rec.start();
      for (let f = 0; f < 30; f++) {
        ctx.fillStyle = '#202830';
        ctx.fillRect(0, 0, 320, 240);
        ctx.fillStyle = '#f0d080';
        ctx.beginPath();
        ctx.arc(60 + f * 6, 120, 50, 0, Math.PI * 2);
        ctx.fill();
        await new Promise((r) => setTimeout(r, 40));
      }
      rec.stop();
      await done;
      const bytes = new Uint8Array(await new (window as any).Blob(chunks).arrayBuffer());
      let bin = '';
      for (const b of bytes) bin += String.fromCharCode(b);
      return btoa(bin);
    }), 'base64');
    assert.ok(webm.length > 1000, `webm of ${webm.length} bytes`);
    await page.setInputFiles('#video-file', { name: 'clip.webm', mimeType: 'video/webm', buffer: webm });
    await page.waitForFunction(() => window.__v2aStats.source === 'video' && window.__v2aStats.frames >= 8, undefined, { timeout: 20_000 });
    // New parameters in quick succession while frames are in flight (on two cores, at the worker's
    // front thread): frames the worker drops are counted off, so the page keeps sending (the clip loops).
    for (const columns of [72, 88, 64]) await page.fill('#p-columns-n', String(columns));
    await page.waitForFunction(() => window.__v2aStats.columns === 64, undefined, { timeout: 20_000 });
    const shown = await page.evaluate(() => window.__v2aStats.frames);
    await page.waitForFunction((f) => window.__v2aStats.frames >= f + 6 && window.__v2aStats.columns === 64, shown, { timeout: 20_000 });
    assert.equal(await page.inputValue('#handoff-mode'), 'video-stream');
    const [popup] = await Promise.all([page.waitForEvent('popup'), page.click('#handoff-start')]);
    await popup.waitForFunction(() => window.__got.filter((m: any) => m.data?.type === 'frame').length >= 3, undefined, { timeout: 20_000 });
    assert.equal((await popup.evaluate(() => window.__params)).mode, 'video-stream');
    await page.bringToFront();
    await page.click('#handoff-stop');
    await popup.close();

    const n = await results(page);
    await page.setInputFiles('#image-file', { name: 'photo.png', mimeType: 'image/png', buffer: png });
    // A frame of the video posted before the stream stopped may be the result counted: wait for the still itself.
    await waitSettled(page, 1, n);
    assert.equal(await page.evaluate(() => window.__v2aStats.kind), 'still');
    assert.equal(await page.evaluate(() => window.__v2aStats.source), 'image');
    // The mode follows the shown source once its result is drawn.
    assert.equal(await page.inputValue('#handoff-mode'), 'latest-frame');
    const [still] = await Promise.all([page.waitForEvent('popup'), page.click('#handoff-start')]);
    await still.waitForFunction(() => window.__got.some((m: any) => m.data?.type === 'end'), undefined, { timeout: 20_000 });
    const got = (await still.evaluate(() => window.__got)).map((m: any) => m.data);
    const frames = got.filter((m: any) => m.type === 'frame');
    assert.equal(frames.length, 1);
    const api = await fetch(`${server.base}/api/v1/render`, {
      method: 'POST', headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ imageBase64: png.toString('base64'), columns: 64, color: true, format: 'json-compact' }),
    });
    const compact = await api.json() as { text: string; chroma: unknown };
    assert.equal(frames[0].text, compact.text, 'the still frame is the same art the API renders');
    assert.deepEqual(frames[0].chroma, compact.chroma);
    assert.deepEqual(got.find((m: any) => m.type === 'end'), { type: 'end', protocol: HANDOFF_PROTOCOL, handoff: frames[0].handoff, reason: 'complete', frames: 1 });
    await still.close();
    assert.equal(await page.evaluate(() => window.__v2aStats.handoff.state), 'ended');
  });
});

describe('studio on a phone-sized screen', { skip }, () => {
  test('lays out in one column without horizontal scrolling', async () => {
    const context = await browser.newContext({ viewport: { width: 390, height: 844 }, deviceScaleFactor: 2, isMobile: true, hasTouch: true });
    try {
      const { page, problems } = await openStudio(context);
      const n = await results(page);
      await page.setInputFiles('#image-file', { name: 'photo.png', mimeType: 'image/png', buffer: await photo(160, 120, 'png') });
      await waitResults(page, 1, n);
      const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
      assert.ok(overflow <= 0, `horizontal overflow ${overflow}px`);
      await page.screenshot({ path: shot('studio-phone.png'), fullPage: false });
      assert.deepEqual(problems, []);
    } finally {
      await context.close();
    }
  });
});
