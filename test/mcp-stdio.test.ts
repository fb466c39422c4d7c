/**
 * `v2a mcp` end to end: the CLI spawned as a process, driven by the official MCP SDK client over
 * stdio. initialize, tools/list (outputSchema, imagePath), tools/call in every format from an
 * imagePath (text block, a PNG image block decoded by sharp, structuredContent valid against the
 * outputSchema with ajv), the roots (escapes refused: /etc/passwd, ../.., a symlink out of the root,
 * a directory; the client's MCP roots honoured) and the character budget.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ListRootsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import AjvModule from 'ajv';
import sharp from 'sharp';
import { FORMATS } from '../src/core/params/definitions.js';
import { VERSION } from '../src/core/types.js';
import { RENDER_OUTPUT_SCHEMA } from '../src/server/mcp/reply.js';
import { V2A_BIN, ensureCliBuilt } from './helpers/cli-run.js';

// ajv is CommonJS: its default export may arrive wrapped. Draft-07, as MCP clients validate.
const Ajv = ((AjvModule as unknown as { default?: unknown }).default ?? AjvModule) as typeof AjvModule.default;
const validateOutput = new Ajv({ allErrors: true }).compile(RENDER_OUTPUT_SCHEMA);

const ROOT = fileURLToPath(new URL('..', import.meta.url));
/** The sources through tsx, for the test that watches which of them load. */
const MAIN = join(ROOT, 'src/cli/main.ts');
/** tsx by its URL, so that the server may run in another working directory. */
const TSX = import.meta.resolve('tsx');

let base = '';
let root = '';
let outside = '';
let extra = '';

type Block = { type: string; text?: string; data?: string; mimeType?: string };
type CallResult = { content: Block[]; isError?: boolean; structuredContent?: Record<string, unknown> };

/** `roots`: folders the client lists; `rootUris`: URIs it lists as they are. */
async function connect(args: readonly string[], opts: { roots?: string[]; rootUris?: string[]; cwd?: string; env?: Record<string, string> } = {}): Promise<{ client: Client; stderr: () => string }> {
  const uris = opts.rootUris ?? opts.roots?.map((dir) => pathToFileURL(dir).href);
  const client = new Client({ name: 'v2a-stdio-test', version: '1.0.0' }, uris ? { capabilities: { roots: { listChanged: true } } } : {});
  if (uris) client.setRequestHandler(ListRootsRequestSchema, async () => ({ roots: uris.map((uri) => ({ uri, name: uri })) }));
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [V2A_BIN, 'mcp', ...args],
    cwd: opts.cwd ?? ROOT,
    env: { ...process.env, V2A_DEBUG: '', ...opts.env } as Record<string, string>,
    stderr: 'pipe',
  });
  let err = '';
  transport.stderr?.on('data', (c: Buffer) => { err += c.toString('utf8'); });
  await client.connect(transport);
  return { client, stderr: () => err };
}

async function call(client: Client, args: Record<string, unknown>): Promise<CallResult> {
  return (await client.callTool({ name: 'render_ascii', arguments: args })) as CallResult;
}

function errorText(r: CallResult): string {
  assert.equal(r.isError, true, `expected isError, got ${JSON.stringify(r).slice(0, 300)}`);
  assert.equal(r.content[0]!.type, 'text');
  return r.content[0]!.text!;
}

before(async () => {
  await ensureCliBuilt();
  base = mkdtempSync(join(tmpdir(), 'v2a-mcp-'));
  root = join(base, 'root');
  outside = join(base, 'outside');
  extra = join(base, 'extra');
  for (const d of [root, outside, extra, join(root, 'folder.png')]) mkdirSync(d, { recursive: true });
  const pixels = Buffer.alloc(200 * 100 * 3);
  for (let i = 0; i < pixels.length; i += 3) {
    const x = (i / 3) % 200;
    const y = Math.floor(i / 3 / 200);
    pixels[i] = x; pixels[i + 1] = y * 2; pixels[i + 2] = Math.hypot(x - 100, y - 50) < 30 ? 250 : 40;
  }
  const png = await sharp(pixels, { raw: { width: 200, height: 100, channels: 3 } }).png().toBuffer();
  writeFileSync(join(root, 'photo.png'), png);
  writeFileSync(join(outside, 'secret.png'), png);
  writeFileSync(join(extra, 'theirs.png'), png);
  symlinkSync(join(outside, 'secret.png'), join(root, 'escape.png'));
  symlinkSync(join(root, 'photo.png'), join(root, 'alias.png'));
  symlinkSync(outside, join(root, 'linked-dir'));
});

after(() => {
  if (base) rmSync(base, { recursive: true, force: true });
});

describe('v2a mcp over stdio, with the official SDK client', () => {
  let client: Client;
  let stderr: () => string;
  before(async () => {
    ({ client, stderr } = await connect(['--root', root]));
  });
  after(async () => client?.close());

  test('initialize: server info and instructions naming imagePath', () => {
    assert.deepEqual(client.getServerVersion(), { name: 'v2a', version: VERSION, title: 'v2a image to character art' });
    assert.match(client.getInstructions() ?? '', /with imagePath \(a local image file inside the allowed roots\), imageBase64 \(imageUrl is off on this server: no image host is allowed\), and optional/);
    assert.match(client.getInstructions() ?? '', /Images may have up to 16 MiB and 50,000,000 pixels; the art is 8 to 400 columns and at most 800 rows/);
    assert.deepEqual(client.getServerCapabilities(), { tools: { listChanged: false } });
  });

  test('tools/list: render_ascii with imagePath and the outputSchema', async () => {
    const { tools } = await client.listTools();
    assert.deepEqual(tools.map((t) => t.name), ['render_ascii']);
    const props = (tools[0]!.inputSchema as { properties: Record<string, unknown> }).properties;
    assert.deepEqual(Object.keys(props).slice(0, 3), ['imagePath', 'imageUrl', 'imageBase64']);
    assert.deepEqual(tools[0]!.outputSchema, RENDER_OUTPUT_SCHEMA);
  });

  for (const format of FORMATS) {
    test(`tools/call format=${format} from an imagePath: text, a PNG image block, a valid summary`, async () => {
      await client.listTools(); // the SDK client then validates structuredContent against outputSchema too
      const r = await call(client, { imagePath: join(root, 'photo.png'), format, columns: 48, color: format !== 'text' });
      assert.equal(r.isError, undefined, JSON.stringify(r.content).slice(0, 400));
      assert.deepEqual(r.content.map((b) => b.type), ['text', 'image']);
      const s = r.structuredContent as { format: string; columns: number; rows: number; characters: number; image: { width: number; height: number } };
      assert.ok(validateOutput(s), JSON.stringify(validateOutput.errors));
      assert.deepEqual([s.format, s.columns, s.rows, s.characters], [format, 48, 12, r.content[0]!.text!.length]);
      const text = r.content[0]!.text!;
      if (format === 'text' || format === 'png') assert.deepEqual(text.split('\n').slice(0, -1).map((l) => [...l].length), Array(12).fill(48));
      if (format === 'json') assert.equal(JSON.parse(text).columns, 48);
      if (format === 'json-compact') assert.equal(JSON.parse(text).chroma.encoding, 'rgb24-b64-v1');
      if (format === 'svg') assert.match(text, /<svg/);
      if (format === 'html') assert.match(text, /<pre/);
      if (format === 'ansi') assert.match(text, /\x1b\[38;2;/);
      assert.equal(r.content[1]!.mimeType, 'image/png');
      const { info } = await sharp(Buffer.from(r.content[1]!.data!, 'base64')).raw().toBuffer({ resolveWithObject: true });
      assert.deepEqual([info.width, info.height], [48 * 8, 12 * 16]);
      assert.deepEqual([s.image.width, s.image.height], [info.width, info.height]);
    });
  }

  test('relative paths are taken from the first root; a symlink inside the root is followed', async () => {
    for (const imagePath of ['photo.png', './alias.png', join(root, 'alias.png')]) {
      const r = await call(client, { imagePath, columns: 20 });
      assert.equal(r.isError, undefined, `${imagePath}: ${JSON.stringify(r.content).slice(0, 300)}`);
    }
  });

  test('imageBase64 works on this face too; two sources or none are refused', async () => {
    const b64 = (await sharp(join(root, 'photo.png')).toBuffer()).toString('base64');
    assert.equal((await call(client, { imageBase64: b64, columns: 20 })).isError, undefined);
    assert.match(errorText(await call(client, { imageBase64: b64, imagePath: 'photo.png' })), /Exactly one image source.*imagePath, imageBase64/);
    assert.match(errorText(await call(client, { columns: 20 })), /No image was supplied: give exactly one of imagePath/);
  });

  test('a file whose image cannot be read names the file, as refusals of the path do (the format\'s message alone did not say which)', async () => {
    writeFileSync(join(root, 'notes.bmp'), 'BM not really an image');
    assert.match(errorText(await call(client, { imagePath: 'notes.bmp', columns: 20 })), /^notes\.bmp: The image format is not supported/);
    // Parameters are not the file's fault: no path before them.
    assert.match(errorText(await call(client, { imagePath: 'photo.png', columns: 0 })), /^(?!photo\.png)/);
  });

  test('escapes are refused with isError and a clear message, nothing is read', async () => {
    const cases: Array<[string, RegExp]> = [
      ['/etc/passwd', /"\/etc\/passwd" is outside the allowed roots/],
      ['../..', /"\.\.\/\.\." \(read as "[^"]+"\) is outside the allowed roots/],
      ['../outside/secret.png', /is outside the allowed roots/],
      [join(outside, 'secret.png'), /is outside the allowed roots/],
      ['escape.png', /"escape\.png" leads outside the allowed roots .* through a symbolic link/],
      ['linked-dir/secret.png', /leads outside the allowed roots/],
      ['folder.png', /"folder\.png" is a directory, not an image file/],
      ['.', /is a directory/],
      // A relative path is named as read: the agent does not know the first root.
      ['missing.png', /"missing\.png" \(read as "[^"]+\/missing\.png"\) does not exist/],
      [join(root, 'missing.png'), /"[^"]+missing\.png" does not exist/],
      // Through a link out, nothing past the link is looked up: an existing and a missing file read alike.
      ['linked-dir/no-such-file.png', /"linked-dir\/no-such-file\.png" leads outside the allowed roots .* through a symbolic link/],
      ['https://example.com/a.png', /is a URI of another scheme or host/],
      ['file://elsewhere.example/a.png', /is a URI of another scheme or host/],
    ];
    for (const [imagePath, message] of cases) {
      const text = errorText(await call(client, { imagePath }));
      assert.match(text, message, imagePath);
      assert.ok(text.includes(root) || !/outside/.test(text), 'the message names the roots');
    }
    assert.match(errorText(await call(client, { imagePath: 12 })), /imagePath must be a non-empty string/);
  });

  test('imagePath as a file: URI (as roots are given) or with %-escapes reads the file', async () => {
    for (const imagePath of [pathToFileURL(join(root, 'photo.png')).href, pathToFileURL(join(root, 'photo.png')).href.replace('photo', '%70hoto')]) {
      assert.equal((await call(client, { imagePath, columns: 16 })).isError, undefined, imagePath);
    }
  });

  test('bad parameters are refused naming them, as over HTTP', async () => {
    const text = errorText(await call(client, { imagePath: 'photo.png', columns: 2, bogus: true }));
    assert.match(text, /columns/);
    assert.match(text, /bogus/);
    assert.equal(stderr(), '', 'nothing on stderr for tool failures');
  });
});

describe('v2a mcp: the client\'s roots and the character budget', () => {
  test('a client offering MCP roots may read inside them; without --root they replace the working directory', async () => {
    const { client } = await connect([], { roots: [extra], cwd: root });
    try {
      assert.equal((await call(client, { imagePath: join(extra, 'theirs.png'), columns: 16 })).isError, undefined, 'inside a client root');
      assert.equal((await call(client, { imagePath: 'theirs.png', columns: 16 })).isError, undefined, 'relative to the client\'s first root');
      assert.match(errorText(await call(client, { imagePath: join(root, 'photo.png') })), new RegExp(`is outside the allowed roots \\(${extra}\\)`), 'the working directory is no root once the client lists its own');
    } finally {
      await client.close();
    }
    const { client: both } = await connect(['--root', root], { roots: [extra] });
    try {
      assert.equal((await call(both, { imagePath: 'photo.png', columns: 16 })).isError, undefined, '--root stays with client roots');
      assert.match(errorText(await call(both, { imagePath: join(outside, 'secret.png') })), new RegExp(`allowed roots \\(${root}, ${extra}\\)`));
    } finally {
      await both.close();
    }
    const { client: cwdOnly } = await connect([], { cwd: root });
    try {
      assert.equal((await call(cwdOnly, { imagePath: 'photo.png', columns: 16 })).isError, undefined, 'no client roots: the working directory');
    } finally {
      await cwdOnly.close();
    }
    // A client that lists no root, or none usable here, has narrowed the roots to nothing: the
    // working directory is not read in their place; what was left out is logged.
    for (const listed of [[], ['https://example.com/pictures/', pathToFileURL(join(base, 'gone')).href]]) {
      const { client: none, stderr } = await connect([], { rootUris: listed, cwd: root });
      try {
        assert.match(errorText(await call(none, { imagePath: 'photo.png', columns: 16 })), /allowed roots \(none: the client lists no folder of this machine; start v2a mcp with --root DIR\)/, JSON.stringify(listed));
      } finally {
        await none.close();
      }
      if (listed.length) assert.match(stderr(), /the client's root "https:\/\/example\.com\/pictures\/" is left out: not a file: URI\n.*gone" is left out: not a folder on this machine\n/);
    }
    const { client: slash } = await connect([], { cwd: '/' });
    try {
      assert.match(errorText(await call(slash, { imagePath: join(root, 'photo.png') })), /allowed roots \(none: start v2a mcp with --root DIR/, 'a working directory of / is no root');
    } finally {
      await slash.close();
    }
    const { client: plain } = await connect(['--root', root]);
    try {
      assert.match(errorText(await call(plain, { imagePath: join(extra, 'theirs.png') })), /outside the allowed roots/, 'no client roots: only --root');
    } finally {
      await plain.close();
    }
  });

  test('a root given through a symlink: paths by the given folder and by its real path are inside; escapes are not', async () => {
    const link = join(base, 'root-link');
    symlinkSync(root, link);
    const { client } = await connect(['--root', link]);
    try {
      for (const imagePath of [join(link, 'photo.png'), join(root, 'photo.png'), 'photo.png']) {
        assert.equal((await call(client, { imagePath, columns: 16 })).isError, undefined, imagePath);
      }
      assert.match(errorText(await call(client, { imagePath: join(link, 'escape.png') })), /through a symbolic link/);
      assert.match(errorText(await call(client, { imagePath: join(link, '..', 'outside', 'secret.png') })), /is outside the allowed roots/);
    } finally {
      await client.close();
    }
  });

  test('a reply over --max-chars is an isError naming columns and formats that fit; the suggestion fits', async () => {
    const { client } = await connect(['--root', root, '--max-chars', '12000']);
    try {
      const args = { imagePath: 'photo.png', format: 'html', color: true, columns: 120 };
      const text = errorText(await call(client, args));
      assert.match(text, /The html reply at 120 columns would be [\d,]+ characters, over this server's budget of 12,000/);
      assert.match(text, /nothing was cut/);
      const columns = Number(/columns=(\d+) or fewer with format=html/.exec(text)?.[1]);
      assert.ok(columns >= 8 && columns < 120, text);
      const ok = await call(client, { ...args, columns });
      assert.equal(ok.isError, undefined, `the suggested ${columns} columns fit: ${JSON.stringify(ok.content).slice(0, 200)}`);
      assert.match(text, /format=text \([\d,]+\)/);
      assert.equal((await call(client, { ...args, format: 'text' })).isError, undefined, 'the suggested format fits');
    } finally {
      await client.close();
    }
  });

  test('a budget nothing fits says so, and does not send a text reply back to format=text', async () => {
    const { client } = await connect(['--root', root, '--max-chars', '500']);
    try {
      const text = errorText(await call(client, { imagePath: 'photo.png', format: 'text', columns: 60 }));
      assert.match(text, /No format fits at 60 columns, and no fewer columns were found that fit with format=text: the budget is too small for this image\./);
      assert.doesNotMatch(text, /ask for format=text/);
    } finally {
      await client.close();
    }
  });

  test('piped messages then end of input: every one answered; the server, Fastify and OpenTelemetry never load', async () => {
    const { spawnSync } = await import('node:child_process');
    const hooks = join(base, 'hooks.mjs');
    writeFileSync(hooks, `export async function resolve(s, c, next) { const r = await next(s, c);
      if (/fastify|opentelemetry|piscina|undici|src\\/server\\/(app|start|render-service)/.test(r.url)) process.stderr.write('LOADED ' + r.url + '\\n');
      return r; }`);
    const register = join(base, 'register.mjs');
    writeFileSync(register, `import { register } from 'node:module'; register(${JSON.stringify(pathToFileURL(hooks).href)});`);
    const input = [
      { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'pipe', version: '1' } } },
      { jsonrpc: '2.0', method: 'notifications/initialized' },
      { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'render_ascii', arguments: { imagePath: 'photo.png', columns: 16 } } },
    ].map((m) => JSON.stringify(m) + '\n').join('');
    const r = spawnSync(process.execPath, ['--import', pathToFileURL(register).href, '--import', TSX, MAIN, 'mcp', '--root', root], { cwd: ROOT, input, encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    assert.equal(r.stderr, '');
    const replies = r.stdout.trim().split('\n').map((l) => JSON.parse(l));
    assert.deepEqual(replies.map((m) => m.id), [1, 2]);
    assert.equal(replies[0].result.protocolVersion, '2025-11-25');
    assert.deepEqual(replies[1].result.content.map((c: Block) => c.type), ['text', 'image']);
  });

  test('a message past the JSON bounds (nested deeper than read) is refused with its id, so the client\'s call ends', async () => {
    const { spawnSync } = await import('node:child_process');
    let deep: unknown = 1;
    for (let i = 0; i < 40; i++) deep = { a: deep };
    const line = JSON.stringify({ jsonrpc: '2.0', id: 'deep', method: 'tools/call', params: { name: 'render_ascii', arguments: { x: deep } } });
    const r = spawnSync(process.execPath, [V2A_BIN, 'mcp', '--root', root], { cwd: ROOT, input: line + '\n', encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    const reply = JSON.parse(r.stdout.trim());
    assert.equal(reply.id, 'deep');
    assert.equal(reply.error.code, -32600);
  });

  test('a --root that is not a folder is a usage error before serving', async () => {
    const { spawnSync } = await import('node:child_process');
    const r = spawnSync(process.execPath, [V2A_BIN, 'mcp', '--root', join(root, 'photo.png')], { cwd: ROOT, input: '', encoding: 'utf8' });
    assert.equal(r.status, 2, r.stderr);
    assert.match(r.stderr, /^v2a: --root: root ".*photo\.png" is not a folder\n$/);
  });

  test('V2A_MCP_MAX_CHARS is read by the server\'s parser (its range, `_` separators); a bad one or a bad --max-chars is a usage error naming it', () => {
    const mcp = (args: string[], env: Record<string, string>) => spawnSync(process.execPath, [V2A_BIN, 'mcp', '--root', root, ...args], { cwd: ROOT, input: '', encoding: 'utf8', env: { ...process.env, V2A_DEBUG: '', ...env } });
    const tooBig = mcp([], { V2A_MCP_MAX_CHARS: '200000000' });
    assert.equal(tooBig.status, 2, tooBig.stderr);
    assert.equal(tooBig.stderr, 'v2a: V2A_MCP_MAX_CHARS must be an integer from 0 to 100000000 (got "200000000")\n');
    const flag = mcp(['--max-chars', '-1'], {});
    assert.equal(flag.status, 2, flag.stderr);
    assert.match(flag.stderr, /^v2a: --max-chars must be a whole number of characters from 0 to 100000000, 0 for no budget \(got "-1"\)\n$/);
    // The flag wins over a bad variable only where it is given: the variable is not read then.
    assert.equal(mcp(['--max-chars', '500'], { V2A_MCP_MAX_CHARS: 'lots' }).status, 0);
    assert.equal(mcp([], { V2A_MCP_MAX_CHARS: '20_000' }).status, 0);
  });
});

describe('v2a mcp: roots under change', () => {
  test('a folder swapped for a symlink out while files are read: nothing outside a root is ever read', async () => {
    const { Roots, realFolder } = await import('../src/server/mcp/roots.js');
    const { renameSync } = await import('node:fs');
    const dir = mkdtempSync(join(tmpdir(), 'v2a-race-'));
    try {
      const inRoot = join(dir, 'root'), away = join(dir, 'away');
      mkdirSync(join(inRoot, 'real'), { recursive: true });
      mkdirSync(away);
      writeFileSync(join(inRoot, 'real', 'x.png'), 'inside');
      writeFileSync(join(away, 'x.png'), 'OUTSIDE');
      symlinkSync(away, join(inRoot, 'spare'));
      renameSync(join(inRoot, 'real'), join(inRoot, 'race'));
      const roots = new Roots([await realFolder(inRoot)]);
      // Exchanges race/ (the real folder, then the link out, ...) and spare/ on every turn of the
      // event loop, between the steps of each read.
      let swapping = true;
      const swap = () => {
        if (!swapping) return;
        renameSync(join(inRoot, 'race'), join(inRoot, 'tmp'));
        renameSync(join(inRoot, 'spare'), join(inRoot, 'race'));
        renameSync(join(inRoot, 'tmp'), join(inRoot, 'spare'));
        setImmediate(swap);
      };
      setImmediate(swap);
      const read: string[] = [];
      const until = Date.now() + 1500;
      while (Date.now() < until) {
        try {
          read.push(Buffer.from(await roots.read(join(inRoot, 'race', 'x.png'), 1 << 20)).toString());
        } catch { /* refused or missing mid-swap */ }
      }
      swapping = false;
      assert.ok(read.length > 0, 'some reads went through');
      assert.deepEqual([...new Set(read)], ['inside']);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('V2A_IMAGE_FETCH_ALLOWLIST and V2A_FETCH_TIMEOUT_MS are read as the server reads them, when v2a mcp starts', async () => {
    // A bad value stops the server at once, each named, where it was found only by the first
    // imageUrl call (and the agent had been told imageUrl works).
    const bad = spawnSync(process.execPath, [V2A_BIN, 'mcp'], {
      cwd: ROOT, input: '', encoding: 'utf8', timeout: 20_000,
      env: { ...process.env, V2A_DEBUG: '', V2A_IMAGE_FETCH_ALLOWLIST: '*.', V2A_FETCH_TIMEOUT_MS: '5' },
    });
    assert.equal(bad.status, 2, bad.stderr);
    assert.equal(bad.stdout, '');
    assert.match(bad.stderr, /^v2a: V2A_IMAGE_FETCH_ALLOWLIST invalid host pattern "\*\." .*\nv2a: V2A_FETCH_TIMEOUT_MS must be an integer from 100 to 600000 .*\n/);
    // A good list is named to the agent, as /api/mcp names its own.
    const { client, stderr } = await connect([], { env: { V2A_IMAGE_FETCH_ALLOWLIST: 'Images.Example.com,*.cdn.example', V2A_FETCH_TIMEOUT: '5000' } });
    try {
      assert.equal(stderr(), 'v2a mcp: V2A_FETCH_TIMEOUT is no v2a setting and is ignored (did you mean V2A_FETCH_TIMEOUT_MS?)\n');
      assert.match(client.getInstructions() ?? '', /with imagePath \(a local image file inside the allowed roots\), imageUrl \(https, on images\.example\.com, \*\.cdn\.example\) or imageBase64, and optional/);
    } finally {
      await client.close();
    }
  });

  test('new roots are in force for a call sent right after notifications/roots/list_changed', async () => {
    let current = [extra];
    const client = new Client({ name: 'v2a-roots-test', version: '1.0.0' }, { capabilities: { roots: { listChanged: true } } });
    client.setRequestHandler(ListRootsRequestSchema, async () => ({ roots: current.map((d) => ({ uri: pathToFileURL(d).href })) }));
    await client.connect(new StdioClientTransport({ command: process.execPath, args: [V2A_BIN, 'mcp'], cwd: base, env: { ...process.env, V2A_DEBUG: '' } as Record<string, string>, stderr: 'pipe' }));
    try {
      for (let i = 0; i < 6; i++) {
        current = i % 2 ? [extra] : [root];
        await client.sendRootsListChanged();
        const [inside, gone] = i % 2 ? [join(extra, 'theirs.png'), join(root, 'photo.png')] : [join(root, 'photo.png'), join(extra, 'theirs.png')];
        assert.equal((await call(client, { imagePath: inside, columns: 8 })).isError, undefined, `round ${i}: the new root`);
        assert.match(errorText(await call(client, { imagePath: gone, columns: 8 })), /outside the allowed roots/, `round ${i}: the root just removed`);
      }
    } finally {
      await client.close();
    }
  });

  test('a client slow to answer roots/list costs one wait, not one per call; its late answer is taken', async () => {
    const { spawn } = await import('node:child_process');
    const child = spawn(process.execPath, [V2A_BIN, 'mcp', '--root', root], { cwd: ROOT, stdio: ['pipe', 'pipe', 'pipe'] });
    const replies = new Map<number, (m: Record<string, unknown>) => void>();
    let buf = '';
    let rootsAsked: unknown;
    child.stdout.on('data', (c: Buffer) => {
      buf += c.toString();
      for (let nl = buf.indexOf('\n'); nl >= 0; nl = buf.indexOf('\n')) {
        const m = JSON.parse(buf.slice(0, nl)) as Record<string, unknown>;
        buf = buf.slice(nl + 1);
        if (m.method === 'roots/list') rootsAsked = m.id;
        if (typeof m.id === 'number') replies.get(m.id)?.(m);
      }
    });
    const send = (m: object) => child.stdin.write(JSON.stringify(m) + '\n');
    const request = (id: number, method: string, params: object) => new Promise<Record<string, unknown>>((resolve) => {
      replies.set(id, resolve);
      send({ jsonrpc: '2.0', id, method, params });
    });
    try {
      await request(1, 'initialize', { protocolVersion: '2025-06-18', capabilities: { roots: {} }, clientInfo: { name: 'silent', version: '1' } });
      send({ jsonrpc: '2.0', method: 'notifications/initialized' });
      const args = { name: 'render_ascii', arguments: { imagePath: join(root, 'photo.png'), columns: 8 } };
      await request(2, 'tools/call', args); // waits for the roots answer that never comes
      const t0 = performance.now();
      const second = await request(3, 'tools/call', args);
      assert.equal((second.result as { isError?: boolean }).isError, undefined);
      assert.ok(performance.now() - t0 < 2500, `the second call waited ${Math.round(performance.now() - t0)} ms`);
      // The answer, after the calls stopped waiting for it: its roots are in force from then on.
      const theirs = { name: 'render_ascii', arguments: { imagePath: join(extra, 'theirs.png'), columns: 8 } };
      assert.equal(((await request(4, 'tools/call', theirs)).result as { isError?: boolean }).isError, true, 'not a root yet');
      assert.equal(typeof rootsAsked, 'string');
      send({ jsonrpc: '2.0', id: rootsAsked, result: { roots: [{ uri: pathToFileURL(extra).href }] } });
      const late = await request(5, 'tools/call', theirs);
      assert.equal((late.result as { isError?: boolean }).isError, undefined, JSON.stringify(late).slice(0, 300));
    } finally {
      child.kill();
    }
  });
});
