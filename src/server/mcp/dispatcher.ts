/**
 * A small, transport-independent MCP (JSON-RPC 2.0) dispatcher.
 *
 * The HTTP layer parses the body (or passes `PARSE_ERROR` when JSON.parse fails), calls
 * `handle()`, and writes what comes back: status 200 with a JSON body, or status 202 with no body.
 * Nothing here knows about Fastify or the MCP SDK.
 *
 * Decisions (see also the project docs):
 * - Stateless: no sessions kept here (the HTTP transport's `Mcp-Session-Id` only scopes its
 *   cancels, routes/mcp.ts), no server-initiated messages, no SSE. Every method
 *   works without a prior `initialize`; `initialize` is answered whenever it comes, also inside a
 *   batch.
 * - `initialize` echoes the client's `protocolVersion` when supported, else answers the latest
 *   supported version (the first entry of `supportedProtocolVersions`).
 * - Request ids are strings or finite numbers. `"id": null` is rejected with -32600 (MCP forbids
 *   null ids; JSON-RPC would otherwise make it a request whose reply nobody can match). A message
 *   without an `id` member is a notification and never gets a reply, whatever its method.
 * - An invalid message always gets a -32600 reply (JSON-RPC 2.0 §5/§6), with its id when the id is
 *   valid, else `id: null`.
 * - A message with no `method` but with `result` or `error` and a valid id is a JSON-RPC *response*
 *   from the client; we never send requests, so it is accepted and ignored (no reply), as the
 *   Streamable HTTP transport prescribes for POSTed responses.
 * - MCP params are always objects: `params` given as an array is -32602 for every known method.
 * - `tools/list` ignores `cursor` (one page, no `nextCursor`).
 * - `tools/call`: missing `arguments` means `{}`; non-object `arguments` or an unknown / missing
 *   tool name is -32602. A tool's failures are results with `isError: true` (the tool decides); an
 *   exception escaping a tool becomes `isError: true` with a generic message (never a stack) and is
 *   reported to `onError`.
 * - Batches: 1..maxBatch elements, run concurrently, replies in request order, notifications (and
 *   client responses, and requests the client cancelled: `cancelOf`) omitted; `[]` or more than
 *   `maxBatch` elements → one -32600 error object. When nothing needs a reply → status 202 with
 *   no body.
 * - Observation: the transport may pass `observeToolCall`; every `tools/call` (single or inside a
 *   batch, known tool or not) is reported once at its start and once with its outcome, and the
 *   observer's span is handed to the tool. Batch elements are observed each on their own, so
 *   their spans are siblings.
 * - A message whose body scan refused a key (given twice in one object, or `__proto__`:
 *   json-body.ts) comes as a RefusedMessage: -32602 when every refused key lies in its `params`,
 *   else -32600, with its id unless the id itself was refused; a batch's other messages are
 *   answered as usual, and a refused notification gets no reply.
 */
import type { Span } from '@opentelemetry/api';
import {
  JSONRPC_VERSION,
  PARSE_ERROR,
  SUPPORTED_PROTOCOL_VERSIONS,
  isSupportedProtocolVersion,
  isValidId,
  mcpErrorCodes,
  toolFailure,
  type JsonRpcErrorResponse,
  type JsonRpcId,
  type JsonRpcResponse,
  type McpServerInfo,
  type McpTool,
  type McpToolDescriptor,
  type McpToolResult,
} from './protocol.js';

export { PARSE_ERROR, isValidId, mcpErrorCodes } from './protocol.js';
export type {
  JsonRpcErrorResponse,
  JsonRpcId,
  JsonRpcResponse,
  JsonRpcSuccessResponse,
  McpContent,
  McpImageContent,
  McpServerInfo,
  McpTextContent,
  McpTool,
  McpToolContext,
  McpToolDescriptor,
  McpToolResult,
} from './protocol.js';
import { describeType, isRecord } from '../../core/args.js';
import type { JsonSchema } from '../../core/format/jsonSchemas.js';
import type { KeyProblem } from '../json-body.js';
import { RENDER_TOOL_NAME } from './render-tool.js';

/** A message with keys the body's scan refused (see the module comment): built by refuseKeys(). */
class RefusedMessage {
  constructor(
    /** The message as parsed (a refused key's last value kept, `__proto__` left out). */
    readonly message: unknown,
    readonly problems: readonly KeyProblem[],
  ) {}
}

/**
 * The parsed body with each message that has refused keys (collected by parseJsonBounded's
 * `keyProblems`) wrapped in a RefusedMessage: the root, or each element of a root array.
 */
export function refuseKeys(body: unknown, problems: readonly KeyProblem[]): unknown {
  if (!problems.length) return body;
  if (!Array.isArray(body)) return new RefusedMessage(body, problems);
  return body.map((msg, i) => {
    const own = problems.filter((p) => p.element === i);
    return own.length ? new RefusedMessage(msg, own) : msg;
  });
}

export interface McpDispatcherOptions {
  serverInfo: McpServerInfo;
  /** Free-text `instructions` returned by `initialize`; a function is asked at each one (what the face offers may change). */
  instructions?: string | (() => string);
  tools: McpTool[];
  /** Most messages accepted in one batch (integer ≥ 1). */
  maxBatch: number;
  /** What the transport carries one JSON text in, as the parse error names it. Default `body` (HTTP); stdio: `line`. */
  messageCarrier?: 'body' | 'line';
  /** Accepted protocol versions, newest first. Default: `SUPPORTED_PROTOCOL_VERSIONS`. */
  supportedProtocolVersions?: readonly string[];
  /**
   * Told about unexpected exceptions (a tool throwing, a tool returning a malformed result, a
   * dispatcher fault) so the transport can log them. Never affects the reply.
   */
  onError?: (error: unknown, info: { method: string; tool?: string; requestId?: JsonRpcId; traceId?: string }) => void;
}

export interface McpHandleContext {
  /** Aborted when the transport gives up on the request; handed to tools. */
  signal: AbortSignal;
  /** Trace id of the surrounding request; handed to tools and named in generic error texts. */
  traceId?: string;
  /**
   * The client's cancel of one request (notifications/cancelled, held by the transport): its tool
   * gets it beside `signal`, and once it is aborted the request gets no reply. The other messages
   * of its batch are answered as usual.
   */
  cancelOf?: (id: JsonRpcId) => AbortSignal | undefined;
  /**
   * Told when a `tools/call` request starts (once per call, batch elements each on their own);
   * the observer's span is handed to the tool and the observer learns the call's outcome.
   * Failures of the observer never affect the reply.
   */
  observeToolCall?: (info: { requestId: JsonRpcId; tool: string | undefined }) => McpCallObserver | undefined;
}

/** Watches one tools/call (tracing, metrics). */
export interface McpCallObserver {
  readonly span?: Span;
  end(outcome: McpCallOutcome): void;
}

export interface McpCallOutcome {
  /** ok: a result; tool_error: a result with isError; rpc_error: a JSON-RPC error reply. */
  readonly result: 'ok' | 'tool_error' | 'rpc_error';
  /** The JSON-RPC error code of an rpc_error. */
  readonly errorCode?: number;
}

export interface McpHandleResult {
  /** 200: `body` holds a response object or an array of them. 202: nothing to answer, no body. */
  status: 200 | 202;
  body?: JsonRpcResponse | JsonRpcResponse[];
}

export interface McpDispatcher {
  /**
   * Dispatch one parsed JSON body: a single message or a batch array. Pass `PARSE_ERROR` when the
   * body was not valid JSON. Never rejects.
   */
  handle(body: unknown, ctx: McpHandleContext): Promise<McpHandleResult>;
  /** The -32700 reply for a body that is not valid JSON (`id: null`). */
  parseError(): JsonRpcErrorResponse;
  /** A -32600 reply for what the transport refused before parsing it whole (a line too long, too complex). */
  invalidRequest(id: JsonRpcId | null, why: string): JsonRpcErrorResponse;
  /** The tool descriptors served by `tools/list`. */
  readonly tools: readonly McpToolDescriptor[];
  /** Accepted protocol versions, newest first. */
  readonly protocolVersions: readonly string[];
}

/** Thrown inside the dispatcher to produce a JSON-RPC error reply. */
class RpcError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data?: unknown,
  ) {
    super(message);
  }
}

type Params = Record<string, unknown> | unknown[] | undefined;

/** Why `value` is not a valid id (isValidId), for the -32600 reply. */
function idProblem(value: unknown): string {
  if (value === null) return '"id" must be a string or a number; null is not allowed in MCP.';
  if (typeof value === 'number' && Number.isFinite(value)) return `"id" must be a number within ±${Number.MAX_SAFE_INTEGER} (a longer one loses digits: send it as a string), got ${value}.`;
  return `"id" must be a string or a number, got ${describeType(value)}.`;
}

/** The response of a request that succeeded. */
export function resultResponse(id: JsonRpcId, result: Record<string, unknown>): JsonRpcResponse {
  return { jsonrpc: JSONRPC_VERSION, id, result };
}

export function errorResponse(id: JsonRpcId | null, code: number, message: string, data?: unknown): JsonRpcErrorResponse {
  const error: JsonRpcErrorResponse['error'] = { code, message };
  if (data !== undefined) error.data = data;
  return { jsonrpc: JSONRPC_VERSION, id, error };
}

function objectParams(method: string, params: Params): Record<string, unknown> {
  if (params === undefined) return {};
  if (Array.isArray(params)) {
    throw new RpcError(mcpErrorCodes.InvalidParams, `Invalid params: ${quoted(method)} takes its params as an object, not an array.`);
  }
  return params;
}

/** A caller's name (method, tool) quoted for a message: at most 100 characters of it, never the whole of a huge one. */
function quoted(name: string): string {
  return JSON.stringify(name.length > 100 ? `${name.slice(0, 100)}...` : name);
}

function validateToolDefinition(tool: McpTool): void {
  if (typeof tool.name !== 'string' || tool.name.length === 0) {
    throw new TypeError('MCP tool: name must be a non-empty string');
  }
  for (const key of ['inputSchema', 'outputSchema'] as const) {
    const schema = tool[key] as unknown;
    if (key === 'outputSchema' && schema === undefined) continue;
    if (!isRecord(schema) || schema.type !== 'object') {
      throw new TypeError(`MCP tool "${tool.name}": ${key} must be a JSON Schema with root type "object"`);
    }
  }
  if (typeof tool.call !== 'function') throw new TypeError(`MCP tool "${tool.name}": call must be a function`);
}

function toDescriptor(tool: McpTool): McpToolDescriptor {
  const d: McpToolDescriptor = {
    name: tool.name,
    ...(tool.title !== undefined ? { title: tool.title } : {}),
    description: tool.description,
    inputSchema: structuredClone(tool.inputSchema),
    ...(tool.outputSchema !== undefined ? { outputSchema: structuredClone(tool.outputSchema) } : {}),
    ...(tool.annotations !== undefined ? { annotations: structuredClone(tool.annotations) } : {}),
  };
  return deepFreeze(d);
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value)) deepFreeze(v);
  }
  return value;
}

/** Checks and copies a tool's result; returns undefined when it is not a valid `McpToolResult`. */
function normalizeToolResult(result: unknown): Record<string, unknown> | undefined {
  if (!isRecord(result) || !Array.isArray(result.content)) return undefined;
  const content: Array<{ type: 'text'; text: string } | { type: 'image'; data: string; mimeType: string }> = [];
  for (const block of result.content as unknown[]) {
    if (!isRecord(block)) return undefined;
    if (block.type === 'text' && typeof block.text === 'string') content.push({ type: 'text', text: block.text });
    else if (block.type === 'image' && typeof block.data === 'string' && typeof block.mimeType === 'string') {
      content.push({ type: 'image', data: block.data, mimeType: block.mimeType });
    } else return undefined;
  }
  const out: Record<string, unknown> = { content };
  if (result.structuredContent !== undefined) {
    if (!isRecord(result.structuredContent)) return undefined;
    out.structuredContent = result.structuredContent;
  }
  if (result.isError === true) out.isError = true;
  return out;
}

export function createMcpDispatcher(opts: McpDispatcherOptions): McpDispatcher {
  const invalidRequest = (id: JsonRpcId | null, why: string): JsonRpcErrorResponse =>
    errorResponse(id, mcpErrorCodes.InvalidRequest, `Invalid Request: ${why}`);
  const { serverInfo, instructions, onError } = opts;
  if (!Number.isInteger(opts.maxBatch) || opts.maxBatch < 1) {
    throw new RangeError('createMcpDispatcher: maxBatch must be an integer ≥ 1');
  }
  const maxBatch = opts.maxBatch;
  const protocolVersions = Object.freeze([...(opts.supportedProtocolVersions ?? SUPPORTED_PROTOCOL_VERSIONS)]);
  if (protocolVersions.length === 0) throw new RangeError('createMcpDispatcher: supportedProtocolVersions is empty');
  const latestVersion = protocolVersions[0]!;

  const toolsByName = new Map<string, McpTool>();
  for (const tool of opts.tools) {
    validateToolDefinition(tool);
    if (toolsByName.has(tool.name)) throw new TypeError(`MCP tool "${tool.name}" is defined twice`);
    toolsByName.set(tool.name, tool);
  }
  const descriptors = Object.freeze(opts.tools.map(toDescriptor));

  const serverInfoOut: Record<string, unknown> = { name: serverInfo.name, version: serverInfo.version };
  if (serverInfo.title !== undefined) serverInfoOut.title = serverInfo.title;

  const report = (error: unknown, info: { method: string; tool?: string; requestId?: JsonRpcId }, ctx: McpHandleContext): void => {
    try {
      onError?.(error, ctx.traceId !== undefined ? { ...info, traceId: ctx.traceId } : info);
    } catch {
      // a faulty logger must not break the reply
    }
  };

  function initialize(params: Params): Record<string, unknown> {
    const p = objectParams('initialize', params);
    if (typeof p.protocolVersion !== 'string') {
      throw new RpcError(mcpErrorCodes.InvalidParams, 'Invalid params: "protocolVersion" must be a string.');
    }
    const protocolVersion = isSupportedProtocolVersion(p.protocolVersion, protocolVersions) ? p.protocolVersion : latestVersion;
    const result: Record<string, unknown> = {
      protocolVersion,
      capabilities: { tools: { listChanged: false } },
      serverInfo: { ...serverInfoOut },
    };
    if (instructions !== undefined) result.instructions = typeof instructions === 'function' ? instructions() : instructions;
    return result;
  }

  function observe(ctx: McpHandleContext, id: JsonRpcId, params: Params): McpCallObserver | undefined {
    if (!ctx.observeToolCall) return undefined;
    const name = isRecord(params) && typeof params.name === 'string' && toolsByName.has(params.name) ? params.name : undefined;
    try {
      const observer = ctx.observeToolCall({ requestId: id, tool: name });
      if (!observer) return undefined;
      return {
        ...(observer.span ? { span: observer.span } : {}),
        end(outcome) {
          try {
            observer.end(outcome);
          } catch (error) {
            report(error, { method: 'tools/call', requestId: id }, ctx);
          }
        },
      };
    } catch (error) {
      report(error, { method: 'tools/call', requestId: id }, ctx);
      return undefined;
    }
  }

  async function observedCallTool(id: JsonRpcId, params: Params, ctx: McpHandleContext): Promise<Record<string, unknown>> {
    const observer = observe(ctx, id, params);
    try {
      const result = await callTool(id, params, ctx, observer?.span);
      observer?.end({ result: result.isError === true ? 'tool_error' : 'ok' });
      return result;
    } catch (error) {
      observer?.end({ result: 'rpc_error', errorCode: error instanceof RpcError ? error.code : mcpErrorCodes.InternalError });
      throw error;
    }
  }

  async function callTool(id: JsonRpcId, params: Params, ctx: McpHandleContext, span: Span | undefined): Promise<Record<string, unknown>> {
    const p = objectParams('tools/call', params);
    if (typeof p.name !== 'string') {
      throw new RpcError(mcpErrorCodes.InvalidParams, 'Invalid params: "name" must be the name of a tool (a string).');
    }
    const tool = toolsByName.get(p.name);
    if (!tool) {
      const known = [...toolsByName.keys()].map((n) => `"${n}"`).join(', ') || 'none';
      throw new RpcError(mcpErrorCodes.InvalidParams, `Unknown tool ${quoted(p.name)}. Available tools: ${known}.`);
    }
    const args = p.arguments === undefined ? {} : p.arguments;
    if (!isRecord(args)) {
      throw new RpcError(
        mcpErrorCodes.InvalidParams,
        `Invalid params: "arguments" must be an object, got ${describeType(args)}.`,
      );
    }
    const genericFailure = (): Record<string, unknown> => ({ ...toolFailure(`Internal error while running tool "${tool.name}".` + (ctx.traceId ? ` Trace id: ${ctx.traceId}.` : '')) });
    let raw: McpToolResult;
    try {
      const toolCtx: Parameters<McpTool['call']>[1] = { signal: ctx.signal, requestId: id };
      if (ctx.traceId !== undefined) toolCtx.traceId = ctx.traceId;
      if (span !== undefined) toolCtx.span = span;
      raw = await tool.call(args, toolCtx);
    } catch (error) {
      report(error, { method: 'tools/call', tool: tool.name, requestId: id }, ctx);
      return genericFailure();
    }
    const result = normalizeToolResult(raw);
    if (!result) {
      report(new TypeError(`MCP tool "${tool.name}" returned a malformed result`), {
        method: 'tools/call',
        tool: tool.name,
        requestId: id,
      }, ctx);
      return genericFailure();
    }
    return result;
  }

  async function runRequest(id: JsonRpcId, method: string, params: Params, ctx: McpHandleContext): Promise<Record<string, unknown>> {
    switch (method) {
      case 'initialize':
        return initialize(params);
      case 'ping':
        objectParams(method, params);
        return {};
      case 'tools/list':
        objectParams(method, params); // `cursor` accepted and ignored: one page
        return { tools: descriptors.map((d) => ({ ...d })) };
      case 'tools/call':
        return observedCallTool(id, params, ctx);
      default:
        throw new RpcError(mcpErrorCodes.MethodNotFound, `Method not found: ${quoted(method)}.`);
    }
  }

  /** Handles one message; resolves to its reply, or undefined when it gets none. */
  async function handleOne(msg: unknown, ctx: McpHandleContext): Promise<JsonRpcResponse | undefined> {
    if (msg instanceof RefusedMessage) return refused(msg);
    if (!isRecord(msg)) {
      return invalidRequest(null, `a JSON-RPC message must be an object, got ${describeType(msg)}.`);
    }
    const hasId = Object.hasOwn(msg, 'id');
    const replyId: JsonRpcId | null = hasId && isValidId(msg.id) ? msg.id : null;
    const invalid = (why: string): JsonRpcErrorResponse => invalidRequest(replyId, why);

    if (msg.jsonrpc !== JSONRPC_VERSION) return invalid('"jsonrpc" must be "2.0".');
    if (hasId && !isValidId(msg.id)) return invalid(idProblem(msg.id));
    if (!Object.hasOwn(msg, 'method')) {
      // A JSON-RPC response POSTed by the client: we never send requests, so there is nothing to
      // match it to. Accepted without a reply.
      if (hasId && (Object.hasOwn(msg, 'result') || Object.hasOwn(msg, 'error'))) return undefined;
      return invalid('"method" is missing.');
    }
    if (typeof msg.method !== 'string') return invalid(`"method" must be a string, got ${describeType(msg.method)}.`);
    const params = msg.params;
    if (params !== undefined && typeof params !== 'object') {
      return invalid(`"params" must be an object or an array, got ${describeType(params)}.`);
    }
    if (params === null) return invalid('"params" must be an object or an array, got null.');

    // Notifications (no id): `notifications/initialized`, `notifications/cancelled`, ... never get a
    // reply. The transport acts on a cancel before the dispatcher sees it (it holds the calls).
    if (!hasId) return undefined;

    const id = msg.id as JsonRpcId;
    const method = msg.method;
    const cancel = ctx.cancelOf?.(id);
    const own = cancel ? { ...ctx, signal: AbortSignal.any([ctx.signal, cancel]) } : ctx;
    try {
      const result = await runRequest(id, method, params as Params, own);
      return cancel?.aborted ? undefined : resultResponse(id, result);
    } catch (error) {
      if (cancel?.aborted) return undefined;
      if (error instanceof RpcError) return errorResponse(id, error.code, error.message, error.data);
      report(error, { method, requestId: id }, ctx);
      return errorResponse(id, mcpErrorCodes.InternalError, 'Internal error.');
    }
  }

  function refused({ message, problems }: RefusedMessage): JsonRpcErrorResponse | undefined {
    if (isRecord(message) && !Object.hasOwn(message, 'id')) return undefined; // a notification
    const idRefused = problems.some((p) => p.path.length === 1 && p.path[0] === 'id');
    const id = !idRefused && isRecord(message) && isValidId(message.id) ? message.id : null;
    const inParams = problems.every((p) => p.path.length > 1 && p.path[0] === 'params');
    // The first refused key names the fault; data lists every one, with its path in the message.
    return errorResponse(id, inParams ? mcpErrorCodes.InvalidParams : mcpErrorCodes.InvalidRequest,
      `${inParams ? 'Invalid params' : 'Invalid Request'}: ${problems[0]!.problem.detail}`,
      { errors: problems.map((p) => ({ path: p.path.join('.').slice(0, 200), message: p.problem.extra.errors?.[0]?.message ?? p.problem.detail })) });
  }

  async function handle(body: unknown, ctx: McpHandleContext): Promise<McpHandleResult> {
    if (body === PARSE_ERROR) return { status: 200, body: parseError() };
    if (Array.isArray(body)) {
      if (body.length === 0) {
        return {
          status: 200,
          body: invalidRequest(null, 'an empty batch.'),
        };
      }
      if (body.length > maxBatch) {
        return {
          status: 200,
          body: errorResponse(
            null,
            mcpErrorCodes.InvalidRequest,
            `Invalid Request: a batch may hold at most ${maxBatch} messages, got ${body.length}.`,
            { maxBatch },
          ),
        };
      }
      const replies = await Promise.all(body.map((msg) => safeHandleOne(msg, ctx)));
      const answered = replies.filter((r): r is JsonRpcResponse => r !== undefined);
      return answered.length === 0 ? { status: 202 } : { status: 200, body: answered };
    }
    const reply = await safeHandleOne(body, ctx);
    return reply === undefined ? { status: 202 } : { status: 200, body: reply };
  }

  async function safeHandleOne(msg: unknown, ctx: McpHandleContext): Promise<JsonRpcResponse | undefined> {
    try {
      return await handleOne(msg, ctx);
    } catch (error) {
      // Defensive: handleOne catches everything it expects to.
      report(error, { method: isRecord(msg) && typeof msg.method === 'string' ? msg.method : '' }, ctx);
      const id = isRecord(msg) && isValidId(msg.id) ? msg.id : null;
      return errorResponse(id, mcpErrorCodes.InternalError, 'Internal error.');
    }
  }

  function parseError(): JsonRpcErrorResponse {
    return errorResponse(null, mcpErrorCodes.ParseError, `Parse error: the ${opts.messageCarrier ?? 'body'} is not valid JSON.`);
  }

  return { handle, parseError, invalidRequest, tools: descriptors, protocolVersions };
}

const JSONRPC_ID = { type: ['string', 'number'] };
/** Schema of what handle() accepts: one message (a batch is an array of them). */
export const JSONRPC_MESSAGE_SCHEMA: JsonSchema = {
  type: 'object',
  description: 'A JSON-RPC 2.0 request (with id) or notification (without). Methods: initialize, ping, tools/list, tools/call, notifications/initialized, notifications/cancelled (stops the call it names in the same Mcp-Session-Id).',
  required: ['jsonrpc', 'method'],
  properties: {
    jsonrpc: { const: '2.0' },
    id: JSONRPC_ID,
    method: { type: 'string', examples: ['initialize', 'ping', 'tools/list', 'tools/call', 'notifications/initialized', 'notifications/cancelled'] },
    params: { type: 'object' },
  },
};
/** Schema of each reply handle() returns. */
export const JSONRPC_RESPONSE_SCHEMA: JsonSchema = {
  type: 'object',
  required: ['jsonrpc', 'id'],
  properties: {
    jsonrpc: { const: '2.0' },
    id: { type: ['string', 'number', 'null'] },
  },
  // Each branch defines the member it requires: a success or an error, never both.
  oneOf: [
    {
      required: ['result'],
      properties: { result: { type: 'object', description: `For tools/call of ${RENDER_TOOL_NAME}: { content: [{ type: "text", text }, { type: "image", data, mimeType: "image/png" }], structuredContent (the summary of its outputSchema) } or, on failure, { content: [{ type: "text", text }], isError: true }.` } },
    },
    {
      required: ['error'],
      properties: {
        error: {
          type: 'object', required: ['code', 'message'],
          properties: { code: { type: 'integer', description: '-32700 parse error, -32600 invalid request (also empty or oversized batch), -32601 unknown method, -32602 invalid params, -32603 internal.' }, message: { type: 'string' }, data: {} },
        },
      },
    },
  ],
};
