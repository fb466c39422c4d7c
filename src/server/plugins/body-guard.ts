/**
 * Request bodies that stall, and bodies nobody should read.
 *
 * - Body idle timeout: while a request body is arriving, bytes must keep coming; after
 *   V2A_BODY_IDLE_TIMEOUT_MS without one, or with fewer than MIN_BODY_BYTES in that time, the
 *   request is answered 408 `request-timeout` and the connection is closed. (The socket's byte
 *   count is sampled: no `data` listener, which would take the stream out of the parser's hands.)
 *   Headers and the whole request have Node's own timeouts (app.ts), answered by the client-error
 *   handler below.
 * - `Expect: 100-continue`: Node would answer `100 Continue` before any hook runs, inviting a body
 *   that admission may refuse. Here the interim reply is sent when the body is first read, i.e.
 *   only once every check the headers alone decide (shutdown gate, rate limit, admission, route
 *   and method, Content-Type, Content-Length over the cap, the query) has let the request
 *   through (RFC 9110 §10.1.1); a refused client gets its final status and never sends the body.
 *   The idle timeout does not run while the client waits for it.
 * - Shutdown: bodies still arriving are cut with 503 `shutting-down` so that draining does not
 *   wait on slow uploads.
 * - Node's parser errors (431 oversized headers, 400 malformed requests, 408 header or request
 *   timeouts) are written as problem+json with a trace id, logged (one line with that trace id)
 *   and counted in the HTTP metrics, and the connection is closed. So is CONNECT (405): Node
 *   would destroy its socket without a reply.
 */
import { maxHeaderSize, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { HttpProblem, PROBLEM_CONTENT_TYPE, problemBody } from '../problem.js';
import { onReplyDone } from '../reply-done.js';
import { formatTraceparent, traceContextFor } from '../trace-context.js';
import { SERVED_METHODS } from './cors.js';
import { CLOSE_GRACE_MS, closeAfter, sendProblem } from './errors.js';
import { globalPlugin } from './plugin.js';
import { methodLabel, UNPARSED_ROUTE } from './telemetry.js';


export interface BodyGuard {
  /** Answers every request whose body is still arriving with `problem` and closes its connection. */
  cutUnfinished(problem: () => HttpProblem): void;
}

interface Pending {
  readonly request: FastifyRequest;
  readonly reply: FastifyReply;
}

function hasBody(raw: IncomingMessage): boolean {
  const length = raw.headers['content-length'];
  return raw.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

function expectsContinue(raw: IncomingMessage): boolean {
  const expect = raw.headers.expect;
  return typeof expect === 'string' && expect.toLowerCase() === '100-continue';
}

/** Requests that asked for `100 Continue` and have not been sent it yet. */
const awaitingContinue = new WeakSet<IncomingMessage>();

/** `100 Continue` on the body's first read: whoever reads it (a parser, readBody) calls `_read`. */
function continueOnRead(raw: IncomingMessage, res: ServerResponse): void {
  awaitingContinue.add(raw);
  const read = raw._read;
  raw._read = function (this: IncomingMessage, size: number) {
    raw._read = read;
    awaitingContinue.delete(raw);
    if (!res.headersSent) res.writeContinue();
    return read.call(this, size);
  };
}


/** Refuses a request whose body is (still) unread: problem reply, connection closed. */
export function cutRequest(request: FastifyRequest, reply: FastifyReply, problem: HttpProblem): void {
  if (reply.sent || reply.raw.headersSent) {
    request.raw.socket.destroy();
    return;
  }
  closeAfter(request, reply);
  sendProblem(request, reply, problem);
}

/**
 * Least of a body that must arrive in each V2A_BODY_IDLE_TIMEOUT_MS while it is arriving. Silence
 * alone was the bound: a byte a second held an admission slot until V2A_REQUEST_TIMEOUT_MS (two
 * addresses with 20 such uploads took every slot for 2 minutes). 1 KiB in 10 s is ~100 B/s, far
 * below any real link.
 */
export const MIN_BODY_BYTES = 1024;

export interface BodyGuardOptions {
  bodyIdleTimeoutMs: number;
  /** Filled in by the plugin. */
  guard: { current?: BodyGuard };
}

export const bodyGuardPlugin = globalPlugin<BodyGuardOptions>('v2a-body-guard', async (app: FastifyInstance, opts) => {
  const pending = new Set<Pending>();
  const idleMs = opts.bodyIdleTimeoutMs;
  const sampleMs = Math.max(10, Math.floor(idleMs / 4));

  app.addHook('onRequest', async (request, reply) => {
    const raw = request.raw;
    if (raw.complete || !hasBody(raw)) return;
    const entry: Pending = { request, reply };
    pending.add(entry);
    const socket = raw.socket;
    let seen = socket.bytesRead;
    let quietSince = performance.now();
    // The rate window: bytes read when it began.
    let windowBytes = seen;
    let windowSince = quietSince;
    let timer: NodeJS.Timeout | undefined;
    const cut = (detail: string) => {
      stop();
      cutRequest(request, reply, new HttpProblem('request-timeout', `${detail} (V2A_BODY_IDLE_TIMEOUT_MS); the connection is closed.`));
    };
    const sample = () => {
      timer = undefined;
      const now = performance.now();
      if (awaitingContinue.has(raw)) {
        seen = windowBytes = socket.bytesRead;
        quietSince = windowSince = now;
      } else if (socket.bytesRead !== seen) {
        seen = socket.bytesRead;
        quietSince = now;
      } else if (now - quietSince >= idleMs) {
        return cut(`No bytes of the request body arrived for ${idleMs} ms`);
      }
      if (now - windowSince >= idleMs) {
        if (seen - windowBytes < MIN_BODY_BYTES) return cut(`Fewer than ${MIN_BODY_BYTES} bytes of the request body arrived in ${idleMs} ms`);
        windowBytes = seen;
        windowSince = now;
      }
      timer = setTimeout(sample, sampleMs);
    };
    const stop = () => {
      if (timer) clearTimeout(timer);
      timer = undefined;
      pending.delete(entry);
      raw.off('end', stop);
    };
    timer = setTimeout(sample, sampleMs);
    raw.once('end', stop);
    onReplyDone(request.raw, reply.raw, stop);
  });

  app.addHook('preParsing', async (request, reply, payload) => {
    if (expectsContinue(request.raw) && !reply.raw.headersSent) continueOnRead(request.raw, reply.raw);
    return payload;
  });

  // With a listener, Node leaves `100 Continue` to us (see preParsing above).
  app.server.on('checkContinue', (req: IncomingMessage, res) => app.server.emit('request', req, res));
  // Any other expectation is served as if it were absent (RFC 9110 §10.1.1: a server MAY answer
  // 417); without a listener Node answered a bare 417 with no problem body and no trace.
  app.server.on('checkExpectation', (req: IncomingMessage, res) => app.server.emit('request', req, res));

  opts.guard.current = {
    cutUnfinished(problem) {
      for (const { request, reply } of [...pending]) cutRequest(request, reply, problem());
      pending.clear();
    },
  };
});

/** Node parser error codes answered 431 (414 when the request line overflows); every other parser error is 400 (timeouts 408). */
const HEADER_OVERFLOW = new Set(['HPE_HEADER_OVERFLOW']);

/**
 * The method and path of the request Node's parser refused, when its request line was read: only
 * from the bytes of the failed read, and only when they are all this connection sent (else the
 * line could be an earlier request's).
 */
function requestLineOf(rawPacket: unknown, socket: Socket): { method: string; path?: string } | undefined {
  if (!Buffer.isBuffer(rawPacket) || rawPacket.length !== socket.bytesRead) return undefined;
  const m = /^([A-Z]{1,20}) (?:(\/[\x21-\x7e]{0,2000}?)[ ?#])?/.exec(rawPacket.toString('latin1', 0, 2048));
  return m ? { method: m[1]!, ...(m[2] !== undefined ? { path: m[2] } : {}) } : undefined;
}

/**
 * Whether an overflow is the request line's own (RFC 9110 §15.5.15: 414, not 431): it is when the
 * failed read holds all the connection sent and its first line alone is over the parser's limit.
 * A line that came over several reads cannot be told from headers that did, and stays 431.
 */
function requestLineOverflows(rawPacket: unknown, socket: Socket): boolean {
  if (!Buffer.isBuffer(rawPacket) || rawPacket.length !== socket.bytesRead) return false;
  const eol = rawPacket.indexOf(0x0a);
  return eol < 0 || eol > maxHeaderSize;
}

interface RawRequest {
  readonly method?: string;
  /** The request path, when it was read. */
  readonly path?: string;
  readonly traceparent?: string;
  readonly tracestate?: string;
}

/**
 * A problem reply written straight to a socket, for requests Fastify never sees (Node's parser
 * errors, CONNECT), with what every other reply has: a trace, one log line and a count in the
 * HTTP metrics (route `unparsed`: the path is unknown or not routed). The connection is closed.
 */
function answerRaw(app: FastifyInstance, socket: Socket | Duplex, problem: HttpProblem, request: RawRequest, msg: string, why: Record<string, unknown> = {}): void {
  const trace = traceContextFor({ traceparent: request.traceparent, tracestate: request.tracestate });
  // `instance` is the request path where it was read; decisions.md makes the member required, so
  // a request line that could not be read (or a CONNECT authority) gets the root.
  const body = JSON.stringify(problemBody(problem, request.path ?? '/', trace.traceId));
  const headers = Object.entries(problem.extra.headers ?? {}).map(([k, v]) => `${k}: ${v}\r\n`).join('');
  socket.end(
    `HTTP/1.1 ${problem.status} ${problem.title}\r\n` +
    // RFC 9110 §6.6.1: an origin server with a clock sends Date (Node's own replies do).
    `Date: ${new Date().toUTCString()}\r\n` +
    `Content-Type: ${PROBLEM_CONTENT_TYPE}\r\n` +
    `Content-Length: ${Buffer.byteLength(body)}\r\n` +
    `traceparent: ${formatTraceparent(trace)}\r\n` + headers +
    'Cache-Control: no-store\r\nX-Content-Type-Options: nosniff\r\nConnection: close\r\n\r\n' +
    body,
  );
  setTimeout(() => socket.destroy(), CLOSE_GRACE_MS).unref();
  const method = methodLabel(request.method);
  app.v2a?.metrics.requests.inc({ method, route: UNPARSED_ROUTE, status: String(problem.status) });
  // The client's doing, not a server fault: no error level, no stack. Timeouts are routine.
  const line = { traceId: trace.traceId, res: { statusCode: problem.status }, problem: problem.slug, ...why, method: request.method, url: request.path, remoteAddress: (socket as Partial<Socket>).remoteAddress };
  if (problem.status === 408) app.log.info(line, msg);
  else app.log.warn(line, msg);
}

/**
 * Fastify's `clientErrorHandler` (`this`: the app): Node's own parser and timeout errors as
 * problem+json with a trace id (a new trace: the headers could not be read), logged and counted,
 * then the connection is closed.
 */
export function clientErrorHandler(this: FastifyInstance, err: NodeJS.ErrnoException & { rawPacket?: unknown }, socket: Socket): void {
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  const inFlight = (socket as Socket & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
  // The client ended its side in the middle of a request being read (a body cut short): its route
  // sees the abort (499, 'request aborted'); this is no malformed request to answer 400.
  if (!socket.writable || inFlight?.headersSent || (err.code === 'HPE_INVALID_EOF_STATE' && inFlight)) {
    socket.destroy();
    return;
  }
  let problem: HttpProblem;
  if (err.code === 'ERR_HTTP_REQUEST_TIMEOUT') {
    problem = new HttpProblem('request-timeout', 'The request headers or body did not arrive in time (V2A_HEADERS_TIMEOUT_MS, V2A_REQUEST_TIMEOUT_MS); the connection is closed.');
  } else if (HEADER_OVERFLOW.has(err.code ?? '') && requestLineOverflows(err.rawPacket, socket)) {
    problem = new HttpProblem('uri-too-long', 'The request line is longer than the server reads (16 KiB with the headers); the connection is closed.');
  } else if (HEADER_OVERFLOW.has(err.code ?? '')) {
    problem = new HttpProblem('headers-too-large', 'The request line and headers are larger than the server reads; the connection is closed.');
  } else {
    problem = new HttpProblem('invalid-request', 'The request is not valid HTTP/1.1 (malformed request line, header or Content-Length); the connection is closed.', { title: 'Bad request' });
  }
  answerRaw(this, socket, problem, requestLineOf(err.rawPacket, socket) ?? {}, 'request refused by the HTTP parser', { parserError: err.code });
}

/**
 * CONNECT (a tunnel request): this server is no proxy. Node hands it to 'connect' listeners with
 * the raw socket, and with none it destroys the socket without a word.
 */
export function refuseConnect(app: FastifyInstance, req: IncomingMessage, socket: Duplex): void {
  // A 405 names what is served (RFC 9110 §15.5.6); an authority is no resource of ours, so Allow
  // names the methods of the server as a whole, as an `OPTIONS *` would.
  const problem = new HttpProblem('method-not-allowed', 'CONNECT is not served: this server is not a proxy.', { headers: { allow: SERVED_METHODS.join(', ') } });
  // The target of a CONNECT is an authority (host:port), not a path: no instance.
  const { traceparent, tracestate } = req.headers;
  answerRaw(app, socket, problem, { method: req.method, ...(typeof traceparent === 'string' ? { traceparent } : {}), ...(typeof tracestate === 'string' ? { tracestate } : {}) }, 'CONNECT refused: this server is not a proxy');
}
