/**
 * Trace context on every reply: a valid incoming `traceparent` is continued with a new span id,
 * otherwise a new trace starts (rules in ../trace-context.ts). Every response carries
 * `traceparent` (the server span) and, when the caller's was well formed, `tracestate`.
 * `request.trace` / `request.traceId` are available to routes, logs and problem bodies.
 * With span export on (telemetry/tracing.ts), the exported server span `v2a.request` has exactly
 * these ids: the response's traceparent names a span the collector receives.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { formatTraceparent, traceContextFor, type TraceContext } from '../trace-context.js';
import { globalPlugin } from './plugin.js';
import { requestIdOf } from '../request-id.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The server span's trace context. */
    readonly trace: TraceContext;
    /** Shorthand for `trace.traceId`: the public trace id (32 hex). */
    readonly traceId: string;
  }
}

const kTrace = Symbol('v2a.trace');
type WithTrace = FastifyRequest & { [kTrace]?: TraceContext };

const kRawTrace = Symbol('v2a.rawTrace');

/**
 * Keeps the trace context decided for a raw request (by Fastify's genReqId, so that the request id
 * of every log line is the trace id); the plugin then uses it. Returns `trace`.
 */
export function stashTrace(raw: object, trace: TraceContext): TraceContext {
  (raw as { [kRawTrace]?: TraceContext })[kRawTrace] = trace;
  return trace;
}

/** The trace stashTrace kept for a raw request (the one its log lines name), if any. */
export const stashedTrace = (raw: object): TraceContext | undefined => (raw as { [kRawTrace]?: TraceContext })[kRawTrace];

export interface TracePluginOptions {
  /** Sampled flag of traces this server starts (spans are exported). */
  sampleNew: boolean;
}

export const tracePlugin = globalPlugin<TracePluginOptions>('v2a-trace', async (app: FastifyInstance, opts) => {
  // Computed on first use, so that replies sent before any hook ran (framework errors) have one too.
  const contextOf = (req: WithTrace): TraceContext =>
    (req[kTrace] ??= stashedTrace(req.raw)
      ?? traceContextFor({ traceparent: req.headers.traceparent, tracestate: req.headers.tracestate }, opts.sampleNew));

  app.decorateRequest('trace', { getter(this: FastifyRequest) { return contextOf(this as WithTrace); } });
  app.decorateRequest('traceId', { getter(this: FastifyRequest) { return contextOf(this as WithTrace).traceId; } });

  app.addHook('onRequest', async (request) => {
    const ctx = request.trace;
    // traceId is already the request id of every line (app.ts: genReqId, requestIdLogLabel).
    request.log = request.log.child({ spanId: ctx.spanId });
  });

  app.addHook('onSend', async (request, reply) => {
    const ctx = request.trace;
    reply.header('traceparent', formatTraceparent(ctx));
    if (ctx.tracestate !== undefined) reply.header('tracestate', ctx.tracestate);
    else reply.removeHeader('tracestate');
    // The proxy's request id back to it (request-id.ts); the log lines name it too (app.ts).
    const requestId = requestIdOf(request.headers['x-request-id']);
    if (requestId !== undefined) reply.header('x-request-id', requestId);
  });
});
