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
import type { FastifyInstance, FastifyReply, FastifyRequest, onRequestAsyncHookHandler } from 'fastify';
import type { ServerConfig } from '../config.js';
import { HttpProblem } from '../problem.js';

export const RATE_LIMIT_WINDOW_MS = 60_000;

/** The shared budget: the route hook (one request, one token) and a check that takes more tokens. */
export interface RateLimiter {
  readonly hook: onRequestAsyncHookHandler;
  /**
   * Takes `count` more tokens from the request's client (an MCP body: one per tools/call, less
   * the `paid` its route hook took) and brings the reply's RateLimit-* headers up to date; throws
   * 429 `rate-limited` when the budget cannot cover them all, having taken at most one.
   */
  take(request: FastifyRequest, reply: FastifyReply, count: number, paid: number): Promise<void>;
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
    async take(request, reply, count, paid) {
      if (count <= 0) return;
      const needed = count + paid;
      const refuse = (max: number, ttl: number): HttpProblem => {
        const after = Math.max(1, ttl);
        const never = needed > max ? ' (more than the whole budget: split the batch)' : '';
        const detail = needed === 1
          ? `At most ${max} requests per minute are allowed from one client; retry in ${after} s.`
          : `At most ${max} requests per minute are allowed from one client, and each tools/call of a batch counts as one: this batch needs ${needed}${never}; retry in ${after} s.`;
        return new HttpProblem('rate-limited', detail, {
          headers: { 'retry-after': String(after), 'ratelimit-limit': String(max), 'ratelimit-remaining': '0', 'ratelimit-reset': String(after) },
        });
      };
      // The first token says how many are left: a batch they cannot cover is refused without
      // spending the rest (the store cannot give tokens back).
      const first = await check(request);
      if (first.isAllowed) return; // an allow-listed client: no budget
      if (first.isExceeded || first.remaining < count - 1) throw refuse(first.max, first.ttlInSeconds);
      let r = first;
      for (let i = 1; i < count; i++) {
        const next = await check(request);
        if (!next.isAllowed) r = next;
      }
      reply.header('ratelimit-limit', String(r.max)).header('ratelimit-remaining', String(r.remaining)).header('ratelimit-reset', String(r.ttlInSeconds));
    },
  };
}

/**
 * Route options that run the `first` hooks (admission), then the shared limiter (nothing from it
 * when it is off): a request the server refuses for now (503, or 429 for a client's requests in
 * flight) spends no token, so a client that retries after `Retry-After` as told is not punished
 * for it with a minute's wait.
 */
export function limitedRoute(limiter: RateLimiter | undefined, ...first: onRequestAsyncHookHandler[]): { onRequest?: onRequestAsyncHookHandler[] } {
  const hooks = [...first, ...(limiter ? [limiter.hook] : [])];
  return hooks.length ? { onRequest: hooks } : {};
}
