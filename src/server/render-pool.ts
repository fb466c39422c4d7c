/**
 * The render worker pool: piscina threads running render-worker.ts, so decoding, rendering and
 * formatting never block the event loop (health checks stay prompt under load).
 *
 * - Size: `workers` threads, all started up front and kept (no idle timeout: libvips start-up is
 *   not free). Admission is bounded by our own counter: at most `workers` running plus
 *   `queueLimit` waiting; beyond that `run()` rejects at once with a 503 `overloaded` problem
 *   carrying Retry-After (piscina's own maxQueue also counts threads still starting up, which
 *   makes the bound depend on timing).
 * - The image bytes are transferred to the worker, not copied, when they own their ArrayBuffer.
 * - `timeoutMs` bounds queueing plus running; on expiry the task is aborted (a running one by
 *   terminating its thread, which piscina replaces) and the caller gets 503 `render-timeout`.
 *   A caller's signal (client gone) aborts likewise.
 * - `close()` lets queued and running renders finish, then stops the threads (piscina `close()`,
 *   not `destroy()`); new work is refused with 503 `shutting-down`.
 *
 * Worker file resolution: under tsx (tests, `tsx src/server/main.ts`) this module is a `.ts` file
 * and so is the worker; piscina's threads inherit `process.execArgv`, which then holds
 * `--import tsx`, so they can load TypeScript (checked: `.ts` loads, `.js` does not map to `.ts`
 * there). When the process runs TypeScript without that flag, it is added for the workers. From
 * dist/ both are plain `.js`.
 */
import { Piscina } from 'piscina';
// sharp's documentation: on glibc Linux the main thread must load sharp before worker threads do,
// so that its shared libraries stay loaded until every thread is done.
import 'sharp';
import { HttpProblem } from './problem.js';
import type { RenderJob, RenderOutcome } from './render-task.js';

export interface RenderPoolOptions {
  workers: number;
  queueLimit: number;
  timeoutMs: number;
  /** Told about worker errors not tied to a task (a crashed thread). */
  onError?: (err: unknown) => void;
}

export interface PoolStats {
  workers: number;
  running: number;
  queued: number;
  queueLimit: number;
  completed: number;
}

export interface RenderPool {
  run(job: RenderJob, signal?: AbortSignal): Promise<RenderOutcome>;
  stats(): PoolStats;
  /** Seconds a refused caller should wait before retrying. */
  retryAfterSeconds(): number;
  close(): Promise<void>;
}

/** The worker module next to this one, in this module's own language (.ts under tsx, .js in dist). */
export function workerLocation(): { filename: string; execArgv: string[] | undefined } {
  const here = import.meta.url;
  const typescript = /\.[cm]?ts$/.test(new URL(here).pathname);
  const filename = new URL(typescript ? './render-worker.ts' : './render-worker.js', here).href;
  let execArgv: string[] | undefined;
  if (typescript) {
    const args = process.execArgv;
    const hasTsx = args.some((a, i) => (/^--(import|loader|require)$/.test(a) && /^tsx(\/|$)/.test(args[i + 1] ?? '')) || /^--(import|loader|require)=tsx(\/|$)/.test(a));
    if (!hasTsx) execArgv = [...args, '--import', 'tsx'];
  }
  return { filename, execArgv };
}

/** A view that owns its whole ArrayBuffer can be transferred; anything else is copied first. */
function transferable(bytes: Uint8Array): Uint8Array {
  const buffer = bytes.buffer;
  if (buffer instanceof ArrayBuffer && bytes.byteOffset === 0 && bytes.byteLength === buffer.byteLength) return bytes;
  return bytes.slice();
}

export function createRenderPool(opts: RenderPoolOptions): RenderPool {
  const { filename, execArgv } = workerLocation();
  const piscina = new Piscina({
    filename,
    minThreads: opts.workers,
    maxThreads: opts.workers,
    idleTimeout: Infinity,
    concurrentTasksPerWorker: 1,
    recordTiming: false,
    ...(execArgv ? { execArgv } : {}),
  });
  piscina.on('error', (err: unknown) => opts.onError?.(err));

  const capacity = opts.workers + opts.queueLimit;
  let active = 0;
  let completed = 0;
  let closing = false;
  /** Moving average of task durations in ms (for Retry-After). */
  let meanMs = 1000;

  function retryAfterSeconds(): number {
    const waves = Math.max(1, Math.ceil((active + 1) / opts.workers));
    return Math.min(60, Math.max(1, Math.ceil((meanMs * waves) / 1000)));
  }

  async function run(job: RenderJob, signal?: AbortSignal): Promise<RenderOutcome> {
    if (closing) {
      throw new HttpProblem('shutting-down', 'The server is shutting down and accepts no new renders.', { headers: { 'retry-after': '5' } });
    }
    if (active >= capacity) {
      const retry = String(retryAfterSeconds());
      throw new HttpProblem('overloaded', `All ${opts.workers} render workers are busy and ${opts.queueLimit} renders are already waiting; retry in ${retry} s.`, { headers: { 'retry-after': retry } });
    }
    signal?.throwIfAborted();
    const timeout = AbortSignal.timeout(opts.timeoutMs);
    const combined = signal ? AbortSignal.any([timeout, signal]) : timeout;
    let task = job;
    const transferList: ArrayBuffer[] = [];
    if (job.source.kind === 'bytes') {
      const bytes = transferable(job.source.bytes);
      task = { ...job, source: { kind: 'bytes', bytes } };
      transferList.push(bytes.buffer as ArrayBuffer);
    }
    active++;
    const started = performance.now();
    try {
      return (await piscina.run(task, { signal: combined, transferList })) as RenderOutcome;
    } catch (err) {
      if (timeout.aborted && !signal?.aborted) {
        throw new HttpProblem('render-timeout', `The render did not finish within ${opts.timeoutMs} ms; try a smaller image or fewer columns.`, { headers: { 'retry-after': String(retryAfterSeconds()) } });
      }
      if (signal?.aborted) throw signal.reason;
      throw err;
    } finally {
      active--;
      completed++;
      meanMs = meanMs * 0.8 + (performance.now() - started) * 0.2;
    }
  }

  return {
    run,
    retryAfterSeconds,
    stats: () => ({
      workers: opts.workers,
      running: Math.min(active, opts.workers),
      queued: Math.max(0, active - opts.workers),
      queueLimit: opts.queueLimit,
      completed,
    }),
    async close() {
      if (closing) return;
      closing = true;
      await piscina.close();
    },
  };
}
