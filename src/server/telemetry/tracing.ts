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
 * - Packaging: only `@opentelemetry/api` is a dependency (the no-op API every span call goes
 *   through). The SDK and the exporter are optional peer dependencies, imported by ./export.ts
 *   only when export is on, so the core and the CLI never install or load them; with the key set
 *   and the packages missing, start-up fails naming the packages to install (MissingExporterError).
 */
import { SpanStatusCode, type Attributes, type Span } from '@opentelemetry/api';
import type { SpanExporter } from '@opentelemetry/sdk-trace-base';
import { DEFAULT_OTLP_ENDPOINT, displayUrl } from '../config.js';
import type { TraceContext } from '../trace-context.js';
import { MIN_SECRET_LENGTH } from './redact.js';

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

/** The optional peer dependencies the span export needs (package.json peerDependencies). */
export const EXPORT_PACKAGES = [
  '@opentelemetry/core', '@opentelemetry/exporter-trace-otlp-http', '@opentelemetry/resources',
  '@opentelemetry/sdk-trace-base', '@opentelemetry/semantic-conventions',
] as const;

/**
 * Span export cannot be set up as configured: a start-up error (exit 2), like a bad setting.
 * The entries (main.ts, v2a serve) match it by name, not to load this module first.
 */
export class TelemetrySetupError extends Error {
  override name = 'TelemetrySetupError';
}

/** PLATFORM_API_KEY is set (export on) but the OpenTelemetry SDK packages are not installed. */
export class MissingExporterError extends TelemetrySetupError {
  constructor(missing: string) {
    super(`PLATFORM_API_KEY is set, so spans are exported over OTLP, but the OpenTelemetry SDK is not installed (${missing} not found). Install the optional packages: npm install ${EXPORT_PACKAGES.join(' ')} (or unset PLATFORM_API_KEY, or set OTEL_SDK_DISABLED=true).`);
  }
}

/**
 * The telemetry of one app: the no-op when export is off, otherwise the SDK-backed one of
 * ./export.ts, imported only now. Throws TelemetrySetupError: MissingExporterError when the SDK
 * is not installed, or for an OTLP endpoint that is no http(s) URL.
 */
export async function createTelemetry(opts: TelemetryOptions): Promise<Telemetry> {
  const env = opts.env ?? process.env;
  if (opts.key === undefined) return DISABLED;
  if (truthy(env.OTEL_SDK_DISABLED)) return { ...DISABLED, disabledReason: 'OTEL_SDK_DISABLED is true' };
  if (env.OTEL_TRACES_EXPORTER?.trim().toLowerCase() === 'none') return { ...DISABLED, disabledReason: 'OTEL_TRACES_EXPORTER is none' };

  const key = opts.key;
  if (key.length < MIN_SECRET_LENGTH) {
    opts.log?.warn({ minLength: MIN_SECRET_LENGTH }, 'PLATFORM_API_KEY is very short: it cannot be redacted from span text and is easy to guess; use 32 or more random characters');
  }
  const url = otlpTracesUrl(env);
  // The exporter fell back to http://localhost:4318 for an endpoint that is no URL, sending the
  // platform key there in clear text while status showed "(invalid URL)".
  let u: URL | undefined;
  try {
    u = new URL(url);
  } catch {
    u = undefined;
  }
  const name = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim() ? 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT' : 'OTEL_EXPORTER_OTLP_ENDPOINT';
  if (!u || (u.protocol !== 'http:' && u.protocol !== 'https:')) {
    throw new TelemetrySetupError(`${name} must be an http or https URL, such as https://collector.example:4318 (PLATFORM_API_KEY is set, so spans are exported there)`);
  }
  if (u.protocol === 'http:' && !/^(localhost|127\.\d+\.\d+\.\d+|\[::1\])$/.test(u.hostname)) {
    opts.log?.warn({ endpoint: displayUrl(url) }, 'spans are exported over plain http to a host that is not loopback: the platform key travels in clear text; use https');
  }

  const protocol = (env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL ?? env.OTEL_EXPORTER_OTLP_PROTOCOL)?.trim();
  if (protocol && protocol !== 'http/json') {
    opts.log?.warn({ protocol }, 'OTEL_EXPORTER_OTLP_(TRACES_)PROTOCOL is not http/json: v2a exports OTLP/HTTP with the JSON encoding only');
  }
  // Checked by name first, so a missing package is named in the start-up error.
  for (const name of EXPORT_PACKAGES) {
    try {
      import.meta.resolve(name);
    } catch {
      throw new MissingExporterError(name);
    }
  }
  const exporting = await import('./export.js');
  return exporting.createExportingTelemetry({ ...opts, key, env, endpoint: displayUrl(url) });
}
