/**
 * Every failure becomes an RFC 9457 `application/problem+json` reply (../problem.ts): our own
 * HttpProblem errors, Fastify's body-parser and validation errors, plugin errors (the rate
 * limit), unknown paths (404), known paths with the wrong method (405 with `Allow`), requests
 * without a Host header or with two (400), and targets the router cannot read (400).
 * Unexpected errors are logged with their stack and answered 500 with a generic detail: a stack
 * trace or an internal path never reaches a client.
 */
import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest, HTTPMethods } from 'fastify';
import { ENDPOINTS } from '../../contract/endpoints.js';
import { V2aError } from '../../core/errors.js';
import { schemeOf } from '../context.js';
import { HttpProblem, PROBLEM_CONTENT_TYPE, problemBody, type ProblemSlug } from '../problem.js';
import { formatTraceparent, traceContextFor, type TraceContext } from '../trace-context.js';
import { globalPlugin } from './plugin.js';
import { DATA_CSP } from './security-headers.js';
import { stashedTrace } from './trace.js';

const METHODS: readonly HTTPMethods[] = ['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'PATCH'];

/** The 404 of a path nothing answers at (the router's, and a route's own refusal of a spelling). */
export const notFound = (path: string): HttpProblem => new HttpProblem('not-found', `There is nothing at ${path}.`);

/** The methods routed at `path` (OPTIONS, answered on every path, aside). */
export function methodsAt(app: FastifyInstance, path: string): HTTPMethods[] {
  return METHODS.filter((method) => app.hasRoute({ url: path, method }));
}

/** The Allow value of a path that has `methods`: OPTIONS too, which every such path answers (plugins/cors.ts). */
export const allowValue = (methods: readonly string[]): string => [...methods, 'OPTIONS'].join(', ');

/** The request path without the query string. */
export function requestPath(request: FastifyRequest): string {
  const url = request.raw.url ?? request.url ?? '/';
  const q = url.indexOf('?');
  return q < 0 ? url : url.slice(0, q);
}

const kProblem = Symbol('v2a.problem');
type WithProblem = FastifyRequest & { [kProblem]?: ProblemSlug };

/** The problem type slug this request was answered with, if it was an error reply. */
export function problemSlugOf(request: FastifyRequest): ProblemSlug | undefined {
  return (request as WithProblem)[kProblem];
}

export function sendProblem(request: FastifyRequest, reply: FastifyReply, problem: HttpProblem): FastifyReply {
  (request as WithProblem)[kProblem] = problem.slug;
  for (const [name, value] of Object.entries(problem.extra.headers ?? {})) reply.header(name, value);
  // Errors raised before routing (Fastify's frameworkErrors) reach us without the plugins' request
  // decorations and without onSend hooks: give them the trace their log line names (genReqId's)
  // and the data CSP here as well.
  let trace = (request as { trace?: TraceContext }).trace;
  if (!trace) {
    trace = stashedTrace(request.raw) ?? traceContextFor({ traceparent: request.headers.traceparent, tracestate: request.headers.tracestate });
    reply.header('traceparent', formatTraceparent(trace));
    if (trace.tracestate) reply.header('tracestate', trace.tracestate);
    reply.header('x-content-type-options', 'nosniff').header('content-security-policy', DATA_CSP).header('cache-control', 'no-store');
  }
  return reply
    .code(problem.status)
    .type(PROBLEM_CONTENT_TYPE)
    .send(JSON.stringify(problemBody(problem, requestPath(request), trace.traceId)));
}

const kBadTarget = Symbol('v2a.badTarget');
type WithBadTarget = IncomingMessage & { [kBadTarget]?: 'path' | 'authority' };

/** Whether `path` is what find-my-way can decode: every `%` two hex digits, together UTF-8. */
function decodable(path: string): boolean {
  try {
    decodeURI(path);
    return true;
  } catch {
    return false;
  }
}

/**
 * Fastify's `rewriteUrl`: the request target, or for one the router cannot read (a path that is not
 * valid percent-encoding, `/%`; an absolute-form target without a host) one it can, the fault kept
 * for badTarget(). The router answered those outside the request lifecycle (frameworkErrors:
 * no hooks, so no CORS or security headers, no "request completed" line, not counted); this way
 * they go through the hooks, and the errors plugin answers 400 as for any other bad request. The
 * path's `%` escaped, `instance` is still a valid URI reference.
 */
export function routableTarget(raw: IncomingMessage): string {
  const url = raw.url ?? '/';
  if (url.startsWith('/') && !url.includes('%')) return url;
  let start = 0;
  // Absolute form (RFC 9112 §3.2.2), as find-my-way reads it: its path follows the authority.
  const absolute = /^https?:\/\/([^/?#]*)/i.exec(url);
  if (absolute) {
    let host = '';
    try {
      host = new URL(url).host;
    } catch { /* no host */ }
    if (!absolute[1] || !host) {
      (raw as WithBadTarget)[kBadTarget] = 'authority';
      return '/';
    }
    start = absolute[0].length;
  }
  const q = url.slice(start).search(/[?#]/);
  const end = q < 0 ? url.length : start + q;
  if (decodable(url.slice(start, end))) return url;
  (raw as WithBadTarget)[kBadTarget] = 'path';
  return url.slice(0, start) + url.slice(start, end).replace(/%/g, '%25') + url.slice(end);
}

/** The 400 of a request whose target routableTarget() had to rewrite. */
export function badTarget(request: FastifyRequest): HttpProblem | undefined {
  switch ((request.raw as WithBadTarget)[kBadTarget]) {
    case undefined: return undefined;
    case 'path': return new HttpProblem('invalid-request', 'The request path is not valid percent-encoding: each % must start a %XX escape (two hex digits) and the escapes must spell UTF-8 (RFC 3986, section 2.1); send a literal % as %25.');
    case 'authority': return new HttpProblem('invalid-request', 'The request target is an absolute URL without a host (RFC 9112, section 3.2.2).');
  }
}

const FASTIFY_CODES: Readonly<Record<string, ProblemSlug>> = {
  FST_ERR_CTP_BODY_TOO_LARGE: 'request-too-large',
  FST_ERR_CTP_INVALID_MEDIA_TYPE: 'unsupported-media-type',
  FST_ERR_CTP_EMPTY_JSON_BODY: 'invalid-request',
  FST_ERR_CTP_INVALID_JSON_BODY: 'invalid-request',
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: 'invalid-request',
  FST_ERR_BAD_URL: 'invalid-request',
  FST_ERR_MAX_PARAM_LENGTH: 'invalid-request',
  FST_ERR_VALIDATION: 'invalid-request',
};

const DETAILS: Partial<Record<string, string>> = {
  FST_ERR_CTP_EMPTY_JSON_BODY: 'The JSON body is empty.',
  FST_ERR_CTP_BODY_TOO_LARGE: 'The request body is larger than this endpoint accepts.',
};

/** Maps any thrown value to the problem it is answered with; undefined: an unexpected error (500). */
export function toProblem(err: unknown, request: FastifyRequest): HttpProblem | undefined {
  if (err instanceof V2aError) return HttpProblem.from(err);
  const e = err as Partial<FastifyError> & { validation?: unknown };
  const code = typeof e.code === 'string' ? e.code : '';
  const status = typeof e.statusCode === 'number' ? e.statusCode : 0;
  if (status === 429) return new HttpProblem('rate-limited', String(e.message ?? 'Rate limit exceeded.'));
  const slug = FASTIFY_CODES[code];
  if (slug === 'unsupported-media-type') {
    const type = request.headers['content-type'];
    const accepted = request.routeOptions.url === ENDPOINTS.render.path ? 'application/json or multipart/form-data' : 'application/json';
    return new HttpProblem(slug, type ? `Content-Type ${JSON.stringify(type.slice(0, 100))} is not accepted here; send ${accepted}.` : `A Content-Type header is required: ${accepted}.`, {
      errors: [{ parameter: 'Content-Type', message: type ? `not ${accepted}` : 'missing' }],
    });
  }
  if (code === 'FST_ERR_CTP_INVALID_JSON_BODY') return new HttpProblem('invalid-request', 'The body is not valid JSON.');
  if (e instanceof SyntaxError && status === 400) {
    return new HttpProblem('invalid-request', `The body is not valid JSON: ${String(e.message).slice(0, 200)}`);
  }
  if (slug) return new HttpProblem(slug, DETAILS[code] ?? String(e.message ?? ''), { status: status >= 400 && status < 500 ? status : undefined });
  if (status >= 400 && status < 500) {
    return new HttpProblem('invalid-request', String(e.message ?? 'Bad request.').slice(0, 300), { status, title: titleOf(status) });
  }
  return undefined;
}

function titleOf(status: number): string {
  return ({ 400: 'Bad request', 401: 'Unauthorized', 403: 'Forbidden', 406: 'Not acceptable', 408: 'Request timeout', 411: 'Length required', 413: 'Request too large', 414: 'URI too long', 431: 'Request header fields too large' } as Record<number, string>)[status] ?? 'Bad request';
}

/** Whether the request announced a body that has not been read to its end. */
function hasUnreadBody(request: FastifyRequest): boolean {
  const raw = request.raw;
  if (raw.readableEnded) return false;
  const length = raw.headers['content-length'];
  return raw.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

/**
 * Closes the connection after `reply`. A client still sending its body meanwhile has the rest read
 * and dropped (a lingering close, as nginx's) until it ends or for CLOSE_GRACE_MS: closing with
 * its bytes unread resets the connection, and a client that is still writing (undici, the MCP
 * SDK's fetch) then reports `EPIPE`, never the reply that says why.
 */
export function closeAfter(request: FastifyRequest, reply: FastifyReply): void {
  reply.header('connection', 'close');
  const raw = request.raw;
  const socket = raw.socket as Socket & { destroySoon?: () => void };
  if (!raw.readableEnded && typeof socket.destroySoon === 'function') {
    // Node ends a `Connection: close` reply with destroySoon(): the socket is destroyed once the
    // reply is written, with the body's bytes unread. Half-close instead (the server's sockets
    // allow it) and go on reading.
    socket.destroySoon = () => void socket.end();
  }
  reply.raw.once('finish', () => {
    const timer = setTimeout(() => socket.destroy(), CLOSE_GRACE_MS).unref();
    if (raw.readableEnded) return;
    raw.once('end', () => {
      clearTimeout(timer);
      socket.destroy();
    });
    raw.resume();
  });
}

/** How long a socket whose reply said `Connection: close` may linger before it is destroyed. */
export const CLOSE_GRACE_MS = 2000;

/**
 * The codes along an error's cause chain (undici's UND_ERR_*, llhttp's HPE_*, a TLS or socket
 * code): the operator's clue to a failed image fetch, whose reply says only "the connection
 * failed". Codes only, never messages, which may carry a URL.
 */
export function causeCodes(err: unknown): string[] {
  const codes: string[] = [];
  for (let e = err, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && /^[A-Z][A-Z0-9_]{1,63}$/.test(code)) codes.push(code);
  }
  return codes;
}

/** Answers an error: the shared code of the error handler and Fastify's `frameworkErrors`. */
export function replyWithError(err: unknown, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  let problem = toProblem(err, request);
  if (!problem) {
    request.log.error({ err }, 'unexpected error');
    problem = new HttpProblem('internal-error', 'An unexpected error occurred; the traceId identifies it in the server logs.');
  } else if (problem.status >= 500) {
    const causes = causeCodes(problem.cause);
    request.log.warn({ problem: problem.slug, detail: problem.detail, ...(causes.length ? { causes } : {}) }, 'request failed');
  }
  // The client may still be sending a body we refuse (413, 415, a 503 or 429 before the body, a
  // timeout): close the connection after the reply. (The onSend hook below does the same for every
  // reply; Fastify's frameworkErrors, answered here too, pass no onSend hook.)
  if (hasUnreadBody(request)) closeAfter(request, reply);
  return sendProblem(request, reply, problem);
}

/**
 * A route handler whose request another may answer while it works (an upload cut at shutdown, a
 * body timeout): the admission signal then stops its work, and what it throws is dropped instead
 * of answering twice. (The handler checks `reply.sent` before its own reply.)
 */
export function untilAnswered<H extends (request: FastifyRequest, reply: FastifyReply) => Promise<unknown>>(handler: H): H {
  return (async (request: FastifyRequest, reply: FastifyReply) => {
    try {
      return await handler(request, reply);
    } catch (err) {
      if (reply.sent) return undefined;
      throw err;
    }
  }) as H;
}

/** RFC 9110 §7.2 Host: uri-host [ ":" port ], uri-host an IP literal or a reg-name (RFC 3986). */
const HOST = /^(?:\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9\-._~!$&'()*+,;=%]+)(?::([0-9]{0,5}))?$/;

/** A Host value: the grammar, and a port (when one is given) of at most 65535. */
function validHost(value: string): boolean {
  const m = HOST.exec(value);
  return m !== null && (m[1] === undefined || m[1] === '' || Number(m[1]) <= 65535);
}

export const errorsPlugin = globalPlugin('v2a-errors', async (app: FastifyInstance) => {
  app.setErrorHandler((err, request, reply) => replyWithError(err, request, reply));

  // RFC 9112 §3.2: an HTTP/1.1 request without Host, or any request with more than one or with an
  // invalid one, is 400. Node's own check (requireHostHeader, off in app.ts) wrote a bare 400 (no
  // problem body, trace or log line), Node keeps the first of two Host headers, and an invalid
  // one (`"><script>`, `host/path?`) would reach the manifests' links (V2A_PUBLIC_URL unset).
  // Content-Type is one value too (RFC 9110 §5.3): Node keeps the first of two, so a body sent as
  // JSON and as a form would be read as whichever came first, where a proxy may have read the other.
  app.addHook('onRequest', async (request, reply) => {
    const raw = request.raw;
    let hosts = 0, types = 0;
    for (let i = 0; i < raw.rawHeaders.length; i += 2) {
      const name = raw.rawHeaders[i]!.toLowerCase();
      if (name === 'host') hosts++;
      else if (name === 'content-type') types++;
    }
    if (types > 1) {
      closeAfter(request, reply);
      return sendProblem(request, reply, new HttpProblem('invalid-request', 'The request has more than one Content-Type header (RFC 9110, section 5.3).', { errors: [{ parameter: 'Content-Type', message: 'given more than once' }] }));
    }
    const needsHost = raw.httpVersionMajor > 1 || (raw.httpVersionMajor === 1 && raw.httpVersionMinor >= 1);
    const valid = hosts === 1 ? validHost(raw.headers.host ?? '') : hosts === 0 && !needsHost;
    if (valid) return forwarded(request, reply);
    closeAfter(request, reply);
    const [detail, message] = hosts > 1 ? ['The request has more than one Host header', 'given more than once']
      : hosts === 1 ? ['The Host header is not a host name or address with an optional port', 'invalid']
      : ['An HTTP/1.1 request needs a Host header', 'missing'];
    return sendProblem(request, reply, new HttpProblem('invalid-request', `${detail} (RFC 9112, section 3.2).`, { errors: [{ parameter: 'Host', message }] }));
  });

  /**
   * Behind a trusted proxy (V2A_TRUST_PROXY) the host and scheme come from X-Forwarded-Host and
   * X-Forwarded-Proto and build the links of the manifests, llms.txt and OpenAPI's servers: held
   * to the rules of Host and to http or https, or 400 (a proxy that passes a client's own header
   * on would otherwise let it write `javascript://` or free text into those documents).
   */
  function forwarded(request: FastifyRequest, reply: FastifyReply) {
    const badHost = request.host !== (request.raw.headers.host ?? '') && !validHost(request.host);
    const scheme = schemeOf(request);
    const badProto = scheme !== 'http' && scheme !== 'https';
    if (!badHost && !badProto) return;
    closeAfter(request, reply);
    const [name, detail] = badHost ? ['X-Forwarded-Host', 'is not a host name or address with an optional port'] : ['X-Forwarded-Proto', 'must be http or https'];
    return sendProblem(request, reply, new HttpProblem('invalid-request', `The ${name} header the trusted proxy forwarded ${detail}.`, { errors: [{ parameter: name, message: 'invalid' }] }));
  }

  /** 404, or 405 naming the methods the path has. */
  function noRoute(request: FastifyRequest, reply: FastifyReply): FastifyReply {
    const path = requestPath(request);
    const allowed = methodsAt(app, path).filter((method) => method !== request.method);
    if (allowed.length > 0 && request.method !== 'OPTIONS') {
      return sendProblem(request, reply, new HttpProblem('method-not-allowed', `${request.method} is not allowed on ${path}; use ${allowed.join(', ')}.`, { headers: { allow: allowValue(allowed) } }));
    }
    return sendProblem(request, reply, notFound(path));
  }
  app.setNotFoundHandler(noRoute);
  // No route, or a target the router could not read (routableTarget): answered before the body is
  // parsed (after the onRequest hooks: CORS, the rate limit), so that a bad or oversized body does
  // not hide the 400, 404 or 405 behind a 400 or 413, and no body is read (nor 100 Continue sent:
  // the body guard's preParsing comes after this).
  app.addHook('preParsing', (request, reply, payload, done) => {
    const bad = badTarget(request);
    if (bad) return void sendProblem(request, reply, bad);
    if (!request.is404) return done(null, payload);
    noRoute(request, reply);
  });

  // Any reply sent while the request's body is unread (a 404, a GET with a body, an error before
  // the body): the connection closes after it, instead of Node reading the rest to reuse it.
  app.addHook('onSend', async (request, reply, payload) => {
    if (hasUnreadBody(request) && reply.getHeader('connection') !== 'close') closeAfter(request, reply);
    return payload;
  });
});
