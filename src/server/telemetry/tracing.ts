/**
 * OpenTelemetry tracing of one server (decisions.md, "Trace context and the platform key").
 *
 * - W3C trace context is always on (plugins/trace.ts decides the server span's ids). With
 *   PLATFORM_API_KEY set, a BasicTracerProvider of this app (not registered globally, so several
 *   apps in one process stay apart) records spans and exports them: BatchSpanProcessor ->
 *   RedactingSpanExporter (./redact.ts, the one place that sanitises) -> OTLPTraceExporter
 *   (OTLP/HTTP, JSON encoding), configured by the standard OTEL_EXPORTER_OTLP_* variables and
 *   OTEL_BSP_* for batching. The key is sent as the `X-Platform-API-Key` header on every export
 *   request (not `Authorization`, so it never clobbers an Authorization header an operator sets
 *   for a collector through OTEL_EXPORTER_OTLP_HEADERS); it overrides an X-Platform-API-Key there.
 * - The server span (`v2a.request`) takes exactly the trace id and span id that plugins/trace.ts
 *   put in the response's `traceparent`, with the caller's span as its remote parent: an id
 *   generator of this provider hands out the adopted ids for that one synchronous startSpan.
 * - Sampling: parent-based; a new trace is sampled (the response says `-01`), a continued trace
 *   follows the caller's sampled flag.
 * - Unset key (or OTEL_SDK_DISABLED=true, or OTEL_TRACES_EXPORTER=none): no provider, no exporter;
 *   every function here returns `undefined` at once, and callers skip building attributes.
 * - Shutdown (app close, SIGTERM) flushes the batch; exports time out per OTEL_EXPORTER_OTLP_TIMEOUT.
 */
import { ROOT_CONTEXT, SpanKind, SpanStatusCode, TraceFlags, trace, type Attributes, type Span, type Tracer } from '@opentelemetry/api';
import { ExportResultCode } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { detectResources, envDetector, resourceFromAttributes } from '@opentelemetry/resources';
import {
  AlwaysOnSampler, BasicTracerProvider, BatchSpanProcessor, ParentBasedSampler, RandomIdGenerator, type IdGenerator, type SpanExporter,
} from '@opentelemetry/sdk-trace-base';
import { ATTR_SERVICE_NAME, ATTR_SERVICE_VERSION } from '@opentelemetry/semantic-conventions';
import { VERSION } from '../../core/types.js';
import { DEFAULT_OTLP_ENDPOINT, displayUrl } from '../config.js';
import type { TraceContext } from '../trace-context.js';
import { MIN_SECRET_LENGTH, RedactingSpanExporter, redactAttributes, redactString } from './redact.js';

/** Header that carries the platform key to the OTLP endpoint (and the receiver status checks). */
export const PLATFORM_KEY_HEADER = 'x-platform-api-key';
export const TRACER_NAME = 'v2a';

export interface SpanError {
  /** Problem slug or another short, bounded identifier. */
  readonly type: string;
  /** Public-safe description (sanitised again on export). */
  readonly message?: string;
}

export interface Telemetry {
  /** Whether spans are recorded and exported. */
  readonly exporting: boolean;
  /** Why not, when not exporting. */
  readonly disabledReason: string | undefined;
  /** OTLP traces endpoint, origin and path only (undefined when not exporting). */
  readonly endpoint: string | undefined;
  /**
   * The server span of a request, with the ids of `ctx` (the response's traceparent); undefined
   * when not exporting or when the caller's trace is not sampled.
   */
  startRequestSpan(ctx: TraceContext, name: string, attributes: Attributes, startTime?: number): Span | undefined;
  /** A child of `parent` (undefined parent: undefined). */
  startSpan(parent: Span | undefined, name: string, attributes?: Attributes, startTime?: number): Span | undefined;
  /** A finished child of `parent` with explicit start and end (epoch ms), e.g. a stage a worker timed. */
  recordSpan(parent: Span | undefined, name: string, start: number, end: number, attributes?: Attributes, error?: SpanError): void;
  forceFlush(): Promise<void>;
  /** Flushes and stops the export (idempotent). */
  shutdown(): Promise<void>;
}

/** Marks a span failed: `error.type` and an ERROR status with a message. */
export function failSpan(span: Span | undefined, error: SpanError): void {
  if (!span) return;
  span.setAttribute('error.type', error.type);
  span.setStatus({ code: SpanStatusCode.ERROR, ...(error.message ? { message: error.message } : {}) });
}

/** Ends a span if there is one. */
export function endSpan(span: Span | undefined, attributes?: Attributes, endTime?: number): void {
  if (!span) return;
  if (attributes) span.setAttributes(attributes);
  span.end(endTime);
}

/** Milliseconds since the Unix epoch, sub-millisecond (as the workers measure). */
export const nowMs = (): number => performance.timeOrigin + performance.now();

const DISABLED: Telemetry = {
  exporting: false,
  disabledReason: 'PLATFORM_API_KEY is not set',
  endpoint: undefined,
  startRequestSpan: () => undefined,
  startSpan: () => undefined,
  recordSpan: () => {},
  forceFlush: async () => {},
  shutdown: async () => {},
};

/** Random ids, except the ones adopted for the next span (the server span of plugins/trace.ts). */
class AdoptingIdGenerator implements IdGenerator {
  private readonly random = new RandomIdGenerator();
  private traceId: string | undefined;
  private spanId: string | undefined;
  adopt(traceId: string | undefined, spanId: string | undefined): void {
    this.traceId = traceId;
    this.spanId = spanId;
  }
  generateTraceId(): string {
    const id = this.traceId;
    this.traceId = undefined;
    return id ?? this.random.generateTraceId();
  }
  generateSpanId(): string {
    const id = this.spanId;
    this.spanId = undefined;
    return id ?? this.random.generateSpanId();
  }
}

/** The OTLP traces URL the exporter will use, by the OpenTelemetry environment rules. */
export function otlpTracesUrl(env: NodeJS.ProcessEnv): string {
  const specific = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim();
  if (specific) return specific;
  const base = env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim() || DEFAULT_OTLP_ENDPOINT;
  return `${base.replace(/\/$/, '')}/v1/traces`;
}

const truthy = (v: string | undefined) => /^(true|1|yes|on)$/i.test(v?.trim() ?? '');

export interface TelemetryOptions {
  /** PLATFORM_API_KEY; undefined: no export. */
  key: string | undefined;
  /** Where the OTEL_* settings are read (default process.env; the exporter itself reads process.env). */
  env?: NodeJS.ProcessEnv;
  log?: { warn(obj: unknown, msg: string): void };
  /** Told about each export batch. */
  onExport?: (ok: boolean, spans: number) => void;
  /** TEST ONLY: export here instead of OTLP (still through the redaction). */
  exporter?: SpanExporter;
}

export function createTelemetry(opts: TelemetryOptions): Telemetry {
  const env = opts.env ?? process.env;
  if (opts.key === undefined) return DISABLED;
  if (truthy(env.OTEL_SDK_DISABLED)) return { ...DISABLED, disabledReason: 'OTEL_SDK_DISABLED is true' };
  if (env.OTEL_TRACES_EXPORTER?.trim().toLowerCase() === 'none') return { ...DISABLED, disabledReason: 'OTEL_TRACES_EXPORTER is none' };

  const key = opts.key;
  const secrets = [key];
  if (key.length < MIN_SECRET_LENGTH) {
    opts.log?.warn({ minLength: MIN_SECRET_LENGTH }, 'PLATFORM_API_KEY is very short: it cannot be redacted from span text and is easy to guess; use 32 or more random characters');
  }
  const url = otlpTracesUrl(env);
  try {
    const u = new URL(url);
    if (u.protocol === 'http:' && !/^(localhost|127\.\d+\.\d+\.\d+|\[::1\])$/.test(u.hostname)) {
      opts.log?.warn({ endpoint: displayUrl(url) }, 'spans are exported over plain http to a host that is not loopback: the platform key travels in clear text; use https');
    }
  } catch {
    opts.log?.warn({}, 'OTEL_EXPORTER_OTLP_(TRACES_)ENDPOINT is not a valid URL: the exporter falls back to its default');
  }

  const protocol = (env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL ?? env.OTEL_EXPORTER_OTLP_PROTOCOL)?.trim();
  if (protocol && protocol !== 'http/json') {
    opts.log?.warn({ protocol }, 'OTEL_EXPORTER_OTLP_(TRACES_)PROTOCOL is not http/json: v2a exports OTLP/HTTP with the JSON encoding only');
  }
  const exporter = opts.exporter ?? new OTLPTraceExporter({ headers: { [PLATFORM_KEY_HEADER]: key } });
  const redacting = new RedactingSpanExporter(exporter, secrets, (result, spans) => {
    const ok = result.code === ExportResultCode.SUCCESS;
    opts.onExport?.(ok, spans);
    if (!ok) opts.log?.warn({ spans, reason: redactString(result.error?.message ?? 'unknown', secrets) }, 'span export failed');
  });

  const detected = detectResources({ detectors: [envDetector] });
  const resource = resourceFromAttributes(redactAttributes({
    ...detected.attributes,
    [ATTR_SERVICE_NAME]: env.OTEL_SERVICE_NAME?.trim() || 'v2a',
    [ATTR_SERVICE_VERSION]: VERSION,
  }, secrets));

  const ids = new AdoptingIdGenerator();
  const provider = new BasicTracerProvider({
    resource,
    idGenerator: ids,
    sampler: new ParentBasedSampler({ root: new AlwaysOnSampler() }),
    spanProcessors: [new BatchSpanProcessor(redacting)],
  });
  const tracer: Tracer = provider.getTracer(TRACER_NAME, VERSION);
  let stopped: Promise<void> | undefined;

  const childContext = (parent: Span) => trace.setSpan(ROOT_CONTEXT, parent);

  return {
    exporting: true,
    disabledReason: undefined,
    endpoint: displayUrl(url),

    startRequestSpan(ctx, name, attributes, startTime) {
      if (stopped) return undefined;
      const parent = ctx.parentSpanId
        ? trace.setSpanContext(ROOT_CONTEXT, {
          traceId: ctx.traceId,
          spanId: ctx.parentSpanId,
          traceFlags: (parseInt(ctx.flags, 16) & 1) === 1 ? TraceFlags.SAMPLED : TraceFlags.NONE,
          isRemote: true,
        })
        : ROOT_CONTEXT;
      let span: Span;
      ids.adopt(ctx.parentSpanId ? undefined : ctx.traceId, ctx.spanId);
      try {
        span = tracer.startSpan(name, { kind: SpanKind.SERVER, attributes, ...(startTime !== undefined ? { startTime } : {}) }, parent);
      } finally {
        ids.adopt(undefined, undefined);
      }
      return span.isRecording() ? span : undefined;
    },

    startSpan(parent, name, attributes, startTime) {
      if (!parent) return undefined;
      return tracer.startSpan(name, { kind: SpanKind.INTERNAL, ...(attributes ? { attributes } : {}), ...(startTime !== undefined ? { startTime } : {}) }, childContext(parent));
    },

    recordSpan(parent, name, start, end, attributes, error) {
      if (!parent) return;
      const span = tracer.startSpan(name, { kind: SpanKind.INTERNAL, startTime: start, ...(attributes ? { attributes } : {}) }, childContext(parent));
      if (error) failSpan(span, error);
      span.end(Math.max(start, end));
    },

    forceFlush: () => provider.forceFlush(),
    shutdown: () => (stopped ??= provider.shutdown().catch(() => {})),
  };
}
