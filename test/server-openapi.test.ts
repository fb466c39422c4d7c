/**
 * The served OpenAPI document and the other discovery documents: the document validates with a
 * real OpenAPI validator, describes every endpoint, parameter, content type, error shape and
 * security scheme from the same definitions the server runs on, and the recipes it and the agent
 * manifest publish actually run.
 */
import { MCP_ROOT_HELP } from '../src/contract/mcp-stdio.js';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import sharp from 'sharp';
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { after, before, describe, test } from 'node:test';
import { compileErrors, validate } from '@readme/openapi-parser';
import { CHROMA_ENCODING, FORMAT_INFO } from '../src/core/format/info.js';
import { CHARSETS, DEFAULTS, FORMATS, PARAMS } from '../src/core/params/definitions.js';
import { parseParams } from '../src/core/params/validate.js';
import { VERSION } from '../src/core/types.js';
import { describeConfig } from '../src/server/config.js';
import { ENDPOINT_LIST, ENDPOINTS } from '../src/contract/endpoints.js';
import { HANDOFF_PROTOCOL } from '../src/contract/handoff.js';
import { renderToolInputSchema } from '../src/server/mcp-tool.js';
import { SUPPORTED_PROTOCOL_VERSIONS } from '../src/server/mcp/protocol.js';
import { PROBLEM_TYPE_BASE, PROBLEM_TYPES } from '../src/server/problem.js';
import {
  call, photo, responseValidator, startTestServer, validatingCaller, type Reply, type ResponseValidator, type TestServer,
} from './server-helpers.js';
import Ajv2020Module from 'ajv/dist/2020.js';

const Ajv2020 = ((Ajv2020Module as unknown as { default?: unknown }).default ?? Ajv2020Module) as new (opts: object) => { compile(schema: object): (data: unknown) => boolean };

/**
 * A request whose headers are sent with `body` (of the declared length or not); its reply as the
 * validator reads one, once it comes.
 */
function rawCall(base: string, method: string, path: string, headers: Record<string, string | number>, body = ''): Promise<Reply> {
  const { port } = new URL(base);
  return new Promise((resolve, reject) => {
    const request = http.request({ host: '127.0.0.1', port, method, path, headers });
    request.on('response', (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const bytes = Buffer.concat(chunks);
        const text = bytes.toString();
        const contentType = String(res.headers['content-type'] ?? '');
        const headers = new Headers(Object.entries(res.headers).flatMap(([k, v]) => (v === undefined ? [] : [[k, String(v)] as [string, string]])));
        resolve({ status: res.statusCode!, headers, text, bytes, json: /json/.test(contentType) && text ? JSON.parse(text) : undefined, contentType });
        request.destroy();
      });
    });
    request.on('error', reject);
    if (body) request.write(body);
    request.flushHeaders();
  });
}

const run = promisify(execFile);

let server: TestServer;
let doc: any;
let validator: ResponseValidator;
let req: ReturnType<typeof validatingCaller>;

before(async () => {
  server = await startTestServer({ V2A_WORKERS: '1' });
  const r = await call(`${server.base}${ENDPOINTS.openapi.path}`);
  doc = r.json;
  validator = responseValidator(doc);
  validator.check('GET', ENDPOINTS.openapi.path, r);
  req = validatingCaller(() => validator, server.base);
});
after(async () => server?.close());

function resolve(ref: { $ref?: string } | undefined): any {
  if (!ref?.$ref) return ref;
  return ref.$ref.replace(/^#\//, '').split('/').reduce((o: any, p) => o?.[p.replace(/~1/g, '/').replace(/~0/g, '~')], doc);
}

describe('OpenAPI document', () => {
  test('is served as JSON and validates with @readme/openapi-parser', async () => {
    const r = await req('GET', ENDPOINTS.openapi.path);
    assert.equal(r.status, 200);
    assert.match(r.contentType, /^application\/json/);
    const result = await validate(structuredClone(doc));
    assert.ok(result.valid, result.valid ? '' : compileErrors(result));
    assert.equal(doc.openapi, '3.1.0');
    assert.equal(doc.info.version, VERSION);
    assert.equal(doc.servers[0].url, server.base);
  });

  test('the discovery documents and the handoff manifest carry an ETag: a cache revalidates them with If-None-Match (304), weak, strong, * or a list', async () => {
    for (const path of [ENDPOINTS.openapi.path, ENDPOINTS.agent.path, ENDPOINTS.llms.path, ENDPOINTS.llmsFull.path, ENDPOINTS.interoperability.path, ENDPOINTS.handoff.path]) {
      const first = await req('GET', path);
      const etag = first.headers.get('etag');
      // fetch accepts gzip: the tag is weak (plugins/compress.ts), and its strong form matches too.
      assert.match(etag ?? '', /^W\/"[\w-]{27}"$/, path);
      assert.equal(first.headers.get('cache-control'), 'public, max-age=300');
      const strong = etag!.slice(2);
      for (const inm of [etag!, strong, '*', `"stale", ${strong}`, `"stale", ${etag}`]) {
        const again = await req('GET', path, { headers: { 'if-none-match': inm } });
        assert.equal(again.status, 304, `${path} ${inm}`);
        assert.equal(again.text, '');
        assert.equal(again.headers.get('etag'), etag);
      }
      assert.equal((await call(server.base + path, { headers: { 'if-none-match': '"stale"' } })).status, 200);
    }
  });

  test('with a V2A_CORS_ORIGINS list, the documents\' Vary keeps Origin beside the request headers they are built from (200 and 304), each named once', async () => {
    const origin = 'https://app.example.com';
    for (const [env, expected] of [
      [{}, ['Origin', 'Host', 'X-Forwarded-Host', 'X-Forwarded-Proto']],
      [{ V2A_PUBLIC_URL: 'https://v2a.example.com' }, ['Origin']],
    ] as const) {
      const s = await startTestServer({ V2A_CORS_ORIGINS: origin, V2A_WORKERS: '1', ...env });
      try {
        for (const path of [ENDPOINTS.agent.path, ENDPOINTS.openapi.path, ENDPOINTS.llms.path, ENDPOINTS.llmsFull.path, ENDPOINTS.interoperability.path, ENDPOINTS.handoff.path]) {
          const first = await call(`${s.base}${path}`, { headers: { origin } });
          const again = await call(`${s.base}${path}`, { headers: { origin, 'if-none-match': first.headers.get('etag')! } });
          assert.equal(again.status, 304);
          for (const r of [first, again]) {
            assert.equal(r.headers.get('access-control-allow-origin'), origin);
            const vary = (r.headers.get('vary') ?? '').split(/\s*,\s*/);
            // Accept-Encoding: fetch accepts gzip, and every document may be coded (plugins/compress.ts).
            const want = [...(path === ENDPOINTS.handoff.path ? ['Origin'] : expected), 'Accept-Encoding'];
            assert.deepEqual(vary.map((v) => v.toLowerCase()).sort(), want.map((v) => v.toLowerCase()).sort(), `${path} ${r.status}: ${r.headers.get('vary')}`);
          }
        }
      } finally {
        await s.close();
      }
    }
  });

  test('describes every endpoint with its method, and nothing else', () => {
    const documented = Object.entries<any>(doc.paths).flatMap(([path, ops]) => Object.keys(ops).map((m) => `${m.toUpperCase()} ${path}`));
    assert.deepEqual(documented.sort(), ENDPOINT_LIST.map((e) => `${e.method} ${e.path}`).sort());
    for (const e of ENDPOINT_LIST) {
      const op = doc.paths[e.path][e.method.toLowerCase()];
      assert.equal(op.operationId, e.operationId);
      if (e.protected) assert.deepEqual(op.security, [{ PlatformBearer: [] }, { PlatformHeader: [] }], `${e.path} needs the platform key`);
      else assert.deepEqual(op.security, [], `${e.path} needs no credentials`);
      assert.ok(op.responses.default, `${e.path} documents the generic error`);
      const headers = op.parameters.map((p: any) => resolve(p)).filter((p: any) => p.in === 'header').map((p: any) => p.name);
      assert.ok(headers.includes('traceparent') && headers.includes('tracestate'), e.path);
    }
  });

  test('the Kubernetes probes are documented and answer as documented', async () => {
    const live = await req('GET', ENDPOINTS.healthLive.path);
    assert.equal(live.json.status, 'alive');
    const ready = await req('GET', ENDPOINTS.healthReady.path);
    assert.ok(['ready', 'warming'].includes(ready.json.status), ready.text);
  });

  test('every render parameter in the query, the JSON body and the multipart body, with its range and default', () => {
    const op = doc.paths[ENDPOINTS.render.path].post;
    const query = op.parameters.map((p: any) => resolve(p)).filter((p: any) => p.in === 'query');
    assert.deepEqual(query.map((p: any) => p.name), PARAMS.map((d) => d.name));
    const json = resolve(op.requestBody.content['application/json'].schema);
    const form = resolve(op.requestBody.content['multipart/form-data'].schema);
    assert.deepEqual(Object.keys(json.properties), ['imageUrl', 'imageBase64', ...PARAMS.map((d) => d.name)]);
    assert.deepEqual(Object.keys(form.properties), ['image', 'imageUrl', ...PARAMS.map((d) => d.name)]);
    assert.equal(json.additionalProperties, false);
    for (const d of PARAMS) {
      const s = json.properties[d.name];
      assert.deepEqual(s.default, d.default, d.name);
      if (d.type === 'integer' || d.type === 'number') {
        assert.equal(s.type, d.type);
        assert.deepEqual([s.minimum, s.maximum], [d.min, d.max], d.name);
      }
      if (d.type === 'enum') assert.deepEqual(s.enum, [...d.values]);
      if (d.type === 'boolean') assert.equal(s.type, 'boolean');
      assert.ok(s.description.includes(d.description), d.name);
    }
  });

  test('the render reply content types are the format table', () => {
    const content = doc.paths[ENDPOINTS.render.path].post.responses['200'].content;
    assert.deepEqual(Object.keys(content).sort(), [...new Set(FORMATS.map((f) => FORMAT_INFO[f].contentType))].sort());
    assert.deepEqual(content['application/json'].schema.oneOf.map((s: any) => s.$ref), ['#/components/schemas/RenderJsonOutput', '#/components/schemas/RenderJsonCompactOutput']);
    const headers = doc.paths[ENDPOINTS.render.path].post.responses['200'].headers;
    for (const h of ['Content-Disposition', 'X-Auto-Director', 'traceparent', 'RateLimit-Limit']) assert.ok(headers[h], h);
  });

  test('errors are problem+json with the catalogue of types', () => {
    const problem = doc.components.schemas.Problem;
    assert.deepEqual(problem.required, ['type', 'title', 'status', 'detail', 'instance', 'traceId']);
    assert.deepEqual(problem.properties.type.enum, Object.keys(PROBLEM_TYPES).map((s) => PROBLEM_TYPE_BASE + s));
    const responses = doc.paths[ENDPOINTS.render.path].post.responses;
    for (const status of ['400', '413', '415', '429', '502', '503']) {
      assert.deepEqual(Object.keys(responses[status].content), ['application/problem+json'], status);
    }
    assert.ok(responses['429'].headers['Retry-After'] && responses['503'].headers['Retry-After']);
  });

  test('security schemes are declared and required only by the protected platform actions', () => {
    assert.deepEqual(doc.components.securitySchemes.PlatformBearer, { ...doc.components.securitySchemes.PlatformBearer, type: 'http', scheme: 'bearer' });
    assert.deepEqual(doc.components.securitySchemes.PlatformHeader, { ...doc.components.securitySchemes.PlatformHeader, type: 'apiKey', in: 'header', name: 'X-Platform-API-Key' });
    assert.equal(doc.security, undefined);
    const secured = Object.entries<any>(doc.paths).flatMap(([path, ops]) => Object.values<any>(ops).filter((op) => op.security?.length).map(() => path));
    assert.deepEqual(secured.sort(), [ENDPOINTS.metrics.path, ENDPOINTS.status.path].sort());
  });

  test('every operation documents a proxy\'s X-Request-Id, and every reply its echo, as the trace headers (request-id.ts)', () => {
    for (const [path, ops] of Object.entries<any>(doc.paths)) {
      for (const [method, op] of Object.entries<any>(ops)) {
        assert.ok(op.parameters.some((p: any) => resolve(p).name === 'X-Request-Id'), `${method} ${path}`);
        for (const [status, reply] of Object.entries<any>(op.responses)) {
          const headers = resolve(reply).headers ?? {};
          if ('traceparent' in headers) assert.ok('X-Request-Id' in headers, `${method} ${path} ${status}`);
        }
      }
    }
  });

  test('the MCP tool schema and the batch bound come from the same definitions', () => {
    assert.deepEqual(doc.components.schemas.RenderToolArguments, renderToolInputSchema());
    const body = doc.paths[ENDPOINTS.mcp.path].post.requestBody.content['application/json'].schema;
    assert.equal(body.oneOf[1].maxItems, server.config.mcpMaxBatch);
    assert.deepEqual(resolve(doc.paths[ENDPOINTS.mcp.path].post.parameters[2]).schema.enum, [...SUPPORTED_PROTOCOL_VERSIONS]);
  });

  test('the multipart image field is a file (format binary) of the media type its encoding names first', () => {
    const body = doc.paths[ENDPOINTS.render.path].post.requestBody.content['multipart/form-data'];
    const image = resolve(body.schema).properties.image;
    assert.equal(image.type, 'string');
    assert.equal(image.format, 'binary');
    assert.equal(image.contentMediaType, body.encoding.image.contentType.split(',')[0].trim());
  });

  test('Content-Disposition names every extension the formats have', () => {
    const header = doc.components.headers['Content-Disposition'];
    for (const f of FORMATS) {
      assert.ok(header.description.includes(FORMAT_INFO[f].extension), f);
      assert.match(`inline; filename="ascii.${FORMAT_INFO[f].extension}"`, new RegExp(header.schema.pattern), f);
    }
  });

  test('the statuses render and MCP really send are declared: 408, 414, 431; MCP 503 overloaded', () => {
    for (const path of [ENDPOINTS.render.path, ENDPOINTS.mcp.path]) {
      const responses = doc.paths[path].post.responses;
      for (const [status, slug] of [['408', 'request-timeout'], ['414', 'uri-too-long'], ['431', 'headers-too-large'], ['503', 'overloaded']] as const) {
        assert.ok(responses[status]?.description.includes(`${slug}:`), `${path} ${status}`);
      }
      assert.ok(responses['503'].headers['Retry-After'], path);
    }
    const error = doc.components.responses.Error.description;
    for (const status of ['400', '404', '405', '408', '414', '431', '500', '503']) assert.ok(error.includes(status), status);
  });

  test('every component is used, and every required property is defined (Redocly\'s recommended rules)', () => {
    const refs = new Set(JSON.stringify(doc).match(/"#\/components\/[^"]+"/g)!.map((r) => r.slice(1, -1)));
    for (const [kind, entries] of Object.entries<Record<string, unknown>>(doc.components)) {
      if (kind === 'securitySchemes') continue;
      for (const name of Object.keys(entries)) assert.ok(refs.has(`#/components/${kind}/${name}`), `${kind}/${name} is never used`);
    }
    // A schema's required names are its own properties, or its parent's for a oneOf/anyOf/allOf branch.
    const undefinedRequired: string[] = [];
    const walk = (node: any, at: string, parent?: any) => {
      if (Array.isArray(node)) return node.forEach((n, i) => walk(n, `${at}/${i}`, parent));
      if (typeof node !== 'object' || node === null) return;
      if (Array.isArray(node.required)) {
        for (const name of node.required) if (!node.properties?.[name] && !parent?.properties?.[name]) undefinedRequired.push(`${at}: ${name}`);
      }
      for (const [key, child] of Object.entries(node)) walk(child, `${at}/${key}`, ['oneOf', 'anyOf', 'allOf'].includes(key) ? node : undefined);
    };
    walk(doc, '#');
    assert.deepEqual(undefinedRequired, []);
    // A JSON-RPC response is one of two shapes, each defining its member (generators make a union).
    for (const branch of doc.components.schemas.JsonRpcResponse.oneOf) assert.ok(branch.properties[branch.required[0]], branch.required[0]);
  });

  test('the documented server settings are describeConfig', () => {
    for (const c of describeConfig()) assert.ok(doc.info.description.includes(c.name), c.name);
  });

  test('refusals carry only headers the document declares for them: RateLimit-* on render\'s and MCP\'s 400, 408, 413 and 415, Allow on a 405', { timeout: 20_000 }, async () => {
    const s = await startTestServer({ V2A_RATE_LIMIT: '1000', V2A_WORKERS: '1', V2A_BODY_IDLE_TIMEOUT_MS: '300', V2A_MAX_IMAGE_BYTES: '100000' });
    try {
      const v = responseValidator((await call(`${s.base}${ENDPOINTS.openapi.path}`)).json);
      const json = { 'content-type': 'application/json' };
      // MCP bodies of more than 16 KiB pay their token before they are read (a small one once parsed).
      const large = 20_000;
      const cases: Array<[string, string, Record<string, string | number>, string, number]> = [
        [ENDPOINTS.render.path, '?columns=2', { ...json, 'content-length': 2 }, '{}', 400],
        [ENDPOINTS.render.path, '', { ...json, 'content-length': 10_000_000 }, '', 413],
        [ENDPOINTS.render.path, '', { ...json, 'content-encoding': 'gzip', 'content-length': 2 }, '{}', 415],
        [ENDPOINTS.render.path, '', { ...json, 'content-length': 100 }, '{', 408],
        [ENDPOINTS.mcp.path, '', { ...json, 'mcp-protocol-version': '1999-01-01', 'content-length': large }, '', 400],
        [ENDPOINTS.mcp.path, '', { ...json, 'content-length': 10_000_000 }, '', 413],
        [ENDPOINTS.mcp.path, '', { ...json, 'content-encoding': 'gzip', 'content-length': large }, '', 415],
        [ENDPOINTS.mcp.path, '', { ...json, 'content-length': large }, '{', 408],
      ];
      for (const [path, query, headers, body, status] of cases) {
        const r = await rawCall(s.base, 'POST', path + query, headers, body);
        assert.equal(r.status, status, `${path} ${r.text}`);
        assert.match(r.headers.get('ratelimit-limit') ?? '', /^1000$/, `${path} ${status} is past the rate limit check`);
        v.check('POST', path, r);
      }
      for (const method of ['GET', 'DELETE']) {
        const r = await call(`${s.base}${ENDPOINTS.mcp.path}`, { method });
        assert.equal(r.status, 405);
        assert.equal(r.headers.get('allow'), 'POST, OPTIONS');
        v.check(method, ENDPOINTS.mcp.path, r);
      }
      assert.equal(v.doc.paths[ENDPOINTS.mcp.path].post.responses['405'], undefined, 'a POST is never 405');
    } finally {
      await s.close();
    }
  });

  test('a parameter as text (query string, form field) is documented as the server reads it: booleans in any case, signs and leading zeros, surrounding whitespace', () => {
    const ajv = new Ajv2020({ strict: false });
    const form = resolve(doc.paths[ENDPOINTS.render.path].post.requestBody.content['multipart/form-data'].schema).properties;
    const samples: Record<string, string[]> = {
      boolean: ['true', 'FALSE', 'True', ' tRuE ', '1', '0', '\u00a0false\u2003', '\ttrue\n', 'yes', 'on', 't', '', '10', '01', 'true false'],
      integer: ['40', '+040', '040', '-0040', ' 40 ', '\u00a040\u00a0', '4e1', '40.0', '0x28', '', '4 0', '--40', '\u0664\u0660'],
      number: ['1', '+1', '01', '1.', '.5', '-.5', '1e0', '1E+0', ' 1 ', '\u00a01\ufeff', '1e', 'e1', '1,5', 'Infinity', 'NaN', '0x1', '1_0', '.', '+'],
      color: ['#e5e5e5', ' #E5E5E5 ', 'abc', '\u00a0#abc', '#abcd', 'e5e5e5g', '# abc'],
    };
    const inRange = (def: any, text: string) => {
      // The range is the typed schema's: compare spellings of values inside it.
      const n = Number(text.trim());
      return def.type !== 'integer' && def.type !== 'number' ? text : Number.isFinite(n) && (n < def.min || n > def.max) ? null : text;
    };
    for (const def of PARAMS) {
      const spellings = samples[def.type];
      if (!spellings) continue;
      const schemas = { query: resolve(doc.components.parameters[`query.${def.name}`]).schema, form: form[def.name] };
      for (const [carrier, schema] of Object.entries(schemas)) {
        const valid = ajv.compile(schema);
        for (const raw of spellings) {
          const text = inRange(def, def.type === 'number' ? raw.replace(/^(\s*[+-]?)1/, `$1${def.min}`) : raw);
          if (text === null) continue;
          assert.equal(valid(text), parseParams({ [def.name]: text }, 'strings').ok, `${carrier} ${def.name} ${JSON.stringify(text)}`);
        }
      }
    }
  });

  test('an empty default is said in words, not printed as nothing', async () => {
    const empty = PARAMS.filter((d) => d.default === '');
    assert.ok(empty.length > 0);
    assert.doesNotMatch(JSON.stringify(doc), /Default: \./);
    for (const d of empty) assert.match(doc.components.schemas.RenderParameters.properties[d.name].description, /Default: empty\.$/, d.name);
    const full = (await call(`${server.base}${ENDPOINTS.llmsFull.path}`)).text;
    for (const d of empty) assert.match(full, new RegExp(`^\\| \`${d.name}\` \\| [^|]+ \\| [^|]+ \\| empty \\|`, 'm'), d.name);
    assert.doesNotMatch(full, /\| `` \|/);
  });
});

describe('discovery documents', () => {
  test('GET /api/v1/agent: tools, capabilities, defaults, discovery, recipes', async () => {
    const r = await req('GET', ENDPOINTS.agent.path);
    assert.equal(r.status, 200);
    const m = r.json;
    assert.deepEqual(m.tools.map((t: any) => t.name), ['render_ascii', 'stream_ascii_to_a2v']);
    assert.equal(m.tools[0].http.endpoint, `${server.base}${ENDPOINTS.render.path}`);
    assert.equal(m.tools[0].mcp.name, 'render_ascii');
    assert.deepEqual(m.tools[0].inputSchema, renderToolInputSchema());
    assert.equal(m.tools[1].browserOnly, true);
    assert.equal(m.tools[1].endpoint.url, `${server.base}${ENDPOINTS.handoff.path}`);
    assert.deepEqual(m.tools[1].input.mode.enum, ['latest-frame', 'webcam-stream', 'video-stream']);
    assert.deepEqual(m.capabilities.formats.map((f: any) => f.name), [...FORMATS]);
    assert.deepEqual(m.capabilities.charsets, [...CHARSETS]);
    assert.equal(m.capabilities.color, true);
    assert.equal(m.capabilities.dithering, 'floyd-steinberg');
    assert.equal(m.capabilities.luminance, 'linear-light-rec709');
    assert.ok(m.capabilities.edgeDetection);
    assert.deepEqual(m.defaults, { ...DEFAULTS });
    for (const key of ['openapi', 'mcp', 'llms', 'llmsFull', 'interoperability']) assert.match(m.discovery[key], /^http:\/\/127\.0\.0\.1:\d+\//);
    assert.ok(m.recipes.length >= 5);
    // Each a curl command, some fed their body on standard input.
    for (const recipe of m.recipes) assert.match(recipe.command, /^curl |\| curl /);
    // The stdio face's roots, as v2a mcp --help and llms-full.txt state them (one definition).
    const stdio = (m.tools as { mcpStdio?: { options: Record<string, string> } }[]).find((t) => t.mcpStdio)?.mcpStdio;
    assert.equal(stdio?.options['--root <dir>'], MCP_ROOT_HELP);
    assert.ok((await req('GET', ENDPOINTS.llmsFull.path)).text.includes(MCP_ROOT_HELP));
  });

  test('GET /api/v1/interoperability', async () => {
    const r = await req('GET', ENDPOINTS.interoperability.path);
    assert.equal(r.status, 200);
    const i = r.json;
    assert.deepEqual(i.protocols.mcp.protocolVersions, [...SUPPORTED_PROTOCOL_VERSIONS]);
    assert.equal(i.protocols.openapi.version, '3.1.0');
    assert.equal(i.protocols.handoff.protocol, HANDOFF_PROTOCOL);
    assert.deepEqual(i.protocols.traceContext.headers, ['traceparent', 'tracestate']);
    assert.equal(i.encodings.chroma.id, CHROMA_ENCODING);
  });

  test('GET /llms.txt follows the llmstxt.org shape', async () => {
    const r = await req('GET', ENDPOINTS.llms.path);
    assert.equal(r.status, 200);
    assert.match(r.contentType, /^text\/markdown; charset=utf-8/);
    const lines = r.text.split('\n');
    assert.match(lines[0]!, /^# v2a$/);
    assert.equal(lines[1], '');
    assert.match(lines[2]!, /^> \S/);
    const sections = lines.filter((l) => l.startsWith('## '));
    assert.deepEqual(sections, ['## API', '## Docs', '## Optional']);
    assert.equal(lines.filter((l) => l.startsWith('# ')).length, 1);
    for (const e of ENDPOINT_LIST.filter((x) => x !== ENDPOINTS.llms)) assert.ok(r.text.includes(`](${server.base}${e.path})`), e.path);
  });

  test('GET /llms-full.txt inlines the parameter table, formats, errors and examples', async () => {
    const r = await req('GET', ENDPOINTS.llmsFull.path);
    assert.equal(r.status, 200);
    for (const d of PARAMS) assert.match(r.text, new RegExp(`^\\| \`${d.name}\` \\| ${d.type} \\|`, 'm'));
    for (const f of FORMATS) assert.ok(r.text.includes(`| ${f} | ${FORMAT_INFO[f].contentType} |`), f);
    for (const slug of Object.keys(PROBLEM_TYPES)) assert.ok(r.text.includes(PROBLEM_TYPE_BASE + slug), slug);
    for (const c of describeConfig()) assert.ok(r.text.includes(`\`${c.name}\``), c.name);
    assert.match(r.text, /```sh\ncurl /);
  });

  test('discovery documents use V2A_PUBLIC_URL when set', async () => {
    const s = await startTestServer({ V2A_PUBLIC_URL: 'https://v2a.example.com', V2A_WORKERS: '1' });
    try {
      const oa = await call(`${s.base}${ENDPOINTS.openapi.path}`);
      assert.equal(oa.json.servers[0].url, 'https://v2a.example.com');
      const agent = await call(`${s.base}${ENDPOINTS.agent.path}`);
      assert.equal(agent.json.discovery.mcp, 'https://v2a.example.com/api/mcp');
      assert.match((await call(`${s.base}${ENDPOINTS.llms.path}`)).text, /\(https:\/\/v2a\.example\.com\/api\/v1\/render\)/);
    } finally {
      await s.close();
    }
  });
});

describe('the published recipes run', () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'v2a-recipes-'));
    await writeFile(join(dir, 'photo.jpg'), await photo(120, 90, 'jpeg'));
    // A photo's size: its base64 (about 190 KB) passes the shell's 128 KiB limit of one argument.
    await writeFile(join(dir, 'photo.png'), await sharp(randomBytes(240 * 180 * 3), { raw: { width: 240, height: 180, channels: 3 } }).png().toBuffer());
  });
  after(async () => rm(dir, { recursive: true, force: true }));

  test('a recipe\'s description names the columns its command sends', async () => {
    const { recipes } = (await req('GET', ENDPOINTS.agent.path)).json as { recipes: Array<{ name: string; description: string; command: string }> };
    for (const recipe of recipes) {
      const sent = /columns=(\d+)|"columns":(\d+)/.exec(recipe.command);
      for (const [, n] of recipe.description.matchAll(/(\d+) columns/g)) assert.equal(n, sent?.[1] ?? sent?.[2], recipe.name);
    }
  });

  test('every curl recipe of the agent manifest, against this server', { timeout: 30_000 }, async (t) => {
    try {
      await run('curl', ['--version']);
    } catch {
      t.skip('curl is not installed');
      return;
    }
    const { recipes } = (await req('GET', ENDPOINTS.agent.path)).json as { recipes: Array<{ name: string; command: string }> };
    for (const recipe of recipes) {
      // -w appends the status so the recipe's own output stays as a user would see it.
      const { stdout } = await run('sh', ['-c', `${recipe.command.replace(/(^|\| )curl /, '$1curl -w "\\n%{http_code}" ')}`], { cwd: dir, maxBuffer: 8 << 20 });
      const status = Number(stdout.slice(stdout.lastIndexOf('\n') + 1));
      const body = stdout.slice(0, stdout.lastIndexOf('\n'));
      if (/images\.example\.com/.test(recipe.command)) {
        // The example host is not on this server's allowlist: a well-formed request refused as such.
        const text = recipe.name.startsWith('mcp') ? JSON.parse(body).result.content[0].text : JSON.parse(body).detail;
        assert.match(text, /not on the image host allowlist/, recipe.name);
        continue;
      }
      assert.equal(status, 200, `${recipe.name}: ${status} ${body.slice(0, 300)}`);
      if (recipe.name === 'render-upload-html-color') assert.equal(body, '');
      if (recipe.name === 'render-base64-compact') assert.equal(JSON.parse(body).chroma.encoding, CHROMA_ENCODING);
      if (recipe.name === 'mcp-tools-list') assert.equal(JSON.parse(body).result.tools[0].name, 'render_ascii');
      if (recipe.name === 'health-traced') assert.match(body, /traceparent: 00-4bf92f3577b34da6a3ce929d0e0e4736-/i);
    }
  });
});

