/**
 * The OpenAPI 3.1.0 document of the service, generated from the definitions the server runs on:
 * PARAMS (query, form and JSON parameters, the MCP tool schema), FORMAT_INFO (reply content
 * types), the json/json-compact JSON Schemas, the problem catalogue, the endpoint list and the MCP
 * protocol versions. Response body schemas live beside the code that builds each body (health,
 * status, problems, manifests, JSON-RPC) so a shape and its schema change together; this module
 * only assembles them. Nothing here restates a name, range or default.
 */
import { FORMATS, FORMATS_IN_WORDS, PARAMS, describeDomain, type Format, type ParamDef } from '../../core/params/definitions.js';
import { paramJsonSchema } from '../../core/params/schema.js';
import { FORMAT_INFO } from '../../core/format/info.js';
import { JSON_COMPACT_OUTPUT_SCHEMA, JSON_OUTPUT_SCHEMA, type JsonSchema } from '../../core/format/jsonSchemas.js';
import { VERSION } from '../../core/types.js';
import { describeConfig, type ServerConfig } from '../config.js';
import { HANDOFF_MANIFEST_SCHEMA } from '../../contract/handoff.js';
import { IMAGE_BASE64_DESCRIPTION, IMAGE_URL_DESCRIPTION, renderToolInputSchema } from '../mcp-tool.js';
import { JSONRPC_MESSAGE_SCHEMA, JSONRPC_RESPONSE_SCHEMA } from '../mcp/dispatcher.js';
import { SUPPORTED_PROTOCOL_VERSIONS } from '../mcp/protocol.js';
import { ERRORS } from '../../core/errors.js';
import { PROBLEM_SCHEMA, type ProblemSlug } from '../problem.js';
import { SMALL_BODY_BYTES } from '../routes/mcp.js';
import { HEALTH_SCHEMA, LIVENESS_SCHEMA, READINESS_SCHEMA } from '../routes/health.js';
import { STATUS_SCHEMA } from '../routes/platform.js';
import { TRACEPARENT_PATTERN } from '../trace-context.js';
import { AGENT_MANIFEST_SCHEMA } from './agent.js';
import { INTEROPERABILITY_SCHEMA } from './interoperability.js';
import { ENDPOINT_LIST, ENDPOINTS, type EndpointInfo } from '../../contract/endpoints.js';
import { VISIBLE_TOKEN } from '../request-id.js';

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

/** A parameter's default as documents print it: an empty one in words (`Default: .` said nothing). */
export function defaultText(def: ParamDef): string {
  return def.default === '' ? 'empty' : String(def.default);
}

function paramDescription(def: ParamDef): string {
  return `${def.description} Allowed: ${describeDomain(def)}. Default: ${defaultText(def)}.`;
}

/**
 * How a parameter may be spelt as text (query string, form field), as parseParams reads it
 * (core/params/validate.ts): trimmed first (JSON Schema's `\s` is String.prototype.trim's
 * whitespace, no-break space included), booleans in any case. The range is the typed schema's.
 */
const TEXT_SPELLINGS: Partial<Record<ParamDef['type'], { readonly pattern: string; readonly words: string }>> = {
  boolean: { pattern: '[Tt][Rr][Uu][Ee]|[Ff][Aa][Ll][Ss][Ee]|[01]', words: 'true, false, 1 or 0 in any case' },
  integer: { pattern: '[+-]?[0-9]{1,12}', words: 'decimal digits, a sign and leading zeros allowed' },
  number: { pattern: '[+-]?(?:[0-9]+\\.?[0-9]*|\\.[0-9]+)(?:[eE][+-]?[0-9]{1,3})?', words: 'a decimal number, e-notation allowed' },
  color: { pattern: '#?(?:[0-9a-fA-F]{3}|[0-9a-fA-F]{6})', words: 'a hex colour' },
};

/** A parameter's schema as text: its typed schema, or text spelling it (surrounding whitespace ignored). */
function textSchema(def: ParamDef): Obj {
  const { description: _description, ...typed } = paramJsonSchema(def);
  const spelling = TEXT_SPELLINGS[def.type];
  if (!spelling) return typed;
  const text = { type: 'string', pattern: `^\\s*(?:${spelling.pattern})\\s*$` };
  if (def.type === 'color') return { ...typed, ...text };
  const { default: dflt, ...type } = typed;
  return { anyOf: [type, text], default: dflt };
}

/** A parameter's description for a text carrier: with how it may be spelt. */
function textDescription(def: ParamDef): string {
  const spelling = TEXT_SPELLINGS[def.type];
  return paramDescription(def) + (spelling ? ` As text: ${spelling.words}, surrounding whitespace ignored.` : '');
}

/** Render parameters as object properties: typed (JSON), or as text (form fields). */
function paramProperties(text = false): Record<string, Obj> {
  return Object.fromEntries(PARAMS.map((d) => [d.name, text ? { ...textSchema(d), description: textDescription(d) } : { ...paramJsonSchema(d), description: paramDescription(d) }]));
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
      content[type] = { schema: { type: 'string', format: 'binary', contentMediaType: type, description: `${description} Extension: the art rasterised at 8x16 px per cell (8 / cellAspect px tall for another cellAspect) from the reference font's glyph data (no system fonts), so the same parameters give the same bytes on every machine.` } };
    } else if (type === 'application/json') {
      content[type] = { schema: { oneOf: formats.map((f) => ref(f === 'json' ? 'RenderJsonOutput' : 'RenderJsonCompactOutput')), description } };
    } else {
      content[type] = { schema: { type: 'string', description } };
    }
  }
  return content;
}

/** Headers of every reply: the trace context, and a proxy's request id echoed (request-id.ts). */
const TRACE_HEADERS = { traceparent: headerRef('traceparent'), tracestate: headerRef('tracestate'), 'X-Request-Id': headerRef('X-Request-Id') };
/** Request headers every operation reads: the trace context and a proxy's request id. */
const TRACE_PARAMS = [paramRef('traceparent'), paramRef('tracestate'), paramRef('X-Request-Id')];

function problemResponse(description: string, headers: Obj = {}): Obj {
  return {
    description,
    headers: { ...TRACE_HEADERS, ...headers },
    content: { 'application/problem+json': { schema: ref('Problem') } },
  };
}

function problemList(...slugs: ProblemSlug[]): string {
  return slugs.map((s) => `${s}: ${ERRORS[s].description}`).join(' ');
}

/** Part types an upload in the image field may have (the bytes, not the type, decide the format). */
const UPLOAD_TYPES = ['image/*', 'application/octet-stream'];

/** The file extensions of Content-Disposition, from the format table. */
const EXTENSIONS = [...new Set(FORMATS.map((f) => FORMAT_INFO[f].extension))];

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
    parameters: TRACE_PARAMS,
    ...rest,
    responses: { ...(rest.responses as Obj), default: responseRef('Error') },
  };
}

/** JsonRpcMessage with the arguments of tools/call: the one tool's (RenderToolArguments). */
function toolCallMessage(): Obj {
  const message = JSONRPC_MESSAGE_SCHEMA as Obj & { properties: Obj };
  return {
    ...message,
    properties: {
      ...message.properties,
      params: { type: 'object', description: 'For tools/call: name and arguments.', properties: { name: { type: 'string' }, arguments: ref('RenderToolArguments') } },
    },
  };
}

/** The OpenAPI document; `baseUrl` goes into `servers`. */
export function buildOpenApi(config: ServerConfig, baseUrl: string): Obj {
  const E = ENDPOINTS;
  const rateHeaders = { 'RateLimit-Limit': headerRef('RateLimit-Limit'), 'RateLimit-Remaining': headerRef('RateLimit-Remaining'), 'RateLimit-Reset': headerRef('RateLimit-Reset') };
  // Render and MCP check the rate limit before the body is read: every reply after that check
  // carries RateLimit-*, the refusals of the body and of the render as much as a 200.
  const limitedProblem = (description: string, headers: Obj = {}) => problemResponse(description, { ...headers, ...rateHeaders });
  const healthOp = (e: EndpointInfo) => ({
    get: operation(e, {
      responses: {
        200: jsonResponse('Service healthy.', ref('Health')),
        503: jsonResponse('Shutting down (same envelope, status shutting_down), with Retry-After.', ref('Health'), { 'Retry-After': headerRef('Retry-After') }),
      },
    }),
  });
  const doc = (e: EndpointInfo, type: string, schema: Obj, description: string) => ({
    get: operation(e, {
      responses: {
        200: { description, headers: { ...TRACE_HEADERS, ETag: headerRef('ETag') }, content: { [type]: { schema } } },
        304: { description: 'Not modified: an If-None-Match tag (weak or strong) is the current ETag.', headers: { ...TRACE_HEADERS, ETag: headerRef('ETag') } },
      },
    }),
  });

  // Refusals of the request itself, before or while its body is read (plugins/body-guard.ts); a
  // body that stalls past the rate limit check is a 408 with RateLimit-*, Node's own 414 and 431 never.
  const requestRefusals = {
    408: limitedProblem(problemList('request-timeout')),
    414: problemResponse(problemList('uri-too-long')),
    431: problemResponse(problemList('headers-too-large')),
  };
  const platformUnauthorized = problemResponse(`No platform key, or a wrong one. ${problemList('unauthorized')}`, { 'WWW-Authenticate': headerRef('WWW-Authenticate') });
  const platformNotFound = problemResponse('PLATFORM_API_KEY is not configured on this server: the protected platform actions do not exist (the same reply as any unknown path).');

  const paths: Obj = {
    [E.health.path]: healthOp(E.health),
    [E.healthV1.path]: healthOp(E.healthV1),
    [E.healthLive.path]: { get: operation(E.healthLive, { responses: { 200: jsonResponse('The process answers.', LIVENESS_SCHEMA) } }) },
    [E.healthReady.path]: {
      get: operation(E.healthReady, {
        responses: {
          200: jsonResponse('The render workers are warm: send work.', READINESS_SCHEMA),
          503: jsonResponse('Not ready: `warming` (workers warming up), `draining` (shutting down, with Retry-After) or `failed` (a worker cannot render its warm-up image; the server log says why).', READINESS_SCHEMA, { 'Retry-After': headerRef('Retry-After') }),
        },
      }),
    },
    [E.render.path]: {
      post: operation(E.render, {
        parameters: [...TRACE_PARAMS, ...PARAMS.map((d) => paramRef(`query.${d.name}`))],
        requestBody: {
          required: true,
          description: 'Exactly one image. Render parameters may also be form fields or JSON keys (each parameter in one carrier only).',
          content: {
            'multipart/form-data': { schema: ref('RenderMultipartRequest'), encoding: { image: { contentType: UPLOAD_TYPES.join(', ') } } },
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
          400: limitedProblem(`Bad request. ${problemList('invalid-parameters', 'invalid-request', 'duplicate-key', 'json-too-complex', 'missing-image', 'multiple-images', 'invalid-base64', 'unsupported-image', 'undecodable-image', 'image-too-tall', 'image-url-not-allowed')}`),
          ...requestRefusals,
          413: limitedProblem(`Too large. ${problemList('image-too-large', 'request-too-large')}`),
          415: limitedProblem(`A Content-Type this endpoint does not read (JSON in a charset other than UTF-8 included), or a Content-Encoding other than identity. ${problemList('unsupported-media-type')}`, { 'Accept-Encoding': headerRef('Accept-Encoding') }),
          429: limitedProblem(problemList('rate-limited'), { 'Retry-After': headerRef('Retry-After') }),
          502: limitedProblem(problemList('image-fetch-failed')),
          503: limitedProblem(`Unavailable. ${problemList('overloaded', 'render-timeout', 'shutting-down')}`, { 'Retry-After': headerRef('Retry-After') }),
        },
      }),
    },
    [E.handoff.path]: doc(E.handoff, 'application/json', ref('HandoffManifest'), 'The handoff manifest.'),
    [E.mcp.path]: {
      post: operation(E.mcp, {
        parameters: [paramRef('traceparent'), paramRef('tracestate'), paramRef('MCP-Protocol-Version'), paramRef('Mcp-Session-Id'), paramRef('X-Request-Id')],
        requestBody: {
          required: true,
          content: { 'application/json': { schema: { oneOf: [ref('JsonRpcMessage'), { type: 'array', items: ref('JsonRpcMessage'), minItems: 1, maxItems: config.mcpMaxBatch }] } } },
        },
        responses: {
          200: jsonResponse(`JSON-RPC reply: one response object, or an array for a batch (notifications and cancelled requests get no reply). A body whose Content-Length is at most ${SMALL_BODY_BYTES / 1024} KiB that is one tools/call finding no render slot is answered here too: an isError result giving the reason and when to retry (with Retry-After).`, { oneOf: [ref('JsonRpcResponse'), { type: 'array', items: ref('JsonRpcResponse') }] }, { ...rateHeaders, 'Mcp-Session-Id': headerRef('Mcp-Session-Id'), 'Retry-After': headerRef('Retry-After') }),
          202: { description: 'Only notifications (or client responses) were sent, or the client cancelled every request of the body (notifications/cancelled; a batch\'s other replies are sent as usual): no body.', headers: { ...TRACE_HEADERS, ...rateHeaders } },
          400: limitedProblem(`An unsupported MCP-Protocol-Version header, a missing or invalid Host header, two Host or two Content-Type headers, or a body past the JSON bounds (a key given twice or \`__proto__\` is a JSON-RPC error of its message instead). ${problemList('invalid-request', 'json-too-complex')}`),
          403: limitedProblem(problemList('forbidden-origin')),
          ...requestRefusals,
          413: limitedProblem(problemList('request-too-large')),
          415: limitedProblem(`Not application/json (or JSON in a charset other than UTF-8), or a Content-Encoding other than identity. ${problemList('unsupported-media-type')}`, { 'Accept-Encoding': headerRef('Accept-Encoding') }),
          429: limitedProblem(problemList('rate-limited'), { 'Retry-After': headerRef('Retry-After') }),
          503: limitedProblem(`Unavailable: every render slot is taken when a body over ${SMALL_BODY_BYTES / 1024} KiB, or without a Content-Length (chunked), arrives (refused before it is read) or when a batch's tools/call requests need more slots than are free; or the server is shutting down. ${problemList('overloaded', 'shutting-down')}`, { 'Retry-After': headerRef('Retry-After') }),
        },
      }),
    },
    [E.agent.path]: doc(E.agent, 'application/json', ref('AgentManifest'), 'The agent manifest.'),
    [E.openapi.path]: doc(E.openapi, 'application/json', { type: 'object', required: ['openapi', 'info', 'paths'], properties: { openapi: { const: '3.1.0' }, info: { type: 'object' }, paths: { type: 'object' } } }, 'This document.'),
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
    description: textDescription(d),
    schema: textSchema(d),
  }]));

  const imageUrl = { type: 'string', format: 'uri', description: IMAGE_URL_DESCRIPTION };

  return {
    openapi: '3.1.0',
    info: {
      title: 'v2a',
      version: VERSION,
      summary: `Images to character art: ${FORMATS_IN_WORDS}, over HTTP and MCP.`,
      description:
        'Converts one raster image into character art. Linear-light Rec. 709 luminance, percentile auto-levels, unsharp-mask detail, ' +
        'contour-aware structural glyphs, optional Sobel edges and Floyd-Steinberg dithering, bilateral denoising, and the Auto Director ' +
        'that tunes unset parameters against a quality rubric. Errors are RFC 9457 problem details. Render, health, manifests, discovery ' +
        `and MCP need no credentials. The protected platform actions (${ENDPOINT_LIST.filter((e) => e.protected).map((e) => `${e.method} ${e.path}`).join(', ')}) ` +
        'need the platform key (PLATFORM_API_KEY) as Authorization: Bearer or X-Platform-API-Key, and are 404 when no key is configured. ' +
        'With the key configured, redacted spans of the render lifecycle and of MCP tool calls are exported over OTLP/HTTP. ' +
        (config.compress
          ? 'Replies of a text-like type (text, HTML, JSON, SVG, Markdown, problem details) of 1 KiB or more are compressed (br, gzip or deflate) when Accept-Encoding asks, with Vary: Accept-Encoding; PNG never.'
          : 'Replies are not compressed (V2A_COMPRESS is off).') +
        '\n\nServer settings: ' +
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
            // format binary: generators type it as a file (Blob); contentMediaType as the encoding has it.
            image: { type: 'string', format: 'binary', contentMediaType: UPLOAD_TYPES[0], description: `The image file (its part typed ${UPLOAD_TYPES.join(' or ')}: the bytes decide the format), at most ${config.maxImageBytes} bytes and ${config.maxImagePixels} pixels.` },
            imageUrl,
            ...paramProperties(true),
          },
          additionalProperties: false,
          oneOf: [{ required: ['image'] }, { required: ['imageUrl'] }],
        },
        RenderJsonOutput: embed(JSON_OUTPUT_SCHEMA),
        RenderJsonCompactOutput: embed(JSON_COMPACT_OUTPUT_SCHEMA),
        RenderToolArguments: renderToolInputSchema(),
        HandoffManifest: HANDOFF_MANIFEST_SCHEMA,
        AgentManifest: AGENT_MANIFEST_SCHEMA,
        Interoperability: INTEROPERABILITY_SCHEMA,
        JsonRpcMessage: toolCallMessage(),
        JsonRpcResponse: JSONRPC_RESPONSE_SCHEMA,
      },
      parameters: {
        traceparent: { name: 'traceparent', in: 'header', required: false, description: 'W3C trace context; a valid one is continued, otherwise a new trace starts.', schema: { type: 'string', pattern: TRACEPARENT_PATTERN } },
        tracestate: { name: 'tracestate', in: 'header', required: false, description: 'W3C tracestate; kept when well formed with at most 32 members and 512 characters.', schema: { type: 'string' } },
        'X-Request-Id': { name: 'X-Request-Id', in: 'header', required: false, description: 'A proxy\'s request id: one token of at most 128 visible ASCII characters is logged with the request and echoed; anything else is ignored.', schema: { type: 'string' } },
        'MCP-Protocol-Version': { name: 'MCP-Protocol-Version', in: 'header', required: false, description: 'MCP protocol version negotiated in initialize.', schema: { enum: [...SUPPORTED_PROTOCOL_VERSIONS] } },
        'Mcp-Session-Id': { name: 'Mcp-Session-Id', in: 'header', required: false, description: 'The id initialize handed out: a notifications/cancelled stops only calls sent with the same id. No request needs it.', schema: { type: 'string' } },
        ...queryParams,
      },
      headers: {
        traceparent: { description: 'The server span: 00-<traceId>-<spanId>-<flags>.', schema: { type: 'string', pattern: TRACEPARENT_PATTERN } },
        tracestate: { description: 'The caller\'s tracestate, when it was valid.', schema: { type: 'string' } },
        'X-Request-Id': { description: 'The request\'s X-Request-Id, when it was one token of at most 128 visible ASCII characters.', schema: { type: 'string', pattern: VISIBLE_TOKEN.source } },
        'Content-Disposition': { description: `inline; filename="ascii.<ext>" (${EXTENSIONS.join(', ')}).`, schema: { type: 'string', pattern: `^inline; filename="ascii\\.(${EXTENSIONS.join('|')})"$` } },
        'X-Auto-Director': { description: 'Auto Director verdict: <target_met|best_effort>; rubric=<rubric>; score=<0..1>.', schema: { type: 'string', pattern: '^(target_met|best_effort); rubric=[a-z-]+; score=[0-9.]+$' } },
        'Retry-After': { description: 'Seconds to wait before retrying.', schema: { type: 'integer', minimum: 0 } },
        ETag: { description: 'A tag of the document (revalidate with If-None-Match): strong, or weak (W/"...") to a client whose Accept-Encoding accepts a content coding (the coded and the identity bodies share it).', schema: { type: 'string', pattern: '^(W/)?"[A-Za-z0-9_-]{27}"$' } },
        'RateLimit-Limit': { description: 'Requests allowed per window (one minute).', schema: { type: 'integer' } },
        'RateLimit-Remaining': { description: 'Requests left in the window.', schema: { type: 'integer' } },
        'RateLimit-Reset': { description: 'Seconds until the window resets.', schema: { type: 'integer' } },
        Allow: { description: 'Methods the path supports, OPTIONS included.', schema: { type: 'string' } },
        'Mcp-Session-Id': { description: 'On the reply to initialize: a new random id that scopes notifications/cancelled to this client (stored nowhere).', schema: { type: 'string', pattern: '^[0-9a-f-]{36}$' } },
        'Accept-Encoding': { description: 'On a 415 for a compressed body: identity, the only content coding a request body may have.', schema: { const: 'identity' } },
        'WWW-Authenticate': { description: 'Bearer realm="v2a" (no credential sent), with error="invalid_token" when a wrong key was sent.', schema: { type: 'string', pattern: '^Bearer realm="v2a"(, error="invalid_token")?$' } },
      },
      responses: {
        Error: problemResponse('Any other error, on any path: 400 for a missing, repeated or invalid Host (or, behind a trusted proxy, X-Forwarded-Host or X-Forwarded-Proto), a request that is not valid HTTP/1.1 or a request path that is not valid percent-encoding, 404 not found, ' +
          `405 method not allowed (with Allow; GET and DELETE ${E.mcp.path} too: no SSE stream, and no session to end, the Mcp-Session-Id of initialize only scoping notifications/cancelled), ` +
          '408 request headers that did not arrive in time, 414 a request line too long, 431 request headers too large (these three close the connection), 500 internal error, ' +
          '503 shutting-down (with Retry-After) on every path but the health probes while the server drains. ' +
          `On ${E.render.method} ${E.render.path} and ${E.mcp.method} ${E.mcp.path}, an error after the rate limit check carries RateLimit-* as well.`,
        { Allow: headerRef('Allow'), 'Retry-After': headerRef('Retry-After'), ...rateHeaders }),
      },
      securitySchemes: {
        PlatformBearer: { type: 'http', scheme: 'bearer', description: 'Platform key (PLATFORM_API_KEY) for protected platform actions (GET /api/v1/metrics, GET /api/v1/status), compared in constant time. No public endpoint requires it.' },
        PlatformHeader: { type: 'apiKey', in: 'header', name: 'X-Platform-API-Key', description: 'The platform key in a header, for protected platform actions (GET /api/v1/metrics, GET /api/v1/status). No public endpoint requires it.' },
      },
    },
    externalDocs: { description: 'llms-full.txt: the full reference as Markdown', url: `${baseUrl}${E.llmsFull.path}` },
  };
}

