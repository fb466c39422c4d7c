/**
 * The render worker pool: piscina threads running render-worker.ts, so decoding, rendering and
 * formatting never block the event loop (health checks stay prompt under load).
 *
 * - Size: `workers` threads, all started up front and kept (no idle timeout: libvips start-up is
 *   not free). The queue is ours: at most `workers` renders are handed to piscina, at most
 *   `queueLimit` more wait here (first come, first served); beyond that `run()` rejects at once
 *   with a 503 `overloaded` problem carrying Retry-After (piscina's own maxQueue also counts
 *   threads still starting up, which makes the bound depend on timing).
 * - The image bytes are transferred to the worker, not copied, when they own their ArrayBuffer;
 *   a request body's chunks (`runBody`) go over as read, each buffer moved once (socket reads own
 *   theirs), and are parsed in the worker, off the event loop.
 * - The workers' V8 heaps start with a larger old generation (WORKER_OLD_SPACE_MB), set as the
 *   pool is made (see there).
 * - `timeoutMs` bounds waiting plus running; on expiry a waiting render leaves the queue and the
 *   caller gets 503 `render-timeout` at once. A running one is told to stop (the job's `stop`
 *   word, shared memory): it stops before its next stage (decode, director, render, format), and
 *   its worker counts as busy until then. Only one still running STOP_GRACE_MS later has its
 *   thread terminated: terminating a thread that holds libvips work leaked its native memory
 *   (~2.5 MB a timeout, 168 MB -> 1.36 GB RSS after ~420), and its replacement's start-up and
 *   warm-up fell on the next render's time. A caller's signal (client gone) removes a waiting
 *   render from the queue; a running one is answered at once with the signal's reason and told to
 *   stop the same way (its result is dropped).
 * - `close()` lets queued and running renders finish, then stops the threads (piscina `close()`,
 *   not `destroy()`); new work is refused with 503 `shutting-down`. `stopAll(err)` is for a
 *   shutdown out of time: every render waiting or running is answered with `err` at once (its
 *   caller replies 503, where a cut connection gave a client nothing to retry on) and told to stop.
 *
 * Worker file resolution: under tsx (tests, `tsx src/server/main.ts`) this module is a `.ts` file
 * and so is the worker; piscina's threads inherit `process.execArgv`, which then holds
 * `--import tsx`, so they can load TypeScript (checked: `.ts` loads, `.js` does not map to `.ts`
 * there). When the process runs TypeScript without that flag, it is added for the workers. From
 * dist/ both are plain `.js`.
 */
import { setFlagsFromString } from 'node:v8';
import { Piscina } from 'piscina';
// sharp's documentation: on glibc Linux the main thread must load sharp before worker threads do,
// so that its shared libraries stay loaded until every thread is done.
import 'sharp';
import { HttpProblem, shuttingDown } from './problem.js';
import { STOP, STOP_GRACE_MS, type BodyJob, type BodyOutcome, type RenderJob, type RenderOutcome } from './render-task.js';
import { warmUpFailure, warmUpMs } from './warm-up.js';
import type { JsonSchema } from '../core/format/jsonSchemas.js';

export interface RenderPoolOptions {
  workers: number;
  queueLimit: number;
  timeoutMs: number;
  /** Each worker warms up before its first task (warm-up.ts); `warm()` is false until all have. */
  warmUp?: boolean;
  /** Told once every worker started up front has warmed up, with the slowest one's milliseconds. */
  onWarm?: (ms: number) => void;
  /** Told the first time a worker's warm-up render fails, with why. */
  onWarmUpFailed?: (why: string) => void;
  /** Told about worker errors not tied to a task (a crashed thread). */
  onError?: (err: unknown) => void;
}

export interface PoolStats {
  workers: number;
  running: number;
  queued: number;
  queueLimit: number;
  /** Renders finished, successfully or not; a render stopped by the timeout is not one of them. */
  completed: number;
  /**
   * Worker threads started: the first `workers`, then one for each thread replaced (one
   * terminated when a render overran its stop, STOP_GRACE_MS, or one that crashed).
   */
  threadsStarted: number;
}

/** PoolStats' keys, spelled once for the schema; `satisfies` keeps them in step with the interface. */
const POOL_STATS_KEYS = ['workers', 'running', 'queued', 'queueLimit', 'completed', 'threadsStarted'] as const satisfies readonly (keyof PoolStats)[];

/** Schema of stats(), as health and status report it. */
export const POOL_STATS_SCHEMA: JsonSchema = {
  type: 'object',
  description: 'Render worker pool load.',
  required: [...POOL_STATS_KEYS],
  additionalProperties: false,
  properties: Object.fromEntries(POOL_STATS_KEYS.map((k) => [k, { type: 'integer', minimum: 0 }])),
};

export interface RenderPool {
  run(job: RenderJob, signal?: AbortSignal): Promise<RenderOutcome>;
  /** A request's body (a form or JSON), parsed and rendered in a worker (the same slots as run()). */
  runBody(job: BodyJob, signal?: AbortSignal): Promise<BodyOutcome>;
  stats(): PoolStats;
  /** Seconds a refused caller should wait before retrying. */
  retryAfterSeconds(): number;
  /** Every worker started up front has warmed up (always true without warm-up): readiness. */
  warm(): boolean;
  /** Why a worker's warm-up render failed, the first such (the pool cannot render): readiness says `failed`. */
  warmUpFailure?(): string | undefined;
  /** Answers every render waiting or running with `err` now, and tells the running ones to stop. */
  stopAll(err: Error): void;
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

/**
 * A view that owns its whole ArrayBuffer can be transferred; anything else is copied first, into
 * a Uint8Array of its own (`Buffer#slice` would be a view again: on Node 24 Buffer.concat returns
 * pool slices, whose ArrayBuffer cannot be transferred).
 */
function transferable(bytes: Uint8Array): Uint8Array {
  const buffer = bytes.buffer;
  if (buffer instanceof ArrayBuffer && bytes.byteOffset === 0 && bytes.byteLength === buffer.byteLength) return bytes;
  return new Uint8Array(bytes);
}

/** `work`, or the signal's reason as soon as it aborts (the work goes on; its result is dropped). */
function abandonable<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

/** Chunks as sent to a worker, and their ArrayBuffers, each listed once: a buffer moves once. */
function movedChunks(chunks: readonly Uint8Array[]): { chunks: Uint8Array[]; transferList: ArrayBuffer[] } {
  const seen = new Set<ArrayBuffer>();
  const moved = chunks.map((c) => {
    // A second view of an already listed buffer is copied.
    const own = transferable(c);
    const buf = own.buffer as ArrayBuffer;
    if (!seen.has(buf)) {
      seen.add(buf);
      return own;
    }
    const copy = new Uint8Array(c); // a copy: Buffer#slice would be another view
    seen.add(copy.buffer as ArrayBuffer);
    return copy;
  });
  return { chunks: moved, transferList: [...seen] };
}

/** The job as sent to a worker, and the ArrayBuffers that move with it (each listed once). */
export function forTransfer<J extends RenderJob | BodyJob>(job: J): { task: J; transferList: ArrayBuffer[] } {
  if ('body' in job) {
    const { chunks, transferList } = movedChunks(job.body.chunks);
    return { task: { ...job, body: { ...job.body, chunks } }, transferList };
  }
  const src = job.source;
  if (src.kind === 'bytes') {
    const bytes = transferable(src.bytes);
    return { task: { ...job, source: { kind: 'bytes', bytes } }, transferList: [bytes.buffer as ArrayBuffer] };
  }
  if (src.kind === 'base64' && typeof src.text !== 'string') {
    // Movable views go with their whole buffers (each view's offset and length cross with it);
    // others are copied into one array first.
    const given = src.text;
    const own = src.movable === true && new Set(given.map((p) => p.buffer)).size === given.length && given.every((p) => p.buffer instanceof ArrayBuffer);
    const parts = own ? given : [transferable(Buffer.concat(given as Uint8Array[]))];
    return { task: { ...job, source: { kind: 'base64', text: parts } }, transferList: parts.map((p) => p.buffer as ArrayBuffer) };
  }
  return { task: job, transferList: [] };
}

/**
 * The old generation (MB) a render worker's V8 heap starts with. Each job brings about 1.2 MB of
 * external memory (sharp's decoded pixels, the upload, arrays copied out of kernel memory) that
 * V8 counts against a limit sized from a ~9 MB live heap, so a loaded worker ran a full
 * mark-compact every 11-12 jobs at 1 MP (`--trace-gc`, 8 s of load: 38-40 a worker); starting
 * the old generation at 64 MB leaves one every ~42 (11-12 a worker, the event loop's 1 either way).
 * Measured on 2 cores, 1 MP forms, 2 workers, 8 interleaved pairs of fresh servers: 2-12 % more
 * images/s in every pair (e.g. 108.4 -> 120.4), 0.5-1.8 ms less server CPU an image, for 30-60 MB
 * more RSS in all. 48 and 32 MB gave no clear gain. Node lets no V8 flag into a Worker's
 * execArgv and its resourceLimits have no initial size, so the process-wide flag is set before the
 * workers' isolates are made; it is read when a heap is configured, so the event loop's own heap,
 * made at start-up, keeps V8's default.
 */
export const WORKER_OLD_SPACE_MB = 64;


export function createRenderPool(opts: RenderPoolOptions): RenderPool {
  setFlagsFromString(`--initial-old-space-size=${WORKER_OLD_SPACE_MB}`);
  const { filename, execArgv } = workerLocation();
  const piscina = new Piscina({
    filename,
    minThreads: opts.workers,
    maxThreads: opts.workers,
    idleTimeout: Infinity,
    concurrentTasksPerWorker: 1,
    recordTiming: false,
    workerData: { warmUp: opts.warmUp === true },
    // An idle worker waits for tasks on its event loop, not in a blocking Atomics.wait (piscina's
    // default), which would stall a warm-up still in progress once the worker reports ready.
    atomics: 'disabled',
    ...(execArgv ? { execArgv } : {}),
  });
  piscina.on('error', (err: unknown) => opts.onError?.(err));
  let threadsStarted = 0;
  piscina.on('workerCreate', () => threadsStarted++);
  // Warm-up reports; a worker started later (one replaced after a timeout) reports again, and
  // readiness never goes back: its tasks wait for it in piscina as they would for a cold start.
  let warmWorkers = opts.warmUp === true ? 0 : opts.workers;
  let slowestWarmUp = 0;
  let failure: string | undefined;
  piscina.on('message', (m: unknown) => {
    const why = warmUpFailure(m);
    if (why !== null) {
      if (failure === undefined) opts.onWarmUpFailed?.(why);
      failure ??= why;
      return;
    }
    const ms = warmUpMs(m);
    if (ms === null || warmWorkers >= opts.workers) return;
    slowestWarmUp = Math.max(slowestWarmUp, ms);
    if (++warmWorkers === opts.workers) opts.onWarm?.(slowestWarmUp);
  });

  const capacity = opts.workers + opts.queueLimit;
  /** Renders handed to piscina (at most `workers`: piscina's own queue stays empty). */
  let running = 0;
  /** Renders waiting for a worker, first come first served. */
  const waiting: Array<{ go: () => void; fail: (err: unknown) => void }> = [];
  /** Running renders' stop-and-answer, for stopAll(). */
  const runningStops = new Set<(err: unknown) => void>();
  let completed = 0;
  let closing = false;
  /** Moving average of render durations in ms (for Retry-After). */
  let meanMs = 1000;

  function retryAfterSeconds(): number {
    const waves = Math.max(1, Math.ceil((running + waiting.length + 1) / opts.workers));
    return Math.min(60, Math.max(1, Math.ceil((meanMs * waves) / 1000)));
  }

  const timedOut = () =>
    new HttpProblem('render-timeout', `The render did not finish within ${opts.timeoutMs} ms; try a smaller image or fewer columns.`, {
      headers: { 'retry-after': String(retryAfterSeconds()) },
    });

  /** Waits for a free worker. Leaving the queue early (timeout, caller gone) costs nothing. */
  function acquire(timeout: AbortSignal, signal: AbortSignal | undefined): Promise<void> {
    if (running < opts.workers) {
      running++;
      return Promise.resolve();
    }
    return new Promise<void>((resolve, reject) => {
      const entry = {
        go: () => {
          cleanup();
          running++;
          resolve();
        },
        fail: (err: unknown) => fail(err),
      };
      const fail = (err: unknown) => {
        cleanup();
        const i = waiting.indexOf(entry);
        if (i >= 0) waiting.splice(i, 1);
        reject(err);
      };
      const onAbort = () => fail(signal?.aborted ? signal.reason : timedOut());
      const cleanup = () => {
        timeout.removeEventListener('abort', onAbort);
        signal?.removeEventListener('abort', onAbort);
      };
      timeout.addEventListener('abort', onAbort, { once: true });
      signal?.addEventListener('abort', onAbort, { once: true });
      waiting.push(entry);
    });
  }

  function release(): void {
    running--;
    waiting.shift()?.go();
  }

  async function run<J extends RenderJob | BodyJob>(job: J, signal?: AbortSignal): Promise<J extends BodyJob ? BodyOutcome : RenderOutcome> {
    type Out = J extends BodyJob ? BodyOutcome : RenderOutcome;
    if (closing) {
      throw shuttingDown('The server is shutting down and accepts no new renders.');
    }
    if (running + waiting.length >= capacity) {
      const retry = String(retryAfterSeconds());
      throw new HttpProblem('overloaded', `All ${opts.workers} render workers are busy and ${opts.queueLimit} renders are already waiting; retry in ${retry} s.`, { headers: { 'retry-after': retry } });
    }
    signal?.throwIfAborted();
    const timeout = AbortSignal.timeout(opts.timeoutMs);
    await acquire(timeout, signal);
    const started = performance.now();
    let task: Promise<Out>;
    // The job's stop word, and the thread's last resort: terminated if it has not stopped STOP_GRACE_MS after the timeout.
    const stop = new Int32Array(new SharedArrayBuffer(4));
    const terminate = new AbortController();
    let grace: NodeJS.Timeout | undefined;
    const onGone = () => Atomics.compareExchange(stop, 0, STOP.none, STOP.gone);
    try {
      timeout.throwIfAborted();
      signal?.throwIfAborted();
      const { task: sent, transferList } = forTransfer(job);
      task = piscina.run({ ...sent, stop: stop.buffer }, { signal: terminate.signal, transferList }) as Promise<Out>;
    } catch (err) {
      release();
      throw timeout.aborted ? timedOut() : err;
    }
    // The caller's answer: the outcome, or the timeout's 503 as soon as it passes, while the task
    // goes on until its worker stops. (Not Promise.race with a promise the timeout rejects: the
    // signal's listener kept every finished render's output alive until the timeout fired.)
    let answer: (err: unknown) => void = () => undefined;
    const settled = new Promise<Out>((resolve, reject) => {
      answer = reject;
      task.then(resolve, reject);
    });
    const onTimeout = () => {
      Atomics.store(stop, 0, STOP.timeout);
      answer(timedOut());
      grace = setTimeout(() => terminate.abort(), STOP_GRACE_MS).unref();
    };
    const stopNow = (err: unknown) => {
      Atomics.compareExchange(stop, 0, STOP.none, STOP.gone);
      answer(err);
    };
    runningStops.add(stopNow);
    timeout.addEventListener('abort', onTimeout, { once: true });
    signal?.addEventListener('abort', onGone, { once: true });
    // The worker's slot is released exactly once, when the task settles (the worker is free),
    // whoever still waits on it.
    const done = () => {
      runningStops.delete(stopNow);
      timeout.removeEventListener('abort', onTimeout);
      signal?.removeEventListener('abort', onGone);
      clearTimeout(grace);
      release();
      // A render stopped by the timeout did not complete (v2a_renders_total counts it as a timeout).
      if (Atomics.load(stop, 0) !== STOP.timeout) completed++;
      meanMs = meanMs * 0.8 + (performance.now() - started) * 0.2;
    };
    void task.then(done, done);
    return signal ? abandonable(settled, signal) : settled;
  }

  return {
    run: (job, signal) => run(job, signal),
    runBody: (job, signal) => run(job, signal),
    retryAfterSeconds,
    stats: () => ({
      workers: opts.workers,
      running,
      queued: waiting.length,
      queueLimit: opts.queueLimit,
      completed,
      threadsStarted,
    }),
    warm: () => failure === undefined && warmWorkers >= opts.workers,
    warmUpFailure: () => failure,
    stopAll(err) {
      for (const entry of waiting.slice()) entry.fail(err);
      for (const stopNow of runningStops) stopNow(err);
    },
    async close() {
      if (closing) return;
      closing = true;
      await piscina.close();
    },
  };
}
