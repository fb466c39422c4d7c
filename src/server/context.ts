/** What the route plugins share: settings, the worker pool, the render operation and run state. */
import type { FastifyRequest, onRequestAsyncHookHandler } from 'fastify';
import type { ServerConfig } from './config.js';
import type { RenderPool } from './render-pool.js';
import type { RenderService } from './render-service.js';

export interface AppContext {
  readonly config: ServerConfig;
  readonly pool: RenderPool;
  readonly renderer: RenderService;
  /** performance.now() at start. */
  readonly startedAt: number;
  /** The rate limiter shared by render and MCP (undefined: off). */
  readonly limiter: onRequestAsyncHookHandler | undefined;
  /** Set when shutdown begins: new work is refused with 503, health reports it. */
  closing: boolean;
}

/** Public base URL: V2A_PUBLIC_URL, else the request's scheme and Host (trusting proxies only as configured). */
export function baseUrl(ctx: AppContext, request: FastifyRequest): string {
  if (ctx.config.publicUrl) return ctx.config.publicUrl;
  const host = request.host || `localhost:${ctx.config.port}`;
  return `${request.protocol}://${host}`;
}
