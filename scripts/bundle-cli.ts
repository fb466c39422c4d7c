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
import { readFileSync, readdirSync, rmSync } from 'node:fs';
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
  // import.meta.url (decode.ts finds sharp with createRequire of it; main.ts finds cli.cjs) spelt in CommonJS.
  define: { 'import.meta.url': '__v2aModuleUrl' },
  banner: { js: "const __v2aModuleUrl = require('node:url').pathToFileURL(__filename).href;" },
} as const;
const result = await build({ ...common, entryPoints: [`${ROOT}src/cli/cli.ts`], outfile: `${OUT_DIR}/cli.cjs`, external, metafile: true });
await build({ ...common, entryPoints: [`${ROOT}src/cli/main.ts`], outfile: `${OUT_DIR}/main.cjs`, external: ['./cli.js'] });

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
  legalComments: 'eof', banner: {}, define: {}, plugins: [fromSourceBinding], metafile: true,
});
const sharpInputs = Object.keys(sharpResult.metafile.inputs).length;

const inputs = Object.keys(result.metafile.inputs);
const leaked = inputs.filter((p) => /(^|\/)(src|dist)\/server\/|node_modules\/(fastify|@opentelemetry|piscina|sharp)\//.test(p));
if (leaked.length) {
  console.error(`bundle-cli: server or native modules got into the CLI bundle: ${leaked.join(', ')}`);
  process.exit(1);
}
const kib = (Object.values(result.metafile.outputs).reduce((n, o) => n + o.bytes, 0) / 1024).toFixed(0);
console.log(`bundle-cli: dist/cli/main.cjs and dist/cli/cli.cjs (${inputs.length} modules, ${kib} KiB), dist/cli/${sharpFile} (${sharpInputs} modules)`);
