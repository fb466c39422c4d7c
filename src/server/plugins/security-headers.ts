/**
 * Security headers on every reply. Rendered HTML and SVG are documents a browser may open, built
 * from user-influenced text: they get a Content-Security-Policy that forbids every script and
 * every fetch (inline styles and data: images only). Every other reply is data and gets a policy
 * that allows nothing at all. No reply may be framed.
 */
import type { FastifyInstance } from 'fastify';
import { globalPlugin } from './plugin.js';

/** CSP of `text/html` and `image/svg+xml` replies. */
export const DOCUMENT_CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; frame-ancestors 'none'; base-uri 'none'; form-action 'none'";
/** CSP of every other reply. */
export const DATA_CSP = "default-src 'none'; frame-ancestors 'none'";

const STATIC_HEADERS: Readonly<Record<string, string>> = {
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  'cross-origin-opener-policy': 'same-origin',
  'permissions-policy': 'camera=(), microphone=(), geolocation=(), interest-cohort=()',
};

export const securityHeadersPlugin = globalPlugin('v2a-security-headers', async (app: FastifyInstance) => {
  app.addHook('onSend', async (_request, reply, payload) => {
    for (const [name, value] of Object.entries(STATIC_HEADERS)) reply.header(name, value);
    const type = String(reply.getHeader('content-type') ?? '').toLowerCase();
    const document = type.startsWith('text/html') || type.startsWith('image/svg+xml');
    reply.header('content-security-policy', document ? DOCUMENT_CSP : DATA_CSP);
    if (!reply.hasHeader('cache-control')) reply.header('cache-control', 'no-store');
    return payload;
  });
});
