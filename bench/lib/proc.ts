/**
 * Child processes for the benchmarks: run a command and collect its output, time a whole process,
 * find a program on PATH. Node-only.
 */
import { spawn, spawnSync } from 'node:child_process';
import { accessSync, constants, openSync, closeSync } from 'node:fs';
import { delimiter, join } from 'node:path';

export interface RunResult {
  /** Exit code, or null when the process was killed by a signal. */
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: Buffer;
  readonly stderr: string;
  /** Wall time from spawn to exit, in milliseconds. */
  readonly ms: number;
}

export interface RunOptions {
  readonly cwd?: string;
  readonly env?: NodeJS.ProcessEnv;
  /** Send standard output to /dev/null instead of collecting it (for timing). */
  readonly discardStdout?: boolean;
  readonly input?: Buffer | string;
  readonly timeoutMs?: number;
}

/** Runs `cmd args` (no shell) and resolves when it exits; never rejects for a non-zero exit. */
export function run(cmd: string, args: readonly string[], opts: RunOptions = {}): Promise<RunResult> {
  return new Promise((resolvePromise, reject) => {
    const devNull = opts.discardStdout ? openSync('/dev/null', 'w') : undefined;
    const t0 = process.hrtime.bigint();
    const child = spawn(cmd, args, {
      cwd: opts.cwd,
      env: opts.env ?? process.env,
      stdio: [opts.input === undefined ? 'ignore' : 'pipe', devNull ?? 'pipe', 'pipe'],
    });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout?.on('data', (b: Buffer) => out.push(b));
    child.stderr?.on('data', (b: Buffer) => err.push(b));
    let timer: NodeJS.Timeout | undefined;
    if (opts.timeoutMs) timer = setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs);
    child.on('error', (e) => {
      if (timer) clearTimeout(timer);
      if (devNull !== undefined) closeSync(devNull);
      reject(e);
    });
    child.on('close', (code, signal) => {
      const ms = Number(process.hrtime.bigint() - t0) / 1e6;
      if (timer) clearTimeout(timer);
      if (devNull !== undefined) closeSync(devNull);
      resolvePromise({ code, signal, stdout: Buffer.concat(out), stderr: Buffer.concat(err).toString('utf8'), ms });
    });
    if (opts.input !== undefined) child.stdin!.end(opts.input);
  });
}

/** Like `run`, but rejects with the command's standard error unless it exits 0. */
export async function runChecked(cmd: string, args: readonly string[], opts: RunOptions = {}): Promise<RunResult> {
  const r = await run(cmd, args, opts);
  if (r.code !== 0) {
    const tail = r.stderr.trim().split('\n').slice(-3).join(' | ');
    throw new Error(`${cmd} ${args.join(' ')} exited ${r.code ?? r.signal}${tail ? `: ${tail}` : ''}`);
  }
  return r;
}

/** Absolute path of an executable on PATH, or null. */
export function which(name: string): string | null {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    if (!dir) continue;
    const p = join(dir, name);
    try {
      accessSync(p, constants.X_OK);
      return p;
    } catch {
      // not here
    }
  }
  return null;
}

/** Synchronous run for short probes (`apt-cache policy`, `--version`); output as text. */
export function probe(cmd: string, args: readonly string[]): { code: number | null; stdout: string; stderr: string } {
  const r = spawnSync(cmd, args, { encoding: 'utf8' });
  return { code: r.error ? -1 : r.status, stdout: r.stdout ?? '', stderr: r.stderr ?? '' };
}

export const median = (xs: readonly number[]): number => {
  if (!xs.length) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};

export const isRoot = (): boolean => typeof process.getuid === 'function' && process.getuid() === 0;
