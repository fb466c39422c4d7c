/**
 * sharp's JavaScript from one file of the CLI's own, run with a code cache. `require('sharp')`
 * resolves, reads and compiles some 65 modules (sharp's, semver's, detect-libc's, its colour
 * library's) on every run: about 90 ms over `node -e 0` on Node 20, cold, before a pixel is
 * decoded. The build (scripts/bundle-cli.ts) bundles them into dist/cli/sharp-<version>.cjs,
 * which runs here as one vm.Script with a code cache (code-cache.ts), like the CLI's own bundle.
 *
 * Used only where it is the same sharp: the installed package's version must be the bundle's
 * (else no such file exists, and sharp loads from node_modules as before). What sharp resolves
 * while it runs (its native binding, libvips, a binding built from source) is required from the
 * installed package's own directory, as its files would. The copy is registered in require.cache
 * under the installed entry, so every `require('sharp')` in the process (node/sharp.ts's) gets it.
 * Any failure leaves everything as it was: sharp then loads the usual way.
 */
import { existsSync, readFileSync } from 'node:fs';
import { createRequire, Module } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { codeCacheDir, requireWithCodeCache } from './code-cache.js';

/** The bundle's file name for a sharp version (scripts/bundle-cli.ts writes it). */
export function bundledSharpFile(version: string): string {
  return `sharp-${version}.cjs`;
}

let done = false;
let bundledIn = false;

/**
 * Loads sharp from the bundle beside this module into require.cache, once per process, and saves
 * its code cache when the process exits. Returns whether the bundle is in use.
 */
export function useBundledSharp(): boolean {
  if (done) return bundledIn;
  done = true;
  try {
    const here = fileURLToPath(import.meta.url);
    const req = createRequire(here);
    const entry = req.resolve('sharp');
    if (req.cache[entry]) return false;
    const { version } = JSON.parse(readFileSync(join(dirname(entry), '..', 'package.json'), 'utf8')) as { version: string };
    const file = join(dirname(here), bundledSharpFile(version));
    if (!existsSync(file)) return false;
    const loaded = requireWithCodeCache<unknown>(file, codeCacheDir(), 'sharp', entry);
    const mod = new Module(entry);
    mod.filename = entry;
    mod.exports = loaded.exports;
    mod.loaded = true;
    req.cache[entry] = mod;
    // After the run, so that the cache holds what the render compiled too (save() is synchronous).
    process.once('exit', () => loaded.save());
    bundledIn = true;
  } catch {
    /* sharp missing or unreadable here: node/sharp.ts's require reports it as before */
  }
  return bundledIn;
}
