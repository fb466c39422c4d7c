// Byte-identity check of two builds: node bench/render-diff.mjs DIST_A DIST_B. Renders the
// 640x480 photo that `npm run bench` caches (V2A_CORE_RAW to use another copy), a synthetic image
// with transparent columns and a flat grey image through render() of each dist/ (npx tsc -p
// tsconfig.build.json, e.g. of a `git archive` of the base in /tmp) on 250 parameter sets (rubrics,
// charsets, colour, invert, edges, widths, structure, detail, tone), then 20 again (caches warm),
// and compares cells, colours, background and the rest of the result (Director report included).
// Exits 1 when any differs.

import { readFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
const [A, B] = process.argv.slice(2).map((d) => pathToFileURL(resolve(d)).href);
if (!A || !B) throw new Error('usage: node bench/render-diff.mjs DIST_A DIST_B');
const raw = new Uint8Array(readFileSync(resolve(process.env.V2A_CORE_RAW ?? 'bench/.cache/core-640x480.rgba')));
const photo = { width: 640, height: 480, data: raw };
// a second, smaller synthetic image with alpha and flat areas
const w2 = 97, h2 = 61, d2 = new Uint8Array(w2 * h2 * 4);
for (let y = 0; y < h2; y++) for (let x = 0; x < w2; x++) { const o = (y * w2 + x) * 4; d2[o] = (x * 7) & 255; d2[o + 1] = y * 4; d2[o + 2] = (x ^ y) * 3 & 255; d2[o + 3] = x < 10 ? 0 : 255; }
const synth = { width: w2, height: h2, data: d2 };
const flat = { width: 40, height: 40, data: new Uint8Array(40 * 40 * 4).fill(128) };
const sets = [];
for (const qualityTarget of ['balanced', 'portrait', 'motion', 'low-light', 'round-trip'])
  for (const charset of ['standard', 'blocks', 'dots', 'detailed', 'minimal'])
    for (const extra of [{}, { color: false }, { invert: true }, { edges: true }, { columns: 60 }, { structure: 0.03 }, { structure: 0.05, autoOptimize: 0 }, { sharpen: 0, denoise: 0 }, { gamma: 0.2, contrast: 3 }, { autoOptimize: 0 }])
      sets.push({ columns: 160, qualityTarget, charset, ...extra });
const { render: rA } = await import(A + '/core/render.js');
const { render: rB } = await import(B + '/core/render.js');
const h = (r) => { const x = createHash('sha1'); x.update(Buffer.from(r.cells.buffer, r.cells.byteOffset, r.cells.byteLength)); x.update(r.colors); if (r.background) x.update(r.background); x.update(JSON.stringify({ ...r, cells: 0, colors: 0, background: 0 })); return x.digest('hex'); };
let bad = 0, n = 0, errs = 0;
for (const img of [photo, synth, flat]) for (const p of sets) {
  let a, b;
  try { a = h(rA(img, p)); } catch (e) { a = 'ERR ' + e.message; }
  try { b = h(rB(img, p)); } catch (e) { b = 'ERR ' + e.message; }
  n++;
  if (a.startsWith('ERR')) errs++;
  if (a !== b) { bad++; if (bad < 10) console.log('DIFF', img.width, JSON.stringify(p), a, b); }
}
// repeated renders (caches hit) must match too
for (const p of sets.slice(0, 20)) { n++; if (h(rA(photo, p)) !== h(rB(photo, p))) { bad++; console.log('DIFF repeat', JSON.stringify(p)); } }
console.log(`${n} renders compared, ${bad} differ, ${errs} errors`);
if (bad) process.exit(1);
