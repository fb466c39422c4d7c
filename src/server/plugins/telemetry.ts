/**
 * Request-level telemetry: the server span `v2a.request` of every traced request, and the HTTP
 * metrics of every request (GET /api/v1/metrics).
 *
 * - Span: started in onRequest (after plugins/trace.ts decided the ids), ended in onResponse with
 *   the route pattern and status, or when the connection closed before the reply; its last child
 *   `v2a.reply` covers sending the reply (onSend to onResponse). Attributes:
 *   `http.request.method`, `url.path` (never the query), `url.scheme`, `http.route`,
 *   `http.response.status_code`, `error.type` (the problem slug of an error reply), and
 *   `v2a.trace.continued`. 5xx replies set the ERROR status (4xx are the caller's: OK for a
 *   server span, as the HTTP semantic conventions say). Probes and scrapes (health, metrics,
 *   status) are not traced: they are frequent and carry nothing to act on.
 * - Metrics: requests by method, route and status; latency by method and route; rejected render
 *   requests by cause (the problem slug). A request whose client went away before its reply was
 *   written counts with status 499 (nginx's "client closed request"; the problem type
 *   `interrupted` says the same); requests Node's parser refused count under the route `unparsed`
 *   (plugins/body-guard.ts).
 * - Logs: Fastify logs "incoming request" and, once the reply is written, "request completed";
 *   a request whose connection closed first (mostly a client that gave up) ends with "request
 *   aborted: ..." instead, so that every incoming request has a line that ends it.
 */
import type { Span } from '@opentelemetry/api';
import { SpanStatusCode } from '@opentelemetry/api';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { ServerMetrics } from '../telemetry/metrics.js';
import { endSpan, nowMs, type Telemetry } from '../telemetry/tracing.js';
import { onReplyDone } from '../reply-done.js';
import { badTarget, methodsAt, problemSlugOf, requestPath } from './errors.js';
import { globalPlugin } from './plugin.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The server span, when this request is traced and exported. */
    span: Span | undefined;
  }
}

export interface TelemetryPluginOptions {
  telemetry: Telemetry;
  metrics: ServerMetrics;
  /** Paths that get no span. */
  untraced: ReadonlySet<string>;
  /** Route patterns whose error replies count as rejected inputs, with the face they count under. */
  renderRoutes: ReadonlyMap<string, 'http' | 'mcp'>;
}

const kSendAt = Symbol('v2a.sendAt');
type WithSendAt = FastifyRequest & { [kSendAt]?: number };

const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS']);

/** The method label of the HTTP metrics: a bounded set. */
export const methodLabel = (method: string | undefined): string => (method !== undefined && METHODS.has(method) ? method : 'other');

/** The route label of requests Node's HTTP parser refused (no route was ever matched). */
export const UNPARSED_ROUTE = 'unparsed';

/** The status label of a request whose client closed the connection before the reply was written. */
export const ABORTED_STATUS = '499';

const kCounted = Symbol('v2a.counted');
type WithCounted = FastifyRequest & { [kCounted]?: true };
const kUnwritten = Symbol('v2a.unwritten');
type WithUnwritten = FastifyRequest & { [kUnwritten]?: true };

/**
 * Whether Fastify's onResponse came for a reply its connection lost before it was written out:
 * it ended as aborted or cut here, so it is no "request completed" (app.ts's log controller).
 */
export const endedUnwritten = (request: FastifyRequest): boolean => (request as WithUnwritten)[kUnwritten] === true;

function routeOf(request: FastifyRequest): string {
  // A target the router could not read matched nothing, whatever its rewritten form routed to.
  if (badTarget(request)) return 'unmatched';
  const route = request.routeOptions.url;
  if (route !== undefined) return route;
  // A method the path does not have (405): the path is a route's (none has parameters), so the
  // labels stay as few as the routes.
  const path = requestPath(request);
  return methodsAt(request.server, path).length > 0 ? path : 'unmatched';
}

export const telemetryPlugin = globalPlugin<TelemetryPluginOptions>('v2a-telemetry', async (app: FastifyInstance, opts) => {
  const { telemetry, metrics } = opts;
  app.decorateRequest('span', undefined);

  if (telemetry.exporting) {
    app.addHook('onRequest', async (request) => {
      const path = requestPath(request);
      if (opts.untraced.has(path)) return;
      request.span = telemetry.startRequestSpan(request.trace, 'v2a.request', {
        'http.request.method': METHODS.has(request.method) ? request.method : '_OTHER',
        'url.path': path,
        'url.scheme': request.protocol,
        'v2a.trace.continued': request.trace.continued,
      }, nowMs());
    });

    // The reply stage: from the handler's send to the last byte handed to the socket.
    app.addHook('onSend', async (request, _reply, payload) => {
      if (request.span) (request as WithSendAt)[kSendAt] = nowMs();
      return payload;
    });
  }

  // A connection that closes before the reply was written (a client that gave up on a render, say)
  // gets no onResponse, and Fastify's onRequestAbort only fires while the body is still arriving:
  // the request ends here, in the logs and the metrics.
  const endUnwritten = (request: FastifyRequest, elapsed: number): void => {
    (request as WithCounted)[kCounted] = true;
    const method = methodLabel(request.method);
    const route = routeOf(request);
    metrics.requests.inc({ method, route, status: ABORTED_STATUS });
    metrics.latency.observe({ method, route }, elapsed / 1000);
    if (request.server.v2a?.cutting) request.log.warn({ responseTime: elapsed }, 'request cut: the server shut down before the reply (V2A_SHUTDOWN_TIMEOUT_MS)');
    else request.log.info({ responseTime: elapsed }, 'request aborted: the connection closed before the reply');
    const span = request.span;
    if (!span) return;
    request.span = undefined;
    span.setAttribute('v2a.client_aborted', true);
    endSpan(span, { 'http.route': route });
  };
  app.addHook('onRequest', async (request, reply) => {
    onReplyDone(request.raw, reply.raw, () => {
      if (reply.raw.writableFinished || (request as WithCounted)[kCounted]) return;
      endUnwritten(request, reply.elapsedTime);
    });
  });

  app.addHook('onResponse', async (request, reply) => {
    if ((request as WithCounted)[kCounted]) return;
    // Node emits a reply's 'finish' (so onResponse) also when its socket was destroyed with part of
    // the reply still unwritten (the send timeout, the shutdown's cut, a client gone mid-reply):
    // a reply is written out only if 'finish' (this hook's first step) finds the socket open.
    if (request.raw.socket?.destroyed) {
      (request as WithUnwritten)[kUnwritten] = true;
      return endUnwritten(request, reply.elapsedTime);
    }
    (request as WithCounted)[kCounted] = true;
    const method = methodLabel(request.method);
    const route = routeOf(request);
    const status = reply.statusCode;
    metrics.requests.inc({ method, route, status: String(status) });
    metrics.latency.observe({ method, route }, reply.elapsedTime / 1000);
    const slug = problemSlugOf(request);
    const face = opts.renderRoutes.get(route);
    if (status >= 400 && face) metrics.rejected.inc({ face, cause: slug ?? `http-${status}` });

    const span = request.span;
    if (!span) return;
    request.span = undefined;
    span.setAttributes({ 'http.route': route, 'http.response.status_code': status });
    if (slug) span.setAttribute('error.type', slug);
    else if (status >= 400) span.setAttribute('error.type', String(status));
    if (status >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
    const sendAt = (request as WithSendAt)[kSendAt];
    const end = nowMs();
    if (sendAt !== undefined) telemetry.recordSpan(span, 'v2a.reply', sendAt, end, { 'http.response.status_code': status });
    span.end(end);
  });
});
