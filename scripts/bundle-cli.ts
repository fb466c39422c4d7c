/**
 * Bundles the CLI into one file, in place of tsc's dist/cli/main.js (the `v2a` bin), so that
 * starting `v2a render` resolves and reads one module instead of some sixty. Run by
 * `npm run build` after tsc; nothing prebuilt is committed.
 *
 * Kept out of the bundle, so they load only when a command needs them:
 * - npm packages with native code or of the server (sharp, fastify, OpenTelemetry, piscina, ...):
 *   resolved from node_modules at run time, as before (commander is bundled: it is pure JS and
 *   every command needs it);
 * - the server's modules (`../server/*`): `v2a serve` imports them from dist/server.
 * The lazy `import()`s of the render job and decoder stay lazy (esbuild wraps them), so
 * `v2a --help` evaluates none of the renderer. The script fails if server code got in.
 */
import { build } from 'esbuild';
import { readFileSync, statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const ENTRY = `${ROOT}dist/cli/main.js`;
const pkg = JSON.parse(readFileSync(`${ROOT}package.json`, 'utf8')) as { dependencies: Record<string, string> };
const external = [...Object.keys(pkg.dependencies).filter((name) => name !== 'commander'), '../server/*'];

const result = await build({
  entryPoints: [ENTRY],
  outfile: ENTRY,
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
console.log(`bundle-cli: dist/cli/main.js, ${inputs.length} modules, ${(statSync(ENTRY).size / 1024).toFixed(0)} KiB`);
