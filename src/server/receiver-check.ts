/**
 * Backend asynchronous status checks of the handoff receiver (interface.md §4.3, §5): with
 * PLATFORM_API_KEY set, the server GETs the receiver's status endpoint (V2A_RECEIVER_STATUS_URL,
 * by default the origin of V2A_RECEIVER_URL + /api/v1/status) with the key in the
 * `X-Platform-API-Key` header, in the background every V2A_RECEIVER_CHECK_INTERVAL_MS and on
 * demand from GET /api/v1/status (cached; concurrent callers share one check).
 *
 * What a check establishes, reported as is:
 * - `reachable`: an HTTP answer arrived within the timeout (V2A_FETCH_TIMEOUT_MS, at most 5 s);
 * - `ok`: that answer was 2xx; `authenticated`: it was not 401/403 (the receiver accepts the key);
 * - `httpStatus` and `latencyMs` (time to the response headers);
 * - `receiverStatus` / `receiverVersion`: the `status` and `version` strings of a JSON body, when
 *   present (at most 64 KiB are read; anything else in the body is ignored);
 * - `error`: why it was not reachable (a short code: timeout, unreachable, address_not_public,
 *   scheme_not_allowed, ip_literal, redirect, ...).
 *
 * The fetch follows the imageUrl rules where they apply (fetch-image.ts): https only, no user
 * info, no IP literals, every resolved and connected address public unicast (loopback only with
 * the test-only V2A_TEST_ALLOW_LOOPBACK_FETCH), a whole-request timeout, a capped body. The host
 * needs no allowlist entry (the operator configured it), and redirects are never followed, so the
 * key only ever goes to the configured host.
 */
import type { LookupFunction } from 'node:net';
import { isIP } from 'node:net';
import { createAgent, describeNetworkError, discard, type ImageFetchError } from './fetch-image.js';
import { displayUrl } from './config.js';
import { PLATFORM_KEY_HEADER } from './telemetry/tracing.js';
import type { JsonSchema } from '../core/format/jsonSchemas.js';

export interface ReceiverCheckResult {
  /** The checked URL: origin and path. */
  readonly url: string;
  readonly checkedAt: string;
  readonly reachable: boolean;
  readonly ok: boolean;
  readonly authenticated?: boolean;
  readonly httpStatus?: number;
  readonly latencyMs?: number;
  readonly receiverStatus?: string;
  readonly receiverVersion?: string;
  readonly error?: string;
}

/** Schema of ReceiverCheckResult, as GET /api/v1/status reports it. */
export const RECEIVER_CHECK_SCHEMA: JsonSchema = {
  type: 'object',
  description: 'One status check of the handoff receiver: GET of its status URL with the platform key in X-Platform-API-Key (https only, public addresses only, no redirects followed, short timeout).',
  required: ['url', 'checkedAt', 'reachable', 'ok'],
  additionalProperties: false,
  properties: {
    url: { type: 'string', description: 'The checked URL (origin and path).' },
    checkedAt: { type: 'string', format: 'date-time' },
    reachable: { type: 'boolean', description: 'An HTTP answer arrived in time.' },
    ok: { type: 'boolean', description: 'The answer was 2xx.' },
    authenticated: { type: 'boolean', description: 'The answer was not 401 or 403: the receiver accepts the key.' },
    httpStatus: { type: 'integer', minimum: 100, maximum: 599 },
    latencyMs: { type: 'number', minimum: 0, description: 'Time to the response headers.' },
    receiverStatus: { type: 'string', description: 'The `status` string of the receiver\'s JSON answer, if any.' },
    receiverVersion: { type: 'string', description: 'The `version` string of the receiver\'s JSON answer, if any.' },
    error: { type: 'string', description: 'Why it was not reachable or not ok: timeout, unreachable, connection_refused, address_not_public, scheme_not_allowed, ip_literal, redirect, ...' },
  },
};

export interface ReceiverChecker {
  /** The status URL (origin and path). */
  readonly url: string;
  readonly intervalMs: number;
  latest(): ReceiverCheckResult | undefined;
  /** Runs a check now (joins one in progress). */
  check(): Promise<ReceiverCheckResult>;
  /** The latest result when younger than `maxAgeMs`, else a new check. */
  current(maxAgeMs: number): Promise<ReceiverCheckResult>;
  /** Starts the background checks (no-op when intervalMs is 0). */
  start(): void;
  stop(): void;
}

export interface ReceiverCheckOptions {
  url: string;
  key: string;
  intervalMs: number;
  timeoutMs: number;
  allowLoopback: boolean;
  /** TEST ONLY: DNS lookup and extra trusted CA, as for imageUrl. */
  lookup?: LookupFunction;
  ca?: string | Buffer;
  userAgent: string;
  onResult?: (result: ReceiverCheckResult) => void;
}

export const MAX_STATUS_BODY_BYTES = 64 * 1024;
/** On-demand results younger than this are reused when background checks are off. */
export const ON_DEMAND_MAX_AGE_MS = 30_000;

const SHORT = /^[\w .:/+-]{1,64}$/;

function shortString(v: unknown): string | undefined {
  return typeof v === 'string' && SHORT.test(v) ? v : undefined;
}

export function createReceiverChecker(opts: ReceiverCheckOptions): ReceiverChecker {
  const shown = displayUrl(opts.url) ?? '(invalid URL)';
  let last: ReceiverCheckResult | undefined;
  let lastAt = 0;
  let running: Promise<ReceiverCheckResult> | undefined;
  let timer: NodeJS.Timeout | undefined;

  const fail = (error: string, extra: Partial<ReceiverCheckResult> = {}): ReceiverCheckResult =>
    ({ url: shown, checkedAt: new Date().toISOString(), reachable: false, ok: false, error, ...extra });

  async function once(): Promise<ReceiverCheckResult> {
    let url: URL;
    try {
      url = new URL(opts.url);
    } catch {
      return fail('invalid_url');
    }
    if (url.protocol !== 'https:') return fail('scheme_not_allowed');
    if (url.username || url.password) return fail('credentials_not_allowed');
    if (url.hostname.startsWith('[') || isIP(url.hostname) !== 0) return fail('ip_literal');

    const refusal: { error?: ImageFetchError } = {};
    const agent = createAgent({ allowLoopback: opts.allowLoopback, ...(opts.lookup ? { lookup: opts.lookup } : {}), ...(opts.ca !== undefined ? { ca: opts.ca } : {}) }, opts.timeoutMs, refusal);
    const signal = AbortSignal.timeout(opts.timeoutMs);
    const started = performance.now();
    try {
      const res = await agent.request({
        origin: url.origin,
        path: url.pathname + url.search,
        method: 'GET',
        headers: { accept: 'application/json', 'user-agent': opts.userAgent, [PLATFORM_KEY_HEADER]: opts.key },
        signal,
      });
      const latencyMs = Math.round((performance.now() - started) * 10) / 10;
      const base = {
        url: shown,
        checkedAt: new Date().toISOString(),
        reachable: true,
        httpStatus: res.statusCode,
        latencyMs,
        authenticated: res.statusCode !== 401 && res.statusCode !== 403,
      };
      if (res.statusCode >= 300 && res.statusCode < 400) {
        discard(res.body);
        return { ...base, ok: false, error: 'redirect' };
      }
      const ok = res.statusCode >= 200 && res.statusCode < 300;
      let info: { receiverStatus?: string; receiverVersion?: string } = {};
      const type = String(res.headers['content-type'] ?? '');
      if (ok && /json/i.test(type)) {
        const chunks: Buffer[] = [];
        let total = 0;
        for await (const chunk of res.body as AsyncIterable<Buffer>) {
          total += chunk.length;
          if (total > MAX_STATUS_BODY_BYTES) break;
          chunks.push(chunk);
        }
        if (total <= MAX_STATUS_BODY_BYTES) {
          try {
            const json = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>;
            const status = shortString(json?.status);
            const version = shortString(json?.version);
            info = { ...(status ? { receiverStatus: status } : {}), ...(version ? { receiverVersion: version } : {}) };
          } catch {
            // not JSON after all: reachable and ok is what counts
          }
        }
      } else {
        discard(res.body);
      }
      return { ...base, ok, ...info };
    } catch (err) {
      if (refusal.error) return fail(refusal.error.code);
      if (signal.aborted) return fail('timeout');
      return fail(describeNetworkError(err) === 'the connection was refused' ? 'connection_refused' : 'unreachable');
    } finally {
      await agent.destroy().catch(() => {});
    }
  }

  function check(): Promise<ReceiverCheckResult> {
    running ??= once()
      .catch(() => fail('internal'))
      .then((result) => {
        last = result;
        lastAt = performance.now();
        running = undefined;
        try {
          opts.onResult?.(result);
        } catch {
          // a faulty listener must not break the check
        }
        return result;
      });
    return running;
  }

  return {
    url: shown,
    intervalMs: opts.intervalMs,
    latest: () => last,
    check,
    current(maxAgeMs) {
      if (last && performance.now() - lastAt <= maxAgeMs) return Promise.resolve(last);
      return check();
    },
    start() {
      if (opts.intervalMs <= 0 || timer) return;
      void check();
      timer = setInterval(() => void check(), opts.intervalMs);
      timer.unref();
    },
    stop() {
      if (timer) clearInterval(timer);
      timer = undefined;
    },
  };
}
