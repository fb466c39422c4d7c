/**
 * Which hosts imageUrl may fetch from: the built-in trusted list plus the operator's
 * V2A_IMAGE_FETCH_ALLOWLIST, parsed and matched here. Apart from the fetcher (fetch-image.ts) so
 * that reading the settings (config.ts, `v2a mcp` at start) does not load undici.
 */
import { domainToASCII } from 'node:url';

/**
 * Built-in trusted image hosts, used in addition to `V2A_IMAGE_FETCH_ALLOWLIST`.
 * Deliberately empty: which third-party hosts the server may be made to contact is the operator's
 * decision, so out of the box `imageUrl` works only for hosts the operator allowlisted.
 */
export const TRUSTED_IMAGE_HOSTS: readonly string[] = [];

/** The host patterns imageUrl may fetch from on a server with this V2A_IMAGE_FETCH_ALLOWLIST. */
export const imageUrlHosts = (allowlist: readonly string[]): string[] => [...TRUSTED_IMAGE_HOSTS, ...allowlist];

/**
 * Parses V2A_IMAGE_FETCH_ALLOWLIST: comma-separated host names, exact (`images.example.com`) or
 * wildcard (`*.example.com`: any subdomain, not the apex). Returns lowercase ASCII (punycode)
 * patterns without trailing dots. Throws on anything else: URLs, ports, IP addresses, a bare `*`,
 * or a wildcard over a single label such as `*.com`.
 */
export function parseAllowlist(env: string | undefined): string[] {
  const patterns: string[] = [];
  for (const raw of (env ?? '').split(',')) {
    const entry = raw.trim();
    if (entry === '') continue;
    const wildcard = entry.startsWith('*.');
    const host = normaliseHost(wildcard ? entry.slice(2) : entry);
    if (host === undefined || (wildcard && !host.includes('.'))) {
      throw new Error(`V2A_IMAGE_FETCH_ALLOWLIST: invalid host pattern "${entry}" (use host names like images.example.com or *.example.com)`);
    }
    patterns.push(wildcard ? `*.${host}` : host);
  }
  return patterns;
}

const LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;

/** Lowercase ASCII host name without trailing dot, or undefined if it is not a DNS name. */
function normaliseHost(name: string): string | undefined {
  // domainToASCII alone would cut at "/" and pass "*", "[", "_" through.
  if (!/^[\p{L}\p{N}\p{M}.-]+$/u.test(name)) return undefined;
  const ascii = domainToASCII(name.replace(/\.$/, ''));
  const labels = ascii.split('.');
  if (ascii === '' || ascii.length > 253 || !labels.every((l) => LABEL.test(l))) return undefined;
  // A numeric last label makes WHATWG parse the host as IPv4, never as a name.
  if (/^(\d+|0x[0-9a-f]*)$/.test(labels.at(-1)!)) return undefined;
  return ascii;
}

/** Whether `host` matches `pattern` (exact, or `*.suffix` = a strict subdomain of suffix). */
export function matchesHostPattern(host: string, pattern: string): boolean {
  const h = host.toLowerCase().replace(/\.$/, '');
  const p = pattern.toLowerCase().replace(/\.$/, '');
  return p.startsWith('*.') ? h.endsWith(p.slice(1)) && h.length > p.length - 1 : h === p;
}
