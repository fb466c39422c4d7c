/**
 * `GET /api/health` and `GET /api/v1/health`: liveness and capability probe, one envelope for
 * both. 200 `ok` while serving; 503 `shutting_down` once shutdown began, so load balancers stop
 * sending work. Never touches the worker pool (answers promptly under load).
 */
import type { FastifyInstance } from 'fastify';
import { CHARSETS, FORMATS, QUALITY_TARGETS } from '../../core/params/definitions.js';
import { VERSION } from '../../core/types.js';
import type { AppContext } from '../context.js';
import { ENDPOINTS } from '../../contract/endpoints.js';

export const HEALTH_PATHS = [ENDPOINTS.health.path, ENDPOINTS.healthV1.path] as const;

export function healthEnvelope(ctx: AppContext, traceId: string) {
  return {
    status: ctx.closing ? ('shutting_down' as const) : ('ok' as const),
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

export async function healthRoutes(app: FastifyInstance, opts: { ctx: AppContext }): Promise<void> {
  for (const url of HEALTH_PATHS) {
    app.get(url, async (request, reply) => {
      const body = healthEnvelope(opts.ctx, request.traceId);
      return reply.code(body.status === 'ok' ? 200 : 503).header('cache-control', 'no-store').send(body);
    });
  }
}
