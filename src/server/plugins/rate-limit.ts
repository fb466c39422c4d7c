/**
 * Per-client rate limit on the endpoints that do work (render and MCP): V2A_RATE_LIMIT requests
 * per minute per client address (the proxy-supplied one when V2A_TRUST_PROXY says so). Replies
 * carry the IETF draft `RateLimit-Limit` / `RateLimit-Remaining` / `RateLimit-Reset` headers; a
 * refused request is a 429 problem with `Retry-After`. 0 turns it off.
 */
import rateLimit from '@fastify/rate-limit';
import type { FastifyInstance } from 'fastify';
import type { ServerConfig } from '../config.js';
import { HttpProblem } from '../problem.js';

export const RATE_LIMIT_WINDOW_MS = 60_000;

export async function registerRateLimit(app: FastifyInstance, config: ServerConfig): Promise<void> {
  if (config.rateLimit <= 0) return;
  await app.register(rateLimit, {
    global: false,
    max: config.rateLimit,
    timeWindow: RATE_LIMIT_WINDOW_MS,
    enableDraftSpec: true,
    errorResponseBuilder: (_request, context) =>
      new HttpProblem('rate-limited', `At most ${context.max} requests per minute are allowed from one client; retry in ${context.after}.`),
  });
}

/** Route `config` that turns the limit on for that route (nothing when the limit is off). */
export function rateLimitedRoute(config: ServerConfig): { rateLimit?: { max: number; timeWindow: number } } {
  return config.rateLimit > 0 ? { rateLimit: { max: config.rateLimit, timeWindow: RATE_LIMIT_WINDOW_MS } } : {};
}
