/**
 * CLI start-up: `v2a render` (and `v2a --help`) load nothing they do not use — no server module,
 * no Fastify, OpenTelemetry or piscina; no png encoder (pako) unless the output is png (the glyph
 * bitmaps it draws with are loaded by every ASCII render: its fine stage reads them); no animation or ffmpeg code for a still image — checked by recording every
 * module the process loads. The time itself is measured by `npm run bench`, never here.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath, pathToFileURL } from 'node:url';
import sharp from 'sharp';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const MAIN = join(ROOT, 'src/cli/main.ts');
let dir = '';
let image = '';
let hook = '';

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'v2a-startup-'));
  image = join(dir, 'x.png');
  await sharp({ create: { width: 64, height: 32, channels: 3, background: '#406080' } }).png().toFile(image);
  // A module hook that appends every URL loaded (ES modules and, through them, CommonJS entries) to a file.
  writeFileSync(join(dir, 'hooks.mjs'), `import { appendFileSync } from 'node:fs';
export async function load(url, context, next) { appendFileSync(process.env.V2A_TRACE_FILE, url + '\\n'); return next(url, context); }`);
  hook = join(dir, 'register.mjs');
  writeFileSync(hook, `import { register } from 'node:module';\nregister(${JSON.stringify(pathToFileURL(join(dir, 'hooks.mjs')).href)});\n`);
});
after(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

function loaded(args: readonly string[]): string[] {
  const trace = join(dir, `trace-${args.join('_').replace(/\W/g, '')}.txt`);
  writeFileSync(trace, '');
  const r = spawnSync(process.execPath, ['--import', 'tsx', '--import', hook, MAIN, ...args], {
    cwd: ROOT, env: { ...process.env, V2A_TRACE_FILE: trace, NO_COLOR: '1' }, encoding: 'utf8',
  });
  assert.equal(r.status, 0, r.stderr);
  return readFileSync(trace, 'utf8').split('\n').filter(Boolean);
}

const SERVER = /\/src\/server\/|\/node_modules\/(fastify|@fastify|@opentelemetry|piscina|undici)\//;
/** What only png output needs. */
const PNG = /\/node_modules\/pako\/|\/src\/core\/format\/png\.ts/;
/** What only animation and video need, and the commands render does not run. */
const OTHER_COMMANDS = /\/src\/cli\/(animate|video-source)\.ts|\/node_modules\/@modelcontextprotocol\//;

test('v2a render loads no server module, Fastify, OpenTelemetry or piscina', () => {
  const urls = loaded([image, '-w', '20']);
  assert.ok(urls.some((u) => u.includes('/src/core/job.ts')), 'the trace sees the renderer');
  assert.deepEqual(urls.filter((u) => SERVER.test(u)), []);
});

test('v2a render to text loads neither the png encoder nor animation or ffmpeg code', () => {
  const urls = loaded([image, '-w', '20']);
  assert.deepEqual(urls.filter((u) => PNG.test(u) || OTHER_COMMANDS.test(u)), []);
});

test('v2a render -o art.png loads the png encoder when it writes png', () => {
  const urls = loaded([image, '-w', '20', '-o', join(dir, 'art.png')]);
  assert.ok(urls.some((u) => /\/src\/core\/format\/png\.ts/.test(u)), 'png.ts loaded');
  assert.ok(urls.some((u) => /\/node_modules\/pako\//.test(u)), 'pako loaded');
  assert.equal(readFileSync(join(dir, 'art.png')).subarray(1, 4).toString('latin1'), 'PNG');
});

test('v2a --help loads neither the renderer nor sharp', () => {
  const urls = loaded(['--help']);
  assert.deepEqual(urls.filter((u) => SERVER.test(u) || /\/src\/core\/(job|render)\.ts|\/src\/node\/(decode|index)\.ts|node_modules\/sharp\//.test(u)), []);
});
