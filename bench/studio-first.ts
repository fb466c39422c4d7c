// The studio's first still (headless Chromium, RUNS fresh pages, IDLE ms after load before the
// image): the render's own ms (__v2aStats.renderMs), the wall time from choosing the 0.3 MP JPEG
// to its result, and a re-render's ms. npx tsx bench/studio-first.ts (after npm run build:studio
// or any studio test, which builds it).
import { readFileSync } from 'node:fs';
import { ensureStudioBuilt, findChromium, launchChromium } from '../test/studio-helpers.js';
import { startTestServer } from '../test/server-helpers.js';
// eslint-disable-next-line @typescript-eslint/no-explicit-any
declare const window: any, document: any;
await ensureStudioBuilt();
const server = await startTestServer();
const chromium = findChromium() as { path: string };
const browser = await launchChromium(chromium.path);
const jpg = readFileSync('bench/.cache/small-512x600-astronaut.jpg');
for (let run = 0; run < Number(process.env.RUNS ?? 3); run++) {
  const page = await (await browser.newContext({ viewport: { width: 1440, height: 900 } })).newPage();
  await page.goto(server.base + '/');
  await page.waitForFunction(() => document.querySelectorAll('[data-param]').length > 0);
  await page.waitForTimeout(Number(process.env.IDLE ?? 1500));
  const t0 = Date.now();
  await page.setInputFiles('#image-file', { name: 'a.jpg', mimeType: 'image/jpeg', buffer: jpg });
  await page.waitForFunction(() => window.__v2aStats.results >= 1, undefined, { timeout: 30000 });
  const first = await page.evaluate(() => window.__v2aStats.renderMs);
  const wall = Date.now() - t0;
  await page.fill('#p-contrast-n', '1.6'); await page.dispatchEvent('#p-contrast-n', 'change');
  await page.waitForFunction(() => window.__v2aStats.results >= 2, undefined, { timeout: 30000 });
  const second = await page.evaluate(() => window.__v2aStats.renderMs);
  console.log(JSON.stringify({ first: Math.round(first), wallToFirst: wall, second: Math.round(second) }));
  await page.context().close();
}
await browser.close(); await server.close();
