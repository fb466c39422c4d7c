/**
 * The `v2a` command as the CLI tests run it: the bin npm installs (dist/cli/main.cjs, the bundle
 * with its code cache), not the sources through tsx, which cost each of the suite's ~180 runs some
 * 0.45 s more CPU. `npm test` builds first (pretest: scripts/build-if-stale.mjs); a test file run
 * on its own after an edit rebuilds (ensureCliBuilt, in its `before`), with the same script.
 */
import { spawn, spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildOnce } from './build-lock.js';

export const ROOT = fileURLToPath(new URL('../..', import.meta.url));
/** The bin: run as `node V2A_BIN ...args`. */
export const V2A_BIN = join(ROOT, 'dist/cli/main.cjs');
/** argv of the CLI: node, the bin. */
export const V2A: readonly string[] = [process.execPath, V2A_BIN];

/** dist/ built from the sources as they are now (the script builds only when they are newer). */
export async function ensureCliBuilt(): Promise<void> {
  await buildOnce(() => false, () => {
    const r = spawnSync(process.execPath, [join(ROOT, 'scripts/build-if-stale.mjs')], { cwd: ROOT, encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`npm run build failed (${r.status}):\n${r.stdout}${r.stderr}`);
  });
}

/** What the CLI reads to choose colour and size: a test starts from an environment without them. */
const OUTPUT_VARS = ['NO_COLOR', 'FORCE_COLOR', 'CLICOLOR_FORCE', 'COLUMNS', 'LINES', 'FZF_PREVIEW_COLUMNS', 'FZF_PREVIEW_LINES'];
/** What names the terminal (its colour depth): dropped too where a test sets its own. */
const TERMINAL_VARS = ['COLORTERM', 'TERM', 'TERM_PROGRAM'];

/**
 * The test runner's environment without what the CLI reads to choose colour and size (with
 * `terminal`, without what names the terminal either; with `settings`, without V2A_*), then `extra`.
 */
export function cliEnv(extra: Record<string, string> = {}, opts: { terminal?: boolean; settings?: boolean; from?: NodeJS.ProcessEnv } = {}): Record<string, string> {
  const drop = new Set([...OUTPUT_VARS, ...(opts.terminal ? TERMINAL_VARS : [])]);
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(opts.from ?? process.env)) {
    if (v !== undefined && !drop.has(k) && !(opts.settings && k.startsWith('V2A_'))) out[k] = v;
  }
  return { ...out, ...extra };
}

/** `s` as one word of a POSIX shell command line. */
export const shellQuote = (s: string): string => `'${s.replace(/'/g, `'\\''`)}'`;

export interface CliRun { code: number | null; stdout: string; stderr: string }

/** Runs `v2a args` in the repository with `env`, standard input closed; its outputs as text. */
export function runCli(args: readonly string[], env: Record<string, string>): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(V2A[0]!, [...V2A.slice(1), ...args], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => { stdout += c; });
    child.stderr.on('data', (c: Buffer) => { stderr += c; });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}
