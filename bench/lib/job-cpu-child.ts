/**
 * bench:server's CPU split of one worker job (bundled by bench/server.ts with esbuild and run in a
 * plain node process: neither tsx's loader nor the bench's own heap, whose collections V8's helper
 * threads would charge to the job, is in the figures). The dist build's worker job
 * (render-worker.ts runRenderJob, sharp with one thread as in a worker) on one JPEG, warmed up,
 * then `jobs` jobs, `jobs` decodes alone and `jobs` decodes at the floor, each timed by thread
 * from /proc. The floor: the JPEG decoded at 1/8 scale (libjpeg's DCT scaling, then nothing
 * else), which still entropy-decodes every coefficient: no decode at the size the render needs
 * can cost less.
 * argv: dist directory, JPEG file, columns, jobs. Prints JSON: ms of CPU per image.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import sharp from 'sharp';
import { cpuDelta, processCpu } from './server-proc.js';

type WorkerModule = typeof import('../../src/server/render-worker.js');
type NodeModule = typeof import('../../src/node/index.js');
type GeometryModule = typeof import('../../src/core/pipeline/geometry.js');

const [dist, file, columnsArg, jobsArg] = process.argv.slice(2) as [string, string, string, string];
const load = <T>(p: string) => import(pathToFileURL(join(dist, p)).href) as Promise<T>;
const worker = await load<WorkerModule>('server/render-worker.js'); // sharp with one thread, as a worker
const node = await load<NodeModule>('node/index.js');
const { DECODE_PIXELS_PER_COLUMN } = await load<GeometryModule>('core/pipeline/geometry.js');
const bytes = readFileSync(file);
const columns = Number(columnsArg), jobs = Number(jobsArg);
const limits = { maxPixels: 50_000_000, maxBytes: 64 * 1024 * 1024, timeoutSeconds: 60 };

async function job(): Promise<void> {
  const r = await worker.runRenderJob({ source: { kind: 'bytes', bytes: new Uint8Array(bytes) }, params: { columns }, maxBytes: limits.maxBytes, maxPixels: limits.maxPixels, decodeTimeoutSeconds: 60 });
  if (!r.ok) throw new Error(r.detail);
}
const decode = () => node.decodeImage(new Uint8Array(bytes), { ...limits, targetWidth: columns * DECODE_PIXELS_PER_COLUMN });
const { width = 8 } = await sharp(bytes).metadata();
const floor = () => sharp(bytes).resize({ width: Math.ceil(width / 8), kernel: 'nearest', fastShrinkOnLoad: true }).raw().toBuffer();

for (let i = 0; i < 20; i++) await job();
const c0 = processCpu(process.pid);
for (let i = 0; i < jobs; i++) await job();
const c1 = processCpu(process.pid);
for (let i = 0; i < jobs; i++) await decode();
const c2 = processCpu(process.pid);
for (let i = 0; i < jobs; i++) await floor();
const c3 = processCpu(process.pid);
const dj = cpuDelta(c0, c1), dd = cpuDelta(c1, c2), df = cpuDelta(c2, c3);
if (!dj || !dd || !df) {
  console.log('null');
} else {
  const ms = (seconds: number) => (seconds * 1000) / jobs;
  const libvips = dj.byThread['libvips worker'] ?? 0;
  console.log(JSON.stringify({
    job: { thread: ms(dj.main), libvips: ms(libvips), other: ms(dj.total - dj.main - libvips), total: ms(dj.total) },
    decode: ms(dd.total),
    decodeFloor: ms(df.total),
  }));
}
