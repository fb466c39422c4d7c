/**
 * `npm run bench:server`: the HTTP server under concurrent load, beside chafa run once per image.
 *
 * 1. `npm run build`, then the real server from dist (`node dist/server/main.cjs`) in a child
 *    process on 127.0.0.1 (PORT=0: a free port), V2A_WORKERS = cores (or `--workers N`),
 *    V2A_RATE_LIMIT=0, a queue larger than the load can fill; ready when /api/v1/health/ready
 *    answers 200 (workers warm).
 * 2. Inputs: a 1-megapixel (1155x866) and a 12-megapixel (4000x3000) JPEG, quality 90.
 * 3. Where a render's time goes, in process on one thread (the dist build, sharp with one thread
 *    as in a worker): decode, render, format, and the whole worker job.
 * 4. Load: autocannon POSTs the image as multipart/form-data (file field `image`; `--carrier json`
 *    sends JSON imageBase64) to /api/v1/render?columns=120 at each concurrency (default 2, 4, 8)
 *    for `--duration` seconds (default 10) after a warm-up: p50/p90/p99 latency, images/s,
 *    non-2xx and errors, and the server's CPU per image (whole process, and its main thread = the
 *    event loop: HTTP, reading the body, JSON parsing, hand-off to the workers). A sample reply is checked first:
 *    200 text/plain, every row 120 characters.
 * 5. Peer: `chafa --format symbols --symbols ascii --colors none --size 120xROWS --stretch
 *    --animate off --polite on FILE`, one process per image, `cores` processes at a time for the
 *    same duration: images/s; ratio v2a / chafa.
 *    Targets: v2a >= 3x chafa's images per second; p99 <= 3x p50.
 * 6. `--compare-export`: a second server with PLATFORM_API_KEY and OTEL_EXPORTER_OTLP_ENDPOINT
 *    pointing at a local OTLP sink; if it exports spans, both servers take the same load in
 *    alternating rounds and the throughput cost of export is printed (target <= 5 %); if it does
 *    not (no export in this build), that is said and nothing is compared.
 * 7. `--cpu-prof`: the server runs with node --cpu-prof (main thread and workers); the profiles
 *    are summarized by self time after it stops. Numbers measured with the profiler on are slower.
 * 8. `--scaling`: instead of the above, throughput against the number of workers: for each image
 *    and each V2A_WORKERS in `--workers` (default 1,2,4,8,16), a fresh server, a warm-up, then
 *    load at 2 connections per worker: images/s, speed-up over 1 worker, p50/p99 and the main
 *    thread's CPU per image (what must stay small for 12 MP to keep scaling). Printed as a table;
 *    bench/out/server-scaling.json. On fewer cores than workers it shows the shape only.
 * Writes bench/out/server.json; every server is stopped (SIGTERM) at the end, also on errors.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { availableParallelism, cpus } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { buildSync } from 'esbuild';
import { CELL_ASPECT, VERSION } from '../src/core/types.js';
import { buildProject, type BuildOutcome } from './lib/build.js';
import { BENCH_DIR, OUT_DIR } from './lib/images.js';
import { CARRIERS, requestBody, runLoad, type Carrier, type LoadResult, type RequestBody } from './lib/load.js';
import { startOtlpSink, type OtlpSink } from './lib/otlp-sink.js';
import { runProcessLoad, type ProcessLoadResult } from './lib/peer-load.js';
import { chafaArgs, ensurePeers, parseGrid, peerVersion } from './lib/peers.js';
import { median, run } from './lib/proc.js';
import { fix, table, writeJson } from './lib/report.js';
import { serverBenchImages, type JpegInput } from './lib/server-images.js';
import {
  cpuDelta, selfAndChildrenSeconds, startServerProcess, stopAllServers, systemBusySeconds, type CpuSample, type ServerProcess,
} from './lib/server-proc.js';

const ROOT = join(BENCH_DIR, '..');
const ENTRY = join(ROOT, 'dist/server/main.cjs');
const log = (s: string) => console.log(s);
const progress = (s: string) => process.stderr.write(s + '\n');
const rel = (p: string) => p.replaceAll(ROOT + '/', '');

// --- Arguments ----------------------------------------------------------------------------------

interface Args {
  duration: number;
  warmup: number;
  concurrency: number[];
  images: string[];
  columns: number;
  carrier: Carrier;
  compareExport: boolean;
  cpuProf: boolean;
  build: boolean;
  peers: boolean;
  scaling: boolean;
  workers: number[];
  /** --workers was given (without --scaling: the server's one worker count). */
  workersGiven: boolean;
}

const USAGE = `npm run bench:server -- [options]
  --duration S         seconds per load level and for chafa (default 10)
  --warmup S           warm-up seconds per image before measuring (default 3)
  --concurrency LIST   connections per level (default 2,4,8)
  --images LIST        1mp,12mp (default both)
  --columns N          columns (default 120)
  --carrier C          multipart (default), json (imageBase64) or mcp (a tools/call with imageBase64)
  --compare-export     also measure a server exporting traces (PLATFORM_API_KEY + local OTLP sink)
  --cpu-prof           run the server under node --cpu-prof and summarize where its CPU time goes
  --no-build           measure the existing dist/
  --no-peers           skip chafa
  --scaling            only images/s against V2A_WORKERS (fresh server per count), as a table
  --workers LIST       worker counts for --scaling (default 1,2,4,8,16); without --scaling, one
                       count for the server (default: the cores, the server's own default)`;

function parseArgs(argv: readonly string[]): Args {
  const a: Args = { duration: 10, warmup: 3, concurrency: [2, 4, 8], images: ['1mp', '12mp'], columns: 120, carrier: 'multipart', compareExport: false, cpuProf: false, build: true, peers: true, scaling: false, workers: [1, 2, 4, 8, 16], workersGiven: false };
  const num = (v: string | undefined, name: string, min: number) => {
    const n = Number(v);
    if (!Number.isFinite(n) || n < min) throw new Error(`${name} needs a number >= ${min}\n${USAGE}`);
    return n;
  };
  for (let i = 0; i < argv.length; i++) {
    const k = argv[i]!;
    const [key, inline] = k.includes('=') ? [k.slice(0, k.indexOf('=')), k.slice(k.indexOf('=') + 1)] : [k, undefined];
    const val = () => inline ?? argv[++i];
    switch (key) {
      case '--duration': a.duration = num(val(), key, 1); break;
      case '--warmup': a.warmup = num(val(), key, 0); break;
      case '--concurrency': a.concurrency = (val() ?? '').split(',').map((s) => Math.round(num(s, key, 1))); break;
      case '--images': {
        a.images = (val() ?? '').split(',').map((s) => s.trim().toLowerCase()).filter(Boolean);
        // An empty list measured nothing and printed its targets as met.
        if (!a.images.length || a.images.some((x) => x !== '1mp' && x !== '12mp')) throw new Error(`--images is a list of 1mp and 12mp\n${USAGE}`);
        break;
      }
      case '--columns': a.columns = Math.round(num(val(), key, 1)); break;
      case '--carrier': {
        const c = val() as Carrier;
        if (!CARRIERS.includes(c)) throw new Error(`--carrier is ${CARRIERS.join(', ')}\n${USAGE}`);
        a.carrier = c;
        break;
      }
      case '--compare-export': a.compareExport = true; break;
      case '--cpu-prof': a.cpuProf = true; break;
      case '--no-build': a.build = false; break;
      case '--no-peers': a.peers = false; break;
      case '--scaling': a.scaling = true; break;
      case '--workers': a.workers = (val() ?? '').split(',').map((s) => Math.round(num(s, key, 1))); a.workersGiven = true; break;
      case '--help': case '-h': console.log(USAGE); process.exit(0); break;
      default: throw new Error(`unknown option ${k}\n${USAGE}`);
    }
  }
  return a;
}

// --- Stages in process --------------------------------------------------------------------------

interface StageTimes {
  image: string;
  decodedWidth: number;
  decodedHeight: number;
  rows: number;
  runs: number;
  decodeMs: number;
  renderMs: number;
  formatMs: number;
  jobMs: number;
  /** render() with autoOptimize 0: without the Auto Director's search. */
  renderNoDirectorMs: number;
  /** Pixels per column the decode asks for (DECODE_PIXELS_PER_COLUMN). */
  pxPerColumn: number;
  /**
   * CPU per image in a plain node process, every thread, from /proc (null off Linux): the worker's
   * whole job (its own thread, libvips' threads, the other threads: V8's GC and compiler helpers
   * and libuv's pool, where sharp's pipeline calls run), the decode alone, and the decode's floor
   * (the JPEG at 1/8 DCT scale and nothing else: every coefficient is still entropy-decoded).
   */
  cpu: { job: { thread: number; libvips: number; other: number; total: number }; decode: number; decodeFloor: number } | null;
}

type WorkerModule = typeof import('../src/server/render-worker.js');
type NodeModule = typeof import('../src/node/index.js');
type RenderModule = typeof import('../src/core/render.js');
type FormatModule = typeof import('../src/core/format/index.js');

/** One thread, the dist build: decode / render / format separately, and the worker's whole job. */
async function stageTimes(images: readonly JpegInput[], columns: number): Promise<StageTimes[]> {
  const dist = (p: string) => pathToFileURL(join(ROOT, 'dist', p)).href;
  const worker = (await import(dist('server/render-worker.js'))) as WorkerModule; // sets sharp to 1 thread, no cache
  const node = (await import(dist('node/index.js'))) as NodeModule;
  const core = (await import(dist('core/render.js'))) as RenderModule;
  const fmt = (await import(dist('core/format/index.js'))) as FormatModule;
  node.configureSharp({ concurrency: 1 });
  const { DECODE_PIXELS_PER_COLUMN: pxPerColumn } = (await import(dist('core/pipeline/geometry.js'))) as { DECODE_PIXELS_PER_COLUMN: number };
  const limits = { maxPixels: 50_000_000, maxBytes: 64 * 1024 * 1024, timeoutSeconds: 60 };
  const out: StageTimes[] = [];
  for (const img of images) {
    const n = img.width * img.height > 4e6 ? 8 : 20;
    const dec: number[] = [], ren: number[] = [], fo: number[] = [], job: number[] = [], ren0: number[] = [];
    let decodedWidth = 0, decodedHeight = 0, rows = 0;
    const job1 = async () => {
      const t = performance.now();
      const j = await worker.runRenderJob({
        source: { kind: 'bytes', bytes: new Uint8Array(img.data) },
        params: { columns },
        maxBytes: limits.maxBytes,
        maxPixels: limits.maxPixels,
        decodeTimeoutSeconds: 60,
      });
      if (!j.ok) throw new Error(`worker job failed on ${img.label}: ${j.detail}`);
      return performance.now() - t;
    };
    for (let i = 0; i < n + 3; i++) {
      // The whole job and the separate stages alternate in order (the second of a pair pays more GC).
      const jobFirst = i % 2 === 1;
      const tj = jobFirst ? await job1() : 0;
      const t0 = performance.now();
      // The decode width the worker asks for.
      const decoded = await node.decodeImage(new Uint8Array(img.data), { ...limits, targetWidth: columns * pxPerColumn });
      const t1 = performance.now();
      const result = core.render(decoded, { columns });
      const t2 = performance.now();
      fmt.formatResult(result);
      const t3 = performance.now();
      core.render(decoded, { columns, autoOptimize: 0 });
      const t4 = performance.now();
      const tj2 = jobFirst ? tj : await job1();
      if (i >= 3) {
        dec.push(t1 - t0); ren.push(t2 - t1); fo.push(t3 - t2); ren0.push(t4 - t3); job.push(tj2);
      }
      decodedWidth = decoded.width; decodedHeight = decoded.height; rows = result.rows;
    }
    const cpu = await jobCpuInChild(img, columns, 4 * n);
    out.push({ image: img.label, decodedWidth, decodedHeight, rows, runs: n, decodeMs: median(dec), renderMs: median(ren), formatMs: median(fo), jobMs: median(job), renderNoDirectorMs: median(ren0), pxPerColumn, cpu });
  }
  return out;
}

/** bench/lib/job-cpu-child.ts bundled by this run (once, not per image), or null before the first image. */
let jobCpuBundle: string | null = null;

/** The worker job's CPU by thread and the decode's alone (bench/lib/job-cpu-child.ts), or null. */
async function jobCpuInChild(img: JpegInput, columns: number, jobs: number): Promise<StageTimes['cpu']> {
  if (jobCpuBundle === null) {
    const out = join(OUT_DIR, 'job-cpu-child.mjs');
    buildSync({ entryPoints: [join(BENCH_DIR, 'lib/job-cpu-child.ts')], bundle: true, format: 'esm', platform: 'node', external: ['sharp'], outfile: out, logLevel: 'warning' });
    jobCpuBundle = out;
  }
  const bundle = jobCpuBundle;
  const r = await run(process.execPath, [bundle, join(ROOT, 'dist'), img.file, String(columns), String(jobs)], { cwd: ROOT });
  if (r.code !== 0) {
    log(`job CPU child failed on ${img.label}: ${r.stderr.toString().trim().split('\n')[0]}`);
    return null;
  }
  return JSON.parse(r.stdout.toString()) as StageTimes['cpu'];
}

// --- Server runs --------------------------------------------------------------------------------

interface LevelResult extends LoadResult {
  image: string;
  /** Server CPU per 2xx image, ms: whole process and main thread. */
  serverCpuMsPerImage: number | null;
  serverMainThreadMsPerImage: number | null;
  /** Server CPU use during the run, % of one core. */
  serverCpuPercent: number | null;
  serverThreads: Record<string, number> | null;
  /** Server CPU per image by kind of thread, ms (from /proc thread names). */
  perImageByThread: { main: number; workers: number; libvips: number; other: number } | null;
  /** CPU used on the machine by everything but the server and this process during the run, % of one core. */
  otherCpuPercent: number | null;
}

interface SampleCheck {
  image: string;
  status: number;
  contentType: string;
  rows: number;
  widths: number[];
  ok: boolean;
  problem: string | null;
  autoDirector: string | null;
  traceparent: boolean;
}

function renderUrl(server: ServerProcess, req: RequestBody): string {
  return `${server.url}${req.path}`;
}

/** The first text block of an MCP tools/call reply, and whether the result is an error. */
function mcpText(reply: string): { text: string; isError: boolean } {
  try {
    const r = JSON.parse(reply) as { result?: { content?: { type: string; text?: string }[]; isError?: boolean } };
    return { text: r.result?.content?.find((c) => c.type === 'text')?.text ?? reply, isError: r.result?.isError === true };
  } catch {
    return { text: reply, isError: true };
  }
}

async function checkSample(server: ServerProcess, img: JpegInput, req: RequestBody, columns: number): Promise<SampleCheck> {
  const r = await fetch(renderUrl(server, req), { method: 'POST', headers: { 'content-type': req.contentType }, body: req.body });
  const reply = await r.text();
  const contentType = r.headers.get('content-type') ?? '';
  // An MCP reply carries the art as its first text block (an error as a result with isError).
  const mcp = req.carrier === 'mcp' ? mcpText(reply) : null;
  const text = mcp ? mcp.text : reply;
  const lines = text.replace(/\n$/, '').split('\n');
  const widths = [...new Set(lines.map((l) => [...l].length))].sort((a, b) => a - b);
  const problems: string[] = [];
  if (r.status !== 200) problems.push(`status ${r.status}: ${text.slice(0, 200)}`);
  if (mcp?.isError) problems.push(`tool error: ${text.slice(0, 200)}`);
  if (!contentType.startsWith(req.carrier === 'mcp' ? 'application/json' : 'text/plain')) problems.push(`content-type ${contentType}`);
  if (r.status === 200 && (widths.length !== 1 || widths[0] !== columns)) problems.push(`row widths ${widths.join('/')} instead of ${columns}`);
  return {
    image: img.label,
    status: r.status,
    contentType,
    rows: lines.length,
    widths,
    ok: problems.length === 0,
    problem: problems.length ? problems.join('; ') : null,
    autoDirector: r.headers.get('x-auto-director'),
    traceparent: r.headers.has('traceparent'),
  };
}

function cpuFigures(d: CpuSample | null, ok: number, seconds: number) {
  if (!d || ok === 0) return { serverCpuMsPerImage: null, serverMainThreadMsPerImage: null, serverCpuPercent: null, serverThreads: null, perImageByThread: null };
  const threads: Record<string, number> = {};
  for (const [k, v] of Object.entries(d.byThread)) if (v > 0.005) threads[k] = Math.round(v * 1000) / 1000;
  return {
    serverCpuMsPerImage: (d.total * 1000) / ok,
    serverMainThreadMsPerImage: (d.main * 1000) / ok,
    serverCpuPercent: (d.total / seconds) * 100,
    serverThreads: threads,
    // Thread names: the main thread (event loop); "node" = the piscina workers' JS threads (render,
    // format, message passing) and also V8's GC and compiler helpers and libuv's pool (sharp's
    // pipeline calls): Node names them all alike; "libvips worker" = sharp's decode; anything else.
    perImageByThread: (() => {
      const ms = (x: number) => (x * 1000) / ok;
      const workers = d.byThread['node'] ?? 0;
      const libvips = d.byThread['libvips worker'] ?? 0;
      return { main: ms(d.main), workers: ms(workers), libvips: ms(libvips), other: ms(Math.max(0, d.total - d.main - workers - libvips)) };
    })(),
  };
}

async function measureLevel(server: ServerProcess, img: JpegInput, req: RequestBody, columns: number, connections: number, seconds: number): Promise<LevelResult> {
  const c0 = server.cpu();
  const sys0 = systemBusySeconds();
  const self0 = selfAndChildrenSeconds();
  const t0 = performance.now();
  const r = await runLoad({ url: renderUrl(server, req), request: req, connections, seconds });
  const wall = (performance.now() - t0) / 1000;
  const c1 = server.cpu();
  const sys1 = systemBusySeconds();
  const self1 = selfAndChildrenSeconds();
  const d = cpuDelta(c0, c1);
  const other = d && sys0 !== null && sys1 !== null && self0 !== null && self1 !== null
    ? Math.max(0, ((sys1 - sys0 - d.total - (self1 - self0)) / wall) * 100) : null;
  return { image: img.label, ...r, ...cpuFigures(d, r.ok, r.seconds), otherCpuPercent: other };
}

// --- CPU profiles -------------------------------------------------------------------------------

interface ProfileNode { id: number; callFrame: { functionName: string; url: string; lineNumber: number }; children?: number[] }
interface CpuProfile { nodes: ProfileNode[]; samples: number[]; timeDeltas: number[]; startTime: number; endTime: number }

/** Self time by function (top `n`) and by file group for one .cpuprofile. */
function summarizeProfile(file: string, n = 12): { totalMs: number; top: { fn: string; ms: number; pct: number }[]; groups: Record<string, number> } {
  const p = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
  const byId = new Map(p.nodes.map((x) => [x.id, x]));
  const self = new Map<number, number>();
  for (let i = 0; i < p.samples.length; i++) self.set(p.samples[i]!, (self.get(p.samples[i]!) ?? 0) + (p.timeDeltas[i] ?? 0) / 1000);
  const byFn = new Map<string, number>();
  const groups: Record<string, number> = {};
  let totalMs = 0;
  for (const [id, ms] of self) {
    const node = byId.get(id)!;
    const { functionName, url, lineNumber } = node.callFrame;
    const short = url.replace(/^file:\/\//, '').replace(ROOT + '/', '');
    const key = `${functionName || '(anonymous)'} ${short ? `${short}:${lineNumber + 1}` : ''}`.trim();
    byFn.set(key, (byFn.get(key) ?? 0) + ms);
    const group = functionName === '(idle)' || functionName === 'atomicsWaitLoop' ? 'idle'
      : functionName === '(garbage collector)' ? 'GC'
      : /dist\/core\/format\//.test(short) ? 'format (dist/core/format)'
      : /dist\/core\//.test(short) ? 'render (dist/core)'
      : /dist\/node\/|node_modules\/sharp/.test(short) ? 'decode (sharp, dist/node)'
      : /dist\/server\//.test(short) ? 'server code (dist/server)'
      : /node_modules\/(fastify|@fastify|find-my-way|avvio|light-my-request|pino|busboy|@fastify\/busboy|piscina)/.test(short) ? 'HTTP framework (fastify, multipart, pino, piscina)'
      : /^node:|^$/.test(short) ? `node internals / native (${functionName.startsWith('(') ? functionName : 'node:*'})`
      : 'other';
    groups[group] = (groups[group] ?? 0) + ms;
    if (group !== 'idle') totalMs += ms;
  }
  const top = [...byFn].filter(([k]) => !k.startsWith('(idle)') && !k.startsWith('atomicsWaitLoop ')).sort((a, b) => b[1] - a[1]).slice(0, n).map(([fn, ms]) => ({ fn, ms, pct: (ms / totalMs) * 100 }));
  return { totalMs, top, groups };
}

/** CPU % (of one core) the machine spends busy over `ms`, this process excluded. */
async function machineLoad(ms: number): Promise<number | null> {
  const a = systemBusySeconds();
  const s0 = selfAndChildrenSeconds();
  await new Promise((r) => setTimeout(r, ms));
  const b = systemBusySeconds();
  const s1 = selfAndChildrenSeconds();
  if (a === null || b === null || s0 === null || s1 === null) return null;
  return Math.max(0, ((b - a - (s1 - s0)) / (ms / 1000)) * 100);
}

// --- Scaling ------------------------------------------------------------------------------------

interface ScalingRow {
  image: string;
  workers: number;
  connections: number;
  imagesPerSecond: number;
  speedup: number;
  p50: number;
  p99: number;
  mainThreadMsPerImage: number | null;
  serverCpuMsPerImage: number | null;
  /** This process's CPU (autocannon, the load generator) in % of one core: near 100, it bounds the row. */
  loadGenCpuPercent: number;
  failed: number;
}

/** images/s at each worker count: a fresh server per count, 2 connections per worker. */
async function scaling(args: Args, built: BuildOutcome, tStart: number): Promise<void> {
  const cores = availableParallelism();
  const columns = args.columns;
  const quiet = await machineLoad(2000);
  const images = await serverBenchImages(args.images, log);
  const rows: ScalingRow[] = [];
  let path = '';
  for (const img of images) {
    const req = requestBody(args.carrier, img.data, `photo-${img.width}x${img.height}.jpg`, columns);
    path = req.path;
    for (const workers of args.workers) {
      const connections = 2 * workers;
      progress(`scaling ${img.label}: ${workers} worker(s), ${connections} connections, ${args.duration} s ...`);
      const server = await startServerProcess({
        label: `${workers} workers`,
        entry: ENTRY,
        cwd: ROOT,
        env: { V2A_WORKERS: String(workers), V2A_QUEUE_LIMIT: String(Math.max(64, connections * 4)), V2A_RATE_LIMIT: '0', V2A_RENDER_TIMEOUT_MS: '120000', LOG_LEVEL: 'info' },
        logFile: join(OUT_DIR, 'server-bench-scaling.log'),
      });
      try {
        const check = await checkSample(server, img, req, columns);
        if (!check.ok) throw new Error(`sample check failed with ${workers} workers (${img.label}): ${check.problem}`);
        if (args.warmup > 0) await runLoad({ url: renderUrl(server, req), request: req, connections, seconds: args.warmup });
        const u0 = process.cpuUsage();
        const t0 = performance.now();
        const l = await measureLevel(server, img, req, columns, connections, args.duration);
        const u1 = process.cpuUsage(u0);
        const loadGenCpuPercent = ((u1.user + u1.system) / 1000 / (performance.now() - t0)) * 100;
        const one = rows.find((r) => r.image === img.label && r.workers === 1);
        rows.push({
          image: img.label, workers, connections, imagesPerSecond: l.imagesPerSecond,
          speedup: one ? l.imagesPerSecond / one.imagesPerSecond : workers === 1 ? 1 : NaN,
          p50: l.latencyMs.p50, p99: l.latencyMs.p99,
          mainThreadMsPerImage: l.serverMainThreadMsPerImage, serverCpuMsPerImage: l.serverCpuMsPerImage, loadGenCpuPercent,
          failed: l.non2xx + l.errors + l.timeouts,
        });
      } finally {
        await server.stop();
      }
    }
  }
  await stopAllServers();
  console.log('');
  console.log(`Scaling: POST ${path} (${args.carrier}), a fresh server per worker count, 2 connections per worker,`);
  console.log(`${args.warmup} s warm-up then ${args.duration} s; ${cores} cores (${cpus()[0]?.model ?? '?'}), node ${process.version}; load generator on the same cores`);
  if (args.workers.some((w) => w > cores)) console.log(`(more workers than the ${cores} cores here: those rows show the shape only, not scaling)`);
  console.log(table([
    ['image', 'workers', 'conns', 'images/s', 'x 1 worker', 'p50 ms', 'p99 ms', 'main thr ms/img', 'srv CPU ms/img', 'load gen CPU %', 'failed'],
    ...rows.map((r) => [r.image, String(r.workers), String(r.connections), fix(r.imagesPerSecond, 1), fix(r.speedup, 2), fix(r.p50, 1), fix(r.p99, 1), fix(r.mainThreadMsPerImage, 1), fix(r.serverCpuMsPerImage, 1), fix(r.loadGenCpuPercent, 0), String(r.failed)]),
  ]));
  console.log('(main thr = the event loop: HTTP, reading the body (a form is parsed in the worker), hand-off to the workers; its ms per image bounds images/s at 1000 / ms, whatever the worker count; load gen = this process, autocannon on one thread, in % of a core: near 100 it, not the server, bounds the row)');
  const file = writeJson('server-scaling.json', {
    bench: 'server-scaling', date: new Date().toISOString(), v2aVersion: VERSION, node: process.version,
    cpus: { count: cores, model: cpus()[0]?.model }, build: built, options: args, columns, rows,
    machine: { otherLoadBeforePercent: quiet }, seconds: (performance.now() - tStart) / 1000,
  });
  progress(`wrote ${rel(file)}`);
}

// --- Main ---------------------------------------------------------------------------------------

async function main(): Promise<void> {
  const tStart = performance.now();
  const args = parseArgs(process.argv.slice(2));
  const cores = availableParallelism();
  if (args.workersGiven && !args.scaling && args.workers.length !== 1) throw new Error(`--workers takes one count without --scaling\n${USAGE}`);
  const workers = args.workersGiven && !args.scaling ? args.workers[0]! : cores;
  const maxConc = Math.max(...args.concurrency);
  const queueLimit = Math.max(64, maxConc * 4);
  const columns = args.columns;

  let built: BuildOutcome = { ok: true, note: 'skipped (--no-build)' };
  if (args.build) built = await buildProject(ROOT, ENTRY, progress);
  else if (!existsSync(ENTRY)) throw new Error(`no ${rel(ENTRY)}: run without --no-build`);
  log(`build: ${built.note}`);
  if (args.scaling) return scaling(args, built, tStart);
  const programs = args.peers ? await ensurePeers(log) : new Set<string>();

  const quiet = await machineLoad(2000);
  if (quiet !== null) progress(`machine load before the bench: ${fix(quiet, 0)} % of one core (out of ${cores * 100} %)`);
  progress('images ...');
  const images = await serverBenchImages(args.images, log);
  const bodies = new Map(images.map((img) => [img.label, requestBody(args.carrier, img.data, `photo-${img.width}x${img.height}.jpg`, columns)]));
  const rowsOf = (img: JpegInput) => Math.max(1, Math.round((columns * img.height * CELL_ASPECT) / img.width));

  progress('stages in process ...');
  const stages = await stageTimes(images, columns);

  const baseEnv: Record<string, string> = {
    V2A_WORKERS: String(workers),
    V2A_QUEUE_LIMIT: String(queueLimit),
    V2A_RATE_LIMIT: '0',
    V2A_RENDER_TIMEOUT_MS: '120000',
    LOG_LEVEL: 'info',
  };
  const profDir = join(OUT_DIR, 'server-cpu-prof');
  if (args.cpuProf) {
    rmSync(profDir, { recursive: true, force: true });
    mkdirSync(profDir, { recursive: true });
  }

  const levels: LevelResult[] = [];
  const samples: SampleCheck[] = [];
  let serverStop: Awaited<ReturnType<ServerProcess['stop']>> | null = null;
  let exportCompare: Record<string, unknown> = { requested: args.compareExport };
  const exportRows: { image: string; connections: number; offIps: number; onIps: number; costPct: number; offP50: number; onP50: number; offP99: number; onP99: number }[] = [];
  let sink: OtlpSink | null = null;
  let off: ServerProcess | null = null;
  let on: ServerProcess | null = null;
  try {
    progress('starting the server ...');
    off = await startServerProcess({
      label: 'export off',
      entry: ENTRY,
      cwd: ROOT,
      env: baseEnv,
      nodeArgs: args.cpuProf ? ['--cpu-prof', `--cpu-prof-dir=${profDir}`] : [],
      logFile: join(OUT_DIR, 'server-bench-server.log'),
    });
    progress(`server at ${off.url} (pid ${off.pid})`);
    for (const img of images) samples.push(await checkSample(off, img, bodies.get(img.label)!, columns));
    for (const s of samples) if (!s.ok) log(`SAMPLE CHECK FAILED (${s.image}): ${s.problem}`);

    for (const img of images) {
      const req = bodies.get(img.label)!;
      if (args.warmup > 0) {
        progress(`${img.label}: warm-up ${args.warmup} s ...`);
        await runLoad({ url: renderUrl(off, req), request: req, connections: cores, seconds: args.warmup });
      }
      for (const c of args.concurrency) {
        progress(`${img.label}: ${c} connections, ${args.duration} s ...`);
        levels.push(await measureLevel(off, img, req, columns, c, args.duration));
      }
    }

    // --- Export on vs off --------------------------------------------------------------------
    if (args.compareExport) {
      progress('export on vs off ...');
      const key = 'bench-platform-key-not-a-secret';
      sink = await startOtlpSink(key);
      on = await startServerProcess({
        label: 'export on',
        entry: ENTRY,
        cwd: ROOT,
        env: { ...baseEnv, PLATFORM_API_KEY: key, OTEL_EXPORTER_OTLP_ENDPOINT: sink.url },
        logFile: join(OUT_DIR, 'server-bench-server-export.log'),
      });
      // Does this build export at all? A few renders, then wait for the batch processor's flush.
      const probeImg = images[0]!;
      for (let i = 0; i < 4; i++) await checkSample(on, probeImg, bodies.get(probeImg.label)!, columns);
      const exported = await sink.waitForRequests(1, 8000);
      exportCompare = { requested: true, sink: sink.url, probeRenders: 4, exported, sinkAfterProbe: structuredClone(sink.stats) };
      if (exported) {
        const conn = args.concurrency.includes(cores * 2) ? cores * 2 : maxConc;
        const half = Math.max(2, args.duration / 2);
        for (const img of images) {
          const req = bodies.get(img.label)!;
          await runLoad({ url: renderUrl(on, req), request: req, connections: cores, seconds: Math.min(args.warmup, 3) });
          const acc = { off: [] as LoadResult[], on: [] as LoadResult[] };
          for (let round = 0; round < 2; round++) {
            for (const which of (round % 2 ? ['on', 'off'] : ['off', 'on']) as ('off' | 'on')[]) {
              progress(`${img.label}: export ${which}, ${conn} connections, ${half} s ...`);
              acc[which].push(await runLoad({ url: renderUrl(which === 'on' ? on : off, req), request: req, connections: conn, seconds: half }));
            }
          }
          const ips = (rs: LoadResult[]) => rs.reduce((s, r) => s + r.ok, 0) / rs.reduce((s, r) => s + r.seconds, 0);
          const p = (rs: LoadResult[], k: 'p50' | 'p99') => median(rs.map((r) => r.latencyMs[k]));
          const offIps = ips(acc.off), onIps = ips(acc.on);
          exportRows.push({ image: img.label, connections: conn, offIps, onIps, costPct: ((offIps - onIps) / offIps) * 100, offP50: p(acc.off, 'p50'), onP50: p(acc.on, 'p50'), offP99: p(acc.off, 'p99'), onP99: p(acc.on, 'p99') });
        }
        exportCompare = { ...exportCompare, rows: exportRows, sinkTotal: structuredClone(sink.stats), targetCostPct: 5, targetMet: exportRows.every((r) => r.costPct <= 5) };
      }
    }
  } finally {
    progress('stopping the server(s) ...');
    if (on) await on.stop();
    if (off) serverStop = await off.stop();
    if (sink) await sink.close();
    await stopAllServers();
  }

  // --- chafa -------------------------------------------------------------------------------------
  const peers: (ProcessLoadResult & { image: string; rows: number; command: string; gridProblem: string | null; cpuMsPerImage: number | null; otherCpuPercent: number | null })[] = [];
  if (programs.has('chafa')) {
    for (const img of images) {
      const rows = rowsOf(img);
      const cargs = chafaArgs(img.file, columns, rows);
      progress(`chafa ${img.label}: ${cores} processes at a time, ${args.duration} s ...`);
      await runProcessLoad('chafa', cargs, cores, Math.min(1, args.duration)); // warm the page cache
      const sys0 = systemBusySeconds();
      const self0 = selfAndChildrenSeconds();
      const r = await runProcessLoad('chafa', cargs, cores, args.duration, { ...process.env, TERM: 'dumb', COLORTERM: '' });
      const sys1 = systemBusySeconds();
      const self1 = selfAndChildrenSeconds();
      // This process and its exited children: the chafa processes (plus this loop's own small cost).
      const mine = self0 !== null && self1 !== null ? self1 - self0 : null;
      const other = mine !== null && sys0 !== null && sys1 !== null ? Math.max(0, ((sys1 - sys0 - mine) / r.elapsedSeconds) * 100) : null;
      const grid = r.sampleOutput !== null ? parseGrid(r.sampleOutput, columns, rows).problem : 'no successful run';
      peers.push({
        ...r, sampleOutput: null, image: img.label, rows, command: ['chafa', ...cargs].join(' ').replaceAll(ROOT + '/', ''), gridProblem: grid,
        cpuMsPerImage: mine !== null && r.runs ? (mine * 1000) / (r.runs + r.failures) : null, otherCpuPercent: other,
      });
    }
  }

  // --- Report ------------------------------------------------------------------------------------
  const carrierText = { multipart: 'multipart/form-data (file field image)', json: 'application/json (imageBase64)', mcp: 'an MCP tools/call of render_ascii (imageBase64) to /api/mcp' }[args.carrier];
  console.log('');
  console.log(`v2a ${VERSION} server (node dist/server/main.cjs on 127.0.0.1): ${workers} workers, V2A_RATE_LIMIT=0, V2A_QUEUE_LIMIT=${queueLimit}, LOG_LEVEL=info`);
  console.log(`${cores} cores (${cpus()[0]?.model ?? '?'}), node ${process.version}; load generator (autocannon) in this process, on the same cores`);
  const busiest = Math.max(quiet ?? 0, ...levels.map((l) => l.otherCpuPercent ?? 0), ...peers.map((p) => p.otherCpuPercent ?? 0));
  console.log(`other processes on the machine: ${fix(quiet, 0)} % of one core before the bench, up to ${fix(busiest, 0)} % during it (see "other load %")`);
  if (busiest > 25) console.log(`WARNING: the machine was busy with other work (up to ${fix(busiest, 0)} % of ${cores * 100} %): throughput and tail latency below are pessimistic and noisy; CPU ms per image is the steadier comparison`);
  console.log('');
  console.log(`Inputs (JPEG q90, ${{ multipart: 'multipart', json: 'JSON base64', mcp: 'MCP tools/call, base64' }[args.carrier]} request body):`);
  console.log(table([
    ['image', 'pixels', 'JPEG bytes', 'request bytes', 'source'],
    ...images.map((i) => [i.label, `${i.width}x${i.height}`, String(i.bytes), String(bodies.get(i.label)!.body.length), `${rel(i.file)} (${i.source})`]),
  ], { leftAlign: [4] }));
  console.log('');
  console.log('Sample reply check (one request per image before the load):');
  console.log(table([
    ['image', 'status', 'content-type', 'rows', 'row width', 'X-Auto-Director', 'check'],
    ...samples.map((s) => [s.image, String(s.status), s.contentType, String(s.rows), s.widths.join('/'), s.autoDirector ?? '-', s.ok ? 'ok' : `FAILED: ${s.problem}`]),
  ], { leftAlign: [2, 5, 6] }));

  console.log('');
  console.log(`Where a render's time goes: in process, one thread, dist build, sharp with 1 thread (as a worker); median, ms`);
  console.log(table([
    ['image', 'decode', 'decoded to', 'render', 'format', 'sum', 'worker job', 'ceiling img/s (' + workers + ' workers)', 'render, autoOptimize 0'],
    ...stages.map((s) => [s.image, fix(s.decodeMs, 1), `${s.decodedWidth}x${s.decodedHeight}`, fix(s.renderMs, 1), fix(s.formatMs, 2), fix(s.decodeMs + s.renderMs + s.formatMs, 1), fix(s.jobMs, 1), fix((workers * 1000) / s.jobMs, 1), fix(s.renderNoDirectorMs, 1)]),
  ]));
  console.log(`(decode = sharp/libvips incl. shrink-on-load to ${stages[0]?.pxPerColumn ?? '-'} px per column; render = Auto Director + glyph matching; format = text; worker job = render-worker.ts runRenderJob, all three)`);
  if (stages.some((s) => s.cpu)) {
    console.log('');
    console.log('CPU per image in a plain node process (ms, every thread, from /proc): the worker job on its own thread, in libvips\' threads and in the');
    console.log("process's other threads (V8's GC and compiler helpers, libuv's pool, where sharp's pipeline calls run); the decode alone, every thread;");
    console.log("the decode's floor: the JPEG decoded at 1/8 DCT scale and nothing else (every coefficient is still entropy-decoded)");
    console.log(table([
      ['image', 'job thread', 'libvips', 'other', 'job total', 'decode alone', 'decode floor'],
      ...stages.filter((s) => s.cpu).map((s) => [s.image, fix(s.cpu!.job.thread, 1), fix(s.cpu!.job.libvips, 1), fix(s.cpu!.job.other, 1), fix(s.cpu!.job.total, 1), fix(s.cpu!.decode, 1), fix(s.cpu!.decodeFloor, 1)]),
    ]));
  }

  console.log('');
  console.log(`Load: POST ${args.carrier === 'mcp' ? `/api/mcp (columns=${columns})` : `/api/v1/render?columns=${columns}`}, ${carrierText}; autocannon, no pipelining; ${args.duration} s per level after a ${args.warmup} s warm-up per image`);
  console.log(table([
    ['image', 'conns', 'images/s', 'p50 ms', 'p90 ms', 'p99 ms', 'p99/p50', 'max ms', '2xx', 'non-2xx', 'errors', 'srv CPU ms/img', 'main thr ms/img', 'srv CPU %', 'client CPU %', 'other load %'],
    ...levels.map((l) => [
      l.image, String(l.connections), fix(l.imagesPerSecond, 1), fix(l.latencyMs.p50, 1), fix(l.latencyMs.p90, 1), fix(l.latencyMs.p99, 1),
      fix(l.latencyMs.p99 / l.latencyMs.p50, 2), fix(l.latencyMs.max, 1), String(l.ok), String(l.non2xx), String(l.errors + l.timeouts),
      fix(l.serverCpuMsPerImage, 1), fix(l.serverMainThreadMsPerImage, 1), fix(l.serverCpuPercent, 0), fix(l.clientCpuPercent, 0), fix(l.otherCpuPercent, 0),
    ]),
  ]));
  console.log(`(srv CPU = the server process, all threads, from /proc; main thr = its event loop: HTTP, reading the body, hand-off; client = autocannon in`);
  console.log(`this process; other load = CPU the rest of the machine used meanwhile, from /proc/stat: % of one core, out of ${cores * 100} %)`);
  if (levels.some((l) => l.perImageByThread)) {
    console.log('');
    console.log('Server CPU per image under load, by thread (ms, from /proc): main = event loop (HTTP, reading the body, hand-off); workers = the render');
    console.log("threads (their JavaScript: render, format, messages; and the other threads named node: V8's GC and compiler helpers, libuv's pool,");
    console.log("where sharp's pipeline calls run); libvips = sharp's decode threads; other = any other thread");
    console.log(table([
      ['image', 'conns', 'main', 'workers', 'libvips', 'other', 'total'],
      ...levels.filter((l) => l.perImageByThread).map((l) => {
        const t = l.perImageByThread!;
        return [l.image, String(l.connections), fix(t.main, 1), fix(t.workers, 1), fix(t.libvips, 1), fix(t.other, 1), fix(l.serverCpuMsPerImage, 1)];
      }),
    ]));
  }
  for (const l of levels) if (l.non2xx || l.errors) log(`  ${l.image} @${l.connections}: status counts ${JSON.stringify(l.statusCounts)}${l.errorSamples.length ? `, errors: ${l.errorSamples.join(' | ')}` : ''}`);

  if (peers.length) {
    console.log('');
    console.log(`chafa (${peerVersion('chafa')}), one process per image, ${cores} at a time, ${args.duration} s; images/s = ${cores} / mean process time`);
    console.log(table([
      ['image', 'images/s', '(count/elapsed)', 'p50 ms', 'p99 ms', 'runs', 'failures', 'CPU ms/img', 'other load %', 'grid check'],
      ...peers.map((p) => [p.image, fix(p.imagesPerSecond, 1), fix(p.imagesPerSecondElapsed, 1), fix(p.latencyMs.p50, 1), fix(p.latencyMs.p99, 1), String(p.runs), String(p.failures), fix(p.cpuMsPerImage, 1), fix(p.otherCpuPercent, 0), p.gridProblem ?? `ok (${columns}x${p.rows})`]),
    ], { leftAlign: [9] }));
    console.log(`command: ${peers[0]!.command.replace(/ \S+$/, ' FILE')}`);
  }

  console.log('');
  const ratioRows: { image: string; bestConns: number; v2a: number; chafa: number | null; ratio: number | null; met: boolean | null; v2aCpuMs: number | null; chafaCpuMs: number | null; cpuRatio: number | null }[] = [];
  for (const img of images) {
    const ls = levels.filter((l) => l.image === img.label);
    const best = ls.reduce((a, b) => (b.imagesPerSecond > a.imagesPerSecond ? b : a), ls[0]!);
    const p = peers.find((x) => x.image === img.label);
    const ratio = p && p.imagesPerSecond > 0 ? best.imagesPerSecond / p.imagesPerSecond : null;
    const v2aCpuMs = best.serverCpuMsPerImage;
    const chafaCpuMs = p?.cpuMsPerImage ?? null;
    ratioRows.push({
      image: img.label, bestConns: best.connections, v2a: best.imagesPerSecond, chafa: p?.imagesPerSecond ?? null, ratio, met: ratio === null ? null : ratio >= 3,
      v2aCpuMs, chafaCpuMs, cpuRatio: v2aCpuMs !== null && chafaCpuMs !== null ? chafaCpuMs / v2aCpuMs : null,
    });
  }
  console.log(`v2a / chafa, images per second on the same ${cores} cores (v2a at its best concurrency):`);
  console.log(table([
    ['image', 'v2a images/s', 'at conns', 'chafa images/s', 'v2a/chafa', 'v2a CPU ms/img', 'chafa CPU ms/img', 'chafa/v2a CPU', 'per conns'],
    ...ratioRows.map((r) => {
      const p = peers.find((x) => x.image === r.image);
      const per = p ? levels.filter((l) => l.image === r.image).map((l) => `${l.connections}: ${fix(l.imagesPerSecond / p.imagesPerSecond, 2)}`).join(', ') : '-';
      return [r.image, fix(r.v2a, 1), String(r.bestConns), fix(r.chafa, 1), r.ratio === null ? '-' : `${fix(r.ratio, 2)}x`, fix(r.v2aCpuMs, 1), fix(r.chafaCpuMs, 1), r.cpuRatio === null ? '-' : `${fix(r.cpuRatio, 2)}x`, per];
    }),
  ], { leftAlign: [8] }));
  console.log('(CPU ms/img: server process CPU per image vs the chafa processes\' CPU per image; chafa/v2a CPU is the images/s ratio to expect on otherwise idle cores)');
  // What 3x chafa leaves per image, beside what the decode alone costs (measured in process above).
  for (const r of ratioRows) {
    const st = stages.find((s) => s.image === r.image);
    if (r.chafa === null || !st?.cpu) continue;
    const budget = (cores * 1000) / (3 * r.chafa);
    console.log(`${r.image}: 3x chafa's images/s needs at most ${fix(budget, 1)} ms of server CPU per image on ${cores} cores; in a plain node process the decode alone takes ${fix(st.cpu.decode, 1)} and the whole job ${fix(st.cpu.job.total, 1)}, under load ${fix(r.v2aCpuMs, 1)}`);
    // No decode can cost less than the 1/8-scale one; the render (one thread, warm) is the core's
    // own work as it stands. What the budget leaves beyond both is for the rest of the decode, HTTP,
    // the hand-off and garbage collection.
    const least = st.cpu.decodeFloor + st.renderMs;
    console.log(`${r.image}: the decode's floor (1/8 scale) ${fix(st.cpu.decodeFloor, 1)} + the render alone ${fix(st.renderMs, 1)} = ${fix(least, 1)} ms, ${fix((100 * least) / budget, 0)} % of that budget`);
  }

  const throughputMet = ratioRows.every((r) => r.met === true);
  const throughputMeasured = ratioRows.every((r) => r.met !== null);
  const tailBad = levels.filter((l) => !(l.latencyMs.p99 <= 3 * l.latencyMs.p50));
  const errorsSeen = levels.some((l) => l.non2xx || l.errors || l.timeouts);
  console.log('');
  console.log(`target >= 3x chafa's images per second: ${!throughputMeasured ? 'NOT MEASURED (chafa unavailable)' : throughputMet ? 'MET' : 'MISSED'} (${ratioRows.map((r) => `${r.image} ${r.ratio === null ? '-' : fix(r.ratio, 2) + 'x'}`).join(', ')})`);
  const tailText = levels.map((l) => `${l.image}@${l.connections} ${fix(l.latencyMs.p99 / l.latencyMs.p50, 2)}`).join(', ');
  console.log(`target p99 <= 3x p50: ${tailBad.length === 0 ? 'MET at every level' : `MISSED at ${tailBad.map((l) => `${l.image}@${l.connections}`).join(', ')}`} (p99/p50: ${tailText})`);
  if (errorsSeen) console.log('NOTE: some requests failed or were not 2xx (see the table); only 2xx replies count as images');
  if (samples.some((s) => !s.ok)) console.log('NOTE: the sample reply check FAILED (see above)');

  console.log('');
  if (!args.compareExport) {
    console.log('export on vs off: not measured (run with --compare-export)');
  } else if (exportCompare.exported !== true) {
    console.log(`export on vs off: NOT AVAILABLE: with PLATFORM_API_KEY and OTEL_EXPORTER_OTLP_ENDPOINT set, the server sent nothing to the local OTLP sink within 8 s of 4 renders (trace export is not in this build yet: issue 4)`);
  } else {
    console.log(`export on vs off: same load on both servers in alternating rounds (2 x ${Math.max(2, args.duration / 2)} s each); sink got ${sink?.stats.requests} export requests, ${sink?.stats.bytes} bytes; key header: ${sink?.stats.keyHeaders.join(', ') || 'NOT SEEN'}`);
    console.log(table([
      ['image', 'conns', 'off images/s', 'on images/s', 'cost %', 'off p50', 'on p50', 'off p99', 'on p99'],
      ...exportRows.map((r) => [r.image, String(r.connections), fix(r.offIps, 1), fix(r.onIps, 1), fix(r.costPct, 1), fix(r.offP50, 1), fix(r.onP50, 1), fix(r.offP99, 1), fix(r.onP99, 1)]),
    ]));
    console.log(`target export cost <= 5 %: ${exportRows.every((r) => r.costPct <= 5) ? 'MET' : 'MISSED'}`);
  }

  // --- CPU profiles ------------------------------------------------------------------------------
  const profiles: Record<string, unknown>[] = [];
  if (args.cpuProf) {
    const files = existsSync(profDir) ? readdirSync(profDir).filter((f) => f.endsWith('.cpuprofile')) : [];
    console.log('');
    console.log(`CPU profiles (node --cpu-prof, ${rel(profDir)}): ${files.length} file(s), one per JavaScript thread; self time, idle excluded.`);
    console.log("(sharp's decode runs on libvips' own native threads, not in these profiles: see the by-thread table above)");
    console.log("(a worker's postMessage there includes the time it waits to run again after waking the event loop: perf put the call itself at 0.3 % of the process; bench/README.md)");
    for (const f of files) {
      const s = summarizeProfile(join(profDir, f));
      profiles.push({ file: f, ...s });
      if (s.totalMs < 50) continue;
      console.log('');
      console.log(`${f}: ${fix(s.totalMs / 1000, 2)} s busy`);
      console.log(table([['group', 'ms', '%'], ...Object.entries(s.groups).filter(([g]) => g !== 'idle').sort((a, b) => b[1] - a[1]).map(([g, ms]) => [g, fix(ms, 0), fix((ms / s.totalMs) * 100, 1)])]));
      console.log(table([['function (self time)', 'ms', '%'], ...s.top.map((t) => [t.fn.slice(0, 110), fix(t.ms, 0), fix(t.pct, 1)])]));
    }
    if (!files.length) console.log('(no profile was written: the server must exit normally for node to write them)');
  }

  const file = writeJson('server.json', {
    bench: 'server',
    date: new Date().toISOString(),
    v2aVersion: VERSION,
    node: process.version,
    cpus: { count: cores, model: cpus()[0]?.model },
    build: built,
    options: args,
    server: { entry: rel(ENTRY), workers, queueLimit, rateLimit: 0, host: '127.0.0.1', stop: serverStop, cpuProfiled: args.cpuProf },
    images: images.map(({ data: _data, ...i }) => ({ ...i, file: rel(i.file), requestBytes: bodies.get(i.label)!.body.length })),
    carrier: args.carrier,
    columns,
    samples,
    stages,
    levels,
    chafa: programs.has('chafa') ? { version: peerVersion('chafa'), concurrency: cores, results: peers } : null,
    ratios: ratioRows,
    targets: {
      throughput: { target: "v2a >= 3x chafa's images per second", met: throughputMeasured ? throughputMet : null },
      tail: { target: 'p99 <= 3x p50', met: tailBad.length === 0, missedAt: tailBad.map((l) => `${l.image}@${l.connections}`) },
    },
    exportCompare,
    machine: { otherLoadBeforePercent: quiet },
    profiles,
    seconds: (performance.now() - tStart) / 1000,
  });
  progress(`wrote ${rel(file)} (${fix((performance.now() - tStart) / 1000, 0)} s)`);
}

process.once('SIGINT', () => {
  progress('interrupted: stopping the server(s) ...');
  void stopAllServers().finally(() => process.exit(130));
});

main().catch(async (e: unknown) => {
  console.error(e instanceof Error ? e.stack ?? e.message : e);
  await stopAllServers();
  process.exit(2);
});
