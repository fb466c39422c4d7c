/**
 * Bundles the CLI in place of tsc's dist/cli/main.js (the `v2a` bin), so that starting
 * `v2a render` resolves and reads a few modules instead of some sixty. Run by `npm run build`
 * after tsc; nothing prebuilt is committed. Built from src/cli/main.ts, so running it again
 * gives the same files.
 *
 * Split at the CLI's dynamic `import()`s (esbuild `splitting`): main.js is the small entry that
 * turns the compile cache on, and each lazily loaded part (the command line itself, the renderer
 * with sharp's decoder, png, animation, ...) is a chunk beside it, `<name>-<hash>.js`, read and
 * compiled only when a command imports it: `v2a render` to text never parses the png encoder or
 * the glyph bitmaps, `v2a --help` none of the renderer.
 *
 * Kept out of the bundle, so they load only when a command needs them:
 * - npm packages with native code or of the server (sharp, fastify, OpenTelemetry, piscina, ...):
 *   resolved from node_modules at run time, as before (commander is bundled: it is pure JS and
 *   every command needs it);
 * - the server's modules (`../server/*`): `v2a serve` imports them from dist/server (the chunks
 *   live in dist/cli, so the relative path holds).
 * The script fails if server code got in.
 */
import { build, type Plugin } from 'esbuild';
import { readFileSync, readdirSync, rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const OUT_DIR = `${ROOT}dist/cli`;
/** esbuild's chunk names: `[name]-[hash]` with an 8-character hash. */
const CHUNK = /^[\w.-]+-[A-Z0-9]{8}\.js$/;
const pkg = JSON.parse(readFileSync(`${ROOT}package.json`, 'utf8')) as { dependencies: Record<string, string> };
const external = [...Object.keys(pkg.dependencies).filter((name) => name !== 'commander'), '../server/*'];

/**
 * Node's built-in modules are `require`d, not imported: importing one as an ES module builds its
 * ES module facade, which reads every export, and node:fs's `ReadStream` getter then loads the
 * fs streams, which the CLI never uses. (node:module is imported: every chunk imports it for `require`.)
 */
const builtinsByRequire: Plugin = {
  name: 'builtins-by-require',
  setup(b) {
    b.onResolve({ filter: /^node:/ }, (args) => (args.kind === 'import-statement' && args.path !== 'node:module' ? { path: args.path, namespace: 'builtin' } : undefined));
    b.onLoad({ filter: /.*/, namespace: 'builtin' }, (args) => ({ contents: `module.exports = require(${JSON.stringify(args.path)});`, loader: 'js' }));
  },
};

// Chunk names carry a content hash: drop the last build's.
for (const name of readdirSync(OUT_DIR)) if (CHUNK.test(name)) rmSync(`${OUT_DIR}/${name}`);
const result = await build({
  entryPoints: [{ in: `${ROOT}src/cli/main.ts`, out: 'main' }],
  outdir: OUT_DIR,
  entryNames: '[name]',
  chunkNames: '[name]-[hash]',
  splitting: true,
  allowOverwrite: true,
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  external,
  plugins: [builtinsByRequire],
  // commander is CommonJS, and so are the built-ins above: give each ES module chunk a `require`.
  banner: { js: "import { createRequire as __v2aCreateRequire } from 'node:module'; const require = __v2aCreateRequire(import.meta.url);" },
  legalComments: 'none',
  metafile: true,
  logLevel: 'warning',
});

const inputs = Object.keys(result.metafile.inputs);
const leaked = inputs.filter((p) => /(^|\/)(src|dist)\/server\/|node_modules\/(fastify|@opentelemetry|piscina|sharp)\//.test(p));
if (leaked.length) {
  console.error(`bundle-cli: server or native modules got into the CLI bundle: ${leaked.join(', ')}`);
  process.exit(1);
}
const outputs = Object.values(result.metafile.outputs);
const kib = (outputs.reduce((n, o) => n + o.bytes, 0) / 1024).toFixed(0);
console.log(`bundle-cli: dist/cli/main.js and ${outputs.length - 1} chunks, ${inputs.length} modules, ${kib} KiB`);
