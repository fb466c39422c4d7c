/**
 * Shared by the studio's browser tests and bench/studio.ts: a fresh build of the studio when its
 * sources changed, Debian's chromium driven by playwright-core, and small loopback servers for
 * the a2v receiver pages on other origins.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser, BrowserContext, BrowserContextOptions, Page } from 'playwright-core';
import { after, before } from 'node:test';
import { buildOnce } from './helpers/build-lock.js';
import { startTestServer, type TestServer } from './server-helpers.js';

// Callbacks of page.evaluate run in the page; this Node program has no DOM types.
/* eslint-disable @typescript-eslint/no-explicit-any */
declare const window: any, document: any;

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const STUDIO_INDEX = join(ROOT, 'dist/studio/index.html');

function newest(dir: string): number {
  let t = 0;
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    const s = statSync(p);
    t = Math.max(t, s.isDirectory() ? newest(p) : s.mtimeMs);
  }
  return t;
}

function studioFresh(): boolean {
  const sources = Math.max(newest(join(ROOT, 'src/studio')), newest(join(ROOT, 'src/core')), newest(join(ROOT, 'src/contract')), statSync(join(ROOT, 'package.json')).mtimeMs);
  return existsSync(STUDIO_INDEX) && statSync(STUDIO_INDEX).mtimeMs >= sources;
}

/** Builds dist/studio with Vite when it is missing or older than its sources. */
export async function ensureStudioBuilt(): Promise<void> {
  await buildOnce(studioFresh, async () => {
    const { build } = await import('vite');
    await build({ configFile: join(ROOT, 'src/studio/vite.config.ts'), logLevel: 'warn' });
  });
}

export const CHROMIUM_ARGS = [
  '--headless=new', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync',
  '--use-fake-device-for-media-stream', '--use-fake-ui-for-media-stream',
];

/**
 * Path of Debian's chromium, installed with apt when missing and this process may (root with
 * apt-get). Returns a reason instead when there is none: the browser tests are then skipped.
 */
export function findChromium(): { path: string } | { reason: string } {
  const candidates = [process.env.CHROMIUM_PATH, '/usr/bin/chromium', '/usr/bin/chromium-browser'].filter((p): p is string => !!p);
  const found = () => candidates.find((p) => existsSync(p));
  let path = found();
  if (path) return { path };
  const apt = spawnSync('sh', ['-c', 'command -v apt-get'], { encoding: 'utf8' }).stdout.trim();
  if (apt && process.getuid?.() === 0) {
    try {
      execFileSync('sh', ['-c', 'apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium'], { stdio: 'ignore', timeout: 600_000 });
    } catch { /* reported below */ }
    path = found();
    if (path) return { path };
    return { reason: 'chromium is not installed and `apt-get install chromium` failed' };
  }
  return { reason: 'chromium is not installed (apt-get install chromium; needs root)' };
}

export async function launchChromium(path: string, extraArgs: readonly string[] = []): Promise<Browser> {
  const { chromium } = await import('playwright-core');
  return chromium.launch({ executablePath: path, args: [...CHROMIUM_ARGS, ...extraArgs] });
}

export interface PageServer {
  readonly server: Server;
  readonly port: number;
  close(): Promise<void>;
}

/** A plain HTTP server on `host`, port 0, answering with `handler`. */
export async function pageServer(host: string, handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<PageServer> {
  const server = createServer(handler);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, host, () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  return {
    server, port,
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}

/**
 * A test receiver page: records every message it gets (origin and data) in `window.__got`,
 * answers `hello` from the studio (the `source` origin, its opener) with `ready`, as a real
 * receiver would. `spoof`: a hostile page instead, which also tries to answer `ready` to its
 * opener from its own origin.
 */
export function receiverPage(spoof = false): string {
  return `<!doctype html><meta charset="utf-8"><title>${spoof ? 'third origin' : 'a2v test receiver'}</title>
<style>body{background:#111;color:#ddd;font:12px monospace;margin:8px}pre{font-size:6px;line-height:6px}</style>
<h1 style="font-size:14px">${spoof ? 'third origin (must receive nothing)' : 'a2v test receiver'}</h1><p id="info"></p><pre id="art"></pre>
<script>
const q = new URLSearchParams(location.search);
window.__params = Object.fromEntries(q);
window.__got = [];
const source = q.get('source');
${spoof ? `
setInterval(() => {
  try { window.opener && window.opener.postMessage({ type: 'ready', protocol: q.get('protocol'), handoff: q.get('handoff'), traceId: q.get('traceId') }, '*'); } catch (e) {}
}, 100);
addEventListener('message', (e) => { window.__got.push({ origin: e.origin, data: e.data }); });
` : `
addEventListener('message', (e) => {
  window.__got.push({ origin: e.origin, data: e.data, fromOpener: e.source === window.opener });
  if (e.origin !== source || e.source !== window.opener) return;
  const m = e.data;
  if (!m || m.protocol !== q.get('protocol') || m.handoff !== q.get('handoff')) return;
  if (m.type === 'hello' && !window.__ready) {
    window.__ready = true;
    window.opener.postMessage({ type: 'ready', protocol: m.protocol, handoff: m.handoff, traceId: m.traceId, maxFps: 60 }, source);
  }
  if (m.type === 'frame') {
    document.getElementById('art').textContent = m.text;
    document.getElementById('info').textContent = 'frame ' + m.seq + ' · ' + m.columns + 'x' + m.rows + ' · trace ' + q.get('traceId');
  }
  if (m.type === 'end') document.getElementById('info').textContent += ' · end: ' + m.reason;
});
`}
</script>`;
}

/**
 * Chromium's own noise, not the studio's: its stream transfer (a MediaStreamTrackProcessor's
 * readable handed to the worker) now and then loses a frame in the page's realm, where the studio
 * holds none, and warns that it was garbage collected unclosed (src/studio/worker.ts, drain).
 * Seen in one full run of the suite (on Node 24) in many.
 */
export function chromiumNoise(text: string): boolean {
  return /^A VideoFrame was garbage collected without being closed\./.test(text);
}

/**
 * Pages of one context share the studio's remembered settings (src/studio/settings-store.ts): a
 * test starts from none, as a first visit does, whatever an earlier page of its context set.
 */
export async function forgetSettings(page: Page): Promise<void> {
  await page.addInitScript(() => window.localStorage.removeItem('v2a-studio-settings'));
}

/**
 * The studio at `base` in a new page of `context`, once its controls are built (and, unless
 * `keepSettings`, with no settings remembered from an earlier page: forgetSettings); `problems`
 * collects page errors and console errors. Refused renders are 400s, which the browser itself
 * logs: expected, so not collected.
 */
export async function openStudioAt(context: BrowserContext, base: string, opts: { keepSettings?: boolean } = {}): Promise<{ page: Page; problems: string[] }> {
  const page = await context.newPage();
  if (!opts.keepSettings) await forgetSettings(page);
  const problems: string[] = [];
  page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
  page.on('console', (m) => { if (m.type() === 'error' && !/status of 400/.test(m.text()) && !chromiumNoise(m.text())) problems.push(`console: ${m.text()}`); });
  await page.goto(base + '/');
  await page.waitForFunction(() => document.querySelectorAll('[data-param]').length > 0);
  return { page, problems };
}

/**
 * A short WebM recorded in the page with MediaRecorder: 'video', 1.5 s of an animated canvas (a
 * hue sweep and a moving block), `width` x `height`; 'audio', 0.6 s of an oscillator, no picture
 * at all. One page function (no named helpers: tsx wraps those in a __name the page does not have).
 * Recorded once per kind and size in a test file (it takes as long as the clip lasts), then the
 * same bytes are handed out.
 */
export function recordInPage(page: Page, kind: 'video' | 'audio', width = 320, height = 240): Promise<Buffer> {
  const key = `${kind} ${width}x${height}`;
  let clip = recorded.get(key);
  if (!clip) {
    clip = record(page, kind, width, height);
    recorded.set(key, clip);
    clip.catch(() => recorded.delete(key));
  }
  return clip;
}

const recorded = new Map<string, Promise<Buffer>>();

async function record(page: Page, kind: 'video' | 'audio', width: number, height: number): Promise<Buffer> {
  return Buffer.from(await page.evaluate(async ([what, w, h]) => {
    let stream: any;
    let g: any = null;
    if (what === 'video') {
      const c = document.createElement('canvas');
      c.width = w;
      c.height = h;
      g = c.getContext('2d');
      stream = c.captureStream(30);
    } else {
      const ctx = new window.AudioContext();
      await ctx.resume();
      const osc = ctx.createOscillator();
      const dest = ctx.createMediaStreamDestination();
      osc.connect(dest);
      osc.start();
      stream = dest.stream;
    }
    const rec = new window.MediaRecorder(stream, { mimeType: `${what}/webm` });
    const chunks: any[] = [];
    rec.ondataavailable = (e: any) => chunks.push(e.data);
    const done = new Promise((resolve) => (rec.onstop = resolve));
    rec.start();
    const ms = what === 'video' ? 1500 : 600;
    const t0 = window.performance.now();
    while (window.performance.now() - t0 < ms) {
      if (g) {
        const t = (window.performance.now() - t0) / ms;
        g.fillStyle = `hsl(${Math.round(t * 360)} 70% 50%)`;
        g.fillRect(0, 0, w, h);
        g.fillStyle = '#fff';
        g.fillRect(Math.round(t * (w - 60)), h / 3, 60, h / 3);
      }
      await new Promise((r) => window.setTimeout(r, 30));
    }
    rec.stop();
    await done;
    const bytes = new Uint8Array(await new window.Blob(chunks).arrayBuffer());
    let bin = '';
    for (const b of bytes) bin += String.fromCharCode(b);
    return window.btoa(bin);
  }, [kind, width, height] as const), 'base64');
}

/** Screenshots for a reviewer go to test/out/ (ignored by git). */
const OUT = new URL('./out/', import.meta.url);
export function shotPath(name: string): string {
  mkdirSync(OUT, { recursive: true });
  return new URL(name, OUT).pathname;
}

/** How many results the studio has shown. */
export const results = (page: Page): Promise<number> => page.evaluate(() => window.__v2aStats.results as number);

export async function waitResults(page: Page, from: number): Promise<void> {
  await page.waitForFunction((f) => window.__v2aStats.results > f, from, { timeout: 20_000 });
}

/** Opens `image` through the file picker as `name` and waits for its render. */
export async function openStill(page: Page, image: Buffer, name = 'photo.png'): Promise<void> {
  const n = await results(page);
  await page.setInputFiles('#image-file', { name, mimeType: 'image/png', buffer: image });
  await waitResults(page, n);
}

/**
 * The art as shown, once two screenshots in a row agree (and differ from `not`, when given), up to
 * 5 s. The worker paints on its OffscreenCanvas and commits the frame on its own, so a result can
 * reach the page a frame before its picture does (it did once on a loaded 2-core host): a picture
 * taken right after a result may be the one before.
 */
export async function settledArt(page: Page, not?: Buffer): Promise<Buffer> {
  const grab = () => page.locator('#art').screenshot();
  let last = await grab();
  for (const end = Date.now() + 5000; Date.now() < end;) {
    await page.waitForTimeout(50);
    const now = await grab();
    if (now.equals(last) && !(not && now.equals(not))) return now;
    last = now;
  }
  return last;
}

/**
 * Whether the art looks as `expected` within 4 s: closing the error box lays the panel out again,
 * and on a busy machine the canvas may be shot before its repaint (see settledArt).
 */
export async function artSettlesTo(page: Page, expected: Buffer): Promise<boolean> {
  for (let i = 0; i < 40; i++) {
    if ((await page.locator('#art').screenshot()).equals(expected)) return true;
    await page.waitForTimeout(100);
  }
  return false;
}

/** The text download's file name and body. */
export async function downloadText(page: Page): Promise<{ name: string; body: string }> {
  const [d] = await Promise.all([page.waitForEvent('download'), page.click('#downloads [data-format="text"]')]);
  return { name: d.suggestedFilename(), body: readFileSync(await d.path(), 'utf8') };
}

/** POST /api/v1/render with a JSON body. */
export function apiRender(base: string, body: Record<string, unknown>): Promise<Response> {
  return fetch(`${base}/api/v1/render`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
}

/** `use` with a new context of the rig's browser (`options`), closed afterwards whatever happens. */
export async function inContext<T>(rig: StudioRig, options: BrowserContextOptions, use: (context: BrowserContext) => Promise<T>): Promise<T> {
  const context = await rig.browser.newContext(options);
  try {
    return await use(context);
  } finally {
    await context.close();
  }
}

/** The rig's studio in a page of a new context (openStudioAt, with `open`), for `use`; the context is closed afterwards. */
export function inStudio(rig: StudioRig, options: BrowserContextOptions, use: (opened: { page: Page; problems: string[]; context: BrowserContext }) => Promise<void>, open: { keepSettings?: boolean } = {}): Promise<void> {
  return inContext(rig, options, async (context) => use({ ...(await openStudioAt(context, rig.server.base, open)), context }));
}

/** What studio-ux and studio-sources share: a server whose handoff receiver is a page of ours, and Chromium. */
export interface StudioRig {
  /** Why the browser tests are skipped, or false. */
  readonly skip: string | false;
  server: TestServer;
  receiver: PageServer;
  browser: Browser;
}

/** A StudioRig, filled in by a before() hook registered here and closed by an after() hook. */
export function studioRig(): StudioRig {
  const chromium = findChromium();
  const rig = { skip: 'reason' in chromium ? `browser tests skipped: ${chromium.reason}` : false } as StudioRig;
  if (rig.skip) console.log(`# ${rig.skip}`);
  before(async () => {
    if (rig.skip) return;
    await ensureStudioBuilt();
    rig.receiver = await pageServer('127.0.0.1', (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(receiverPage(false));
    });
    rig.server = await startTestServer({ V2A_RECEIVER_URL: `http://localhost:${rig.receiver.port}/receiver`, V2A_IMAGE_FETCH_ALLOWLIST: 'images.example.com' });
    rig.browser = await launchChromium((chromium as { path: string }).path);
  });
  after(async () => {
    await rig.browser?.close();
    await rig.server?.close();
    await rig.receiver?.close();
  });
  return rig;
}
