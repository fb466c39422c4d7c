/**
 * Which resolved addresses an outbound image fetch may connect to.
 *
 * Policy: only public unicast. IPv4 is public unless it falls in one of the special-purpose
 * ranges below. IPv6 must be global unicast (2000::/3) and outside the special ranges below,
 * so everything else (unassigned space, ::/8 forms, fc00::/7, fe80::/10, ff00::/8...) is refused
 * without having to list it.
 *
 * Decisions on IPv6 forms that carry an IPv4 address (all refused outright, never "unwrapped"):
 * - IPv4-mapped ::ffff:0:0/96 and IPv4-compatible ::/96: a public DNS name has no business
 *   answering with them, and the OS may route them to the embedded (possibly internal) IPv4.
 * - NAT64 64:ff9b::/96 and 64:ff9b:1::/48: refused even when the embedded IPv4 is public.
 *   Consequence: on an IPv6-only host behind DNS64, IPv4-only image hosts are unreachable.
 * - 6to4 2002::/16 (deprecated, RFC 7526) and Teredo 2001::/32 (inside 2001::/23, IETF protocol
 *   assignments): tunnels to an embedded IPv4 endpoint; no real image host lives there.
 *
 * Node's BlockList matches IPv4 rules against IPv4-mapped IPv6 addresses and IPv6 rules such as
 * ::ffff:0:0/96 against plain IPv4 addresses, so each rule is checked only against its own family.
 */
import { BlockList, isIP } from 'node:net';

type Family = 'ipv4' | 'ipv6';

/** Special-purpose ranges that are never fetched from: [CIDR, why]. */
export const NON_PUBLIC_RANGES: readonly (readonly [string, string])[] = [
  ['0.0.0.0/8', 'unspecified ("this network")'],
  ['10.0.0.0/8', 'private'],
  ['100.64.0.0/10', 'shared address space (CGNAT)'],
  ['127.0.0.0/8', 'loopback'],
  ['169.254.0.0/16', 'link-local'],
  ['172.16.0.0/12', 'private'],
  ['192.0.0.0/24', 'IETF protocol assignments'],
  ['192.0.2.0/24', 'documentation (TEST-NET-1)'],
  ['192.88.99.0/24', '6to4 relay anycast (deprecated)'],
  ['192.168.0.0/16', 'private'],
  ['198.18.0.0/15', 'benchmarking'],
  ['198.51.100.0/24', 'documentation (TEST-NET-2)'],
  ['203.0.113.0/24', 'documentation (TEST-NET-3)'],
  ['224.0.0.0/4', 'multicast'],
  ['240.0.0.0/4', 'reserved'],
  ['255.255.255.255/32', 'limited broadcast'],
  ['::/128', 'unspecified'],
  ['::1/128', 'loopback'],
  ['::/96', 'IPv4-compatible (deprecated)'],
  ['::ffff:0:0/96', 'IPv4-mapped'],
  ['::ffff:0:0:0/96', 'IPv4-translated (SIIT)'],
  ['64:ff9b::/96', 'NAT64 (well-known prefix)'],
  ['64:ff9b:1::/48', 'NAT64 (local-use prefix)'],
  ['100::/64', 'discard-only'],
  ['2001::/32', 'Teredo'],
  ['2001::/23', 'IETF protocol assignments'],
  ['2001:db8::/32', 'documentation'],
  ['2002::/16', '6to4'],
  ['3fff::/20', 'documentation'],
  ['fc00::/7', 'unique local (private)'],
  ['fe80::/10', 'link-local'],
  ['fec0::/10', 'site-local (deprecated)'],
  ['ff00::/8', 'multicast'],
];

interface Rule { family: Family; name: string; list: BlockList }

const RULES: readonly Rule[] = NON_PUBLIC_RANGES.map(([cidr, name]) => {
  const [net, bits] = cidr.split('/') as [string, string];
  const family: Family = isIP(net) === 6 ? 'ipv6' : 'ipv4';
  const list = new BlockList();
  list.addSubnet(net, Number(bits), family);
  return { family, name, list };
});

const GLOBAL_UNICAST_V6 = new BlockList();
GLOBAL_UNICAST_V6.addSubnet('2000::', 3, 'ipv6');

/**
 * Why `address` is not public unicast, or `undefined` when it is.
 * Anything that is not a plain IP address (garbage, zone-scoped "fe80::1%eth0") is refused too.
 */
export function nonPublicReason(address: string): string | undefined {
  const version = isIP(address);
  if (version === 0 || address.includes('%')) return 'not an IP address';
  const family: Family = version === 6 ? 'ipv6' : 'ipv4';
  for (const rule of RULES) {
    if (rule.family === family && rule.list.check(address, family)) return rule.name;
  }
  if (family === 'ipv6' && !GLOBAL_UNICAST_V6.check(address, 'ipv6')) return 'not global unicast';
  return undefined;
}

export function isPublicAddress(address: string): boolean {
  return nonPublicReason(address) === undefined;
}

const LOOPBACK_V4 = new BlockList();
LOOPBACK_V4.addSubnet('127.0.0.0', 8, 'ipv4');

/** Plain loopback only (127/8, ::1); IPv4-mapped forms of 127/8 deliberately do not count. */
export function isLoopbackAddress(address: string): boolean {
  const version = isIP(address);
  if (version === 4) return LOOPBACK_V4.check(address, 'ipv4');
  return version === 6 && nonPublicReason(address) === 'loopback';
}
