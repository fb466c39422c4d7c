/**
 * Which browser origins may call /api/mcp (MCP Streamable HTTP, "Security Warning": servers must
 * validate Origin against DNS rebinding). A request without Origin is not from a browser page and
 * is served; a browser Origin is served only when it is
 * - listed in V2A_CORS_ORIGINS (a list; `*` lists nothing here), or
 * - the server's own origin: V2A_PUBLIC_URL's when set; otherwise the request's scheme and Host, and
 *   only for a Host no DNS answer can rebind: localhost or an IP literal. (A page on a rebound
 *   name sends its own name as Host and Origin alike, so Host-derived names prove nothing.)
 * Anything else, `null` and malformed origins included, is refused (403).
 */
import { isIP } from 'node:net';

export interface OriginPolicy {
  readonly corsOrigins: '*' | readonly string[];
  readonly publicUrl: string | undefined;
}

function cannotRebind(hostname: string): boolean {
  const h = hostname.replace(/^\[|\]$/g, '').toLowerCase();
  return h === 'localhost' || isIP(h) !== 0;
}

/** `requestOrigin`: the request's own `scheme://host[:port]` (from Host, trusting proxies as configured). */
export function mcpOriginAllowed(origin: string, requestOrigin: string, policy: OriginPolicy): boolean {
  let url: URL;
  try {
    url = new URL(origin);
  } catch {
    return false;
  }
  if (url.origin === 'null' || url.origin !== origin.replace(/\/$/, '')) return false;
  if (policy.corsOrigins !== '*' && policy.corsOrigins.includes(url.origin)) return true;
  if (policy.publicUrl) return url.origin === new URL(policy.publicUrl).origin;
  return url.origin === requestOrigin && cannotRebind(url.hostname);
}
