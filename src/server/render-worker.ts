/**
 * A render worker (a piscina worker thread): bytes, base64 or a request's body (a form or JSON,
 * parsed here: request-body.ts) in, formatted character art out. It runs the core's render job (src/core/job.ts)
 * with sharp as the decoder, off the server's event loop. libvips gets one thread per worker
 * (`configureSharp({ concurrency: 1 })`): the pool's size is the parallelism. Failures come back as RenderFailure values carrying the job's error code
 * (classes do not survive the thread boundary).
 *
 * Every outcome carries the start and end of each stage the job reported, so that the main
 * thread can record them as spans and metrics: spans are never created in a worker.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { move, transferableSymbol, valueSymbol } from 'piscina';
import { formatBytes, formatResult } from '../core/format/index.js';
import { textEncoder } from '../core/text-codec.js';
import { asV2aError, runJob, type JobStage } from '../core/job.js';
import { buildToolReply } from './mcp/reply.js';
import { bodyRequest } from './request-body.js';
import { configureSharp, decodeImage } from '../node/index.js';
import { zlibDeflate } from '../node/deflate.js';
import { STOP, type BodyJob, type BodyOutcome, type ImageFacts, type RenderFailure, type RenderFetch, type RenderJob, type RenderOutcome, type StageTimes } from './render-task.js';
import { WARM_UP_FAILED, WARM_UP_MESSAGE, warmUpJobs } from './warm-up.js';

configureSharp({ concurrency: 1 });

/** Milliseconds since the Unix epoch, sub-millisecond, comparable across threads. */
const now = () => performance.timeOrigin + performance.now();

/**
 * The warm-up (warm-up.ts, when the pool asks for it), started as this module loads; tasks wait
 * for it. Not a top-level await: under tsx (the tests) piscina then cannot load this module.
 */
const warmedUp: Promise<void> | null = (workerData as { warmUp?: boolean } | undefined)?.warmUp ? warmUp() : null;

async function warmUp(): Promise<void> {
  parentPort?.postMessage(await warmUpReport(renderJob));
}

/**
 * The warm-up's message to the pool: its milliseconds, and why it failed where a render of the
 * scene did. Such a worker cannot render (its kernels could not be made, sharp did not load):
 * told, so that readiness says so rather than `ready` over a pool whose every render is a 500.
 * Its tasks still report their own errors.
 */
export async function warmUpReport(render: (job: RenderJob) => Promise<RenderOutcome>): Promise<Record<string, number | string>> {
  const t0 = performance.now();
  let failed: string | undefined;
  try {
    for (const job of await warmUpJobs()) {
      const out = await render(job);
      if (out.ok !== true) {
        failed = out.ok === false ? `${out.slug}: ${out.internal?.split('\n', 1)[0] ?? out.detail}` : 'the warm-up render asked for a fetch';
        break;
      }
    }
  } catch (err) {
    failed = err instanceof Error ? err.message : String(err);
  }
  return { [WARM_UP_MESSAGE]: Math.round(performance.now() - t0), ...(failed ? { [WARM_UP_FAILED]: failed.slice(0, 300) } : {}) };
}

export async function runRenderJob(job: RenderJob): Promise<RenderOutcome> {
  if (warmedUp) await warmedUp;
  return renderJob(job);
}

/**
 * A request body's image and parameters (request-body.ts) as the RenderJob they ask for; a
 * refusal as the problem the client is told; a URL handed back for the server to fetch.
 */
async function bodyJob(job: BodyJob): Promise<(RenderJob & { field: 'image' | 'imageBase64' }) | RenderFailure | RenderFetch> {
  const { body, ...limits } = job;
  try {
    const r = await bodyRequest(body, job.maxBytes);
    return 'url' in r ? { ok: 'fetch', url: r.url, params: r.params } : { ...limits, source: r.source, params: r.params, field: r.field };
  } catch (err) {
    return failureOf(err);
  }
}

/** A job's error as the failure it comes back as (HttpProblem is a V2aError: it passes as it is). */
function failureOf(err: unknown): RenderFailure {
  const e = asV2aError(err);
  // An internal one keeps the original for the server's log.
  const cause = e.code === 'internal-error' ? e.cause : undefined;
  return {
    ok: false,
    slug: e.code,
    detail: e.message,
    ...(e.errors ? { errors: e.errors } : {}),
    ...(cause !== undefined ? { internal: cause instanceof Error ? (cause.stack ?? cause.message) : String(cause) } : {}),
  };
}

/** A request's body, parsed and rendered (piscina's entry, with runRenderJob's for RenderJobs). */
async function runBodyJob(job: BodyJob): Promise<BodyOutcome> {
  if (warmedUp) await warmedUp;
  const startedAt = now();
  const next = await bodyJob(job);
  if (!('source' in next)) return { ...next, startedAt, stages: {} };
  const { field, ...render } = next;
  return { ...(await renderJob(render, startedAt)), field };
}

async function renderJob(job: RenderJob, startedAt = now()): Promise<RenderOutcome> {
  const stages: { -readonly [K in JobStage]?: readonly [number, number] } = {};
  let failedStage: JobStage | undefined;
  // A lifted base64 value arrives as its text's bytes, which the job decodes where they lie.
  const { source } = job;
  let image: ImageFacts | undefined = source.kind === 'bytes' ? { bytes: source.bytes.byteLength } : undefined;
  try {
    const stop = job.stop ? new Int32Array(job.stop) : null;
    const options = {
      decoder: decodeImage,
      ...(stop ? {
        deadline: { get aborted() { return Atomics.load(stop, 0) === STOP.timeout; } },
        signal: { get aborted() { return Atomics.load(stop, 0) === STOP.gone; } },
      } : {}),
      limits: { maxBytes: job.maxBytes, maxPixels: job.maxPixels, ...(job.maxDecodedBytes !== undefined ? { maxDecodedBytes: job.maxDecodedBytes } : {}), decodeTimeoutSeconds: job.decodeTimeoutSeconds },
      clock: now,
      // Synchronous, png included: the worker has the png encoder loaded for MCP previews anyway.
      // Bytes for a reply sent as it is (a large colour svg is written as such: format/bytes.ts);
      // the MCP reply reads the text.
      formatter: job.mcp ? formatResult : formatBytes,
      readsReport: job.mcp !== undefined,
    };
    const done = await runJob(source, job.params, {
      ...options,
      onStage: (stage, start, end, failed) => {
        stages[stage] = [start, end];
        if (failed) failedStage = stage;
      },
    });
    const { result, output } = done;
    image = done.image.bytes === undefined ? image : { bytes: done.image.bytes, format: done.image.format, width: done.image.width, height: done.image.height };
    // Over the budget, the refusal checks the columns it names by rendering the source at them.
    const mcp = job.mcp ? await buildToolReply(result, output, job.mcp.maxChars, zlibDeflate, (columns) => runJob(source, { ...job.params, columns }, options)) : undefined;
    return {
      ok: true,
      format: result.params.format,
      // Bytes, handed over without a copy (runTask): a 400 x 800 colour svg was a 30 MB string of
      // two-byte characters, which the main thread held as such and encoded again while a client
      // that does not read held the reply. (An MCP job's output is text: encoded here.)
      body: typeof output.body === 'string' ? textEncoder().encode(output.body) : output.body,
      contentType: output.contentType,
      extension: output.extension,
      director: { status: result.director.status, rubric: result.director.rubric, score: result.director.score },
      ...(mcp ? { mcp } : {}),
      columns: result.columns,
      rows: result.rows,
      charset: result.charset,
      adjusted: Object.keys(result.director.adjustments),
      codebook: { size: result.codebook.size, rmse: result.codebook.rmse },
      startedAt,
      stages: stages as StageTimes,
      ...(image ? { image } : {}),
    };
  } catch (err) {
    // runJob throws V2aError only.
    return { ...failureOf(err), startedAt, stages: stages as StageTimes, ...(failedStage ? { failedStage } : {}), ...(image ? { image } : {}) };
  }
}

/** The pool's task: a RenderJob, or a BodyJob (render-pool.ts run / runBody). */
export default async function runTask(job: RenderJob | BodyJob): Promise<BodyOutcome> {
  return moved(await ('body' in job ? runBodyJob(job) : runRenderJob(job)));
}

/**
 * An outcome whose body owns its whole buffer, marked for piscina to transfer that buffer rather
 * than copy it (its Transferable interface: the main thread receives the outcome itself). A body
 * that is a view of a larger buffer is copied, as any result is.
 */
function moved(outcome: BodyOutcome): BodyOutcome {
  if (outcome.ok !== true) return outcome;
  const { buffer, byteOffset, byteLength } = outcome.body;
  if (!(buffer instanceof ArrayBuffer) || byteOffset !== 0 || byteLength !== buffer.byteLength) return outcome;
  return move({ [transferableSymbol]: buffer, [valueSymbol]: outcome }) as unknown as BodyOutcome;
}
