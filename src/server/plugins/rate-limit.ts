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
import type { FastifyInstance, onRequestAsyncHookHandler } from 'fastify';
import type { ServerConfig } from '../config.js';
import { HttpProblem } from '../problem.js';

export const RATE_LIMIT_WINDOW_MS = 60_000;

/** Registers the plugin; returns the shared limiter hook, or undefined when the limit is off. */
export async function registerRateLimit(app: FastifyInstance, config: ServerConfig): Promise<onRequestAsyncHookHandler | undefined> {
  if (config.rateLimit <= 0) return undefined;
  await app.register(rateLimit, {
    global: false,
    max: config.rateLimit,
    timeWindow: RATE_LIMIT_WINDOW_MS,
    enableDraftSpec: true,
    errorResponseBuilder: (_request, context) =>
      new HttpProblem('rate-limited', `At most ${context.max} requests per minute are allowed from one client; retry in ${context.after}.`),
  });
  return app.rateLimit({ max: config.rateLimit, timeWindow: RATE_LIMIT_WINDOW_MS }) as unknown as onRequestAsyncHookHandler;
}

/** Route options that apply the shared limiter (nothing when the limit is off). */
export function limitedRoute(limiter: onRequestAsyncHookHandler | undefined): { onRequest?: onRequestAsyncHookHandler[] } {
  return limiter ? { onRequest: [limiter] } : {};
}
