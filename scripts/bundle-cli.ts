/**
 * Bundles the CLI in place of tsc's dist/cli/main.js (the `v2a` bin), so that starting
 * `v2a render` resolves and reads a few modules instead of some sixty. Run by `npm run build`
 * after tsc; nothing prebuilt is committed.
 *
 * Split at the CLI's dynamic `import()`s (esbuild `splitting`): main.js is the small entry that
 * turns the compile cache on, and each lazily loaded part (the command line itself, the render
 * job, the decoder, png, animation, the MCP face, ...) is a chunk in dist/cli/chunks/ that is read
 * and compiled only when a command imports it: `v2a render` to text never parses the png encoder
 * or the glyph bitmaps, `v2a --help` none of the renderer.
 *
 * Kept out of the bundle, so they load only when a command needs them:
 * - npm packages with native code or of the server (sharp, fastify, OpenTelemetry, piscina, ...):
 *   resolved from node_modules at run time, as before (commander is bundled: it is pure JS and
 *   every command needs it);
 * - the server's modules (`../server/*`): `v2a serve` imports them from dist/server.
 * The script fails if server code got in.
 */
import { build } from 'esbuild';
import { readFileSync, rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const OUT_DIR = `${ROOT}dist/cli`;
const ENTRY = `${OUT_DIR}/main.js`;
const CHUNKS = 'chunks';
const pkg = JSON.parse(readFileSync(`${ROOT}package.json`, 'utf8')) as { dependencies: Record<string, string> };
const external = [...Object.keys(pkg.dependencies).filter((name) => name !== 'commander'), '../server/*'];

// Chunk names carry a content hash: drop the last build's.
rmSync(`${OUT_DIR}/${CHUNKS}`, { recursive: true, force: true });
const result = await build({
  entryPoints: [{ in: ENTRY, out: 'main' }],
  outdir: OUT_DIR,
  entryNames: '[name]',
  chunkNames: `${CHUNKS}/[name]-[hash]`,
  splitting: true,
  allowOverwrite: true,
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  external,
  // commander is CommonJS: give the ES module bundle a `require` for it.
  banner: { js: "import { createRequire as __v2aCreateRequire } from 'node:module'; const require = __v2aCreateRequire(import.meta.url);" },
  legalComments: 'none',
  metafile: true,
  logLevel: 'warning',
});

const inputs = Object.keys(result.metafile.inputs);
const leaked = inputs.filter((p) => /(^|\/)dist\/server\/|node_modules\/(fastify|@opentelemetry|piscina|sharp)\//.test(p));
if (leaked.length) {
  console.error(`bundle-cli: server or native modules got into the CLI bundle: ${leaked.join(', ')}`);
  process.exit(1);
}
const outputs = Object.entries(result.metafile.outputs);
const kib = (bytes: number) => (bytes / 1024).toFixed(0);
console.log(`bundle-cli: dist/cli/main.js and ${outputs.length - 1} chunks, ${inputs.length} modules, ${kib(outputs.reduce((n, [, o]) => n + o.bytes, 0))} KiB`);
