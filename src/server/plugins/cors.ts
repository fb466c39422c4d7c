/**
 * CORS for browsers calling the service from other origins. No endpoint uses cookies or other
 * credentials, so the default `*` is safe; V2A_CORS_ORIGINS narrows it to a list. The trace,
 * rate-limit, Auto Director, download, MCP session and ETag headers are exposed to scripts.
 */
import cors from '@fastify/cors';
import type { FastifyInstance } from 'fastify';
import type { ServerConfig } from '../config.js';
import { allowValue, badTarget, methodsAt, notFound, requestPath, sendProblem } from './errors.js';

/** Every method the server answers on some path. */
export const SERVED_METHODS = ['GET', 'HEAD', 'POST', 'OPTIONS'];

// If-None-Match and ETag: scripts revalidate the discovery documents (304) as caches do.
export const CORS_ALLOWED_HEADERS = [
  'content-type', 'accept', 'traceparent', 'tracestate', 'mcp-protocol-version', 'mcp-session-id', 'last-event-id',
  'authorization', 'x-platform-api-key', 'if-none-match', 'x-request-id',
];
export const CORS_EXPOSED_HEADERS = [
  'traceparent', 'tracestate', 'x-auto-director', 'content-disposition', 'retry-after',
  'ratelimit-limit', 'ratelimit-remaining', 'ratelimit-reset', 'allow', 'www-authenticate', 'mcp-session-id', 'etag', 'x-request-id',
];

export async function registerCors(app: FastifyInstance, config: ServerConfig): Promise<void> {
  await app.register(cors, {
    origin: config.corsOrigins === '*' ? '*' : [...config.corsOrigins],
    methods: SERVED_METHODS,
    allowedHeaders: CORS_ALLOWED_HEADERS,
    exposedHeaders: CORS_EXPOSED_HEADERS,
    credentials: false,
    maxAge: 600,
    strictPreflight: false,
    // The CORS headers are set, then the hook below answers.
    preflightContinue: true,
  });
  // A preflight is 204 on any path (a browser then shows the real request's 404, not a CORS
  // failure). Any other OPTIONS asks what the path serves (RFC 9110 §9.3.7): 204 with Allow, or
  // 404 where nothing is.
  app.addHook('onRequest', async (request, reply) => {
    if (request.method !== 'OPTIONS') return;
    if (request.headers['access-control-request-method'] === undefined) {
      const bad = badTarget(request);
      if (bad) return sendProblem(request, reply, bad);
      const methods = methodsAt(app, requestPath(request));
      if (!methods.length) return sendProblem(request, reply, notFound(requestPath(request)));
      reply.header('allow', allowValue(methods));
    }
    return reply.code(204).header('content-length', '0').send();
  });
}
