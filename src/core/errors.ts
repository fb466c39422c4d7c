/**
 * The one table of error codes. Every expected failure anywhere in v2a is a `V2aError` carrying
 * one of these codes; each face only maps the code: the server to an RFC 9457 problem (`status`,
 * `title`, type URI `https://v2a.dev/problems/<code>`), the CLI to a one-line message and `exit`,
 * the MCP tool to an `isError` result (`mcp: 'tool'`) or a JSON-RPC error (`mcp: 'protocol'`,
 * reached before any tool runs). Nothing re-derives meaning from message text.
 *
 * Pure data and one class: the core, the studio and the server all import it.
 */
import { deepFreeze } from './freeze.js';

/** Process exit codes of the CLI (documented in `v2a --help`). */
export const EXIT = {
  ok: 0,
  /** An unexpected internal error (a bug): message only, stack with V2A_DEBUG=1. */
  internal: 1,
  /** Usage: unknown flag, missing argument, invalid parameter value, conflicting options. */
  usage: 2,
  /** The input is not a usable image (or, for `decode`, not valid json-compact). */
  input: 3,
  /** File system or stream I/O: not found, not readable, cannot write. */
  io: 4,
  /** Interrupted (SIGINT) during playback: 128 + 2, as shells report it. */
  interrupted: 130,
  /** While playing, the terminal closed (SIGHUP): 128 + 1. */
  hangup: 129,
  /** While playing, Ctrl-\\ (SIGQUIT): 128 + 3. */
  quit: 131,
  /** While playing, SIGTERM: 128 + 15. */
  terminated: 143,
} as const;
Object.freeze(EXIT);

/** What each exit code means, for `v2a --help` and the README (in the order they list them). */
export const EXIT_MEANINGS: Readonly<Record<keyof typeof EXIT, string>> = Object.freeze({
  ok: 'success',
  internal: 'internal error (a bug; set V2A_DEBUG=1 for a stack trace)',
  usage: 'usage: unknown flag or command, missing argument, invalid or conflicting values',
  input: 'the input is not a usable image or video (undecodable, unsupported, too large; no ffmpeg for a video or a BMP, ICO or PNM still), or for decode, not valid json-compact',
  io: 'I/O: the input cannot be read, the output cannot be written',
  interrupted: 'interrupted (Ctrl-C)',
  hangup: 'the terminal closed (SIGHUP) while playing',
  quit: 'quit (Ctrl-\\) while playing',
  terminated: 'terminated (SIGTERM) while playing',
});

export interface ErrorInfo {
  /** HTTP status of the problem reply. */
  readonly status: number;
  /** CLI exit code. */
  readonly exit: number;
  /**
   * How MCP reports it: `tool` — an `isError` tool result with the detail as text (a failure of the
   * render the model asked for); `protocol` — never inside a tool (HTTP-level or CLI-only). One
   * exception: /api/mcp answers a small body that is one tools/call refused a slot (overloaded, or
   * `rate-limited` by V2A_CLIENT_SLOTS) as the tool's failure (routes/mcp.ts); the per-minute
   * rate limit stays a 429.
   */
  readonly mcp: 'tool' | 'protocol';
  readonly title: string;
  /** What the code means, for the OpenAPI document and llms-full.txt. */
  readonly description: string;
  /** Never answered over HTTP (the CLI's own failures, or nobody left to answer). */
  readonly local?: true;
}

/** The one table of error codes: HTTP status, CLI exit code, how MCP reports it, title and meaning (frozen). */
export const ERRORS = deepFreeze({
  'invalid-parameters': { status: 400, exit: EXIT.usage, mcp: 'tool', title: 'Invalid parameters', description: 'A render parameter is unknown, has the wrong type, is out of range, or was given twice; `errors` names each one.' },
  'invalid-request': { status: 400, exit: EXIT.usage, mcp: 'tool', title: 'Invalid request', description: 'The request body is malformed (bad JSON, bad multipart, wrong field types, unknown fields) or missing.' },
  'missing-image': { status: 400, exit: EXIT.usage, mcp: 'tool', title: 'No image', description: 'No image was supplied: send exactly one of the file field `image`, `imageUrl` or `imageBase64`.' },
  'multiple-images': { status: 400, exit: EXIT.usage, mcp: 'tool', title: 'More than one image', description: 'More than one image source was supplied; exactly one is allowed.' },
  'invalid-base64': { status: 400, exit: EXIT.input, mcp: 'tool', title: 'Invalid base64', description: '`imageBase64` is not valid base64 (RFC 4648, standard alphabet; a data: URL prefix and line breaks are accepted).' },
  'unsupported-image': { status: 400, exit: EXIT.input, mcp: 'tool', title: 'Unsupported image format', description: 'The image is not JPEG, PNG, WebP, GIF, AVIF or TIFF (SVG and PDF are refused).' },
  'undecodable-image': { status: 400, exit: EXIT.input, mcp: 'tool', title: 'Undecodable image', description: 'The image is damaged, truncated, empty or not an image, or a progressive JPEG of more than 100 scans, or a TIFF of more than 10,000 pages.' },
  'image-too-tall': { status: 400, exit: EXIT.usage, mcp: 'tool', title: 'Image too tall for the grid', description: 'The image aspect would need more rows than the renderer allows at this column count.' },
  'image-url-not-allowed': { status: 400, exit: EXIT.usage, mcp: 'tool', title: 'Image URL not allowed', description: '`imageUrl` is not https, names an IP address, a host outside the allowlist, or a host resolving to a non-public address.' },
  'invalid-compact': { status: 400, exit: EXIT.input, mcp: 'protocol', title: 'Invalid json-compact', description: 'The document is not valid json-compact (v2a decode).' , local: true },
  'usage': { status: 400, exit: EXIT.usage, mcp: 'protocol', title: 'Usage error', description: 'A command-line flag, argument or setting is invalid or conflicts with another (CLI only).' , local: true },
  'unauthorized': { status: 401, exit: EXIT.usage, mcp: 'protocol', title: 'Unauthorized', description: 'A protected platform action (GET /api/v1/metrics, GET /api/v1/status) was called without the platform key or with a wrong one: send Authorization: Bearer <key> or X-Platform-API-Key: <key>. WWW-Authenticate says which.' },
  'forbidden-origin': { status: 403, exit: EXIT.usage, mcp: 'protocol', title: 'Origin not allowed', description: 'The browser Origin of this MCP request is neither the server\'s own (V2A_PUBLIC_URL, or a localhost / IP-literal Host) nor in a V2A_CORS_ORIGINS list.' },
  'not-found': { status: 404, exit: EXIT.usage, mcp: 'protocol', title: 'Not found', description: 'No resource at this path.' },
  'method-not-allowed': { status: 405, exit: EXIT.usage, mcp: 'protocol', title: 'Method not allowed', description: 'The path exists but not for this method; `Allow` lists the methods.' },
  'duplicate-key': { status: 400, exit: EXIT.usage, mcp: 'protocol', title: 'Duplicate JSON key', description: 'A JSON object of the body names the same key twice (two imageBase64, say); `errors` names the key. Nothing is silently overwritten.' },
  'json-too-complex': { status: 400, exit: EXIT.usage, mcp: 'protocol', title: 'JSON body too complex', description: 'The JSON body has more keys or deeper nesting than the server reads (see the detail); it was refused while parsing.' },
  'request-timeout': { status: 408, exit: EXIT.io, mcp: 'protocol', title: 'Request timeout', description: 'The request headers or body did not arrive in time (V2A_HEADERS_TIMEOUT_MS, V2A_BODY_IDLE_TIMEOUT_MS, V2A_REQUEST_TIMEOUT_MS); the connection is closed.' },
  'image-too-large': { status: 413, exit: EXIT.input, mcp: 'tool', title: 'Image too large', description: 'The image (upload, base64 or fetched body) exceeds V2A_MAX_IMAGE_BYTES, its pixel count exceeds V2A_MAX_IMAGE_PIXELS, decoding it would take more memory than V2A_MAX_DECODED_BYTES, or decoding it took longer than V2A_RENDER_TIMEOUT_MS (in whole seconds, at least 1).' },
  'request-too-large': { status: 413, exit: EXIT.usage, mcp: 'protocol', title: 'Request too large', description: 'The request body exceeds its size limit.' },
  'uri-too-long': { status: 414, exit: EXIT.usage, mcp: 'protocol', title: 'URI too long', description: 'The request line alone is longer than the server reads (16 KiB with the headers; an image belongs in the body, not the query); the connection is closed.' },
  'headers-too-large': { status: 431, exit: EXIT.usage, mcp: 'protocol', title: 'Request header fields too large', description: 'The request line and headers exceed what the server reads; the connection is closed.' },
  'unsupported-media-type': { status: 415, exit: EXIT.usage, mcp: 'protocol', title: 'Unsupported media type', description: 'The request Content-Type is not one this endpoint accepts, or the body has a Content-Encoding other than identity (with Accept-Encoding: identity).' },
  'rate-limited': { status: 429, exit: EXIT.internal, mcp: 'protocol', title: 'Too many requests', description: 'The per-client rate limit (V2A_RATE_LIMIT per minute) was reached, or the client already has its share of requests in flight (V2A_CLIENT_SLOTS); see Retry-After and RateLimit-* headers.' },
  'io-error': { status: 500, exit: EXIT.io, mcp: 'protocol', title: 'I/O error', description: 'A file or stream could not be read or written (CLI only).' , local: true },
  'internal-error': { status: 500, exit: EXIT.internal, mcp: 'tool', title: 'Internal server error', description: 'An unexpected error; the traceId identifies it in the server logs.' },
  'image-fetch-failed': { status: 502, exit: EXIT.io, mcp: 'tool', title: 'Image could not be fetched', description: 'The host of `imageUrl` was unreachable, answered no whole image (a status other than 200 or 203, an empty or compressed body), redirected too often, or timed out.' },
  'overloaded': { status: 503, exit: EXIT.internal, mcp: 'tool', title: 'Service overloaded', description: 'Every render worker is busy and the queue is full; retry after Retry-After seconds.' },
  'render-timeout': { status: 503, exit: EXIT.internal, mcp: 'tool', title: 'Render timed out', description: 'The render did not finish within V2A_RENDER_TIMEOUT_MS.' },
  'shutting-down': { status: 503, exit: EXIT.internal, mcp: 'tool', title: 'Shutting down', description: 'The server is shutting down and accepts no new work; retry on another instance.' },
  'image-path-refused': { status: 400, exit: EXIT.usage, mcp: 'tool', title: 'Image path refused', description: '`imagePath` (the stdio MCP face only) names no regular file inside the allowed roots: outside every root, a symlink leading out of them, a directory, or missing.' , local: true },
  'reply-too-large': { status: 413, exit: EXIT.usage, mcp: 'tool', title: 'Reply over the character budget', description: 'The MCP reply would exceed the character budget (V2A_MCP_MAX_CHARS, or v2a mcp --max-chars); the message names smaller columns and formats that fit.' , local: true },
  'image-changed': { status: 500, exit: EXIT.internal, mcp: 'protocol', title: 'Image changed before its colours were read', description: 'A library caller changed or reused an image\'s pixel buffer before the colours of its mono result were first read (`colors`, json\'s chroma, the report\'s colourfulness), which are computed from those pixels then: read them, or format the result, before reusing the buffer (library only).' , local: true },
  'interrupted': { status: 499, exit: EXIT.interrupted, mcp: 'protocol', title: 'Interrupted', description: 'Stopped by the user (Ctrl-C) or because the client went away.' , local: true },
} as const satisfies Record<string, ErrorInfo>);

export type ErrorCode = keyof typeof ERRORS;

export interface FieldError {
  /** The parameter or field at fault, as the caller spelled it. */
  readonly parameter: string;
  readonly message: string;
}

export interface V2aErrorOptions {
  /** Per-field errors (validation): each names the parameter at fault. */
  readonly errors?: readonly FieldError[];
  /** For logs only (never shown to a client): e.g. a sanitised decoder message. */
  readonly cause?: unknown;
}

/** Marks a V2aError of any copy of v2a (isV2aError): `Symbol.for` gives every copy the same key. */
const BRAND = Symbol.for('v2a.error');

/**
 * An expected failure. `message` (= `detail`) is written for the person who caused it and is safe to
 * show verbatim: no stack, no file system path, no raw library text.
 */
export class V2aError extends Error {
  static {
    // On the prototype, not enumerable: no own property for JSON, spreads or deepEqual to see.
    Object.defineProperty(this.prototype, BRAND, { value: true });
  }
  override name = 'V2aError';
  readonly code: ErrorCode;
  readonly errors: readonly FieldError[] | undefined;

  constructor(code: ErrorCode, detail: string, options: V2aErrorOptions = {}) {
    super(detail, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.errors = options.errors && options.errors.length ? options.errors : undefined;
  }

  get detail(): string {
    return this.message;
  }

  get info(): ErrorInfo {
    return ERRORS[this.code];
  }
}

/**
 * Whether `err` is a V2aError, narrowing it (in a catch clause, where errors are unknown). Also one
 * thrown by another copy of v2a (a second install, a bundle, another realm), where `instanceof`
 * fails: it carries the brand every copy shares (a `Symbol.for` key no JSON or object literal
 * makes) and a `code` of this copy's table. An object that merely has a `code` is not one.
 */
export function isV2aError(err: unknown): err is V2aError {
  if (err instanceof V2aError) return true;
  if (typeof err !== 'object' || err === null || (err as Record<symbol, unknown>)[BRAND] !== true) return false;
  const { code, message } = err as { code?: unknown; message?: unknown };
  return typeof code === 'string' && Object.hasOwn(ERRORS, code) && typeof message === 'string';
}

/** The one sentence of a list of field errors, shown by every face alike. */
export function fieldDetail(errors: readonly FieldError[]): string {
  return errors.map((e) => e.message).join('; ');
}
