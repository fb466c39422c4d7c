/**
 * The HTTP application: one Fastify instance with a plugin per concern, in this order:
 * trace context, telemetry (server spans, HTTP metrics), security headers, errors
 * (problem+json), body guard (body idle timeout, 100-continue, cutting uploads at shutdown),
 * CORS, rate limit, compression (text-like replies, as Accept-Encoding asks), shutdown gate, then
 * the routes; render admission (admission.ts) is shared by the render and MCP routes. Node's
 * header and request timeouts and its parser errors are answered by the body guard's client-error
 * handler, CONNECT by its refuseConnect; connections.ts closes idle connections at shutdown.
 * `buildApp` does not listen; main.ts (and `v2a serve`) do. Closing the app closes the worker
 * pool, flushes and stops the span export and stops the receiver status checks.
 */
import Fastify, { LogController, type FastifyInstance, type FastifyServerOptions } from 'fastify';
import type { LookupFunction } from 'node:net';
import { VERSION } from '../core/types.js';
import { platformKeyOf, trustProxyOption, type ServerConfig } from './config.js';
import { dropForwardedPorts } from './net/forwarded-for.js';
import { requestIdOf } from './request-id.js';
import type { AppContext } from './context.js';
import { createAdmission } from './admission.js';
import { bodyGuardPlugin, clientErrorHandler, refuseConnect, type BodyGuard } from './plugins/body-guard.js';
import { trackConnections } from './connections.js';
import { registerCompress } from './plugins/compress.js';
import { registerCors } from './plugins/cors.js';
import { closeAfter, errorsPlugin, replyWithError, requestPath, routableTarget, sendProblem } from './plugins/errors.js';
import { registerRateLimit } from './plugins/rate-limit.js';
import { securityHeadersPlugin } from './plugins/security-headers.js';
import { endedUnwritten, telemetryPlugin } from './plugins/telemetry.js';
import { stashTrace, tracePlugin } from './plugins/trace.js';
import { traceContextFor } from './trace-context.js';
import { Redactor } from './telemetry/redact.js';
import { shuttingDown } from './problem.js';
import { createReceiverChecker, type ReceiverChecker } from './receiver-check.js';
import { createRenderPool, type RenderPool } from './render-pool.js';
import { createRenderService } from './render-service.js';
import { discoveryRoutes } from './routes/discovery.js';
import { handoffRoutes } from './routes/handoff.js';
import { HEALTH_PATHS, healthRoutes } from './routes/health.js';
import { createDispatcher, mcpRoutes } from './routes/mcp.js';
import { ENDPOINTS } from '../contract/endpoints.js';
import { platformRoutes } from './routes/platform.js';
import { renderRoutes } from './routes/render.js';
import { studioRoutes } from './routes/studio.js';
import { ServerMetrics } from './telemetry/metrics.js';
import { createTelemetry, type Telemetry } from './telemetry/tracing.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** Shared state of the v2a routes (config, pool, shutdown flag). */
    v2a: AppContext;
  }
}

export interface BuildAppOptions {
  /** Fastify logger option; default: JSON logs at config.logLevel. */
  logger?: FastifyServerOptions['logger'];
  /** Write the JSON log lines here instead of standard output (when `logger` is not given). */
  logStream?: NodeJS.WritableStream;
  /** Use this pool instead of creating one (it is still closed with the app). */
  pool?: RenderPool;
  /** TEST ONLY: DNS lookup for imageUrl fetches. */
  fetchLookup?: LookupFunction;
  /** TEST ONLY: extra trusted CA (PEM) for imageUrl fetches (and receiver status checks). */
  fetchCa?: string | Buffer;
  /** Use this telemetry instead of creating one from PLATFORM_API_KEY and the OTEL_* variables. */
  telemetry?: Telemetry;
}

/** Default body limit of routes that take no image (1 MiB is Fastify's own default). */
const DEFAULT_BODY_LIMIT = 1024 * 1024;

export async function buildApp(config: ServerConfig, options: BuildAppOptions = {}): Promise<FastifyInstance> {
  const key = platformKeyOf(config);
  // The spans' redaction rules for the access log too: no query string, key or base64 in a line.
  const redactor = new Redactor(key === undefined ? [] : [key]);
  // Whether traces this server starts are sampled (span export on); known once telemetry exists,
  // before the first request.
  let sampleNew = false;
  const app = Fastify({
    logger: options.logger ?? {
      level: config.logLevel,
      redact: { paths: ['req.headers.authorization', 'req.headers["x-platform-api-key"]'], remove: true },
      serializers: {
        req: (req: { method?: string; url?: string; ip?: string; socket?: { remotePort?: number }; headers?: Record<string, string | string[] | undefined> }) => ({
          method: req.method,
          url: redactor.string(req.url ?? ''),
          remoteAddress: req.ip,
          remotePort: req.socket?.remotePort,
          requestId: requestIdOf(req.headers?.['x-request-id']),
        }),
      },
      ...(options.logStream ? { stream: options.logStream } : {}),
    },
    trustProxy: trustProxyOption(config.trustProxy),
    bodyLimit: DEFAULT_BODY_LIMIT,
    return503OnClosing: false,
    // connections.ts closes idle connections at shutdown (and makes Node's closeIdleConnections,
    // which server.close() calls, close only those with no request in progress).
    forceCloseConnections: false,
    requestIdHeader: false,
    // The request id of every log line is the trace id (the one in traceparent and problem bodies).
    logController: new V2aLogController({ requestIdLogLabel: 'traceId' }),
    genReqId: (raw) => stashTrace(raw, traceContextFor({ traceparent: raw.headers.traceparent, tracestate: raw.headers.tracestate }, sampleNew)).traceId,
    // Node's timeouts for the request line + headers and for the whole request; Node checks them
    // every connectionsCheckingInterval, so that follows the shorter one.
    http: {
      headersTimeout: config.headersTimeoutMs,
      requestTimeout: config.requestTimeoutMs,
      connectionsCheckingInterval: Math.max(50, Math.min(1000, Math.floor(config.headersTimeoutMs / 4))),
      // Host is checked in plugins/errors.ts, which answers a problem body with a trace (Node's
      // own check writes a bare 400) and also refuses two Host headers.
      requireHostHeader: false,
    },
    requestTimeout: config.requestTimeoutMs,
    keepAliveTimeout: config.keepAliveTimeoutMs,
    clientErrorHandler,
    // A target the router cannot read (`/%`) is routed escaped and answered 400 by the errors
    // plugin, through every hook, instead of as a framework error.
    // Also the first code to see each request: where X-Forwarded-For loses its ports, before
    // anything reads the client's address (under V2A_TRUST_PROXY; else the header is not read).
    rewriteUrl: (raw) => {
      if (config.trustProxy !== false) dropForwardedPorts(raw.headers);
      return routableTarget(raw);
    },
    // Errors raised before routing that remain (none of our routes has parameters or constraints)
    // get a problem body as well.
    frameworkErrors: (err, request, reply) => {
      replyWithError(err, request, reply);
    },
  });

  const pool = options.pool ?? createRenderPool({
    workers: config.workers,
    queueLimit: config.queueLimit,
    timeoutMs: config.renderTimeoutMs,
    warmUp: config.warmUp,
    onWarm: (ms) => app.log.info({ workers: config.workers, warmUpMs: ms }, 'render workers warm'),
    onWarmUpFailed: (why) => app.log.error({ workers: config.workers, reason: why }, 'a render worker cannot render its warm-up scene: not ready'),
    onError: (err) => app.log.error({ err }, 'render worker error'),
  });
  const startedAt = performance.now();
  let receiver: ReceiverChecker | undefined;
  let telemetry: Telemetry | undefined;
  const metrics = new ServerMetrics({
    pool: () => pool.stats(),
    // Read at scrape time, after `admission` below exists.
    admission: () => admission,
    startedAt,
    receiver: {
      latest: () => {
        const r = receiver?.latest();
        return r && { up: r.ok, latencySeconds: r.latencyMs === undefined ? undefined : r.latencyMs / 1000 };
      },
    },
    exporting: () => telemetry?.exporting ?? false,
  });
  try {
    telemetry = options.telemetry ?? await createTelemetry({
      key,
      log: app.log,
      onExport: (ok) => metrics.spanExports.inc({ result: ok ? 'ok' : 'failed' }),
    });
  } catch (err) {
    // Span export that cannot be set up (TelemetrySetupError): no worker threads left behind.
    metrics.close();
    await pool.close();
    throw err;
  }
  sampleNew = telemetry.exporting;
  if (key !== undefined && config.receiverStatusUrl !== undefined) {
    receiver = createReceiverChecker({
      url: config.receiverStatusUrl,
      key,
      intervalMs: config.receiverCheckIntervalMs,
      timeoutMs: Math.min(config.fetchTimeoutMs, 5000),
      allowLoopback: config.testAllowLoopbackFetch,
      ...(options.fetchLookup ? { lookup: options.fetchLookup } : {}),
      ...(options.fetchCa !== undefined ? { ca: options.fetchCa } : {}),
      userAgent: `v2a/${VERSION} (receiver status check)`,
      onResult: (r) => {
        const result = r.ok ? 'ok' : r.reachable ? 'http_error' : RECEIVER_REFUSALS.has(r.error ?? '') ? 'refused' : 'unreachable';
        metrics.receiverChecks.inc({ result });
        if (!r.ok) app.log.warn({ receiver: r }, 'handoff receiver status check did not succeed');
      },
    });
  }

  const renderer = createRenderService({
    config,
    pool,
    ...(options.fetchLookup ? { fetchLookup: options.fetchLookup } : {}),
    ...(options.fetchCa !== undefined ? { fetchCa: options.fetchCa } : {}),
    log: app.log,
    telemetry,
    metrics,
  });
  app.addHook('onReady', async () => {
    receiver?.start();
  });
  // CONNECT never reaches Fastify: Node hands it to 'connect' listeners, and without one destroys
  // the socket unanswered.
  app.server.on('connect', (req, socket) => refuseConnect(app, req, socket));
  const connections = trackConnections(app.server, { maxConnections: config.maxConnections, sendTimeoutMs: config.sendTimeoutMs });
  // At V2A_MAX_CONNECTIONS, each with a request in progress, new connections are closed
  // unanswered: counted, and logged at most once a minute (a flood of them must not flood the
  // log), so an operator sees the cap.
  let droppedLogged = -Infinity;
  app.server.on('drop', () => {
    metrics.droppedConnections.inc();
    if (performance.now() - droppedLogged < 60_000) return;
    droppedLogged = performance.now();
    app.log.warn({ maxConnections: config.maxConnections }, 'V2A_MAX_CONNECTIONS connections are open, each with a request in progress: new connections are closed as they arrive');
  });
  app.addHook('onSend', async (_request, reply, payload) => {
    connections.sending(reply.raw);
    return payload;
  });
  const guard: { current?: BodyGuard } = {};
  // Uploads still arriving when shutdown starts are cut, and connections with no request in
  // progress are closed: draining waits for renders, not for them.
  app.addHook('preClose', async () => {
    app.v2a.closing = true;
    guard.current?.cutUnfinished(() => shuttingDown());
    connections.drain();
  });
  app.addHook('onClose', async () => {
    app.v2a.closing = true;
    receiver?.stop();
    metrics.close();
    await pool.close();
    await telemetry?.shutdown();
  });

  // Probes and scrapes: untraced, and at LOG_LEVEL info they log warnings only. A kubelet's
  // probes and a Prometheus scrape made two info lines each, about 45,000 a day per idle pod;
  // at debug and trace they are logged as any request is.
  const probePaths = new Set<string>([...HEALTH_PATHS, ENDPOINTS.metrics.path, ENDPOINTS.status.path]);
  if (config.logLevel === 'info') {
    app.addHook('onRoute', (route) => {
      if (probePaths.has(route.url)) route.logLevel = 'warn';
    });
  }
  await app.register(tracePlugin, { sampleNew: telemetry.exporting });
  await app.register(telemetryPlugin, {
    telemetry,
    metrics,
    untraced: probePaths,
    renderRoutes: new Map<string, 'http' | 'mcp'>([[ENDPOINTS.render.path, 'http'], [ENDPOINTS.mcp.path, 'mcp']]),
  });
  await app.register(securityHeadersPlugin);
  await app.register(errorsPlugin);
  await app.register(bodyGuardPlugin, { bodyIdleTimeoutMs: config.bodyIdleTimeoutMs, guard });
  await registerCors(app, config);
  const limiter = await registerRateLimit(app, config);
  await registerCompress(app, config);
  const admission = createAdmission(config.workers + config.queueLimit, () => pool.retryAfterSeconds(), config.clientSlots);
  const ctx: AppContext = { config, pool, renderer, limiter, admission, startedAt, telemetry, metrics, receiver, connections, closing: false };
  app.decorate('v2a', ctx);

  // Shutdown gate: once closing, new work is refused (health still answers, with 503).
  const healthPaths = new Set<string>(HEALTH_PATHS);
  app.addHook('onRequest', async (request, reply) => {
    if (!ctx.closing || healthPaths.has(requestPath(request))) return;
    closeAfter(request, reply);
    return sendProblem(request, reply, shuttingDown());
  });

  // Connections that finish a reply during shutdown are closed, so the listener can drain.
  app.addHook('onSend', async (_request, reply, payload) => {
    if (ctx.closing) reply.header('connection', 'close');
    return payload;
  });

  await app.register(healthRoutes, { ctx });
  await app.register(renderRoutes, { ctx });
  await app.register(mcpRoutes, { ctx, dispatcher: createDispatcher(ctx, app.log) });
  await app.register(handoffRoutes, { ctx });
  await app.register(discoveryRoutes, { ctx });
  await app.register(studioRoutes, { ctx });
  await app.register(platformRoutes, { ctx });
  return app;
}

/**
 * Fastify's request lines, less the "request completed" of a reply whose connection closed before
 * it was written out (Node emits its 'finish' all the same): plugins/telemetry.ts ended it as
 * "request aborted" or "request cut".
 */
class V2aLogController extends LogController {
  /**
   * Fastify's line, with the request's method, URL (redacted), client and route: its own named
   * only the status, so a line per route or per 429 meant joining two lines by trace id.
   */
  override requestCompleted(...args: Parameters<LogController['requestCompleted']>): void {
    const [error, request, reply] = args;
    if (this.isLogDisabled(request) || (!error && endedUnwritten(request))) return;
    const line = { req: request, route: request.routeOptions?.url, res: reply, responseTime: reply.elapsedTime };
    if (error) reply.log.error({ ...line, err: error }, 'request errored');
    else reply.log.info(line, 'request completed');
  }
}

/** Receiver check errors that are this server's refusals (address policy), not network failures. */
const RECEIVER_REFUSALS = new Set(['address_not_public', 'scheme_not_allowed', 'ip_literal', 'credentials_not_allowed', 'invalid_url']);
