/**
 * HTTP load for the server bench: autocannon (programmatic API, one process, no pipelining) with a
 * prebuilt request body — multipart/form-data with the file field `image` (what a browser or
 * `curl -F image=@photo.jpg` sends), JSON with `imageBase64`, or an MCP `tools/call` of
 * render_ascii with `imageBase64` (what an agent sends) — and latencies of every 2xx reply
 * collected exactly (autocannon's per-request times, not its histogram buckets).
 */
import autocannon, { type AutocannonResult } from 'autocannon';
import { randomBytes } from 'node:crypto';

export type Carrier = 'multipart' | 'json' | 'mcp';
export const CARRIERS: readonly Carrier[] = ['multipart', 'json', 'mcp'];

export interface RequestBody {
  readonly carrier: Carrier;
  readonly contentType: string;
  readonly body: Buffer;
  /** Path and query the body is posted to. */
  readonly path: string;
}

/** The request body of `carrier` for `image`, rendered at `columns`. */
export function requestBody(carrier: Carrier, image: Buffer, filename: string, columns: number): RequestBody {
  if (carrier === 'mcp') return mcpBody(image, columns);
  return carrier === 'json' ? jsonBody(image, columns) : multipartBody(image, filename, columns);
}

const renderPath = (columns: number) => `/api/v1/render?columns=${columns}`;

/** multipart/form-data with one file part `image` (image/jpeg), as curl -F would send it. */
export function multipartBody(image: Buffer, filename: string, columns: number, mime = 'image/jpeg'): RequestBody {
  const boundary = `----v2abench${randomBytes(12).toString('hex')}`;
  const head = Buffer.from(
    `--${boundary}\r\nContent-Disposition: form-data; name="image"; filename="${filename}"\r\nContent-Type: ${mime}\r\n\r\n`,
  );
  const end = Buffer.from(`\r\n--${boundary}--\r\n`);
  return { carrier: 'multipart', contentType: `multipart/form-data; boundary=${boundary}`, body: Buffer.concat([head, image, end]), path: renderPath(columns) };
}

/** application/json with `imageBase64`. */
export function jsonBody(image: Buffer, columns: number): RequestBody {
  return { carrier: 'json', contentType: 'application/json', body: Buffer.from(JSON.stringify({ imageBase64: image.toString('base64') })), path: renderPath(columns) };
}

/** A JSON-RPC `tools/call` of render_ascii with `imageBase64` (format text), to the MCP endpoint. */
export function mcpBody(image: Buffer, columns: number): RequestBody {
  const call = { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'render_ascii', arguments: { imageBase64: image.toString('base64'), columns } } };
  return { carrier: 'mcp', contentType: 'application/json', body: Buffer.from(JSON.stringify(call)), path: '/api/mcp' };
}

export interface Percentiles {
  readonly p50: number;
  readonly p90: number;
  readonly p99: number;
  readonly max: number;
  readonly mean: number;
}

/** Nearest-rank percentiles (ms) of `xs`. */
export function percentiles(xs: readonly number[]): Percentiles {
  if (!xs.length) return { p50: NaN, p90: NaN, p99: NaN, max: NaN, mean: NaN };
  const s = [...xs].sort((a, b) => a - b);
  const at = (p: number) => s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))]!;
  return { p50: at(50), p90: at(90), p99: at(99), max: s[s.length - 1]!, mean: s.reduce((a, b) => a + b, 0) / s.length };
}

export interface LoadResult {
  readonly connections: number;
  /** Seconds the run lasted (autocannon's measure). */
  readonly seconds: number;
  readonly ok: number;
  /** Replies by status code. */
  readonly statusCounts: Readonly<Record<string, number>>;
  readonly non2xx: number;
  /** Connection errors and timeouts (no reply at all). */
  readonly errors: number;
  readonly timeouts: number;
  readonly resets: number;
  /** Latency of the 2xx replies, ms. */
  readonly latencyMs: Percentiles;
  /** 2xx replies per second: images rendered per second. */
  readonly imagesPerSecond: number;
  /** CPU the load generator (this process) used during the run, % of one core. */
  readonly clientCpuPercent: number;
  /** First few distinct error messages. */
  readonly errorSamples: readonly string[];
}

export interface LoadOptions {
  readonly url: string;
  readonly request: RequestBody;
  readonly connections: number;
  readonly seconds: number;
  /** Per-request timeout, seconds (autocannon's default of 10 is too short for big images under load). */
  readonly timeoutSeconds?: number;
  readonly headers?: Readonly<Record<string, string>>;
}

export function runLoad(opts: LoadOptions): Promise<LoadResult> {
  return new Promise((resolve, reject) => {
    const latencies: number[] = [];
    const errorSamples = new Set<string>();
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    const instance = autocannon(
      {
        url: opts.url,
        method: 'POST',
        headers: { 'content-type': opts.request.contentType, ...opts.headers },
        body: opts.request.body,
        connections: opts.connections,
        pipelining: 1,
        duration: opts.seconds,
        timeout: opts.timeoutSeconds ?? 120,
      },
      (err: Error | null, r: AutocannonResult) => {
        if (err) {
          reject(err);
          return;
        }
        const cpu = process.cpuUsage(cpu0);
        const wallS = (performance.now() - t0) / 1000;
        const seconds = r.duration > 0 ? r.duration : wallS;
        const statusCounts: Record<string, number> = {};
        for (const [code, v] of Object.entries(r.statusCodeStats ?? {})) statusCounts[code] = v.count;
        const ok = latencies.length;
        resolve({
          connections: opts.connections,
          seconds,
          ok,
          statusCounts,
          non2xx: r.non2xx,
          errors: r.errors,
          timeouts: r.timeouts,
          resets: r.resets,
          latencyMs: percentiles(latencies),
          imagesPerSecond: ok / seconds,
          clientCpuPercent: ((cpu.user + cpu.system) / 1e6 / wallS) * 100,
          errorSamples: [...errorSamples].slice(0, 5),
        });
      },
    );
    instance.on('response', (_client: unknown, statusCode: number, _bytes: number, ms: number) => {
      if (statusCode >= 200 && statusCode < 300) latencies.push(ms);
    });
    instance.on('reqError', (e: Error) => {
      if (errorSamples.size < 5) errorSamples.add(e.message);
    });
  });
}
