/**
 * The peer tools the benchmarks compare v2a with: `chafa` (1.12) and `jp2a` (1.1), both from
 * Debian. Missing peers are installed with apt-get when we are root (nothing is downloaded any
 * other way); otherwise the bench says so in one line and goes on without them.
 *
 * Command lines (see bench/README.md for how they were chosen):
 * - chafa: `--format symbols --symbols ascii --colors none --size CxR --stretch --animate off
 *   --polite on FILE`. With `--colors none` and output to a pipe chafa 1.12 emits no escape
 *   sequences at all (no SGR, no inverse video, no cursor hiding with polite on): plain ASCII, one
 *   line per row, trailing blanks kept. It treats the ink as light on a dark ground (a white
 *   square on black becomes `@`, black on white becomes blanks inside `@`), so no `--invert` or
 *   `--fg/--bg` is needed. Without `--fill` chafa matches shapes with a two-level (ink/no ink)
 *   model: smooth gradients become hard thresholds. `chafa-fill` adds `--fill ascii` (ASCII
 *   glyphs used as gradient fill): a stronger tone baseline, reported alongside.
 * - jp2a: `--width=C --height=R --background=dark FILE` (both sizes given: jp2a stretches to
 *   exactly C x R). `--background=dark` = light characters on a dark terminal (bright source ->
 *   dense glyph). It reads JPEG and PNG (8-bit RGB PNG copies are given to every tool).
 * Any escape sequence that does show up is stripped and counted; a grid that is not exactly
 * R lines of C printable ASCII characters is reported as a problem, never patched up.
 */
import { isRoot, probe, run, which } from './proc.js';

export type PeerName = 'chafa' | 'chafa-fill' | 'jp2a';
/** The programs behind the peers, and the Debian packages that ship them. */
export const PEER_PROGRAMS = ['chafa', 'jp2a'] as const;
export type PeerProgram = (typeof PEER_PROGRAMS)[number];

export const programOf = (peer: PeerName): PeerProgram => (peer === 'jp2a' ? 'jp2a' : 'chafa');

let aptUpdated = false;

/** Whether apt knows a candidate version for `pkg` (false: the package lists need an update). */
function aptHasCandidate(pkg: string): boolean {
  const r = probe('apt-cache', ['policy', pkg]);
  const m = /Candidate:\s*(\S+)/.exec(r.stdout);
  return !!m && m[1] !== '(none)';
}

/** `apt-get update` once per process, and only when a package has no candidate. */
export async function aptUpdateIfNeeded(pkgs: readonly string[], log: (s: string) => void): Promise<void> {
  if (aptUpdated || pkgs.every(aptHasCandidate)) return;
  log('apt-get update (package lists do not know ' + pkgs.filter((p) => !aptHasCandidate(p)).join(', ') + ')');
  const r = await run('apt-get', ['update'], { env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } });
  aptUpdated = true;
  if (r.code !== 0) log(`apt-get update failed (exit ${r.code}): ${r.stderr.trim().split('\n').pop() ?? ''}`);
}

/** Can we install Debian packages here? (root and apt-get present) */
export const canApt = (): boolean => isRoot() && which('apt-get') !== null;

/**
 * Makes sure the peer programs are on PATH, installing the missing ones with apt-get when root.
 * Returns the programs that are available; prints one line per program that is not.
 */
export async function ensurePeers(log: (s: string) => void = console.log): Promise<Set<PeerProgram>> {
  let missing = PEER_PROGRAMS.filter((p) => !which(p));
  if (missing.length && canApt()) {
    await aptUpdateIfNeeded(missing, log);
    log(`installing ${missing.join(', ')} with apt-get`);
    const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
    let r = await run('apt-get', ['install', '-y', '--no-install-recommends', ...missing], { env });
    if (r.code !== 0 && !aptUpdated) {
      aptUpdated = true;
      await run('apt-get', ['update'], { env });
      r = await run('apt-get', ['install', '-y', '--no-install-recommends', ...missing], { env });
    }
    if (r.code !== 0) log(`apt-get install ${missing.join(' ')} failed (exit ${r.code}): ${r.stderr.trim().split('\n').pop() ?? ''}`);
    missing = PEER_PROGRAMS.filter((p) => !which(p));
  }
  for (const p of missing) log(`skipping ${p}: not installed (apt-get install ${p})`);
  return new Set(PEER_PROGRAMS.filter((p) => which(p)));
}

/** First line of `prog --version`, for the record. */
export function peerVersion(prog: PeerProgram): string {
  const r = probe(prog, ['--version']);
  return (r.stdout || r.stderr).trim().split('\n')[0] ?? '';
}

/** The chafa argument list for exactly `columns x rows` plain ASCII cells (see the header). */
export function chafaArgs(file: string, columns: number | string, rows: number | string, fill = false): string[] {
  return [
    '--format', 'symbols', '--symbols', 'ascii', ...(fill ? ['--fill', 'ascii'] : []), '--colors', 'none',
    '--size', `${columns}x${rows}`, '--stretch', '--animate', 'off', '--polite', 'on', file,
  ];
}

/** The jp2a argument list for exactly `columns x rows` cells, light ink on a dark ground. */
export function jp2aArgs(file: string, columns: number | string, rows: number | string): string[] {
  return [`--width=${columns}`, `--height=${rows}`, '--background=dark', file];
}

/** Program and arguments of a peer. */
export function peerCommand(peer: PeerName, file: string, columns: number | string, rows: number | string): { cmd: string; args: string[] } {
  if (peer === 'jp2a') return { cmd: 'jp2a', args: jp2aArgs(file, columns, rows) };
  return { cmd: 'chafa', args: chafaArgs(file, columns, rows, peer === 'chafa-fill') };
}

// Escape sequences: CSI (SGR, cursor, ...), OSC, other two-byte ESC sequences.
// eslint-disable-next-line no-control-regex
const ESCAPES = /\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]/g;

export interface PeerText {
  readonly lines: string[];
  /** Escape sequences removed from the output (expected: 0). */
  readonly escapesStripped: number;
  /** null when the output is exactly `rows` lines of `columns` printable ASCII characters. */
  readonly problem: string | null;
  readonly command: string;
  readonly ms: number;
}

/** Splits tool output into lines, strips escapes, and checks the grid. */
export function parseGrid(raw: string, columns: number, rows: number): { lines: string[]; escapesStripped: number; problem: string | null } {
  let escapesStripped = 0;
  const clean = raw.replace(ESCAPES, () => {
    escapesStripped++;
    return '';
  }).replace(/\r/g, '');
  const lines = clean.split('\n');
  if (lines.length && lines[lines.length - 1] === '') lines.pop();
  const problems: string[] = [];
  if (lines.length !== rows) problems.push(`${lines.length} lines instead of ${rows}`);
  const widths = new Set(lines.map((l) => [...l].length));
  if (widths.size !== 1 || !widths.has(columns)) problems.push(`line widths ${[...widths].sort((a, b) => a - b).join('/')} instead of ${columns}`);
  const bad = lines.find((l) => /[^\x20-\x7e]/.test(l));
  if (bad !== undefined) problems.push('non-ASCII or control characters in the output');
  if (escapesStripped) problems.push(`(${escapesStripped} escape sequences stripped)`);
  const hard = problems.filter((p) => !p.startsWith('('));
  return { lines, escapesStripped, problem: hard.length ? problems.join('; ') : null };
}

/** Runs a peer on an image file and returns its text grid. */
export async function runPeer(peer: PeerName, file: string, columns: number, rows: number): Promise<PeerText> {
  const { cmd, args } = peerCommand(peer, file, columns, rows);
  const command = [cmd, ...args].join(' ');
  const r = await run(cmd, args, { env: { ...process.env, TERM: 'dumb', COLORTERM: '' }, timeoutMs: 120_000 });
  if (r.code !== 0) {
    return { lines: [], escapesStripped: 0, problem: `exited ${r.code ?? r.signal}: ${r.stderr.trim().split('\n')[0] ?? ''}`, command, ms: r.ms };
  }
  const g = parseGrid(r.stdout.toString('utf8'), columns, rows);
  return { ...g, command, ms: r.ms };
}
