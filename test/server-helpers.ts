/**
 * Shared by the server-*.test.ts files: a real server on 127.0.0.1 port 0, real images made with
 * sharp, and a validator that checks every response against the served OpenAPI document's own
 * schema for that path, method, status and content type.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import sharp from 'sharp';
import Ajv2020Module from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import type { FastifyInstance } from 'fastify';
import type { Counter, LabelValues } from 'prom-client';
import type { ParamDef } from '../src/core/params/definitions.js';
import { buildApp, type BuildAppOptions } from '../src/server/app.js';
import { loadConfig, type ServerConfig } from '../src/server/config.js';
import { HttpProblem } from '../src/server/problem.js';

export interface TestServer {
  readonly app: FastifyInstance;
  readonly base: string;
  readonly config: ServerConfig;
  close(): Promise<void>;
}

/** A prom-client counter's value for exactly these labels (0 before its first increment). */
export async function counterValue<T extends string>(counter: Counter<T>, labels: LabelValues<T> = {}): Promise<number> {
  const wanted = Object.entries(labels);
  const series = (await counter.get()).values.find((v) => Object.keys(v.labels).length === wanted.length && wanted.every(([k, l]) => v.labels[k as T] === l));
  return series?.value ?? 0;
}

/** Settings every test server starts from; `env` overrides them. */
const TEST_ENV: Record<string, string> = {
  LOG_LEVEL: 'silent',
  V2A_WORKERS: '2',
  V2A_RATE_LIMIT: '0',
  // Every test client is 127.0.0.1: the per-client cap is off like the rate limit (its own tests set it).
  V2A_CLIENT_SLOTS: '0',
  // Off for speed (every test file starts servers); the warm-up has tests of its own.
  V2A_WARM_UP: 'false',
  PORT: '0',
  HOST: '127.0.0.1',
};

export async function startTestServer(env: Record<string, string> = {}, options: BuildAppOptions = {}): Promise<TestServer> {
  const config = loadConfig({ ...TEST_ENV, ...env });
  const app = await buildApp(config, { logger: false, ...options });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const { port } = app.server.address() as AddressInfo;
  return {
    app,
    config,
    base: `http://127.0.0.1:${port}`,
    close: async () => {
      app.server.closeAllConnections();
      await app.close();
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Images

/** A soft scene with a lit disc and a colour patch, `format` encoded. */
export async function photo(width = 160, height = 120, format: 'png' | 'jpeg' | 'webp' | 'gif' | 'tiff' | 'avif' = 'png'): Promise<Buffer> {
  const data = Buffer.alloc(width * height * 3);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const dx = (x - width * 0.4) / (height * 0.33), dy = (y - height / 2) / (height * 0.33);
      const inside = dx * dx + dy * dy < 1;
      const v = inside ? 60 + 180 * Math.max(0, 1 - Math.hypot(dx + 0.3, dy + 0.3)) : 30 + (100 * y) / height;
      const i = (y * width + x) * 3;
      data[i] = x > width * 0.8 && y < height * 0.3 ? 220 : v;
      data[i + 1] = v * 0.9;
      data[i + 2] = v * 0.7;
    }
  }
  return sharp(data, { raw: { width, height, channels: 3 } }).toFormat(format).toBuffer();
}

/** Random noise: large and slow to render (for queue tests). */
export async function noise(width: number, height: number): Promise<Buffer> {
  const data = Buffer.alloc(width * height * 3);
  let s = 12345;
  for (let i = 0; i < data.length; i++) {
    s = (s * 1103515245 + 12345) >>> 0;
    data[i] = s >>> 24;
  }
  return sharp(data, { raw: { width, height, channels: 3 } }).png({ compressionLevel: 1 }).toBuffer();
}

const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});
function crc32(buf: Buffer): number {
  let c = 0xffffffff;
  for (const b of buf) c = CRC_TABLE[(c ^ b) & 0xff]! ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

/** A small PNG whose header claims width x height (a decompression bomb as the decoder sees it). */
export async function pngClaiming(width: number, height: number): Promise<Buffer> {
  const png = Buffer.from(await sharp({ create: { width: 8, height: 8, channels: 3, background: '#808080' } }).png().toBuffer());
  // IHDR: length(4) 'IHDR'(4) width(4) height(4) ... crc over type+data (17 bytes), at offset 8.
  png.writeUInt32BE(width, 16);
  png.writeUInt32BE(height, 20);
  png.writeUInt32BE(crc32(png.subarray(12, 29)), 29);
  return png;
}

export const SVG = Buffer.from('<svg xmlns="http://www.w3.org/2000/svg" width="64" height="64"><rect width="64" height="64" fill="red"/></svg>');

// ---------------------------------------------------------------------------------------------
// Requests

export interface Reply {
  status: number;
  headers: Headers;
  text: string;
  /** The body's bytes (png). */
  bytes: Buffer;
  /** Parsed JSON body when the content type is JSON (incl. problem+json). */
  json: any;
  contentType: string;
}

export async function call(url: string, init: RequestInit = {}): Promise<Reply> {
  const res = await fetch(url, init);
  const bytes = Buffer.from(await res.arrayBuffer());
  const text = bytes.toString('utf8');
  const contentType = res.headers.get('content-type') ?? '';
  let json: unknown;
  if (/json/.test(contentType) && text) json = JSON.parse(text);
  return { status: res.status, headers: res.headers, text, bytes, json, contentType };
}

/**
 * A JSON POST whose body is held after its first `sent` bytes (a large upload still arriving):
 * `finish()` sends the rest; `replied` is the status and text.
 */
export function heldPost(url: string, body: unknown, headers: Record<string, string>, sent = 40): { finish: () => void; replied: Promise<{ status: number; text: string }> } {
  const bytes = Buffer.from(JSON.stringify(body));
  const req = http.request(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers, 'content-length': bytes.length } });
  const replied = new Promise<{ status: number; text: string }>((resolve, reject) => {
    req.on('response', (res) => {
      let text = '';
      res.on('data', (c) => { text += c; });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
    });
    req.on('error', reject);
  });
  req.write(bytes.subarray(0, sent));
  return { finish: () => req.end(bytes.subarray(sent)), replied };
}

export function postJson(url: string, body: unknown, headers: Record<string, string> = {}): Promise<Reply> {
  return call(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: typeof body === 'string' ? body : JSON.stringify(body) });
}

/**
 * A POST whose headers are sent (a declared Content-Length among them) and not one byte of its
 * body: what the server answers before reading any of it.
 */
export function headersOnly(base: string, path: string, headers: Record<string, string>): Promise<{ status: number; body: string }> {
  const { port } = new URL(base);
  return new Promise((resolve, reject) => {
    const request = http.request({ host: '127.0.0.1', port, method: 'POST', path, headers });
    request.on('response', (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => { resolve({ status: res.statusCode!, body: Buffer.concat(chunks).toString() }); request.destroy(); });
    });
    request.on('error', reject);
    request.flushHeaders();
  });
}

export function postForm(url: string, fields: Record<string, string | Buffer | Array<string | Buffer>>, headers: Record<string, string> = {}): Promise<Reply> {
  const form = new FormData();
  for (const [name, value] of Object.entries(fields)) {
    for (const v of Array.isArray(value) ? value : [value]) {
      if (typeof v === 'string') form.append(name, v);
      else form.append(name, new Blob([v]), `${name}.bin`);
    }
  }
  return call(url, { method: 'POST', body: form, headers });
}

/** Asserts an RFC 9457 problem reply and returns its body. */
export function assertProblem(r: Reply, status: number, slug: string, detail?: RegExp): any {
  assert.equal(r.status, status, `expected ${status} ${slug}, got ${r.status}: ${r.text.slice(0, 300)}`);
  assert.match(r.contentType, /^application\/problem\+json/);
  const p = r.json;
  assert.equal(p.type, `https://v2a.dev/problems/${slug}`, r.text);
  assert.equal(p.status, status);
  assert.equal(typeof p.title, 'string');
  assert.equal(typeof p.detail, 'string');
  assert.match(p.traceId, /^[0-9a-f]{32}$/);
  assert.equal(p.traceId, r.headers.get('traceparent')?.split('-')[1], 'problem traceId is the traceparent trace id');
  assert.doesNotMatch(r.text, /\n\s+at |node_modules|\/work\/|\.ts:\d+/, 'no stack or internal path');
  if (detail) assert.match(p.detail, detail);
  return p;
}

// ---------------------------------------------------------------------------------------------
// OpenAPI response validation

type AjvLike = {
  addSchema(schema: object, key?: string): unknown;
  compile(schema: object): ((data: unknown) => boolean) & { errors?: unknown };
};
const Ajv2020 = ((Ajv2020Module as unknown as { default?: unknown }).default ?? Ajv2020Module) as new (opts: object) => AjvLike;
const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ?? addFormatsModule) as (ajv: AjvLike) => void;

const DOC_ID = 'urn:v2a:openapi';
const pointer = (...parts: string[]) => parts.map((p) => p.replace(/~/g, '~0').replace(/\//g, '~1')).join('/');

export interface ResponseValidator {
  readonly doc: any;
  /** Validates one response against the document; throws with the Ajv errors. Returns the schema's JSON pointer. */
  check(method: string, path: string, r: Reply): string;
  /** Every (path method status contentType) checked so far. */
  readonly seen: Set<string>;
}

export function responseValidator(doc: any): ResponseValidator {
  const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: true });
  addFormats(ajv);
  ajv.addSchema({ ...doc, $id: DOC_ID });
  const compiled = new Map<string, ((data: unknown) => boolean) & { errors?: unknown }>();
  const seen = new Set<string>();
  return {
    doc,
    seen,
    check(method, path, r) {
      let op = doc.paths?.[path]?.[method.toLowerCase()];
      if (!op) {
        // Paths and methods the document does not list can only answer the generic error.
        assert.ok([404, 405].includes(r.status), `the OpenAPI document has no ${method} ${path} (status ${r.status})`);
        op = { responses: { default: { $ref: '#/components/responses/Error' } } };
      }
      const statusKey = op.responses[String(r.status)] ? String(r.status) : 'default';
      let response = op.responses[statusKey];
      assert.ok(response, `${method} ${path}: no response ${r.status} or default in the document`);
      if (response.$ref) response = resolveRef(doc, response.$ref);
      const mediaType = r.contentType.split(';')[0]!.trim();
      seen.add(`${method} ${path} ${r.status} ${mediaType || '-'}`);
      if (!response.content) {
        assert.equal(r.text, '', `${method} ${path} ${r.status}: the document promises no body`);
        checkHeaders(doc, `${method} ${path} ${r.status}`, response, r);
        return '';
      }
      assert.ok(response.content[mediaType], `${method} ${path} ${r.status}: content type ${mediaType} not in the document (${Object.keys(response.content).join(', ')})`);
      const responseRef = op.responses[statusKey].$ref as string | undefined;
      const ptr = responseRef
        ? `${responseRef}/content/${pointer(mediaType)}/schema`
        : `#/${pointer('paths', path, method.toLowerCase(), 'responses', statusKey, 'content', mediaType, 'schema')}`;
      let validate = compiled.get(ptr);
      if (!validate) {
        validate = ajv.compile({ $ref: `${DOC_ID}${ptr}` });
        compiled.set(ptr, validate);
      }
      const data = /json/.test(mediaType) ? JSON.parse(r.text) : r.text;
      assert.ok(validate(data), `${method} ${path} ${r.status} ${mediaType} does not match ${ptr}: ${JSON.stringify(validate.errors, null, 1).slice(0, 1500)}`);
      checkHeaders(doc, `${method} ${path} ${r.status}`, response, r);
      return ptr;
    },
  };
}

/**
 * The reply's headers against its response: a header the document defines (components.headers)
 * that the reply carries is declared on that response, and a declared one with a schema pattern
 * matches it. HTTP's own representation headers (Content-Encoding, Content-Length, Vary) are
 * declared on no response (the document's description says when replies are compressed): a coded
 * reply names a coding the server sends and varies on Accept-Encoding.
 */
function checkHeaders(doc: any, what: string, response: any, r: Reply): void {
  const coding = r.headers.get('content-encoding');
  if (coding !== null) {
    assert.ok(['br', 'gzip', 'deflate'].includes(coding), `${what}: Content-Encoding ${coding}`);
    assert.match(r.headers.get('vary') ?? '', /(?:^|,)\s*accept-encoding\s*(?:,|$)/i, `${what}: a coded reply varies on Accept-Encoding`);
  }
  const declared = new Map(Object.entries<any>(response.headers ?? {}).map(([name, h]) => [name.toLowerCase(), h.$ref ? resolveRef(doc, h.$ref) : h]));
  for (const name of Object.keys(doc.components?.headers ?? {})) {
    if (r.headers.has(name)) assert.ok(declared.has(name.toLowerCase()), `${what}: header ${name} is sent but not declared`);
  }
  for (const [name, header] of declared) {
    const value = r.headers.get(name);
    if (value !== null && header.schema?.pattern) assert.match(value, new RegExp(header.schema.pattern), `${what}: header ${name}`);
  }
}

function resolveRef(doc: any, ref: string): any {
  return ref.replace(/^#\//, '').split('/').reduce((o, p) => o?.[p.replace(/~1/g, '/').replace(/~0/g, '~')], doc);
}

/** A `call` that validates the reply against the served OpenAPI document before returning it. */
export function validatingCaller(validator: () => ResponseValidator | undefined, base: string) {
  return async (method: string, path: string, init: RequestInit & { query?: string } = {}, docPath = path): Promise<Reply> => {
    const { query, ...rest } = init;
    const r = await call(`${base}${path}${query ? `?${query}` : ''}`, { ...rest, method });
    validator()?.check(method, docPath, r);
    return r;
  };
}

/** Out-of-range, wrong-type and wrong-value examples of a parameter, per carrier. */
export function badValues(def: ParamDef): Array<{ strings?: string; json?: unknown }> {
  switch (def.type) {
    case 'integer': return [{ strings: String(def.min - 1), json: def.min - 1 }, { strings: String(def.max + 1), json: def.max + 1 }, { strings: '12.5', json: 12.5 }, { strings: 'abc', json: String(def.default) }];
    case 'number': return [{ strings: String(def.min - 1), json: def.min - 1 }, { strings: String(def.max + 1), json: def.max + 1 }, { strings: 'abc', json: String(def.default) }];
    case 'boolean': return [{ strings: 'maybe', json: 'true' }, { json: 1 }];
    case 'enum': return [{ strings: 'nope', json: 'nope' }, { json: 3 }];
    case 'color': return [{ strings: '#12345g', json: '#12345g' }, { json: 0xffffff }];
    case 'glyphs': return [{ strings: ' .é', json: ' .é' }, { strings: ' .\u0007', json: '\t' }, { json: 5 }];
  }
}

/** The HttpProblem `work` is refused with (it must be refused, with one). */
export async function problemOf(work: Promise<unknown>): Promise<HttpProblem> {
  try {
    await work;
  } catch (err) {
    assert.ok(err instanceof HttpProblem, String(err));
    return err;
  }
  assert.fail('it was accepted');
}
