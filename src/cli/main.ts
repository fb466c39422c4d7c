#!/usr/bin/env node
/**
 * The `v2a` executable. Built (`npm run build`), the command line is one CommonJS bundle beside
 * this file, cli.cjs, which runs with a code cache (code-cache.ts): from the second run of a
 * command on, its code is read compiled instead of parsed and compiled again; so is sharp's
 * JavaScript, bundled beside it (bundled-sharp.ts). Node's own module compile cache (Node >= 22.8)
 * is turned on first, for what the bundle still loads from node_modules (sharp, when the installed
 * one is not the bundled version). Both keep their files under `$NODE_COMPILE_CACHE`, else
 * `<os.tmpdir()>/node-compile-cache`; `NODE_DISABLE_COMPILE_CACHE=1` turns both off. Run from
 * source (tsx) or from tsc's output alone, there is no bundle and cli.ts is imported as it is.
 */
import { existsSync } from 'node:fs';
import module from 'node:module';
import { fileURLToPath } from 'node:url';
import { codeCacheDir, commandVariant, requireWithCodeCache } from './code-cache.js';
import { hangUpOnExit } from './exit.js';
import nodeVersion from '../settings/node-version.cjs';

(module as { enableCompileCache?: () => unknown }).enableCompileCache?.();
hangUpOnExit();

type Cli = typeof import('./cli.js');

const bundle = fileURLToPath(new URL('./cli.cjs', import.meta.url));

async function start(): Promise<number> {
  const tooOld = nodeVersion.nodeTooOld(process.versions.node);
  if (tooOld) {
    process.stderr.write(`v2a: ${tooOld}\n`);
    return 1;
  }
  if (!existsSync(bundle)) return (await import('./cli.js')).main(process.argv);
  const cli = requireWithCodeCache<Cli>(bundle, codeCacheDir(), commandVariant(process.argv));
  // What the bundle imports (the server's modules, sharp) resolves from here, its directory.
  const code = await cli.exports.main(process.argv, (specifier) => import(specifier));
  cli.save();
  return code;
}

// Exit now rather than wait for libvips' thread pool to wind down; output has been flushed
// (every write is awaited) and stderr is synchronous. (No top-level await: built, this file is
// CommonJS, which Node starts without its ES module loader.) The command line reports its own
// errors; what fails before it runs (a broken install) gets one line too, and exit code 1.
start().then(
  (code) => process.exit(code),
  (err: unknown) => {
    // The first line only (sharp's load failure is a dozen): the rest with V2A_DEBUG=1.
    const text = err instanceof Error ? err.message : String(err);
    process.stderr.write(`v2a: internal error: ${text.split('\n', 1)[0]}${process.env.V2A_DEBUG === '1' && err instanceof Error ? `\n${err.stack}` : ''}\n`);
    process.exit(1);
  },
);
