/**
 * A render worker (a piscina worker thread): bytes, base64 or a multipart form (parsed here,
 * form-body.ts) in, formatted character art out. It runs the core's render job (src/core/job.ts)
 * with sharp as the decoder, off the server's event loop. libvips gets one thread per worker
 * (`configureSharp({ concurrency: 1 })`): the pool's size is the parallelism. Failures come back as RenderFailure values carrying the job's error code
 * (classes do not survive the thread boundary).
 *
 * Every outcome carries the start and end of each stage the job reported, so that the main
 * thread can record them as spans and metrics: spans are never created in a worker.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { formatResult } from '../core/format/index.js';
import { asV2aError, runJob, type JobStage } from '../core/job.js';
import { parseForm } from './form-body.js';
import { buildToolReply } from './mcp/reply.js';
import { exactlyOneImage, validateParams } from './render-inputs.js';
import { configureSharp, decodeImage } from '../node/index.js';
import type { FormJob, FormOutcome, ImageFacts, RenderFailure, RenderForm, RenderJob, RenderOutcome, StageTimes } from './render-task.js';
import { WARM_UP_MESSAGE, warmUpJobs } from './warm-up.js';

configureSharp({ concurrency: 1 });

/** Milliseconds since the Unix epoch, sub-millisecond, comparable across threads. */
const now = () => performance.timeOrigin + performance.now();

/** Joins an upload's body chunks (here, off the server's event loop). */
function joined(chunks: readonly Uint8Array[]): Uint8Array {
  if (chunks.length === 1) return chunks[0]!;
  let n = 0;
  for (const c of chunks) n += c.byteLength;
  const out = new Uint8Array(n);
  let o = 0;
  for (const c of chunks) {
    out.set(c, o);
    o += c.byteLength;
  }
  return out;
}

/**
 * The warm-up (warm-up.ts, when the pool asks for it), started as this module loads; tasks wait
 * for it. Not a top-level await: under tsx (the tests) piscina then cannot load this module.
 */
const warmedUp: Promise<void> | null = (workerData as { warmUp?: boolean } | undefined)?.warmUp ? warmUp() : null;

async function warmUp(): Promise<void> {
  const t0 = performance.now();
  try {
    for (const job of await warmUpJobs()) await renderJob(job);
  } catch {
    /* a warm-up that fails leaves the worker cold, not broken: its tasks report their own errors */
  }
  parentPort?.postMessage({ [WARM_UP_MESSAGE]: Math.round(performance.now() - t0) });
}

export async function runRenderJob(job: RenderJob): Promise<RenderOutcome> {
  if (warmedUp) await warmedUp;
  return renderJob(job);
}

/**
 * A form's image and parameters (form-body.ts, then the checks every carrier gets:
 * render-inputs.ts) as the RenderJob they ask for; a refusal as the problem the client is told;
 * a URL handed back for the server to fetch.
 */
async function formJob(job: FormJob): Promise<RenderJob | RenderFailure | RenderForm> {
  const { form, ...limits } = job;
  try {
    const parsed = await parseForm(form.chunks, form.contentType, job.maxBytes);
    const params = validateParams([
      { name: 'query string', kind: 'strings', values: form.query },
      { name: 'form fields', kind: 'strings', values: parsed.fields },
    ]);
    const image = exactlyOneImage(parsed.images);
    if (image.field === 'imageUrl') return { ok: 'fetch', url: image.url, params };
    if (image.field !== 'image') throw new Error('a form carries an upload or a URL');
    return { ...limits, source: { kind: 'bytes', bytes: joined(image.chunks) }, params };
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

/** A form, parsed and rendered (piscina's entry, with runRenderJob's for RenderJobs). */
async function runFormJob(job: FormJob): Promise<FormOutcome> {
  if (warmedUp) await warmedUp;
  const startedAt = now();
  const next = await formJob(job);
  return 'source' in next ? renderJob(next, startedAt) : { ...next, startedAt, stages: {} };
}

async function renderJob(job: RenderJob, startedAt = now()): Promise<RenderOutcome> {
  const stages: { -readonly [K in JobStage]?: readonly [number, number] } = {};
  let failedStage: JobStage | undefined;
  const source = job.source;
  let image: ImageFacts | undefined = source.kind === 'bytes' ? { bytes: source.bytes.byteLength } : undefined;
  try {
    const done = await runJob(source, job.params, {
      decoder: decodeImage,
      limits: { maxBytes: job.maxBytes, maxPixels: job.maxPixels, ...(job.maxDecodedBytes !== undefined ? { maxDecodedBytes: job.maxDecodedBytes } : {}), decodeTimeoutSeconds: job.decodeTimeoutSeconds },
      clock: now,
      // Synchronous, png included: the worker has the png encoder loaded for MCP previews anyway.
      formatter: formatResult,
      onStage: (stage, start, end, failed) => {
        stages[stage] = [start, end];
        if (failed) failedStage = stage;
      },
    });
    const { result, output } = done;
    image = done.image.bytes === undefined ? image : { bytes: done.image.bytes, format: done.image.format, width: done.image.width, height: done.image.height };
    const mcp = job.mcp ? buildToolReply(result, output, job.mcp.maxChars) : undefined;
    return {
      ok: true,
      format: result.params.format,
      body: output.body,
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

/** The pool's task: a RenderJob, or a FormJob (render-pool.ts run / runForm). */
export default function runTask(job: RenderJob | FormJob): Promise<FormOutcome> {
  return 'form' in job ? runFormJob(job) : runRenderJob(job);
}
