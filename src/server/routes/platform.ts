/**
 * Protected platform actions (interface.md §5), each behind the platform key
 * (plugins/platform-auth.ts; not registered, so 404 for every method, when PLATFORM_API_KEY is not
 * configured):
 *
 * - `GET /api/v1/metrics`: Prometheus text exposition 0.0.4 (telemetry/metrics.ts), served when
 *   V2A_METRICS is on (default: when the key is set); behind the key only when one is configured.
 * - `GET /api/v1/status`: version, uptime, worker-pool state, span export state, the effective
 *   non-secret configuration (config.ts effectiveConfig: secrets only say whether they are set)
 *   and the handoff receiver's status check (receiver-check.ts): the latest background result,
 *   or a new check when none is fresh (results are shared, never more than one check at a time).
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { VERSION } from '../../core/types.js';
import { EFFECTIVE_SETTING_SCHEMA, effectiveConfig, platformKeyOf } from '../config.js';
import type { AppContext } from '../context.js';
import { ENDPOINTS } from '../../contract/endpoints.js';
import { notFound, requestPath } from '../plugins/errors.js';
import { requirePlatformKey } from '../plugins/platform-auth.js';
import { ON_DEMAND_MAX_AGE_MS, RECEIVER_CHECK_SCHEMA } from '../receiver-check.js';
import { PROMETHEUS_CONTENT_TYPE } from '../telemetry/metrics.js';
import { PLATFORM_KEY_HEADER } from '../telemetry/tracing.js';
import type { JsonSchema } from '../../core/format/jsonSchemas.js';
import { POOL_STATS_SCHEMA } from '../render-pool.js';
import { TRACE_ID_SCHEMA } from '../trace-context.js';

/** Schema of the GET /api/v1/status body built below. */
export const STATUS_SCHEMA: JsonSchema = {
  type: 'object',
  required: ['service', 'version', 'status', 'time', 'startedAt', 'uptimeSeconds', 'traceId', 'node', 'pool', 'telemetry', 'receiver', 'config'],
  additionalProperties: false,
  properties: {
    service: { const: 'v2a' },
    version: { const: VERSION },
    status: { enum: ['ok', 'shutting_down'] },
    time: { type: 'string', format: 'date-time' },
    startedAt: { type: 'string', format: 'date-time' },
    uptimeSeconds: { type: 'number', minimum: 0 },
    traceId: TRACE_ID_SCHEMA,
    node: { type: 'string', description: 'Node.js version.' },
    pool: POOL_STATS_SCHEMA,
    telemetry: {
      type: 'object',
      description: 'Span export over OTLP/HTTP (JSON encoding), on when PLATFORM_API_KEY is set.',
      required: ['exporting'],
      additionalProperties: false,
      properties: {
        exporting: { type: 'boolean' },
        endpoint: { type: 'string', description: 'OTLP traces endpoint (origin and path).' },
        protocol: { const: 'http/json' },
        keyHeader: { const: PLATFORM_KEY_HEADER, description: 'Header that carries the platform key to the endpoint.' },
        disabledReason: { type: 'string' },
      },
    },
    receiver: {
      type: 'object',
      required: ['statusUrl', 'intervalMs', 'check'],
      additionalProperties: false,
      properties: {
        statusUrl: { type: ['string', 'null'], description: 'V2A_RECEIVER_STATUS_URL (origin and path); null when checks are off.' },
        intervalMs: { type: 'integer', minimum: 0, description: 'Background check interval; 0 = on demand only.' },
        check: { oneOf: [RECEIVER_CHECK_SCHEMA, { type: 'null' }] },
      },
    },
    config: {
      type: 'array',
      description: 'Effective server settings (describeConfig order). Secret settings only say whether they are set.',
      items: EFFECTIVE_SETTING_SCHEMA,
    },
  },
};

export async function platformRoutes(app: FastifyInstance, opts: { ctx: AppContext }): Promise<void> {
  const { ctx } = opts;
  const key = platformKeyOf(ctx.config);
  // A disabled action is not registered at all: 404 for every method, like any unknown path (a
  // registered one answered 405 to a POST, telling that it exists).
  // Spelt exactly: the router decodes /api/v1/%6detrics to this path, which a proxy that hides the
  // path by exact match (deploy/k8s/httproute.yaml) would let through.
  const spelt = (path: string) => async (request: FastifyRequest) => {
    const asSent = requestPath(request);
    if (asSent !== path) throw notFound(asSent);
  };
  const onRequest = key === undefined ? [] : [requirePlatformKey(key)];
  // V2A_METRICS: off -> absent; on -> behind the key when one is set, else open.
  if (ctx.config.metrics) {
    app.get(ENDPOINTS.metrics.path, { onRequest: [spelt(ENDPOINTS.metrics.path), ...onRequest] }, async (_request, reply) =>
      reply.type(PROMETHEUS_CONTENT_TYPE).header('cache-control', 'no-store').send(await ctx.metrics.expose()));
  }

  if (key === undefined) return;
  app.get(ENDPOINTS.status.path, { onRequest: [spelt(ENDPOINTS.status.path), ...onRequest] }, async (request, reply) => {
    const receiver = ctx.receiver;
    const maxAge = receiver && receiver.intervalMs > 0 ? receiver.intervalMs * 2 : ON_DEMAND_MAX_AGE_MS;
    const check = receiver ? await receiver.current(maxAge) : null;
    const body = {
      service: 'v2a',
      version: VERSION,
      status: ctx.closing ? 'shutting_down' : 'ok',
      time: new Date().toISOString(),
      startedAt: new Date(performance.timeOrigin + ctx.startedAt).toISOString(),
      uptimeSeconds: Math.round((performance.now() - ctx.startedAt) / 100) / 10,
      traceId: request.traceId,
      node: process.version,
      pool: ctx.pool.stats(),
      telemetry: {
        exporting: ctx.telemetry.exporting,
        ...(ctx.telemetry.exporting
          ? { endpoint: ctx.telemetry.endpoint, protocol: 'http/json', keyHeader: PLATFORM_KEY_HEADER }
          : { disabledReason: ctx.telemetry.disabledReason }),
      },
      receiver: {
        statusUrl: receiver?.url ?? null,
        intervalMs: receiver?.intervalMs ?? 0,
        check,
      },
      config: effectiveConfig(ctx.config),
    };
    return reply.code(200).header('cache-control', 'no-store').send(body);
  });
}
