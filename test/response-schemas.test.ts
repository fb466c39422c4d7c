/**
 * Each response schema against the builder it sits beside, without a server: the schema and the
 * body it describes live in one module, and this keeps them in step (server-openapi.test.ts checks
 * the served responses against the assembled document).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import Ajv2020Module from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import type { JsonSchema } from '../src/core/format/jsonSchemas.js';
import { HANDOFF_MANIFEST_SCHEMA, buildHandoffManifest } from '../src/contract/handoff.js';
import { EFFECTIVE_SETTING_SCHEMA, effectiveConfig, loadConfig } from '../src/server/config.js';
import type { AppContext } from '../src/server/context.js';
import { AGENT_MANIFEST_SCHEMA, buildAgentManifest } from '../src/server/docs/agent.js';
import { INTEROPERABILITY_SCHEMA, buildInteroperability } from '../src/server/docs/interoperability.js';
import { buildOpenApi } from '../src/server/docs/openapi.js';
import { JSONRPC_RESPONSE_SCHEMA, PARSE_ERROR, createMcpDispatcher } from '../src/server/mcp/dispatcher.js';
import { HttpProblem, PROBLEM_SCHEMA, problemBody } from '../src/server/problem.js';
import { HEALTH_SCHEMA, healthEnvelope } from '../src/server/routes/health.js';

// ajv and ajv-formats are CommonJS: their default exports may arrive wrapped.
type Validate = ((data: unknown) => boolean) & { errors?: unknown };
const Ajv2020 = ((Ajv2020Module as unknown as { default?: unknown }).default ?? Ajv2020Module) as new (opts: object) => { compile(schema: object): Validate };
const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ?? addFormatsModule) as (ajv: object) => void;
const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: true });
addFormats(ajv);

function valid(schema: JsonSchema, data: unknown): void {
  const check = ajv.compile(schema);
  assert.ok(check(data), JSON.stringify(check.errors, null, 1));
}

const config = loadConfig({});
const base = 'https://v2a.example';
const traceId = '0af7651916cd43dd8448eb211c80319c';

test('problemBody matches PROBLEM_SCHEMA, with and without field errors', () => {
  valid(PROBLEM_SCHEMA, problemBody(new HttpProblem('missing-image', 'No image.'), '/api/render', traceId));
  const errors = [{ parameter: 'width', message: 'must be at most 400' }];
  valid(PROBLEM_SCHEMA, problemBody(new HttpProblem('invalid-parameters', 'Bad width.', { errors }), '/api/render', traceId));
});

test('healthEnvelope matches HEALTH_SCHEMA, serving and shutting down', () => {
  const stats = { workers: 2, running: 1, queued: 0, queueLimit: 8, completed: 5, threadsStarted: 2 };
  for (const closing of [false, true]) {
    const ctx = { closing, startedAt: performance.now(), pool: { stats: () => stats } } as unknown as AppContext;
    valid(HEALTH_SCHEMA, healthEnvelope(ctx, traceId));
  }
});

test('effectiveConfig entries match EFFECTIVE_SETTING_SCHEMA, a secret setting included', () => {
  const entries = effectiveConfig(loadConfig({ PLATFORM_API_KEY: 'k'.repeat(32) }), { PLATFORM_API_KEY: 'k'.repeat(32) });
  assert.ok(entries.some((e) => e.secret));
  for (const entry of entries) valid(EFFECTIVE_SETTING_SCHEMA, entry);
});

test('buildHandoffManifest matches HANDOFF_MANIFEST_SCHEMA', () => {
  for (const platformKeyConfigured of [false, true]) {
    valid(HANDOFF_MANIFEST_SCHEMA, buildHandoffManifest({ receiverUrl: 'https://receiver.example/a2v?room=1', platformKeyConfigured }));
  }
});

test('buildInteroperability matches INTEROPERABILITY_SCHEMA', () => {
  valid(INTEROPERABILITY_SCHEMA, buildInteroperability(config, base));
});

test('buildAgentManifest matches AGENT_MANIFEST_SCHEMA', () => {
  // The schema refers to the document's RenderParameters; give it that component.
  const doc = buildOpenApi(config, base) as { components: { schemas: Record<string, unknown> } };
  const schema = { ...AGENT_MANIFEST_SCHEMA, components: { schemas: { RenderParameters: doc.components.schemas.RenderParameters } } };
  valid(schema, buildAgentManifest(config, base));
});

test('dispatcher replies match JSONRPC_RESPONSE_SCHEMA', async () => {
  const dispatcher = createMcpDispatcher({ serverInfo: { name: 'v2a', version: '0' }, tools: [], maxBatch: 4 });
  const ctx = { signal: new AbortController().signal };
  const bodies = [
    { jsonrpc: '2.0', id: 1, method: 'ping' },
    { jsonrpc: '2.0', id: 'a', method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } } },
    { jsonrpc: '2.0', id: 2, method: 'no/such' },
    { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'missing' } },
  ];
  for (const body of bodies) {
    const r = await dispatcher.handle(body, ctx);
    assert.equal(r.status, 200);
    valid(JSONRPC_RESPONSE_SCHEMA, r.body);
  }
  valid(JSONRPC_RESPONSE_SCHEMA, (await dispatcher.handle(PARSE_ERROR, ctx)).body);
});
