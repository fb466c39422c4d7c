// Warm and cold core render of two (or more) builds, interleaved, for before/after figures on a
// noisy machine: node bench/core-ab.mjs ROUNDS DIST_A DIST_B ... Each DIST is a dist/ directory
// (npx tsc -p tsconfig.build.json, e.g. of a `git archive` of the base in /tmp). Per round and
// build, one child process renders 15 times then times 40 renders (warm: the child's median), and
// one fresh child times its first render (cold: render only, not the imports). Prints the median
// over rounds. The image: the 640x480 photo that `npm run bench` caches (bench/.cache), at 160
// columns and defaults, as in bench/speed.ts.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const RAW = resolve(process.env.V2A_CORE_RAW ?? 'bench/.cache/core-640x480.rgba');
const [rounds, ...dists] = process.argv.slice(2);
if (!rounds || dists.length === 0) throw new Error('usage: node bench/core-ab.mjs ROUNDS DIST_A [DIST_B ...]');
if (!existsSync(RAW)) throw new Error(`${RAW} missing: run npm run bench once (or set V2A_CORE_RAW)`);

function child(dist, mode) {
  const [warmup, runs] = mode === 'warm' ? [15, 40] : [0, 1];
  const script = `import { readFileSync } from 'node:fs';
const { render } = await import(${JSON.stringify(pathToFileURL(resolve(dist, 'core/render.js')).href)});
const img = { width: 640, height: 480, data: new Uint8Array(readFileSync(${JSON.stringify(RAW)})) };
for (let i = 0; i < ${warmup}; i++) render(img, { columns: 160 });
const t = [];
for (let i = 0; i < ${runs}; i++) { const t0 = performance.now(); render(img, { columns: 160 }); t.push(performance.now() - t0); }
t.sort((a, b) => a - b);
process.stdout.write(JSON.stringify(t[t.length >> 1]));`;
  return JSON.parse(execFileSync(process.execPath, ['--input-type=module', '-e', script]).toString());
}

const times = {};
for (let r = 0; r < Number(rounds); r++) {
  for (const d of dists) for (const mode of ['warm', 'cold']) (times[`${mode} ${d}`] ??= []).push(child(d, mode));
}
for (const [k, v] of Object.entries(times)) {
  v.sort((a, b) => a - b);
  console.log(`${k}: median ${v[v.length >> 1].toFixed(2)} ms (${v.map((x) => x.toFixed(1)).join(' ')})`);
}
