/**
 * The OpenAPI 3.1.0 document of the service, generated from the definitions the server runs on:
 * PARAMS (query, form and JSON parameters, the MCP tool schema), FORMAT_INFO (reply content
 * types), the json/json-compact JSON Schemas, the problem catalogue, the endpoint list, the
 * handoff protocol and the MCP protocol versions. Nothing here restates a name, range or default.
 */
import { FORMATS, PARAMS, describeDomain, type Format, type ParamDef } from '../../core/params/definitions.js';
import { paramJsonSchema } from '../../core/params/schema.js';
import { CHROMA_ENCODING, FORMAT_INFO } from '../../core/format/info.js';
import { JSON_COMPACT_OUTPUT_SCHEMA, JSON_OUTPUT_SCHEMA, type JsonSchema } from '../../core/format/jsonSchemas.js';
import { CHARSETS, QUALITY_TARGETS } from '../../core/params/definitions.js';
import { VERSION } from '../../core/types.js';
import { describeConfig, type ServerConfig } from '../config.js';
import { HANDOFF_MESSAGES, HANDOFF_MODES, HANDOFF_PROTOCOL, HANDOFF_TRANSPORT, LAUNCH_PARAMETERS } from '../../contract/handoff.js';
import { IMAGE_BASE64_DESCRIPTION, IMAGE_URL_DESCRIPTION, RENDER_TOOL_NAME, renderToolInputSchema } from '../mcp-tool.js';
import { SUPPORTED_PROTOCOL_VERSIONS } from '../mcp/protocol.js';
import { ERRORS } from '../../core/errors.js';
import { PROBLEM_TYPE_BASE, PROBLEM_TYPES, type ProblemSlug } from '../problem.js';
import { ENDPOINT_LIST, ENDPOINTS, type EndpointInfo } from '../../contract/endpoints.js';

type Obj = Record<string, unknown>;

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const responseRef = (name: string) => ({ $ref: `#/components/responses/${name}` });
const headerRef = (name: string) => ({ $ref: `#/components/headers/${name}` });
const paramRef = (name: string) => ({ $ref: `#/components/parameters/${name}` });

/** A copy of a JSON Schema without `$schema` (the document's dialect applies inside components). */
function embed(schema: JsonSchema): Obj {
  const { $schema: _dialect, ...rest } = schema as Obj;
  return rest;
}

const TRACE_ID = { type: 'string', pattern: '^[0-9a-f]{32}$', description: 'W3C trace id (32 lowercase hex).' };
const TRACEPARENT_PATTERN = '^[0-9a-f]{2}-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}(-.*)?$';

function paramDescription(def: ParamDef): string {
  return `${def.description} Allowed: ${describeDomain(def)}. Default: ${String(def.default)}.`;
}

/** Render parameters as one object schema, optionally with extra properties (image fields). */
function paramProperties(): Record<string, Obj> {
  return Object.fromEntries(PARAMS.map((d) => [d.name, { ...paramJsonSchema(d), description: paramDescription(d) }]));
}

/** Reply media types of render, grouped from FORMAT_INFO. */
function renderContent(): Obj {
  const byType = new Map<string, Format[]>();
  for (const f of FORMATS) byType.set(FORMAT_INFO[f].contentType, [...(byType.get(FORMAT_INFO[f].contentType) ?? []), f]);
  const content: Obj = {};
  for (const [type, formats] of byType) {
    const binary = formats.every((f) => FORMAT_INFO[f].binary);
    const description = `format=${formats.join(' or format=')} (${formats.map((f) => FORMAT_INFO[f].label).join('; ')}), ${binary ? 'bytes' : 'UTF-8'}.`;
    if (binary) {
      // Extension beyond the contract: png, the art drawn from the reference font's glyph bitmaps.
      content[type] = { schema: { type: 'string', format: 'binary', contentMediaType: type, description: `${description} Extension: the art rasterised at 8x16 px per cell from the reference font's glyph data (no system fonts), so the same parameters give the same bytes on every machine.` } };
    } else if (type === 'application/json') {
      content[type] = { schema: { oneOf: formats.map((f) => ref(f === 'json' ? 'RenderJsonOutput' : 'RenderJsonCompactOutput')), description } };
    } else {
      content[type] = { schema: { type: 'string', description } };
    }
  }
  return content;
}

const PROBLEM_SCHEMA: Obj = {
  type: 'object',
  description: `RFC 9457 problem details. \`type\` is ${PROBLEM_TYPE_BASE}<slug>, one of: ` +
    Object.entries(PROBLEM_TYPES).map(([slug, p]) => `${slug} (${p.status})`).join(', ') + '.',
  required: ['type', 'title', 'status', 'detail', 'instance', 'traceId'],
  additionalProperties: false,
  properties: {
    type: { type: 'string', format: 'uri', enum: Object.keys(PROBLEM_TYPES).map((s) => PROBLEM_TYPE_BASE + s) },
    title: { type: 'string' },
    status: { type: 'integer', minimum: 400, maximum: 599 },
    detail: { type: 'string', description: 'What went wrong, for the caller; never a stack trace.' },
    instance: { type: 'string', format: 'uri-reference', description: 'The request path.' },
    traceId: TRACE_ID,
    errors: {
      type: 'array',
      description: 'Validation errors, one per parameter or field at fault.',
      items: {
        type: 'object',
        required: ['parameter', 'message'],
        additionalProperties: false,
        properties: { parameter: { type: 'string' }, message: { type: 'string' } },
      },
    },
  },
};

const POOL_SCHEMA: Obj = {
  type: 'object',
  description: 'Render worker pool load.',
  required: ['workers', 'running', 'queued', 'queueLimit', 'completed'],
  additionalProperties: false,
  properties: Object.fromEntries(['workers', 'running', 'queued', 'queueLimit', 'completed'].map((k) => [k, { type: 'integer', minimum: 0 }])),
};

const HEALTH_SCHEMA: Obj = {
  type: 'object',
  required: ['status', 'service', 'version', 'uptimeSeconds', 'time', 'traceId', 'pool', 'capabilities'],
  additionalProperties: false,
  properties: {
    status: { enum: ['ok', 'shutting_down'] },
    service: { const: 'v2a' },
    version: { const: VERSION },
    uptimeSeconds: { type: 'number', minimum: 0 },
    time: { type: 'string', format: 'date-time' },
    traceId: TRACE_ID,
    pool: POOL_SCHEMA,
    capabilities: {
      type: 'object',
      required: ['formats', 'charsets', 'qualityTargets', 'mcp', 'openapi'],
      additionalProperties: false,
      properties: {
        formats: { type: 'array', items: { enum: [...FORMATS] } },
        charsets: { type: 'array', items: { enum: [...CHARSETS] } },
        qualityTargets: { type: 'array', items: { enum: [...QUALITY_TARGETS] } },
        mcp: { const: ENDPOINTS.mcp.path },
        openapi: { const: ENDPOINTS.openapi.path },
      },
    },
  },
};

const RECEIVER_CHECK_SCHEMA: Obj = {
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

const STATUS_SCHEMA: Obj = {
  type: 'object',
  required: ['service', 'version', 'status', 'time', 'startedAt', 'uptimeSeconds', 'traceId', 'node', 'pool', 'telemetry', 'receiver', 'config'],
  additionalProperties: false,
  properties: {
    service: { const: 'v2a' },
    version: { const: VERSION },
    status: { enum: ['ok', 'shutting_down'] },
    time: { type: 'string', format: 'date-time' },
    startedAt: { type: 'string', format: 'date-time' },
    uptimeSeconds: { type: 'number', minimum: 0 },
    traceId: TRACE_ID,
    node: { type: 'string', description: 'Node.js version.' },
    pool: POOL_SCHEMA,
    telemetry: {
      type: 'object',
      description: 'Span export over OTLP/HTTP (JSON encoding), on when PLATFORM_API_KEY is set.',
      required: ['exporting'],
      additionalProperties: false,
      properties: {
        exporting: { type: 'boolean' },
        endpoint: { type: 'string', description: 'OTLP traces endpoint (origin and path).' },
        protocol: { const: 'http/json' },
        keyHeader: { const: 'x-platform-api-key', description: 'Header that carries the platform key to the endpoint.' },
        disabledReason: { type: 'string' },
      },
    },
    receiver: {
      type: 'object',
      required: ['statusUrl', 'intervalMs', 'check'],
      additionalProperties: false,
      properties: {
        statusUrl: { type: ['string', 'null'], description: 'V2A_RECEIVER_STATUS_URL (origin and path); null when checks are off.' },
        intervalMs: { type: 'integer', minimum: 0, description: 'Background check interval; 0 = on demand only.' },
        check: { oneOf: [RECEIVER_CHECK_SCHEMA, { type: 'null' }] },
      },
    },
    config: {
      type: 'array',
      description: 'Effective server settings (describeConfig order). Secret settings only say whether they are set.',
      items: {
        type: 'object',
        required: ['name', 'default'],
        additionalProperties: false,
        properties: {
          name: { type: 'string' },
          value: { description: 'The effective value (absent for secret settings).' },
          set: { type: 'boolean' },
          default: { type: 'string' },
          secret: { const: true },
          testOnly: { const: true },
        },
      },
    },
  },
};

const FIELD_INFO_SCHEMA: Obj = {
  type: 'object',
  required: ['name', 'type', 'required', 'description'],
  additionalProperties: false,
  properties: { name: { type: 'string' }, type: { type: 'string' }, required: { type: 'boolean' }, description: { type: 'string' } },
};

const HANDOFF_SCHEMA: Obj = {
  type: 'object',
  description: `Manifest of the ${HANDOFF_PROTOCOL} handoff (browser only: the frames never pass through this server).`,
  required: ['protocol', 'receiver', 'transport', 'modes', 'launch', 'frame', 'messages', 'statusChecks', 'browserOnly'],
  additionalProperties: false,
  properties: {
    protocol: { const: HANDOFF_PROTOCOL },
    receiver: {
      type: 'object', required: ['url', 'targetOrigin'], additionalProperties: false,
      properties: { url: { type: 'string', format: 'uri' }, targetOrigin: { type: 'string', format: 'uri', description: 'Origin of V2A_RECEIVER_URL: the only postMessage target.' } },
    },
    transport: {
      type: 'object', required: ['type', 'targetOrigin', 'wildcardTargetOrigin', 'rules'], additionalProperties: false,
      properties: {
        type: { const: HANDOFF_TRANSPORT },
        targetOrigin: { type: 'string', format: 'uri' },
        wildcardTargetOrigin: { const: false },
        rules: { type: 'array', items: { type: 'string' } },
      },
    },
    modes: {
      type: 'array',
      items: { type: 'object', required: ['name', 'description'], additionalProperties: false, properties: { name: { enum: [...HANDOFF_MODES] }, description: { type: 'string' } } },
    },
    launch: {
      type: 'object', required: ['url', 'urlTemplate', 'parameters', 'open'], additionalProperties: false,
      properties: {
        url: { type: 'string', format: 'uri' },
        urlTemplate: { type: 'string', description: `RFC 6570 template with ${LAUNCH_PARAMETERS.map((p) => p.name).join(', ')}.` },
        parameters: { type: 'array', items: FIELD_INFO_SCHEMA },
        open: { type: 'string' },
      },
    },
    frame: {
      type: 'object', required: ['format', 'chromaEncoding'], additionalProperties: false,
      properties: { format: { const: 'json-compact' }, chromaEncoding: { const: CHROMA_ENCODING } },
    },
    messages: {
      type: 'array',
      items: {
        type: 'object', required: ['type', 'direction', 'description', 'fields'], additionalProperties: false,
        properties: {
          type: { enum: HANDOFF_MESSAGES.map((m) => m.type) },
          direction: { enum: ['studio-to-receiver', 'receiver-to-studio', 'either'] },
          description: { type: 'string' },
          fields: { type: 'array', items: FIELD_INFO_SCHEMA },
        },
      },
    },
    statusChecks: {
      type: 'object', required: ['description', 'authentication', 'enabled'], additionalProperties: false,
      properties: {
        description: { type: 'string' },
        authentication: { type: 'array', items: { enum: ['PlatformBearer', 'PlatformHeader'] } },
        enabled: { type: 'boolean', description: 'Whether the server has a platform key configured.' },
      },
    },
    browserOnly: { const: true },
  },
};

const URL_STRING = { type: 'string', format: 'uri' };

const AGENT_SCHEMA: Obj = {
  type: 'object',
  required: ['name', 'version', 'description', 'baseUrl', 'tools', 'capabilities', 'defaults', 'parameters', 'limits', 'discovery', 'authentication', 'recipes'],
  properties: {
    name: { const: 'v2a' },
    version: { const: VERSION },
    description: { type: 'string' },
    baseUrl: URL_STRING,
    tools: {
      type: 'array',
      items: {
        type: 'object', required: ['name', 'description'],
        properties: { name: { enum: [RENDER_TOOL_NAME, 'stream_ascii_to_a2v'] }, description: { type: 'string' }, browserOnly: { type: 'boolean' } },
      },
    },
    capabilities: {
      type: 'object',
      required: ['formats', 'charsets', 'color', 'edgeDetection', 'dithering', 'luminance'],
      properties: {
        formats: { type: 'array', items: { type: 'object', required: ['name', 'contentType', 'extension', 'label'], properties: { name: { enum: [...FORMATS] } } } },
        charsets: { type: 'array', items: { enum: [...CHARSETS] } },
        color: { type: 'boolean' },
        edgeDetection: { type: 'string' },
        dithering: { const: 'floyd-steinberg' },
        luminance: { const: 'linear-light-rec709' },
      },
    },
    defaults: ref('RenderParameters'),
    parameters: { type: 'array', items: { type: 'object', required: ['name', 'type', 'default', 'description'] } },
    limits: { type: 'object' },
    discovery: { type: 'object', additionalProperties: URL_STRING },
    authentication: { type: 'object' },
    recipes: {
      type: 'array',
      items: { type: 'object', required: ['name', 'description', 'command'], additionalProperties: false, properties: { name: { type: 'string' }, description: { type: 'string' }, command: { type: 'string' } } },
    },
  },
};

const INTEROPERABILITY_SCHEMA: Obj = {
  type: 'object',
  required: ['service', 'version', 'protocols', 'encodings'],
  properties: {
    service: { const: 'v2a' },
    version: { const: VERSION },
    protocols: {
      type: 'object',
      required: ['http', 'mcp', 'openapi', 'handoff', 'traceContext'],
      properties: {
        mcp: {
          type: 'object', required: ['endpoint', 'protocolVersions', 'jsonrpc'],
          properties: { protocolVersions: { type: 'array', items: { enum: [...SUPPORTED_PROTOCOL_VERSIONS] } }, jsonrpc: { const: '2.0' } },
        },
        openapi: { type: 'object', required: ['version', 'url'], properties: { version: { const: '3.1.0' } } },
        handoff: { type: 'object', required: ['protocol'], properties: { protocol: { const: HANDOFF_PROTOCOL } } },
      },
    },
    encodings: {
      type: 'object', required: ['chroma'],
      properties: { chroma: { type: 'object', required: ['id'], properties: { id: { const: CHROMA_ENCODING } } } },
    },
  },
};

const JSONRPC_ID = { type: ['string', 'number'] };
const JSONRPC_MESSAGE: Obj = {
  type: 'object',
  description: 'A JSON-RPC 2.0 request (with id) or notification (without). Methods: initialize, ping, tools/list, tools/call, notifications/initialized.',
  required: ['jsonrpc', 'method'],
  properties: {
    jsonrpc: { const: '2.0' },
    id: JSONRPC_ID,
    method: { type: 'string', examples: ['initialize', 'ping', 'tools/list', 'tools/call', 'notifications/initialized'] },
    params: { type: 'object' },
  },
};
const JSONRPC_RESPONSE: Obj = {
  type: 'object',
  required: ['jsonrpc', 'id'],
  properties: {
    jsonrpc: { const: '2.0' },
    id: { type: ['string', 'number', 'null'] },
    result: { type: 'object', description: `For tools/call of ${RENDER_TOOL_NAME}: { content: [{ type: "text", text }], structuredContent? (json formats), isError? }.` },
    error: {
      type: 'object', required: ['code', 'message'],
      properties: { code: { type: 'integer', description: '-32700 parse error, -32600 invalid request (also empty or oversized batch), -32601 unknown method, -32602 invalid params, -32603 internal.' }, message: { type: 'string' }, data: {} },
    },
  },
  oneOf: [{ required: ['result'] }, { required: ['error'] }],
};

function problemResponse(description: string, headers: Obj = {}): Obj {
  return {
    description,
    headers: { traceparent: headerRef('traceparent'), tracestate: headerRef('tracestate'), ...headers },
    content: { 'application/problem+json': { schema: ref('Problem') } },
  };
}

function problemList(...slugs: ProblemSlug[]): string {
  return slugs.map((s) => `${s}: ${ERRORS[s].description}`).join(' ');
}

const TRACE_HEADERS = { traceparent: headerRef('traceparent'), tracestate: headerRef('tracestate') };

function jsonResponse(description: string, schema: Obj, extraHeaders: Obj = {}): Obj {
  return { description, headers: { ...TRACE_HEADERS, ...extraHeaders }, content: { 'application/json': { schema } } };
}

/** Security requirement of the protected platform actions: either scheme. */
export const PLATFORM_SECURITY = [{ PlatformBearer: [] }, { PlatformHeader: [] }];

function operation(e: EndpointInfo, rest: Obj): Obj {
  return {
    operationId: e.operationId,
    summary: e.summary,
    description: e.description,
    tags: [e.tag],
    security: e.protected ? PLATFORM_SECURITY : [],
    parameters: [paramRef('traceparent'), paramRef('tracestate')],
    ...rest,
    responses: { ...(rest.responses as Obj), default: responseRef('Error') },
  };
}

/** The OpenAPI document; `baseUrl` goes into `servers`. */
export function buildOpenApi(config: ServerConfig, baseUrl: string): Obj {
  const E = ENDPOINTS;
  const rateHeaders = { 'RateLimit-Limit': headerRef('RateLimit-Limit'), 'RateLimit-Remaining': headerRef('RateLimit-Remaining'), 'RateLimit-Reset': headerRef('RateLimit-Reset') };
  const healthOp = (e: EndpointInfo) => ({
    get: operation(e, {
      responses: {
        200: jsonResponse('Service healthy.', ref('Health')),
        503: jsonResponse('Shutting down (same envelope, status shutting_down).', ref('Health')),
      },
    }),
  });
  const doc = (e: EndpointInfo, type: string, schema: Obj, description: string) => ({
    get: operation(e, { responses: { 200: { description, headers: TRACE_HEADERS, content: { [type]: { schema } } } } }),
  });

  const platformUnauthorized = problemResponse(`No platform key, or a wrong one. ${problemList('unauthorized')}`, { 'WWW-Authenticate': headerRef('WWW-Authenticate') });
  const platformNotFound = problemResponse('PLATFORM_API_KEY is not configured on this server: the protected platform actions do not exist (the same reply as any unknown path).');

  const paths: Obj = {
    [E.health.path]: healthOp(E.health),
    [E.healthV1.path]: healthOp(E.healthV1),
    [E.render.path]: {
      post: operation(E.render, {
        parameters: [paramRef('traceparent'), paramRef('tracestate'), ...PARAMS.map((d) => paramRef(`query.${d.name}`))],
        requestBody: {
          required: true,
          description: 'Exactly one image. Render parameters may also be form fields or JSON keys (each parameter in one carrier only).',
          content: {
            'multipart/form-data': { schema: ref('RenderMultipartRequest'), encoding: { image: { contentType: 'image/*, application/octet-stream' } } },
            'application/json': { schema: ref('RenderJsonRequest') },
          },
        },
        responses: {
          200: {
            description: 'The rendered output; the content type follows `format`.',
            headers: {
              ...TRACE_HEADERS,
              'Content-Disposition': headerRef('Content-Disposition'),
              'X-Auto-Director': headerRef('X-Auto-Director'),
              ...rateHeaders,
            },
            content: renderContent(),
          },
          400: problemResponse(`Bad request. ${problemList('invalid-parameters', 'invalid-request', 'missing-image', 'multiple-images', 'invalid-base64', 'unsupported-image', 'undecodable-image', 'image-too-tall', 'image-url-not-allowed')}`),
          413: problemResponse(`Too large. ${problemList('image-too-large', 'request-too-large')}`),
          415: problemResponse(problemList('unsupported-media-type')),
          429: problemResponse(problemList('rate-limited'), { 'Retry-After': headerRef('Retry-After'), ...rateHeaders }),
          502: problemResponse(problemList('image-fetch-failed')),
          503: problemResponse(`Unavailable. ${problemList('overloaded', 'render-timeout', 'shutting-down')}`, { 'Retry-After': headerRef('Retry-After') }),
        },
      }),
    },
    [E.handoff.path]: doc(E.handoff, 'application/json', ref('HandoffManifest'), 'The handoff manifest.'),
    [E.mcp.path]: {
      post: operation(E.mcp, {
        parameters: [paramRef('traceparent'), paramRef('tracestate'), paramRef('MCP-Protocol-Version')],
        requestBody: {
          required: true,
          content: { 'application/json': { schema: { oneOf: [ref('JsonRpcMessage'), { type: 'array', items: ref('JsonRpcMessage'), minItems: 1, maxItems: config.mcpMaxBatch }] } } },
        },
        responses: {
          200: jsonResponse('JSON-RPC reply: one response object, or an array for a batch (notifications get no reply).', { oneOf: [ref('JsonRpcResponse'), { type: 'array', items: ref('JsonRpcResponse') }] }, rateHeaders),
          202: { description: 'Only notifications (or client responses) were sent: no body.', headers: TRACE_HEADERS },
          400: problemResponse(`Unsupported MCP-Protocol-Version header. ${problemList('invalid-request')}`),
          403: problemResponse(problemList('forbidden-origin')),
          405: problemResponse('GET and DELETE: no SSE stream and no sessions here. `Allow: POST`.', { Allow: headerRef('Allow') }),
          413: problemResponse(problemList('request-too-large')),
          415: problemResponse(problemList('unsupported-media-type')),
          429: problemResponse(problemList('rate-limited'), { 'Retry-After': headerRef('Retry-After'), ...rateHeaders }),
        },
      }),
    },
    [E.agent.path]: doc(E.agent, 'application/json', ref('AgentManifest'), 'The agent manifest.'),
    [E.openapi.path]: doc(E.openapi, 'application/json', { type: 'object', required: ['openapi', 'info', 'paths'], properties: { openapi: { const: '3.1.0' } } }, 'This document.'),
    [E.llms.path]: doc(E.llms, 'text/markdown', { type: 'string' }, 'llms.txt (Markdown).'),
    [E.llmsFull.path]: doc(E.llmsFull, 'text/markdown', { type: 'string' }, 'llms-full.txt (Markdown).'),
    [E.interoperability.path]: doc(E.interoperability, 'application/json', ref('Interoperability'), 'Supported protocols and identifiers.'),
    [E.metrics.path]: {
      get: operation(E.metrics, {
        responses: {
          200: {
            description: 'Prometheus text exposition format 0.0.4.',
            headers: TRACE_HEADERS,
            content: { 'text/plain': { schema: { type: 'string', description: 'Lines of `# HELP`, `# TYPE` and samples.' } } },
          },
          401: platformUnauthorized,
          404: platformNotFound,
        },
      }),
    },
    [E.status.path]: {
      get: operation(E.status, {
        responses: {
          200: jsonResponse('Operational status.', ref('Status')),
          401: platformUnauthorized,
          404: platformNotFound,
        },
      }),
    },
  };

  const queryParams = Object.fromEntries(PARAMS.map((d) => [`query.${d.name}`, {
    name: d.name,
    in: 'query',
    required: false,
    description: paramDescription(d) + (d.type === 'boolean' ? ' In the query string and form fields also 1 or 0.' : ''),
    schema: d.type === 'boolean' ? { oneOf: [{ type: 'boolean' }, { enum: ['1', '0'] }], default: d.default } : paramJsonSchema(d),
  }]));

  const imageUrl = { type: 'string', format: 'uri', description: IMAGE_URL_DESCRIPTION };

  return {
    openapi: '3.1.0',
    info: {
      title: 'v2a',
      version: VERSION,
      summary: 'Images to character art: text, ANSI, HTML, SVG and JSON, over HTTP and MCP.',
      description:
        'Converts one raster image into character art. Linear-light Rec. 709 luminance, percentile auto-levels, unsharp-mask detail, ' +
        'contour-aware structural glyphs, optional Sobel edges and Floyd-Steinberg dithering, bilateral denoising, and the Auto Director ' +
        'that tunes unset parameters against a quality rubric. Errors are RFC 9457 problem details. Render, health, manifests, discovery ' +
        `and MCP need no credentials. The protected platform actions (${ENDPOINT_LIST.filter((e) => e.protected).map((e) => `${e.method} ${e.path}`).join(', ')}) ` +
        'need the platform key (PLATFORM_API_KEY) as Authorization: Bearer or X-Platform-API-Key, and are 404 when no key is configured. ' +
        'With the key configured, redacted spans of the render lifecycle and of MCP tool calls are exported over OTLP/HTTP.\n\nServer settings: ' +
        describeConfig().map((c) => `${c.name} (default ${c.default})`).join(', ') + '.',
      license: { name: 'MIT', identifier: 'MIT' },
    },
    servers: [{ url: baseUrl }],
    tags: [
      { name: 'health', description: 'Liveness' },
      { name: 'render', description: 'Image to character art' },
      { name: 'handoff', description: 'Browser-to-receiver frame handoff' },
      { name: 'mcp', description: 'Model Context Protocol' },
      { name: 'discovery', description: 'Manifests and documents for agents' },
      { name: 'platform', description: 'Protected platform actions (platform key)' },
    ],
    paths,
    components: {
      schemas: {
        Problem: PROBLEM_SCHEMA,
        Health: HEALTH_SCHEMA,
        Status: STATUS_SCHEMA,
        RenderParameters: { type: 'object', description: 'Render parameters (all optional).', properties: paramProperties(), additionalProperties: false },
        RenderJsonRequest: {
          type: 'object',
          description: 'Exactly one of imageUrl and imageBase64, plus optional render parameters.',
          properties: { imageUrl, imageBase64: { type: 'string', description: IMAGE_BASE64_DESCRIPTION }, ...paramProperties() },
          additionalProperties: false,
          oneOf: [{ required: ['imageUrl'] }, { required: ['imageBase64'] }],
        },
        RenderMultipartRequest: {
          type: 'object',
          description: 'The file field image (or a text field imageUrl), plus optional render parameters as text fields.',
          properties: {
            image: { type: 'string', contentMediaType: 'application/octet-stream', description: `The image file, at most ${config.maxImageBytes} bytes and ${config.maxImagePixels} pixels.` },
            imageUrl,
            ...paramProperties(),
          },
          additionalProperties: false,
          oneOf: [{ required: ['image'] }, { required: ['imageUrl'] }],
        },
        RenderJsonOutput: embed(JSON_OUTPUT_SCHEMA),
        RenderJsonCompactOutput: embed(JSON_COMPACT_OUTPUT_SCHEMA),
        RenderToolArguments: renderToolInputSchema(),
        HandoffManifest: HANDOFF_SCHEMA,
        AgentManifest: AGENT_SCHEMA,
        Interoperability: INTEROPERABILITY_SCHEMA,
        JsonRpcMessage: JSONRPC_MESSAGE,
        JsonRpcResponse: JSONRPC_RESPONSE,
      },
      parameters: {
        traceparent: { name: 'traceparent', in: 'header', required: false, description: 'W3C trace context; a valid one is continued, otherwise a new trace starts.', schema: { type: 'string', pattern: TRACEPARENT_PATTERN } },
        tracestate: { name: 'tracestate', in: 'header', required: false, description: 'W3C tracestate; kept when well formed with at most 32 members and 512 characters.', schema: { type: 'string' } },
        'MCP-Protocol-Version': { name: 'MCP-Protocol-Version', in: 'header', required: false, description: 'MCP protocol version negotiated in initialize.', schema: { enum: [...SUPPORTED_PROTOCOL_VERSIONS] } },
        ...queryParams,
      },
      headers: {
        traceparent: { description: 'The server span: 00-<traceId>-<spanId>-<flags>.', schema: { type: 'string', pattern: TRACEPARENT_PATTERN } },
        tracestate: { description: 'The caller\'s tracestate, when it was valid.', schema: { type: 'string' } },
        'Content-Disposition': { description: 'inline; filename="ascii.<ext>" (txt, ans, html, json, svg).', schema: { type: 'string' } },
        'X-Auto-Director': { description: 'Auto Director verdict: <target_met|best_effort>; rubric=<rubric>; score=<0..1>.', schema: { type: 'string', pattern: '^(target_met|best_effort); rubric=[a-z-]+; score=[0-9.]+$' } },
        'Retry-After': { description: 'Seconds to wait before retrying.', schema: { type: 'integer', minimum: 0 } },
        'RateLimit-Limit': { description: 'Requests allowed per window (one minute).', schema: { type: 'integer' } },
        'RateLimit-Remaining': { description: 'Requests left in the window.', schema: { type: 'integer' } },
        'RateLimit-Reset': { description: 'Seconds until the window resets.', schema: { type: 'integer' } },
        Allow: { description: 'Methods the path supports.', schema: { type: 'string' } },
        'WWW-Authenticate': { description: 'Bearer realm="v2a" (no credential sent), with error="invalid_token" when a wrong key was sent.', schema: { type: 'string', pattern: '^Bearer realm="v2a"(, error="invalid_token")?$' } },
      },
      responses: {
        Error: problemResponse('Any other error: 404 not found, 405 method not allowed (with Allow), 500 internal error.'),
      },
      securitySchemes: {
        PlatformBearer: { type: 'http', scheme: 'bearer', description: 'Platform key (PLATFORM_API_KEY) for protected platform actions (GET /api/v1/metrics, GET /api/v1/status), compared in constant time. No public endpoint requires it.' },
        PlatformHeader: { type: 'apiKey', in: 'header', name: 'X-Platform-API-Key', description: 'The platform key in a header, for protected platform actions (GET /api/v1/metrics, GET /api/v1/status). No public endpoint requires it.' },
      },
    },
    externalDocs: { description: 'llms-full.txt: the full reference as Markdown', url: `${baseUrl}${E.llmsFull.path}` },
  };
}

