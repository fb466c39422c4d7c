/**
 * X-Forwarded-For entries as some proxies write them, with the client's port (Azure Application
 * Gateway, IIS ARR: `203.0.113.7:51234`, `[2001:db8::1]:443`): an address with a port is no
 * address to proxy-addr, so each connection of one client became a client of its own, with its
 * own rate-limit budget and slot share, and IPv6 escaped the /64 grouping. The port is dropped
 * before Fastify reads the header; entries of any other form are left as they are.
 */
import type { IncomingHttpHeaders } from 'node:http';
import { isIP } from 'node:net';

const V4_WITH_PORT = /^(\d{1,3}(?:\.\d{1,3}){3}):\d{1,5}$/;
const BRACKETED_V6 = /^\[([^\]]+)\](?::\d{1,5})?$/;

/** One entry without its port: `1.2.3.4:80` -> `1.2.3.4`, `[::1]:80` and `[::1]` -> `::1`. */
function withoutPort(entry: string): string {
  const v4 = V4_WITH_PORT.exec(entry);
  if (v4 && isIP(v4[1]!) === 4) return v4[1]!;
  const v6 = BRACKETED_V6.exec(entry);
  if (v6 && isIP(v6[1]!) === 6) return v6[1]!;
  return entry;
}

/** Rewrites the request's X-Forwarded-For in place, each entry without its port. */
export function dropForwardedPorts(headers: IncomingHttpHeaders): void {
  const xff = headers['x-forwarded-for'];
  // IPv4 lines without ports (most) are left unsplit.
  if (typeof xff !== 'string' || !xff.includes(':')) return;
  headers['x-forwarded-for'] = xff.split(',').map((e) => withoutPort(e.trim())).join(', ');
}
