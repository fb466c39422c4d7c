/**
 * The exporting telemetry (tracing.ts createTelemetry, PLATFORM_API_KEY set): a
 * BasicTracerProvider of this app -> BatchSpanProcessor -> RedactingSpanExporter -> OTLP/HTTP JSON.
 * The only module that imports the OpenTelemetry SDK: these packages are optional peer
 * dependencies, and tracing.ts imports this file only when export is on.
 */
import { ROOT_CONTEXT, SpanKind, TraceFlags, trace, type Span, type Tracer } from '@opentelemetry/api';
import { ExportResultCode } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { detectResources, envDetector, resourceFromAttributes } from '@opentelemetry/resources';
import {
  AlwaysOnSampler, BasicTracerProvider, BatchSpanProcessor, ParentBasedSampler, RandomIdGenerator, type IdGenerator,
} from '@opentelemetry/sdk-trace-base';
import { ATTR_SERVICE_NAME, ATTR_SERVICE_VERSION } from '@opentelemetry/semantic-conventions';
import { VERSION } from '../../core/types.js';
import { RedactingSpanExporter, redactAttributes, redactString } from './redact.js';
import { PLATFORM_KEY_HEADER, TRACER_NAME, failSpan, type Telemetry, type TelemetryOptions } from './tracing.js';

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

export interface ExportingOptions extends TelemetryOptions {
  readonly key: string;
  readonly env: NodeJS.ProcessEnv;
  /** The OTLP traces endpoint as shown (origin and path). */
  readonly endpoint: string | undefined;
}

export function createExportingTelemetry(opts: ExportingOptions): Telemetry {
  const { key, env } = opts;
  const secrets = [key];
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
    endpoint: opts.endpoint,

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
