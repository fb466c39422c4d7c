/**
 * A fresh server's first requests, with and without the workers' warm-up (V2A_WARM_UP):
 * `npx tsx bench/server-first.ts [--rounds 3] [--workers 2]` (after `npm run build`).
 *
 * Per round and setting, a fresh `dist/server/main.cjs` (bench/lib/server-proc.ts: ready once
 * /api/v1/health/ready answers 200), then three waves of `workers` requests at once (one per
 * worker), each the server bench's 1 MP JPEG as multipart at 120 columns. Printed: the time from
 * spawn to ready, and each wave's slowest request, as medians over the rounds (settings
 * alternate within a round, so both see the same load).
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { OUT_DIR } from './lib/images.js';
import { serverBenchImages } from './lib/server-images.js';
import { startServerProcess, stopAllServers } from './lib/server-proc.js';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const ENTRY = join(ROOT, 'dist/server/main.cjs');
const arg = (name: string, fallback: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : fallback;
};
const rounds = arg('rounds', 3), workers = arg('workers', 2);
if (!existsSync(ENTRY)) throw new Error('dist/server/main.cjs is missing: run npm run build first');

const [img] = await serverBenchImages(['1mp']);
const median = (v: number[]) => [...v].sort((a, b) => a - b)[v.length >> 1]!;
const results: Record<string, { ready: number[]; waves: number[][] }> = {};

async function wave(url: string): Promise<number> {
  const one = async () => {
    const form = new FormData();
    form.append('image', new Blob([img!.data], { type: 'image/jpeg' }), 'photo.jpg');
    const t0 = performance.now();
    const r = await fetch(`${url}/api/v1/render?columns=120`, { method: 'POST', body: form });
    await r.arrayBuffer();
    if (r.status !== 200) throw new Error(`render answered ${r.status}`);
    return performance.now() - t0;
  };
  return Math.max(...(await Promise.all(Array.from({ length: workers }, one))));
}

try {
  for (let r = 0; r < rounds; r++) {
    for (const warmUp of ['false', 'true']) {
      const t0 = performance.now();
      const server = await startServerProcess({
        label: `warm-up ${warmUp}`, entry: ENTRY, cwd: ROOT,
        env: { V2A_WORKERS: String(workers), V2A_WARM_UP: warmUp, V2A_RATE_LIMIT: '0', LOG_LEVEL: 'info' },
        logFile: join(OUT_DIR, 'server-first.log'),
      });
      const ready = performance.now() - t0;
      const waves = [await wave(server.url), await wave(server.url), await wave(server.url)];
      await server.stop();
      const res = (results[warmUp] ??= { ready: [], waves: [[], [], []] });
      res.ready.push(ready);
      waves.forEach((ms, i) => res.waves[i]!.push(ms));
    }
  }
} finally {
  await stopAllServers();
}

console.log(`fresh server, ${workers} workers, ${img!.label} JPEG at 120 columns, ${workers} requests at a time; medians of ${rounds} rounds (ms)`);
console.log('V2A_WARM_UP  spawn -> ready  1st wave  2nd wave  3rd wave');
for (const [warmUp, res] of Object.entries(results)) {
  console.log(`${warmUp.padEnd(11)}  ${median(res.ready).toFixed(0).padStart(14)}  ${res.waves.map((w) => median(w).toFixed(0).padStart(8)).join('  ')}`);
}
