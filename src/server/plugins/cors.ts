/**
 * CORS for browsers calling the service from other origins. No endpoint uses cookies or other
 * credentials, so the default `*` is safe; V2A_CORS_ORIGINS narrows it to a list. The trace,
 * rate-limit, Auto Director, download and MCP session headers are exposed to scripts.
 */
import cors from '@fastify/cors';
import type { FastifyInstance } from 'fastify';
import type { ServerConfig } from '../config.js';
import { methodsAt, notFound, requestPath, sendProblem } from './errors.js';

export const CORS_ALLOWED_HEADERS = [
  'content-type', 'accept', 'traceparent', 'tracestate', 'mcp-protocol-version', 'mcp-session-id', 'last-event-id',
  'authorization', 'x-platform-api-key',
];
export const CORS_EXPOSED_HEADERS = [
  'traceparent', 'tracestate', 'x-auto-director', 'content-disposition', 'retry-after',
  'ratelimit-limit', 'ratelimit-remaining', 'ratelimit-reset', 'allow', 'www-authenticate', 'mcp-session-id',
];

export async function registerCors(app: FastifyInstance, config: ServerConfig): Promise<void> {
  await app.register(cors, {
    origin: config.corsOrigins === '*' ? '*' : [...config.corsOrigins],
    methods: ['GET', 'HEAD', 'POST', 'OPTIONS'],
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
      const methods = methodsAt(app, requestPath(request));
      if (!methods.length) return sendProblem(request, reply, notFound(requestPath(request)));
      reply.header('allow', [...methods, 'OPTIONS'].join(', '));
    }
    return reply.code(204).header('content-length', '0').send();
  });
}
