import { test, describe, after, before } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import * as sdkTypes from '@modelcontextprotocol/sdk/types.js';

import {
  createMcpDispatcher,
  mcpErrorCodes,
  PARSE_ERROR,
  type McpDispatcher,
  type McpTool,
  type McpDispatcherOptions,
} from '../src/server/mcp/dispatcher.js';
import {
  LATEST_PROTOCOL_VERSION,
  SUPPORTED_PROTOCOL_VERSIONS,
  DEFAULT_NEGOTIATED_PROTOCOL_VERSION,
  isSupportedProtocolVersion,
} from '../src/server/mcp/protocol.js';

// ---------------------------------------------------------------------------------------------
// Fixtures

const echoTool: McpTool = {
  name: 'echo',
  title: 'Echo',
  description: 'Returns its text.',
  inputSchema: {
    type: 'object',
    properties: { text: { type: 'string' } },
    required: ['text'],
    additionalProperties: false,
  },
  outputSchema: {
    type: 'object',
    properties: { text: { type: 'string' }, length: { type: 'integer' } },
    required: ['text', 'length'],
  },
  annotations: { readOnlyHint: true, openWorldHint: false },
  async call(args) {
    const text = String(args.text ?? '');
    return { content: [{ type: 'text', text }], structuredContent: { text, length: text.length } };
  },
};

/** Reports a failure the way render_ascii reports a bad image: an isError result. */
const failTool: McpTool = {
  name: 'fail',
  description: 'Always fails as a tool.',
  inputSchema: { type: 'object', properties: {} },
  async call() {
    return { content: [{ type: 'text', text: 'The image could not be decoded.' }], isError: true };
  },
};

const SECRET = 'secret /internal/path/boom.ts';
const boomTool: McpTool = {
  name: 'boom',
  description: 'Throws.',
  inputSchema: { type: 'object' },
  async call() {
    throw new Error(SECRET);
  },
};

const malformedTool: McpTool = {
  name: 'malformed',
  description: 'Returns garbage.',
  inputSchema: { type: 'object' },
  async call() {
    return { content: 'not an array' } as never;
  },
};

const seenCtx: Array<{ args: Record<string, unknown>; requestId: unknown; traceId?: string; signal: AbortSignal }> = [];
const ctxTool: McpTool = {
  name: 'ctx',
  description: 'Records its context.',
  inputSchema: { type: 'object' },
  async call(args, ctx) {
    seenCtx.push({ args, requestId: ctx.requestId, traceId: ctx.traceId, signal: ctx.signal });
    return { content: [{ type: 'text', text: 'ok' }] };
  },
};

/** `gate` with {wait:true} blocks until a `gate` with {wait:false} has started: proves concurrency. */
let openGate: () => void = () => {};
let gateOpened = new Promise<void>((r) => (openGate = r));
const gateTool: McpTool = {
  name: 'gate',
  description: 'Concurrency probe.',
  inputSchema: { type: 'object' },
  async call(args) {
    if (args.wait) {
      await gateOpened;
      return { content: [{ type: 'text', text: 'waited' }] };
    }
    openGate();
    return { content: [{ type: 'text', text: 'opened' }] };
  },
};

const serverInfo = { name: 'v2a-test', version: '9.9.9', title: 'v2a test server' };
const instructions = 'Call echo.';

const errorsSeen: Array<{ error: unknown; info: unknown }> = [];
function make(over: Partial<McpDispatcherOptions> = {}): McpDispatcher {
  return createMcpDispatcher({
    serverInfo,
    instructions,
    tools: [echoTool, failTool, boomTool, malformedTool, ctxTool, gateTool],
    maxBatch: 4,
    onError: (error, info) => errorsSeen.push({ error, info }),
    ...over,
  });
}

const ctx = (): { signal: AbortSignal; traceId?: string } => ({ signal: new AbortController().signal });

const req = (id: unknown, method: string, params?: unknown): Record<string, unknown> =>
  params === undefined ? { jsonrpc: '2.0', id, method } : { jsonrpc: '2.0', id, method, params };
const note = (method: string, params?: unknown): Record<string, unknown> =>
  params === undefined ? { jsonrpc: '2.0', method } : { jsonrpc: '2.0', method, params };

interface AnyResponse {
  jsonrpc: '2.0';
  id: string | number | null;
  result?: any;
  error?: { code: number; message: string; data?: unknown };
}

async function one(d: McpDispatcher, body: unknown, c = ctx()): Promise<AnyResponse> {
  const r = await d.handle(body, c);
  assert.equal(r.status, 200);
  assert.ok(r.body && !Array.isArray(r.body), 'expected a single response object');
  // Replies are plain JSON.
  assert.deepEqual(JSON.parse(JSON.stringify(r.body)), r.body);
  return r.body as AnyResponse;
}

async function many(d: McpDispatcher, body: unknown[]): Promise<AnyResponse[]> {
  const r = await d.handle(body, ctx());
  assert.equal(r.status, 200);
  assert.ok(Array.isArray(r.body), 'expected an array');
  assert.deepEqual(JSON.parse(JSON.stringify(r.body)), r.body);
  return r.body as AnyResponse[];
}

function assertError(r: AnyResponse, code: number, id: string | number | null, re?: RegExp): void {
  assert.equal(r.jsonrpc, '2.0');
  assert.equal(r.id, id);
  assert.equal(r.result, undefined);
  assert.ok(r.error, `expected an error, got ${JSON.stringify(r)}`);
  assert.equal(r.error.code, code, r.error.message);
  assert.equal(typeof r.error.message, 'string');
  if (re) assert.match(r.error.message, re);
}

// ---------------------------------------------------------------------------------------------
// Unit tests of handle()

describe('protocol constants', () => {
  test('mirror the SDK 1.32 client', () => {
    assert.equal(LATEST_PROTOCOL_VERSION, sdkTypes.LATEST_PROTOCOL_VERSION);
    assert.deepEqual([...SUPPORTED_PROTOCOL_VERSIONS], [...sdkTypes.SUPPORTED_PROTOCOL_VERSIONS]);
    assert.equal(DEFAULT_NEGOTIATED_PROTOCOL_VERSION, sdkTypes.DEFAULT_NEGOTIATED_PROTOCOL_VERSION);
    assert.equal(SUPPORTED_PROTOCOL_VERSIONS[0], LATEST_PROTOCOL_VERSION);
    assert.ok(isSupportedProtocolVersion('2025-06-18'));
    assert.ok(!isSupportedProtocolVersion('2099-01-01'));
    assert.ok(!isSupportedProtocolVersion(undefined));
  });

  test('error codes', () => {
    assert.deepEqual(
      { ...mcpErrorCodes },
      { ParseError: -32700, InvalidRequest: -32600, MethodNotFound: -32601, InvalidParams: -32602, InternalError: -32603 },
    );
    assert.equal(mcpErrorCodes.ParseError, sdkTypes.ErrorCode.ParseError);
    assert.equal(mcpErrorCodes.InvalidRequest, sdkTypes.ErrorCode.InvalidRequest);
    assert.equal(mcpErrorCodes.MethodNotFound, sdkTypes.ErrorCode.MethodNotFound);
    assert.equal(mcpErrorCodes.InvalidParams, sdkTypes.ErrorCode.InvalidParams);
    assert.equal(mcpErrorCodes.InternalError, sdkTypes.ErrorCode.InternalError);
  });
});

describe('createMcpDispatcher options', () => {
  test('rejects bad configuration', () => {
    assert.throws(() => make({ maxBatch: 0 }), RangeError);
    assert.throws(() => make({ maxBatch: 1.5 }), RangeError);
    assert.throws(() => make({ supportedProtocolVersions: [] }), RangeError);
    assert.throws(() => make({ tools: [echoTool, echoTool] }), /defined twice/);
    assert.throws(() => make({ tools: [{ ...echoTool, inputSchema: { type: 'string' } }] }), /root type "object"/);
    assert.throws(() => make({ tools: [{ ...echoTool, outputSchema: {} }] }), /root type "object"/);
  });

  test('exposes tools and versions', () => {
    const d = make();
    assert.deepEqual(d.tools.map((t) => t.name), ['echo', 'fail', 'boom', 'malformed', 'ctx', 'gate']);
    assert.deepEqual([...d.protocolVersions], [...SUPPORTED_PROTOCOL_VERSIONS]);
  });
});

describe('parse and request errors', () => {
  const d = make();

  test('parse error -> -32700 with id null', async () => {
    const expected = { jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error: the body is not valid JSON.' } };
    assert.deepEqual(d.parseError(), expected);
    assert.deepEqual(await one(d, PARSE_ERROR), expected);
  });

  test('non-object message -> -32600 with id null', async () => {
    for (const body of [42, 'x', null, true, undefined]) {
      assertError(await one(d, body), -32600, null, /must be an object/);
    }
  });

  test('jsonrpc missing or not "2.0" -> -32600 (id kept when valid)', async () => {
    assertError(await one(d, { id: 5, method: 'ping' }), -32600, 5, /"jsonrpc" must be "2.0"/);
    assertError(await one(d, { jsonrpc: '1.0', id: 'a', method: 'ping' }), -32600, 'a');
    assertError(await one(d, { jsonrpc: 2, id: 1, method: 'ping' }), -32600, 1);
    // also for would-be notifications: an invalid message is always answered (JSON-RPC 2.0)
    assertError(await one(d, { jsonrpc: '1.0', method: 'notifications/initialized' }), -32600, null);
  });

  test('bad id type -> -32600 with id null; null id is not allowed', async () => {
    assertError(await one(d, req(null, 'ping')), -32600, null, /null is not allowed/);
    assertError(await one(d, req(true, 'ping')), -32600, null, /"id" must be a string or a number/);
    assertError(await one(d, req({ a: 1 }, 'ping')), -32600, null);
    assertError(await one(d, req([1], 'ping')), -32600, null);
    // "id": 1e400 parses to Infinity: named as out of range, not as "got a number".
    assertError(await one(d, JSON.parse('{"jsonrpc":"2.0","id":1e400,"method":"ping"}')), -32600, null, /"id" must be a string or a number, got a number out of range\./);
    // A longer integer loses digits in JSON.parse: echoed, it matched no call of the client's.
    assertError(await one(d, JSON.parse('{"jsonrpc":"2.0","id":123456789012345678901234567890,"method":"ping"}')), -32600, null,
      /"id" must be a number within ±9007199254740991 \(a longer one loses digits: send it as a string\), got 1\.2345678901234568e\+29\./);
    for (const id of [Number.MAX_SAFE_INTEGER, -Number.MAX_SAFE_INTEGER, 1.5]) assert.equal(((await one(d, req(id, 'ping'))) as { id: unknown }).id, id);
  });

  test('missing or non-string method -> -32600', async () => {
    assertError(await one(d, { jsonrpc: '2.0', id: 7 }), -32600, 7, /"method" is missing/);
    assertError(await one(d, { jsonrpc: '2.0', id: 7, method: 12 }), -32600, 7, /"method" must be a string/);
    assertError(await one(d, { jsonrpc: '2.0', method: null }), -32600, null);
  });

  test('params neither object nor array -> -32600', async () => {
    for (const params of ['x', 5, true, null]) {
      assertError(await one(d, { jsonrpc: '2.0', id: 3, method: 'ping', params }), -32600, 3, /"params"/);
    }
  });

  test('array params for an MCP method -> -32602', async () => {
    for (const method of ['ping', 'tools/list', 'tools/call', 'initialize']) {
      assertError(await one(d, req(4, method, [])), -32602, 4, /object, not an array/);
    }
  });

  test('unknown method -> -32601; as a notification -> no reply', async () => {
    assertError(await one(d, req(9, 'resources/list')), -32601, 9, /resources\/list/);
    assertError(await one(d, req('x', '')), -32601, 'x');
    assert.deepEqual(await d.handle(note('does/not/exist'), ctx()), { status: 202 });
    // A huge name is not echoed whole: 100 characters of it, quoted as JSON.
    const huge = await one(d, req(10, `m"${'x'.repeat(1_000_000)}`));
    assertError(huge, -32601, 10, /^Method not found: "m\\"x{98}\.\.\."\.$/);
    const tool = await one(d, req(11, 'tools/call', { name: 't'.repeat(500_000), arguments: {} }));
    assertError(tool, -32602, 11, /^Unknown tool "t{100}\.\.\."\./);
  });

  test('a JSON-RPC response POSTed by the client is accepted without reply', async () => {
    assert.deepEqual(await d.handle({ jsonrpc: '2.0', id: 1, result: {} }, ctx()), { status: 202 });
    assert.deepEqual(
      await d.handle({ jsonrpc: '2.0', id: 1, error: { code: -1, message: 'no' } }, ctx()),
      { status: 202 },
    );
  });
});

describe('lifecycle and discovery methods', () => {
  const d = make();

  test('initialize echoes a supported version and describes the server', async () => {
    for (const v of SUPPORTED_PROTOCOL_VERSIONS) {
      const r = await one(d, req(1, 'initialize', { protocolVersion: v, capabilities: {}, clientInfo: { name: 'c', version: '1' } }));
      assert.deepEqual(r, {
        jsonrpc: '2.0',
        id: 1,
        result: {
          protocolVersion: v,
          capabilities: { tools: { listChanged: false } },
          serverInfo: { name: 'v2a-test', version: '9.9.9', title: 'v2a test server' },
          instructions: 'Call echo.',
        },
      });
    }
  });

  test('initialize with an unknown version answers the latest supported', async () => {
    const r = await one(d, req(2, 'initialize', { protocolVersion: '1999-01-01', capabilities: {}, clientInfo: { name: 'c', version: '1' } }));
    assert.equal(r.result.protocolVersion, LATEST_PROTOCOL_VERSION);
    const only = make({ supportedProtocolVersions: ['2025-06-18', '2025-03-26'], instructions: undefined });
    const r2 = await one(only, req(3, 'initialize', { protocolVersion: '2025-11-25' }));
    assert.equal(r2.result.protocolVersion, '2025-06-18');
    assert.equal('instructions' in r2.result, false);
  });

  test('initialize without a string protocolVersion -> -32602', async () => {
    assertError(await one(d, req(4, 'initialize', {})), -32602, 4, /protocolVersion/);
    assertError(await one(d, req(4, 'initialize')), -32602, 4, /protocolVersion/);
    assertError(await one(d, req(4, 'initialize', { protocolVersion: 20250618 })), -32602, 4);
  });

  test('notifications/initialized (and other notifications) -> 202, no body', async () => {
    assert.deepEqual(await d.handle(note('notifications/initialized'), ctx()), { status: 202 });
    assert.deepEqual(await d.handle(note('notifications/cancelled', { requestId: 1 }), ctx()), { status: 202 });
  });

  test('ping -> {}', async () => {
    assert.deepEqual(await one(d, req('p1', 'ping')), { jsonrpc: '2.0', id: 'p1', result: {} });
    assert.deepEqual(await one(d, req(0, 'ping', { _meta: {} })), { jsonrpc: '2.0', id: 0, result: {} });
  });

  test('tools/list shape (cursor accepted and ignored)', async () => {
    const r = await one(d, req(5, 'tools/list'));
    assert.equal(r.id, 5);
    assert.equal(r.result.tools.length, 6);
    assert.deepEqual(r.result.tools[0], {
      name: 'echo',
      title: 'Echo',
      description: 'Returns its text.',
      inputSchema: echoTool.inputSchema,
      outputSchema: echoTool.outputSchema,
      annotations: { readOnlyHint: true, openWorldHint: false },
    });
    assert.deepEqual(r.result.tools[1], { name: 'fail', description: 'Always fails as a tool.', inputSchema: failTool.inputSchema });
    assert.equal('nextCursor' in r.result, false);
    const withCursor = await one(d, req(6, 'tools/list', { cursor: 'abc' }));
    assert.deepEqual(withCursor.result, r.result);
    // Validates against the SDK's own schema for the result.
    sdkTypes.ListToolsResultSchema.parse(r.result);
  });

  test('works without initialize (stateless)', async () => {
    const fresh = make();
    assert.equal((await one(fresh, req(1, 'tools/call', { name: 'echo', arguments: { text: 'hi' } }))).result.content[0].text, 'hi');
  });
});

describe('tools/call', () => {
  const d = make();

  test('echo tool: content + structuredContent', async () => {
    const r = await one(d, req(10, 'tools/call', { name: 'echo', arguments: { text: 'hello' } }));
    assert.deepEqual(r, {
      jsonrpc: '2.0',
      id: 10,
      result: { content: [{ type: 'text', text: 'hello' }], structuredContent: { text: 'hello', length: 5 } },
    });
    sdkTypes.CallToolResultSchema.parse(r.result);
  });

  test('unknown tool -> -32602 naming it and the available tools', async () => {
    assertError(await one(d, req(11, 'tools/call', { name: 'nope', arguments: {} })), -32602, 11, /Unknown tool "nope".*"echo"/);
  });

  test('missing or non-string name -> -32602', async () => {
    assertError(await one(d, req(12, 'tools/call', { arguments: {} })), -32602, 12, /"name"/);
    assertError(await one(d, req(12, 'tools/call', { name: 5 })), -32602, 12, /"name"/);
  });

  test('arguments not an object -> -32602; missing arguments -> {}', async () => {
    for (const args of [[], 'x', 3, null, true]) {
      assertError(await one(d, req(13, 'tools/call', { name: 'echo', arguments: args })), -32602, 13, /"arguments" must be an object/);
    }
    seenCtx.length = 0;
    const r = await one(d, req(14, 'tools/call', { name: 'ctx' }));
    assert.equal(r.result.content[0].text, 'ok');
    assert.deepEqual(seenCtx[0]!.args, {});
  });

  test('isError results are passed through', async () => {
    const r = await one(d, req(15, 'tools/call', { name: 'fail', arguments: {} }));
    assert.deepEqual(r.result, { content: [{ type: 'text', text: 'The image could not be decoded.' }], isError: true });
  });

  test('a throwing tool -> isError result with a generic message, no stack, onError told with the trace id the text names', async () => {
    errorsSeen.length = 0;
    const c = { signal: new AbortController().signal, traceId: '4bf92f3577b34da6a3ce929d0e0e4736' };
    const r = await one(d, req('b', 'tools/call', { name: 'boom', arguments: {} }), c);
    assert.equal(r.error, undefined);
    assert.equal(r.result.isError, true);
    assert.equal(r.result.content.length, 1);
    const text: string = r.result.content[0].text;
    assert.match(text, /Internal error while running tool "boom"/);
    assert.match(text, /4bf92f3577b34da6a3ce929d0e0e4736/);
    const wire = JSON.stringify(r);
    assert.ok(!wire.includes('secret'), wire);
    assert.ok(!wire.includes('/internal/path'), wire);
    assert.ok(!/\bat .+:\d+:\d+/.test(wire), wire);
    assert.equal(errorsSeen.length, 1);
    assert.deepEqual(errorsSeen[0]!.info, { method: 'tools/call', tool: 'boom', requestId: 'b', traceId: '4bf92f3577b34da6a3ce929d0e0e4736' });
    assert.equal((errorsSeen[0]!.error as Error).message, SECRET);
  });

  test('a malformed tool result -> generic isError result', async () => {
    errorsSeen.length = 0;
    const r = await one(d, req(16, 'tools/call', { name: 'malformed', arguments: {} }));
    assert.equal(r.result.isError, true);
    assert.match(r.result.content[0].text, /Internal error/);
    assert.equal(errorsSeen.length, 1);
  });

  test('image blocks pass through beside text; a malformed image block is a generic isError result', async () => {
    const imageTool = (block: Record<string, unknown>): McpTool => ({
      name: 'img', description: 'An image.', inputSchema: { type: 'object' },
      async call() { return { content: [{ type: 'text', text: 'art' }, block as never] }; },
    });
    const good = make({ tools: [imageTool({ type: 'image', data: 'iVBORw0KGgo=', mimeType: 'image/png', extra: 1 })] });
    const r = await one(good, req(1, 'tools/call', { name: 'img' }));
    assert.deepEqual(r.result.content, [{ type: 'text', text: 'art' }, { type: 'image', data: 'iVBORw0KGgo=', mimeType: 'image/png' }]);
    for (const bad of [{ type: 'image', data: 'x' }, { type: 'image', mimeType: 'image/png' }, { type: 'audio', data: 'x', mimeType: 'audio/wav' }]) {
      const rb = await one(make({ tools: [imageTool(bad)] }), req(2, 'tools/call', { name: 'img' }));
      assert.equal(rb.result.isError, true, JSON.stringify(bad));
      assert.match(rb.result.content[0].text, /Internal error/);
    }
  });

  test('signal, requestId and traceId reach the tool', async () => {
    seenCtx.length = 0;
    const ac = new AbortController();
    await one(d, req('r-1', 'tools/call', { name: 'ctx', arguments: { a: 1 } }), { signal: ac.signal, traceId: 't' });
    assert.equal(seenCtx.length, 1);
    assert.equal(seenCtx[0]!.requestId, 'r-1');
    assert.equal(seenCtx[0]!.traceId, 't');
    assert.equal(seenCtx[0]!.signal, ac.signal);
    assert.deepEqual(seenCtx[0]!.args, { a: 1 });
  });

  test('a faulty onError does not break the reply', async () => {
    const d2 = make({ onError: () => { throw new Error('logger down'); } });
    const r = await one(d2, req(1, 'tools/call', { name: 'boom', arguments: {} }));
    assert.equal(r.result.isError, true);
  });
});

describe('batches', () => {
  const d = make(); // maxBatch 4

  test('mixed valid and invalid elements are answered in order', async () => {
    const r = await many(d, [
      req(1, 'ping'),
      42,
      req(2, 'tools/call', { name: 'echo', arguments: { text: 'x' } }),
      { jsonrpc: '2.0', id: 3, method: 'nope' },
    ]);
    assert.equal(r.length, 4);
    assert.deepEqual(r[0], { jsonrpc: '2.0', id: 1, result: {} });
    assertError(r[1]!, -32600, null);
    assert.equal(r[2]!.id, 2);
    assert.equal(r[2]!.result.content[0].text, 'x');
    assertError(r[3]!, -32601, 3);
  });

  test('[] -> one -32600 error object (not an array)', async () => {
    assertError(await one(d, []), -32600, null, /empty batch/);
  });

  test('over the bound -> one -32600 error object naming the bound', async () => {
    const body = [req(1, 'ping'), req(2, 'ping'), req(3, 'ping'), req(4, 'ping'), req(5, 'ping')];
    const r = await one(d, body);
    assertError(r, -32600, null, /at most 4 messages, got 5/);
    assert.deepEqual(r.error!.data, { maxBatch: 4 });
    // exactly the bound is fine
    assert.equal((await many(d, body.slice(0, 4))).length, 4);
  });

  test('only notifications -> 202 with no body', async () => {
    const r = await d.handle([note('notifications/initialized'), note('notifications/cancelled', { requestId: 1 })], ctx());
    assert.deepEqual(r, { status: 202 });
  });

  test('notification + request -> array with one reply', async () => {
    const r = await many(d, [note('notifications/initialized'), req('q', 'ping')]);
    assert.deepEqual(r, [{ jsonrpc: '2.0', id: 'q', result: {} }]);
  });

  test('initialize inside a batch is answered', async () => {
    const r = await many(d, [req(1, 'initialize', { protocolVersion: '2025-03-26' }), note('notifications/initialized'), req(2, 'tools/list')]);
    assert.equal(r.length, 2);
    assert.equal(r[0]!.result.protocolVersion, '2025-03-26');
    assert.equal(r[1]!.result.tools.length, 6);
  });

  test('nested arrays are invalid elements', async () => {
    const r = await many(d, [[req(1, 'ping')], req(2, 'ping')]);
    assertError(r[0]!, -32600, null);
    assert.equal(r[1]!.id, 2);
  });

  test('elements run concurrently, replies keep request order', async () => {
    gateOpened = new Promise<void>((res) => (openGate = res));
    const timeout = new Promise<never>((_, rej) => setTimeout(() => rej(new Error('batch ran sequentially')), 2000).unref());
    const r = (await Promise.race([
      many(d, [
        req('first', 'tools/call', { name: 'gate', arguments: { wait: true } }),
        req('second', 'tools/call', { name: 'gate', arguments: { wait: false } }),
      ]),
      timeout,
    ])) as AnyResponse[];
    assert.deepEqual(r.map((x) => [x.id, x.result.content[0].text]), [['first', 'waited'], ['second', 'opened']]);
  });
});

// ---------------------------------------------------------------------------------------------
// Round trip with the official SDK client over a minimal node:http stand-in for the Fastify route.

interface Logged {
  method: string;
  headers: http.IncomingHttpHeaders;
  body?: unknown;
  status?: number;
  responseBody?: string;
}

async function startStandIn(dispatcher: McpDispatcher): Promise<{ url: URL; log: Logged[]; close: () => Promise<void> }> {
  const log: Logged[] = [];
  const server = http.createServer((request, response) => {
    const entry: Logged = { method: request.method ?? '', headers: request.headers };
    log.push(entry);
    const send = (status: number, headers: Record<string, string>, body = ''): void => {
      entry.status = status;
      entry.responseBody = body;
      response.writeHead(status, headers);
      response.end(body);
    };
    if (request.method !== 'POST') {
      // No SSE stream and no sessions: GET and DELETE are 405 (the SDK client treats 405 on its
      // GET-after-initialized as "no server stream" and on DELETE as "no session termination").
      send(405, { allow: 'POST', 'content-type': 'application/json' }, JSON.stringify({ error: 'Method Not Allowed' }));
      return;
    }
    const chunks: Buffer[] = [];
    request.on('data', (c: Buffer) => chunks.push(c));
    request.on('end', () => {
      const ac = new AbortController();
      response.on('close', () => {
        if (!response.writableFinished) ac.abort();
      });
      let body: unknown;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      } catch {
        body = PARSE_ERROR;
      }
      entry.body = body;
      dispatcher.handle(body, { signal: ac.signal }).then((r) => {
        if (r.status === 202) send(202, {});
        else send(200, { 'content-type': 'application/json; charset=utf-8' }, JSON.stringify(r.body));
      });
    });
  });
  await new Promise<void>((res) => server.listen(0, '127.0.0.1', res));
  const { port } = server.address() as AddressInfo;
  return {
    url: new URL(`http://127.0.0.1:${port}/api/mcp`),
    log,
    close: () =>
      new Promise<void>((res) => {
        server.closeAllConnections();
        server.close(() => res());
      }),
  };
}

const tick = (ms = 50): Promise<void> => new Promise((r) => setTimeout(r, ms));

describe('round trip with the official MCP SDK client', () => {
  let standIn: Awaited<ReturnType<typeof startStandIn>>;
  let client: Client;
  let transport: StreamableHTTPClientTransport;
  const clientErrors: unknown[] = [];

  before(async () => {
    standIn = await startStandIn(make());
    client = new Client({ name: 'v2a-test-client', version: '1.0.0' });
    client.onerror = (e) => clientErrors.push(e);
    transport = new StreamableHTTPClientTransport(standIn.url);
    await client.connect(transport);
    await tick(); // the client opens its optional GET stream after `initialized`, fire-and-forget
  });

  after(async () => {
    await client?.close();
    await standIn?.close();
  });

  test('connect: initialize, initialized (202), optional GET stream (405), no session', async () => {
    assert.deepEqual(client.getServerVersion(), serverInfo);
    assert.equal(client.getInstructions(), instructions);
    assert.deepEqual(client.getServerCapabilities(), { tools: { listChanged: false } });
    assert.equal(transport.sessionId, undefined);
    assert.equal(transport.protocolVersion, LATEST_PROTOCOL_VERSION);

    const [init, initialized, get] = standIn.log;
    assert.equal(init!.method, 'POST');
    assert.match(String(init!.headers.accept), /application\/json/);
    assert.match(String(init!.headers.accept), /text\/event-stream/);
    assert.equal((init!.body as { method: string }).method, 'initialize');
    assert.equal(init!.status, 200);

    assert.equal((initialized!.body as { method: string }).method, 'notifications/initialized');
    assert.equal(initialized!.status, 202);
    assert.equal(initialized!.responseBody, '');
    assert.equal(initialized!.headers['mcp-protocol-version'], LATEST_PROTOCOL_VERSION);

    assert.equal(get!.method, 'GET');
    assert.equal(get!.headers.accept, 'text/event-stream');
    assert.equal(get!.status, 405);

    for (const e of standIn.log) assert.equal(e.headers['mcp-session-id'], undefined);
    assert.deepEqual(clientErrors, []);
  });

  test('listTools', async () => {
    const { tools } = await client.listTools();
    assert.deepEqual(tools.map((t) => t.name), ['echo', 'fail', 'boom', 'malformed', 'ctx', 'gate']);
    assert.deepEqual(tools[0]!.inputSchema, echoTool.inputSchema);
    assert.deepEqual(tools[0]!.outputSchema, echoTool.outputSchema);
    assert.equal(tools[0]!.title, 'Echo');
  });

  test('callTool: text + structuredContent (validated by the client against outputSchema)', async () => {
    const r = await client.callTool({ name: 'echo', arguments: { text: 'round trip' } });
    assert.deepEqual(r.content, [{ type: 'text', text: 'round trip' }]);
    assert.deepEqual(r.structuredContent, { text: 'round trip', length: 10 });
    assert.equal(r.isError, undefined);
    const last = standIn.log.at(-1)!;
    assert.equal(last.headers['mcp-protocol-version'], LATEST_PROTOCOL_VERSION);
    assert.match(String(last.headers['content-type']), /^application\/json/);
  });

  test('callTool: isError results and throwing tools reach the client as results', async () => {
    const failed = await client.callTool({ name: 'fail', arguments: {} });
    assert.equal(failed.isError, true);
    assert.deepEqual(failed.content, [{ type: 'text', text: 'The image could not be decoded.' }]);
    const boom = await client.callTool({ name: 'boom', arguments: {} });
    assert.equal(boom.isError, true);
    assert.ok(!JSON.stringify(boom).includes('secret'));
  });

  test('callTool: unknown tool -> McpError -32602', async () => {
    await assert.rejects(client.callTool({ name: 'nope', arguments: {} }), (e: unknown) => {
      assert.ok(e instanceof McpError);
      assert.equal(e.code, -32602);
      assert.match(e.message, /Unknown tool "nope"/);
      return true;
    });
  });

  test('ping', async () => {
    assert.deepEqual(await client.ping(), {});
  });

  test('no client-side errors along the way', () => {
    assert.deepEqual(clientErrors, []);
  });
});

describe('SDK client against older-version server and raw HTTP edge cases', () => {
  test('server supporting only 2025-06-18: client accepts it and sends that version header', async () => {
    const standIn = await startStandIn(make({ supportedProtocolVersions: ['2025-06-18'] }));
    const client = new Client({ name: 'c', version: '1' });
    const errors: unknown[] = [];
    client.onerror = (e) => errors.push(e);
    const transport = new StreamableHTTPClientTransport(standIn.url);
    try {
      await client.connect(transport);
      assert.equal(transport.protocolVersion, '2025-06-18');
      await client.ping();
      assert.equal(standIn.log.at(-1)!.headers['mcp-protocol-version'], '2025-06-18');
      await tick();
      assert.deepEqual(errors, []);
    } finally {
      await client.close();
      await standIn.close();
    }
  });

  test('raw POSTs: bad JSON -> 200 -32700; a batch; notifications only -> 202 empty; GET/DELETE -> 405', async () => {
    const standIn = await startStandIn(make());
    try {
      const post = (body: string): Promise<Response> =>
        fetch(standIn.url, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json' }, body });

      const bad = await post('{"jsonrpc": "2.0", ');
      assert.equal(bad.status, 200);
      assert.match(bad.headers.get('content-type') ?? '', /^application\/json/);
      assert.deepEqual(await bad.json(), { jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error: the body is not valid JSON.' } });

      const batch = await post(JSON.stringify([req(1, 'ping'), note('notifications/initialized'), req(2, 'nope')]));
      assert.equal(batch.status, 200);
      const replies = (await batch.json()) as AnyResponse[];
      assert.deepEqual(replies.map((r) => r.id), [1, 2]);
      assert.equal(replies[1]!.error!.code, -32601);

      const notes = await post(JSON.stringify([note('notifications/initialized')]));
      assert.equal(notes.status, 202);
      assert.equal(await notes.text(), '');

      for (const method of ['GET', 'DELETE']) {
        const r = await fetch(standIn.url, { method, headers: { accept: 'text/event-stream' } });
        assert.equal(r.status, 405);
        assert.equal(r.headers.get('allow'), 'POST');
        await r.body?.cancel();
      }
    } finally {
      await standIn.close();
    }
  });
});
