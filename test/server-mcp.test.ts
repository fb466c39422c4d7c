/**
 * POST /api/mcp end to end: the official MCP SDK client as the real peer (initialize,
 * tools/list, tools/call per format), raw JSON-RPC batch and transport edge cases, and the tool's
 * failures carrying the same message as the HTTP API. Every HTTP reply is validated against the
 * served OpenAPI document.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import { after, before, describe, test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { FORMATS, PARAMS, describeDomain } from '../src/core/params/definitions.js';
import { VERSION } from '../src/core/types.js';
import { LATEST_PROTOCOL_VERSION, SUPPORTED_PROTOCOL_VERSIONS } from '../src/server/mcp/protocol.js';
import { renderToolInputSchema } from '../src/server/mcp-tool.js';
import { mcpInstructions } from '../src/server/mcp/render-tool.js';
import { RENDER_OUTPUT_SCHEMA } from '../src/server/mcp/reply.js';
import { MCP_MAX_CHARS } from '../src/settings/index.js';
import { jsonBodyLimit, loadConfig } from '../src/server/config.js';
import { MIN_LIFTED_BYTES } from '../src/server/json-lift.js';
import sharp from 'sharp';
import AjvModule from 'ajv';

// ajv is CommonJS: its default export may arrive wrapped. Draft-07, as MCP clients validate.
const Ajv = ((AjvModule as unknown as { default?: unknown }).default ?? AjvModule) as typeof AjvModule.default;
const validateOutput = new Ajv({ allErrors: true }).compile(RENDER_OUTPUT_SCHEMA);
import {
  assertProblem, badValues, call, headersOnly, photo, postJson, responseValidator, startTestServer, SVG,
  type Reply, type ResponseValidator, type TestServer,
} from './server-helpers.js';

const MCP = '/api/mcp';

let server: TestServer;
let validator: ResponseValidator;
let tinyB64: string;
let jpegB64: string;

before(async () => {
  server = await startTestServer({ V2A_MCP_MAX_BATCH: '4' });
  validator = responseValidator((await call(`${server.base}/api/openapi.json`)).json);
  tinyB64 = (await photo(48, 32, 'png')).toString('base64');
  jpegB64 = (await photo(160, 120, 'jpeg')).toString('base64');
});
after(async () => server?.close());

async function rpc(body: unknown, headers: Record<string, string> = {}): Promise<Reply> {
  const r = await postJson(`${server.base}${MCP}`, body, { accept: 'application/json', ...headers });
  validator.check('POST', MCP, r);
  return r;
}

const request = (id: number | string, method: string, params?: unknown) => ({ jsonrpc: '2.0', id, method, ...(params !== undefined ? { params } : {}) });
const callTool = (id: number | string, args: Record<string, unknown>) => request(id, 'tools/call', { name: 'render_ascii', arguments: args });

describe('with the official MCP SDK client', () => {
  let client: Client;
  let transport: StreamableHTTPClientTransport;
  const clientErrors: unknown[] = [];
  const statuses: number[] = [];

  before(async () => {
    client = new Client({ name: 'v2a-test', version: '1.0.0' });
    client.onerror = (e) => clientErrors.push(e);
    // Every reply the client gets is validated against the OpenAPI document as well.
    const validatingFetch = async (url: string | URL, init?: RequestInit): Promise<Response> => {
      const res = await fetch(url, init);
      const copy = res.clone();
      const text = await copy.text();
      const contentType = copy.headers.get('content-type') ?? '';
      statuses.push(res.status);
      validator.check(init?.method ?? 'GET', MCP, { status: res.status, headers: res.headers, text, bytes: Buffer.from(text), contentType, json: undefined });
      return res;
    };
    transport = new StreamableHTTPClientTransport(new URL(`${server.base}${MCP}`), { fetch: validatingFetch });
    await client.connect(transport);
    // The client's optional GET stream attempt (405) runs in the background: wait for its reply (bounded).
    for (let i = 0; i < 200 && statuses.length < 3; i++) await new Promise((r) => setTimeout(r, 25));
  });
  after(async () => client?.close());

  test('initialize: server info, instructions, capabilities, latest protocol version, a session id (for cancels only)', () => {
    assert.deepEqual(client.getServerVersion(), { name: 'v2a', version: VERSION, title: 'v2a image to character art' });
    // The test server allows no image host: the agent is told so before it tries imageUrl.
    assert.match(client.getInstructions() ?? '', /^v2a renders images as character art\. Call render_ascii with imageBase64 \(imageUrl is off on this server: no image host is allowed\) and optional render parameters/);
    assert.match(mcpInstructions(['images.example.com', '*.cdn.example']), /Call render_ascii with imageUrl \(https, on images\.example\.com, \*\.cdn\.example\) or imageBase64 and optional/);
    assert.match(mcpInstructions(['a', 'b', 'c', 'd', 'e', 'f', 'g']), /imageUrl \(https, on a, b, c, d, e or 2 more allowed hosts\) or imageBase64/);
    // The limits an agent would otherwise learn from a refusal, as this server has them.
    assert.match(client.getInstructions() ?? '', new RegExp(`Images may have up to ${server.config.maxImageBytes / 1024 ** 2} MiB and ${server.config.maxImagePixels.toLocaleString('en-US')} pixels; the art is 8 to 400 columns and at most 800 rows \\(crop an image taller than that\\)\\. Every result`));
    assert.match(mcpInstructions([], { limits: { maxBytes: 1_000_000, maxPixels: 2_000_000 } }), /Images may have up to 1,000,000 bytes and 2,000,000 pixels;/);
    assert.deepEqual(client.getServerCapabilities(), { tools: { listChanged: false } });
    assert.equal(transport.protocolVersion, LATEST_PROTOCOL_VERSION);
    assert.match(transport.sessionId ?? '', /^[0-9a-f-]{36}$/);
    assert.deepEqual(statuses.slice(0, 3), [200, 202, 405], 'initialize, initialized notification, GET stream refused');
    assert.deepEqual(clientErrors, []);
  });

  test('tools/list: render_ascii with the schema generated from PARAMS', async () => {
    const { tools } = await client.listTools();
    assert.deepEqual(tools.map((t) => t.name), ['render_ascii']);
    const schema = tools[0]!.inputSchema as { type: string; properties: Record<string, { default?: unknown }> };
    assert.deepEqual(schema, renderToolInputSchema());
    assert.equal(schema.type, 'object');
    assert.deepEqual(Object.keys(schema.properties), ['imageUrl', 'imageBase64', ...PARAMS.map((d) => d.name)]);
    for (const d of PARAMS) assert.deepEqual(schema.properties[d.name]!.default, d.default, d.name);
    assert.equal(tools[0]!.annotations?.readOnlyHint, true);
    assert.deepEqual(tools[0]!.outputSchema, RENDER_OUTPUT_SCHEMA);
    assert.ok(!('imagePath' in schema.properties), 'imagePath is the stdio face\'s only');
  });

  for (const format of FORMATS) {
    test(`tools/call render_ascii format=${format}`, async () => {
      // The SDK client validates structuredContent against the listed outputSchema itself.
      await client.listTools();
      const r = await client.callTool({ name: 'render_ascii', arguments: { imageBase64: jpegB64, format, columns: 40, color: true } });
      assert.equal(r.isError, undefined, JSON.stringify(r.content));
      const content = r.content as Array<{ type: string; text: string; data: string; mimeType: string }>;
      assert.deepEqual(content.map((c) => c.type), ['text', 'image']);
      const text = content[0]!.text;
      const s = r.structuredContent as { text: string; columns: number; rows: number; format: string; characters: number; image: { width: number; height: number } };
      assert.ok(validateOutput(s), JSON.stringify(validateOutput.errors));
      assert.deepEqual([s.format, s.columns, s.characters], [format, 40, text.length]);
      // The art in structuredContent too, for clients that show the model only that.
      assert.equal(s.text, text);
      if (format === 'json' || format === 'json-compact') {
        // The json document as the art's string: not parsed into the summary's own members.
        const doc = JSON.parse(text) as { columns: number };
        assert.equal(doc.columns, 40);
        for (const key of ['lines', 'colors', 'chroma']) assert.ok(!(key in s), `no ${key} in structuredContent`);
      }
      if (format === 'text' || format === 'png') assert.equal(text.split('\n')[0]!.length, 40, 'png: the art as plain text');
      if (format === 'svg') assert.match(text, /<svg/);
      assert.equal(content[1]!.mimeType, 'image/png');
      const meta = await sharp(Buffer.from(content[1]!.data, 'base64')).metadata();
      assert.deepEqual([meta.format, meta.width, meta.height], ['png', 40 * 8, s.rows * 16]);
      assert.deepEqual([s.image.width, s.image.height], [meta.width, meta.height]);
    });
  }

  test('the image block keeps the picture\'s proportions for another cellAspect (cells 8 px wide, 8 / cellAspect tall)', async () => {
    const r = await client.callTool({ name: 'render_ascii', arguments: { imageBase64: jpegB64, columns: 40, cellAspect: 0.25 } });
    const s = r.structuredContent as { rows: number; image: { width: number; height: number; cellWidth: number; cellHeight: number } };
    const data = (r.content as Array<{ data?: string }>)[1]!.data!;
    const meta = await sharp(Buffer.from(data, 'base64')).metadata();
    assert.deepEqual([meta.width, meta.height], [320, s.rows * 32]);
    assert.deepEqual(s.image, { mimeType: 'image/png', width: 320, height: s.rows * 32, cellWidth: 8, cellHeight: 32 });
    // A tall picture at a small aspect: 512 rows of 4 px cells even at scale 8 would be 2048 px,
    // over the 1600 px the output schema states (the SDK client refused the reply).
    const tall = (await sharp({ create: { width: 100, height: 3200, channels: 3, background: '#808080' } }).png().toBuffer()).toString('base64');
    const t = await client.callTool({ name: 'render_ascii', arguments: { imageBase64: tall, columns: 64, cellAspect: 0.25 } });
    assert.equal(t.isError, undefined, JSON.stringify(t.content));
    const ts = t.structuredContent as { rows: number; image: { width: number; height: number; cellHeight: number } };
    const tmeta = await sharp(Buffer.from((t.content as Array<{ data?: string }>)[1]!.data!, 'base64')).metadata();
    assert.equal(ts.rows, 512);
    assert.deepEqual([tmeta.width, tmeta.height], [ts.image.width, ts.image.height]);
    assert.deepEqual([ts.image.width, ts.image.height, ts.image.cellHeight], [64, 1536, 3]);
  });

  test('the default character budget fits what the contract\'s defaults render: every format at 120 columns of a square picture (json-compact of it is about 38,000 characters)', async () => {
    const square = (await photo(64, 64, 'png')).toString('base64');
    for (const format of FORMATS) {
      const r = await client.callTool({ name: 'render_ascii', arguments: { imageBase64: square, format } });
      assert.equal(r.isError, undefined, `${format}: ${JSON.stringify(r.content).slice(0, 200)}`);
    }
  });

  test('imagePath (the stdio server\'s source) over HTTP is an isError saying where it works and what to send instead, not just an unknown parameter', async () => {
    const r = await client.callTool({ name: 'render_ascii', arguments: { imagePath: '/etc/passwd', columns: 40 } });
    assert.equal(r.isError, true);
    assert.match((r.content as Array<{ text: string }>)[0]!.text, /^imagePath is read only by the local MCP server \(v2a mcp\).*send the image as imageBase64/);
  });

  test('tool failures are isError results, not protocol errors', async () => {
    const r = await client.callTool({ name: 'render_ascii', arguments: { columns: 40 } });
    assert.equal(r.isError, true);
    assert.match((r.content as Array<{ text: string }>)[0]!.text, /No image/);
  });

  // At 400 columns the reply is 20 times the budget: scaled down by cells alone, the estimate
  // named columns still over it (a reply's characters per cell grow as its columns fall: html
  // merges fewer equal-colour runs), so the refusal checks what it names by rendering it.
  for (const asked of [160, 400]) {
    test(`a reply over V2A_MCP_MAX_CHARS (default 60000) is an isError naming what fits; the suggested columns fit (${asked} columns)`, async () => {
      assert.equal(loadConfig({}).mcpMaxChars, MCP_MAX_CHARS.default);
      const args = { imageBase64: jpegB64, format: 'html', color: true, columns: asked };
      const r = await client.callTool({ name: 'render_ascii', arguments: args });
      assert.equal(r.isError, true);
      const text = (r.content as Array<{ text: string }>)[0]!.text;
      assert.match(text, new RegExp(`^The html reply at ${asked} columns would be [\\d,]+ characters, over this server's budget of 60,000 characters per reply; nothing was cut\\.`));
      assert.match(text, /V2A_MCP_MAX_CHARS/);
      const columns = Number(/columns=(\d+) or fewer with format=html/.exec(text)?.[1]);
      assert.ok(columns >= 8 && columns < asked, text);
      await client.listTools();
      const ok = await client.callTool({ name: 'render_ascii', arguments: { ...args, columns } });
      assert.equal(ok.isError, undefined, JSON.stringify(ok.content).slice(0, 300));
      // Not far below what fits: a few columns more are over the budget.
      const more = await client.callTool({ name: 'render_ascii', arguments: { ...args, columns: Math.min(asked, Math.ceil(columns * 1.25)) } });
      assert.equal(more.isError, true, `${columns} columns fit; ${Math.ceil(columns * 1.25)} should not`);
    });
  }

  test('unknown tool: McpError -32602; ping', async () => {
    await assert.rejects(client.callTool({ name: 'draw', arguments: {} }), (e: unknown) => e instanceof McpError && e.code === -32602);
    assert.deepEqual(await client.ping(), {});
    assert.deepEqual(clientErrors, []);
  });
});

describe('tool failures carry the HTTP API message', () => {
  // No image is the exception: the HTTP API names its multipart upload too, which no tool call can send (mcp-agents.test.ts).
  const cases: Array<[string, Record<string, unknown>]> = [
    ['two images', { imageUrl: 'https://images.example.com/a.png', imageBase64: tinyB64Placeholder() }],
    ['bad parameters', { imageBase64: tinyB64Placeholder(), columns: 2, charset: 'emoji', bogus: true }],
    ['undecodable', { imageBase64: Buffer.from('not an image, only words').toString('base64') }],
    ['svg', { imageBase64: SVG.toString('base64') }],
    ['bad base64', { imageBase64: 'iVBOR$$$' }],
    ['host not allowed', { imageUrl: 'https://images.example.com/a.png' }],
    ['not https', { imageUrl: 'http://images.example.com/a.png' }],
    ['wrong type', { imageUrl: 12 }],
    // imagePath (the stdio face's, v2a mcp) over HTTP: its own test below.
  ];
  for (const [name, args] of cases) {
    test(name, async () => {
      const resolved = JSON.parse(JSON.stringify(args).replace('"@tiny@"', JSON.stringify(tinyB64)));
      const http = await postJson(`${server.base}/api/v1/render`, resolved);
      validator.check('POST', '/api/v1/render', http);
      assert.ok(http.status >= 400, http.text);
      const r = await rpc(callTool(1, resolved));
      assert.equal(r.status, 200);
      assert.equal(r.json.result.isError, true);
      assert.deepEqual(r.json.result.content, [{ type: 'text', text: http.json.detail }]);
    });
  }

  test('every parameter out of range / of the wrong type is an isError naming it', async () => {
    for (const def of PARAMS) {
      for (const bad of badValues(def)) {
        if (bad.json === undefined) continue;
        const r = await rpc(callTool(def.name, { imageBase64: tinyB64, [def.name]: bad.json }));
        assert.equal(r.json.id, def.name);
        assert.equal(r.json.result.isError, true, `${def.name}=${JSON.stringify(bad.json)}`);
        const text = r.json.result.content[0].text as string;
        assert.ok(text.startsWith(def.name) || text.includes(`${def.name} must`), text);
        assert.ok(text.includes(describeDomain(def)), text);
      }
    }
  });
});

function tinyB64Placeholder(): string {
  return '@tiny@';
}

describe('raw JSON-RPC over HTTP', () => {
  test('a plain Accept: application/json is enough; initialize answers a supported version, else the latest', async () => {
    for (const version of SUPPORTED_PROTOCOL_VERSIONS) {
      const r = await rpc(request(1, 'initialize', { protocolVersion: version, capabilities: {}, clientInfo: { name: 'raw', version: '1' } }));
      assert.equal(r.json.result.protocolVersion, version);
    }
    const old = await rpc(request(2, 'initialize', { protocolVersion: '2023-01-01', capabilities: {}, clientInfo: { name: 'raw', version: '1' } }));
    assert.equal(old.json.result.protocolVersion, LATEST_PROTOCOL_VERSION);
  });

  test('parse error -> 200 with -32700', async () => {
    const r = await rpc('{"jsonrpc": "2.0", "id": 1, ');
    assert.equal(r.status, 200);
    assert.deepEqual(r.json, { jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error: the body is not valid JSON.' } });
    const empty = await rpc('');
    assert.equal(empty.json.error.code, -32700);
  });

  test('a body may start with a UTF-8 byte order mark (RFC 8259 §8.1); a BOM alone is a parse error', async () => {
    const r = await rpc(`\uFEFF${JSON.stringify(request(1, 'ping'))}`);
    assert.deepEqual(r.json, { jsonrpc: '2.0', id: 1, result: {} });
    assert.equal((await rpc('\uFEFF')).json.error.code, -32700);
  });

  test('batches: replies in order, a malformed element gets its own -32600, notifications get none', async () => {
    const r = await rpc([request('a', 'ping'), { jsonrpc: '1.0', id: 'b', method: 'ping' }, { jsonrpc: '2.0', method: 'notifications/initialized' }, request('c', 'nope')]);
    assert.equal(r.status, 200);
    assert.deepEqual(r.json.map((x: { id: unknown }) => x.id), ['a', 'b', 'c']);
    assert.deepEqual(r.json[0].result, {});
    assert.equal(r.json[1].error.code, -32600);
    assert.equal(r.json[2].error.code, -32601);
  });

  test('tools/call for several formats in one batch', async () => {
    const r = await rpc([callTool(1, { imageBase64: tinyB64, format: 'json', columns: 16 }), callTool(2, { imageBase64: tinyB64, format: 'svg', columns: 16 }), callTool(3, { imageBase64: tinyB64, columns: 1 })]);
    assert.deepEqual(r.json.map((x: { id: number }) => x.id), [1, 2, 3]);
    assert.equal(r.json[0].result.structuredContent.columns, 16);
    assert.match(r.json[1].result.content[0].text, /<svg/);
    assert.equal(r.json[2].result.isError, true);
  });

  test('long imageBase64 values (kept as bytes, out of the parse) render as short ones do; broken ones are refused the same way', async () => {
    const big = await sharp({ create: { width: 200, height: 150, channels: 3, background: '#000', noise: { type: 'gaussian', mean: 128, sigma: 30 } } }).png().toBuffer();
    const b64 = big.toString('base64');
    assert.ok(b64.length > MIN_LIFTED_BYTES);
    const r = await rpc([callTool(1, { imageBase64: b64, format: 'json', columns: 24 }), callTool(2, { imageBase64: `data:image/png;base64,${b64}`, columns: 20 }), callTool(3, { imageBase64: `${b64.slice(0, -8)}!!!!!!!!` })]);
    assert.equal(r.status, 200, r.text);
    assert.equal(r.json[0].result.structuredContent.columns, 24);
    assert.equal(r.json[1].result.isError, undefined, JSON.stringify(r.json[1]));
    assert.equal(r.json[2].result.isError, true);
    assert.match(r.json[2].result.content[0].text, /not valid base64/);
    // The same image as a short value through the render API: the same art.
    const lifted = await rpc(callTool(4, { imageBase64: b64, columns: 30 }));
    const direct = await postJson(`${server.base}/api/v1/render?columns=30`, { imageBase64: b64 });
    assert.equal(lifted.json.result.content[0].text.trimEnd(), direct.text.trimEnd());
  });

  test('a body over the JSON cap is 413 before any of it is read (a declared Content-Length)', async () => {
    const answer = await headersOnly(server.base, MCP, { 'content-type': 'application/json', 'content-length': String(jsonBodyLimit(loadConfig({}).maxImageBytes) + 1) });
    assert.equal(answer.status, 413);
    assert.equal(JSON.parse(answer.body).type, 'https://v2a.dev/problems/request-too-large');
    // The limit is named, and what it is made of.
    const cap = jsonBodyLimit(loadConfig({}).maxImageBytes);
    assert.match(JSON.parse(answer.body).detail, new RegExp(`larger than its ${cap}-byte limit: one image of at most 16777216 bytes \\(V2A_MAX_IMAGE_BYTES\\) as base64`));
    // The field that makes a body that large is named, as a form's refusal names its image.
    assert.deepEqual(JSON.parse(answer.body).errors, [{ parameter: 'imageBase64', message: `with the other fields, larger than the ${cap}-byte JSON body limit` }]);
  });

  test('[] and a batch over V2A_MCP_MAX_BATCH are one -32600', async () => {
    const empty = await rpc([]);
    assert.equal(empty.json.error.code, -32600);
    assert.equal(empty.json.id, null);
    const big = await rpc(Array.from({ length: 5 }, (_, i) => request(i, 'ping')));
    assert.equal(Array.isArray(big.json), false);
    assert.equal(big.json.error.code, -32600);
    assert.match(big.json.error.message, /at most 4/);
  });

  test('only notifications -> 202 without a body', async () => {
    const r = await rpc({ jsonrpc: '2.0', method: 'notifications/initialized' });
    assert.equal(r.status, 202);
    assert.equal(r.text, '');
    assert.equal((await rpc([{ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 1 } }])).status, 202);
  });

  test('protocol errors: unknown method -32601, unknown tool and bad arguments -32602', async () => {
    assert.equal((await rpc(request(1, 'resources/list'))).json.error.code, -32601);
    assert.equal((await rpc(request(2, 'tools/call', { name: 'nope', arguments: {} }))).json.error.code, -32602);
    assert.equal((await rpc(request(3, 'tools/call', { name: 'render_ascii', arguments: [1] }))).json.error.code, -32602);
  });

  test('trace context is continued on MCP', async () => {
    const trace = '0af7651916cd43dd8448eb211c80319c';
    const r = await rpc(request(1, 'ping'), { traceparent: `00-${trace}-b7ad6b7169203331-01` });
    assert.equal(r.headers.get('traceparent')?.split('-')[1], trace);
  });

  test('GET and DELETE are 405 with Allow: POST, OPTIONS', async () => {
    for (const method of ['GET', 'DELETE']) {
      const r = await call(`${server.base}${MCP}`, { method, headers: { accept: 'text/event-stream' } });
      validator.check(method, MCP, r);
      assertProblem(r, 405, 'method-not-allowed');
      assert.equal(r.headers.get('allow'), 'POST, OPTIONS');
    }
  });

  test('an unsupported MCP-Protocol-Version header is 400; wrong content types are 415', async () => {
    const version = assertProblem(await rpc(request(1, 'ping'), { 'mcp-protocol-version': '1999-01-01' }), 400, 'invalid-request', /MCP-Protocol-Version/);
    assert.equal(version.errors[0].parameter, 'MCP-Protocol-Version');
    const ok = await rpc(request(1, 'ping'), { 'mcp-protocol-version': '2025-06-18' });
    assert.equal(ok.status, 200);
    // Sent twice (two header lines): named as such, not as the unsupported version "a, b".
    const twice = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const body = JSON.stringify(request(1, 'ping'));
      const req = http.request(`${server.base}${MCP}`, { method: 'POST', headers: { 'content-type': 'application/json', 'mcp-protocol-version': ['2025-06-18', '2025-06-18'], 'content-length': Buffer.byteLength(body) } }, (res) => {
        let text = '';
        res.setEncoding('utf8').on('data', (c) => (text += c)).on('end', () => resolve({ status: res.statusCode!, body: text }));
      });
      req.on('error', reject).end(body);
    });
    assert.equal(twice.status, 400);
    assert.match(JSON.parse(twice.body).detail, /^MCP-Protocol-Version is given 2 times; send it once\.$/);
    for (const type of ['text/plain', 'multipart/form-data; boundary=x']) {
      const r = await call(`${server.base}${MCP}`, { method: 'POST', headers: { 'content-type': type }, body: '{}' });
      validator.check('POST', MCP, r);
      assert.equal(assertProblem(r, 415, 'unsupported-media-type', /; send application\/json\.$/).errors[0].parameter, 'Content-Type');
    }
  });

  test('Origin (DNS rebinding): under the default CORS *, a foreign browser Origin is 403; the own origin and no Origin are served', async () => {
    const foreign = await postJson(`${server.base}${MCP}`, request(1, 'ping'), { origin: 'https://evil.example' });
    validator.check('POST', MCP, foreign);
    assert.deepEqual(assertProblem(foreign, 403, 'forbidden-origin').errors, [{ parameter: 'Origin', message: 'not allowed' }]);
    assert.match(foreign.json.detail, /V2A_CORS_ORIGINS/, 'the refusal names the setting that allows an origin');
    assertProblem(await postJson(`${server.base}${MCP}`, request(1, 'ping'), { origin: 'null' }), 403, 'forbidden-origin');
    const own = await postJson(`${server.base}${MCP}`, request(1, 'ping'), { origin: server.base });
    assert.equal(own.status, 200, own.text);
    assert.equal((await postJson(`${server.base}${MCP}`, request(1, 'ping'))).status, 200);
    // A page on a rebound name sends that name as Host and Origin alike: a name is never its own proof.
    const rebound = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const { port } = new URL(server.base);
      const req = http.request({ host: '127.0.0.1', port, path: MCP, method: 'POST', headers: {
        host: `rebound.example:${port}`, origin: `http://rebound.example:${port}`, 'content-type': 'application/json',
      } }, (res) => {
        let body = '';
        res.on('data', (c: Buffer) => { body += c; });
        res.on('end', () => resolve({ status: res.statusCode!, body }));
      });
      req.on('error', reject);
      req.end(JSON.stringify(request(1, 'ping')));
    });
    assert.equal(rebound.status, 403, rebound.body);
    assert.match(rebound.body, /forbidden-origin/);
  });

  test('with a V2A_CORS_ORIGINS list, a browser Origin outside it is 403', async () => {
    const listed = await startTestServer({ V2A_CORS_ORIGINS: 'https://app.example', V2A_WORKERS: '1' });
    try {
      const bad = await postJson(`${listed.base}${MCP}`, request(1, 'ping'), { origin: 'https://evil.example' });
      validator.check('POST', MCP, bad);
      assertProblem(bad, 403, 'forbidden-origin');
      const good = await postJson(`${listed.base}${MCP}`, request(1, 'ping'), { origin: 'https://app.example' });
      assert.equal(good.status, 200);
      const none = await postJson(`${listed.base}${MCP}`, request(1, 'ping'));
      assert.equal(none.status, 200, 'non-browser clients send no Origin');
    } finally {
      await listed.close();
    }
  });
});
