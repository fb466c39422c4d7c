/**
 * The platform key on protected platform actions (interface.md §5): accepted as
 * `Authorization: Bearer <key>` (PlatformBearer) or `X-Platform-API-Key: <key>` (PlatformHeader).
 *
 * - Comparison in constant time: SHA-256 digests of the presented and the configured key (equal
 *   length whatever was sent) compared with crypto.timingSafeEqual. Every presented credential is
 *   checked, none short-circuits.
 * - No credential: 401 `unauthorized` with `WWW-Authenticate: Bearer realm="v2a"`. A wrong one
 *   (in either header): 401 with `error="invalid_token"` added (RFC 6750 §3). When both headers
 *   are sent, both must hold the key. An Authorization header of another scheme (Basic, ...) is
 *   not a platform credential and is ignored.
 * - PLATFORM_API_KEY not configured: the protected actions are not registered (routes/platform.ts):
 *   404 `not-found` for every method, the same reply as any unknown path.
 * - The key never reaches logs: the logger redacts both headers (app.ts), spans never record
 *   headers, and 401 details do not echo what was sent.
 */
import crypto from 'node:crypto';
import type { FastifyRequest, onRequestAsyncHookHandler } from 'fastify';
import { HttpProblem } from '../problem.js';

export const PLATFORM_REALM = 'v2a';
export const WWW_AUTHENTICATE = `Bearer realm="${PLATFORM_REALM}"`;
export const WWW_AUTHENTICATE_INVALID = `Bearer realm="${PLATFORM_REALM}", error="invalid_token"`;

/** A constant-time check of a presented key against the configured one. */
export function platformKeyVerifier(key: string): (presented: string) => boolean {
  const expected = crypto.createHash('sha256').update(key, 'utf8').digest();
  return (presented) => {
    const digest = crypto.createHash('sha256').update(presented, 'utf8').digest();
    return crypto.timingSafeEqual(digest, expected);
  };
}

/** The platform credentials a request presents (both schemes), in header order. */
export function presentedCredentials(request: Pick<FastifyRequest, 'headers'>): string[] {
  const out: string[] = [];
  const auth = request.headers.authorization;
  if (typeof auth === 'string') {
    const m = /^Bearer[ \t]+(.*)$/i.exec(auth.trim());
    if (m) out.push(m[1]!.trim());
  }
  const header = request.headers['x-platform-api-key'];
  if (typeof header === 'string') out.push(header.trim());
  else if (Array.isArray(header)) out.push(...header.map((h) => h.trim()));
  return out;
}

const missing = () =>
  new HttpProblem('unauthorized', 'This endpoint needs the platform key: send Authorization: Bearer <key> or X-Platform-API-Key: <key>.', {
    headers: { 'www-authenticate': WWW_AUTHENTICATE },
  });

const invalid = () =>
  new HttpProblem('unauthorized', 'The platform key sent is not valid.', { headers: { 'www-authenticate': WWW_AUTHENTICATE_INVALID } });

/** The onRequest hook of a protected route; `key`: PLATFORM_API_KEY (without one the routes are not registered). */
export function requirePlatformKey(key: string): onRequestAsyncHookHandler {
  const verify = platformKeyVerifier(key);
  return async (request) => {
    const presented = presentedCredentials(request);
    if (presented.length === 0) throw missing();
    let valid = true;
    for (const credential of presented) valid = verify(credential) && valid;
    if (!valid) throw invalid();
  };
}
