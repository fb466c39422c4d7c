/**
 * The colour depth a terminal supports, from the environment as terminals and tools agree on it
 * (the conventions of NO_COLOR, FORCE_COLOR and the supports-color package):
 * - `NO_COLOR` set and not empty: none (https://no-color.org), unless FORCE_COLOR says otherwise.
 * - `FORCE_COLOR`: 0 or false none; 1 or true (or empty) at least 16; 2 at least 256; 3 truecolor —
 *   also when standard output is not a terminal.
 * - Otherwise only a terminal gets colour: `COLORTERM=truecolor|24bit` truecolor; a TERM naming a
 *   24-bit terminal (kitty, ghostty, wezterm, iTerm, *-direct) truecolor; `TERM=*-256color` 256;
 *   `TERM=dumb` none; any other TERM (xterm, screen, linux, vt100, ...) or COLORTERM set, 16.
 */
import type { ColorDepth } from '../core/params/definitions.js';

export type ColorSupport = ColorDepth | 'none';

const RANK: Readonly<Record<ColorSupport, number>> = { none: 0, '16': 1, '256': 2, truecolor: 3 };
const BY_RANK: readonly ColorSupport[] = ['none', '16', '256', 'truecolor'];

/** What the terminal itself claims, from COLORTERM and TERM. */
function fromTerminal(env: Readonly<Record<string, string | undefined>>): ColorSupport {
  const colorterm = (env.COLORTERM ?? '').toLowerCase();
  const term = (env.TERM ?? '').toLowerCase();
  if (colorterm === 'truecolor' || colorterm === '24bit') return 'truecolor';
  if (term === 'dumb') return 'none';
  if (/^(xterm-kitty|xterm-ghostty|wezterm|alacritty|foot)|-direct$|-truecolor$/.test(term)) return 'truecolor';
  if (env.TERM_PROGRAM === 'iTerm.app' || env.TERM_PROGRAM === 'WezTerm' || env.TERM_PROGRAM === 'ghostty') return 'truecolor';
  if (/-256(colou?r)?$/.test(term)) return '256';
  if (term !== '' || colorterm !== '') return '16';
  return 'none';
}

/** FORCE_COLOR's level, or undefined when it is not set. */
function forced(value: string | undefined): ColorSupport | undefined {
  if (value === undefined) return undefined;
  const v = value.trim().toLowerCase();
  if (v === '0' || v === 'false') return 'none';
  if (v === '' || v === '1' || v === 'true') return '16';
  if (v === '2') return '256';
  if (v === '3') return 'truecolor';
  return '16';
}

/** The colour depth to use on standard output when the user did not say (`--colors`). */
export function detectColor(env: Readonly<Record<string, string | undefined>>, isTty: boolean): ColorSupport {
  const force = forced(env.FORCE_COLOR);
  if (force === 'none') return 'none';
  if (force !== undefined) return BY_RANK[Math.max(RANK[force], RANK[fromTerminal(env)])]!;
  if (env.NO_COLOR !== undefined && env.NO_COLOR !== '') return 'none';
  return isTty ? fromTerminal(env) : 'none';
}
