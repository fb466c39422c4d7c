/**
 * The studio's accessibility past what axe-core checks (studio-ux.test.ts runs axe), in real
 * headless Chromium against a real server: forced colours (Windows High Contrast), single-key
 * shortcuts that can be turned off and a Space that leaves scrolling alone, tooltips that stay
 * under the pointer, a status line that wraps, form-field borders at 3:1, what the live regions
 * say (and do not repeat), Escape on the error box, and names: distinct, short, and none for
 * decoration.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import sharp from 'sharp';
import { photo } from './server-helpers.js';
import { inStudio, openStill, openStudioAt, results, studioRig } from './studio-helpers.js';

/* eslint-disable @typescript-eslint/no-explicit-any */
declare const window: any, document: any, getComputedStyle: any, MutationObserver: any;

const rig = studioRig();

const { skip } = rig;

/** How many distinct colours a screenshot holds (1: nothing drawn on the ground). */
async function colours(png: Buffer): Promise<number> {
  const { data, info } = await sharp(png).removeAlpha().raw().toBuffer({ resolveWithObject: true });
  const seen = new Set<number>();
  for (let i = 0; i < data.length; i += info.channels) seen.add((data[i]! << 16) | (data[i + 1]! << 8) | data[i + 2]!);
  return seen.size;
}

/** Whether two screenshots of one element differ in more than a few pixels (not antialiasing alone). */
async function differ(a: Buffer, b: Buffer): Promise<boolean> {
  const [x, y] = await Promise.all([a, b].map((p) => sharp(p).removeAlpha().raw().toBuffer()));
  if (x!.length !== y!.length) return true;
  let n = 0;
  for (let i = 0; i < x!.length; i += 3) if (Math.max(Math.abs(x![i]! - y![i]!), Math.abs(x![i + 1]! - y![i + 1]!), Math.abs(x![i + 2]! - y![i + 2]!)) > 64) n++;
  return n > x!.length / 3 / 20;
}

/** The colour a button is filled with: a pixel inside its border, left of its words. */
async function fillOf(png: Buffer): Promise<number[]> {
  const { data, info } = await sharp(png).removeAlpha().raw().toBuffer({ resolveWithObject: true });
  const i = (Math.floor(info.height / 2) * info.width + 6) * 3;
  return [data[i]!, data[i + 1]!, data[i + 2]!];
}

/** A screenshot of `sel` with no pointer over it and no focus ring on it. */
async function still(page: Page, sel: string): Promise<Buffer> {
  await page.mouse.move(1, 1);
  await page.evaluate(() => document.activeElement?.blur());
  return page.locator(sel).screenshot();
}

/** WCAG contrast ratio of two computed `rgb(...)` colours. */
function contrast(a: string, b: string): number {
  const lum = (c: string) => {
    const [r, g, bl] = (c.match(/[\d.]+/g) ?? []).slice(0, 3).map((v) => Number(v) / 255).map((v) => (v <= 0.04045 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4));
    return 0.2126 * r! + 0.7152 * g! + 0.0722 * bl!;
  };
  const [hi, lo] = [lum(a), lum(b)].sort((x, y) => y - x);
  return (hi! + 0.05) / (lo! + 0.05);
}

const webcamFrames = (page: Page, n = 5) => page.waitForFunction((f) => window.__v2aStats.source === 'webcam' && window.__v2aStats.frames >= f, n, { timeout: 20_000 });

describe('studio accessibility in headless Chromium', { skip }, () => {
  test('forced colours: switches show on and off, pressed buttons differ from the others', async () => {
    await inStudio(rig, { viewport: { width: 1280, height: 800 }, forcedColors: 'active', reducedMotion: 'reduce' }, async ({ page, problems }) => {
      assert.equal(await page.evaluate(() => window.matchMedia('(forced-colors: active)').matches), true);
      const faults: string[] = [];
      for (const sel of ['#p-color', '#p-invert', '#shortcuts']) {
        const before = await still(page, sel);
        await page.click(sel);
        const after = await still(page, sel);
        if (await colours(before) < 2 || await colours(after) < 2) faults.push(`${sel} is not drawn`);
        else if (!await differ(before, after)) faults.push(`${sel}: on and off look alike`);
        await page.click(sel);
      }
      // The same button pressed and not: filled differently (not a border's shade alone).
      for (const [sel, toggle] of [['#ink-mono', '#ink-color'], ['#side-by-side', '#side-by-side'], ['[data-preset="portrait"]', '[data-preset="portrait"]'], ['[data-style="classic"]', '[data-style="classic"]']] as const) {
        const was = await page.getAttribute(sel, 'aria-pressed');
        const before = await still(page, sel);
        await page.click(toggle);
        await page.waitForFunction(([s, w]) => document.querySelector(s).getAttribute('aria-pressed') !== w, [sel, was] as const);
        const [a, b] = [await fillOf(before), await fillOf(await still(page, sel))];
        if (Math.max(...a.map((v, i) => Math.abs(v - b[i]!))) < 64) faults.push(`${sel}: pressed and not filled alike (${a} / ${b})`);
      }
      assert.deepEqual(faults, []);
      assert.deepEqual(problems, []);
    });
  });

  test('single-key shortcuts turn off (and stay off); Space scrolls the zoomed art; pause, resume and stop are said', async () => {
    await inStudio(rig, { viewport: { width: 1280, height: 800 } }, async (opened) => {
      const { context } = opened;
      let { page, problems } = opened;
      assert.equal(await page.locator('#shortcuts').count(), 1, 'a Keyboard shortcuts switch');
      assert.equal(await page.getAttribute('#shortcuts', 'role'), 'switch');
      assert.equal(await page.isChecked('#shortcuts'), true, 'on by default');
      assert.equal(await page.getAttribute('#webcam', 'aria-keyshortcuts'), 'w');
      await page.click('#shortcuts');
      assert.equal(await page.getAttribute('#webcam', 'aria-keyshortcuts'), null, 'no key announced that does nothing');
      await page.evaluate(() => document.activeElement.blur());
      await page.keyboard.press('w');
      await page.waitForTimeout(500);
      assert.equal(await page.evaluate(() => window.__v2aStats.source), 'none', 'w does nothing');
      // The theme picked with its button, the other one than the system's.
      const theme = () => page.evaluate(() => document.documentElement.dataset.theme);
      const first = await theme();
      await page.click('#theme');
      assert.notEqual(await theme(), first);
      // Remembered.
      await page.close();
      ({ page, problems } = await openStudioAt(context, rig.server.base));
      assert.equal(await page.isChecked('#shortcuts'), false, 'still off after a reload');
      assert.notEqual(await theme(), first, 'the theme picked is kept after a reload');
      assert.equal(await page.getAttribute('#theme', 'aria-pressed'), String((await theme()) === 'light'));
      await page.click('#shortcuts');
      await page.evaluate(() => document.activeElement.blur());
      await page.keyboard.press('w');
      await webcamFrames(page);

      // Paused and resumed by key: said in the status line.
      await page.keyboard.press('p');
      assert.equal(await page.textContent('#pause'), 'Resume');
      assert.equal(await page.textContent('#status'), 'Paused.');
      await page.keyboard.press(' ');
      assert.equal(await page.textContent('#pause'), 'Pause');
      assert.equal(await page.textContent('#status'), 'Resumed.');

      // The zoomed art takes the focus (a named region) and Space scrolls it instead of pausing.
      assert.equal(await page.getAttribute('#viewport', 'tabindex'), '0');
      assert.ok((await page.getAttribute('#viewport', 'aria-label'))!.length > 0);
      await page.selectOption('#zoom', '3');
      await page.waitForFunction(() => { const v = document.getElementById('viewport'); return v.scrollHeight > v.clientHeight + 50; });
      await page.focus('#viewport');
      assert.equal(await page.evaluate(() => document.activeElement.id), 'viewport');
      await page.keyboard.press(' ');
      await page.waitForFunction(() => document.getElementById('viewport').scrollTop > 0, undefined, { timeout: 5000 });
      assert.equal(await page.textContent('#pause'), 'Pause', 'Space scrolled, did not pause');
      await page.selectOption('#zoom', 'fit');

      // Stopping the webcam is said, and its snapshot's news follows instead of replacing it.
      const n = await results(page);
      await page.click('#webcam');
      await page.waitForFunction((f) => window.__v2aStats.results > f && window.__v2aStats.kind === 'still' && window.__v2aStudio.settled(), n, { timeout: 20_000 });
      await page.waitForTimeout(200);
      assert.match((await page.textContent('#status'))!, /^Webcam stopped\. webcam: \d+×\d+ characters/);
      assert.deepEqual(problems, []);
    });
  });

  test('a setting\'s tooltip stays while the pointer moves onto it; Escape still closes it', async () => {
    await inStudio(rig, { viewport: { width: 1440, height: 900 }, reducedMotion: 'reduce' }, async ({ page, problems }) => {
      await page.hover('[data-param=columns] .name');
      assert.equal(await page.isVisible('#p-columns-desc'), true);
      const row = (await page.locator('[data-param=columns]').boundingBox())!;
      const tip = (await page.locator('#p-columns-desc').boundingBox())!;
      const y = tip.y + tip.height - 4;
      assert.ok(y > row.y + row.height, 'a point of the tooltip outside its row');
      await page.mouse.move(tip.x + tip.width / 2, y, { steps: 5 });
      await page.waitForTimeout(200);
      assert.equal(await page.isVisible('#p-columns-desc'), true, 'hoverable');
      await page.keyboard.press('Escape');
      assert.equal(await page.isVisible('#p-columns-desc'), false, 'dismissable');
      assert.deepEqual(problems, []);
    });
  });

  test('on a page taller than the window (a narrow screen), Space scrolls the page; p still pauses', async () => {
    await inStudio(rig, { viewport: { width: 390, height: 700 } }, async ({ page, problems }) => {
      assert.ok(await page.evaluate(() => document.scrollingElement.scrollHeight > document.scrollingElement.clientHeight + 100), 'the page scrolls');
      await page.click('#webcam');
      await webcamFrames(page);
      await page.evaluate(() => { document.activeElement.blur(); window.scrollTo(0, 0); });
      await page.keyboard.press(' ');
      await page.waitForFunction(() => window.scrollY > 0, undefined, { timeout: 5000 });
      assert.equal(await page.textContent('#pause'), 'Pause', 'Space scrolled the page, did not pause');
      await page.keyboard.press('p');
      assert.equal(await page.textContent('#pause'), 'Resume');
      await page.click('#webcam');
      assert.deepEqual(problems, []);
    });
  });

  test('at 320 CSS px the status line wraps: all of it shown, no sideways scrolling', async () => {
    await inStudio(rig, { viewport: { width: 320, height: 640 } }, async ({ page, problems }) => {
      await openStill(page, await photo(160, 120, 'png'), 'a-rather-long-file-name-from-a-camera-roll-2024-06-01.png');
      const box = await page.$eval('#status', (e: any) => ({ text: e.textContent, scroll: e.scrollWidth, client: e.clientWidth, height: e.clientHeight }));
      assert.match(box.text, /a-rather-long-file-name/);
      assert.ok(box.scroll <= box.client, `the status is cut off: ${JSON.stringify(box)}`);
      const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
      assert.ok(overflow <= 0, `horizontal overflow ${overflow}px`);
      assert.deepEqual(problems, []);
    });
  });

  test('text fields and selects: borders at 3:1 against the field and what is around it, in both themes', async () => {
    await inStudio(rig, { viewport: { width: 1440, height: 900 }, reducedMotion: 'reduce' }, async ({ page, problems }) => {
      const faint: string[] = [];
      for (const theme of ['dark', 'light']) {
        await page.evaluate((t: string) => { document.documentElement.dataset.theme = t; }, theme);
        const fields = await page.$$eval('input:not([type=range]):not([type=checkbox]):not([type=file]):not([type=color]), select', (els: any[]) => els
          .filter((e) => e.getClientRects().length > 0 && !e.closest('[hidden]'))
          .map((e) => {
            let p = e.parentElement;
            while (p && /rgba\(0, 0, 0, 0\)|transparent/.test(getComputedStyle(p).backgroundColor)) p = p.parentElement;
            const s = getComputedStyle(e);
            return { id: e.id, border: s.borderTopColor, width: s.borderTopWidth, inside: s.backgroundColor, around: p ? getComputedStyle(p).backgroundColor : 'rgb(255, 255, 255)' };
          }));
        assert.ok(fields.length >= 10, `${fields.length} fields`);
        for (const f of fields) {
          const ratios = [contrast(f.border, f.inside), contrast(f.border, f.around)];
          if (Math.min(...ratios) < 3 || f.width === '0px') faint.push(`${theme} #${f.id}: ${f.border} on ${f.inside} / ${f.around}: ${ratios.map((r) => r.toFixed(2)).join(', ')}`);
        }
      }
      assert.deepEqual(faint, []);
      assert.deepEqual(problems, []);
    });
  });

  test('the status line: a slider\'s re-renders are told once, after it stops, and not as a decode', async () => {
    await inStudio(rig, { viewport: { width: 1440, height: 900 } }, async ({ page, problems }) => {
      await openStill(page, await photo(320, 240, 'png'));
      assert.match((await page.textContent('#status'))!, /^photo\.png: \d+×\d+ characters, rendered in \d+ ms after decoding\.$/, 'a picture opened is told');
      await page.evaluate(() => {
        window.__said = [];
        new MutationObserver(() => window.__said.push(document.getElementById('status').textContent)).observe(document.getElementById('status'), { childList: true, characterData: true, subtree: true });
      });
      const n = await results(page);
      await page.focus('#p-columns');
      for (let i = 0; i < 6; i++) {
        await page.keyboard.press('ArrowRight');
        await page.waitForTimeout(120);
      }
      await page.waitForFunction((f) => window.__v2aStats.results > f && window.__v2aStudio.settled(), n, { timeout: 20_000 });
      const rendered = await results(page) - n;
      await page.waitForFunction(() => window.__said.length > 0, undefined, { timeout: 5000 });
      await page.waitForTimeout(1500);
      const said: string[] = await page.evaluate(() => window.__said);
      const columns = await page.evaluate(() => window.__v2aStats.columns);
      assert.ok(rendered >= 2, `${rendered} renders`);
      // Once (twice at most, on a machine so busy that a render took longer than the pause).
      assert.ok(said.length < rendered && said.every((t) => /^Art updated: \d+×\d+ characters\.$/.test(t)), `for ${rendered} renders: ${JSON.stringify(said)}`);
      assert.equal(said.at(-1), `Art updated: ${columns}×${await page.evaluate(() => window.__v2aStats.rows)} characters.`);

      // A picture the server renders, rendered again there for a new setting: the same.
      await openStill(page, await photo(160, 120, 'tiff'), 'scan.tiff');
      assert.match((await page.textContent('#status'))!, /^scan\.tiff: \d+×\d+ characters, rendered by the server\.$/);
      await page.evaluate(() => { window.__said.length = 0; });
      const k = await results(page);
      await page.fill('#p-columns-n', '80');
      await page.press('#p-columns-n', 'Enter');
      await page.waitForFunction((f) => window.__v2aStats.results > f && window.__v2aStats.columns === 80, k, { timeout: 20_000 });
      await page.waitForFunction(() => window.__said.length > 0, undefined, { timeout: 5000 });
      await page.waitForTimeout(1500);
      assert.deepEqual(await page.evaluate(() => window.__said), [`Art updated: 80×${await page.evaluate(() => window.__v2aStats.rows)} characters.`]);
      assert.deepEqual(problems, []);
    });
  });

  test('Escape closes the error box and gives the focus back; the trace id\'s error is its description', async () => {
    await inStudio(rig, { viewport: { width: 1440, height: 900 } }, async ({ page, problems }) => {
      await openStill(page, await photo(160, 120, 'png'), 'photo.png');
      // The report's measurements are named in words (Dynamic range), as its adjustments are, not by the API's names.
      const named = await page.$$eval('.metric-name, .source dt', (els: any[]) => els.map((e) => e.textContent as string));
      assert.ok(named.includes('Dynamic range') && named.includes('Fidelity'), named.join(', '));
      assert.deepEqual(named.filter((t) => /[a-z][A-Z]/.test(t)), [], 'no camelCase API names');
      // Not a setting's name either: gamma's control is "Midtones".
      assert.ok(!named.includes('Midtones') && named.includes('Midtone detail'), named.join(', '));
      await page.focus('#zoom');
      await page.setInputFiles('#image-file', { name: 'notes.txt', mimeType: 'text/plain', buffer: Buffer.from('not an image\n') });
      await page.waitForSelector('#art-error', { state: 'visible' });
      await page.focus('#art-error-close');
      await page.keyboard.press('Escape');
      assert.equal(await page.isVisible('#art-error'), false, 'Escape closed it');
      assert.equal(await page.evaluate(() => document.activeElement?.id), 'zoom', 'the focus went back');
      // The status line, emptied while the box told the error, tells again what is on screen.
      assert.match((await page.textContent('#status'))!, /^photo\.png: \d+×\d+ characters\.$/);

      await page.waitForSelector('#handoff-start:not([disabled])');
      await page.fill('#trace-id', 'not-hex');
      await page.click('#handoff-start');
      assert.equal(await page.getAttribute('#trace-id', 'aria-invalid'), 'true');
      const by = (await page.getAttribute('#trace-id', 'aria-describedby')) ?? '';
      const told = await page.evaluate((ids: string) => ids.split(/\s+/).filter(Boolean).map((i) => document.getElementById(i)?.textContent ?? '').join(' '), by);
      assert.match(told, /32 hex/, `described by "${by}"`);
      assert.deepEqual(problems, []);
    });
  });

  test('names: decoration is not read, the codebook is named in a few words, no two controls share a name', async () => {
    await inStudio(rig, { viewport: { width: 1440, height: 900 } }, async ({ page, problems, context }) => {
      const cdp = await context.newCDPSession(page);
      const tree = async () => (await cdp.send('Accessibility.getFullAXTree')).nodes as any[];
      const decoration = (await tree()).filter((x) => /@%#/.test(String(x.name?.value ?? ''))).map((x) => `${x.role?.value}: ${x.name?.value}`);
      assert.deepEqual(decoration, [], 'the empty stage\'s character ramp is decoration');

      await openStill(page, await photo(320, 240, 'png'));
      await page.selectOption('#p-charset', 'detailed');
      await page.waitForFunction(() => window.__v2aStudio.settled() && document.querySelectorAll('#codebook .glyph').length > 40, undefined, { timeout: 20_000 });
      const label = (await page.getAttribute('#codebook .glyphs', 'aria-label'))!;
      assert.ok(label.length <= 40 && !/[@%#*+=]/.test(label), `the codebook's name: "${label}"`);

      // Controls and groups: each name once (a speech user says it; a screen reader lists it), in
      // any case (a heading's text-transform reaches the name of the group it labels). Regions are
      // named by their headings, as their main button may be ("Send to A2V").
      const roles = new Set(['button', 'switch', 'checkbox', 'combobox', 'slider', 'spinbutton', 'textbox', 'ColorWell', 'group']);
      const names = new Map<string, string[]>();
      const nodes = await tree();
      for (const x of nodes) {
        const role = String(x.role?.value ?? ''), name = String(x.name?.value ?? '').toLowerCase();
        if (!roles.has(role) || !name || x.ignored) continue;
        names.set(name, [...(names.get(name) ?? []), role]);
      }
      const twice = [...names].filter(([, r]) => r.length > 1).map(([n, r]) => `"${n}": ${r.join(', ')}`);
      assert.deepEqual(twice, []);
      // Whatever takes the focus has a name (the curl command's scrolling box had none).
      const focusable = (x: any) => (x.properties ?? []).some((p: any) => p.name === 'focusable' && p.value?.value === true);
      const nameless: string[] = [];
      for (const x of nodes) {
        if (x.ignored || !focusable(x) || String(x.name?.value ?? '').trim()) continue;
        const { node } = await cdp.send('DOM.describeNode', { backendNodeId: x.backendDOMNodeId });
        nameless.push(`${x.role?.value}: <${node.localName} ${(node.attributes ?? []).join(' ')}>`);
      }
      assert.deepEqual(nameless, []);
      assert.deepEqual(problems, []);
    });
  });
});
