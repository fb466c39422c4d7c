/**
 * The published package, as a consumer gets it: `npm pack` (its `prepack` build) in a copy of the
 * sources, the tarball's contents checked (LICENSE, no source map without its source, no sources
 * or tests, size printed), then the tarball installed in a fresh directory the way a user installs
 * it: `npx v2a render` runs (sharp from the CLI's bundle of it, or from node_modules when the
 * installed sharp is another version), a typed `import { render } from 'v2a'` compiles with tsc and a wrong
 * parameter type does not, the OpenTelemetry SDK is not installed, and the server started with
 * PLATFORM_API_KEY says which packages to add. One pack and one install serve every test here.
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync, type SpawnSyncReturns } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import sharp from 'sharp';
import { EXPORT_PACKAGES } from '../src/server/telemetry/tracing.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
  name: string; version: string; license: string; repository?: { url?: string };
  scripts: Record<string, string>; dependencies: Record<string, string>;
  peerDependencies?: Record<string, string>; peerDependenciesMeta?: Record<string, { optional?: boolean }>;
  devDependencies: Record<string, string>; files: string[];
};

/** What `npm pack` needs from the working tree: the sources and the build's configuration. */
const SOURCES = ['package.json', 'package-lock.json', 'tsconfig.json', 'tsconfig.build.json', 'README.md', 'LICENSE', 'src', 'scripts', 'assembly'];

interface PackEntry { path: string; size: number }
interface PackResult { filename: string; size: number; unpackedSize: number; entryCount: number; files: PackEntry[] }

const work = mkdtempSync(join(tmpdir(), 'v2a-pack-'));
const npmEnv: NodeJS.ProcessEnv = { ...process.env, npm_config_audit: 'false', npm_config_fund: 'false', npm_config_update_notifier: 'false' };
// Under `npx --package node@24 --call 'npm test'` (.ci/run) npx's own options reach children as
// npm_config_*; a nested npx would take them as its own command.
for (const k of Object.keys(npmEnv)) if (/^npm_config_(call|package|yes)$/i.test(k)) delete npmEnv[k];

function run(cmd: string, args: string[], cwd: string, timeout = 180_000, env: NodeJS.ProcessEnv = npmEnv): SpawnSyncReturns<string> {
  const r = spawnSync(cmd, args, { cwd, env, encoding: 'utf8', timeout, maxBuffer: 64 * 1024 * 1024 });
  if (r.error) throw r.error;
  return r;
}

function ok(r: SpawnSyncReturns<string>, what: string): string {
  assert.equal(r.status, 0, `${what} exited ${r.status}:\n${r.stderr}\n${r.stdout}`);
  return r.stdout;
}

let packed: PackResult;
let tarball: string;
const consumer = join(work, 'consumer');

before(() => {
  // A copy, so the prepack build (it empties dist/) never races the other test files' dist/.
  const src = join(work, 'src-copy');
  mkdirSync(src);
  for (const entry of SOURCES) cpSync(join(ROOT, entry), join(src, entry), { recursive: true });
  symlinkSync(join(ROOT, 'node_modules'), join(src, 'node_modules'), 'dir');
  const out = ok(run('npm', ['pack', '--json', '--pack-destination', work], src), 'npm pack');
  packed = (JSON.parse(out.slice(out.indexOf('[\n'))) as PackResult[])[0]!;
  tarball = join(work, packed.filename);
  process.stdout.write(`npm pack: ${packed.filename} ${(packed.size / 1024).toFixed(0)} kB packed, ${(packed.unpackedSize / 1024).toFixed(0)} kB unpacked, ${packed.entryCount} files\n`);

  // A fresh project that installs the tarball as a user would (dependencies from the registry,
  // or npm's cache where `npm ci` already put them).
  mkdirSync(consumer);
  writeFileSync(join(consumer, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module' }));
  ok(run('npm', ['install', '--prefer-offline', '--no-package-lock', tarball], consumer, 300_000), 'npm install <tarball>');
});

after(() => rmSync(work, { recursive: true, force: true }));

describe('npm pack', () => {
  test('package.json: MIT, repository, prepack builds, no install-time build for consumers', () => {
    assert.equal(pkg.license, 'MIT');
    assert.match(pkg.repository?.url ?? '', /^git\+https:\/\//);
    assert.equal(pkg.scripts.prepare, undefined, 'no prepare: consumers and git installs run no build');
    assert.match(pkg.scripts.prepack ?? '', /npm run build/);
    assert.match(pkg.scripts.prestart ?? '', /build-if-stale/, 'npm start in a clone builds a stale dist/');
    assert.ok(pkg.files.includes('!dist/**/*.map'), 'files leave source maps out');
  });

  test('the declarations read in TypeScript before 5.7: no typed array with a buffer type argument (Float32Array<ArrayBuffer>, which tsc 5.7+ writes for an inferred field)', () => {
    const dts = spawnSync('tar', ['-xOzf', tarball, '--wildcards', 'package/*.d.ts'], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
    assert.equal(dts.status, 0, dts.stderr);
    assert.ok(dts.stdout.includes('export declare function render('), 'the declarations were read');
    assert.deepEqual(dts.stdout.match(/\b(?:Float(?:32|64)|(?:Ui|I)nt(?:8|16|32)|Uint8Clamped|Big(?:Ui|I)nt64)Array<[^>]*>/g) ?? [], []);
  });

  test('the tarball: LICENSE and README, no source map without its source, no sources or tests', () => {
    const paths = new Set(packed.files.map((f) => f.path));
    for (const needed of ['LICENSE', 'README.md', 'package.json', 'dist/core/index.js', 'dist/core/index.d.ts', 'dist/node/index.d.ts', 'dist/cli/main.cjs', 'dist/cli/cli.cjs', 'dist/server/main.js', 'dist/studio/index.html']) {
      assert.ok(paths.has(needed), `${needed} packed`);
    }
    const license = readFileSync(join(ROOT, 'LICENSE'), 'utf8');
    assert.match(license, /^MIT License/);
    for (const f of paths) {
      assert.doesNotMatch(f, /^(src|test|bench|deploy|node_modules)\//, `${f}: not shipped`);
      if (f.endsWith('.map')) {
        // A map may ship only with every source it names.
        const map = JSON.parse(spawnSync('tar', ['-xOzf', tarball, `package/${f}`], { encoding: 'utf8' }).stdout) as { sources: string[] };
        for (const s of map.sources) assert.ok(paths.has(join(f, '..', s)), `${f} names ${s}, which is packed`);
      }
    }
    // The command line ships as its bundles (main.cjs, cli.cjs, sharp's): tsc's modules of it are dead weight.
    assert.deepEqual([...paths].filter((f) => f.startsWith('dist/cli/') && !f.endsWith('.cjs')), []);
    assert.ok(packed.size < 2 * 1024 * 1024, `packed ${packed.size} bytes (< 2 MiB)`);
  });

  test('OpenTelemetry: only the API is a dependency; the SDK is an optional peer, lazily loaded', () => {
    const otelDeps = Object.keys(pkg.dependencies).filter((d) => d.startsWith('@opentelemetry/'));
    assert.deepEqual(otelDeps, ['@opentelemetry/api']);
    assert.deepEqual(Object.keys(pkg.peerDependencies ?? {}).sort(), [...EXPORT_PACKAGES].sort());
    for (const name of EXPORT_PACKAGES) {
      assert.equal(pkg.peerDependenciesMeta?.[name]?.optional, true, `${name} optional`);
      assert.equal(pkg.devDependencies[name], pkg.peerDependencies![name], `${name}: the tests install the peer range`);
      assert.ok(!existsSync(join(consumer, 'node_modules', name)), `${name} not installed for a consumer`);
    }
    assert.ok(existsSync(join(consumer, 'node_modules', '@opentelemetry', 'api')));
  });
});

describe('installed from the tarball in a fresh directory', () => {
  test('npx v2a render prints art', async () => {
    const png = join(consumer, 'in.png');
    const w = 64, h = 32;
    const data = Buffer.alloc(w * h * 3);
    for (let y = 0; y < h; y++) for (let x = 0; x < w; x++) data.fill(Math.round((x / (w - 1)) * 255), (y * w + x) * 3, (y * w + x) * 3 + 3);
    await sharp(data, { raw: { width: w, height: h, channels: 3 } }).png().toFile(png);
    // The installed bin runs its bundle with a code cache (src/cli/code-cache.ts): the first run
    // writes it, the second reads it and prints the same.
    const cache = join(work, 'compile-cache');
    const env: NodeJS.ProcessEnv = { ...npmEnv, NODE_COMPILE_CACHE: cache };
    delete env.NODE_DISABLE_COMPILE_CACHE;
    const args = ['--no', '--', 'v2a', 'render', png, '--columns', '24', '--charset', 'standard'];
    const out = ok(run('npx', args, consumer, 60_000, env), 'npx v2a render');
    const cached = (suffix: string) => readdirSync(join(cache, 'v2a')).filter((f) => f.endsWith(suffix));
    assert.equal(cached('-render.bin').length, 1, `one code cache for render: ${cached('-render.bin').join(', ')}`);
    // sharp ran from the CLI's bundle of it (src/cli/bundled-sharp.ts), with a cache of its own.
    assert.equal(cached('-sharp.bin').length, 1, `one code cache for sharp: ${readdirSync(join(cache, 'v2a')).join(', ')}`);
    assert.equal(ok(run('npx', args, consumer, 60_000, env), 'npx v2a render, from the code cache'), out);
    // Node built-ins that the bundled commander and sharp require only on first use
    // (scripts/bundle-cli.ts LAZY_BUILTINS): a render to text loads neither child_process nor crypto.
    const probe = join(work, 'builtins.cjs');
    writeFileSync(probe, "process.on('exit', () => require('node:fs').writeSync(2, '\\nbuilt-ins: ' + process.moduleLoadList.filter((m) => /^NativeModule (child_process|crypto)$/.test(m)).join(', ') + '\\n'));\n");
    const bin = join(consumer, 'node_modules', 'v2a', 'dist', 'cli', 'main.cjs');
    const probed = spawnSync(process.execPath, ['--require', probe, bin, ...args.slice(3)], { cwd: consumer, env, encoding: 'utf8' });
    assert.equal(probed.status, 0, probed.stderr);
    assert.equal(probed.stdout, out);
    assert.match(probed.stderr, /^built-ins: $/m, `render to text loaded: ${probed.stderr}`);
    // An installed sharp of another version than the bundle's: the bundle is not used, sharp loads
    // from node_modules as it would without it, and the art is the same.
    const installedSharp = (JSON.parse(readFileSync(join(consumer, 'node_modules', 'sharp', 'package.json'), 'utf8')) as { version: string }).version;
    const bundle = join(consumer, 'node_modules', 'v2a', 'dist', 'cli', `sharp-${installedSharp}.cjs`);
    assert.ok(existsSync(bundle), `the bundle is for the sharp installed beside it (${installedSharp})`);
    rmSync(join(cache, 'v2a'), { recursive: true });
    const aside = `${bundle}.aside`;
    renameSync(bundle, aside);
    try {
      assert.equal(ok(run('npx', args, consumer, 60_000, env), 'npx v2a render, no sharp bundle'), out);
      assert.deepEqual(cached('-sharp.bin'), [], 'no sharp bundle, no cache for it');
    } finally {
      renameSync(aside, bundle);
    }
    const lines = out.replace(/\n$/, '').split('\n');
    assert.ok(lines.length >= 4, `rows: ${lines.length}`);
    for (const line of lines) assert.equal(line.length, 24, JSON.stringify(line));
    // A left-to-right gradient: sparse glyphs on the dark left, dense ones on the bright right.
    assert.notEqual(lines[0]![0], lines[0]![23]);
    const version = ok(run('npx', ['--no', '--', 'v2a', '--version'], consumer, 60_000), 'npx v2a --version');
    assert.match(version, new RegExp(pkg.version.replace(/\./g, '\\.')));
  });

  test('typed API: import { render } from "v2a" compiles; a wrong parameter type does not', () => {
    const tsc = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
    writeFileSync(join(consumer, 'tsconfig.json'), JSON.stringify({
      compilerOptions: { target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, noEmit: true, skipLibCheck: false, types: [] },
    }));
    writeFileSync(join(consumer, 'good.ts'), `
import { render, formatResult, DEFAULTS, FrameRenderer, type RenderInput, type RenderParams } from 'v2a';
import { decodeImage, renderBytes, DEFAULT_DECODE_LIMITS, type ImageFacts, type LimitNames } from 'v2a/node';
import type { TemporalFilterOptions, GlyphSet, V2aErrorOptions, TunedSource } from 'v2a';
const image = { width: 4, height: 4, data: new Uint8Array(64) };
const params: RenderInput = { columns: 40, charset: 'blocks', color: true, format: 'svg' };
const result = render(image, params);
const text: string = formatResult(result).body.toString();
const full: RenderParams = { ...DEFAULTS, columns: 12 };
render(image, full);
export const frame = new FrameRenderer(params).render(image);
export const pending: Promise<unknown> = decodeImage(new Uint8Array(0)).then((img) => render(img, { invert: true }));
export const limit: number = DEFAULT_DECODE_LIMITS.maxPixels;
export { text };
// renderBytes' body is typed by the format asked for: a string, or png's bytes.
export const svgText: Promise<string> = renderBytes(new Uint8Array(0), { format: 'svg' }).then((r) => r.output.body);
export const defaultText: Promise<string> = renderBytes(new Uint8Array(0)).then((r) => r.output.body);
export const pngBytes: Promise<Uint8Array> = renderBytes(new Uint8Array(0), { format: 'png' }).then((r) => r.output.body);
// The types the public functions take and return are exported by name.
export type Named = [TemporalFilterOptions, GlyphSet, V2aErrorOptions, TunedSource, ImageFacts, LimitNames];
`);
    // Line n+3 of bad.ts holds the n-th call; each must be an error, with the code given.
    const bad = [
      [`render(image, { columns: 'wide' });`, /TS2322/],
      [`render(image, { charset: 'emoji' });`, /TS2322/],
      [`render(image, { colunms: 80 });`, /TS2353|TS2561/],
      [`render(image, { dither: 'yes' });`, /TS2322/],
      // FrameRenderer took any record: a misspelt name compiled and threw at run time.
      [`new FrameRenderer({ colunms: 80 });`, /TS2353|TS2561/],
      [`new FrameFront({ columns: 'wide' });`, /TS2322/],
      // renderBytes' body is a string only where the parameters' type says the format is text.
      [`void renderBytes(new Uint8Array(0), JSON.parse('{}')).then((r) => { const s: string = r.output.body; return s; });`, /TS2322/],
      [`void renderBytes(new Uint8Array(0), { format: 'png' }).then((r) => { const s: string = r.output.body; return s; });`, /TS2322/],
    ] as const;
    writeFileSync(join(consumer, 'bad.ts'), `import { render, FrameRenderer, FrameFront } from 'v2a'; import { renderBytes } from 'v2a/node';\nconst image = { width: 4, height: 4, data: new Uint8Array(64) };\n${bad.map(([c]) => c).join('\n')}\n`);
    // One compile of both files: good.ts must have no error, every line of bad.ts one.
    const r = run(process.execPath, [tsc, '-p', 'tsconfig.json', '--pretty', 'false'], consumer, 120_000);
    assert.notEqual(r.status, 0);
    const errors = r.stdout.split('\n').filter((l) => /error TS\d+/.test(l));
    assert.deepEqual(errors.filter((l) => !l.startsWith('bad.ts(')), [], 'the typed use compiles');
    bad.forEach(([call, code], i) => {
      const line = errors.filter((l) => l.startsWith(`bad.ts(${i + 3},`));
      assert.equal(line.length, 1, `${call} must not compile: ${r.stdout}`);
      assert.match(line[0]!, code, line[0]);
    });
    // A consumer on the older resolution (moduleResolution node10, which ignores "exports") finds
    // v2a/node's types through typesVersions; without it, 'v2a/node' is TS2307.
    writeFileSync(join(consumer, 'tsconfig.node10.json'), JSON.stringify({
      compilerOptions: { target: 'ES2022', module: 'ES2022', moduleResolution: 'node10', strict: true, noEmit: true, skipLibCheck: false, types: [] },
      files: ['good.ts'],
    }));
    const old = run(process.execPath, [tsc, '-p', 'tsconfig.node10.json', '--pretty', 'false'], consumer, 120_000);
    assert.equal(old.status, 0, `good.ts compiles under moduleResolution node10: ${old.stdout}`);
  });

  test('a consumer\'s CommonJS bundle of v2a/node (esbuild --format=cjs, sharp left external) runs: sharp is found from the bundle\'s own file', async () => {
    const { build } = await import('esbuild');
    const entry = join(consumer, 'bundled.mjs');
    // No top-level await: a CommonJS bundle has none.
    writeFileSync(entry, `import { renderBytes } from 'v2a/node';
import sharp from 'sharp';
void (async () => {
  const png = await sharp({ create: { width: 32, height: 16, channels: 3, background: '#fff' } }).png().toBuffer();
  const { output } = await renderBytes(png, { columns: 16, format: 'text' });
  process.stdout.write(String(output.body));
})();
`);
    const out = join(consumer, 'bundled.cjs');
    await build({ entryPoints: [entry], bundle: true, platform: 'node', format: 'cjs', external: ['sharp'], outfile: out, logLevel: 'silent' });
    const r = spawnSync(process.execPath, [out], { cwd: consumer, encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    const lines = r.stdout.trimEnd().split('\n');
    assert.deepEqual([lines.length, lines[0]!.length], [4, 16]);
  });

  test('the server with PLATFORM_API_KEY and no OpenTelemetry SDK: a one-line start-up error naming the packages', () => {
    const r = run(process.execPath, [join(consumer, 'node_modules', 'v2a', 'dist', 'server', 'main.cjs')], consumer, 30_000, {
      PATH: process.env.PATH ?? '', PORT: '0', HOST: '127.0.0.1', V2A_WORKERS: '1', PLATFORM_API_KEY: 'k'.repeat(40), V2A_RECEIVER_STATUS_URL: 'off', LOG_LEVEL: 'warn',
    });
    assert.equal(r.status, 2, `exit 2, a setup error (stderr: ${r.stderr})`);
    assert.match(r.stderr, /OpenTelemetry SDK is not installed/);
    assert.match(r.stderr, new RegExp(`npm install ${EXPORT_PACKAGES.join(' ')}`));
    assert.doesNotMatch(r.stderr, /\n\s+at /, 'no stack trace');
    assert.doesNotMatch(r.stderr + r.stdout, /k{40}/, 'the key is never printed');
  });

  // libuv's pool is counted as the server's threads less libvips' (whose number varies with use):
  // the same server with a pool of 8 has 4 more than with libuv's 4. Linux only (/proc).
  test('the server\'s entries size libuv\'s thread pool: npm start\'s main.cjs and v2a serve to V2A_WORKERS + 4, main.js keeps 4 and warns', { skip: !existsSync('/proc/self/task') && 'no /proc here' }, async () => {
    const dist = join(consumer, 'node_modules', 'v2a', 'dist');
    const started = async (args: string[]) => {
      const env = { PATH: process.env.PATH ?? '', PORT: '0', HOST: '127.0.0.1', V2A_WORKERS: '4', V2A_WARM_UP: 'false', LOG_LEVEL: 'info' };
      const child = spawn(process.execPath, args, { cwd: consumer, env, stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '';
      child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
      try {
        const deadline = Date.now() + 30_000;
        while (!/"url":"http/.test(out) && child.exitCode === null && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
        const url = /"url":"(http[^"]+)"/.exec(out)?.[1];
        assert.ok(url, `${args.join(' ')} started: ${out}`);
        assert.equal((await fetch(`${url}/api/v1/health/ready`)).status, 200);
        const names = readdirSync(`/proc/${child.pid}/task`).map((t) => readFileSync(`/proc/${child.pid}/task/${t}/comm`, 'utf8').trim());
        const lines = out.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as { msg: string; config?: Record<string, unknown> });
        return {
          threads: names.filter((n) => !/vips/i.test(n)).length,
          pool: lines.find((l) => l.config)?.config?.UV_THREADPOOL_SIZE,
          warned: lines.some((l) => /UV_THREADPOOL_SIZE/.test(l.msg)),
        };
      } finally {
        child.kill('SIGTERM');
        await new Promise((r) => child.once('exit', r));
      }
    };
    const esm = await started([join(dist, 'server', 'main.js')]);
    const cjs = await started([join(dist, 'server', 'main.cjs')]);
    const serve = await started([join(dist, 'cli', 'main.cjs'), 'serve']);
    assert.deepEqual([esm.pool, esm.warned], [4, true], 'main.js: libuv\'s 4 threads, with a warning');
    assert.deepEqual([cjs.pool, cjs.warned], [8, false], 'main.cjs: 4 workers + 4');
    assert.deepEqual([serve.pool, serve.warned], [8, false], 'v2a serve: 4 workers + 4');
    assert.equal(cjs.threads - esm.threads, 4, 'main.cjs really runs 4 more pool threads');
    assert.equal(serve.threads, cjs.threads, 'so does v2a serve');
  });
});
