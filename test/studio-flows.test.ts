/**
 * The studio in headless Chromium against a real server, past the first steps: the "Same render
 * over the API" command run as shown (glyph ramps and file names curl would misread), and what it
 * says for CMYK JPEGs, live sources and snapshots; the Tune-for presets, the glyph ramp's error and
 * the settings' words; switching between videos, the webcam and stills (the status speaks of the
 * source shown, a snapshot clears an error); a recorded clip's frame count and duration.
 */
import assert from 'node:assert/strict';
import { execFile, execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { after, before, describe, test } from 'node:test';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import sharp from 'sharp';
import { finishWebm } from '../src/studio/webm.js';
import { photo, startTestServer, type TestServer } from './server-helpers.js';
import { downloadText, ensureStudioBuilt, findChromium, launchChromium, openStudioAt, recordInPage, results } from './studio-helpers.js';

/* eslint-disable @typescript-eslint/no-explicit-any */
declare const window: any, document: any;

const chromium = findChromium();
const skip = 'reason' in chromium ? `browser tests skipped: ${chromium.reason}` : false;
if (skip) console.log(`# ${skip}`);
const run = promisify(execFile);
const has = (tool: string) => spawnSync('sh', ['-c', `command -v ${tool}`]).status === 0;

let server: TestServer;
let browser: Browser;
let context: BrowserContext;
let dir: string;

before(async () => {
  if (skip) return;
  await ensureStudioBuilt();
  server = await startTestServer();
  browser = await launchChromium((chromium as { path: string }).path);
  context = await browser.newContext({ viewport: { width: 1440, height: 900 }, acceptDownloads: true });
  dir = mkdtempSync(join(tmpdir(), 'v2a-studio-'));
});

after(async () => {
  await context?.close();
  await browser?.close();
  await server?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** Opens a still file and waits until it is rendered and nothing more is on its way. */
async function openStill(page: Page, name: string, buffer: Buffer, mimeType = 'image/png'): Promise<void> {
  const n = await results(page);
  await page.setInputFiles('#image-file', { name, mimeType, buffer });
  await page.waitForFunction((f) => window.__v2aStats.results > f && window.__v2aStudio.settled() && window.__v2aStats.source === 'image', n, { timeout: 20_000 });
}
/** The shown API command, run by bash in `dir` (where the files it names are); not synchronously: the server is in this process. */
async function runCommand(page: Page): Promise<string> {
  return (await run('bash', ['-c', (await page.textContent('#curl'))!], { cwd: dir, encoding: 'utf8' })).stdout;
}
const shownNote = (page: Page) => page.locator('#curl-note').evaluate((e: any) => (e.hidden ? null : e.textContent as string));
/**
 * Runs `start`, which opens a live source, and waits for that source's frames. The frame count
 * restarts with each stream: set far below zero first, it counts only the new one's.
 */
async function goLive(page: Page, source: 'webcam' | 'video', start: () => Promise<unknown>, frames = 5): Promise<void> {
  await page.evaluate(() => { window.__v2aStats.frames = -1e9; });
  await start();
  await page.waitForFunction(([s, f]) => window.__v2aStats.source === s && window.__v2aStats.frames >= f, [source, frames] as const, { timeout: 20_000 });
}
const playVideo = (page: Page, name: string, buffer: Buffer, frames?: number) =>
  goLive(page, 'video', () => page.setInputFiles('#video-file', { name, mimeType: 'video/webm', buffer }), frames);
const startWebcam = (page: Page) => goLive(page, 'webcam', () => page.click('#webcam'));

describe('the API command in headless Chromium', { skip }, () => {
  test('runs as shown for file names curl -F would cut at , or ; and names with " \\ \' and spaces', async () => {
    const { page, problems } = await openStudioAt(context, server.base);
    const png = await photo(160, 120, 'png');
    for (const name of ['a,b.png', 'a;b.png', 'say "hi" \\ it\'s.png']) {
      writeFileSync(join(dir, name), png);
      await openStill(page, name, png);
      assert.match((await page.textContent('#curl'))!, /^ {2}-F /m, name);
      if (has('curl')) assert.equal(await runCommand(page), (await downloadText(page)).body, `${name}: the command's answer is the page's art`);
    }
    assert.deepEqual(problems, []);
    await page.close();
  });

  test('runs as shown for glyph ramps curl -F would read as files or options', async () => {
    const { page, problems } = await openStudioAt(context, server.base);
    const png = await photo(160, 120, 'png');
    writeFileSync(join(dir, 'photo.png'), png);
    await openStill(page, 'photo.png', png);
    // A leading @ or < made curl read a file, a ; ended the value, a leading space was dropped.
    for (const ramp of [' .:-=+*#%@', '@%#*+=-:. ', ' .;type=x', '<>!@ ']) {
      const n = await results(page);
      await page.fill('#p-glyphs', ramp);
      await page.waitForFunction((f) => window.__v2aStats.results > f && window.__v2aStudio.settled(), n, { timeout: 20_000 });
      const command = (await page.textContent('#curl'))!;
      assert.ok(command.includes(`--form-string 'glyphs=${ramp}'`), command);
      assert.ok(!/^ {2}-F (?!'?image=)/m.test(command), `only the file goes with -F: ${command}`);
      if (has('curl')) assert.equal(await runCommand(page), (await downloadText(page)).body, JSON.stringify(ramp));
    }
    assert.deepEqual(problems, []);
    await page.close();
  });

  test('says so for a CMYK JPEG, whose colours the API decodes otherwise', async () => {
    const { page, problems } = await openStudioAt(context, server.base);
    const w = 160, h = 120;
    const rgb = Buffer.alloc(w * h * 3);
    for (let i = 0; i < w * h; i++) rgb.set([((i % w) * 255) / w, ((i / w) * 255) / h, 128], i * 3);
    const raw = () => sharp(rgb, { raw: { width: w, height: h, channels: 3 } });
    await openStill(page, 'inks.jpg', await raw().toColourspace('cmyk').jpeg().toBuffer(), 'image/jpeg');
    assert.match((await shownNote(page)) ?? '', /CMYK JPEG.*differ/);
    assert.match((await page.textContent('#curl'))!, /-F image=@inks\.jpg/, 'the command stays');
    await openStill(page, 'screen.jpg', await raw().jpeg().toBuffer(), 'image/jpeg');
    assert.equal(await shownNote(page), null);
    assert.deepEqual(problems, []);
    await page.close();
  });

  test('a video, the webcam and a snapshot have none: the API renders image files only', async () => {
    const { page, problems } = await openStudioAt(context, server.base);
    const noCommand = async (what: string, words: RegExp) => {
      assert.match((await shownNote(page)) ?? '', words, what);
      assert.equal(await page.isVisible('#curl'), false, what);
      assert.equal(await page.isVisible('#copy-curl'), false, what);
    };
    await page.click('summary:has-text("Same render over the API")');
    await playVideo(page, 'clip.webm', await recordInPage(page, 'video'));
    await noCommand('video', /still images only/);
    await startWebcam(page);
    await noCommand('webcam', /still images only/);
    const n = await results(page);
    await page.click('#snapshot');
    await page.waitForFunction((f) => window.__v2aStats.results > f && window.__v2aStats.kind === 'still', n, { timeout: 20_000 });
    await noCommand('snapshot', /snapshot/);
    await openStill(page, 'photo.png', await photo(160, 120, 'png'));
    assert.equal(await shownNote(page), null);
    assert.equal(await page.isVisible('#curl'), true);
    assert.match((await page.textContent('#curl'))!, /-F image=@photo\.png/);
    assert.deepEqual(problems, []);
    await page.close();
  });
});

describe('settings in headless Chromium', { skip }, () => {
  test('a Tune-for preset hands back only what the Auto Director tunes: cell aspect, motion response and tuning strength stay', async () => {
    const { page, problems } = await openStudioAt(context, server.base);
    for (const [name, value] of [['cellAspect', '1'], ['autoOptimize', '0'], ['motionSensitivity', '0.2'], ['contrast', '2'], ['maxGlyphRmse', '0.05']]) {
      await page.fill(`#p-${name}-n`, value!);
    }
    await page.click('[data-preset="portrait"]');
    assert.deepEqual(await page.evaluate(() => window.__v2aStudio.explicit()), { cellAspect: 1, autoOptimize: 0, motionSensitivity: 0.2, qualityTarget: 'portrait' });
    assert.deepEqual(problems, []);
    await page.close();
  });

  test('a wrong glyph ramp is told under the field, in view with the focus there or elsewhere, and announced', async () => {
    const { page, problems } = await openStudioAt(context, server.base);
    const error = page.locator('[data-param="glyphs"] [role="status"]');
    /** The error is shown and nothing (the field's tooltip) covers its middle. */
    const inView = async (when: string) => {
      assert.equal(await error.isVisible(), true, when);
      await error.scrollIntoViewIfNeeded();
      const box = (await error.boundingBox())!;
      const top = await page.evaluate(([x, y]) => document.elementFromPoint(x, y)?.closest('[data-param="glyphs"] [role="status"]') != null, [box.x + box.width / 2, box.y + box.height / 2] as const);
      assert.ok(top, `${when}: the error is covered`);
    };
    await page.fill('#p-glyphs', ' .oo');
    assert.match((await error.textContent())!, /given twice/);
    assert.equal(await error.getAttribute('role'), 'status');
    assert.equal(await page.getAttribute('#p-glyphs', 'aria-invalid'), 'true');
    await inView('focused');
    await page.focus('#reset-all');
    await page.mouse.move(5, 5);
    await inView('focus elsewhere');
    await page.fill('#p-glyphs', ' .o');
    assert.equal(await error.textContent(), '');
    assert.equal(await page.getAttribute('#p-glyphs', 'aria-invalid'), null);
    assert.deepEqual(problems, []);
    await page.close();
  });

  test('Escape closes a setting\'s tooltip until the focus moves; labels say "colour", as the project does', async () => {
    const { page, problems } = await openStudioAt(context, server.base);
    await page.mouse.move(5, 5);
    await page.focus('#p-contrast');
    assert.equal(await page.isVisible('#p-contrast-desc'), true);
    await page.keyboard.press('Escape');
    assert.equal(await page.isVisible('#p-contrast-desc'), false, 'Escape closes it');
    await page.focus('#p-brightness');
    await page.focus('#p-contrast');
    assert.equal(await page.isVisible('#p-contrast-desc'), true, 'back with the focus');
    const labels = await page.$$eval('#controls label.name', (ls: any[]) => ls.map((l) => l.textContent as string));
    assert.deepEqual(labels.filter((l) => /color/i.test(l)), []);
    assert.ok(labels.includes('Colour depth') && labels.includes('Cell colours'), labels.join(', '));
    assert.deepEqual(problems, []);
    await page.close();
  });
});

describe('switching sources in headless Chromium', { skip }, () => {
  test('the status line speaks of the source shown, not of a result of the one before', async () => {
    const { page, problems } = await openStudioAt(context, server.base);
    // 4:3 and 16:9: at 120 columns, 45 and 34 rows.
    const fourThree = await recordInPage(page, 'video', 320, 240);
    const wide = await recordInPage(page, 'video', 320, 180);
    await page.evaluate(() => {
      const status = document.getElementById('status');
      window.__said = [];
      // What it said, and the kind of source shown when it said it.
      new window.MutationObserver(() => window.__said.push(`${document.body.dataset.source}: ${status.textContent}`)).observe(status, { childList: true, characterData: true, subtree: true });
    });
    const settle = () => page.waitForTimeout(800);
    await playVideo(page, 'a.webm', fourThree);
    await playVideo(page, 'b.webm', wide);
    assert.equal(await page.evaluate(() => window.__v2aStats.rows), 34);
    await settle();
    await startWebcam(page);
    await settle();
    // A still with a change in flight when the webcam starts.
    await page.click('#webcam');
    await openStill(page, 'photo.png', await photo(160, 120, 'png'));
    await page.fill('#p-columns-n', '100');
    await startWebcam(page);
    await settle();
    const said: string[] = await page.evaluate(() => window.__said);
    // A live source's frames are not announced: such words are a still's, of a source before.
    assert.deepEqual(said.filter((s) => /^(video|webcam): .*: \d+×\d+ characters/.test(s)), [], 'a live source is announced with a still\'s result');
    const { columns, rows } = await page.evaluate(() => window.__v2aStats);
    assert.ok((await page.textContent('#readout'))!.startsWith(`${columns}×${rows} `));
    await page.click('#webcam');
    assert.deepEqual(problems, []);
    await page.close();
  });

  test('a stream shrunk to a working copy is named by its own size in the readout', async () => {
    const { page, problems } = await openStudioAt(context, server.base);
    // 1280 x 720 is past 4x the grid's samples at 120 columns: its frames are shrunk first.
    await playVideo(page, 'hd.webm', await recordInPage(page, 'video', 1280, 720));
    await page.waitForFunction(() => window.__v2aStats.frames > 12, undefined, { timeout: 20_000 });
    assert.match((await page.textContent('#readout'))!, / · 1280×720 px/);
    assert.deepEqual(problems, []);
    await page.close();
  });

  test('a successful snapshot clears the error of a file that failed to open meanwhile', async () => {
    const { page, problems } = await openStudioAt(context, server.base);
    await startWebcam(page);
    await page.setInputFiles('#video-file', { name: 'audio.webm', mimeType: 'video/webm', buffer: await recordInPage(page, 'audio') });
    await page.waitForFunction(() => window.__v2aStats.error !== null, undefined, { timeout: 20_000 });
    assert.equal(await page.isVisible('#art-error'), true);
    assert.equal(await page.evaluate(() => window.__v2aStats.source), 'webcam', 'the webcam plays on');
    const n = await results(page);
    await page.click('#snapshot');
    await page.waitForFunction((f) => window.__v2aStats.results > f && window.__v2aStats.kind === 'still', n, { timeout: 20_000 });
    assert.equal(await page.isVisible('#art-error'), false);
    assert.equal(await page.evaluate(() => window.__v2aStats.error), null);
    assert.deepEqual(problems, []);
    await page.close();
  });
});

describe('recording in headless Chromium', { skip }, () => {
  test('a WebM clip is told with the frames it holds, and lasts as long as it was recorded', async () => {
    const { page, problems } = await openStudioAt(context, server.base);
    await playVideo(page, 'clip.webm', await recordInPage(page, 'video'));
    await page.click('#record');
    // Data from the encoder (on a busy machine it lags the art by seconds), then the source paused:
    // the meter runs on, and the clip holds its last frame to the end, though the canvas's stream
    // had no frames for the art standing still.
    await page.waitForFunction(() => /● \d+ s, \d+ KiB/.test(document.getElementById('rec-info')!.textContent ?? ''));
    await page.click('#pause');
    const seconds = async () => Number(/● (\d+) s/.exec((await page.textContent('#rec-info'))!)?.[1]);
    const shown = (await seconds()) + 2;
    await page.waitForFunction((n) => Number(/● (\d+) s/.exec(document.getElementById('rec-info')!.textContent ?? '')?.[1]) >= n, shown);
    const [download] = await Promise.all([page.waitForEvent('download'), page.click('#record')]);
    const path = await download.path();
    const told = Number(/Clip saved: (\d+) frames as WebM/.exec((await page.textContent('#status'))!)?.[1]);
    if (has('ffprobe')) {
      const probe = execFileSync('ffprobe', ['-v', 'error', '-count_frames', '-show_entries', 'stream=nb_read_frames:format=duration', '-of', 'json', path], { encoding: 'utf8' });
      const { streams, format } = JSON.parse(probe) as { streams: { nb_read_frames: string }[]; format: { duration?: string } };
      assert.equal(told, Number(streams[0]!.nb_read_frames));
      assert.ok(Number(format.duration) >= shown, `duration ${format.duration}, recorded ${shown} s`);
    } else {
      const file = readFileSync(path);
      assert.equal(told, finishWebm(new Uint8Array(file)).frames);
      const at = file.subarray(0, 200).indexOf(Buffer.from([0x44, 0x89, 0x88]));
      assert.ok(at > 0 && file.readDoubleBE(at + 3) >= shown * 1000, 'a Duration in the Info, of the time recorded');
    }
    assert.deepEqual(problems, []);
    await page.close();
  });
});
