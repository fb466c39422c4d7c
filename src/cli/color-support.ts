/**
 * The colour depth a terminal supports, from the environment, in the order Node's own
 * tty.WriteStream.getColorDepth reads it (one well-known precedence, so that v2a agrees with
 * Node's own colours and the FORCE_COLOR / NO_COLOR conventions):
 * 1. `FORCE_COLOR`, exact, also when standard output is not a terminal: 1 (or empty, or true) 16,
 *    2 256, 3 truecolor; 0, false or any other value none.
 * 2. An off switch: `NO_COLOR` (https://no-color.org) or `NODE_DISABLE_COLORS` set and not empty,
 *    or `TERM=dumb`: none.
 * 3. `CLICOLOR_FORCE` set and not 0 (https://bixense.com/clicolors/): colour also when piped, at
 *    the depth of step 4, else 16 (as FORCE_COLOR=1). After the off switches, as Rust's and Go's
 *    terminal libraries read it: it has no level, and NO_COLOR is the user's own "no".
 * 3a. `CLICOLOR=0` (the same convention's other half): no colour by default, on a terminal too.
 * 4. Only a terminal gets colour by default: `COLORTERM=truecolor|24bit` truecolor; a TERM naming
 *    a 24-bit terminal (kitty, ghostty, wezterm, iTerm, *-direct) truecolor; `TERM=*-256color` 256;
 *    any other TERM (xterm, screen, linux, vt100, ...) or COLORTERM set, 16. vt100 stays 16, as in
 *    Node: terminal emulators that call themselves vt100 have colour; a real VT100 is rare.
 * The off switches only decide whether colour is on by default: colour asked for explicitly
 * (`--color`, `--format ansi`) gets the depth of step 1 or 4 (`colorDepthWhenOn`), piped or not,
 * as chafa does: `TERM=linux v2a x.jpg --color | less -R` is 16 colours, not truecolor; with
 * nothing that tells a depth, 16 too.
 */
import type { ColorDepth } from '../core/params/definitions.js';

export type ColorSupport = ColorDepth | 'none';

type Env = Readonly<Record<string, string | undefined>>;

/** What the terminal itself claims, from COLORTERM and TERM (TERM=dumb is an off switch, not a depth). */
function fromTerminal(env: Env): ColorSupport {
  const colorterm = (env.COLORTERM ?? '').toLowerCase();
  const term = (env.TERM ?? '').toLowerCase();
  if (colorterm === 'truecolor' || colorterm === '24bit') return 'truecolor';
  if (/^(xterm-kitty|xterm-ghostty|wezterm|alacritty|foot)|-direct$|-truecolor$/.test(term)) return 'truecolor';
  if (env.TERM_PROGRAM === 'iTerm.app' || env.TERM_PROGRAM === 'WezTerm' || env.TERM_PROGRAM === 'ghostty') return 'truecolor';
  if (/-256(colou?r)?$/.test(term)) return '256';
  if (term !== '' || colorterm !== '') return '16';
  return 'none';
}

/** FORCE_COLOR's depth as Node reads it, or undefined when it is not set. */
function forced(value: string | undefined): ColorSupport | undefined {
  if (value === undefined) return undefined;
  switch (value.trim().toLowerCase()) {
    case '': case '1': case 'true': return '16';
    case '2': return '256';
    case '3': return 'truecolor';
    default: return 'none';
  }
}

const set = (value: string | undefined) => value !== undefined && value !== '';

/** NO_COLOR, NODE_DISABLE_COLORS or TERM=dumb: no colour unless asked for. */
function switchedOff(env: Env): boolean {
  return set(env.NO_COLOR) || set(env.NODE_DISABLE_COLORS) || (env.TERM ?? '').toLowerCase() === 'dumb';
}

/** CLICOLOR_FORCE set, not empty and not 0. */
const clicolorForced = (env: Env) => set(env.CLICOLOR_FORCE) && env.CLICOLOR_FORCE!.trim() !== '0';

/** The colour depth to use on standard output when the user did not say (`--color`, `--colors`). */
export function detectColor(env: Env, isTty: boolean): ColorSupport {
  const force = forced(env.FORCE_COLOR);
  if (force !== undefined) return force;
  if (switchedOff(env)) return 'none';
  if (clicolorForced(env)) return colorDepthWhenOn(env);
  if ((env.CLICOLOR ?? '').trim() === '0') return 'none';
  return isTty ? fromTerminal(env) : 'none';
}

/**
 * The depth for colour the user turned on (`--color`, `--format ansi`, CLICOLOR_FORCE) without
 * `--colors`: the detection without its off switches, since NO_COLOR, TERM=dumb and FORCE_COLOR=0
 * say "no colour by default", not "this terminal has fewer colours"; piped too, as the terminal
 * the command runs in (the art is bound for it, through a pager or a file). 16 where nothing tells
 * a depth (no FORCE_COLOR, TERM or COLORTERM): what every colour terminal shows, as FORCE_COLOR=1.
 */
export function colorDepthWhenOn(env: Env): ColorDepth {
  const force = forced(env.FORCE_COLOR);
  if (force !== undefined && force !== 'none') return force;
  const depth = fromTerminal(env);
  return depth === 'none' ? '16' : depth;
}
