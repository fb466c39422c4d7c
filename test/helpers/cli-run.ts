/** The v2a CLI run from source as a child process (tsx), for the tests of its faces. */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('../..', import.meta.url));
export const CLI_MAIN = join(ROOT, 'src/cli/main.ts');
/** argv of the CLI: node, tsx, main.ts. */
export const V2A: readonly string[] = [process.execPath, '--import', 'tsx', CLI_MAIN];

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
