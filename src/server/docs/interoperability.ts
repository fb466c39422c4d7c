/** GET /api/v1/interoperability: the protocols and identifiers this service speaks. */
import { CHROMA_ENCODING, COMPACT_VERSION, FORMAT_INFO } from '../../core/format/info.js';
import { FORMATS } from '../../core/params/definitions.js';
import { VERSION } from '../../core/types.js';
import type { ServerConfig } from '../config.js';
import { HANDOFF_MODES, HANDOFF_PROTOCOL, HANDOFF_TRANSPORT } from '../../contract/handoff.js';
import { RENDER_TOOL_NAME } from '../mcp-tool.js';
import { LATEST_PROTOCOL_VERSION, SUPPORTED_PROTOCOL_VERSIONS } from '../mcp/protocol.js';
import { TRACESTATE_MAX_LENGTH, TRACESTATE_MAX_MEMBERS } from '../trace-context.js';
import { ENDPOINTS } from '../../contract/endpoints.js';
import type { JsonSchema } from '../../core/format/jsonSchemas.js';

export function buildInteroperability(config: ServerConfig, baseUrl: string) {
  const url = (path: string) => baseUrl + path;
  return {
    service: 'v2a',
    version: VERSION,
    protocols: {
      http: {
        versions: ['HTTP/1.1'],
        versionedPrefix: '/api/v1/',
        errors: 'RFC 9457 application/problem+json',
        rateLimitHeaders: config.rateLimit > 0 ? 'RateLimit-Limit, RateLimit-Remaining, RateLimit-Reset (IETF httpapi draft), Retry-After' : 'off',
        cors: config.corsOrigins === '*' ? '*' : config.corsOrigins,
        endpoints: Object.values(ENDPOINTS).map((e) => ({ method: e.method, path: e.path })),
      },
      mcp: {
        endpoint: url(ENDPOINTS.mcp.path),
        transport: 'Streamable HTTP, stateless: POST only, application/json replies, no SSE stream; the Mcp-Session-Id of initialize only scopes notifications/cancelled and no request needs it',
        jsonrpc: '2.0',
        protocolVersions: [...SUPPORTED_PROTOCOL_VERSIONS],
        latest: LATEST_PROTOCOL_VERSION,
        methods: ['initialize', 'notifications/initialized', 'ping', 'tools/list', 'tools/call'],
        tools: [RENDER_TOOL_NAME],
        maxBatch: config.mcpMaxBatch,
      },
      openapi: { version: '3.1.0', url: url(ENDPOINTS.openapi.path) },
      handoff: {
        protocol: HANDOFF_PROTOCOL,
        transport: HANDOFF_TRANSPORT,
        modes: [...HANDOFF_MODES],
        manifest: url(ENDPOINTS.handoff.path),
        targetOrigin: new URL(config.receiverUrl).origin,
      },
      traceContext: {
        standard: 'W3C Trace Context',
        headers: ['traceparent', 'tracestate'],
        traceparentVersion: '00',
        tracestateLimits: { members: TRACESTATE_MAX_MEMBERS, characters: TRACESTATE_MAX_LENGTH },
        export: config.platformKeyConfigured ? 'OTLP/HTTP, JSON encoding: redacted spans of requests (v2a.request), MCP tool calls (v2a.tool_call) and render stages' : 'none',
      },
      llmsTxt: { conventions: 'https://llmstxt.org/', urls: [url(ENDPOINTS.llms.path), url(ENDPOINTS.llmsFull.path)] },
    },
    encodings: {
      chroma: { id: CHROMA_ENCODING, description: 'Base64 (RFC 4648, padded) of rows x columns x 3 bytes: row-major RGB per cell.', format: 'json-compact', envelopeVersion: COMPACT_VERSION },
    },
    formats: FORMATS.map((name) => ({ name, ...FORMAT_INFO[name] })),
  };
}

const URL_STRING = { type: 'string', format: 'uri' };

/** Schema of buildInteroperability's result: the identifiers clients match on. */
export const INTEROPERABILITY_SCHEMA: JsonSchema = {
  type: 'object',
  required: ['service', 'version', 'protocols', 'encodings'],
  properties: {
    service: { const: 'v2a' },
    version: { const: VERSION },
    protocols: {
      type: 'object',
      required: ['http', 'mcp', 'openapi', 'handoff', 'traceContext'],
      properties: {
        http: { type: 'object' },
        mcp: {
          type: 'object', required: ['endpoint', 'protocolVersions', 'jsonrpc'],
          properties: { endpoint: URL_STRING, protocolVersions: { type: 'array', items: { enum: [...SUPPORTED_PROTOCOL_VERSIONS] } }, jsonrpc: { const: '2.0' } },
        },
        openapi: { type: 'object', required: ['version', 'url'], properties: { version: { const: '3.1.0' }, url: URL_STRING } },
        handoff: { type: 'object', required: ['protocol'], properties: { protocol: { const: HANDOFF_PROTOCOL } } },
        traceContext: { type: 'object' },
      },
    },
    encodings: {
      type: 'object', required: ['chroma'],
      properties: { chroma: { type: 'object', required: ['id'], properties: { id: { const: CHROMA_ENCODING } } } },
    },
  },
};
