/**
 * The render operation shared by `POST /api/v1/render` and the MCP tool `render_ascii`: checks
 * that exactly one image source was given, validates the parameters of every carrier (and that no
 * parameter comes in two), fetches `imageUrl` through the safe fetcher, and runs decode + render +
 * format in the worker pool. Every failure is an HttpProblem, so both faces report the same text.
 */
import type { Attributes, Span } from '@opentelemetry/api';
import type { LookupFunction } from 'node:net';
import type { ServerConfig } from './config.js';
import { fetchImage, ImageFetchError } from './fetch-image.js';
import { HttpProblem } from './problem.js';
import type { ImageInput, JsonImageInput } from './render-inputs.js';
import type { RenderPool } from './render-pool.js';
import type { FormJob, FormOutcome, RenderJob, RenderOutcome, RenderSource, RenderSuccess, WorkerStage } from './render-task.js';
import type { Face, RenderStage, ServerMetrics } from './telemetry/metrics.js';
import { urlOriginAndPath } from './telemetry/redact.js';
import { endSpan, failSpan, nowMs, type Telemetry } from './telemetry/tracing.js';

// The request's inputs (image sources, parameter carriers) are checked in render-inputs.ts, which
// loads without the server (the stdio MCP face uses it too); re-exported for the routes.
export {
  IMAGE_FIELDS, MAX_LISTED_ERRORS, MISSING_IMAGE_DETAIL, exactlyOneImage, invalidImageField, jsonImageInputs, validateParams,
  type CarrierName, type ImageField, type ImageInput, type JsonImageInput, type ParamCarrier,
} from './render-inputs.js';


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
  /** When the caller read a form's body (epoch ms), for the input stage. */
  inputTiming?: { readonly start: number; readonly end: number };
}

/** A multipart/form-data request as the event loop read it: parsed and validated in a worker. */
export interface FormInput {
  /** The body's raw chunks. */
  readonly chunks: readonly Uint8Array[];
  readonly byteLength: number;
  /** The request's Content-Type header (its boundary). */
  readonly contentType: string;
  /** The query string's parameters (validated with the form's fields). */
  readonly query: Readonly<Record<string, unknown>>;
}

export interface RenderService {
  /** An image given by URL or base64 (a JSON body, MCP arguments). */
  render(image: JsonImageInput, params: Record<string, unknown>, ctx?: RenderCallContext): Promise<RenderSuccess>;
  /**
   * A multipart/form-data request: the form is parsed and its parameters checked in the worker
   * (form-body.ts); an imageUrl field is fetched here and rendered as a second job.
   */
  renderForm(form: FormInput, ctx?: RenderCallContext): Promise<RenderSuccess>;
}

function fetchProblem(err: ImageFetchError): HttpProblem {
  const errors = [{ parameter: 'imageUrl', message: err.message }];
  if (err.status === 413) return new HttpProblem('image-too-large', err.message, { errors });
  if (err.status === 400) return new HttpProblem('image-url-not-allowed', err.message, { errors });
  return new HttpProblem('image-fetch-failed', err.message, { errors });
}

/** Input carrier names of spans and metrics. */
const CARRIERS: Record<ImageInput['field'], string> = { image: 'upload', imageUrl: 'url', imageBase64: 'base64' };

/** Span names of the stages (`v2a.<stage>`). */
const STAGE_SPANS: Record<RenderStage, string> = {
  queue: 'v2a.queue', input: 'v2a.input', decode: 'v2a.decode', director: 'v2a.director', render: 'v2a.render', format: 'v2a.format',
};

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
      return outcome.ok ? { 'v2a.format': outcome.format, 'v2a.output.bytes': Buffer.byteLength(outcome.body) } : {};
  }
}

export function createRenderService(opts: RenderServiceOptions): RenderService {
  const { config, pool, telemetry, metrics } = opts;
  const maxBase64Chars = Math.ceil(config.maxImageBytes / 3) * 4;

  const observe = (stage: RenderStage, start: number, end: number) => metrics?.stages.observe({ stage }, Math.max(0, end - start) / 1000);

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
        const problem = fetchProblem(err);
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
      case 'imageBase64': {
        // A cheap early refusal: whitespace aside, the text can only shrink by 3/4.
        if (image.text.length > maxBase64Chars * 1.03 + 4096) {
          throw new HttpProblem('image-too-large', `imageBase64 is longer than an image of the ${config.maxImageBytes}-byte limit can be.`, {
            errors: [{ parameter: 'imageBase64', message: 'too large' }],
          });
        }
        return { kind: 'base64', text: image.text };
      }
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

  /** One job through the pool (run or runForm), with its queue span and metric. */
  async function queued<T extends FormOutcome>(submit: () => Promise<T>, ctx: RenderCallContext): Promise<T> {
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
  function settle(outcome: RenderOutcome, carrier: string, ctx: RenderCallContext): RenderSuccess {
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
        'v2a.output.bytes': Buffer.byteLength(outcome.body),
        ...(outcome.image?.width !== undefined ? { 'v2a.image.width': outcome.image.width, 'v2a.image.height': outcome.image.height ?? 0 } : {}),
        ...(outcome.image ? { 'v2a.image.bytes': outcome.image.bytes } : {}),
      });
      return outcome;
    }
    if (outcome.internal) opts.log?.error({ traceId: ctx.traceId, internal: outcome.internal }, 'render worker failed');
    const detail = outcome.slug === 'internal-error' && ctx.traceId ? `${outcome.detail} Trace id: ${ctx.traceId}.` : outcome.detail;
    const problem = new HttpProblem(outcome.slug, detail, outcome.errors ? { errors: outcome.errors } : {});
    recordStages(outcome, carrier, parent, problem);
    throw problem;
  }

  async function run(image: JsonImageInput, params: Record<string, unknown>, ctx: RenderCallContext): Promise<RenderSuccess> {
    const carrier = CARRIERS[image.field];
    ctx.span?.setAttribute('v2a.input.carrier', carrier);
    const src = await source(image, ctx);
    return settle(await renderJob(src, params, ctx), carrier, ctx);
  }

  async function runForm(form: FormInput, ctx: RenderCallContext): Promise<RenderSuccess> {
    ctx.span?.setAttribute('v2a.input.carrier', CARRIERS.image);
    const job: FormJob = { form: { chunks: form.chunks, contentType: form.contentType, query: form.query }, ...limits, ...(ctx.mcp ? { mcp: ctx.mcp } : {}) };
    // Reading the body, on the event loop, is the upload's input stage: recorded once the worker
    // has said what the form held (the upload's size; the body's when the pool refused the job).
    const input = (bytes: number) => {
      if (!ctx.inputTiming) return;
      const { start, end } = ctx.inputTiming;
      observe('input', start, end);
      telemetry?.recordSpan(ctx.span, STAGE_SPANS.input, start, end, { 'v2a.input.carrier': CARRIERS.image, 'v2a.input.bytes': bytes });
    };
    let outcome: FormOutcome;
    try {
      outcome = await queued(() => pool.runForm(job, ctx.signal), ctx);
    } catch (err) {
      input(form.byteLength);
      throw err;
    }
    if (outcome.ok === 'fetch') {
      // The form named a URL: fetched here (the event loop's safe fetcher), then rendered.
      ctx.span?.setAttribute('v2a.input.carrier', CARRIERS.imageUrl);
      const src = await fetchUrl(outcome.url, ctx.signal, ctx.span);
      return settle(await renderJob(src, outcome.params, ctx), CARRIERS.imageUrl, ctx);
    }
    input(outcome.image?.bytes ?? form.byteLength);
    return settle(outcome, CARRIERS.image, ctx);
  }

  /** Counts a face's render by its outcome. */
  async function counted(face: Face, work: Promise<RenderSuccess>): Promise<RenderSuccess> {
    try {
      const out = await work;
      metrics?.renders.inc({ face, outcome: 'ok' });
      return out;
    } catch (err) {
      metrics?.renders.inc({ face, outcome: 'error' });
      throw err;
    }
  }

  return {
    render: (image, params, ctx = {}) => counted(ctx.face ?? 'http', run(image, params, ctx)),
    renderForm: (form, ctx = {}) => counted(ctx.face ?? 'http', runForm(form, ctx)),
  };
}

/** `X-Auto-Director` header value: `<status>; rubric=<rubric>; score=<score>`. */
export function autoDirectorHeader(d: RenderSuccess['director']): string {
  return `${d.status}; rubric=${d.rubric}; score=${Number(d.score.toFixed(3))}`;
}
