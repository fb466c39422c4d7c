/**
 * `npm run bench`: speed of v2a against chafa and jp2a.
 *
 * 1. Builds the project (`npm run build`) so the CLI is measured as shipped (dist/cli/main.cjs).
 * 2. Core: `render(img, { columns: 160 })` of dist/ in process on a 640x480 photo at defaults (and with
 *    autoOptimize 0): warm-up 10, median of 50; ms per render and µs per cell. Targets (issue 16):
 *    <= 0.6 µs per cell warm on one thread; the first render in a fresh process <= 3x a warm one.
 *    Kernels: each hot kernel as the scalar TypeScript it was (test/reference/) and as shipped
 *    (WebAssembly), same inputs, same process (bundled with esbuild, plain node), interleaved:
 *    first call and median of 40 warm calls, and the module's compile time.
 * 3. Peers per cell: chafa and jp2a as whole processes on the same 640x480 PNG at 160 columns
 *    (median of 15), minus their startup on a 1x1 image into a 1x1 grid (median of 15), divided
 *    by the cells. This includes their PNG decode and scaling, which v2a's core figure does not.
 * 4. CLI whole process, output to /dev/null: a 0.3 MP JPEG (512x600) at 80 columns and a 12 MP
 *    JPEG (4000x3000) at 120 columns: v2a (`node dist/cli/main.cjs render`) vs chafa vs jp2a, and
 *    the platform floor `node -e "require('sharp')"` (and `node -e 0`), all interleaved in one
 *    loop, median of 11; peak RSS of each on 12 MP. Targets (issue 16), as ratios to the floor
 *    measured in the same run: 0.3 MP <= 1.5x, 12 MP <= 2x.
 * Writes bench/out/speed.json. Exit 0.
 */
import { existsSync, statSync, writeFileSync, mkdirSync } from 'node:fs';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { render as renderFn } from '../src/core/render.js';
import { CELL_ASPECT, VERSION } from '../src/core/types.js';
import { BENCH_DIR, CACHE_DIR, bigJpeg, decodeRgba, noisyJpeg, photo640, tinyPng } from './lib/images.js';
import { chafaArgs, ensurePeers, jp2aArgs, peerVersion } from './lib/peers.js';
import { median, run, which } from './lib/proc.js';
import { fix, table, writeJson } from './lib/report.js';
import { buildProject } from './lib/build.js';
import { buildSync } from 'esbuild';

const ROOT = join(BENCH_DIR, '..');
const CLI = join(ROOT, 'dist/cli/main.cjs');
const log = (s: string) => console.log(s);
const rel = (p: string) => p.replaceAll(ROOT + '/', '');
const progress = (s: string) => process.stderr.write(s + '\n');

const build = () => buildProject(ROOT, CLI, progress);

// ---------------------------------------------------------------------------------------------

/**
 * Fresh processes per first-render figure. One first render varies by about +-20 % on a shared
 * 2-core host (29-43 ms in one series of 11), so 5 gave a median that moved by several ms from
 * run to run; 11 cost about 4 s more per figure.
 */
const COLD_PROCESSES = 11;

interface CoreResult {
  readonly label: string; readonly msMedian: number; readonly msMin: number; readonly usPerCell: number;
  /**
   * Cold only: the page faults of the first render (memory touched for the first time: the
   * kernels' arena, typed arrays, code), and what as many fresh pages cost this host when a new
   * buffer is touched once per page in the same process, medians over the processes. A floor the
   * render's code does not set: 12 MB of fresh pages took 50-100 ms on the 2-core VM this bench
   * was written on (16-30 µs a page), about 3 ms on ordinary hardware.
   */
  readonly freshPages?: number; readonly freshMemoryMs?: number;
}

/**
 * The core measured in a plain `node` child on the dist/ build, as the CLI and server run it. Not
 * in this process: tsx's loader hooks alone slow the same code by ~15%. The image goes in as raw
 * RGBA through a cache file, so no decoder is involved. `warm`: 10 renders of warm-up, then the
 * median of 50 in one process; `cold`: the first render() of a fresh process, median of
 * COLD_PROCESSES.
 */
async function coreInChild(img: Awaited<ReturnType<typeof decodeRgba>>, params: Record<string, unknown>, mode: 'warm' | 'cold', label: string, cells: number, nodeArgs: readonly string[] = []): Promise<CoreResult | null> {
  const renderJs = join(ROOT, 'dist/core/render.js');
  if (!existsSync(renderJs)) return null;
  mkdirSync(CACHE_DIR, { recursive: true });
  const raw = join(CACHE_DIR, `core-${img.width}x${img.height}.rgba`);
  if (!existsSync(raw) || statSync(raw).size !== img.data.length) writeFileSync(raw, img.data);
  const [warmup, runs, procs] = mode === 'warm' ? [10, 50, 1] : [0, 1, COLD_PROCESSES];
  const script = [
    `import { readFileSync } from 'node:fs';`,
    `import { render } from ${JSON.stringify(pathToFileURL(renderJs).href)};`,
    `const img = { width: ${img.width}, height: ${img.height}, data: new Uint8Array(readFileSync(${JSON.stringify(raw)})) };`,
    `const params = ${JSON.stringify(params)};`,
    `const faults = () => process.resourceUsage().minorPageFault;`,
    `for (let i = 0; i < ${warmup}; i++) render(img, params);`,
    `const times = [];`,
    `const f0 = faults();`,
    `for (let i = 0; i < ${runs}; i++) { const t0 = performance.now(); render(img, params); times.push(performance.now() - t0); }`,
    // As many fresh pages as the renders faulted, in a buffer of their own, touched once each.
    `const pages = faults() - f0, fresh = new Uint8Array(pages * 4096), t1 = performance.now();`,
    `for (let j = 0; j < fresh.length; j += 4096) fresh[j] = 1;`,
    `process.stdout.write(JSON.stringify({ times, pages, touchMs: performance.now() - t1 }));`,
  ].join('\n');
  const times: number[] = [];
  const pages: number[] = [];
  const touchMs: number[] = [];
  for (let i = 0; i < procs; i++) {
    const r = await run(process.execPath, [...nodeArgs, '--input-type=module', '-e', script], { cwd: ROOT });
    if (r.code !== 0) {
      log(`core render (${label}) failed: ${r.stderr.trim().split('\n')[0]}`);
      return null;
    }
    const out = JSON.parse(r.stdout.toString()) as { times: number[]; pages: number; touchMs: number };
    times.push(...out.times);
    pages.push(out.pages);
    touchMs.push(out.touchMs);
  }
  const ms = median(times);
  const fresh = mode === 'cold' ? { freshPages: median(pages), freshMemoryMs: median(touchMs) } : {};
  return { label, msMedian: ms, msMin: Math.min(...times), usPerCell: (ms * 1000) / cells, ...fresh };
}

interface KernelTimes { readonly firstMs: number; readonly medianMs: number; readonly minMs: number }
interface KernelBench {
  readonly columns: number;
  readonly rows: number;
  readonly samples: number;
  readonly compileMs: number;
  readonly results: readonly { readonly name: string; readonly ts: KernelTimes; readonly wasm: KernelTimes }[];
}

/**
 * The kernels, old TypeScript vs WebAssembly (bench/lib/kernels-child.ts), in a plain node child:
 * bundled with esbuild so neither side runs under tsx's loader. Median over `procs` processes of
 * each figure (first calls differ most between processes).
 */
async function kernelsInChild(img: Awaited<ReturnType<typeof decodeRgba>>, columns: number, procs: number): Promise<KernelBench | null> {
  mkdirSync(CACHE_DIR, { recursive: true });
  const raw = join(CACHE_DIR, `core-${img.width}x${img.height}.rgba`);
  if (!existsSync(raw) || statSync(raw).size !== img.data.length) writeFileSync(raw, img.data);
  const bundle = join(CACHE_DIR, 'kernels-bench.mjs');
  buildSync({ entryPoints: [join(BENCH_DIR, 'lib/kernels-child.ts')], bundle: true, format: 'esm', platform: 'node', outfile: bundle, logLevel: 'warning' });
  const runs: KernelBench[] = [];
  for (let i = 0; i < procs; i++) {
    const r = await run(process.execPath, [bundle, raw, String(img.width), String(img.height), String(columns)], { cwd: ROOT });
    if (r.code !== 0) {
      log(`kernel bench failed: ${r.stderr.trim().split('\n')[0]}`);
      return null;
    }
    runs.push(JSON.parse(r.stdout.toString()) as KernelBench);
  }
  const med = (f: (k: KernelBench) => number) => median(runs.map(f));
  const first = runs[0]!;
  return {
    ...first,
    compileMs: med((k) => k.compileMs),
    results: first.results.map((k, j) => ({
      name: k.name,
      ts: { firstMs: med((b) => b.results[j]!.ts.firstMs), medianMs: med((b) => b.results[j]!.ts.medianMs), minMs: Math.min(...runs.map((b) => b.results[j]!.ts.minMs)) },
      wasm: { firstMs: med((b) => b.results[j]!.wasm.firstMs), medianMs: med((b) => b.results[j]!.wasm.medianMs), minMs: Math.min(...runs.map((b) => b.results[j]!.wasm.minMs)) },
    })),
  };
}

/** Median wall time of a whole process over `n` runs (stdout discarded). */
async function timeProcess(cmd: string, args: readonly string[], n: number, env?: NodeJS.ProcessEnv): Promise<{ ms: number; runs: number[] }> {
  const runs: number[] = [];
  for (let i = 0; i < n; i++) {
    const r = await run(cmd, args, { discardStdout: true, cwd: ROOT, ...(env ? { env } : {}) });
    if (r.code !== 0) throw new Error(`${cmd} ${args.join(' ')} exited ${r.code ?? r.signal}: ${r.stderr.trim().split('\n')[0]}`);
    runs.push(r.ms);
  }
  return { ms: median(runs), runs };
}

/** One image the CLI is timed on, and its target as a ratio to the node + sharp floor. */
interface CliCase { readonly key: string; readonly label: string; readonly file: string; readonly width: number; readonly height: number; readonly columns: number; readonly target: number }
/** A whole-process command timed on a CliCase's image (`columns` x `rows` cells). */
interface CliSpec { readonly label: string; readonly cmd: string; readonly args: (file: string, columns: number, rows: number) => string[]; readonly env?: NodeJS.ProcessEnv }

/** Peak RSS in MiB of one run: /usr/bin/time -v, else (node only) a preload reporting resourceUsage. */
async function peakRss(cmd: string, args: readonly string[]): Promise<{ mib: number | null; how: string }> {
  if (existsSync('/usr/bin/time')) {
    const r = await run('/usr/bin/time', ['-v', cmd, ...args], { discardStdout: true, cwd: ROOT });
    const m = /Maximum resident set size \(kbytes\):\s*(\d+)/.exec(r.stderr);
    if (r.code === 0 && m) return { mib: Number(m[1]) / 1024, how: '/usr/bin/time -v' };
  }
  if (cmd === process.execPath || cmd === 'node') {
    mkdirSync(CACHE_DIR, { recursive: true });
    const pre = join(CACHE_DIR, 'maxrss.cjs');
    writeFileSync(pre, "process.on('exit', () => { require('fs').writeSync(2, '\\nMAXRSS_KB ' + process.resourceUsage().maxRSS + '\\n'); });\n");
    const r = await run(cmd, ['-r', pre, ...args], { discardStdout: true, cwd: ROOT });
    const m = /MAXRSS_KB (\d+)/.exec(r.stderr);
    if (m) return { mib: Number(m[1]) / 1024, how: 'process.resourceUsage().maxRSS (preload)' };
  }
  return { mib: null, how: 'unavailable' };
}

// ---------------------------------------------------------------------------------------------

async function main(): Promise<void> {
  const tStart = performance.now();
  const built = await build();
  log(`build: ${built.note}`);
  // The core as it ships (dist/, what the CLI and server run), not the tsx-transformed source.
  const { render } = (await import(pathToFileURL(join(ROOT, 'dist/core/render.js')).href)) as { render: typeof renderFn };
  const programs = await ensurePeers(log);

  // --- Core ---------------------------------------------------------------------------------
  const photo = await photo640(log);
  const img = await decodeRgba(photo.file);
  const COLS = 160;
  const rows = Math.max(1, Math.round((COLS * img.height * CELL_ASPECT) / img.width));
  const cells = COLS * rows;
  progress('core render ...');
  const core: CoreResult[] = [];
  for (const [params, label] of [[{ columns: COLS }, 'render, defaults'], [{ columns: COLS, autoOptimize: 0 }, 'render, autoOptimize 0']] as const) {
    const r = await coreInChild(img, params, 'warm', label, cells);
    if (!r) throw new Error(`core bench failed (${label}); see the line above`);
    core.push(r);
  }
  const cold = await coreInChild(img, { columns: COLS }, 'cold', 'render, defaults, cold (1st call)', cells);
  // The same first render with V8's WebAssembly tier-up compiles on one background thread: what
  // the render's own code costs cold, without the compiles of up to four platform threads taking
  // its core on a small machine (see bench/README.md). Shown beside the target, not judged.
  const coldOneCompile = await coreInChild(img, { columns: COLS }, 'cold', 'the same, tier-up compiles on 1 thread', cells, ['--wasm-num-compilation-tasks=1']);
  progress('kernels, TypeScript vs WebAssembly ...');
  const kernels = await kernelsInChild(img, COLS, 3);
  const check = render(img, { columns: COLS });
  if (check.rows !== rows) log(`note: render gave ${check.rows} rows, expected ${rows}`);

  // --- Peers per cell -------------------------------------------------------------------------
  progress('peers per cell ...');
  const one = await tinyPng();
  interface PeerCell { label: string; command: string; msMedian: number; startupMs: number; usPerCell: number; ratio: number }
  const peerCells: PeerCell[] = [];
  const peerSpecs: { label: string; cmd: 'chafa' | 'jp2a'; args: (f: string, c: number, r: number) => string[] }[] = [];
  if (programs.has('chafa')) {
    peerSpecs.push({ label: `chafa (default threads: ${cpus().length})`, cmd: 'chafa', args: (f, c, r) => chafaArgs(f, c, r) });
    peerSpecs.push({ label: 'chafa --threads 1', cmd: 'chafa', args: (f, c, r) => ['--threads', '1', ...chafaArgs(f, c, r)] });
  }
  if (programs.has('jp2a')) peerSpecs.push({ label: 'jp2a', cmd: 'jp2a', args: (f, c, r) => jp2aArgs(f, c, r) });
  const v2aUs = core[0]!.usPerCell;
  for (const s of peerSpecs) {
    await timeProcess(s.cmd, s.args(photo.file, COLS, rows), 2); // warm the page cache
    const full = await timeProcess(s.cmd, s.args(photo.file, COLS, rows), 15);
    const startup = await timeProcess(s.cmd, s.args(one, 1, 1), 15);
    const us = ((full.ms - startup.ms) * 1000) / cells;
    peerCells.push({ label: s.label, command: [s.cmd, ...s.args('photo.png', COLS, rows)].join(' '), msMedian: full.ms, startupMs: startup.ms, usPerCell: us, ratio: v2aUs / us });
  }

  // --- CLI: 0.3 MP and 12 MP JPEGs, beside the platform floor --------------------------------
  progress('CLI on a 0.3 MP and a 12 MP JPEG ...');
  const big = await bigJpeg(log);
  const small = await noisyJpeg(512, 600, 'small-512x600', log);
  const cliCases: CliCase[] = [
    { key: 'small', label: '0.3 MP', file: small.file, width: 512, height: 600, columns: 80, target: 1.5 },
    { key: 'big', label: '12 MP', file: big.file, width: 4000, height: 3000, columns: 120, target: 2 },
  ];
  // The CLI runs its bundle with a code cache of its own (src/cli/code-cache.ts, every Node) and
  // sharp's bundled JavaScript, and turns on Node's module compile cache (Node >= 22.8, for what
  // still loads from node_modules): the runs below (after a
  // warm-up run) read compiled code from them, as every use after the first does. The same
  // command with NODE_DISABLE_COMPILE_CACHE=1 (both off) shows what the caches save.
  const nodeCompileCache = typeof (await import('node:module') as { enableCompileCache?: unknown }).enableCompileCache === 'function';
  const toolSpecs: CliSpec[] = [
    { label: 'v2a CLI', cmd: process.execPath, args: (f, c) => [CLI, 'render', f, '--columns', String(c)] },
    { label: 'v2a CLI, no compile cache', cmd: process.execPath, args: (f, c) => [CLI, 'render', f, '--columns', String(c)], env: { ...process.env, NODE_DISABLE_COMPILE_CACHE: '1' } },
  ];
  if (programs.has('chafa')) toolSpecs.push({ label: 'chafa', cmd: 'chafa', args: (f, c, r) => chafaArgs(f, c, r) });
  if (programs.has('jp2a')) toolSpecs.push({ label: 'jp2a', cmd: 'jp2a', args: (f, c) => [`--width=${c}`, f] });
  // The platform's own floor, with no v2a code at all: node starting, then node loading sharp (libvips).
  const floorSpecs = [
    { label: 'node -e 0', args: ['-e', '0'] },
    { label: "node -e require('sharp')", args: ['-e', "require('sharp')"] },
  ];
  const rowsOf = (c: CliCase) => Math.round((c.columns * c.height * CELL_ASPECT) / c.width);
  for (const c of cliCases) for (const s of toolSpecs) await timeProcess(s.cmd, s.args(c.file, c.columns, rowsOf(c)), 1, s.env); // warm-up: page cache, compile cache, first-run errors
  for (const f of floorSpecs) await timeProcess(process.execPath, f.args, 1);
  const CLI_RUNS = 11;
  const cliRuns = new Map<string, number[]>();
  const push = (key: string, ms: number) => cliRuns.set(key, [...(cliRuns.get(key) ?? []), ms]);
  // Interleaved: every command once per round, so load on the machine hits all of them alike; each
  // round starts one command further on, so none is always run just after the 12 MP ones (the
  // 1x1 start-up runs, always last, once measured above the whole 0.3 MP run).
  const jobs: { key: string; cmd: string; args: string[]; env?: NodeJS.ProcessEnv }[] = [
    ...floorSpecs.map((f) => ({ key: f.label, cmd: process.execPath, args: f.args })),
    ...cliCases.flatMap((c) => toolSpecs.map((s) => ({ key: `${c.key} ${s.label}`, cmd: s.cmd, args: s.args(c.file, c.columns, rowsOf(c)), env: s.env }))),
    ...cliCases.flatMap((c) => toolSpecs.map((s) => ({ key: `${c.key} tiny ${s.label}`, cmd: s.cmd, args: s.args(one, c.columns, rowsOf(c)), env: s.env }))),
  ];
  for (let i = 0; i < CLI_RUNS; i++) {
    for (let k = 0; k < jobs.length; k++) {
      const j = jobs[(k + i * Math.ceil(jobs.length / CLI_RUNS)) % jobs.length]!;
      push(j.key, (await timeProcess(j.cmd, j.args, 1, j.env)).ms);
    }
  }
  const floor = floorSpecs.map((f) => ({ label: f.label, msMedian: median(cliRuns.get(f.label)!) }));
  const sharpFloor = floor[1]!.msMedian;
  const cli = cliCases.map((c) => ({
    ...c,
    file: rel(c.file),
    rows: rowsOf(c),
    results: toolSpecs.map((s) => {
      const ms = median(cliRuns.get(`${c.key} ${s.label}`)!);
      return {
        label: s.label,
        command: [s.cmd === process.execPath ? 'node' : s.cmd, ...s.args(rel(c.file), c.columns, rowsOf(c))].join(' ').replaceAll(ROOT + '/', ''),
        msMedian: ms,
        overFloor: ms / sharpFloor,
        runs: cliRuns.get(`${c.key} ${s.label}`)!.map((v) => Math.round(v * 10) / 10),
        startupMsMedian: median(cliRuns.get(`${c.key} tiny ${s.label}`)!),
      };
    }),
  }));
  const v2aOf = (c: (typeof cli)[number]) => c.results.find((r) => r.label === 'v2a CLI')!;
  const peerOf = (c: (typeof cli)[number], label: string) => c.results.find((r) => r.label === label);
  const rss: Record<string, { mib: number | null; how: string }> = {};
  for (const s of toolSpecs) rss[s.label] = await peakRss(s.cmd, s.args(big.file, 120, rowsOf(cliCases[1]!)));

  // --- Report --------------------------------------------------------------------------------
  console.log('');
  console.log(`Core: render() of dist/ in a plain node child process, ${img.width}x${img.height} photo (${photo.source}), ${COLS}x${rows} = ${cells} cells; warm-up 10, median of 50 (one thread)`);
  console.log(table([
    ['what', 'ms/render (median)', 'ms (min)', 'µs/cell'],
    ...core.map((c) => [c.label, fix(c.msMedian, 2), fix(c.msMin, 2), fix(c.usPerCell, 2)]),
    ...[cold, coldOneCompile].filter((c): c is CoreResult => c !== null).map((c) => [c.label, fix(c.msMedian, 2), fix(c.msMin, 2), fix(c.usPerCell, 2)]),
  ]));
  if (cold) console.log('(cold = the first render() in a fresh node process, dist/ build, not yet optimized by the JIT: what one CLI call pays)');
  if (cold?.freshMemoryMs !== undefined) {
    console.log(`(the first render touches ${cold.freshPages} fresh pages (${fix(cold.freshPages! * 4 / 1024, 1)} MB); as many cost this host ${fix(cold.freshMemoryMs, 1)} ms touched`);
    console.log(` on their own, ${fix(cold.freshMemoryMs * 1000 / Math.max(1, cold.freshPages!), 1)} µs a page: a floor of the host, in the cold figure, not the render's code)`);
  }
  if (coldOneCompile) {
    console.log('(tier-up compiles on 1 thread = node --wasm-num-compilation-tasks=1: V8 otherwise spreads the kernels\' optimising compiles over');
    console.log(` Node's 4 platform threads during the first render, which on ${cpus().length} cores take time from its thread; cold/warm ${fix(coldOneCompile.msMedian / core[0]!.msMedian, 2)} there, not judged)`);
  }
  const warmUs = core[0]!.usPerCell;
  const coldRatio = cold ? cold.msMedian / core[0]!.msMedian : null;
  console.log(`target <= 0.6 µs per cell warm on one thread (defaults): ${warmUs <= 0.6 ? 'MET' : 'MISSED'} (${fix(warmUs, 2)} µs; the earlier target <= 2 µs: ${warmUs <= 2 ? 'MET' : 'MISSED'})`);
  const coldLessFresh = cold?.freshMemoryMs !== undefined ? (cold.msMedian - cold.freshMemoryMs) / core[0]!.msMedian : null;
  console.log(`target first render in a fresh process <= 3x a warm one: ${coldRatio === null ? 'NOT MEASURED' : coldRatio <= 3 ? 'MET' : 'MISSED'} (cold/warm = ${fix(coldRatio, 2)}; ${fix(coldLessFresh, 2)} less the host's price of the fresh pages, not judged)`);

  if (kernels) {
    console.log('');
    console.log(`Kernels: the scalar TypeScript they were (test/reference/) vs WebAssembly as shipped, same inputs (${kernels.columns}x${kernels.rows} cells, ${kernels.samples} samples),`);
    console.log('one plain node process bundled with esbuild, interleaved; first = the first call in a fresh process, warm = median of 40 after 10; median of 3 processes');
    console.log(table([
      ['kernel', 'TS first ms', 'wasm first ms', 'TS warm ms', 'wasm warm ms', 'TS/wasm warm', 'TS/wasm first'],
      ...kernels.results.map((k) => [k.name, fix(k.ts.firstMs, 2), fix(k.wasm.firstMs, 2), fix(k.ts.medianMs, 3), fix(k.wasm.medianMs, 3), fix(k.ts.medianMs / k.wasm.medianMs, 2), fix(k.ts.firstMs / k.wasm.firstMs, 2)]),
    ]));
    console.log(`(wasm module compile + instantiate, once per thread: ${fix(kernels.compileMs, 2)} ms; TS/wasm > 1: the WebAssembly kernel is faster)`);
  }

  console.log('');
  console.log(`Peers per cell: whole process on the same ${img.width}x${img.height} PNG at ${COLS}x${rows}, median of 15, minus startup`);
  console.log(`(the same command on a 1x1 PNG into 1x1 cells, median of 15), / ${cells} cells. Includes the peer's PNG decode and`);
  console.log('scaling, which the v2a core figure does not; ratio = v2a core µs/cell (defaults) / peer µs/cell (< 1: v2a faster).');
  if (peerCells.length) {
    console.log(table([
      ['peer', 'ms (median)', 'startup ms', 'µs/cell', 'v2a/peer'],
      ...peerCells.map((p) => [p.label, fix(p.msMedian, 2), fix(p.startupMs, 2), fix(p.usPerCell, 2), fix(p.ratio, 2)]),
    ]));
  } else console.log('(no peers available)');

  console.log('');
  console.log(`CLI whole process, output to /dev/null: median of ${CLI_RUNS} runs, every command once per round (interleaved);`);
  console.log(`x floor = ms / the median of node -e "require('sharp')" in the same rounds; "1x1 PNG" = the identical command on a 1x1 image (start-up)`);
  for (const c of cli) {
    console.log(`${c.label}: ${c.file} (${c.width}x${c.height} JPEG) at ${c.columns} columns (${c.rows} rows)`);
    console.log(table([
      ['tool', 'ms (median)', 'x floor', '1x1 PNG ms', ...(c.key === 'big' ? ['peak RSS MiB'] : []), 'command'],
      ...c.results.map((r) => [r.label, fix(r.msMedian, 1), fix(r.overFloor, 2), fix(r.startupMsMedian, 1), ...(c.key === 'big' ? [fix(rss[r.label]?.mib, 1)] : []), r.command]),
    ], { leftAlign: [c.key === 'big' ? 5 : 4] }));
  }
  console.log(`platform floor (no v2a code; median of ${CLI_RUNS}, interleaved): ${floor.map((f) => `${f.label} ${fix(f.msMedian, 1)} ms`).join(', ')}`);
  console.log(`(the CLI's code cache${nodeCompileCache ? " and Node's compile cache" : ` (node ${process.version} has no module compile cache)`}, kept in ${process.env.NODE_COMPILE_CACHE ? '$NODE_COMPILE_CACHE' : '<os.tmpdir()>/node-compile-cache'}: warm after the warm-up run; "no compile cache" is NODE_DISABLE_COMPILE_CACHE=1)`);
  for (const c of cli) {
    const v = v2aOf(c);
    const jp2a = peerOf(c, 'jp2a');
    const chafa = peerOf(c, 'chafa');
    console.log(`target CLI ${c.label} -> ${c.columns} columns <= ${c.target}x node+sharp: ${v.overFloor <= c.target ? 'MET' : 'MISSED'} (${fix(v.overFloor, 2)}x: ${fix(v.msMedian, 1)} ms vs ${fix(sharpFloor, 1)} ms)` +
      `${chafa ? `; v2a/chafa ${fix(v.msMedian / chafa.msMedian, 2)}` : ''}${jp2a ? `; v2a/jp2a ${fix(v.msMedian / jp2a.msMedian, 2)}` : ''}`);
  }
  const bigJp2a = peerOf(cli[1]!, 'jp2a')?.msMedian;
  const bigV2a = v2aOf(cli[1]!).msMedian;
  if (bigJp2a !== undefined && sharpFloor > bigJp2a) {
    console.log(`(node + sharp alone take ${fix(sharpFloor, 1)} ms, more than jp2a's whole 12 MP run: the earlier target below is out of reach on this platform)`);
  }
  console.log(`earlier target, CLI 12 MP no slower than jp2a: ${bigJp2a === undefined ? 'NOT MEASURED (jp2a unavailable)' : bigV2a <= bigJp2a ? 'MET' : 'MISSED'}`);
  console.log(`(peak RSS via ${rss['v2a CLI']?.how}; ${cpus().length} CPUs, ${cpus()[0]?.model ?? ''}, node ${process.version})`);

  const file = writeJson('speed.json', {
    bench: 'speed',
    date: new Date().toISOString(),
    v2aVersion: VERSION,
    node: process.version,
    cpus: { count: cpus().length, model: cpus()[0]?.model },
    build: built,
    peers: Object.fromEntries([...programs].map((p) => [p, peerVersion(p)])),
    core: {
      image: { source: photo.source, width: img.width, height: img.height }, columns: COLS, rows, cells, results: core, cold, coldOneCompile,
      targetUsPerCell: 0.6, targetMet: warmUs <= 0.6, coldOverWarm: coldRatio, coldOverWarmLessFreshMemory: coldLessFresh, coldTarget: 3, coldTargetMet: coldRatio === null ? null : coldRatio <= 3,
    },
    kernels,
    peersPerCell: { columns: COLS, rows, cells, results: peerCells },
    cli: {
      runs: CLI_RUNS,
      codeCache: true,
      nodeCompileCache,
      platformFloor: floor,
      cases: cli.map((c) => ({
        ...c,
        results: c.results.map((r) => ({ ...r, ...(c.key === 'big' ? { peakRssMiB: rss[r.label]?.mib ?? null } : {}) })),
        target: `<= ${c.target}x node -e "require('sharp')"`,
        targetMet: v2aOf(c).overFloor <= c.target,
      })),
      rssMethod: rss['v2a CLI']?.how,
    },
    seconds: (performance.now() - tStart) / 1000,
  });
  progress(`wrote ${file}`);
  if (!which('chafa') || !which('jp2a')) log('(some peers were unavailable; see the lines above)');
}

main().catch((e: unknown) => {
  console.error(e instanceof Error ? e.stack ?? e.message : e);
  process.exit(2);
});
