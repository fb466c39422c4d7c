/**
 * What an agent meets on the MCP faces, from an outside review: the art in structuredContent too
 * (clients that show the model only that), counted once by the budget; a refusal naming the most
 * columns that fit and no format that fits no better; the budget in force in the description; a
 * late cancel that stops no later call; recipes that run on a default server; texts that name
 * only what the face takes.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { promisify } from 'node:util';
import { after, before, describe, test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import AjvModule from 'ajv';
import { runJob } from '../src/core/job.js';
import { decodeImage } from '../src/node/index.js';
import { IMAGE_URL_DESCRIPTION } from '../src/server/mcp/render-tool.js';
import { buildToolReply, RENDER_OUTPUT_SCHEMA } from '../src/server/mcp/reply.js';
import { Roots, realFolder } from '../src/server/mcp/roots.js';
import { serveStdio } from '../src/server/mcp/stdio.js';
import { call, heldPost, noise, photo, postJson, startTestServer, type TestServer } from './server-helpers.js';

const Ajv = ((AjvModule as unknown as { default?: unknown }).default ?? AjvModule) as typeof AjvModule.default;
const validateOutput = new Ajv({ allErrors: true }).compile(RENDER_OUTPUT_SCHEMA);

const MCP = '/api/mcp';
const JSON_ACCEPT = { accept: 'application/json' };
const callTool = (id: number | string, args: Record<string, unknown>) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'render_ascii', arguments: args } });
const cancel = (requestId: number | string) => ({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId } });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

let server: TestServer;
let photoB64: string;
let noiseB64: string;

before(async () => {
  // The defaults an operator gets: a budget of 60,000 characters, no image host allowed.
  server = await startTestServer();
  photoB64 = (await photo(160, 120, 'jpeg')).toString('base64');
  noiseB64 = (await noise(320, 240)).toString('base64');
});
after(async () => server?.close());

const toolsList = async (base: string) => (await postJson(`${base}${MCP}`, { jsonrpc: '2.0', id: 1, method: 'tools/list' }, JSON_ACCEPT)).json.result.tools[0];

describe('the art reaches the model whichever field its client shows', () => {
  test('structuredContent.text is the text block\'s string, in every format the SDK client validates', async () => {
    const client = new Client({ name: 'v2a-agents-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${server.base}${MCP}`)));
    try {
      await client.listTools(); // the client then validates structuredContent against the outputSchema
      for (const format of ['text', 'ansi', 'png', 'json-compact'] as const) {
        const r = await client.callTool({ name: 'render_ascii', arguments: { imageBase64: photoB64, format, columns: 32, color: true } });
        assert.equal(r.isError, undefined, JSON.stringify(r.content).slice(0, 300));
        const text = (r.content as Array<{ text: string }>)[0]!.text;
        const s = r.structuredContent as { text: string };
        assert.ok(validateOutput(s), JSON.stringify(validateOutput.errors));
        assert.equal(s.text, text, format);
        // What such a client hands the model: JSON.stringify(structuredContent) holds the art.
        assert.ok(JSON.stringify(r.structuredContent).includes(JSON.stringify(text.split('\n')[0]).slice(1, -1)), format);
      }
      const { tools } = await client.listTools();
      assert.doesNotMatch(tools[0]!.description!, /not the art/);
      assert.match((RENDER_OUTPUT_SCHEMA.properties as Record<string, { description?: string }>).text!.description!, /The art itself/);
    } finally {
      await client.close();
    }
  });

  test('structuredContent.explicit is in the parameters\' own order, as json\'s, whatever the order of the arguments', async () => {
    const limits = { maxBytes: 1 << 24, maxPixels: 50e6 };
    const bytes = new Uint8Array(Buffer.from(photoB64, 'base64'));
    const explicitOf = async (params: Record<string, unknown>) => {
      const { result, output } = await runJob({ kind: 'bytes', bytes }, params, { decoder: decodeImage, limits });
      return (await buildToolReply(result, output, 0)).structured.explicit;
    };
    const want = ['columns', 'format', 'invert', 'gamma'];
    assert.deepEqual(await explicitOf({ gamma: 1.2, invert: true, format: 'text', columns: 40 }), want);
    assert.deepEqual(await explicitOf({ columns: 40, format: 'text', invert: true, gamma: 1.2 }), want);
  });

  test('the budget counts the art once: text plus the rest of the summary', async () => {
    const limits = { maxBytes: 1 << 24, maxPixels: 50e6 };
    const { result, output } = await runJob({ kind: 'bytes', bytes: new Uint8Array(Buffer.from(photoB64, 'base64')) }, { format: 'html', color: true, columns: 60 }, { decoder: decodeImage, limits });
    const reply = await buildToolReply(result, output, 0);
    assert.equal(reply.structured.text, reply.text);
    // The image block's size in the summary differs from the full-size one measured before the png
    // is drawn by a few digits at most: leave that much room.
    const once = reply.text.length + JSON.stringify({ ...reply.structured, text: '' }).length + 8;
    await buildToolReply(result, output, once);
    await assert.rejects(buildToolReply(result, output, once - reply.text.length), /over this server's budget/);
  });
});

describe('a refusal over the budget', () => {
  test('names the most columns that fit (one more is over), and not png, whose reply carries the text as text does', async () => {
    const args = { imageBase64: noiseB64, format: 'ansi', color: true, columns: 120 };
    const refused = await postJson(`${server.base}${MCP}`, callTool(1, args), JSON_ACCEPT);
    assert.equal(refused.json.result.isError, true, refused.text.slice(0, 300));
    const text = refused.json.result.content[0].text as string;
    const columns = Number(/columns=(\d+) or fewer with format=ansi/.exec(text)?.[1]);
    assert.ok(columns >= 8 && columns < 120, text);
    assert.doesNotMatch(text, /format=png/);
    assert.match(text, /format=text \(/);
    const at = async (n: number) => (await postJson(`${server.base}${MCP}`, callTool(2, { ...args, columns: n }), JSON_ACCEPT)).json.result.isError;
    assert.equal(await at(columns), undefined, `${columns} columns fit`);
    assert.equal(await at(columns + 1), true, `${columns + 1} columns should be over: ${text}`);
  });

  test('the tool description states the budget in force (HTTP and stdio), and text as the format to fall back on', async () => {
    const small = await startTestServer({ V2A_MCP_MAX_CHARS: '12000' });
    const off = await startTestServer({ V2A_MCP_MAX_CHARS: '0' });
    try {
      const described = [await toolsList(small.base), await toolsList(off.base), await toolsList(server.base)].map((t) => t.description as string);
      assert.match(described[0]!, /character budget of 12,000 /);
      assert.match(described[1]!, /no character budget/);
      assert.match(described[2]!, /character budget of 60,000 /);
      for (const d of described) assert.doesNotMatch(d, /default 60,000|format=text or png/);
      // The agent manifest tells the same.
      const manifest = (await call(`${small.base}/api/v1/agent`)).json as { tools: Array<{ description: string }> };
      assert.equal(manifest.tools[0]!.description, described[0]);
    } finally {
      await Promise.all([small.close(), off.close()]);
    }
    const [list] = await stdio(['{"jsonrpc":"2.0","id":1,"method":"tools/list"}'], { maxChars: 5000 });
    assert.match((list as { result: { tools: Array<{ description: string }> } }).result.tools[0]!.description, /character budget of 5,000 /);
  });
});

describe('notifications/cancelled over HTTP', () => {
  test('a cancel that comes after its call was answered stops no later call reusing the id; an early one still stops its call', async () => {
    const session = { ...JSON_ACCEPT, 'mcp-session-id': 'late-cancel' };
    const args = { imageBase64: photoB64, columns: 16 };
    const first = await postJson(`${server.base}${MCP}`, callTool(1, args), session);
    assert.equal(first.json.result.isError, undefined);
    // The client gave up as the reply was on its way.
    assert.equal((await postJson(`${server.base}${MCP}`, cancel(1), session)).status, 202);
    const again = await postJson(`${server.base}${MCP}`, callTool(1, args), session);
    assert.equal(again.status, 200, `answered, not silently cancelled: ${again.status} ${again.text.slice(0, 200)}`);
    assert.equal(again.json.id, 1);
    assert.equal(again.json.result.isError, undefined);
    // A cancel that overtakes its call (still uploading) stops it as before.
    const held = heldPost(`${server.base}${MCP}`, callTool(2, args), session);
    await sleep(50);
    assert.equal((await postJson(`${server.base}${MCP}`, cancel(2), session)).status, 202);
    held.finish();
    assert.deepEqual(await held.replied, { status: 202, text: '' });
  });
});

describe('the agent manifest\'s recipes', () => {
  test('mcp-render runs as it is on a default server; render-url-json says it needs the allowlist', { timeout: 30_000 }, async (t) => {
    const { recipes } = (await call(`${server.base}/api/v1/agent`)).json as { recipes: Array<{ name: string; description: string; command: string }> };
    const url = recipes.find((r) => r.name === 'render-url-json')!;
    assert.match(url.description, /V2A_IMAGE_FETCH_ALLOWLIST/);
    const mcp = recipes.find((r) => r.name === 'mcp-render')!;
    assert.doesNotMatch(mcp.command, /imageUrl/);
    try {
      await promisify(execFile)('curl', ['--version']);
    } catch {
      t.skip('curl is not installed');
      return;
    }
    const { stdout } = await promisify(execFile)('sh', ['-c', mcp.command]);
    const reply = JSON.parse(stdout) as { result: { isError?: boolean; content: Array<{ text?: string }> } };
    assert.equal(reply.result.isError, undefined, stdout.slice(0, 300));
    assert.ok(/\S/.test(reply.result.content[0]!.text!), 'some art');
  });
});

describe('texts name only what the face takes', () => {
  test('imageUrl\'s description: empty allowlist by default, and only then is every imageUrl refused', () => {
    assert.doesNotMatch(IMAGE_URL_DESCRIPTION, /\(then every imageUrl is refused/);
    assert.match(IMAGE_URL_DESCRIPTION, /while it is empty every imageUrl is refused/);
  });

  test('stdio: a missing image names imagePath only where roots allow it; a parse error names the line', async () => {
    const noImage = JSON.stringify(callTool(2, { columns: 20 }));
    const textOf = (m: unknown) => (m as { result: { content: Array<{ text: string }> } }).result.content[0]!.text;
    const withRoots = await stdio([noImage]);
    assert.equal(textOf(withRoots[0]), 'No image was supplied: give exactly one of imagePath (a local file inside the allowed roots), imageUrl or imageBase64 in the tool arguments.');
    const noRoots = await stdio([noImage], { roots: false });
    assert.equal(textOf(noRoots[0]), 'No image was supplied: give exactly one of imageUrl or imageBase64 in the tool arguments.');
    const [parse] = await stdio(['{not json']);
    assert.deepEqual(parse, { jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error: the line is not valid JSON.' } });
  });
});

/** The replies of `v2a mcp` (in process) to `lines`, with a root folder unless `roots` is false. */
async function stdio(lines: readonly string[], opts: { maxChars?: number; roots?: boolean } = {}): Promise<unknown[]> {
  const dir = mkdtempSync(join(tmpdir(), 'v2a-agents-'));
  try {
    const stdin = new PassThrough();
    const stdout = new PassThrough();
    let text = '';
    stdout.on('data', (d: Buffer) => { text += d.toString(); });
    // No roots: an implicit working directory that is the file system's root, as v2a mcp started in /.
    const roots = opts.roots === false ? new Roots([await realFolder('/')], true) : new Roots([await realFolder(dir)]);
    const served = serveStdio({ roots, maxChars: opts.maxChars ?? 60_000, limits: { maxBytes: 1 << 20, maxPixels: 1e6 }, fetch: { imageFetchAllowlist: [], fetchTimeoutMs: 10_000 }, stdin, stdout });
    for (const line of lines) stdin.write(`${line}\n`);
    stdin.end();
    await served;
    return text.split('\n').filter(Boolean).map((l) => JSON.parse(l) as unknown);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
