/**
 * `v2a mcp` (the CLI bundle) driven by raw lines and by the official SDK client: roots/list is
 * asked only after the initialize result is written, however the client pipelines its lines; a
 * cancel stops only the call of a batch it names; a server without roots says imagePath is
 * unavailable.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { pathToFileURL } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { noise, photo } from './server-helpers.js';
import { V2A_BIN, ensureCliBuilt } from './helpers/cli-run.js';

let dir = '';

before(async () => {
  await ensureCliBuilt();
  dir = mkdtempSync(join(tmpdir(), 'v2a-mcp-faces-'));
  writeFileSync(join(dir, 'photo.png'), await photo(64, 48, 'png'));
  writeFileSync(join(dir, 'slow.png'), await noise(1600, 1200));
});
after(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** `v2a mcp` in `cwd`, its stdout as parsed lines in order of arrival. */
function serve(cwd: string): { child: ChildProcessWithoutNullStreams; lines: Array<Record<string, unknown>>; until: (ok: (m: Record<string, unknown>) => boolean) => Promise<Record<string, unknown>> } {
  const child = spawn(process.execPath, [V2A_BIN, 'mcp'], { cwd, stdio: ['pipe', 'pipe', 'pipe'], env: { ...process.env, V2A_DEBUG: '' } });
  const lines: Array<Record<string, unknown>> = [];
  const waiting = new Set<() => void>();
  let buf = '';
  child.stdout.on('data', (c: Buffer) => {
    buf += c.toString();
    for (let nl = buf.indexOf('\n'); nl >= 0; nl = buf.indexOf('\n')) {
      lines.push(JSON.parse(buf.slice(0, nl)) as Record<string, unknown>);
      buf = buf.slice(nl + 1);
    }
    for (const w of waiting) w();
  });
  const until = (ok: (m: Record<string, unknown>) => boolean) => new Promise<Record<string, unknown>>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no such line in ${JSON.stringify(lines).slice(0, 500)}`)), 20_000);
    const check = () => {
      const m = lines.find(ok);
      if (!m) return;
      clearTimeout(timer);
      waiting.delete(check);
      resolve(m);
    };
    waiting.add(check);
    check();
  });
  return { child, lines, until };
}

const line = (...messages: object[]) => messages.map((m) => `${JSON.stringify(m)}\n`).join('');
const initialize = (capabilities: object) => ({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities, clientInfo: { name: 'raw', version: '1' } } });
const initialized = { jsonrpc: '2.0', method: 'notifications/initialized' };
const callTool = (id: number, args: object) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'render_ascii', arguments: args } });

describe('v2a mcp over stdio', () => {
  test('initialize, initialized and a call in one write: the initialize result comes before roots/list', async () => {
    const { child, lines, until } = serve(dir);
    try {
      child.stdin.write(line(initialize({ roots: {} }), initialized, callTool(2, { imagePath: 'photo.png', columns: 16 })));
      const ask = await until((m) => m.method === 'roots/list');
      assert.equal(lines[0]!.id, 1, `first line: ${JSON.stringify(lines[0]).slice(0, 200)}`);
      assert.ok('result' in lines[0]!);
      child.stdin.write(line({ jsonrpc: '2.0', id: ask.id, result: { roots: [{ uri: pathToFileURL(dir).href }] } }));
      const reply = await until((m) => m.id === 2);
      assert.equal((reply.result as { isError?: boolean }).isError, undefined, JSON.stringify(reply).slice(0, 300));
    } finally {
      child.kill();
    }
  });

  test('a cancel of one call of a batch leaves out that reply only', async () => {
    const { child, until } = serve(dir);
    try {
      child.stdin.write(line(initialize({}), initialized));
      await until((m) => m.id === 1);
      child.stdin.write(line(
        [callTool(11, { imagePath: 'photo.png', columns: 16 }), callTool(12, { imagePath: 'slow.png', columns: 400, format: 'png', fineShapes: true }), { jsonrpc: '2.0', id: 13, method: 'ping' }],
        { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 12 } },
        { jsonrpc: '2.0', id: 14, method: 'ping' },
      ));
      await until((m) => m.id === 14);
      const batch = await until((m) => Array.isArray(m)) as unknown as Array<{ id: number; result?: { isError?: boolean } }>;
      assert.deepEqual(batch.map((m) => m.id), [11, 13]);
      assert.equal(batch[0]!.result?.isError, undefined);
    } finally {
      child.kill();
    }
  });

  test('without roots (working directory /, no --root, a client without roots) the instructions say imagePath is unavailable', async () => {
    const client = new Client({ name: 'v2a-no-roots', version: '1.0.0' });
    await client.connect(new StdioClientTransport({ command: process.execPath, args: [V2A_BIN, 'mcp'], cwd: '/', env: { ...process.env, V2A_DEBUG: '' } as Record<string, string>, stderr: 'pipe' }));
    try {
      const text = client.getInstructions() ?? '';
      assert.match(text, /imagePath is unavailable: this server has no roots/);
      assert.doesNotMatch(text, /inside the allowed roots/);
    } finally {
      await client.close();
    }
    // With a root the instructions offer imagePath as before.
    const rooted = new Client({ name: 'v2a-rooted', version: '1.0.0' });
    await rooted.connect(new StdioClientTransport({ command: process.execPath, args: [V2A_BIN, 'mcp', '--root', dir], cwd: '/', env: { ...process.env, V2A_DEBUG: '' } as Record<string, string>, stderr: 'pipe' }));
    try {
      assert.match(rooted.getInstructions() ?? '', /with imagePath \(a local image file inside the allowed roots\)/);
    } finally {
      await rooted.close();
    }
  });
});
