/**
 * CORS for browsers calling the service from other origins. No endpoint uses cookies or other
 * credentials, so the default `*` is safe; V2A_CORS_ORIGINS narrows it to a list. The trace,
 * rate-limit, Auto Director, download and MCP session headers are exposed to scripts.
 */
import cors from '@fastify/cors';
import type { FastifyInstance } from 'fastify';
import type { ServerConfig } from '../config.js';

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
  });
}
