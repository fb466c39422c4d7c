/**
 * Per-client rate limit on the endpoints that do work: V2A_RATE_LIMIT requests per minute per
 * client address (the proxy-supplied one when V2A_TRUST_PROXY says so), one budget shared by
 * POST /api/v1/render and POST /api/mcp. Replies carry the IETF draft `RateLimit-Limit` /
 * `RateLimit-Remaining` / `RateLimit-Reset` headers; a refused request is a 429 problem with
 * `Retry-After`. 0 turns it off.
 *
 * @fastify/rate-limit gives every route configured through `config.rateLimit` its own store, so
 * the shared budget uses one limiter made by its `rateLimit()` decorator, added to both routes as
 * an onRequest hook.
 */
import rateLimit from '@fastify/rate-limit';
import type { FastifyInstance, FastifyRequest, onRequestAsyncHookHandler } from 'fastify';
import type { ServerConfig } from '../config.js';
import { HttpProblem } from '../problem.js';

export const RATE_LIMIT_WINDOW_MS = 60_000;

/** The shared budget: the route hook (one request, one token) and a check that takes more tokens. */
export interface RateLimiter {
  readonly hook: onRequestAsyncHookHandler;
  /**
   * Takes `count` more tokens from the request's client (an MCP batch: one per tools/call beyond
   * the first); throws 429 `rate-limited` when the budget runs out.
   */
  take(request: FastifyRequest, count: number): Promise<void>;
}

/** Registers the plugin; returns the shared limiter, or undefined when the limit is off. */
export async function registerRateLimit(app: FastifyInstance, config: ServerConfig): Promise<RateLimiter | undefined> {
  if (config.rateLimit <= 0) return undefined;
  await app.register(rateLimit, {
    global: false,
    max: config.rateLimit,
    timeWindow: RATE_LIMIT_WINDOW_MS,
    enableDraftSpec: true,
    errorResponseBuilder: (_request, context) =>
      new HttpProblem('rate-limited', `At most ${context.max} requests per minute are allowed from one client; retry in ${context.after}.`),
  });
  // Without options both use the plugin's own store: one budget (options would make a child store each).
  const hook = app.rateLimit() as unknown as onRequestAsyncHookHandler;
  const check = app.createRateLimit();
  return {
    hook,
    async take(request, count) {
      for (let i = 0; i < count; i++) {
        const r = await check(request);
        if (!r.isAllowed && r.isExceeded) {
          const after = Math.max(1, r.ttlInSeconds);
          throw new HttpProblem('rate-limited', `At most ${r.max} requests per minute are allowed from one client, and each tools/call of a batch counts as one; retry in ${after} s.`, {
            headers: { 'retry-after': String(after) },
          });
        }
      }
    },
  };
}

/** Route options that apply the shared limiter, then `more` hooks (nothing from the limiter when it is off). */
export function limitedRoute(limiter: RateLimiter | undefined, ...more: onRequestAsyncHookHandler[]): { onRequest?: onRequestAsyncHookHandler[] } {
  const hooks = [...(limiter ? [limiter.hook] : []), ...more];
  return hooks.length ? { onRequest: hooks } : {};
}
