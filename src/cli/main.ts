#!/usr/bin/env node
/**
 * The `v2a` executable. Turns on Node's module compile cache (Node >= 22.8; absent on Node 20)
 * before anything else loads, so that from the second run on the CLI's own code and sharp's are
 * read as compiled code instead of being parsed again. Node keeps the cache in
 * `$NODE_COMPILE_CACHE`, else `<os.tmpdir()>/node-compile-cache`; `NODE_DISABLE_COMPILE_CACHE=1`
 * turns it off. The CLI itself is cli.ts, imported only after the cache is on.
 */
import module from 'node:module';

(module as { enableCompileCache?: () => unknown }).enableCompileCache?.();
await import('./cli.js');
