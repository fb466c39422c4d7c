/**
 * Safe fetching of `imageUrl` (decisions.md, "Image input"): https only, host on the trusted list
 * or the operator's allowlist, no IP literals, every resolved address public unicast (checked in
 * the connection's own DNS lookup, so there is no rebinding window, and again on the connected
 * socket), at most `maxRedirects` redirects each re-checked, a whole-request timeout, and a body
 * streamed up to `maxBytes` and no further.
 */
import dns from 'node:dns';
import type { LookupAddress, LookupOptions } from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';
import { rootCertificates } from 'node:tls';
import { Agent, buildConnector, type Dispatcher } from 'undici';
import { V2aError } from '../core/errors.js';
import { FETCH_TIMEOUT_MS, MAX_IMAGE_BYTES } from '../settings/index.js';
import { isLoopbackAddress, isPublicAddress } from './net/ip-policy.js';
import { matchesHostPattern, TRUSTED_IMAGE_HOSTS } from './net/image-hosts.js';

export const IMAGE_FETCH_DEFAULTS = {
  maxBytes: MAX_IMAGE_BYTES.default,
  timeoutMs: FETCH_TIMEOUT_MS.default,
  maxRedirects: 3,
} as const;

export interface FetchImageOptions {
  /** Host patterns from V2A_IMAGE_FETCH_ALLOWLIST (see parseAllowlist). */
  allowlist: readonly string[];
  /** Defaults to TRUSTED_IMAGE_HOSTS. */
  trustedHosts?: readonly string[];
  /** Largest accepted body in bytes (V2A_MAX_IMAGE_BYTES); default 16 MiB. */
  maxBytes?: number;
  /** Budget for the whole fetch: DNS, connect, TLS, redirects and body; default 10 s. */
  timeoutMs?: number;
  /** Default 3. */
  maxRedirects?: number;
  /** TEST ONLY: let 127/8 and ::1 through so tests can use a local server. Nothing else relaxes. */
  allowLoopback?: boolean;
  /** DNS lookup (node's dns.lookup signature); injectable for tests. Called with `all: true`. */
  lookup?: LookupFunction;
  /** TEST ONLY: an extra trusted CA/certificate (PEM), added to the default roots. */
  ca?: string | Buffer;
  /** Caller cancellation; its abort reason is rethrown as is. */
  signal?: AbortSignal;
}

export type ImageFetchStatus = 400 | 413 | 502;

export class ImageFetchError extends Error {
  override name = 'ImageFetchError';
  constructor(
    readonly status: ImageFetchStatus,
    readonly code: string,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/**
 * The error of the one table (core/errors.ts) a failed fetch is, naming imageUrl: the HTTP face
 * answers it as a problem, the stdio face as the tool's error. Its cause stays attached for the
 * log (plugins/errors.ts causeCodes), never in the reply.
 */
export function fetchFailure(err: ImageFetchError): V2aError {
  const code = err.status === 413 ? 'image-too-large' : err.status === 400 ? 'image-url-not-allowed' : 'image-fetch-failed';
  return new V2aError(code, err.message, { errors: [{ parameter: 'imageUrl', message: err.message }], cause: err });
}

export async function fetchImage(url: string, opts: FetchImageOptions): Promise<Uint8Array> {
  const maxBytes = opts.maxBytes ?? IMAGE_FETCH_DEFAULTS.maxBytes;
  const timeoutMs = opts.timeoutMs ?? IMAGE_FETCH_DEFAULTS.timeoutMs;
  const maxRedirects = opts.maxRedirects ?? IMAGE_FETCH_DEFAULTS.maxRedirects;
  const hosts = [...(opts.trustedHosts ?? TRUSTED_IMAGE_HOSTS), ...opts.allowlist];

  let current = parseUrl(url);
  checkUrl(current, hosts);

  const timeout = AbortSignal.timeout(timeoutMs);
  const signal = opts.signal ? AbortSignal.any([timeout, opts.signal]) : timeout;
  // A refusal raised inside undici's connect path may come back wrapped; remember the original.
  const refusal: { error?: ImageFetchError } = {};
  // One agent per fetch: connection state never outlives it, and destroy() cuts everything.
  const agent = createAgent(opts, timeoutMs, refusal);
  const host = () => current.hostname;
  try {
    return await abortable(signal, async () => {
      for (let redirects = 0; ; redirects++) {
        const res = await agent.request({
          origin: current.origin,
          path: current.pathname + current.search,
          method: 'GET',
          headers: { accept: 'image/*', 'accept-encoding': 'identity', 'user-agent': 'v2a/0.3.0 (image fetch)' },
          signal,
        });
        const location = res.headers.location;
        // Only the redirects: 304 Not Modified or 300 Multiple Choices with a Location were followed.
        if (REDIRECTS.has(res.statusCode) && typeof location === 'string') {
          discard(res.body);
          if (redirects >= maxRedirects) {
            throw new ImageFetchError(502, 'too_many_redirects', `Fetching the image from ${host()} took more than ${maxRedirects} redirects`);
          }
          let next: URL;
          try {
            next = new URL(location, current);
          } catch {
            throw new ImageFetchError(502, 'upstream_status', `Host ${host()} redirected to an invalid URL`);
          }
          checkUrl(next, hosts, ' (redirect target)');
          current = next;
          continue;
        }
        // A whole image only: 206 is part of one (no Range is sent), 204 and 205 none; they were
        // decoded as the image and blamed on the client (400 "undecodable").
        if (res.statusCode !== 200 && res.statusCode !== 203) {
          discard(res.body);
          throw new ImageFetchError(502, 'upstream_status', `Host ${host()} answered HTTP ${res.statusCode} for the image URL`);
        }
        // Asked for identity: a compressed body is not inflated (a bomb would need a bound of its
        // own), and read as is it would be called an unsupported image format.
        const encoding = String(res.headers['content-encoding'] ?? 'identity').trim().toLowerCase();
        if (encoding !== 'identity' && encoding !== '') {
          discard(res.body);
          throw new ImageFetchError(502, 'upstream_status', `Host ${host()} sent the image with Content-Encoding ${JSON.stringify(encoding.slice(0, 40))}; v2a reads images uncompressed (identity) only`);
        }
        const bytes = await readCapped(res.body, res.headers['content-length'], maxBytes, host());
        if (bytes.byteLength === 0) throw new ImageFetchError(502, 'upstream_status', `Host ${host()} answered HTTP ${res.statusCode} with an empty body for the image URL`);
        return bytes;
      }
    });
  } catch (err) {
    if (refusal.error) throw refusal.error;
    if (err instanceof ImageFetchError) throw err;
    if (opts.signal?.aborted) throw opts.signal.reason;
    if (timeout.aborted) {
      throw new ImageFetchError(502, 'timeout', `Fetching the image from ${host()} timed out after ${timeoutMs} ms`, { cause: err });
    }
    throw new ImageFetchError(502, 'unreachable', `Could not fetch the image from ${host()}: ${describeNetworkError(err)}`, { cause: err });
  } finally {
    await agent.destroy().catch(() => {});
  }
}

/** The statuses whose Location is followed. */
const REDIRECTS: ReadonlySet<number> = new Set([301, 302, 303, 307, 308]);

function parseUrl(url: string): URL {
  try {
    return new URL(url);
  } catch {
    throw new ImageFetchError(400, 'invalid_url', 'imageUrl is not a valid absolute URL');
  }
}

const clipped = (text: string, max: number): string => (text.length > max ? `${text.slice(0, max)}...` : text);

/** Everything decidable from the URL alone, before any DNS or connection. */
function checkUrl(url: URL, hosts: readonly string[], what = ''): void {
  if (url.protocol !== 'https:') {
    // A data: URL holds the image itself: it has a field of its own.
    const inline = url.protocol === 'data:' && what === '' ? '; put data: URLs in imageBase64' : '';
    throw new ImageFetchError(400, 'scheme_not_allowed', `imageUrl${what} must use https:, not ${clipped(url.protocol, 40)}${inline}`);
  }
  if (url.username !== '' || url.password !== '') {
    throw new ImageFetchError(400, 'credentials_not_allowed', `imageUrl${what} must not contain credentials`);
  }
  // undici skips the connect-time lookup for IP literals, so they must never reach it.
  if (url.hostname.startsWith('[') || isIP(url.hostname) !== 0) {
    throw new ImageFetchError(400, 'ip_literal', `imageUrl${what} must name a host, not an IP address`);
  }
  if (!hosts.some((p) => matchesHostPattern(url.hostname, p))) {
    // A DNS name has at most 253 characters: a longer one is echoed cut (it was echoed whole, twice).
    // An empty list is the default: say that imageUrl is off here, and what to send instead.
    const off = hosts.length === 0 ? ', which is empty on this server (V2A_IMAGE_FETCH_ALLOWLIST): imageUrl is off here; send the image itself (imageBase64) instead' : '';
    throw new ImageFetchError(400, 'host_not_allowed', `Host ${clipped(url.hostname, 253)}${what} is not on the image host allowlist${off}`);
  }
}

/** The connection options of the address policy, shared with the receiver status checks. */
export type SafeAgentOptions = Pick<FetchImageOptions, 'allowLoopback' | 'lookup' | 'ca'>;

/**
 * An undici Agent that only connects to public unicast addresses (loopback too with the test-only
 * `allowLoopback`), checked in its DNS lookup and again on the connected socket. A refusal is also
 * stored in `refusal.error`, because undici may wrap it. Callers must still refuse IP-literal
 * URLs (undici skips the lookup for them) and destroy the agent when done.
 */
export function createAgent(opts: SafeAgentOptions, timeoutMs: number, refusal: { error?: ImageFetchError }): Agent {
  const allowed = (address: string) => isPublicAddress(address) || (opts.allowLoopback === true && isLoopbackAddress(address));
  const refuse = (host: string) =>
    (refusal.error = new ImageFetchError(400, 'address_not_public', `Host ${host} resolves to an address that is not public`));
  const baseLookup = opts.lookup ?? (dns.lookup as LookupFunction);

  // Resolve every address, refuse if any is not public, and hand net.connect only vetted ones.
  const lookup: LookupFunction = (hostname, options: LookupOptions, callback) => {
    baseLookup(hostname, { ...options, all: true }, (err, result) => {
      if (err) return callback(err, '', undefined);
      const all: LookupAddress[] = typeof result === 'string' ? [{ address: result, family: isIP(result) }] : result;
      if (all.length === 0) return callback(Object.assign(new Error(`no addresses for ${hostname}`), { code: 'ENOTFOUND' }), '', undefined);
      if (!all.every((a) => allowed(a.address))) return callback(refuse(hostname), '', undefined);
      if (options.all) callback(null, all);
      else callback(null, all[0]!.address, all[0]!.family);
    });
  };

  const connector = buildConnector({
    lookup,
    timeout: timeoutMs,
    ...(opts.ca !== undefined ? { ca: [...rootCertificates, opts.ca.toString()] } : {}),
  });
  // Defence in depth: check the peer address of the socket actually connected.
  const connect: buildConnector.connector = (options, callback) => {
    connector(options, (err, socket) => {
      if (err) return callback(err, null);
      const remote = socket!.remoteAddress;
      if (remote === undefined || !allowed(remote)) {
        socket!.destroy();
        return callback(refuse(options.hostname), null);
      }
      callback(null, socket!);
    });
  };
  return new Agent({ connect, headersTimeout: timeoutMs, bodyTimeout: timeoutMs });
}

/** Reads the body, refusing as soon as it (or its declared length) exceeds maxBytes. */
async function readCapped(
  body: BodyReadable,
  contentLength: string | string[] | undefined,
  maxBytes: number,
  host: string,
): Promise<Uint8Array> {
  const tooLarge = () => new ImageFetchError(413, 'too_large', `The image at ${host} is larger than the ${maxBytes}-byte limit`);
  if (typeof contentLength === 'string' && /^\d+$/.test(contentLength) && Number(contentLength) > maxBytes) {
    discard(body);
    throw tooLarge();
  }
  const chunks: Buffer[] = [];
  let total = 0;
  // Leaving the loop early (throw) destroys the body, which aborts the response.
  for await (const chunk of body as AsyncIterable<Buffer>) {
    total += chunk.length;
    if (total > maxBytes) throw tooLarge();
    chunks.push(chunk);
  }
  const out = new Uint8Array(total);
  let offset = 0;
  for (const chunk of chunks) {
    out.set(chunk, offset);
    offset += chunk.length;
  }
  return out;
}

type BodyReadable = Dispatcher.ResponseData['body'];

/**
 * Drops a body we will not read. undici turns a plain destroy() of an unfinished body into an
 * 'error' event (RequestAbortedError), which would be uncaught without a listener.
 */
export function discard(body: BodyReadable): void {
  body.on('error', () => {});
  body.destroy();
}

/** Runs `work`, rejecting as soon as `signal` aborts even if undici has not noticed yet. */
async function abortable<T>(signal: AbortSignal, work: () => Promise<T>): Promise<T> {
  signal.throwIfAborted();
  let onAbort!: () => void;
  const aborted = new Promise<never>((_, reject) => {
    onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
  });
  const running = work();
  running.catch(() => {}); // its late rejection after an abort is expected and irrelevant
  try {
    return await Promise.race([running, aborted]);
  } finally {
    signal.removeEventListener('abort', onAbort);
  }
}

/** A short, user-safe reason: never the raw message, which may carry internal addresses. */
export function describeNetworkError(err: unknown): string {
  const code = findCode(err);
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN' || code === 'ENODATA') return 'the host name does not resolve';
  if (code === 'ECONNREFUSED') return 'the connection was refused';
  if (code === 'ECONNRESET' || code === 'UND_ERR_SOCKET') return 'the connection was reset';
  if (code === 'UND_ERR_CONNECT_TIMEOUT' || code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT') return 'the host did not answer in time';
  if (code !== undefined && /CERT|TLS|SSL|ALTNAME|SIGNATURE/i.test(code)) return 'the TLS certificate could not be verified';
  return 'the connection failed';
}

function findCode(err: unknown): string | undefined {
  for (let e = err, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) {
    const code = (e as NodeJS.ErrnoException).code;
    if (typeof code === 'string') return code;
  }
  return undefined;
}
