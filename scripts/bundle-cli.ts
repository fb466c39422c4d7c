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
 */
import { build } from 'esbuild';
import { readFileSync, readdirSync, rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const OUT_DIR = `${ROOT}dist/cli`;
/** esbuild's chunk names: `[name]-[hash]` with an 8-character hash. */
const CHUNK = /^[\w.-]+-[A-Z0-9]{8}\.js$/;
const pkg = JSON.parse(readFileSync(`${ROOT}package.json`, 'utf8')) as { dependencies: Record<string, string> };
const external = [...Object.keys(pkg.dependencies).filter((name) => name !== 'commander'), '../server/*'];

// The chunks of earlier builds (an ES module entry split at each import()) are gone for good.
for (const name of readdirSync(OUT_DIR)) if (CHUNK.test(name)) rmSync(`${OUT_DIR}/${name}`);
const common = {
  bundle: true, platform: 'node', target: 'node20', format: 'cjs', legalComments: 'none', logLevel: 'warning',
  // import.meta.url (decode.ts finds sharp with createRequire of it; main.ts finds cli.cjs) spelt in CommonJS.
  define: { 'import.meta.url': '__v2aModuleUrl' },
  banner: { js: "const __v2aModuleUrl = require('node:url').pathToFileURL(__filename).href;" },
} as const;
const result = await build({ ...common, entryPoints: [`${ROOT}src/cli/cli.ts`], outfile: `${OUT_DIR}/cli.cjs`, external, metafile: true });
await build({ ...common, entryPoints: [`${ROOT}src/cli/main.ts`], outfile: `${OUT_DIR}/main.cjs`, external: ['./cli.js'] });

const inputs = Object.keys(result.metafile.inputs);
const leaked = inputs.filter((p) => /(^|\/)(src|dist)\/server\/|node_modules\/(fastify|@opentelemetry|piscina|sharp)\//.test(p));
if (leaked.length) {
  console.error(`bundle-cli: server or native modules got into the CLI bundle: ${leaked.join(', ')}`);
  process.exit(1);
}
const kib = (Object.values(result.metafile.outputs).reduce((n, o) => n + o.bytes, 0) / 1024).toFixed(0);
console.log(`bundle-cli: dist/cli/main.cjs and dist/cli/cli.cjs (${inputs.length} modules, ${kib} KiB)`);
