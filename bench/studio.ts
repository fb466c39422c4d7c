/**
 * `npm run bench:studio`: the browser studio in headless Chromium (Debian's chromium, driven by
 * playwright-core; software rendering, --disable-gpu) on this machine.
 *
 * 1. Webcam fps at 120, 160 and 200 columns: Chromium's fake camera (640x480 at 60 fps, its most:
 *    asked for 90 or 120 it still gives 60), the studio's own pipeline (frame grab, transfer to the
 *    worker, FrameRenderer with the temporal filter, painting), measured over a window after a
 *    warm-up. "delivered" is frames rendered per second, from the last frame arrival before the
 *    window to the last in it (and over its wall time beside it); "core" is the render's ms per frame on both
 *    threads together (live frames with the filter run their front half, FrameFront, on the
 *    worker's front thread while the worker draws the frame before: "front" is that part);
 *    "capacity" is what the threads could do if frames came faster: 1000 / the busier thread's ms
 *    per frame (front, or the rest plus painting), 1000 / (core + paint) on one thread.
 * 2. Flicker (share of glyphs changed per frame) on a still scene: the fake camera's pattern moves,
 *    so the still scene is a canvas stream instead (canvas.captureStream, 30 fps): a fixed 640x480
 *    photo-like image plus fresh Gaussian noise (sigma 4 of 255, like a webcam's sensor noise) on
 *    every frame. Measured at 120, 160 and 200 columns with the temporal filter on (the studio's
 *    default, motionSensitivity 0.7): mean flicker, and how many times the tuning and glyph
 *    codebook were re-chosen after the first second (a false scene cut makes the art pop); at 120
 *    columns also with the filter off (the Steady switch) and with motionSensitivity 0.
 *
 * Targets (issues 5, 13, 16): >= 30 fps at 120 columns, >= 60 fps at 200; on a still scene with the filter on, flicker
 * <= 1 % of glyphs per frame and zero codebook re-choices after the first second at every width.
 * Writes bench/out/studio.json.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { cpus } from 'node:os';
import type { Page } from 'playwright-core';
import { buildApp } from '../src/server/app.js';
import { loadConfig } from '../src/server/config.js';
import { photo } from '../test/server-helpers.js';
import { CHROMIUM_ARGS, ensureStudioBuilt, findChromium } from '../test/studio-helpers.js';

// Callbacks of page.evaluate run in the page. This Node program has no DOM types (tsconfig.json),
// so the browser globals they use are declared here, loosely, for this module only.
/* eslint-disable @typescript-eslint/no-explicit-any */
declare const window: any, document: any, navigator: any, DataTransfer: any, ClipboardEvent: any, createImageBitmap: any, ImageData: any;
type HTMLElement = any;
type HTMLInputElement = any;

const WARMUP_MS = 2500;
const WINDOW_MS = 6000;

const found = findChromium();
if ('reason' in found) {
  console.error(`bench:studio needs chromium: ${found.reason}`);
  process.exit(1);
}

await ensureStudioBuilt();
const config = loadConfig({ LOG_LEVEL: 'silent', V2A_RATE_LIMIT: '0', PORT: '0', HOST: '127.0.0.1', V2A_WORKERS: '1' });
const app = await buildApp(config, { logger: false });
await app.listen({ port: 0, host: '127.0.0.1' });
const base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;

const { chromium } = await import('playwright-core');
const args = CHROMIUM_ARGS.map((a) => (a === '--use-fake-device-for-media-stream' ? '--use-fake-device-for-media-stream=fps=60' : a));
const browser = await chromium.launch({ executablePath: found.path, args });
const context = await browser.newContext({ viewport: { width: 1440, height: 900 } });
// tsx (esbuild keepNames) wraps named functions of page.evaluate callbacks in __name().
await context.addInitScript('globalThis.__name = (f) => f;');

interface Window {
  frames: number;
  seconds: number;
  /** Frames per second between frame arrivals (see measure()). */
  fps: number;
  /** Frames over the window's wall time. */
  wallFps: number;
  coreMs: number;
  /** The part of coreMs on the front thread (0: one thread). */
  frontMs: number;
  paintMs: number;
  capacityFps: number;
  meanFlicker: number | null;
  columns: number;
  rows: number;
  /** Codebook re-choices from 1 s after the first frame to the end of the window (null: filter off). */
  rechoices: number | null;
}

async function setColumns(page: Page, columns: number): Promise<void> {
  await page.fill('#p-columns-n', String(columns));
  await page.dispatchEvent('#p-columns-n', 'change');
}

/** Frames, time and timing sums over a window, and the mean flicker of its frames. */
async function measure(page: Page, ms: number, choicesAt1s: number | null = null): Promise<Window> {
  return page.evaluate(async ([windowMs, c1]) => {
    const s = window.__v2aStats;
    const f0 = s.frames, a0 = s.lastFrameAt, r0 = s.sumRenderMs, d0 = s.sumDrawMs, fr0 = s.sumFrontMs, t0 = performance.now();
    const flick: number[] = [];
    let lastFrames = f0;
    await new Promise<void>((resolve) => {
      const tick = () => {
        if (s.frames !== lastFrames && s.flicker !== null) flick.push(s.flicker);
        lastFrames = s.frames;
        if (performance.now() - t0 >= windowMs) resolve();
        else setTimeout(tick, 5);
      };
      tick();
    });
    const frames = s.frames - f0;
    const seconds = (performance.now() - t0) / 1000;
    // The rate between frames: the frames that arrived after the last arrival before the window,
    // up to the last in it, over the time between those two arrivals. Frames over the window's wall time would count the
    // polling's lateness at the end (up to a tick) as time without frames: at a camera's 60 fps,
    // 360 frames in a 6.003 s window read as 59.97 fps although none was missed.
    const span = (s.lastFrameAt - a0) / 1000;
    const coreMs = frames ? (s.sumRenderMs - r0) / frames : 0;
    const paintMs = frames ? (s.sumDrawMs - d0) / frames : 0;
    const frontMs = frames ? (s.sumFrontMs - fr0) / frames : 0;
    const busiest = Math.max(frontMs, coreMs - frontMs + paintMs);
    return {
      frames, seconds, fps: frames && a0 > 0 && span > 0 ? frames / span : frames / seconds, wallFps: frames / seconds, coreMs, frontMs, paintMs,
      capacityFps: busiest > 0 ? 1000 / busiest : 0,
      meanFlicker: flick.length ? flick.reduce((a, b) => a + b, 0) / flick.length : null,
      columns: s.columns, rows: s.rows,
      rechoices: c1 === null || s.codebookChoices === null ? null : s.codebookChoices - c1,
    };
  }, [ms, choicesAt1s] as const);
}

/** Waits for the first frames, then 1 s, and returns the codebook choices made so far. */
async function firstSecond(page: Page): Promise<number | null> {
  await page.waitForFunction(() => window.__v2aStats.frames > 0, undefined, { timeout: 30_000 });
  await page.waitForTimeout(1000);
  return page.evaluate(() => window.__v2aStats.codebookChoices);
}

async function webcam(columns: number): Promise<Window> {
  const page = await context.newPage();
  await page.goto(base + '/');
  await page.waitForFunction(() => document.querySelectorAll('[data-param]').length > 0);
  await setColumns(page, columns);
  await page.click('#webcam');
  const c1 = await firstSecond(page);
  await page.waitForTimeout(WARMUP_MS - 1000);
  const w = await measure(page, WINDOW_MS, c1);
  await page.close();
  return w;
}

/** A still scene with fresh sensor-like noise per frame, as a MediaStream the studio renders. */
async function stillScene(temporal: boolean, columns: number, png: Buffer, motionSensitivity?: number): Promise<Window> {
  const page = await context.newPage();
  await page.goto(base + '/');
  await page.waitForFunction(() => document.querySelectorAll('[data-param]').length > 0);
  await setColumns(page, columns);
  if (motionSensitivity !== undefined) {
    await page.fill('#p-motionSensitivity-n', String(motionSensitivity));
    await page.dispatchEvent('#p-motionSensitivity-n', 'change');
  }
  await page.evaluate(async (b64) => {
    const img = await createImageBitmap(new Blob([Uint8Array.from(atob(b64), (c) => c.charCodeAt(0))], { type: 'image/png' }));
    const canvas = document.createElement('canvas');
    canvas.width = img.width;
    canvas.height = img.height;
    const ctx = canvas.getContext('2d', { willReadFrequently: true })!;
    ctx.drawImage(img, 0, 0);
    const clean = ctx.getImageData(0, 0, img.width, img.height);
    const noisy = new ImageData(img.width, img.height);
    let seed = 1234567;
    const uniform = () => {
      seed ^= seed << 13; seed ^= seed >>> 17; seed ^= seed << 5;
      return (seed >>> 0) / 4294967296;
    };
    // Gaussian, sigma 4 (of 255): Box-Muller.
    const gauss = () => Math.sqrt(-2 * Math.log(uniform() + 1e-12)) * Math.cos(2 * Math.PI * uniform()) * 4;
    const draw = () => {
      const a = clean.data, o = noisy.data;
      for (let i = 0; i < a.length; i += 4) {
        const n = gauss();
        o[i] = a[i]! + n; o[i + 1] = a[i + 1]! + n; o[i + 2] = a[i + 2]! + n; o[i + 3] = 255;
      }
      ctx.putImageData(noisy, 0, 0);
    };
    draw();
    setInterval(draw, 1000 / 30);
    await window.__v2aStudio.useStream(canvas.captureStream(30), 'video');
  }, png.toString('base64'));
  if (!temporal) await page.click('#steady');
  const c1 = await firstSecond(page);
  await page.waitForTimeout(WARMUP_MS - 1000);
  const w = await measure(page, WINDOW_MS, temporal ? c1 : null);
  await page.close();
  return w;
}

const verdict = (ok: boolean) => (ok ? 'MET' : 'MISSED');
const f = (v: number, d = 1) => v.toFixed(d);

console.log(`bench:studio: headless Chromium ${browser.version()} (software rendering), ${cpus().length} cores (${cpus()[0]?.model.trim()}), Node ${process.version}`);
console.log(`window ${WINDOW_MS / 1000} s after ${WARMUP_MS / 1000} s warm-up\n`);

const cams: Record<string, Window> = {};
console.log('Webcam (Chromium fake camera, 640x480 asked at 60 fps), temporal filter on');
console.log('columns  rows  delivered fps  (over the window)  core ms  front ms  paint ms  capacity fps  flicker  re-choices');
for (const columns of [120, 160, 200]) {
  const w = await webcam(columns);
  cams[columns] = w;
  console.log(`${String(columns).padStart(7)}  ${String(w.rows).padStart(4)}  ${f(w.fps, 2).padStart(13)}  ${f(w.wallFps, 2).padStart(17)}  ${f(w.coreMs, 2).padStart(7)}  ${f(w.frontMs, 2).padStart(8)}  ${f(w.paintMs, 2).padStart(8)}  ${f(w.capacityFps).padStart(12)}  ${w.meanFlicker === null ? 'n/a' : `${f(w.meanFlicker * 100, 2)} %`.padStart(7)}  ${String(w.rechoices ?? 'n/a').padStart(10)}`);
}
console.log('(delivered: the window\'s frames over the time from the last arrival before it to the last in it; "over the window": over its wall time,');
console.log(' which counts the end\'s polling tick as time without a frame. The fake camera\'s picture moves: its flicker is real motion, shown for reference)');
const fpsMet = cams[120]!.fps >= 30;
console.log(`target >= 30 fps at 120 columns: ${verdict(fpsMet)} (${f(cams[120]!.fps)} fps delivered)`);
// Issue 16: 60 fps at 200 columns. The fake camera gives 60 at most, so "delivered" can only
// reach it, give or take the measurement's resolution: one frame in the window (its arrivals
// jitter by a few ms on a busy host; 59.98 to 60.03 were read at 120-200 columns with every
// frame rendered). So: within one frame of 60 fps over the window, and the capacity (what the two
// threads and the painting would allow with frames coming faster) above 60.
const oneFrame = 1 / (cams[200]!.seconds || 1);
const fps200Met = cams[200]!.fps + oneFrame >= 60 && cams[200]!.capacityFps >= 60;
console.log(`target >= 60 fps at 200 columns: ${verdict(fps200Met)} (${f(cams[200]!.fps, 2)} fps delivered from a 60 fps camera, within one frame of the window (${f(oneFrame, 2)} fps) counts; capacity ${f(cams[200]!.capacityFps)})\n`);

const png = await photo(640, 480, 'png');
console.log('Still scene + Gaussian noise (sigma 4/255) per frame, canvas stream at 30 fps, filter on');
console.log('columns  delivered fps  mean flicker  codebook re-choices after 1 s');
const still: Record<string, Window> = {};
for (const columns of [120, 160, 200]) {
  const w = await stillScene(true, columns, png);
  still[columns] = w;
  console.log(`${String(columns).padStart(7)}  ${f(w.fps).padStart(13)}  ${w.meanFlicker === null ? 'n/a' : `${f(w.meanFlicker * 100, 3)} %`.padStart(12)}  ${String(w.rechoices ?? 'n/a').padStart(30)}`);
}
const stillMet = Object.values(still).every((w) => w.meanFlicker !== null && w.meanFlicker <= 0.01 && w.rechoices === 0);
console.log(`target flicker <= 1 % and 0 re-choices at 120, 160 and 200 columns: ${verdict(stillMet)}\n`);

console.log('At 120 columns: the filter off (Steady switch) and on with motionSensitivity 0');
const on = still[120]!;
const off = await stillScene(false, 120, png);
const calm = await stillScene(true, 120, png, 0);
for (const [name, w] of [['on', on], ['off', off], ['on, motionSensitivity 0', calm]] as const) {
  console.log(`${name.padEnd(24)}  ${f(w.fps).padStart(13)}  ${w.meanFlicker === null ? 'n/a' : `${f(w.meanFlicker * 100, 3)} %`}`);
}
const flickerMet = stillMet;

mkdirSync(new URL('./out/', import.meta.url), { recursive: true });
writeFileSync(new URL('./out/studio.json', import.meta.url), JSON.stringify({
  chromium: browser.version(), cores: cpus().length, cpu: cpus()[0]?.model.trim(), node: process.version,
  webcam: cams, stillScene: { filterOn: still, filterOff120: off, filterOnMotionSensitivity0At120: calm },
  targets: {
    fps120: { target: 30, value: cams[120]!.fps, met: fpsMet },
    fps200: { target: 60, value: cams[200]!.fps, met: fps200Met },
    stillScene: { flicker: 0.01, rechoices: 0, met: flickerMet, values: Object.fromEntries(Object.entries(still).map(([c, w]) => [c, { flicker: w.meanFlicker, rechoices: w.rechoices }])) },
  },
}, null, 2) + '\n');

await browser.close();
await app.close();
