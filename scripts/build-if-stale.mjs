#!/usr/bin/env node
/**
 * `npm start`'s prestart, `npm test`'s pretest and the pre-scripts of the benches run from the
 * sources (quality, flips, studio): builds dist/ and the generated sources (`npm run build`) when it is
 * missing or older than its sources, so `npm ci && npm start` works in a fresh clone now that the
 * build runs at `prepack` (publishing) rather than at every install, and the tests run the `v2a`
 * bin as built from the sources they test. Plain JavaScript: it runs before anything is built.
 * In an installed package (no src/) there is nothing to build and it does nothing.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
/** What `npm run build` writes, one file per output tree. */
const OUTPUTS = ['dist/server/main.cjs', 'dist/cli/main.cjs', 'dist/core/index.js', 'dist/studio/index.html'];
/** Sources the build generates (gitignored): a clone has none until its first build. */
const GENERATED = ['src/core/tables.generated.ts', 'src/core/wasm/kernels.generated.ts'];
/** What it is built from: the sources, the kernels' (assembly/) and the build's own scripts. */
const INPUTS = ['src', 'assembly', 'scripts', 'package.json', 'tsconfig.json', 'tsconfig.build.json'];

function newest(path) {
  const st = statSync(path, { throwIfNoEntry: false });
  if (!st) return 0;
  if (!st.isDirectory()) return st.mtimeMs;
  let max = st.mtimeMs;
  for (const entry of readdirSync(path)) max = Math.max(max, newest(join(path, entry)));
  return max;
}

if (existsSync(join(ROOT, 'src'))) {
  const generated = GENERATED.every((p) => existsSync(join(ROOT, p)));
  const built = generated ? Math.min(...OUTPUTS.map((p) => statSync(join(ROOT, p), { throwIfNoEntry: false })?.mtimeMs ?? 0)) : 0;
  const source = Math.max(...INPUTS.map((p) => newest(join(ROOT, p))));
  if (built < source) {
    process.stderr.write(built === 0 ? 'v2a: building dist/ (first start)\n' : 'v2a: sources changed since the last build: rebuilding dist/\n');
    const npm = process.env.npm_execpath;
    const run = npm
      ? spawnSync(process.execPath, [npm, 'run', 'build'], { cwd: ROOT, stdio: 'inherit' })
      : spawnSync('npm', ['run', 'build'], { cwd: ROOT, stdio: 'inherit', shell: process.platform === 'win32' });
    process.exit(run.status ?? 1);
  }
}
