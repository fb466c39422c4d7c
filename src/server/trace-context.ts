/**
 * W3C Trace Context (https://www.w3.org/TR/trace-context/): parsing `traceparent` and
 * `tracestate`, and deciding the server span's context. Pure functions; the Fastify plugin lives in
 * plugins/trace.ts.
 *
 * - A valid incoming `traceparent` is continued: same trace id, a new span id (ours), the
 *   incoming sampled flag. Anything else starts a new trace.
 * - `traceparent` rules (Level 1 §3.2): lowercase hex only; version `ff` is invalid; version `00`
 *   is exactly 55 characters; a higher version may carry more after a `-` at position 55 (we parse
 *   the first four fields and answer as version 00); trace id and parent id must not be all zeros.
 * - `tracestate` (§3.3) is only looked at when `traceparent` was valid, and kept only when every
 *   list member is well formed, no key repeats, there are at most 32 members and the header is at
 *   most 512 characters. Otherwise it is dropped as a whole.
 */
import { randomBytes } from 'node:crypto';

export interface TraceContext {
  /** 32 lowercase hex characters. */
  readonly traceId: string;
  /** The server span: 16 lowercase hex characters. */
  readonly spanId: string;
  /** The caller's span, when the trace was continued. */
  readonly parentSpanId: string | undefined;
  /** Two hex characters; bit 0 = sampled. */
  readonly flags: string;
  /** Validated tracestate to propagate, or undefined. */
  readonly tracestate: string | undefined;
  /** Whether a valid incoming traceparent was continued. */
  readonly continued: boolean;
}

export const TRACESTATE_MAX_MEMBERS = 32;
export const TRACESTATE_MAX_LENGTH = 512;

const HEX = /^[0-9a-f]+$/;
const ZERO = /^0+$/;

/** Schema of the trace id echoed in reply bodies (health, status, problems). */
export const TRACE_ID_SCHEMA = { type: 'string', pattern: '^[0-9a-f]{32}$', description: 'W3C trace id (32 lowercase hex).' };
/** The traceparent header as a JSON Schema pattern (parseTraceparent checks more). */
export const TRACEPARENT_PATTERN = '^[0-9a-f]{2}-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}(-.*)?$';

export interface ParsedTraceparent {
  readonly version: string;
  readonly traceId: string;
  readonly parentId: string;
  readonly flags: string;
}

/** Parses a traceparent header value; undefined when invalid. */
export function parseTraceparent(value: string | string[] | undefined): ParsedTraceparent | undefined {
  if (typeof value !== 'string') return undefined; // absent, or sent more than once
  const v = value.trim();
  if (v.length < 55) return undefined;
  const version = v.slice(0, 2);
  if (!HEX.test(version) || version === 'ff') return undefined;
  if (version === '00' ? v.length !== 55 : v.length > 55 && v[55] !== '-') return undefined;
  const head = v.slice(0, 55);
  const parts = head.split('-');
  if (parts.length !== 4) return undefined;
  const [, traceId, parentId, flags] = parts as [string, string, string, string];
  if (traceId.length !== 32 || !HEX.test(traceId) || ZERO.test(traceId)) return undefined;
  if (parentId.length !== 16 || !HEX.test(parentId) || ZERO.test(parentId)) return undefined;
  if (flags.length !== 2 || !HEX.test(flags)) return undefined;
  return { version, traceId, parentId, flags };
}

const SIMPLE_KEY = /^[a-z][a-z0-9_\-*/]{0,255}$/;
const TENANT_KEY = /^[a-z0-9][a-z0-9_\-*/]{0,240}@[a-z][a-z0-9_\-*/]{0,13}$/;
/** 1-256 printable ASCII characters except `,` and `=`, the last not a space (§3.3.1.3.2). */
const VALUE = /^[\x20-\x2b\x2d-\x3c\x3e-\x7e]{0,255}[\x21-\x2b\x2d-\x3c\x3e-\x7e]$/;

/**
 * Validates a tracestate header value (several headers are combined with commas, as HTTP allows).
 * Returns the normalised value (members joined by `,`, empty members dropped), or undefined when
 * the header is absent, malformed or over the bounds.
 */
export function parseTracestate(value: string | string[] | undefined): string | undefined {
  if (value === undefined) return undefined;
  const joined = Array.isArray(value) ? value.join(',') : value;
  if (joined.length > TRACESTATE_MAX_LENGTH * 2) return undefined;
  const members: string[] = [];
  const keys = new Set<string>();
  for (const raw of joined.split(',')) {
    const member = raw.replace(/^[ \t]+|[ \t]+$/g, '');
    if (member === '') continue;
    const eq = member.indexOf('=');
    if (eq <= 0) return undefined;
    const key = member.slice(0, eq);
    const val = member.slice(eq + 1);
    if (!(SIMPLE_KEY.test(key) || TENANT_KEY.test(key))) return undefined;
    if (!VALUE.test(val)) return undefined;
    if (keys.has(key)) return undefined;
    keys.add(key);
    members.push(`${key}=${val}`);
  }
  if (members.length === 0 || members.length > TRACESTATE_MAX_MEMBERS) return undefined;
  const out = members.join(',');
  return out.length <= TRACESTATE_MAX_LENGTH ? out : undefined;
}

function randomHex(bytes: number): string {
  for (;;) {
    const hex = randomBytes(bytes).toString('hex');
    if (!ZERO.test(hex)) return hex;
  }
}

/**
 * The server span's context for a request with these headers. `sampleNew`: the sampled flag of a
 * trace we start (true when spans are exported).
 */
export function traceContextFor(
  headers: { traceparent?: string | string[] | undefined; tracestate?: string | string[] | undefined },
  sampleNew = false,
): TraceContext {
  const parent = parseTraceparent(headers.traceparent);
  if (parent) {
    // Only the sampled bit is defined for version 00; other bits are not propagated.
    const sampled = (parseInt(parent.flags, 16) & 1) === 1;
    return {
      traceId: parent.traceId,
      spanId: randomHex(8),
      parentSpanId: parent.parentId,
      flags: sampled ? '01' : '00',
      tracestate: parseTracestate(headers.tracestate),
      continued: true,
    };
  }
  return {
    traceId: randomHex(16),
    spanId: randomHex(8),
    parentSpanId: undefined,
    flags: sampleNew ? '01' : '00',
    tracestate: undefined,
    continued: false,
  };
}

/** The `traceparent` header of the server span. */
export function formatTraceparent(ctx: TraceContext): string {
  return `00-${ctx.traceId}-${ctx.spanId}-${ctx.flags}`;
}
