/**
 * `npm run build` before a bench that measures dist/ (the same rules as bench/speed.ts): a failed
 * build is reported, and the bench goes on with dist/ if tsc emitted it anyway or an older one
 * exists; with no dist/ entry at all it throws.
 */
import { existsSync, statSync } from 'node:fs';
import { run } from './proc.js';

export interface BuildOutcome {
  readonly ok: boolean;
  readonly note: string;
}

export async function buildProject(root: string, entry: string, progress: (s: string) => void): Promise<BuildOutcome> {
  progress('npm run build ...');
  const started = Date.now();
  const r = await run('npm', ['run', 'build'], { cwd: root });
  if (r.code === 0) return { ok: true, note: `built in ${(r.ms / 1000).toFixed(1)} s` };
  const lines = (r.stdout.toString() + r.stderr).split('\n').filter((l) => !/npm warn/i.test(l));
  const errors = lines.filter((l) => /error TS\d+/.test(l));
  const first = (errors[0] ?? lines.filter((l) => l.trim()).pop() ?? '').trim().slice(0, 160);
  if (!existsSync(entry)) throw new Error(`npm run build failed and there is no ${entry}: ${first}`);
  const emitted = statSync(entry).mtimeMs >= started - 1000;
  return {
    ok: false,
    note: `npm run build FAILED (${errors.length} type errors, first: ${first}); ` +
      (emitted ? 'tsc emitted dist/ anyway: measuring it' : `measuring the existing dist/ from ${statSync(entry).mtime.toISOString()}`),
  };
}
