/**
 * Peak memory of the server per concurrent heavy render, for the pod's memory request/limit
 * (deploy/README.md "Sizing"). Starts the real server as the image runs it (dist/server/main.cjs:
 * `npm run build` first) once per case with
 * V2A_WORKERS = N, sends N renders of the heaviest accepted input at once, and reads the
 * process's resident set (VmRSS sampled every 10 ms, VmHWM at the end: worker threads and
 * libvips live in the same process). Heavy input: 50 MP (the V2A_MAX_IMAGE_PIXELS default), one
 * JPEG (shrink-on-load applies) and one PNG (no shrink-on-load: the whole image is decoded),
 * both under 16 MiB; 400 columns, colour JSON output.
 *
 *   npx tsx deploy/measure-memory.ts [workers...]      # default: 1 2 4
 *
 * Prints one line per case and the per-render ceiling: (peak - idle) / N, the largest over cases.
 * Linux only (/proc). Traffic stays on 127.0.0.1.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import net, { type AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import sharp from 'sharp';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const MIB = 1024 * 1024;
const WIDTH = 8660;
const HEIGHT = 5773; // 49,994,180 pixels

function procKiB(pid: number, field: 'VmRSS' | 'VmHWM'): number {
  const m = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) : 0;
}

async function freePort(): Promise<number> {
  const srv = net.createServer().listen(0, '127.0.0.1');
  await once(srv, 'listening');
  const { port } = srv.address() as AddressInfo;
  await new Promise((r) => srv.close(r));
  return port;
}

/** A 50 MP scene with texture (so the JPEG is large and the decode is real work). */
async function heavyImages(): Promise<Record<string, Buffer>> {
  const tile = Buffer.alloc(512 * 512 * 3);
  let seed = 7;
  for (let i = 0; i < tile.length; i++) {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    tile[i] = (i % 3) * 60 + ((seed >> 16) & 63);
  }
  const noise = await sharp(tile, { raw: { width: 512, height: 512, channels: 3 } }).png().toBuffer();
  const base = sharp({ create: { width: WIDTH, height: HEIGHT, channels: 3, background: { r: 90, g: 120, b: 160 } } })
    .composite([{ input: noise, tile: true, blend: 'overlay' }]);
  const raw = await base.raw().toBuffer();
  const from = () => sharp(raw, { raw: { width: WIDTH, height: HEIGHT, channels: 3 }, limitInputPixels: false });
  return {
    jpeg: await from().jpeg({ quality: 60 }).toBuffer(),
    png: await from().png({ compressionLevel: 9, palette: true, colours: 16 }).toBuffer(),
  };
}

async function measure(image: Buffer, kind: string, workers: number): Promise<{ idle: number; peak: number }> {
  const port = await freePort();
  const child = spawn(process.execPath, ['dist/server/main.cjs'], {
    cwd: ROOT,
    env: { ...process.env, PORT: String(port), HOST: '127.0.0.1', V2A_WORKERS: String(workers), V2A_QUEUE_LIMIT: '0', V2A_RATE_LIMIT: '0', LOG_LEVEL: 'warn', PLATFORM_API_KEY: '' },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const base = `http://127.0.0.1:${port}`;
  try {
    for (let i = 0; ; i++) {
      if (i > 200) throw new Error('server did not start');
      try {
        if ((await fetch(`${base}/api/health`)).ok) break;
      } catch { /* not yet */ }
      await new Promise((r) => setTimeout(r, 100));
    }
    // Warm the workers (module load, glyph tables) so idle includes what every render reuses.
    const small = await sharp({ create: { width: 64, height: 64, channels: 3, background: '#888' } }).png().toBuffer();
    await Promise.all(Array.from({ length: workers }, () => render(base, small, 'png')));
    await new Promise((r) => setTimeout(r, 500));
    const idle = procKiB(child.pid!, 'VmRSS');
    let sampled = idle;
    const timer = setInterval(() => { sampled = Math.max(sampled, procKiB(child.pid!, 'VmRSS')); }, 10);
    const results = await Promise.all(Array.from({ length: workers }, () => render(base, image, kind)));
    clearInterval(timer);
    for (const r of results) if (r !== 200) throw new Error(`render answered ${r}`);
    const peak = Math.max(sampled, procKiB(child.pid!, 'VmHWM'));
    return { idle: idle / 1024, peak: peak / 1024 };
  } finally {
    child.kill('SIGTERM');
    await once(child, 'exit');
  }
}

async function render(base: string, image: Buffer, kind: string): Promise<number> {
  const form = new FormData();
  form.set('image', new Blob([image], { type: `image/${kind}` }), `in.${kind}`);
  const res = await fetch(`${base}/api/v1/render?columns=400&format=json&color=true`, { method: 'POST', body: form });
  await res.arrayBuffer();
  return res.status;
}

const workerCounts = process.argv.slice(2).map(Number).filter((n) => n > 0);
const images = await heavyImages();
for (const [k, b] of Object.entries(images)) console.log(`${k}: ${(b.length / MIB).toFixed(1)} MiB, ${WIDTH}x${HEIGHT}`);
let ceiling = 0;
let idleMax = 0;
for (const workers of workerCounts.length ? workerCounts : [1, 2, 4]) {
  for (const [kind, image] of Object.entries(images)) {
    const { idle, peak } = await measure(image, kind, workers);
    const per = (peak - idle) / workers;
    ceiling = Math.max(ceiling, per);
    idleMax = Math.max(idleMax, idle);
    console.log(`${kind} workers=${workers}: idle ${idle.toFixed(0)} MiB, peak ${peak.toFixed(0)} MiB, per render ${per.toFixed(0)} MiB`);
  }
}
console.log(`idle (warmed) <= ${idleMax.toFixed(0)} MiB at the most workers; per concurrent heavy render <= ${ceiling.toFixed(0)} MiB`);
