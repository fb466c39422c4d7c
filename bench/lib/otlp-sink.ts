/**
 * A do-nothing OTLP/HTTP receiver on 127.0.0.1 for the "export on vs off" line of the server
 * bench: accepts POST /v1/traces (and any other path) in protobuf or JSON, answers 200 with an
 * empty ExportTraceServiceResponse, and counts requests and bytes. It never keeps the bodies.
 * It notes which header carried the platform key (by name only), so the bench can say whether
 * the key arrived.
 */
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface SinkStats {
  requests: number;
  bytes: number;
  byPath: Record<string, number>;
  contentTypes: Record<string, number>;
  /** Names of the headers in which the expected key was seen. */
  keyHeaders: string[];
}

export interface OtlpSink {
  /** Base endpoint, e.g. http://127.0.0.1:4318 (OTEL_EXPORTER_OTLP_ENDPOINT). */
  readonly url: string;
  readonly stats: SinkStats;
  /** Resolves true once at least `n` export requests arrived, false after `timeoutMs`. */
  waitForRequests(n: number, timeoutMs: number): Promise<boolean>;
  close(): Promise<void>;
}

export async function startOtlpSink(expectedKey: string): Promise<OtlpSink> {
  const stats: SinkStats = { requests: 0, bytes: 0, byPath: {}, contentTypes: {}, keyHeaders: [] };
  const waiters: { n: number; resolve: (v: boolean) => void }[] = [];
  const server = createServer((req: IncomingMessage, res) => {
    let bytes = 0;
    req.on('data', (b: Buffer) => (bytes += b.length));
    req.on('end', () => {
      stats.requests++;
      stats.bytes += bytes;
      const path = (req.url ?? '/').split('?')[0]!;
      stats.byPath[path] = (stats.byPath[path] ?? 0) + 1;
      const ct = (req.headers['content-type'] ?? '(none)').split(';')[0]!;
      stats.contentTypes[ct] = (stats.contentTypes[ct] ?? 0) + 1;
      for (const [name, value] of Object.entries(req.headers)) {
        const v = Array.isArray(value) ? value.join(',') : value ?? '';
        if (v.includes(expectedKey) && !stats.keyHeaders.includes(name)) stats.keyHeaders.push(name);
      }
      const json = ct === 'application/json';
      res.writeHead(200, { 'content-type': json ? 'application/json' : 'application/x-protobuf' });
      res.end(json ? '{}' : '');
      for (let i = waiters.length - 1; i >= 0; i--) {
        if (stats.requests >= waiters[i]!.n) waiters.splice(i, 1)[0]!.resolve(true);
      }
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    stats,
    waitForRequests(n, timeoutMs) {
      if (stats.requests >= n) return Promise.resolve(true);
      return new Promise((resolve) => {
        const w = { n, resolve };
        waiters.push(w);
        setTimeout(() => {
          const i = waiters.indexOf(w);
          if (i >= 0) {
            waiters.splice(i, 1);
            resolve(false);
          }
        }, timeoutMs).unref();
      });
    },
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}
