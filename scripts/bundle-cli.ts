/**
 * Bundles the CLI after tsc (`npm run build`; nothing prebuilt is committed; running it again gives
 * the same files):
 * - dist/cli/cli.cjs: the whole command line (src/cli/cli.ts and everything it imports, commander
 *   included) as one CommonJS file, which the bin runs with a V8 code cache (src/cli/code-cache.ts):
 *   from the second run of a command on, its code is read compiled, nothing is parsed or resolved.
 *   Modules still run only when a command imports them (esbuild keeps each dynamic `import()` of
 *   a bundled module lazy): `v2a render` to text never runs the png encoder, `v2a --help` none of
 *   the renderer. CommonJS because Node 20 can give cached code only to a `vm.Script`.
 * - dist/cli/main.cjs: the `v2a` bin (src/cli/main.ts with code-cache.ts), also CommonJS, so
 *   that Node starts it without its ES module loader (tsc's dist/cli/main.js works too).
 *
 * Kept out of the bundle, so they load only when a command needs them:
 * - npm packages with native code or of the server (sharp, fastify, OpenTelemetry, piscina, ...):
 *   resolved from node_modules at run time, as before (commander is bundled: it is pure JS and
 *   every command needs it);
 * - the server's modules (`../server/*`): `v2a serve` imports them from dist/server (the bundle
 *   lives in dist/cli, so the relative path holds).
 * The script fails if server code got in.
 *
 * - dist/cli/sharp-<version>.cjs: sharp's JavaScript and the pure-JavaScript packages it requires
 *   (semver, detect-libc, its colour library), which the CLI runs with a code cache instead of
 *   resolving and compiling some 65 modules from node_modules on every run (src/cli/bundled-sharp.ts:
 *   only where the installed sharp has this version). Its native packages (`@img/sharp-*`: the
 *   binding and libvips) and a binding built from source stay run-time requires, which the CLI
 *   resolves from the installed sharp's directory. Legal comments are kept at the end of the file.
 */
import { build, type Plugin } from 'esbuild';
import { readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { bundledSharpFile } from '../src/cli/bundled-sharp.js';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const OUT_DIR = `${ROOT}dist/cli`;
/** esbuild's chunk names: `[name]-[hash]` with an 8-character hash. */
const CHUNK = /^[\w.-]+-[A-Z0-9]{8}\.js$/;
const pkg = JSON.parse(readFileSync(`${ROOT}package.json`, 'utf8')) as { dependencies: Record<string, string> };
const external = [...Object.keys(pkg.dependencies).filter((name) => name !== 'commander'), '../server/*'];

/** Earlier builds' sharp bundles (another sharp version). */
const SHARP_BUNDLE = /^sharp-[\w.+-]+\.cjs$/;

// The chunks of earlier builds (an ES module entry split at each import()) are gone for good.
for (const name of readdirSync(OUT_DIR)) if (CHUNK.test(name) || SHARP_BUNDLE.test(name)) rmSync(`${OUT_DIR}/${name}`);
const common = {
  bundle: true, platform: 'node', target: 'node20', format: 'cjs', legalComments: 'none', logLevel: 'warning',
  // import.meta.url (node/sharp.ts finds sharp with createRequire of it; main.ts finds cli.cjs) spelt in CommonJS.
  define: { 'import.meta.url': '__v2aModuleUrl' },
  banner: { js: "const __v2aModuleUrl = require('node:url').pathToFileURL(__filename).href;" },
} as const;
/**
 * Node built-ins that commander, detect-libc and sharp require as they load but use only on rare
 * paths (a subcommand run as an executable of its own, a libc probe by command, building sharp from
 * source and finding a global libvips): required on first use instead. `v2a render` then loads
 * neither child_process (with net and dgram) nor crypto, some 25 of Node's internal modules:
 * 116.3 -> 113.5 ms for the 0.3 MP render and 64.1 -> 63.1 ms for `--version` (41 interleaved
 * runs). Each binding becomes an object or function with the members the file uses, and the build
 * fails if a file no longer has the line or uses another member of it.
 */
interface LazyBuiltin { readonly file: RegExp; readonly line: string; readonly name: string; readonly module: string; readonly members: readonly string[]; readonly destructured?: boolean }
const LAZY_BUILTINS: readonly LazyBuiltin[] = [
  { file: /[\\/]commander[\\/]lib[\\/]command\.js$/, line: "const childProcess = require('node:child_process');", name: 'childProcess', module: 'node:child_process', members: ['spawn'] },
  { file: /[\\/]detect-libc[\\/]lib[\\/]detect-libc\.js$/, line: "const childProcess = require('child_process');", name: 'childProcess', module: 'child_process', members: ['exec', 'execSync'] },
  { file: /[\\/]sharp[\\/]dist[\\/]libvips\.cjs$/, line: "const { spawnSync } = require('node:child_process');", name: 'spawnSync', module: 'node:child_process', members: ['spawnSync'], destructured: true },
  { file: /[\\/]sharp[\\/]dist[\\/]libvips\.cjs$/, line: "const { createHash } = require('node:crypto');", name: 'createHash', module: 'node:crypto', members: ['createHash'], destructured: true },
];

/** `source` with each of `lazies`' lines replaced by its lazy binding (see LAZY_BUILTINS). */
function lazyBuiltins(source: string, path: string, lazies: readonly LazyBuiltin[]): string {
  let out = source;
  for (const l of lazies) {
    if (out.split(l.line).length !== 2) throw new Error(`bundle-cli: ${path} no longer has \`${l.line}\` once; check LAZY_BUILTINS`);
    const call = (m: string) => `(...a) => require('${l.module}').${m}(...a)`;
    out = out.replace(l.line, l.destructured ? `const ${l.name} = ${call(l.members[0]!)};` : `const ${l.name} = { ${l.members.map((m) => `${m}: ${call(m)}`).join(', ')} };`);
    if (!l.destructured) {
      const used = [...out.matchAll(new RegExp(`\\b${l.name}\\.(\\w+)`, 'g'))].map((m) => m[1]!);
      const other = used.filter((m) => !l.members.includes(m));
      if (other.length) throw new Error(`bundle-cli: ${path} uses ${l.name}.${other[0]}, which LAZY_BUILTINS does not give it`);
    }
  }
  return out;
}

const lazyBuiltinsPlugin: Plugin = {
  name: 'lazy-node-builtins',
  setup(b) {
    // The files LAZY_BUILTINS names, and only those.
    b.onLoad({ filter: new RegExp([...new Set(LAZY_BUILTINS.map((l) => l.file.source))].join('|')) }, (args) => {
      const lazies = LAZY_BUILTINS.filter((l) => l.file.test(args.path));
      return { contents: lazyBuiltins(readFileSync(args.path, 'utf8'), args.path, lazies), loader: 'js' };
    });
  },
};

const result = await build({ ...common, entryPoints: [`${ROOT}src/cli/cli.ts`], outfile: `${OUT_DIR}/cli.cjs`, external, metafile: true, plugins: [lazyBuiltinsPlugin] });
await build({ ...common, entryPoints: [`${ROOT}src/cli/main.ts`], outfile: `${OUT_DIR}/main.cjs`, external: ['./cli.js'] });

/**
 * The bundle as ASCII. esbuild escapes every non-ASCII character in strings and identifiers, but
 * not in the comments it keeps (the glyphs beside the block charset's entries, "§" in references
 * to the contract) nor in regular expressions. One such character makes Node read the whole file
 * as UTF-8 into a two-byte string: twice the memory of the 540 KB source, and its decode on every
 * start took 0.98 instead of 0.34 ms (--version 63.5 -> 62.4 ms, 41 interleaved runs; a render
 * 113.3 -> 111.1 ms over 51, within the noise). So in whole-line comments they become \u escapes;
 * anywhere else the build fails (escape it in the source, as src/cli/view.ts does).
 */
function asciiBundle(file: string): void {
  const text = readFileSync(file, 'utf8');
  const lines = text.split('\n').map((line) => (/^\s*\/\//.test(line) ? line.replace(/[^\x00-\x7f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`) : line));
  const left = lines.findIndex((line) => /[^\x00-\x7f]/.test(line));
  if (left >= 0) throw new Error(`bundle-cli: ${file}:${left + 1} has a non-ASCII character outside a comment; escape it in the source: ${lines[left]!.trim().slice(0, 120)}`);
  const ascii = lines.join('\n');
  if (ascii !== text) writeFileSync(file, ascii);
}
asciiBundle(`${OUT_DIR}/cli.cjs`);
asciiBundle(`${OUT_DIR}/main.cjs`);

// sharp: its entry as installed here, bundled with everything but its native packages.
const sharpEntry = createRequire(`${ROOT}package.json`).resolve('sharp');
const sharpVersion = (JSON.parse(readFileSync(join(dirname(sharpEntry), '..', 'package.json'), 'utf8')) as { version: string }).version;
const sharpFile = bundledSharpFile(sharpVersion);
// sharp tries a binding built from source first, by a template literal esbuild would glob (and
// fail to find): left a run-time require, relative to sharp's own dist/ (the CLI's require for it).
const fromSourceBinding: Plugin = {
  name: 'sharp-from-source-binding',
  setup(b) {
    b.onLoad({ filter: /[\\/]sharp[\\/]dist[\\/]sharp\.cjs$/ }, (args) => {
      const source = readFileSync(args.path, 'utf8');
      const contents = source.replace(/require\((`\.\.\/src\/build\/[^`]*`)\)/g, 'require(String($1))');
      if (contents === source) throw new Error('sharp.cjs: the from-source binding require was not found; check the sharp bundle');
      return { contents, loader: 'js' };
    });
  },
};
const sharpResult = await build({
  ...common, entryPoints: [sharpEntry], outfile: `${OUT_DIR}/${sharpFile}`, external: ['@img/sharp-*'],
  legalComments: 'eof', banner: {}, define: {}, plugins: [fromSourceBinding, lazyBuiltinsPlugin], metafile: true,
});
asciiBundle(`${OUT_DIR}/${sharpFile}`);
const sharpInputs = Object.keys(sharpResult.metafile.inputs).length;

const inputs = Object.keys(result.metafile.inputs);
const leaked = inputs.filter((p) => /(^|\/)(src|dist)\/server\/|node_modules\/(fastify|@opentelemetry|piscina|sharp)\//.test(p));
if (leaked.length) {
  console.error(`bundle-cli: server or native modules got into the CLI bundle: ${leaked.join(', ')}`);
  process.exit(1);
}
const kib = (Object.values(result.metafile.outputs).reduce((n, o) => n + o.bytes, 0) / 1024).toFixed(0);
console.log(`bundle-cli: dist/cli/main.cjs and dist/cli/cli.cjs (${inputs.length} modules, ${kib} KiB), dist/cli/${sharpFile} (${sharpInputs} modules)`);
