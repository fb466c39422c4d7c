/**
 * MCP / JSON-RPC 2.0 wire types and constants for v2a's own MCP dispatcher.
 *
 * Transport-independent and dependency-free: nothing here imports Fastify or the MCP SDK. Both
 * faces frame their own messages (the HTTP route; stdio.ts with stdio-lines.ts, for the reasons
 * stdio.ts gives); the SDK is the real client peer in the tests, which hold this to it.
 */
import type { Span } from '@opentelemetry/api';

/** JSON-RPC version string every message must carry. */
export const JSONRPC_VERSION = '2.0' as const;

/**
 * The newest MCP protocol version we speak. Mirrors `LATEST_PROTOCOL_VERSION` of
 * `@modelcontextprotocol/sdk` 1.32 (checked by a test, so an SDK update that moves it is noticed).
 */
export const LATEST_PROTOCOL_VERSION = '2025-11-25';

/**
 * MCP protocol versions we accept in `initialize`, newest first. Mirrors
 * `SUPPORTED_PROTOCOL_VERSIONS` of `@modelcontextprotocol/sdk` 1.32.
 */
export const SUPPORTED_PROTOCOL_VERSIONS: readonly string[] = Object.freeze([
  LATEST_PROTOCOL_VERSION,
  '2025-06-18',
  '2025-03-26',
  '2024-11-05',
  '2024-10-07',
]);

/**
 * The version a Streamable HTTP server assumes when a client sends no `MCP-Protocol-Version`
 * header (MCP 2025-06-18, "Protocol Version Header"). Exposed for the HTTP layer.
 */
export const DEFAULT_NEGOTIATED_PROTOCOL_VERSION = '2025-03-26';

/** JSON-RPC 2.0 / MCP error codes used by the dispatcher. */
export const mcpErrorCodes = Object.freeze({
  /** The body is not valid JSON. */
  ParseError: -32700,
  /** The JSON is not a valid JSON-RPC request object (or an empty / over-long batch). */
  InvalidRequest: -32600,
  /** No such method. */
  MethodNotFound: -32601,
  /** The method exists but its params are wrong (unknown tool, arguments not an object, ...). */
  InvalidParams: -32602,
  /** A fault inside the dispatcher itself (never a tool's failure: those are `isError` results). */
  InternalError: -32603,
} as const);

export type McpErrorCode = (typeof mcpErrorCodes)[keyof typeof mcpErrorCodes];

/** MCP request ids: a string or a number. `null` is not allowed for requests in MCP. */
export type JsonRpcId = string | number;

/**
 * Whether `value` is a request id we can echo as sent: a string, or a number no larger than
 * ±(2^53 - 1). A longer integer has lost digits in JSON.parse (123456789012345678901234567890
 * came back as 1.2345678901234568e+29), and the client could not match the reply to its call.
 */
export function isValidId(value: unknown): value is JsonRpcId {
  return typeof value === 'string' || (typeof value === 'number' && Number.isFinite(value) && Math.abs(value) <= Number.MAX_SAFE_INTEGER);
}

export interface JsonRpcRequest {
  jsonrpc: typeof JSONRPC_VERSION;
  id: JsonRpcId;
  method: string;
  params?: Record<string, unknown> | unknown[];
}

export interface JsonRpcNotification {
  jsonrpc: typeof JSONRPC_VERSION;
  method: string;
  params?: Record<string, unknown> | unknown[];
}

export interface JsonRpcErrorObject {
  code: number;
  message: string;
  data?: unknown;
}

export interface JsonRpcSuccessResponse {
  jsonrpc: typeof JSONRPC_VERSION;
  id: JsonRpcId;
  result: Record<string, unknown>;
}

export interface JsonRpcErrorResponse {
  jsonrpc: typeof JSONRPC_VERSION;
  /** `null` when the id could not be determined (parse error, invalid request). */
  id: JsonRpcId | null;
  error: JsonRpcErrorObject;
}

export type JsonRpcResponse = JsonRpcSuccessResponse | JsonRpcErrorResponse;

/** Text content block of a tool result. */
export interface McpTextContent {
  type: 'text';
  text: string;
}

/** Image content block of a tool result: base64 data and its media type. */
export interface McpImageContent {
  type: 'image';
  data: string;
  mimeType: string;
}

export type McpContent = McpTextContent | McpImageContent;

/** What a tool returns from `call`. Tool failures are `isError: true` results, not exceptions. */
export interface McpToolResult {
  content: McpContent[];
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
}

/** A tool's failure as the agent reads it: one text block and `isError`. */
export function toolFailure(text: string): McpToolResult {
  return { content: [{ type: 'text', text }], isError: true };
}

/** Per-call context handed to a tool. */
export interface McpToolContext {
  /** Aborted when the transport gives up on the request (client gone, shutdown, timeout). */
  signal: AbortSignal;
  /** The JSON-RPC id of the `tools/call` request. */
  requestId: JsonRpcId;
  /** W3C trace id of the surrounding HTTP request, when the transport knows it. */
  traceId?: string;
  /** The span of this tools/call, when the transport traces it: parent of the tool's own spans. */
  span?: Span;
}

/** Tool descriptor as listed by `tools/list`. */
export interface McpToolDescriptor {
  name: string;
  title?: string;
  description: string;
  /** JSON Schema of `arguments`; its root must be `type: "object"`. */
  inputSchema: object;
  /** JSON Schema of `structuredContent`; root `type: "object"`. Clients validate results against it. */
  outputSchema?: object;
  /** MCP tool annotations (`readOnlyHint`, `openWorldHint`, ...). */
  annotations?: object;
}

/** A tool served by the dispatcher: its descriptor and what runs it. */
export interface McpTool extends McpToolDescriptor {
  call(args: Record<string, unknown>, ctx: McpToolContext): Promise<McpToolResult>;
}

export interface McpServerInfo {
  name: string;
  version: string;
  title?: string;
}

/** Marker the transport passes to `handle()` when the body was not valid JSON. */
export const PARSE_ERROR: unique symbol = Symbol('v2a.mcp.parseError');
export type ParseErrorMarker = typeof PARSE_ERROR;

/** True when `version` is one of the MCP protocol versions in `supported` (default: ours). */
export function isSupportedProtocolVersion(
  version: unknown,
  supported: readonly string[] = SUPPORTED_PROTOCOL_VERSIONS,
): version is string {
  return typeof version === 'string' && supported.includes(version);
}
