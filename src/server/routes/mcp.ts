/**
 * `POST /api/mcp`: the MCP dispatcher (mcp/dispatcher.ts) over stateless Streamable HTTP with
 * JSON replies. As the dispatcher's header asks: the body is parsed here (invalid JSON is handed
 * over as PARSE_ERROR and answered -32700 with status 200), 200 carries the JSON reply, 202 has no
 * body. GET and DELETE are 405 with `Allow: POST` (no SSE stream); the error plugin does that for
 * every path. `initialize` hands out an `Mcp-Session-Id` that is stored nowhere: it only scopes
 * `notifications/cancelled` to the client that sent the call (mcp/cancels.ts), and any id, or
 * none, is served alike. An `MCP-Protocol-Version` header we do not support is 400 (MCP
 * 2025-06-18, "Protocol Version Header"). A browser Origin that is neither the server's own nor in
 * a V2A_CORS_ORIGINS list is 403 (DNS-rebinding protection, mcp/origin.ts).
 *
 * Bounds: a request is admitted like a render before its body is read (admission.ts; a small body
 * is read first), and each tools/call takes an admission slot and a rate-limit token (or the batch
 * is refused: 429 / 503; -32600 when it has more calls than the server slots). A small body's
 * other messages take neither. A small body that is one tools/call refused a slot (server busy,
 * or the client's V2A_CLIENT_SLOTS held) is answered as the tool's failure: 200, `isError`, the
 * reason and when to retry (a larger one is refused before it is read: 429 / 503 as a render).
 * The rate limit is a 429 on every body, as decisions.md has it for render and MCP alike.
 */
import { setMaxListeners } from 'node:events';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { normalizeIP } from '@fastify/rate-limit';
import { isRecord } from '../../core/args.js';
import { V2aError } from '../../core/errors.js';
import { VERSION } from '../../core/types.js';
import type { AppContext } from '../context.js';
import { ENDPOINTS } from '../../contract/endpoints.js';
import { InFlightCalls, newSessionId, sessionOf } from '../mcp/cancels.js';
import { createMcpDispatcher, errorResponse, isValidId, mcpErrorCodes, PARSE_ERROR, refuseKeys, resultResponse, type JsonRpcId, type McpDispatcher, type McpHandleContext } from '../mcp/dispatcher.js';
import type { KeyProblem } from '../json-body.js';
import { mcpOriginAllowed } from '../mcp/origin.js';
import { isSupportedProtocolVersion, toolFailure } from '../mcp/protocol.js';
import { createRenderTool } from '../mcp-tool.js';
import { mcpInstructions } from '../mcp/render-tool.js';
import { imageUrlHosts } from '../net/image-hosts.js';
import { untilAnswered } from '../plugins/errors.js';
import { HttpProblem } from '../problem.js';
import { parseLifted } from '../json-lift.js';
import { readBody } from '../read-body.js';
import { failSpan, nowMs } from '../telemetry/tracing.js';

export function createDispatcher(ctx: AppContext, log?: { error(obj: unknown, msg: string): void }): McpDispatcher {
  return createMcpDispatcher({
    // A call whose client went away or cancelled it is no fault (the request's log says it ended).
    onError: (err, info) => {
      if (err instanceof V2aError && err.code === 'interrupted') return;
      log?.error({ err, ...info }, 'MCP tool or dispatcher error');
    },
    serverInfo: { name: 'v2a', version: VERSION, title: 'v2a image to character art' },
    instructions: mcpInstructions(imageUrlHosts(ctx.config.imageFetchAllowlist), { limits: { maxBytes: ctx.config.maxImageBytes, maxPixels: ctx.config.maxImagePixels } }),
    tools: [createRenderTool(ctx.renderer, { metrics: ctx.metrics, maxChars: ctx.config.mcpMaxChars })],
    maxBatch: ctx.config.mcpMaxBatch,
  });
}

/**
 * One `v2a.tool_call` span per tools/call, a child of the request's server span (batch elements
 * are siblings), with `mcp.method.name`, `gen_ai.operation.name` (execute_tool),
 * `gen_ai.tool.name` (unknown tools: `_unknown`), `jsonrpc.request.id`, and on failure
 * `error.type` (the problem slug of a tool error, or `jsonrpc_<code>`); plus the tool-call counter
 * and a `tool call` log line.
 */
function toolCallObserver(ctx: AppContext, request: FastifyRequest, gone: AbortSignal, cancelOf: (id: JsonRpcId) => AbortSignal | undefined): McpHandleContext['observeToolCall'] {
  return ({ requestId, tool }) => {
    const name = tool ?? '_unknown';
    const started = nowMs();
    const span = ctx.telemetry.startSpan(request.span, 'v2a.tool_call', {
      'mcp.method.name': 'tools/call',
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': name,
      'jsonrpc.request.id': String(requestId).slice(0, 64),
    }, nowMs());
    return {
      ...(span ? { span } : {}),
      end({ result, errorCode }) {
        const outcome = gone.aborted || cancelOf(requestId)?.aborted ? 'cancelled' : result;
        ctx.metrics.toolCalls.inc({ tool: name, outcome });
        // One line per call: a batch's reply is one 200 whatever each of its calls came to.
        request.log.info({ tool: name, requestId: String(requestId).slice(0, 64), outcome, ...(errorCode !== undefined ? { errorCode } : {}), responseTime: Math.round(nowMs() - started) }, 'tool call');
        if (!span) return;
        span.setAttribute('v2a.tool.is_error', result !== 'ok');
        if (result === 'rpc_error') {
          failSpan(span, { type: `jsonrpc_${errorCode ?? 'error'}` });
          span.setAttribute('rpc.jsonrpc.error_code', errorCode ?? 0);
        }
        span.end();
      },
    };
  };
}

/**
 * Bodies this small are read before they take an admission slot (an initialize is ~300 bytes).
 * By their Content-Length: a chunked body's size is known only once read, so it counts as large.
 */
export const SMALL_BODY_BYTES = 16 * 1024;

function smallBody(request: FastifyRequest): boolean {
  const length = request.headers['content-length'];
  return length !== undefined && /^\d{1,9}$/.test(length) && Number(length) <= SMALL_BODY_BYTES;
}

const isInitialize = (body: unknown): boolean => isRecord(body) && body.method === 'initialize';

/** tools/call requests in a body (a batch's beyond V2A_MCP_MAX_BATCH are refused unrun: 0). */
function toolCalls(body: unknown, maxBatch: number): number {
  const isCall = (m: unknown) => isRecord(m) && m.method === 'tools/call';
  if (!Array.isArray(body)) return isCall(body) ? 1 : 0;
  return body.length > maxBatch ? 0 : body.filter(isCall).length;
}

/** The id and tool of a body that is one well-formed tools/call of a tool the dispatcher serves. */
function singleToolCall(body: unknown, dispatcher: McpDispatcher): { id: JsonRpcId; tool: string } | undefined {
  if (!isRecord(body)) return undefined;
  const { jsonrpc, id, method, params } = body;
  if (jsonrpc !== '2.0' || method !== 'tools/call' || !isValidId(id)) return undefined;
  const tool = isRecord(params) ? params.name : undefined;
  return dispatcher.tools.some((t) => t.name === tool) ? { id, tool: tool as string } : undefined;
}

/**
 * The JSON-RPC body: a syntax error becomes a JSON-RPC parse error, not a 400. Keys and nesting
 * are bounded while parsing (json-body.ts): those are 400 problems. A key given twice or
 * `__proto__` refuses only the message it is in, answered by the dispatcher (refuseKeys). Long
 * imageBase64 values stay bytes, out of the parse (json-lift.ts).
 */
function parseBody(chunks: readonly Uint8Array[]): unknown {
  const refused: KeyProblem[] = [];
  try {
    return refuseKeys(parseLifted(chunks, 'imageBase64', refused), refused);
  } catch (err) {
    if (err instanceof SyntaxError) return PARSE_ERROR;
    throw err;
  }
}

export async function mcpRoutes(app: FastifyInstance, opts: { ctx: AppContext; dispatcher: McpDispatcher }): Promise<void> {
  const { ctx, dispatcher } = opts;
  const { config } = ctx;

  // JSON only (Fastify answers every other type with 415), read raw in the handler (readBody) and
  // parsed there (parseBody).
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', (_request, _payload, done) => done(null));

  // Admitted like a render before the body is read (admission.ts): an MCP body is as large. A
  // small one (initialize, ping, tools/list, a call by imageUrl) takes its slots once parsed, one
  // per tools/call, so a busy server still answers the protocol's own messages.
  const admit = async (request: FastifyRequest, reply: FastifyReply) => {
    ctx.admission.admit(request, reply, smallBody(request) ? 0 : 1);
  };
  // The rate limit likewise: a larger body pays its first token before it is read, a small one
  // a token per tools/call once parsed, so a notifications/cancelled (or a ping) always gets
  // through, even from a client whose budget is spent on the renders it wants to stop.
  const limit = async function (this: FastifyInstance, request: FastifyRequest, reply: FastifyReply) {
    if (!smallBody(request)) await ctx.limiter?.hook.call(this, request, reply);
  };
  // A cancel that overtakes its call's upload is kept for as long as a request may last; an
  // answered call's id is remembered as long, so that a late cancel is not taken for an early one.
  const calls = new InFlightCalls({ keepMs: config.requestTimeoutMs, most: 10_000, maxBatch: config.mcpMaxBatch });

  app.route({
    method: 'POST',
    url: ENDPOINTS.mcp.path,
    // Admission first: a request refused for now spends no token (rate-limit.ts, limitedRoute).
    onRequest: [admit, limit],
    handler: untilAnswered(async (request: FastifyRequest, reply: FastifyReply) => {
      const origin = request.headers.origin;
      if (origin !== undefined && !mcpOriginAllowed(origin, `${request.protocol}://${request.host}`, config)) {
        throw new HttpProblem('forbidden-origin', `Origin ${JSON.stringify(origin.slice(0, 200))} may not call the MCP endpoint: a browser page may call it only from this server's own origin or one listed in V2A_CORS_ORIGINS (the operator's setting; DNS-rebinding protection).`, { errors: [{ parameter: 'Origin', message: 'not allowed' }] });
      }
      const version = request.headers['mcp-protocol-version'];
      // Node joins a repeated header with ", ": say so rather than call the joined text a version.
      const given = request.raw.headersDistinct['mcp-protocol-version']?.length ?? 0;
      if (given > 1) throw new HttpProblem('invalid-request', `MCP-Protocol-Version is given ${given} times; send it once.`, { errors: [{ parameter: 'MCP-Protocol-Version', message: 'given more than once' }] });
      if (version !== undefined && !isSupportedProtocolVersion(version, dispatcher.protocolVersions)) {
        throw new HttpProblem('invalid-request', `Unsupported MCP-Protocol-Version ${JSON.stringify(String(version)).slice(0, 60)}; supported: ${dispatcher.protocolVersions.join(', ')}.`, {
          errors: [{ parameter: 'MCP-Protocol-Version', message: `one of ${dispatcher.protocolVersions.join(', ')}` }],
        });
      }
      const { chunks } = await readBody(request.raw, 'json', config.maxImageBytes);
      const body = parseBody(chunks);
      const session = sessionOf(request.headers['mcp-session-id'], normalizeIP(request.ip));
      calls.cancel(session, body);
      // Every tools/call is a render and takes its own admission slot and rate-limit token (the
      // request's own token covers the first). A batch of more calls than the server has slots
      // could never be admitted: that is a permanent refusal, not a 503 to retry.
      const n = toolCalls(body, config.mcpMaxBatch);
      const most = ctx.admission.mostPerRequest;
      if (n > most) {
        const bound = most < ctx.admission.capacity ? 'for one client (V2A_CLIENT_SLOTS)' : '(V2A_WORKERS + V2A_QUEUE_LIMIT)';
        reply.header('cache-control', 'no-store');
        return reply.code(200).type('application/json; charset=utf-8').send(JSON.stringify(errorResponse(null, mcpErrorCodes.InvalidRequest,
          `Invalid Request: this batch has ${n} tools/call requests; this server runs at most ${most} at once ${bound}. Send at most ${most} per batch.`,
          { maxToolCalls: most })));
      }
      // One tools/call refused a slot for now (busy server, or this client's slots all held): the
      // agent's tool failed, so it is told so in the result, with when to try again.
      const refused = (err: unknown) => {
        const call = singleToolCall(body, dispatcher);
        if (!(err instanceof HttpProblem) || call === undefined) throw err;
        ctx.metrics.rejected.inc({ face: 'mcp', cause: err.slug });
        toolCallObserver(ctx, request, ctx.admission.signalOf(request), () => undefined)?.({ requestId: call.id, tool: call.tool })?.end({ result: 'tool_error' });
        const retry = err.extra.headers?.['retry-after'];
        if (retry !== undefined) reply.header('retry-after', retry);
        reply.header('cache-control', 'no-store');
        // Each refusal's detail says when to retry (retry in N s; when one is done).
        return reply.code(200).type('application/json; charset=utf-8').send(JSON.stringify(resultResponse(call.id, { ...toolFailure(err.detail) })));
      };
      // Slots first, then tokens: a call refused for now spends none (its slots go back with the reply).
      try {
        ctx.admission.grow(request, n - ctx.admission.held(request));
      } catch (err) {
        return refused(err);
      }
      const paid = smallBody(request) ? 0 : 1;
      await ctx.limiter?.take(request, reply, n - paid, paid);
      if (request.span) request.span.setAttribute('v2a.mcp.batch_size', Array.isArray(body) ? body.length : 1);
      const tracked = calls.track(session, body);
      let result: Awaited<ReturnType<McpDispatcher['handle']>>;
      try {
        const signal = ctx.admission.signalOf(request);
        // Each call of a batch listens on it (fetch, queue, pool): no leak warning for 16 of them.
        setMaxListeners(0, signal);
        result = await dispatcher.handle(body, { signal, cancelOf: tracked.cancelOf, traceId: request.traceId, observeToolCall: toolCallObserver(ctx, request, signal, tracked.cancelOf) });
      } finally {
        tracked.done();
      }
      if (reply.sent) return undefined;
      reply.header('cache-control', 'no-store');
      // A new session id with each initialize that succeeds: it keys this client's calls for notifications/cancelled.
      if (result.status === 200 && isInitialize(body) && result.body !== undefined && 'result' in result.body) reply.header('mcp-session-id', newSessionId());
      // Nothing to answer: notifications only, or every request cancelled by the client.
      if (result.status === 202) return reply.code(202).send();
      return reply.code(200).type('application/json; charset=utf-8').send(JSON.stringify(result.body));
    }),
  });
}
