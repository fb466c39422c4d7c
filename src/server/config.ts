/**
 * Server settings: every one an environment variable with a documented default, parsed and
 * validated once at start-up. A bad value is a start-up error naming the variable; all bad values
 * are reported together. `describeConfig()` lists name, default and meaning for the README,
 * `v2a serve --help` and the status endpoints: the table below is the only place they are written.
 */
import { readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { parseAllowlist } from './net/image-hosts.js';
import {
  FETCH_TIMEOUT_MS, MAX_DECODED_BYTES, MAX_IMAGE_BYTES, MAX_IMAGE_PIXELS, MCP_MAX_BATCH, MCP_MAX_CHARS, describeRange, isUnset, parseBoolean, parseInteger, type IntegerSetting,
} from '../settings/index.js';
import { editDistance } from '../settings/edit-distance.js';
import { DEFAULT_WORKERS_TEXT, LIBUV_DEFAULT_POOL, POOL_HEADROOM, THREAD_POOL_RANGE, parseWorkers } from '../settings/thread-pool.js';
import type { JsonSchema } from '../core/format/jsonSchemas.js';

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/**
 * `false`, `true`, a list of trusted proxy addresses/CIDRs (Fastify's trustProxy), or `{ hops }`:
 * that many proxies in front, whatever their addresses (trustProxyOption).
 */
export type TrustProxy = boolean | string[] | { readonly hops: number };

/** V2A_TRUST_PROXY's hop counts: more proxies than this in one chain is no real deployment. */
const MAX_TRUSTED_HOPS = 16;

/**
 * Fastify's trustProxy for the setting. Hop counts go as a function: Fastify 5 given a number
 * trusted nothing here (the client stayed the peer), and proxy-addr asks the function of each
 * address from the peer back (hop 0 is the peer), so `hop < n` trusts exactly n proxies.
 */
export function trustProxyOption(t: TrustProxy): boolean | string[] | ((address: string, hop: number) => boolean) {
  if (typeof t === 'boolean' || Array.isArray(t)) return t;
  const { hops } = t;
  return (_address, hop) => hop < hops;
}

export interface ServerConfig {
  readonly port: number;
  readonly host: string;
  readonly maxImageBytes: number;
  readonly maxImagePixels: number;
  /** Host patterns of V2A_IMAGE_FETCH_ALLOWLIST, normalised by parseAllowlist. */
  readonly imageFetchAllowlist: readonly string[];
  readonly fetchTimeoutMs: number;
  readonly workers: number;
  /** libuv's thread pool as the process started with it (UV_THREADPOOL_SIZE; libuv's 4 when unset). */
  readonly threadPoolSize: number;
  /** Renders that may wait for a worker beyond the ones running; more -> 503. */
  readonly queueLimit: number;
  readonly renderTimeoutMs: number;
  /** Each render worker warms up before its first request, and readiness waits for it. */
  readonly warmUp: boolean;
  /** Longest wait for the request line and headers (Node's headersTimeout). */
  readonly headersTimeoutMs: number;
  /** Longest silence while a request body is arriving. */
  readonly bodyIdleTimeoutMs: number;
  /** Longest time to receive a whole request, headers and body (Node's requestTimeout). */
  readonly requestTimeoutMs: number;
  /** Idle time after which a keep-alive connection is closed (Fastify's keepAliveTimeout). */
  readonly keepAliveTimeoutMs: number;
  /** Largest estimated decoder memory of one image (width x height x channels x bytes per sample). */
  readonly maxDecodedBytes: number;
  /** Requests per minute per client on render and MCP; 0 = no limit. */
  readonly rateLimit: number;
  /** Admission slots one client address may hold at once; 0 = no cap of its own. */
  readonly clientSlots: number;
  /** Longest a client may take to receive a reply, from its first byte; 0 = no bound. */
  readonly sendTimeoutMs: number;
  /** Most open connections (connections.ts: past it the longest idle makes room, else the new one is closed). */
  readonly maxConnections: number;
  /** Text-like replies are compressed when the client's Accept-Encoding asks (plugins/compress.ts). */
  readonly compress: boolean;
  /** `'*'` or the exact origins allowed by CORS. */
  readonly corsOrigins: '*' | readonly string[];
  readonly mcpMaxBatch: number;
  /** Character budget of one MCP tool reply; 0 = none. */
  readonly mcpMaxChars: number;
  readonly receiverUrl: string;
  /** Absolute base URL used in manifests and recipes; undefined: derived from each request. */
  readonly publicUrl: string | undefined;
  readonly trustProxy: TrustProxy;
  /** TEST ONLY: lets imageUrl fetches reach 127.0.0.0/8 and ::1. */
  readonly testAllowLoopbackFetch: boolean;
  readonly logLevel: LogLevel;
  /** Whether PLATFORM_API_KEY is set (the key itself is not a property: see platformKeyOf). */
  readonly platformKeyConfigured: boolean;
  /** GET /api/v1/metrics is served (V2A_METRICS); it asks for the key only when one is configured. */
  readonly metrics: boolean;
  /** Status endpoint of the handoff receiver checked with the platform key; undefined: checks off. */
  readonly receiverStatusUrl: string | undefined;
  /** Milliseconds between background receiver status checks; 0 = only on demand (GET /api/v1/status). */
  readonly receiverCheckIntervalMs: number;
  readonly shutdownTimeoutMs: number;
  /** After SIGTERM, readiness answers 503 for this long before the drain starts. */
  readonly shutdownDelayMs: number;
}

export interface ConfigEntry {
  readonly name: string;
  /** The default as text, as documentation shows it. */
  readonly default: string;
  readonly meaning: string;
  /** Settings only meant for tests. */
  readonly testOnly?: boolean;
  /** Settings whose value must not be shown (only whether they are set). */
  readonly secret?: boolean;
}

export class ConfigError extends Error {
  constructor(readonly problems: readonly string[]) {
    super(`invalid server configuration:\n  ${problems.join('\n  ')}`);
    this.name = 'ConfigError';
  }
}

export const DEFAULT_RECEIVER_URL = 'https://a2v.v2a.dev/receiver';

type Env = Readonly<Record<string, string | undefined>>;
type Draft = { -readonly [K in keyof ServerConfig]?: ServerConfig[K] } & { platformKey?: string };

interface Setting extends ConfigEntry {
  /** Parses the raw value (undefined or blank = unset) into the draft; throws an Error with a reason. */
  readonly apply: (raw: string | undefined, draft: Draft) => void;
  /** The effective value, for GET /api/v1/status (never called for secret settings). */
  readonly value: (config: ServerConfig, env: Env) => unknown;
}

/**
 * The platform key is kept off the config object (so that logging or serialising a config can
 * never show it), in a WeakMap keyed by the config that loadConfig returned.
 */
const PLATFORM_KEYS = new WeakMap<ServerConfig, string>();

/** PLATFORM_API_KEY of a config made by loadConfig, or undefined when unset. */
export function platformKeyOf(config: ServerConfig): string | undefined {
  return PLATFORM_KEYS.get(config);
}

/** Default path of the receiver's status endpoint, under the origin of V2A_RECEIVER_URL. */
export const RECEIVER_STATUS_PATH = '/api/v1/status';

/** The standard OpenTelemetry OTLP endpoint a span exporter uses when none is configured. */
export const DEFAULT_OTLP_ENDPOINT = 'http://localhost:4318';

/** A URL shown in status output: origin and path only (no credentials, query or fragment). */
export function displayUrl(raw: string | undefined): string | undefined {
  if (raw === undefined) return undefined;
  try {
    const u = new URL(raw);
    return `${u.protocol}//${u.host}${u.pathname}`;
  } catch {
    return '(invalid URL)';
  }
}

const unset = isUnset;

const boolean = parseBoolean;

type IntegerKey = { [K in keyof ServerConfig]: ServerConfig[K] extends number ? K : never }[keyof ServerConfig];

interface RowExtras {
  /** A further rule, against the settings applied before it. */
  readonly check?: (n: number, d: Draft) => void;
  /** A default derived from the settings applied before it, and how the documentation says it. */
  readonly derived?: { readonly text: string; readonly of: (d: Draft) => number };
}

/**
 * An integer setting (src/settings' shape, some shared with the CLI) as a row of this table: its
 * default and range written once, as values and as the documentation's text.
 */
function integerRow(def: Omit<IntegerSetting, 'default'> & { readonly default?: number }, key: IntegerKey, extras: RowExtras = {}): Setting {
  const { check, derived } = extras;
  return {
    // The range as the CLI's settings table and the parser's refusals say it (describeRange).
    name: def.name, default: derived?.text ?? String(def.default), meaning: `${def.meaning} Must be ${describeRange(def)}.`,
    apply: (raw, d) => {
      const n = unset(raw) ? derived?.of(d) ?? def.default! : parseInteger(raw, def);
      check?.(n, d);
      d[key] = n;
    },
    value: (c) => c[key],
  };
}

function origin(raw: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new Error(`"${raw}" is not an origin like https://example.com`);
  }
  if ((url.protocol !== 'https:' && url.protocol !== 'http:') || url.origin !== raw.replace(/\/$/, '')) {
    throw new Error(`"${raw}" is not an origin like https://example.com (scheme, host and optional port only)`);
  }
  return url.origin;
}

function httpUrl(raw: string, what: string): URL {
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch {
    throw new Error(`must be an absolute ${what} URL`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new Error(`must be an absolute ${what} URL`);
  if (url.username || url.password) throw new Error('must not contain credentials');
  return url;
}

const isLocalHost = (host: string) => host === 'localhost' || host === '127.0.0.1' || host === '[::1]';

/** The settings, in the order documentation lists them. */
const SETTINGS: readonly Setting[] = [
  integerRow({
    name: 'PORT', min: 0, max: 65535, default: 8080,
    meaning: 'TCP port to listen on (0 = any free port).',
  }, 'port'),
  {
    name: 'HOST', default: '0.0.0.0', meaning: 'Address to listen on (0.0.0.0 = every IPv4 interface, :: = every interface).',
    apply: (raw, d) => {
      const host = unset(raw) ? '0.0.0.0' : raw.trim();
      if (!(isIP(host) || /^[a-zA-Z0-9.-]+$/.test(host))) throw new Error('must be an IP address or a host name');
      d.host = host;
    },
    value: (c) => c.host,
  },
  integerRow(MAX_IMAGE_BYTES, 'maxImageBytes'),
  integerRow(MAX_IMAGE_PIXELS, 'maxImagePixels'),
  integerRow(MAX_DECODED_BYTES, 'maxDecodedBytes'),
  {
    name: 'V2A_IMAGE_FETCH_ALLOWLIST', default: '(empty)',
    meaning: 'Comma-separated hosts imageUrl may fetch from, exact (images.example.com) or *.suffix; https only, public addresses only. Empty: imageUrl is refused for every host.',
    apply: (raw, d) => {
      try {
        d.imageFetchAllowlist = parseAllowlist(raw);
      } catch (err) {
        throw new Error((err as Error).message.replace(/^V2A_IMAGE_FETCH_ALLOWLIST: /, ''));
      }
    },
    value: (c) => [...c.imageFetchAllowlist],
  },
  integerRow(FETCH_TIMEOUT_MS, 'fetchTimeoutMs'),
  {
    name: 'V2A_WORKERS', default: DEFAULT_WORKERS_TEXT, meaning: 'Render worker threads (decode, render and format run off the event loop).',
    apply: (raw, d) => { d.workers = parseWorkers(raw); },
    value: (c) => c.workers,
  },
  {
    name: 'UV_THREADPOOL_SIZE', default: `V2A_WORKERS + ${POOL_HEADROOM}`,
    meaning: `Threads of libuv's pool (${THREAD_POOL_RANGE.min} to ${THREAD_POOL_RANGE.max}), which every worker's decodes share, one thread each: at V2A_WORKERS or fewer, decodes and the server's own file and DNS work wait for one another. When unset, npm start (dist/server/main.cjs) and v2a serve set it as the process starts; node dist/server/main.js, an ES module whose own loading starts the pool, runs with libuv's default, ${LIBUV_DEFAULT_POOL}, and the server logs a warning when that is too few.`,
    apply: (raw, d) => { d.threadPoolSize = unset(raw) ? LIBUV_DEFAULT_POOL : parseInteger(raw, THREAD_POOL_RANGE); },
    value: (c) => c.threadPoolSize,
  },
  integerRow({
    name: 'V2A_QUEUE_LIMIT', min: 0, max: 100_000,
    meaning: 'Renders that may wait for a free worker; when the queue is full a render is answered 503 with Retry-After. 0 = no waiting.',
  }, 'queueLimit', { derived: { text: 'V2A_WORKERS x 8', of: (d) => d.workers! * 8 } }),
  integerRow({
    name: 'V2A_RENDER_TIMEOUT_MS', min: 100, max: 3_600_000, default: 30_000,
    meaning: 'Longest a render may wait and run in the pool, in milliseconds; over it the render is stopped and answered 503.',
  }, 'renderTimeoutMs'),
  {
    name: 'V2A_WARM_UP', default: 'true',
    meaning: 'Each render worker renders a built-in image a few times before its first request (about half a second of CPU per worker at start), and /api/v1/health/ready answers 503 `warming` until all have: a new instance\'s first requests then run at warm speed. false: take requests at once, cold (the first ones several times slower).',
    apply: (raw, d) => { d.warmUp = unset(raw) ? true : boolean(raw); },
    value: (c) => c.warmUp,
  },
  integerRow({
    name: 'V2A_HEADERS_TIMEOUT_MS', min: 100, max: 600_000, default: 10_000,
    meaning: 'Longest wait in milliseconds for a request\'s request line and headers; over it the request is answered 408 (problem+json) and the connection closed.',
  }, 'headersTimeoutMs'),
  integerRow({
    name: 'V2A_BODY_IDLE_TIMEOUT_MS', min: 100, max: 600_000, default: 10_000,
    meaning: 'Longest silence in milliseconds while a request body is arriving (bytes must keep coming, at least 1 KiB in each such span); over it the request is answered 408 and the connection closed.',
  }, 'bodyIdleTimeoutMs'),
  integerRow({
    name: 'V2A_REQUEST_TIMEOUT_MS', min: 100, max: 3_600_000, default: 120_000,
    meaning: 'Longest time in milliseconds to receive a whole request, headers and body (a trickling upload included); over it the request is answered 408 and the connection closed. At least V2A_HEADERS_TIMEOUT_MS.',
  }, 'requestTimeoutMs', {
    check: (ms, d) => {
      if (d.headersTimeoutMs !== undefined && ms < d.headersTimeoutMs) throw new Error(`must be at least V2A_HEADERS_TIMEOUT_MS (${d.headersTimeoutMs})`);
    },
  }),
  // Node (18 and later) counts headersTimeout from the first byte of each request, not from the
  // connection, so it needs no relation to this one.
  integerRow({
    name: 'V2A_KEEP_ALIVE_TIMEOUT_MS', min: 1000, max: 3_600_000, default: 72_000,
    meaning: 'Milliseconds a keep-alive connection may stay idle between requests before the server closes it (sent as Keep-Alive: timeout=, in whole seconds). Behind a proxy or load balancer that reuses connections, keep it above the idle timeout of the proxy (nginx 60 s, AWS ALB 60 s by default, Traefik 90 s, Google Cloud external Application Load Balancer 600 s), so that the proxy, not the server, closes an idle connection; otherwise a request the proxy sends as the server closes is answered 502.',
  }, 'keepAliveTimeoutMs'),
  integerRow({
    name: 'V2A_RATE_LIMIT', min: 0, max: 10_000_000, default: 120,
    meaning: 'Requests per minute per client address on POST /api/v1/render and POST /api/mcp, where each tools/call counts as one and a body whose Content-Length is at most 16 KiB spends nothing for its other messages (cancels, pings); RateLimit-* headers, 429 with Retry-After. 0 = off.',
  }, 'rateLimit'),
  integerRow({
    name: 'V2A_CLIENT_SLOTS', min: 0, max: 100_000,
    meaning: 'Most of the V2A_WORKERS + V2A_QUEUE_LIMIT admission slots one client address (as the rate limit tells clients apart) may hold at once, uploading, waiting, rendering or receiving its reply; over it is 429 with Retry-After, so one client cannot take every slot with slow uploads or unread replies. 0 = no cap of its own.',
  }, 'clientSlots', { derived: { text: 'half the slots (at least V2A_WORKERS)', of: (d) => Math.max(d.workers!, Math.ceil((d.workers! + d.queueLimit!) / 2)) } }),
  // A few milliseconds would cut every reply larger than a socket's buffer: 0 or at least 1000.
  integerRow({
    name: 'V2A_SEND_TIMEOUT_MS', min: 0, max: 3_600_000, default: 60_000,
    meaning: 'Time in milliseconds a client has to take a reply once it is sent, and each further such period it may take while it keeps taking 16 KiB a second or more (a client that stops reading holds its slot and memory); otherwise the connection is closed.',
    zero: { means: 'no bound', least: 1000 },
  }, 'sendTimeoutMs'),
  integerRow({
    name: 'V2A_MAX_CONNECTIONS', min: 1, max: 10_000_000,
    meaning: 'Most open connections; past it a new connection closes the keep-alive connection idle longest between requests, else the oldest connection that has not sent the whole headers of a request yet, or is closed itself when every connection has a request in progress, so that idle or silent connections can neither take every file descriptor (render workers, fetches and logs need some) nor keep new clients out. The default keeps 256 descriptors spare under the process\'s soft RLIMIT_NOFILE (read from /proc/self/limits; 10000 where it cannot be read), and is never below 16 (a limit under 272 leaves fewer spare: raise it). Per-client connection limits belong to the proxy in front.',
  }, 'maxConnections', { derived: { text: 'the open-file limit less 256, from 16 to 10000', of: defaultMaxConnections } }),
  {
    name: 'V2A_COMPRESS', default: 'on',
    meaning: 'Compress replies of a text-like type (text, ANSI, HTML, JSON, SVG, Markdown, JavaScript, CSS, problem details, metrics) of 1 KiB or more when the client\'s Accept-Encoding asks: br (quality 4), gzip or deflate, with Vary: Accept-Encoding and a weak ETag (W/) to such clients; PNG and other compressed types, and replies that carry a Content-Encoding already, never. on or off (also true/false, 1/0, yes/no). off: every reply as it is, for a proxy in front that compresses.',
    apply: (raw, d) => { d.compress = unset(raw) ? true : boolean(raw); },
    value: (c) => c.compress,
  },
  {
    name: 'V2A_CORS_ORIGINS', default: '*',
    meaning: 'Origins allowed by CORS: * (any; no credentials are ever used) or a comma-separated list such as https://app.example.com. /api/mcp serves a browser Origin only when it is in such a list or the server\'s own (V2A_PUBLIC_URL, or a localhost / IP-literal Host): DNS-rebinding protection.',
    apply: (raw, d) => {
      if (unset(raw) || raw.trim() === '*') {
        d.corsOrigins = '*';
        return;
      }
      const list = raw.split(',').map((s) => s.trim()).filter(Boolean);
      if (list.length === 0) throw new Error('must be * or a comma-separated list of origins');
      d.corsOrigins = Object.freeze(list.map(origin));
    },
    value: (c) => (c.corsOrigins === '*' ? '*' : [...c.corsOrigins]),
  },
  integerRow(MCP_MAX_BATCH, 'mcpMaxBatch'),
  integerRow(MCP_MAX_CHARS, 'mcpMaxChars'),
  {
    name: 'V2A_RECEIVER_URL', default: DEFAULT_RECEIVER_URL,
    meaning: 'Address of the A2V receiver application the studio hands frames to; its origin is the fixed postMessage target origin of the handoff manifest. https (http only for localhost).',
    apply: (raw, d) => {
      const url = httpUrl(unset(raw) ? DEFAULT_RECEIVER_URL : raw, 'https');
      if (url.protocol !== 'https:' && !isLocalHost(url.host.replace(/:\d+$/, ''))) throw new Error('must be an https URL (http only for localhost)');
      if (url.hash) throw new Error('must not have a #fragment');
      d.receiverUrl = url.href;
    },
    value: (c) => c.receiverUrl,
  },
  {
    name: 'V2A_PUBLIC_URL', default: '(derived from each request)',
    meaning: 'Public base URL of this service (e.g. https://v2a.example.com) used in manifests, recipes and llms.txt; unset: the request\'s own scheme and Host.',
    apply: (raw, d) => {
      if (unset(raw)) {
        d.publicUrl = undefined;
        return;
      }
      const url = httpUrl(raw, 'http(s)');
      if (url.search || url.hash) throw new Error('must not have a query or fragment');
      d.publicUrl = url.href.replace(/\/$/, '');
    },
    value: (c) => c.publicUrl ?? null,
  },
  {
    name: 'V2A_TRUST_PROXY', default: 'false',
    meaning: 'Trust X-Forwarded-For/-Proto/-Host (client address for rate limits, scheme and host of manifest links) from: false (nobody), true (any peer: only behind a proxy that overwrites them), a number of proxy hops (1 to 16: the peer and the proxies before it that many in all; the client is the address the last of them appended, whatever a client wrote further left), or comma-separated proxy addresses/CIDRs such as 10.0.0.0/8 (every address in them is trusted, clients included). An entry\'s port, as some proxies write it (203.0.113.7:51234, [2001:db8::1]:443), is dropped. A forwarded host must be a valid Host value and a forwarded scheme http or https (else 400); V2A_PUBLIC_URL, when set, writes the links instead.',
    apply: (raw, d) => {
      if (unset(raw)) {
        d.trustProxy = false;
        return;
      }
      const t = raw.trim().toLowerCase();
      if (t === 'true' || t === 'false') d.trustProxy = t === 'true';
      else if (/^\d+$/.test(t)) {
        d.trustProxy = { hops: parseInteger(t, { min: 1, max: MAX_TRUSTED_HOPS }) };
      } else {
        const list = t.split(',').map((s) => s.trim()).filter(Boolean);
        for (const entry of list) {
          const [addr, bits, extra] = entry.split('/');
          const family = isIP(addr ?? '');
          const okBits = bits === undefined || (/^\d+$/.test(bits) && Number(bits) <= (family === 6 ? 128 : 32));
          if (!family || !okBits || extra !== undefined) {
            throw new Error(`"${entry}" is not an IP address or CIDR (use false, true, a number of proxy hops such as 1, or proxy addresses)`);
          }
        }
        d.trustProxy = list;
      }
    },
    value: (c) => (typeof c.trustProxy === 'boolean' ? c.trustProxy : Array.isArray(c.trustProxy) ? [...c.trustProxy] : c.trustProxy.hops),
  },
  {
    name: 'V2A_TEST_ALLOW_LOOPBACK_FETCH', default: 'false', testOnly: true,
    meaning: 'TEST ONLY: let imageUrl fetches connect to loopback addresses (127.0.0.0/8, ::1) so tests can use a local HTTPS server. Never set in production.',
    apply: (raw, d) => { d.testAllowLoopbackFetch = unset(raw) ? false : boolean(raw); },
    value: (c) => c.testAllowLoopbackFetch,
  },
  {
    name: 'LOG_LEVEL', default: 'info', meaning: `Log level: ${LOG_LEVELS.join(', ')}. Logs are JSON lines on standard output (pino's: numeric level, epoch ms time); at info, the health probes, the metrics scrape and the status log warnings only.`,
    apply: (raw, d) => {
      const level = unset(raw) ? 'info' : raw.trim().toLowerCase();
      if (!(LOG_LEVELS as readonly string[]).includes(level)) throw new Error(`must be one of ${LOG_LEVELS.join(', ')}`);
      d.logLevel = level as LogLevel;
    },
    value: (c) => c.logLevel,
  },
  {
    name: 'PLATFORM_API_KEY', default: '(unset)', secret: true,
    meaning: 'Platform key (visible ASCII, surrounding whitespace ignored; use 32 or more random characters). Set: redacted spans of the render lifecycle and tool execution are exported over OTLP/HTTP with the key in the X-Platform-API-Key header, GET /api/v1/status (and GET /api/v1/metrics, see V2A_METRICS) answer callers presenting it (Authorization: Bearer or X-Platform-API-Key), and the handoff receiver\'s status endpoint is checked with it. Unset: no export, no status checks, GET /api/v1/status answers 404 (metrics follow V2A_METRICS); public endpoints never need it.',
    apply: (raw, d) => {
      d.platformKeyConfigured = !unset(raw);
      if (unset(raw)) return;
      // Header-safe: the key travels in HTTP headers (and is compared byte for byte).
      if (!/^[\x21-\x7e]+$/.test(raw.trim())) throw new Error('must be visible ASCII characters only (no spaces or control characters)');
      d.platformKey = raw.trim();
    },
    value: (c) => c.platformKeyConfigured,
  },
  {
    name: 'V2A_METRICS', default: 'on with PLATFORM_API_KEY, else off',
    meaning: 'Prometheus metrics at GET /api/v1/metrics, apart from span export: on or off (also true/false, 1/0, yes/no). With PLATFORM_API_KEY set the endpoint asks for the key; without it, on serves the metrics to anyone who reaches the pod (keep the path off the public route: deploy/k8s/httproute.yaml). off: 404.',
    apply: (raw, d) => { d.metrics = unset(raw) ? d.platformKeyConfigured === true : boolean(raw); },
    value: (c) => c.metrics,
  },
  {
    name: 'V2A_RECEIVER_STATUS_URL', default: `origin of V2A_RECEIVER_URL + ${RECEIVER_STATUS_PATH}`,
    meaning: 'With PLATFORM_API_KEY set: the handoff receiver\'s status endpoint, fetched with GET and the key (X-Platform-API-Key) to report in GET /api/v1/status whether the receiver is reachable, accepts the key and what status it reports. https only, public addresses only (the same rules as imageUrl, minus the allowlist), no redirects followed. off = no checks.',
    apply: (raw, d) => {
      if (!unset(raw) && raw.trim().toLowerCase() === 'off') {
        d.receiverStatusUrl = undefined;
        return;
      }
      if (unset(raw)) {
        d.receiverStatusUrl = new URL(RECEIVER_STATUS_PATH, new URL(d.receiverUrl ?? DEFAULT_RECEIVER_URL).origin).href;
        return;
      }
      const url = httpUrl(raw, 'https');
      if (url.protocol !== 'https:') throw new Error('must be an https URL (or off)');
      if (url.hash) throw new Error('must not have a #fragment');
      d.receiverStatusUrl = url.href;
    },
    value: (c) => displayUrl(c.receiverStatusUrl) ?? 'off',
  },
  integerRow({
    name: 'V2A_RECEIVER_CHECK_INTERVAL_MS', min: 0, max: 86_400_000, default: 60_000,
    meaning: 'With PLATFORM_API_KEY set: milliseconds between background status checks of the receiver (the first one at start); on demand (0) when GET /api/v1/status finds no result younger than 30 s.',
    zero: { means: 'only on demand', least: 1000 },
  }, 'receiverCheckIntervalMs'),
  {
    name: 'OTEL_EXPORTER_OTLP_ENDPOINT', default: DEFAULT_OTLP_ENDPOINT,
    meaning: 'With PLATFORM_API_KEY set: OTLP/HTTP collector base URL (http or https; anything else stops the start-up, exit 2); spans are POSTed as OTLP JSON to {endpoint}/v1/traces. OTEL_EXPORTER_OTLP_TRACES_ENDPOINT (the full URL), OTEL_EXPORTER_OTLP_[TRACES_]HEADERS, _TIMEOUT, _COMPRESSION, _CERTIFICATE, OTEL_BSP_* and OTEL_RESOURCE_ATTRIBUTES are honoured as the OpenTelemetry specification defines; OTEL_SDK_DISABLED=true or OTEL_TRACES_EXPORTER=none turn the export off. Only the JSON encoding is sent: OTEL_EXPORTER_OTLP_[TRACES_]PROTOCOL other than http/json (http/protobuf, grpc) is warned about at start-up. Read from the process environment.',
    apply: () => {},
    value: (_c, env) => displayUrl(env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim() || undefined) ?? displayUrl(env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim() || DEFAULT_OTLP_ENDPOINT),
  },
  {
    name: 'OTEL_SERVICE_NAME', default: 'v2a', meaning: 'service.name of the exported spans.',
    apply: () => {},
    value: (_c, env) => env.OTEL_SERVICE_NAME?.trim() || 'v2a',
  },
  integerRow({
    name: 'V2A_SHUTDOWN_TIMEOUT_MS', min: 0, max: 3_600_000, default: 30_000,
    meaning: 'On SIGTERM/SIGINT: the longest the whole shutdown may take. In-flight requests may finish within it, less a tenth (at most 1 s) kept for stopping the worker pool and exporting the last spans; renders still waiting or running then are answered 503 shutting-down with Retry-After, what else is in progress is cut, and the exit code is 1. 0 = cut in-flight requests at once (an idle server still exits 0). Another SIGTERM/SIGINT once the drain has begun (after V2A_SHUTDOWN_DELAY_MS, if any) exits at once (exit 1), cutting what is in progress.',
  }, 'shutdownTimeoutMs'),
  integerRow({
    name: 'V2A_SHUTDOWN_DELAY_MS', min: 0, max: 3_600_000, default: 0,
    meaning: 'On SIGTERM/SIGINT: milliseconds during which /api/v1/health/ready answers 503 draining (the health envelopes 503 shutting_down) while every other request is still served, so that a load balancer probing readiness stops sending new work before the listener closes; then the shutdown proceeds as V2A_SHUTDOWN_TIMEOUT_MS says, its timeout counted from the end of this delay. A second signal during the delay ends it at once. 0 = no delay (in Kubernetes the preStop sleep does this).',
  }, 'shutdownDelayMs'),
];

/** Parses and validates the settings from `env` (default: process.env). Throws ConfigError. */
export function loadConfig(env: Env = process.env): ServerConfig {
  const draft = applySettings(env, SETTINGS);
  const { platformKey, ...settings } = draft;
  const config = Object.freeze(settings as ServerConfig);
  if (platformKey !== undefined) PLATFORM_KEYS.set(config, platformKey);
  STRAYS.set(config, strayVariables(env));
  return config;
}

const STRAYS = new WeakMap<ServerConfig, readonly string[]>();

/** What strayVariables said of the environment this config was loaded from (the server warns with it as it starts). */
export const strayVariablesOf = (config: ServerConfig): readonly string[] => STRAYS.get(config) ?? [];

/** V2A_* variables that are no setting: read by the CLI. */
const CLI_VARIABLES = ['V2A_DEBUG'];

/**
 * One line for each V2A_* variable in `env` (in any case) that v2a does not read, naming the
 * setting it is likely meant as: a misspelt setting otherwise keeps its default without a word.
 * A warning, not an error: a deployment may carry variables of its own under the prefix.
 */
export function strayVariables(env: Env): string[] {
  const known = [...SETTINGS.map((s) => s.name), ...CLI_VARIABLES];
  return Object.keys(env)
    .filter((name) => name.toUpperCase().startsWith('V2A_') && !known.includes(name) && env[name] !== undefined)
    .sort()
    .map((name) => {
      const near = nearestName(name.toUpperCase(), known);
      return `${name} is no v2a setting and is ignored${near ? ` (did you mean ${near}?)` : ''}`;
    });
}

/** The name in `names` fewest edits away from `name`, if it is near enough to be a misspelling. */
function nearestName(name: string, names: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = Math.max(2, Math.floor(name.length / 5)) + 1;
  for (const candidate of names) {
    const d = editDistance(name, candidate);
    if (d < bestDistance) [best, bestDistance] = [candidate, d];
  }
  return best;
}

/** The imageUrl fetch's settings: V2A_IMAGE_FETCH_ALLOWLIST and V2A_FETCH_TIMEOUT_MS. */
export type FetchSettings = Pick<ServerConfig, 'imageFetchAllowlist' | 'fetchTimeoutMs'>;

/**
 * The imageUrl fetch's settings alone, parsed as the server parses them, for `v2a mcp`, which
 * fetches as the server does and checks them as it starts. Throws ConfigError.
 */
export function loadFetchSettings(env: Env = process.env): FetchSettings {
  const draft = applySettings(env, SETTINGS.filter((s) => s.name === 'V2A_IMAGE_FETCH_ALLOWLIST' || s.name === 'V2A_FETCH_TIMEOUT_MS'));
  return { imageFetchAllowlist: draft.imageFetchAllowlist!, fetchTimeoutMs: draft.fetchTimeoutMs! };
}

/** `settings` applied to a draft; every bad value named in one ConfigError. */
function applySettings(env: Env, settings: readonly (typeof SETTINGS)[number][]): Draft {
  const draft: Draft = {};
  const problems: string[] = [];
  for (const s of settings) {
    try {
      s.apply(env[s.name], draft);
    } catch (err) {
      // An unset setting failed on its default, against another setting: name the default.
      const shown = s.secret ? '' : unset(env[s.name]) ? ` (unset: its default is ${s.default})` : ` (got ${JSON.stringify(env[s.name])})`;
      problems.push(`${s.name} ${(err as Error).message}${shown}`);
      // Keep dependants (V2A_QUEUE_LIMIT on V2A_WORKERS) from failing for the wrong reason.
      if (s.name === 'V2A_WORKERS') draft.workers = 1;
    }
  }
  if (problems.length) throw new ConfigError(problems);
  return draft;
}

/** One setting as GET /api/v1/status shows it: secret settings only say whether they are set. */
export interface EffectiveSetting {
  readonly name: string;
  readonly value?: unknown;
  readonly set?: boolean;
  readonly default: string;
  readonly testOnly?: boolean;
  readonly secret?: boolean;
}

/** Schema of an EffectiveSetting, as the status body lists them. */
export const EFFECTIVE_SETTING_SCHEMA: JsonSchema = {
  type: 'object',
  required: ['name', 'default'],
  additionalProperties: false,
  properties: {
    name: { type: 'string' },
    value: { description: 'The effective value (absent for secret settings).' },
    set: { type: 'boolean' },
    default: { type: 'string' },
    secret: { const: true },
    testOnly: { const: true },
  },
};

/** The effective, non-secret configuration (values of secrets are never included). */
export function effectiveConfig(config: ServerConfig, env: Env = process.env): EffectiveSetting[] {
  return SETTINGS.map((s) => ({
    name: s.name,
    ...(s.secret ? { set: s.value(config, env) === true, secret: true } : { value: s.value(config, env) ?? null }),
    default: s.default,
    ...(s.testOnly ? { testOnly: true } : {}),
  }));
}

/** Every setting with its default and meaning, for documentation and status endpoints. */
export function describeConfig(): ConfigEntry[] {
  return SETTINGS.map(({ name, default: def, meaning, testOnly, secret }) => ({
    name,
    default: def,
    meaning,
    ...(testOnly ? { testOnly } : {}),
    ...(secret ? { secret } : {}),
  }));
}

/** `--settings` of `v2a serve` and of the server entry (main.ts): every setting, default and meaning. */
export function settingsText(): string {
  const rows = describeConfig().map((c) => `  ${c.name}\n      default: ${c.default}\n      ${c.meaning}`);
  return `Settings of v2a serve (environment variables):\n\n${rows.join('\n')}\n`;
}

/** Size of the JSON body that can carry a base64 image of `maxBytes`: 4/3, line breaks, data: prefix and parameters. */
export function jsonBodyLimit(maxImageBytes: number): number {
  const base64 = Math.ceil(maxImageBytes / 3) * 4;
  return base64 + Math.ceil(base64 / 38) + 64 * 1024;
}

/** The soft RLIMIT_NOFILE (open files), from /proc/self/limits; undefined where unknown or unlimited. */
export function openFileLimit(): number | undefined {
  try {
    const m = /^Max open files\s+(\d+)/m.exec(readFileSync('/proc/self/limits', 'latin1'));
    return m ? Number(m[1]) : undefined;
  } catch {
    return undefined;
  }
}

/** The soft RLIMIT_NOFILE less 256 spare descriptors, at most 10000 (10000 where unknown). */
function defaultMaxConnections(): number {
  const MOST = 10_000;
  const SPARE = 256;
  const limit = openFileLimit();
  return limit === undefined ? MOST : Math.max(16, Math.min(MOST, limit - SPARE));
}
