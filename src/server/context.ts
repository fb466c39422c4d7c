/** What the route plugins share: settings, the worker pool, the render operation and run state. */
import type { FastifyRequest } from 'fastify';
import type { Admission } from './admission.js';
import type { Connections } from './connections.js';
import type { RateLimiter } from './plugins/rate-limit.js';
import type { ServerConfig } from './config.js';
import type { RenderPool } from './render-pool.js';
import type { ReceiverChecker } from './receiver-check.js';
import type { RenderService } from './render-service.js';
import type { ServerMetrics } from './telemetry/metrics.js';
import type { Telemetry } from './telemetry/tracing.js';

export interface AppContext {
  readonly config: ServerConfig;
  readonly pool: RenderPool;
  readonly renderer: RenderService;
  /** performance.now() at start. */
  readonly startedAt: number;
  /** The rate limiter shared by render and MCP (undefined: off). */
  readonly limiter: RateLimiter | undefined;
  /** Render admission, shared by render and MCP (admission.ts). */
  readonly admission: Admission;
  /** Span export (a no-op when PLATFORM_API_KEY is not set). */
  readonly telemetry: Telemetry;
  readonly metrics: ServerMetrics;
  /** Status checks of the handoff receiver (undefined: no key, or V2A_RECEIVER_STATUS_URL=off). */
  readonly receiver: ReceiverChecker | undefined;
  /** The server's connections: requests in progress, and closing idle ones at shutdown. */
  readonly connections: Connections;
  /** Set when shutdown begins: new work is refused with 503, health reports it. */
  closing: boolean;
  /** Set for V2A_SHUTDOWN_DELAY_MS before the drain: health and readiness answer 503, all else is served. */
  leaving?: boolean;
  /** Set when a shutdown out of time closes the connections left: their requests were cut by us, not their clients. */
  cutting?: boolean;
}

/** Public base URL: V2A_PUBLIC_URL, else the request's scheme and Host (trusting proxies only as configured). */
export function baseUrl(ctx: AppContext, request: FastifyRequest): string {
  if (ctx.config.publicUrl) return ctx.config.publicUrl;
  const host = request.host || `localhost:${ctx.config.port}`;
  return `${schemeOf(request)}://${host}`;
}

/** The request's scheme, lower case: a trusted proxy's X-Forwarded-Proto may say `HTTPS` (RFC 3986: schemes are case-insensitive). */
export function schemeOf(request: FastifyRequest): string {
  return request.protocol.toLowerCase();
}
