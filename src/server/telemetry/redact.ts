/**
 * Redaction of exported telemetry: the ONE place that decides what may leave the process.
 * `RedactingSpanExporter` wraps the OTLP exporter and hands it sanitised copies of every span, so
 * no code path that creates spans can leak by mistake; the resource is built through the same
 * `redactAttributes` at start-up.
 *
 * Rules, applied to every span name, attribute (span, event and link), event name and status
 * message:
 * - the platform key never appears: every occurrence, and every fragment of 12 or more of its
 *   characters (validation messages quote values cut short), is replaced by `[REDACTED]` (keys
 *   shorter than MIN_SECRET_LENGTH cannot be searched for without mangling ordinary text: the
 *   server warns at start-up about such keys);
 * - attributes whose name speaks of credentials or image data (authorization, api key, cookie,
 *   password, secret, token, credential, base64, image data) lose their value entirely;
 * - `data:` URLs become `data:[REDACTED]`;
 * - URLs keep only scheme, host, port and path: user info, query string and fragment are dropped
 *   (an unparsable URL becomes `[REDACTED-URL]`); a path with a query (`/x?y`) loses the query;
 * - base64-like runs (24 or more characters of the base64 alphabets, possibly wrapped over lines,
 *   mixing upper case, lower case and digits) become `[REDACTED-BASE64]`: image bytes only ever
 *   travel as base64 or binary, and binary is never an attribute (hex ids, slugs, paths and
 *   words do not mix all three classes in one run);
 * - every string is cut to MAX_STRING_LENGTH characters, arrays to MAX_ARRAY_LENGTH items.
 *
 * Spans never carry exception stacks (they hold internal paths): errors are recorded as
 * `error.type` (the problem slug) and a sanitised status message.
 */
import type { Attributes, AttributeValue, Link, SpanStatus } from '@opentelemetry/api';
import type { ExportResult, ExportResultCode } from '@opentelemetry/core';
import type { ReadableSpan, SpanExporter, TimedEvent } from '@opentelemetry/sdk-trace-base';

/**
 * ExportResultCode.FAILED of @opentelemetry/core, written out: this module is loaded with the
 * server (render-service.ts uses urlOriginAndPath) and the SDK packages are optional peers, so
 * only their types are imported here.
 */
const EXPORT_FAILED = 1 as ExportResultCode.FAILED;

export const MIN_SECRET_LENGTH = 8;
export const MAX_STRING_LENGTH = 512;
export const MAX_ARRAY_LENGTH = 64;
const BASE64_MIN_RUN = 24;
/** Shortest fragment of a secret that is searched for. */
export const SECRET_FRAGMENT_LENGTH = 12;
export const REDACTED = '[REDACTED]';

/** Attribute names whose values are never exported. */
const SENSITIVE_KEY = /authorization|api[-_.]?key|cookie|passw(or)?d|secret|token|credential|base64|image[-_.]?data$/i;

const DATA_URL = /\bdata:[^\s"'<>]*/gi;
const URL_LIKE = /\b[a-z][a-z0-9+.-]{1,15}:\/\/[^\s"'<>]*/gi;
const PATH_WITH_QUERY = /(^|[\s"'(=])(\/[^\s?#"']*)[?#][^\s"')]*/g;
/** Runs of the base64 / base64url alphabets, optionally broken by line breaks (also escaped ones). */
const BASE64_RUN = /[A-Za-z0-9+/_-]+(?:(?:\r?\n|\\r\\n|\\n)[A-Za-z0-9+/_-]+)*={0,2}/g;

/** Origin and path of a URL; undefined when it does not parse. */
export function urlOriginAndPath(raw: string): string | undefined {
  try {
    const u = new URL(raw);
    if (u.protocol === 'data:' || u.protocol === 'blob:') return `${u.protocol}${REDACTED}`;
    if (!u.host) return `${u.protocol}${REDACTED}`;
    return `${u.protocol}//${u.host}${u.pathname}`;
  } catch {
    return undefined;
  }
}

function looksLikeBase64(run: string): boolean {
  const chars = run.replace(/\r?\n|\\r\\n|\\n|=/g, '');
  if (chars.length < BASE64_MIN_RUN) return false;
  return /[A-Z]/.test(chars) && /[a-z]/.test(chars) && /[0-9]/.test(chars);
}

/** Characters without which no URL, query, data: URL or base64 run rule can apply. */
const NEEDS_PATTERNS = /[:/?#+=\\\n]|[A-Za-z0-9_-]{24}/;
const MEMO_MAX_ENTRIES = 4096;
const MEMO_MAX_LENGTH = 256;

/**
 * The rules above for a fixed set of secrets. Results of short strings are memoised (span names,
 * attribute names and most values repeat from span to span), so redaction costs a map lookup
 * for them.
 */
export class Redactor {
  private readonly secrets: ReadonlyArray<{ value: string; fragments: ReadonlySet<string>; width: number }>;
  private readonly memo = new Map<string, string>();

  constructor(secrets: readonly string[] = []) {
    this.secrets = secrets.filter((v) => v.length >= MIN_SECRET_LENGTH).map((value) => {
      const width = Math.min(SECRET_FRAGMENT_LENGTH, value.length);
      const fragments = new Set<string>();
      for (let i = 0; i + width <= value.length; i++) fragments.add(value.slice(i, i + width));
      return { value, fragments, width };
    });
  }

  /** Replaces a secret and every fragment of it of at least SECRET_FRAGMENT_LENGTH characters. */
  private secret(s: string, secret: { value: string; fragments: ReadonlySet<string>; width: number }): string {
    if (s.includes(secret.value)) s = s.split(secret.value).join(REDACTED);
    const w = secret.width;
    if (s.length < w) return s;
    let out = '';
    let i = 0;
    while (i < s.length) {
      if (i + w <= s.length && secret.fragments.has(s.slice(i, i + w))) {
        let j = i + w;
        while (j < s.length && secret.value.includes(s.slice(i, j + 1))) j++;
        out += REDACTED;
        i = j;
      } else {
        out += s[i];
        i++;
      }
    }
    return out;
  }

  private compute(value: string): string {
    let s = value;
    for (const secret of this.secrets) s = this.secret(s, secret);
    if (NEEDS_PATTERNS.test(s)) {
      s = s.replace(DATA_URL, `data:${REDACTED}`);
      s = s.replace(URL_LIKE, (m) => {
        // A sentence may end right after the URL.
        const trail = /[.,;:!)\]]+$/.exec(m)?.[0] ?? '';
        const url = trail ? m.slice(0, -trail.length) : m;
        return (urlOriginAndPath(url) ?? '[REDACTED-URL]') + trail;
      });
      s = s.replace(PATH_WITH_QUERY, '$1$2');
      s = s.replace(BASE64_RUN, (m) => (looksLikeBase64(m) ? '[REDACTED-BASE64]' : m));
    }
    if (s.length > MAX_STRING_LENGTH) s = `${s.slice(0, MAX_STRING_LENGTH - 1)}…`;
    return s;
  }

  /** Sanitises one string. */
  string(value: string): string {
    if (value.length > MEMO_MAX_LENGTH) return this.compute(value);
    let out = this.memo.get(value);
    if (out === undefined) {
      out = this.compute(value);
      if (this.memo.size >= MEMO_MAX_ENTRIES) this.memo.clear();
      this.memo.set(value, out);
    }
    return out;
  }

  private value(value: AttributeValue): AttributeValue {
    if (typeof value === 'string') return this.string(value);
    if (Array.isArray(value)) {
      const items = value.slice(0, MAX_ARRAY_LENGTH);
      return items.map((v) => (typeof v === 'string' ? this.string(v) : v)) as AttributeValue;
    }
    return value;
  }

  /** A sanitised copy of an attribute map. */
  attributes(attributes: Attributes): Attributes {
    const out: Attributes = {};
    for (const [key, value] of Object.entries(attributes)) {
      if (value === undefined) continue;
      out[this.string(key)] = SENSITIVE_KEY.test(key) ? REDACTED : this.value(value);
    }
    return out;
  }

  /** A sanitised copy of a finished span (everything the OTLP serialiser reads). */
  span(span: ReadableSpan): ReadableSpan {
    const status: SpanStatus = span.status.message === undefined
      ? span.status
      : { code: span.status.code, message: this.string(span.status.message) };
    const events: TimedEvent[] = span.events.map((e) => ({
      name: this.string(e.name),
      time: e.time,
      ...(e.attributes ? { attributes: this.attributes(e.attributes) } : {}),
      ...(e.droppedAttributesCount !== undefined ? { droppedAttributesCount: e.droppedAttributesCount } : {}),
    }));
    const links: Link[] = span.links.map((l) => ({ ...l, ...(l.attributes ? { attributes: this.attributes(l.attributes) } : {}) }));
    const spanContext = span.spanContext();
    return {
      name: this.string(span.name),
      kind: span.kind,
      spanContext: () => spanContext,
      ...(span.parentSpanContext ? { parentSpanContext: span.parentSpanContext } : {}),
      startTime: span.startTime,
      endTime: span.endTime,
      status,
      attributes: this.attributes(span.attributes),
      links,
      events,
      duration: span.duration,
      ended: span.ended,
      resource: span.resource,
      instrumentationScope: span.instrumentationScope,
      droppedAttributesCount: span.droppedAttributesCount,
      droppedEventsCount: span.droppedEventsCount,
      droppedLinksCount: span.droppedLinksCount,
    };
  }
}

/** Sanitises one string by the rules above. `secrets`: values that must never appear (the key). */
export function redactString(value: string, secrets: readonly string[] = []): string {
  return new Redactor(secrets).string(value);
}

/** A sanitised copy of an attribute map. */
export function redactAttributes(attributes: Attributes, secrets: readonly string[] = []): Attributes {
  return new Redactor(secrets).attributes(attributes);
}

/** Wraps an exporter: every span is sanitised before the inner exporter sees it. */
export class RedactingSpanExporter implements SpanExporter {
  private readonly redactor: Redactor;

  constructor(
    private readonly inner: SpanExporter,
    secrets: readonly string[],
    /** Told about each export's outcome (for logs and metrics). */
    private readonly onResult?: (result: ExportResult, spans: number) => void,
  ) {
    this.redactor = new Redactor(secrets);
  }

  export(spans: ReadableSpan[], resultCallback: (result: ExportResult) => void): void {
    let clean: ReadableSpan[];
    try {
      clean = spans.map((s) => this.redactor.span(s));
    } catch (error) {
      // Never export what could not be sanitised.
      const result: ExportResult = { code: EXPORT_FAILED, error: error instanceof Error ? error : new Error(String(error)) };
      this.onResult?.(result, spans.length);
      resultCallback(result);
      return;
    }
    this.inner.export(clean, (result) => {
      this.onResult?.(result, spans.length);
      resultCallback(result);
    });
  }

  shutdown(): Promise<void> {
    return this.inner.shutdown();
  }

  forceFlush(): Promise<void> {
    return this.inner.forceFlush?.() ?? Promise.resolve();
  }
}
