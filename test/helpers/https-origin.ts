/**
 * The test network in one place: a fake DNS (a LookupFunction answering only the names it is
 * given, as dns.lookup does) and a self-signed HTTPS origin on loopback whose certificate covers
 * those names. Tests hand both to the server (`fetchLookup`, `fetchCa`) or to fetchImage; no
 * traffic leaves the machine.
 */
import { once } from 'node:events';
import https from 'node:https';
import type { LookupAddress } from 'node:dns';
import type { RequestListener } from 'node:http';
import net, { type AddressInfo, type LookupFunction } from 'node:net';
import selfsigned from 'selfsigned';

/** A LookupFunction over a fixed table: unknown names fail with ENOTFOUND, asynchronously. */
export function fakeDns(table: Readonly<Record<string, readonly string[]>>): LookupFunction {
  return (hostname, options, callback) => {
    const addresses = table[hostname.replace(/\.$/, '')];
    setImmediate(() => {
      if (!addresses) return callback(Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' }), '', undefined);
      const all: LookupAddress[] = addresses.map((address) => ({ address, family: net.isIP(address) }));
      if (options.all) callback(null, all);
      else callback(null, all[0]!.address, all[0]!.family);
    });
  };
}

/** Every name in `names` resolving to 127.0.0.1. */
export function loopbackDns(...names: string[]): LookupFunction {
  return fakeDns(Object.fromEntries(names.map((n) => [n, ['127.0.0.1']])));
}

/** A self-signed CA certificate (and key) valid for `names`. */
export function selfSignedCert(names: readonly string[]): { key: string; cert: string } {
  const pems = selfsigned.generate([{ name: 'commonName', value: names[0] ?? 'localhost' }], {
    days: 2,
    keySize: 2048,
    algorithm: 'sha256',
    extensions: [{ name: 'basicConstraints', cA: true }, { name: 'subjectAltName', altNames: names.map((value) => ({ type: 2, value })) }],
  });
  return { key: pems.private, cert: pems.cert };
}

export interface HttpsOrigin {
  readonly server: https.Server;
  readonly port: number;
  /** The CA to trust (the certificate itself). */
  readonly ca: string;
  close(): Promise<void>;
}

/** An HTTPS server on 127.0.0.1 (any free port) for `names`, answering with `handler`. */
export async function startHttpsOrigin(names: readonly string[], handler: RequestListener): Promise<HttpsOrigin> {
  const { key, cert } = selfSignedCert(names);
  const server = https.createServer({ key, cert }, handler);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    server,
    port: (server.address() as AddressInfo).port,
    ca: cert,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
