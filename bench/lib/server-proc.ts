/**
 * The v2a server as a child process for the server bench: `node [nodeArgs] dist/server/main.cjs`
 * on 127.0.0.1 with PORT=0 (the kernel picks a free port; it is read from the server's own
 * "Server listening at" log line, so there is no race for the port), ready once /api/v1/health/ready
 * answers 200 (after the render workers' warm-up, as a load balancer would send traffic). Its JSON log goes to a file (never a pipe the bench would have to drain).
 *
 * Every child started here is stopped with SIGTERM (graceful shutdown), then SIGKILL after a
 * grace period, by `stop()`, by `stopAllServers()`, and as a last resort on process exit.
 * CPU time of the whole process and of its main thread (the event loop: HTTP, reading bodies) comes
 * from /proc (Linux only; null elsewhere).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, readdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { probe } from './proc.js';

export interface CpuSample {
  /** Seconds of CPU (user + system) of the whole process. */
  readonly total: number;
  /** Seconds of CPU of the main thread (the event loop). */
  readonly main: number;
  /** Seconds of CPU by thread name (comm), summed. */
  readonly byThread: Readonly<Record<string, number>>;
}

export interface ServerProcess {
  readonly label: string;
  readonly url: string;
  readonly pid: number;
  readonly logFile: string;
  cpu(): CpuSample | null;
  /** SIGTERM, wait up to `graceMs`, then SIGKILL. Resolves with how it ended. */
  stop(graceMs?: number): Promise<{ code: number | null; signal: NodeJS.Signals | null; forced: boolean }>;
}

export interface StartServerOptions {
  readonly label: string;
  /** The server entry, e.g. <root>/dist/server/main.cjs. */
  readonly entry: string;
  readonly cwd: string;
  /** Settings on top of the cleaned environment (HOST and PORT are always 127.0.0.1 and 0). */
  readonly env: Readonly<Record<string, string>>;
  readonly nodeArgs?: readonly string[];
  readonly logFile: string;
  readonly startTimeoutMs?: number;
}

const live = new Set<ChildProcess>();
let exitHookInstalled = false;

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on('exit', () => {
    for (const c of live) {
      try {
        c.kill('SIGKILL');
      } catch {
        // already gone
      }
    }
  });
}

/** Inherited settings that would change what is measured are dropped from the child's environment. */
function cleanEnv(extra: Readonly<Record<string, string>>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (/^(PORT|HOST|LOG_LEVEL|PLATFORM_API_KEY|NODE_OPTIONS)$/.test(k) || /^(V2A_|OTEL_)/.test(k)) continue;
    env[k] = v;
  }
  return { ...env, ...extra, HOST: '127.0.0.1', PORT: '0' };
}

let clkTck: number | undefined;
function ticksPerSecond(): number {
  if (clkTck === undefined) {
    const r = probe('getconf', ['CLK_TCK']);
    const n = Number(r.stdout.trim());
    clkTck = r.code === 0 && n > 0 ? n : 100;
  }
  return clkTck;
}

/** utime + stime in seconds from a /proc stat line, and the thread name. */
function parseStat(text: string): { name: string; seconds: number } | null {
  const open = text.indexOf('(');
  const close = text.lastIndexOf(')');
  if (open < 0 || close < 0) return null;
  const fields = text.slice(close + 2).split(' ');
  // Fields after "(comm)": state is index 0, so utime (field 14) is index 11 and stime index 12.
  const ut = Number(fields[11]);
  const st = Number(fields[12]);
  if (!Number.isFinite(ut) || !Number.isFinite(st)) return null;
  return { name: text.slice(open + 1, close), seconds: (ut + st) / ticksPerSecond() };
}

export function processCpu(pid: number): CpuSample | null {
  try {
    const total = parseStat(readFileSync(`/proc/${pid}/stat`, 'utf8'));
    const main = parseStat(readFileSync(`/proc/${pid}/task/${pid}/stat`, 'utf8'));
    if (!total || !main) return null;
    const byThread: Record<string, number> = {};
    for (const tid of readdirSync(`/proc/${pid}/task`)) {
      const t = tid === String(pid) ? null : parseStat(readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8'));
      if (t) byThread[t.name] = (byThread[t.name] ?? 0) + t.seconds;
    }
    byThread['(main thread)'] = main.seconds;
    return { total: total.seconds, main: main.seconds, byThread };
  } catch {
    return null;
  }
}

/** b - a, thread by thread (threads that ended in between are lost: fine for deltas over a run). */
export function cpuDelta(a: CpuSample | null, b: CpuSample | null): CpuSample | null {
  if (!a || !b) return null;
  const byThread: Record<string, number> = {};
  for (const [k, v] of Object.entries(b.byThread)) byThread[k] = v - (a.byThread[k] ?? 0);
  return { total: b.total - a.total, main: b.main - a.main, byThread };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function tail(file: string, lines = 8): string {
  try {
    return readFileSync(file, 'utf8').trim().split('\n').slice(-lines).join('\n');
  } catch {
    return '(no log)';
  }
}

export async function startServerProcess(opts: StartServerOptions): Promise<ServerProcess> {
  installExitHook();
  mkdirSync(dirname(opts.logFile), { recursive: true });
  const fd = openSync(opts.logFile, 'w');
  const child = spawn(process.execPath, [...(opts.nodeArgs ?? []), opts.entry], {
    cwd: opts.cwd,
    env: cleanEnv(opts.env),
    stdio: ['ignore', fd, fd],
  });
  closeSync(fd);
  live.add(child);
  const state: { exit: { code: number | null; signal: NodeJS.Signals | null } | null } = { exit: null };
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.once('exit', (code, signal) => {
      live.delete(child);
      state.exit = { code, signal };
      resolve(state.exit);
    });
    child.once('error', () => {
      live.delete(child);
      state.exit = { code: null, signal: null };
      resolve(state.exit);
    });
  });

  let stopping: Promise<{ code: number | null; signal: NodeJS.Signals | null; forced: boolean }> | undefined;
  const stop = (graceMs = 20_000) => {
    stopping ??= (async () => {
      if (state.exit) return { ...state.exit, forced: false };
      child.kill('SIGTERM');
      const timer = sleep(graceMs).then(() => null);
      const done = await Promise.race([exited, timer]);
      if (done) return { ...done, forced: false };
      child.kill('SIGKILL');
      return { ...(await exited), forced: true };
    })();
    return stopping;
  };

  const deadline = Date.now() + (opts.startTimeoutMs ?? 30_000);
  try {
    // 1. The port, from the log line Fastify writes once it listens.
    let url: string | null = null;
    while (!url) {
      if (state.exit) throw new Error(`the server (${opts.label}) exited during start-up (${JSON.stringify(state.exit)}):\n${tail(opts.logFile)}`);
      if (Date.now() > deadline) throw new Error(`the server (${opts.label}) did not start listening in time:\n${tail(opts.logFile)}`);
      if (existsSync(opts.logFile)) {
        const m = /Server listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(readFileSync(opts.logFile, 'utf8'));
        if (m) url = m[1]!;
      }
      if (!url) await sleep(50);
    }
    // 2. Ready: /api/v1/health/ready answers 200 (503 `warming` until the workers have warmed up).
    for (;;) {
      if (state.exit) throw new Error(`the server (${opts.label}) exited during start-up:\n${tail(opts.logFile)}`);
      try {
        const r = await fetch(`${url}/api/v1/health/ready`, { signal: AbortSignal.timeout(2000) });
        await r.arrayBuffer();
        if (r.status === 200) break;
      } catch {
        // not yet
      }
      if (Date.now() > deadline) throw new Error(`the server (${opts.label}) did not answer /api/v1/health/ready with 200 in time:\n${tail(opts.logFile)}`);
      await sleep(100);
    }
    const pid = child.pid!;
    return { label: opts.label, url, pid, logFile: opts.logFile, cpu: () => processCpu(pid), stop };
  } catch (err) {
    await stop(5000);
    throw err;
  }
}

/** Stops every server child still running (used on errors and interrupts). */
export async function stopAllServers(): Promise<void> {
  await Promise.all([...live].map(async (c) => {
    c.kill('SIGTERM');
    const t = setTimeout(() => c.kill('SIGKILL'), 10_000);
    await new Promise<void>((r) => (c.exitCode !== null || c.signalCode !== null ? r() : c.once('exit', () => r())));
    clearTimeout(t);
  }));
}

/** Seconds of CPU the whole machine spent busy (all CPUs: not idle, not iowait), from /proc/stat. */
export function systemBusySeconds(): number | null {
  try {
    const line = readFileSync('/proc/stat', 'utf8').split('\n').find((l) => l.startsWith('cpu '));
    if (!line) return null;
    const v = line.trim().split(/\s+/).slice(1).map(Number);
    const total = v.slice(0, 8).reduce((a, b) => a + b, 0);
    const idle = (v[3] ?? 0) + (v[4] ?? 0);
    return (total - idle) / ticksPerSecond();
  } catch {
    return null;
  }
}

/** CPU seconds of this process plus its children that have exited (cutime + cstime), from /proc. */
export function selfAndChildrenSeconds(): number | null {
  try {
    const text = readFileSync('/proc/self/stat', 'utf8');
    const f = text.slice(text.lastIndexOf(')') + 2).split(' ');
    // After "(comm)": utime 11, stime 12, cutime 13, cstime 14.
    const s = [11, 12, 13, 14].map((i) => Number(f[i]));
    if (s.some((x) => !Number.isFinite(x))) return null;
    return s.reduce((a, b) => a + b, 0) / ticksPerSecond();
  } catch {
    return null;
  }
}
