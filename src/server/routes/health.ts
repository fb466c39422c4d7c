/**
 * `GET /api/health` and `GET /api/v1/health`: liveness and capability probe, one envelope for
 * both. 200 `ok` while serving; 503 `shutting_down` once shutdown began, so load balancers stop
 * sending work. Never touches the worker pool (answers promptly under load).
 * `GET /api/v1/health/live` and `/api/v1/health/ready`: the Kubernetes probes (operational
 * extensions, deploy/README.md), liveness and readiness apart so a busy or warming pod is never
 * restarted.
 *
 * At SIGTERM (after V2A_SHUTDOWN_DELAY_MS, during which these answer 503) the listener closes (start.ts): a probe, on a new connection each time, is refused,
 * which the kubelet counts as not ready. By then the pod has left its Service's endpoints (they
 * drop a terminating pod; deploy/k8s's preStop sleep covers the propagation), and the kubelet
 * runs no liveness probes on a terminating pod. `shutting_down` and `draining` are what a
 * request still reaching the app during the drain sees (one on a connection that stayed open).
 */
import type { FastifyInstance } from 'fastify';
import { CHARSETS, FORMATS, QUALITY_TARGETS } from '../../core/params/definitions.js';
import { VERSION } from '../../core/types.js';
import type { AppContext } from '../context.js';
import { ENDPOINTS } from '../../contract/endpoints.js';
import type { JsonSchema } from '../../core/format/jsonSchemas.js';
import { POOL_STATS_SCHEMA } from '../render-pool.js';
import { TRACE_ID_SCHEMA } from '../trace-context.js';
import { SHUTDOWN_RETRY_AFTER } from '../problem.js';

/** The paths of the trace-aware envelope (interface.md). */
export const ENVELOPE_PATHS = [ENDPOINTS.health.path, ENDPOINTS.healthV1.path] as const;
/** Kubernetes liveness: 200 while the process answers (refused once shutdown has closed the listener). */
export const LIVENESS_PATH = ENDPOINTS.healthLive.path;
/** Kubernetes readiness: 200 while the pool takes work; 503 `warming` until its workers have warmed up, `draining` once shutdown began (refused once it has closed the listener). */
export const READINESS_PATH = ENDPOINTS.healthReady.path;
/** Every health path: answered during shutdown, never traced. */
export const HEALTH_PATHS = [...ENVELOPE_PATHS, LIVENESS_PATH, READINESS_PATH] as const;

/** Shutdown has begun, its delay (V2A_SHUTDOWN_DELAY_MS) or its drain: the probes answer 503 from then on. */
const shuttingDown = (ctx: AppContext): boolean => ctx.closing || ctx.leaving === true;

export function healthEnvelope(ctx: AppContext, traceId: string) {
  return {
    status: shuttingDown(ctx) ? ('shutting_down' as const) : ('ok' as const),
    service: 'v2a',
    version: VERSION,
    uptimeSeconds: Math.round((performance.now() - ctx.startedAt) / 100) / 10,
    time: new Date().toISOString(),
    traceId,
    pool: ctx.pool.stats(),
    capabilities: {
      formats: [...FORMATS],
      charsets: [...CHARSETS],
      qualityTargets: [...QUALITY_TARGETS],
      mcp: ENDPOINTS.mcp.path,
      openapi: ENDPOINTS.openapi.path,
    },
  };
}

/** Schema of healthEnvelope (200 and 503 alike). */
export const HEALTH_SCHEMA: JsonSchema = {
  type: 'object',
  required: ['status', 'service', 'version', 'uptimeSeconds', 'time', 'traceId', 'pool', 'capabilities'],
  additionalProperties: false,
  properties: {
    status: { enum: ['ok', 'shutting_down'] },
    service: { const: 'v2a' },
    version: { const: VERSION },
    uptimeSeconds: { type: 'number', minimum: 0 },
    time: { type: 'string', format: 'date-time' },
    traceId: TRACE_ID_SCHEMA,
    pool: POOL_STATS_SCHEMA,
    capabilities: {
      type: 'object',
      required: ['formats', 'charsets', 'qualityTargets', 'mcp', 'openapi'],
      additionalProperties: false,
      properties: {
        formats: { type: 'array', items: { enum: [...FORMATS] } },
        charsets: { type: 'array', items: { enum: [...CHARSETS] } },
        qualityTargets: { type: 'array', items: { enum: [...QUALITY_TARGETS] } },
        mcp: { const: ENDPOINTS.mcp.path },
        openapi: { const: ENDPOINTS.openapi.path },
      },
    },
  },
};

/** Schema of the liveness probe's body. */
export const LIVENESS_SCHEMA: JsonSchema = {
  type: 'object',
  required: ['status', 'uptimeSeconds'],
  additionalProperties: false,
  properties: { status: { const: 'alive' }, uptimeSeconds: { type: 'number', minimum: 0 } },
};

/** Schema of the readiness probe's body (200 `ready`, 503 `warming`, `draining` or `failed` with its `reason`). */
export const READINESS_SCHEMA: JsonSchema = {
  type: 'object',
  required: ['status', 'pool'],
  additionalProperties: false,
  properties: { status: { enum: ['ready', 'warming', 'draining', 'failed'] }, reason: { type: 'string' }, pool: POOL_STATS_SCHEMA },
};

export async function healthRoutes(app: FastifyInstance, opts: { ctx: AppContext }): Promise<void> {
  for (const url of ENVELOPE_PATHS) {
    app.get(url, async (request, reply) => {
      const body = healthEnvelope(opts.ctx, request.traceId);
      // A 503 says when to retry, as every shutdown refusal does (decisions.md).
      if (body.status !== 'ok') reply.header('retry-after', SHUTDOWN_RETRY_AFTER);
      return reply.code(body.status === 'ok' ? 200 : 503).header('cache-control', 'no-store').send(body);
    });
  }
  // Probes: no trace envelope, no capability list; cheap enough for every kubelet period.
  app.get(LIVENESS_PATH, async (_request, reply) =>
    reply.header('cache-control', 'no-store').send({ status: 'alive', uptimeSeconds: Math.round((performance.now() - opts.ctx.startedAt) / 100) / 10 }));
  // A full queue does not make a pod unready: the pool answers 503 + Retry-After itself, and
  // pulling every busy pod out of the Service at once would turn load into an outage. Until the
  // workers have warmed up (V2A_WARM_UP), 503 `warming`: a new pod's first requests then run warm.
  // A worker whose warm-up render failed (its kernels could not be made, sharp did not load) is a
  // pool that cannot render: 503 `failed` for as long as the process runs. The why is logged, not
  // told here: an internal message may name the server's files, and this path needs no key.
  app.get(READINESS_PATH, async (_request, reply) => {
    const failure = opts.ctx.pool.warmUpFailure?.();
    const status = shuttingDown(opts.ctx) ? 'draining' : failure !== undefined ? 'failed' : opts.ctx.pool.warm() ? 'ready' : 'warming';
    const reason = status === 'failed' ? { reason: 'a render worker cannot render its warm-up image: the server log says why' } : {};
    if (status === 'draining') reply.header('retry-after', SHUTDOWN_RETRY_AFTER);
    return reply.code(status === 'ready' ? 200 : 503).header('cache-control', 'no-store').send({ status, ...reason, pool: opts.ctx.pool.stats() });
  });
}
