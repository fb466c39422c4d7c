/**
 * The render operation shared by `POST /api/v1/render` and the MCP tool `render_ascii`: checks
 * that exactly one image source was given, validates the parameters of every carrier (and that no
 * parameter comes in two), fetches `imageUrl` through the safe fetcher, and runs decode + render +
 * format in the worker pool. Every failure is an HttpProblem, so both faces report the same text.
 */
import type { Attributes, Span } from '@opentelemetry/api';
import type { LookupFunction } from 'node:net';
import type { ServerConfig } from './config.js';
import { fetchFailure, fetchImage, ImageFetchError } from './fetch-image.js';
import { HttpProblem } from './problem.js';
import { base64Source, checkBase64Length, type ImageInput, type JsonImageInput } from './render-inputs.js';
import { INLINE_BODY_BYTES, bodyRequest, type BodyRequest } from './request-body.js';
import type { RenderPool } from './render-pool.js';
import type { BodyJob, BodyOutcome, RenderJob, RenderOutcome, RenderSource, RenderSuccess, WorkerStage } from './render-task.js';
import type { Face, RenderStage, ServerMetrics } from './telemetry/metrics.js';
import { urlOriginAndPath } from './telemetry/redact.js';
import { endSpan, failSpan, nowMs, type Telemetry } from './telemetry/tracing.js';

export interface RenderServiceOptions {
  config: ServerConfig;
  pool: RenderPool;
  /** TEST ONLY: DNS lookup and extra CA for imageUrl fetches (see fetchImage). */
  fetchLookup?: LookupFunction;
  fetchCa?: string | Buffer;
  log?: { error(obj: unknown, msg: string): void };
  /** Spans of the render stages (default: none). */
  telemetry?: Telemetry;
  /** Stage durations and render counts (default: none). */
  metrics?: ServerMetrics;
}

export interface RenderCallContext {
  signal?: AbortSignal;
  traceId?: string;
  /** Build the MCP tool reply in the worker under this character budget (0: none). */
  mcp?: { readonly maxChars: number };
  /** Parent of the stage spans: the request's server span, or the MCP tools/call span. */
  span?: Span;
  /** Which face asked (metrics label); default http. */
  face?: Face;
  /** When the caller read a form's body (epoch ms), for the upload's input stage. */
  inputTiming?: { readonly start: number; readonly end: number };
}

/** A render request's body as the event loop read it: parsed and validated in a worker. */
export interface BodyInput {
  /** multipart/form-data or JSON. */
  readonly type: 'form' | 'json';
  /** The body's raw chunks. */
  readonly chunks: readonly Uint8Array[];
  readonly byteLength: number;
  /** The request's Content-Type header (a form's boundary). */
  readonly contentType: string;
  /** The query string's parameters (validated with the body's). */
  readonly query: Readonly<Record<string, unknown>>;
}

export interface RenderService {
  /** An image given by URL or base64 (a JSON body, MCP arguments). */
  render(image: JsonImageInput, params: Record<string, unknown>, ctx?: RenderCallContext): Promise<RenderSuccess>;
  /**
   * A request's body (a form or JSON): read and its parameters checked (request-body.ts) here
   * when small, else in a worker; an imageUrl is fetched here and rendered as a RenderJob.
   */
  renderBody(body: BodyInput, ctx?: RenderCallContext): Promise<RenderSuccess>;
}

/** Input carrier names of spans and metrics. */
const CARRIERS: Record<ImageInput['field'], string> = { image: 'upload', imageUrl: 'url', imageBase64: 'base64' };

/** Span names of the stages (`v2a.<stage>`). */
const STAGE_SPANS: Record<RenderStage, string> = {
  queue: 'v2a.queue', input: 'v2a.input', decode: 'v2a.decode', director: 'v2a.director', render: 'v2a.render', format: 'v2a.format',
};

/**
 * The problems about the image itself: named in `errors` by the field the image came in (image,
 * imageBase64 or imageUrl), as a parameter's problem names the parameter, with the detail as its
 * message (a summary per type said "damaged, truncated or not an image" of an empty upload).
 */
const IMAGE_PROBLEMS: ReadonlySet<string> = new Set(['unsupported-image', 'undecodable-image', 'image-too-large', 'image-too-tall']);

function imageErrors(slug: string, detail: string, field: ImageInput['field'] | undefined): { parameter: string; message: string }[] | undefined {
  return field && IMAGE_PROBLEMS.has(slug) ? [{ parameter: field, message: detail }] : undefined;
}

const WORKER_STAGES: readonly WorkerStage[] = ['input', 'decode', 'director', 'render', 'format'];

/** Attributes of each worker stage's span, from the outcome. */
function stageAttributes(stage: WorkerStage, outcome: RenderOutcome, carrier: string): Attributes {
  const image = outcome.image;
  switch (stage) {
    case 'input':
      return { 'v2a.input.carrier': carrier, ...(image ? { 'v2a.input.bytes': image.bytes } : {}) };
    case 'decode':
      return image
        ? {
          'v2a.image.bytes': image.bytes,
          ...(image.format ? { 'v2a.image.format': image.format } : {}),
          ...(image.width !== undefined ? { 'v2a.image.width': image.width, 'v2a.image.height': image.height ?? 0 } : {}),
        }
        : {};
    case 'director':
      return outcome.ok
        ? {
          'v2a.director.status': outcome.director.status,
          'v2a.director.rubric': outcome.director.rubric,
          'v2a.director.score': Number(outcome.director.score.toFixed(4)),
          'v2a.director.adjusted': [...outcome.adjusted],
        }
        : {};
    case 'render':
      return outcome.ok
        ? {
          'v2a.columns': outcome.columns,
          'v2a.rows': outcome.rows,
          'v2a.charset': outcome.charset,
          'v2a.codebook.size': outcome.codebook.size,
          'v2a.codebook.rmse': outcome.codebook.rmse,
        }
        : {};
    case 'format':
      return outcome.ok ? { 'v2a.format': outcome.format, 'v2a.output.bytes': outcome.body.byteLength } : {};
  }
}

export function createRenderService(opts: RenderServiceOptions): RenderService {
  const { config, pool, telemetry, metrics } = opts;

  const observe = (stage: RenderStage, start: number, end: number) => {
    const seconds = Math.max(0, end - start) / 1000;
    // prom-client throws on a non-finite observation; a stage timed wrongly must not fail the render.
    if (Number.isFinite(seconds)) metrics?.stages.observe({ stage }, seconds);
  };

  async function fetchUrl(url: string, signal: AbortSignal | undefined, parent: Span | undefined): Promise<RenderSource> {
    const start = nowMs();
    const target = urlOriginAndPath(url);
    let host: string | undefined;
    try {
      host = new URL(url).hostname;
    } catch {
      // invalid: fetchImage says so
    }
    const span = telemetry?.startSpan(parent, STAGE_SPANS.input, {
      'v2a.input.carrier': 'url',
      ...(target ? { 'url.full': target } : {}),
      ...(host ? { 'server.address': host } : {}),
    }, start);
    try {
      const bytes = await fetchImage(url, {
        allowlist: config.imageFetchAllowlist,
        maxBytes: config.maxImageBytes,
        timeoutMs: config.fetchTimeoutMs,
        allowLoopback: config.testAllowLoopbackFetch,
        ...(opts.fetchLookup ? { lookup: opts.fetchLookup } : {}),
        ...(opts.fetchCa !== undefined ? { ca: opts.fetchCa } : {}),
        ...(signal ? { signal } : {}),
      });
      const end = nowMs();
      observe('input', start, end);
      endSpan(span, { 'v2a.input.bytes': bytes.byteLength }, end);
      return { kind: 'bytes', bytes };
    } catch (err) {
      const end = nowMs();
      observe('input', start, end);
      if (err instanceof ImageFetchError) {
        const problem = HttpProblem.from(fetchFailure(err));
        failSpan(span, { type: problem.slug, message: problem.detail });
        endSpan(span, undefined, end);
        throw problem;
      }
      failSpan(span, { type: 'client-closed' });
      endSpan(span, undefined, end);
      throw err;
    }
  }

  async function source(image: JsonImageInput, ctx: RenderCallContext): Promise<RenderSource> {
    switch (image.field) {
      case 'imageBase64':
        checkBase64Length(image.text, config.maxImageBytes);
        return base64Source(image.text);
      case 'imageUrl':
        return fetchUrl(image.url, ctx.signal, ctx.span);
    }
  }

  /** Spans and metrics of the stages the worker timed. */
  function recordStages(outcome: RenderOutcome, carrier: string, parent: Span | undefined, problem: HttpProblem | undefined): void {
    const stages = outcome.stages;
    if (!stages) return;
    for (const stage of WORKER_STAGES) {
      const t = stages[stage];
      if (!t) continue;
      observe(stage, t[0], t[1]);
      if (!parent) continue;
      const failed = !outcome.ok && outcome.failedStage === stage && problem ? { type: problem.slug, message: problem.detail } : undefined;
      telemetry?.recordSpan(parent, STAGE_SPANS[stage], t[0], t[1], stageAttributes(stage, outcome, carrier), failed);
    }
  }

  /** The limits every job carries. */
  const limits = {
    maxBytes: config.maxImageBytes,
    maxPixels: config.maxImagePixels,
    maxDecodedBytes: config.maxDecodedBytes,
    decodeTimeoutSeconds: Math.max(1, Math.ceil(config.renderTimeoutMs / 1000)),
  };

  /** One job through the pool (run or runBody), with its queue span and metric. */
  async function queued<T extends BodyOutcome>(submit: () => Promise<T>, ctx: RenderCallContext): Promise<T> {
    const parent = ctx.span;
    const start = nowMs();
    let outcome: T;
    try {
      outcome = await submit();
    } catch (err) {
      const end = nowMs();
      observe('queue', start, end);
      const slug = err instanceof HttpProblem ? err.slug : 'internal-error';
      telemetry?.recordSpan(parent, STAGE_SPANS.queue, start, end, {}, { type: slug, ...(err instanceof HttpProblem ? { message: err.detail } : {}) });
      throw err;
    }
    const started = outcome.startedAt ?? start;
    observe('queue', start, started);
    telemetry?.recordSpan(parent, STAGE_SPANS.queue, start, started, {});
    return outcome;
  }

  function renderJob(source: RenderSource, params: Readonly<Record<string, unknown>>, ctx: RenderCallContext): Promise<RenderOutcome> {
    const job: RenderJob = { source, params, ...limits, ...(ctx.mcp ? { mcp: ctx.mcp } : {}) };
    return queued(() => pool.run(job, ctx.signal), ctx);
  }

  /** The worker's answer: the success, or its failure as a problem (stages recorded either way). */
  /** `field`: where the image came from, when known (a body refused before that names none). */
  function settle(outcome: RenderOutcome, field: ImageInput['field'] | undefined, ctx: RenderCallContext): RenderSuccess {
    const carrier = CARRIERS[field ?? 'imageBase64'];
    const parent = ctx.span;
    if (outcome.ok) {
      recordStages(outcome, carrier, parent, undefined);
      parent?.setAttributes({
        'v2a.format': outcome.format,
        'v2a.columns': outcome.columns,
        'v2a.rows': outcome.rows,
        'v2a.charset': outcome.charset,
        'v2a.director.status': outcome.director.status,
        'v2a.director.score': Number(outcome.director.score.toFixed(4)),
        'v2a.output.bytes': outcome.body.byteLength,
        ...(outcome.image?.width !== undefined ? { 'v2a.image.width': outcome.image.width, 'v2a.image.height': outcome.image.height ?? 0 } : {}),
        ...(outcome.image ? { 'v2a.image.bytes': outcome.image.bytes } : {}),
      });
      return outcome;
    }
    if (outcome.internal) opts.log?.error({ traceId: ctx.traceId, internal: outcome.internal }, 'render worker failed');
    const detail = outcome.slug === 'internal-error' && ctx.traceId ? `${outcome.detail} Trace id: ${ctx.traceId}.` : outcome.detail;
    const errors = outcome.errors ?? imageErrors(outcome.slug, detail, field);
    const problem = new HttpProblem(outcome.slug, detail, errors ? { errors } : {});
    recordStages(outcome, carrier, parent, problem);
    throw problem;
  }

  async function run(image: JsonImageInput, params: Record<string, unknown>, ctx: RenderCallContext): Promise<RenderSuccess> {
    ctx.span?.setAttribute('v2a.input.carrier', CARRIERS[image.field]);
    const src = await source(image, ctx);
    return settle(await renderJob(src, params, ctx), image.field, ctx);
  }

  async function runBody(body: BodyInput, ctx: RenderCallContext): Promise<RenderSuccess> {
    const form = body.type === 'form';
    if (form) ctx.span?.setAttribute('v2a.input.carrier', CARRIERS.image);
    const parsed: BodyJob['body'] = { type: body.type, chunks: body.chunks, contentType: body.contentType, query: body.query };
    // A form's body, read on the event loop, is the upload's input stage: recorded once it is
    // known what the form held (the upload's size; the body's when it was refused unread).
    // A JSON body's input stage is the worker's base64 decode, as for MCP arguments.
    const upload = (bytes: number) => {
      if (!form || !ctx.inputTiming) return;
      const { start, end } = ctx.inputTiming;
      observe('input', start, end);
      telemetry?.recordSpan(ctx.span, STAGE_SPANS.input, start, end, { 'v2a.input.carrier': CARRIERS.image, 'v2a.input.bytes': bytes });
    };
    const fetched = async (url: string, params: Readonly<Record<string, unknown>>) => {
      // The body named a URL: fetched here (the event loop's safe fetcher), then rendered.
      ctx.span?.setAttribute('v2a.input.carrier', CARRIERS.imageUrl);
      const src = await fetchUrl(url, ctx.signal, ctx.span);
      return settle(await renderJob(src, params, ctx), 'imageUrl', ctx);
    };

    if (body.byteLength <= INLINE_BODY_BYTES) {
      // Small: read here (request-body.ts), then rendered as any RenderJob.
      let r: BodyRequest;
      try {
        r = await bodyRequest(parsed, config.maxImageBytes);
      } catch (err) {
        upload(body.byteLength);
        throw err;
      }
      if ('url' in r) return fetched(r.url, r.params);
      ctx.span?.setAttribute('v2a.input.carrier', CARRIERS[r.field]);
      if (r.source.kind === 'bytes') upload(r.source.bytes.byteLength);
      return settle(await renderJob(r.source, r.params, ctx), r.field, ctx);
    }

    const job: BodyJob = { body: parsed, ...limits, ...(ctx.mcp ? { mcp: ctx.mcp } : {}) };
    let outcome: BodyOutcome;
    try {
      outcome = await queued(() => pool.runBody(job, ctx.signal), ctx);
    } catch (err) {
      upload(body.byteLength);
      throw err;
    }
    if (outcome.ok === 'fetch') return fetched(outcome.url, outcome.params);
    // The carrier, once the worker knows it (a body refused before that names none).
    const field = outcome.field ?? (form ? 'image' : undefined);
    if (field) ctx.span?.setAttribute('v2a.input.carrier', CARRIERS[field]);
    upload(outcome.image?.bytes ?? body.byteLength);
    return settle(outcome, field, ctx);
  }

  /**
   * Counts a face's render by its outcome: ok, error, timeout (V2A_RENDER_TIMEOUT_MS), or cancelled
   * (its client went away: neither the server's fault nor the input's).
   */
  async function counted(face: Face, work: Promise<RenderSuccess>, signal: AbortSignal | undefined): Promise<RenderSuccess> {
    try {
      const out = await work;
      metrics?.renders.inc({ face, outcome: 'ok' });
      return out;
    } catch (err) {
      const outcome = signal?.aborted ? 'cancelled' : err instanceof HttpProblem && err.slug === 'render-timeout' ? 'timeout' : 'error';
      metrics?.renders.inc({ face, outcome });
      throw err;
    }
  }

  return {
    render: (image, params, ctx = {}) => counted(ctx.face ?? 'http', run(image, params, ctx), ctx.signal),
    renderBody: (form, ctx = {}) => counted(ctx.face ?? 'http', runBody(form, ctx), ctx.signal),
  };
}

/** `X-Auto-Director` header value: `<status>; rubric=<rubric>; score=<score>`. */
export function autoDirectorHeader(d: RenderSuccess['director']): string {
  return `${d.status}; rubric=${d.rubric}; score=${Number(d.score.toFixed(3))}`;
}
