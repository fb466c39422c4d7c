/**
 * The `v2a` command as the CLI tests run it: the bin npm installs (dist/cli/main.cjs, the bundle
 * with its code cache), not the sources through tsx, which cost each of the suite's ~180 runs some
 * 0.45 s more CPU. `npm test` builds first (pretest: scripts/build-if-stale.mjs); a test file run
 * on its own after an edit rebuilds here, with the same script.
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildOnce } from './build-lock.js';

const ROOT = fileURLToPath(new URL('../', import.meta.url));

/** The bin: run as `node V2A_BIN ...args`. */
export const V2A_BIN = join(ROOT, 'dist/cli/main.cjs');

/** dist/ built from the sources as they are now (the script builds only when they are newer). */
export async function ensureCliBuilt(): Promise<void> {
  await buildOnce(() => false, () => {
    const r = spawnSync(process.execPath, [join(ROOT, 'scripts/build-if-stale.mjs')], { cwd: ROOT, encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`npm run build failed (${r.status}):\n${r.stdout}${r.stderr}`);
  });
}
