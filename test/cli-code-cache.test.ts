/**
 * The built CLI's code cache (src/cli/code-cache.ts) on real files: written after a run, read by
 * the next, never trusted across a change of source (even one of the same length, which V8's own
 * check lets through) nor when damaged, never read from or written to a directory others may write to, off when
 * NODE_DISABLE_COMPILE_CACHE is set. The packed CLI's use of it: test/package.test.ts.
 */
import assert from 'node:assert/strict';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { codeCacheDir, COMMAND_NAMES, commandVariant, KEEP_FILES, requireWithCodeCache } from '../src/cli/code-cache.js';

const root = mkdtempSync(join(tmpdir(), 'v2a-code-cache-'));
after(() => rmSync(root, { recursive: true, force: true }));

interface Mod { answer(): number; lazy(n: number): number }

/** A CommonJS module whose `lazy` is compiled only when called (after the module ran). */
function moduleSource(k: number): string {
  return `'use strict';\nexports.answer = () => ${k};\nexports.lazy = function lazy(n) { let s = 0; for (let i = 0; i < n; i++) s += i * ${k}; return s; };\n`;
}

function fresh(name: string): { dir: string; file: string } {
  const dir = join(root, name);
  mkdirSync(dir);
  const file = join(dir, 'm.cjs');
  writeFileSync(file, moduleSource(41));
  return { dir, file };
}

/** fresh(), then one run that compiled `lazy` and saved its cache into `cache`. */
function savedOnce(name: string): { dir: string; file: string; cache: string } {
  const { dir, file } = fresh(name);
  const cache = join(dir, 'cache');
  const a = requireWithCodeCache<Mod>(file, cache, 'render');
  a.exports.lazy(3);
  a.save();
  return { dir, file, cache };
}

test('the first run writes the cache after running; the next run starts from it', () => {
  const { dir, file } = fresh('roundtrip');
  const cache = join(dir, 'cache');
  const first = requireWithCodeCache<Mod>(file, cache, 'render');
  assert.equal(first.fromCache, false);
  assert.equal(first.exports.lazy(10), 45 * 41);
  first.save();
  const files = readdirSync(cache);
  assert.equal(files.length, 1);
  assert.match(files[0]!, /^[0-9a-f]{8}-.+-render\.bin$/);
  assert.equal(statSync(cache).mode & 0o777, 0o700);
  assert.equal(statSync(join(cache, files[0]!)).mode & 0o777, 0o600);
  const second = requireWithCodeCache<Mod>(file, cache, 'render');
  assert.equal(second.fromCache, true, 'V8 accepted the cached code');
  assert.equal(second.exports.answer(), 41);
  assert.equal(second.exports.lazy(10), 45 * 41);
  second.save(); // read from the cache: nothing to write
  assert.deepEqual(readdirSync(cache), files);
  // Another variant has a cache of its own.
  assert.equal(requireWithCodeCache<Mod>(file, cache, 'options').fromCache, false);
});

test('a changed source of the same length runs as changed, with a cache of its own', () => {
  const { file, cache } = savedOnce('changed');
  const before = readdirSync(cache);
  writeFileSync(file, moduleSource(42)); // same length, other code
  const b = requireWithCodeCache<Mod>(file, cache, 'render');
  assert.equal(b.fromCache, false);
  assert.equal(b.exports.answer(), 42);
  assert.equal(b.exports.lazy(10), 45 * 42);
  b.save();
  const now = readdirSync(cache);
  assert.equal(now.length, 2, 'both kept (two installed versions do not evict each other)');
  assert.ok(before.every((f) => now.includes(f)));
});

test('a damaged cache file is not used, and the run writes it again', () => {
  const { file, cache } = savedOnce('damaged');
  const path = join(cache, readdirSync(cache)[0]!);
  const good = readFileSync(path);
  const bad = Buffer.from(good);
  for (let i = bad.length >> 1; i < (bad.length >> 1) + 16; i++) bad[i]! ^= 0x5a;
  writeFileSync(path, bad);
  const b = requireWithCodeCache<Mod>(file, cache, 'render');
  assert.equal(b.fromCache, false);
  assert.equal(b.exports.lazy(10), 45 * 41);
  b.save();
  assert.equal(requireWithCodeCache<Mod>(file, cache, 'render').fromCache, true, 'written again');
  writeFileSync(path, good.subarray(0, 3));
  assert.equal(requireWithCodeCache<Mod>(file, cache, 'render').fromCache, false, 'a truncated file');
});

test(`a write keeps the ${KEEP_FILES} most recently written cache files`, () => {
  const { dir, file } = fresh('bounded');
  const cache = join(dir, 'cache');
  const t0 = Date.now() / 1000 - 1000;
  const order: string[] = [];
  for (let i = 0; i < KEEP_FILES + 2; i++) {
    writeFileSync(file, moduleSource(100 + i));
    requireWithCodeCache<Mod>(file, cache, 'render').save();
    const written = readdirSync(cache).find((n) => !order.includes(n))!;
    order.push(written);
    // Distinct write times, oldest first, whatever the file system's resolution.
    utimesSync(join(cache, written), t0 + i, t0 + i);
  }
  const left = readdirSync(cache).sort();
  assert.equal(left.length, KEEP_FILES);
  assert.deepEqual(left, order.slice(-KEEP_FILES).sort(), 'the two oldest went');
  // A partial file of a run that died while writing goes after an hour, a fresh one stays.
  writeFileSync(join(cache, 'old.bin.1.tmp'), 'x');
  utimesSync(join(cache, 'old.bin.1.tmp'), t0 - 7200, t0 - 7200);
  writeFileSync(join(cache, 'new.bin.2.tmp'), 'x');
  writeFileSync(file, moduleSource(999));
  requireWithCodeCache<Mod>(file, cache, 'render').save();
  const after = readdirSync(cache);
  assert.ok(!after.includes('old.bin.1.tmp') && after.includes('new.bin.2.tmp'), after.join(', '));
});

test('the cache directory is made level by level (0700); a parent that refuses mkdir (/proc) is given up at once', { skip: !existsSync('/proc/self') && 'no /proc here' }, () => {
  const { dir, file } = fresh('nested');
  const cache = join(dir, 'a', 'b', 'c');
  requireWithCodeCache<Mod>(file, cache, 'render').save();
  assert.equal(readdirSync(cache).length, 1);
  for (const d of [join(dir, 'a'), join(dir, 'a', 'b'), cache]) assert.equal(statSync(d).mode & 0o777, 0o700, d);
  // Node 20's recursive mkdir spins forever here: in a child process, so that this test ends.
  const probe = `import { requireWithCodeCache } from ${JSON.stringify(new URL('../src/cli/code-cache.ts', import.meta.url).href)};
    requireWithCodeCache(${JSON.stringify(file)}, '/proc/v2a-no-such/cache', 'render').save(); console.log('saved');`;
  const r = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', probe], { timeout: 20_000, encoding: 'utf8' });
  assert.equal(r.signal, null, 'not killed by the timeout');
  assert.equal(r.stdout.trim(), 'saved', r.stderr);
});

test('no directory: nothing cached; a directory others may write to is neither read nor written', { skip: typeof process.getuid !== 'function' && 'no user ids here' }, () => {
  const { dir, file } = fresh('untrusted');
  const none = requireWithCodeCache<Mod>(file, undefined, 'render');
  assert.equal(none.exports.answer(), 41);
  none.save();
  assert.deepEqual(readdirSync(dir), ['m.cjs']);

  const cache = join(dir, 'cache');
  const a = requireWithCodeCache<Mod>(file, cache, 'render');
  a.save();
  assert.equal(readdirSync(cache).length, 1);
  chmodSync(cache, 0o777);
  const b = requireWithCodeCache<Mod>(file, cache, 'render');
  assert.equal(b.fromCache, false, 'a world-writable directory is not trusted');
  assert.equal(b.exports.answer(), 41);
  const other = join(dir, 'open');
  mkdirSync(other, { mode: 0o777 });
  chmodSync(other, 0o777);
  requireWithCodeCache<Mod>(file, other, 'render').save();
  assert.deepEqual(readdirSync(other), [], 'nothing written there');
});

test('the CLI keeps one cache per command', () => {
  const v = (...args: string[]) => commandVariant(['node', 'main.cjs', ...args]);
  assert.equal(v('photo.jpg'), 'render');
  assert.equal(v('-', '--columns', '80'), 'render');
  assert.equal(v('--columns', '80', 'photo.jpg'), 'render');
  assert.equal(v('render', 'photo.jpg'), 'render');
  assert.equal(v('mcp'), 'mcp');
  assert.equal(v('decode', 'a.json', '-o', 'a.png'), 'decode');
  assert.equal(v('--help'), 'options');
  assert.equal(v('render', '--help'), 'options');
  assert.equal(v('-V'), 'options');
  assert.equal(v(), 'options');
  assert.equal(v('help', 'render'), 'options');
  // A file named like a word is rendered: one cache, not one per file name.
  assert.equal(v('adir'), 'render');
  assert.equal(v('photo'), 'render');
});

test('the cache variants name the commands the CLI registers', async () => {
  const { COMMANDS } = await import('../src/cli/cli.js');
  const { createProgram } = await import('../src/cli/program.js');
  const names = createProgram(COMMANDS).commands.map((c) => c.name()).filter((n) => n !== 'help');
  assert.deepEqual([...names].sort(), [...COMMAND_NAMES].sort());
});

test("codeCacheDir follows Node's compile cache variables", () => {
  assert.equal(codeCacheDir({ NODE_COMPILE_CACHE: '/x/y' }), join('/x/y', 'v2a'));
  assert.equal(codeCacheDir({}), join(tmpdir(), 'node-compile-cache', 'v2a'));
  assert.equal(codeCacheDir({ NODE_COMPILE_CACHE: '/x/y', NODE_DISABLE_COMPILE_CACHE: '1' }), undefined);
  assert.ok(!existsSync(join(root, 'v2a')));
});
