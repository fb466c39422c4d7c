// FrameRenderer (the video path) of two builds on the same noisy 640x480 frame sequences:
// node bench/frames-ab.mjs DIST_A DIST_B [--check]. Each DIST is a dist/ directory (npx tsc -p
// tsconfig.build.json, e.g. of a `git archive` of the base in /tmp). --check renders still noise,
// a pan, a fade and a scene cut under several parameter sets with both and exits 1 on the first
// result that differs (cells, colours, text, report); otherwise prints interleaved medians of the
// warm ms/frame at 120 and 200 columns. The image: the photo `npm run bench` caches (bench/.cache).
import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
const RAW = resolve(process.env.V2A_CORE_RAW ?? 'bench/.cache/core-640x480.rgba');
const [OLD, NEW] = process.argv.slice(2).filter((a) => !a.startsWith('--')).map((d) => pathToFileURL(resolve(d)).href);
if (!OLD || !NEW) throw new Error('usage: node bench/frames-ab.mjs DIST_A DIST_B [--check]');
if (!existsSync(RAW)) throw new Error(`${RAW} missing: run npm run bench once (or set V2A_CORE_RAW)`);
const FA = (await import(OLD + '/core/video.js')).FrameRenderer, FB = (await import(NEW + '/core/video.js')).FrameRenderer;
const base = new Uint8Array(readFileSync(RAW));
const mk = (k, shift = 0, gain = 1) => { const d = new Uint8Array(base.length); for (let i = 0; i < d.length; i += 4) { const p = i / 4, x = p % 640, y = (p / 640) | 0; const sx = Math.min(639, Math.max(0, x + shift)); const s = (y * 640 + sx) * 4; for (let ch = 0; ch < 3; ch++) { const n = ((i * 2654435761 + k * 97 + ch * 31) >>> 24) % 9 - 4; d[i + ch] = Math.max(0, Math.min(255, Math.round(base[s + ch] * gain) + n)); } d[i + 3] = 255; } return { width: 640, height: 480, data: d }; };
const still = Array.from({ length: 8 }, (_, k) => mk(k));
const check = process.argv.includes('--check');
if (check) {
  // still noise, a pan, a fade, a scene cut (inverted), back; several param sets
  const inv = (f) => ({ width: 640, height: 480, data: f.data.map((v, i) => (i % 4 === 3 ? 255 : 255 - v)) });
  const seq = [...still, ...Array.from({ length: 6 }, (_, k) => mk(k, 4 * k)), ...Array.from({ length: 5 }, (_, k) => mk(k, 0, 1 - 0.08 * k)), ...still.slice(0, 3).map(inv), ...still.slice(0, 4)];
  let n = 0;
  for (const params of [{ columns: 200 }, { columns: 120, motionSensitivity: 0 }, { columns: 80, motionSensitivity: 1 }, { columns: 120, charset: 'dots', color: true }, { columns: 100, motionSensitivity: 0.3, color: true, charset: 'blocks' }, { columns: 200, color: true }]) {
    let a, b;
    try { a = new FA(params); b = new FB(params); } catch (e) { console.log('skip', JSON.stringify(params), e.message); continue; }
    for (const f of seq) {
      const ra = a.render(f), rb = b.render(f);
      const ja = JSON.stringify(ra, (k, v) => (ArrayBuffer.isView(v) ? Array.from(v) : v));
      const jb = JSON.stringify(rb, (k, v) => (ArrayBuffer.isView(v) ? Array.from(v) : v));
      if (ja !== jb) { console.log('DIFF', JSON.stringify(params), n); process.exit(1); }
      n++;
    }
    if (a.codebookChoices !== b.codebookChoices) { console.log('DIFF choices'); process.exit(1); }
    console.log('same', JSON.stringify(params), 'choices', a.codebookChoices);
  }
  console.log('identical frames:', n);
  process.exit(0);
}
const med = (a) => a.slice().sort((x, y) => x - y)[a.length >> 1];
for (const columns of [120, 200]) {
  const a = new FA({ columns }), b = new FB({ columns });
  for (let i = 0; i < 20; i++) { a.render(still[i % 8]); b.render(still[i % 8]); }
  const ta = [], tb = [];
  const time = (r) => { const t = performance.now(); for (let i = 0; i < 8; i++) r.render(still[i]); return (performance.now() - t) / 8; };
  for (let r = 0; r < 15; r++) { ta.push(time(a)); tb.push(time(b)); }
  console.log(`FrameRenderer ${columns} cols ms/frame: old ${med(ta).toFixed(2)}, new ${med(tb).toFixed(2)}`);
}
