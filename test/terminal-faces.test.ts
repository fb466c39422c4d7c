/**
 * The terminal's extension parameters (glyphs, cellAspect, colorDepth) through every face: the
 * HTTP API (problem+json naming the parameter), the MCP tool (official SDK client, isError) and
 * the CLI (one line, exit 2) refuse the same values with the same message, and accept the same.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { kebabName } from '../src/core/params/definitions.js';
import { parseParams } from '../src/core/params/validate.js';
import { photo, postForm, startTestServer, type TestServer } from './server-helpers.js';
import { cliEnv, ensureCliBuilt, runCli } from './helpers/cli-run.js';


/** The test runner's environment without what steers the CLI's colour and size. */
function plainEnv(): Record<string, string> {
  return cliEnv({ V2A_DEBUG: '' });
}

const cli = (args: readonly string[]) => runCli(args, plainEnv());

/** Invalid values and the one message every face must give for them. */
const INVALID: readonly [name: string, value: string, message: RegExp][] = [
  ['glyphs', ' .é@', /^glyphs must be up to 256 measured glyphs .*: "é" \(U\+00E9\) was not measured from the reference font$/],
  ['glyphs', ' .\u0007@', /^glyphs must be .*: U\+0007 is not printable$/],
  ['glyphs', 'aba', /^glyphs must be .*: "a" \(U\+0061\) is given twice$/],
  ['cellAspect', '1.5', /^cellAspect must be a number from 0.25 to 1 \(got/],
  ['cellAspect', 'tall', /^cellAspect must be a number from 0.25 to 1 \(got "tall"\)$/],
  ['colorDepth', '8', /^colorDepth must be one of truecolor, 256, 16 \(got "8"\)$/],
];

let server: TestServer;
let client: Client;
let image: Buffer;
let dir = '';
let file = '';

before(async () => {
  await ensureCliBuilt();
  server = await startTestServer();
  client = new Client({ name: 'v2a-terminal-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${server.base}/api/mcp`)));
  image = await photo(160, 120);
  dir = mkdtempSync(join(tmpdir(), 'v2a-faces-'));
  file = join(dir, 'photo.png');
  writeFileSync(file, image);
});

after(async () => {
  await client?.close();
  await server?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const mcpArgs = (extra: Record<string, unknown>) => ({ imageBase64: image.toString('base64'), columns: 32, ...extra });

/** The JSON value of a string-carried parameter as an MCP client would send it. */
function jsonValue(name: string, value: string): unknown {
  const r = parseParams({ [name]: value }, 'strings');
  return r.ok ? (r.params as Record<string, unknown>)[name] : Number.isFinite(Number(value)) ? Number(value) : value;
}

describe('extension parameters: the same validation through HTTP, MCP and the CLI', () => {
  for (const [name, value, message] of INVALID) {
    test(`${name}=${JSON.stringify(value)}`, async () => {
      const http = await postForm(`${server.base}/api/v1/render`, { image, [name]: value });
      assert.equal(http.status, 400);
      assert.match(http.contentType, /application\/problem\+json/);
      const problem = http.json as { errors: { parameter: string; message: string }[] };
      assert.equal(problem.errors[0]!.parameter, name);
      assert.match(problem.errors[0]!.message, message);

      const tool = await client.callTool({ name: 'render_ascii', arguments: mcpArgs({ [name]: jsonValue(name, value) }) });
      assert.equal(tool.isError, true);
      const text = (tool.content as { type: string; text: string }[])[0]!.text;
      assert.ok(text.includes(problem.errors[0]!.message.replace(/\(got .*\)$/, '')), `MCP: ${text}`);

      const flag = name === 'colorDepth' ? '--colors' : `--${kebabName(name)}`;
      const run = await cli([file, flag, value]);
      assert.equal(run.code, 2, run.stderr);
      assert.equal(run.stdout, '');
      const line = run.stderr.split('\n')[0]!.replace(/^v2a: /, '');
      // chafa's -c 8 gets the nearest of v2a's depths as a hint.
      if (name === 'colorDepth') assert.match(line, /^-c\/--colors must be one of truecolor, 256, 16, none \(got "8"\) \(Did you mean -c 16\?\)$/);
      // The same message, naming the flag the user typed.
      else assert.equal(line, problem.errors[0]!.message.replace(new RegExp(`^${name}\\b`), flag));
    });
  }

  test('valid values render alike over HTTP, MCP and the CLI', async () => {
    const params = { glyphs: ' .oO@', cellAspect: '0.6', colorDepth: '256', color: 'true', format: 'ansi', columns: '32' };
    const http = await postForm(`${server.base}/api/v1/render`, { image, ...params });
    assert.equal(http.status, 200, http.text);
    assert.match(http.text, /\x1b\[38;5;\d+m/);
    assert.ok(!/\x1b\[38;2;/.test(http.text));
    const rows = http.text.trimEnd().split('\n');
    assert.equal(rows.length, Math.round((32 * 120 * 0.6) / 160));
    assert.ok([...http.text.replace(/\x1b\[[0-9;]*m/g, '').replace(/\n/g, '')].every((c) => ' .oO@'.includes(c)));

    const tool = await client.callTool({ name: 'render_ascii', arguments: mcpArgs({ glyphs: ' .oO@', cellAspect: 0.6, colorDepth: '256', color: true, format: 'ansi' }) });
    assert.equal(tool.isError, undefined);
    const text = (tool.content as { type: string; text: string }[])[0]!.text;

    const run = await cli([file, '--glyphs', ' .oO@', '--cell-aspect', '0.6', '--colors', '256', '--columns', '32']);
    assert.equal(run.code, 0, run.stderr);
    assert.equal(run.stdout, http.text.endsWith('\n') ? http.text : http.text + '\n', 'CLI and HTTP give the same bytes');
    assert.ok(text.includes(http.text.trimEnd().split('\n')[0]!), 'MCP gives the same art');
  });

  test('the defaults change nothing over HTTP', async () => {
    const base = await postForm(`${server.base}/api/v1/render`, { image, format: 'json', color: 'true', columns: '24' });
    const same = await postForm(`${server.base}/api/v1/render`, { image, format: 'json', color: 'true', columns: '24', glyphs: '', cellAspect: '0.5', colorDepth: 'truecolor' });
    const a = base.json as Record<string, unknown>;
    const b = same.json as Record<string, unknown>;
    assert.deepEqual({ ...b, explicit: undefined }, { ...a, explicit: undefined });
    assert.ok(!('glyphs' in (a.params as object)) && !('cellAspect' in (a.params as object)));
  });
});
