/**
 * POST /api/mcp as an agent meets it: a cancel stops only the call it names (the rest of its
 * batch is answered); a call refused a slot is the tool's failure (isError, when to retry), not an
 * HTTP error; the image block follows the format's colour and says when a png is only a preview;
 * tools/list stays small; a failed initialize hands out no session; refusals of imageUrl data: and
 * of unpadded or base64url imageBase64 say what to do.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { heldPost, noise, photo, postJson, startTestServer, type TestServer } from './server-helpers.js';

const MCP = '/api/mcp';
const callTool = (id: number | string, args: Record<string, unknown>) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'render_ascii', arguments: args } });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const JSON_ACCEPT = { accept: 'application/json' };

let server: TestServer;
let tinyB64: string;
let slowB64: string;

before(async () => {
  // Four slots: a batch of two calls and a third request fit; no budget refusal ends the slow call early.
  server = await startTestServer({ V2A_WORKERS: '2', V2A_QUEUE_LIMIT: '2', V2A_MCP_MAX_CHARS: '0' });
  tinyB64 = (await photo(48, 32, 'png')).toString('base64');
  slowB64 = (await noise(1600, 1200)).toString('base64');
});
after(async () => server?.close());

describe('notifications/cancelled in a batch', () => {
  const slow = () => ({ imageBase64: slowB64, columns: 400, format: 'png', fineShapes: true, color: true });

  test('cancelling one call of a running batch leaves out its reply only', async () => {
    const session = 'batch-cancel-running';
    const started = performance.now();
    const batch = postJson(`${server.base}${MCP}`, [callTool(1, { imageBase64: tinyB64, columns: 20 }), callTool(2, slow()), { jsonrpc: '2.0', id: 3, method: 'ping' }], { ...JSON_ACCEPT, 'mcp-session-id': session });
    await sleep(600);
    const cancel = await postJson(`${server.base}${MCP}`, { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 2 } }, { ...JSON_ACCEPT, 'mcp-session-id': session });
    assert.equal(cancel.status, 202);
    const r = await batch;
    assert.equal(r.status, 200, `the others are answered: ${r.status} ${r.text.slice(0, 200)}`);
    assert.deepEqual(r.json.map((m: { id: number }) => m.id), [1, 3]);
    assert.equal(r.json[0].result.isError, undefined, JSON.stringify(r.json[0]).slice(0, 300));
    assert.deepEqual(r.json[1].result, {});
    assert.ok(performance.now() - started < 10_000);
  });

  test('a cancel that overtakes its batch (still uploading) leaves out that call alone; all cancelled is 202', async () => {
    const post = (session: string, body: unknown) => heldPost(`${server.base}${MCP}`, body, { ...JSON_ACCEPT, 'mcp-session-id': session });
    const cancel = (session: string, requestId: number) => postJson(`${server.base}${MCP}`, { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId } }, { ...JSON_ACCEPT, 'mcp-session-id': session });

    const some = post('early-some', [callTool(1, { imageBase64: tinyB64, columns: 16 }), callTool(2, { imageBase64: tinyB64, columns: 16 }), { jsonrpc: '2.0', id: 3, method: 'ping' }]);
    await sleep(50);
    assert.equal((await cancel('early-some', 2)).status, 202);
    some.finish();
    const r = await some.replied;
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(JSON.parse(r.text).map((m: { id: number }) => m.id), [1, 3]);

    const all = post('early-all', [callTool(1, { imageBase64: tinyB64, columns: 16 }), callTool(2, { imageBase64: tinyB64, columns: 16 })]);
    await sleep(50);
    for (const id of [1, 2]) await cancel('early-all', id);
    all.finish();
    assert.deepEqual(await all.replied, { status: 202, text: '' });
  });
});

describe('a call refused a slot', () => {
  test('is an isError result naming the reason and when to retry, not an HTTP 429 / 503', async () => {
    const busy = await startTestServer({ V2A_WORKERS: '1', V2A_QUEUE_LIMIT: '1', V2A_MCP_MAX_CHARS: '0' });
    const capped = await startTestServer({ V2A_WORKERS: '2', V2A_QUEUE_LIMIT: '8', V2A_CLIENT_SLOTS: '2', V2A_MCP_MAX_CHARS: '0' });
    try {
      for (const [target, reason] of [[busy, /^All render slots are busy: .*retry in \d+ s\.$/], [capped, /^One client may have at most 2 requests in flight.*; retry when one is done\.$/]] as const) {
        // Two slow renders hold both slots (each admitted before its body is read).
        const held = [1, 2].map((i) => postJson(`${target.base}${MCP}`, callTool(100 + i, { imageBase64: slowB64, columns: 400, format: 'html', color: true }), JSON_ACCEPT));
        for (let i = 0; i < 300 && target.app.v2a.admission.inFlight < 2; i++) await sleep(10);
        const client = new Client({ name: 'v2a-refusal-test', version: '1.0.0' });
        await client.connect(new StreamableHTTPClientTransport(new URL(`${target.base}${MCP}`)));
        try {
          const r = await client.callTool({ name: 'render_ascii', arguments: { imageBase64: tinyB64, columns: 20 } });
          assert.equal(r.isError, true, JSON.stringify(r).slice(0, 300));
          assert.match((r.content as Array<{ text: string }>)[0]!.text, reason);
        } finally {
          await client.close();
        }
        const raw = await postJson(`${target.base}${MCP}`, callTool('raw', { imageBase64: tinyB64, columns: 20 }), JSON_ACCEPT);
        assert.equal(raw.status, 200);
        assert.equal(raw.json.id, 'raw');
        assert.ok(Number(raw.headers.get('retry-after')) >= 1);
        for (const h of await Promise.all(held)) assert.equal(h.status, 200);
      }
    } finally {
      await busy.close();
      await capped.close();
    }
  });
});

describe('the image block', () => {
  test('format text with color: a mono preview (text shows no colour), as small as without color', async () => {
    const jpeg = (await photo(320, 240, 'jpeg')).toString('base64');
    const size = async (color: boolean) => {
      const r = await postJson(`${server.base}${MCP}`, callTool(1, { imageBase64: jpeg, format: 'text', columns: 160, color }), JSON_ACCEPT);
      assert.equal(r.json.result.isError, undefined, r.text.slice(0, 300));
      return r.json.result.content[1].data.length as number;
    };
    assert.equal(await size(true), await size(false));
    // A format that shows colour keeps it in its preview.
    const html = await postJson(`${server.base}${MCP}`, callTool(2, { imageBase64: jpeg, format: 'html', columns: 160, color: true }), JSON_ACCEPT);
    assert.ok(html.json.result.content[1].data.length > 2 * (await size(false)));
  });

  test('format png drawn with smaller cells says it is a preview; at full size it says nothing', async () => {
    const client = new Client({ name: 'v2a-preview-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${server.base}${MCP}`)));
    try {
      await client.listTools(); // the SDK client validates structuredContent against the outputSchema
      const big = await client.callTool({ name: 'render_ascii', arguments: { imageBase64: tinyB64, format: 'png', columns: 300 } });
      const image = (big.structuredContent as { image: { cellWidth: number; note?: string } }).image;
      assert.ok(image.cellWidth < 8);
      assert.match(image.note ?? '', /^A preview with smaller cells: the png itself is 2400 x \d+ px.*fewer columns/);
      const small = await client.callTool({ name: 'render_ascii', arguments: { imageBase64: tinyB64, format: 'png', columns: 40 } });
      assert.equal((small.structuredContent as { image: { note?: string } }).image.note, undefined);
    } finally {
      await client.close();
    }
  });
});

describe('tools/list', () => {
  test('is small: the outputSchema names the parameters once, without their descriptions; the description says where the art is', async () => {
    const r = await postJson(`${server.base}${MCP}`, { jsonrpc: '2.0', id: 1, method: 'tools/list' }, JSON_ACCEPT);
    const tool = r.json.result.tools[0];
    const output = JSON.stringify(tool.outputSchema);
    assert.ok(output.length < 6_500, `outputSchema is ${output.length} characters`);
    assert.ok(r.text.length < 14_000, `tools/list is ${r.text.length} characters`);
    assert.equal(output.split('"motionSensitivity"').length - 1, 1, 'each parameter name once');
    assert.ok(!output.includes('Glyph ramp'), 'no parameter descriptions');
    assert.match(tool.description, /The art is content\[0\]\.text.*structuredContent\.text is the same art again, beside a machine summary/);
  });
});

describe('nits', () => {
  test('a failed initialize hands out no Mcp-Session-Id; a good one does', async () => {
    for (const params of [undefined, { protocolVersion: 20250618, capabilities: {}, clientInfo: { name: 'x', version: '1' } }]) {
      const r = await postJson(`${server.base}${MCP}`, { jsonrpc: '2.0', id: 1, method: 'initialize', ...(params ? { params } : {}) }, JSON_ACCEPT);
      assert.equal(r.json.error.code, -32602);
      assert.equal(r.headers.get('mcp-session-id'), null);
    }
    const ok = await postJson(`${server.base}${MCP}`, { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '1' } } }, JSON_ACCEPT);
    assert.match(ok.headers.get('mcp-session-id') ?? '', /^[0-9a-f-]{36}$/);
  });

  const toolText = async (args: Record<string, unknown>): Promise<string> => {
    const r = await postJson(`${server.base}${MCP}`, callTool(1, args), JSON_ACCEPT);
    assert.equal(r.json.result.isError, true, r.text.slice(0, 300));
    return r.json.result.content[0].text;
  };

  test('no image: the agent is told of imageUrl and imageBase64, as tool arguments, and of no upload it cannot send', async () => {
    assert.equal(await toolText({ columns: 20 }), 'No image was supplied: give exactly one of imageUrl or imageBase64 in the tool arguments.');
  });

  test('imageUrl with a data: URL is told to use imageBase64', async () => {
    assert.match(await toolText({ imageUrl: `data:image/png;base64,${tinyB64}` }), /must use https:, not data:; put data: URLs in imageBase64/);
  });

  test('unpadded or base64url imageBase64 is refused saying precisely what is wrong', async () => {
    let padded = tinyB64;
    for (let w = 49; !padded.endsWith('='); w++) padded = (await photo(w, 32, 'png')).toString('base64');
    assert.match(await toolText({ imageBase64: padded.replace(/=+$/, '') }), /the '=' padding is missing \(add '={1,2}' at the end\)/);
    const url = Buffer.from(padded, 'base64').toString('base64url');
    assert.match(url, /[-_]/);
    assert.match(await toolText({ imageBase64: url }), /that is base64url; use the standard alphabet/);
  });
});
