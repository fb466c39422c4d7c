/**
 * Where the art goes and how it must look there: the box it fits (`-w/--width`, `-H/--height`,
 * `--size WxH`, the terminal, `COLUMNS`/`LINES`) and its colour (`-c/--colors`, NO_COLOR,
 * FORCE_COLOR, COLORTERM, TERM). Shared by `render`, `render --animate` and `play`.
 */
import { existsSync } from 'node:fs';
import type { FitBox } from '../core/job.js';
import { COLOR_DEPTHS, PARAM_BY_NAME, type ColorDepth, type IntegerDef, type RenderParams } from '../core/params/definitions.js';
import { MAX_ROWS } from '../core/pipeline/geometry.js';
import { colorDepthWhenOn, detectColor, type ColorSupport } from './color-support.js';
import { integerFlag, stdoutIsTty, usageError } from './terminal.js';

const COLUMNS_DEF = PARAM_BY_NAME.get('columns') as IntegerDef;

/** The values of `-c/--colors`. */
export const COLOR_MODES = [...COLOR_DEPTHS, 'none'] as const;

/** `-c, --colors <mode>`: the CLI's spelling of the colorDepth parameter, plus `none`. */
export const COLORS_FLAG = '-c, --colors <mode>';
/** Depths as chafa (`-c full`, 240, 16/8, 8, 2) and other tools spell them: v2a's nearest, for the message. */
const COLOR_MODE_HABITS: Readonly<Record<string, ColorSupport>> = { full: 'truecolor', '24bit': 'truecolor', '16m': 'truecolor', '240': '256', '16/8': '16', '8': '16', '2': 'none', mono: 'none' };

export const COLORS_HELP = `one of ${COLOR_MODES.join(', ')}; default: what the terminal supports, none when piped (256 and 16 are for ansi output, and refused with another format rather than ignored)`;

export interface ViewFlags {
  readonly width?: string;
  readonly height?: string;
  readonly size?: string;
  readonly colors?: string;
}

type Env = Readonly<Record<string, string | undefined>>;

function positive(text: string | undefined): number | undefined {
  if (text === undefined || !/^\s*\d{1,6}\s*$/.test(text)) return undefined;
  const n = Number(text);
  return n > 0 ? n : undefined;
}

/** The variables that size the box (terminalBox). */
const SIZE_VARS = ['FZF_PREVIEW_COLUMNS', 'FZF_PREVIEW_LINES', 'COLUMNS', 'LINES'] as const;

/** A box's size, and what gave its width, for a refusal (`COLUMNS=5`). */
export interface Box { readonly columns?: number; readonly rows?: number; readonly columnsFrom?: string }

/**
 * The box the art is shown in: fzf's preview window (`FZF_PREVIEW_COLUMNS`/`FZF_PREVIEW_LINES`,
 * read only when standard output is not a terminal, as in fzf's preview: fzf exports them to
 * `execute()` too, which runs on the whole terminal); else `COLUMNS`/`LINES` when set to a positive
 * integer (as shells and Python's shutil read them; also when standard output is a pipe); else the
 * terminal on standard output.
 */
export function terminalBox(env: Env = process.env, isTty = stdoutIsTty()): Box {
  const preview = (name: string) => (isTty ? undefined : positive(env[name]));
  const named = (name: string, n: number | undefined) => (n === undefined ? undefined : { n, from: `${name}=${n}` });
  const width = named('FZF_PREVIEW_COLUMNS', preview('FZF_PREVIEW_COLUMNS')) ?? named('COLUMNS', positive(env.COLUMNS))
    ?? (isTty && process.stdout.columns > 0 ? { n: process.stdout.columns, from: 'the terminal' } : undefined);
  const rows = preview('FZF_PREVIEW_LINES') ?? positive(env.LINES) ?? (isTty && process.stdout.rows > 0 ? process.stdout.rows : undefined);
  return { columns: width?.n, rows, columnsFrom: width?.from };
}

/**
 * The columns of a box `columns` wide: a box is an upper bound, so one wider than the most columns
 * is capped; one narrower than the fewest is refused (exit 2), whatever gave it: art wider than
 * its box is what a box rules out.
 */
function boxColumns(columns: number, from: string | undefined): number {
  if (columns < COLUMNS_DEF.min) throw usageError(`the box is ${columns} column${columns === 1 ? '' : 's'} wide (${from ?? 'the terminal'}); the art needs at least ${COLUMNS_DEF.min}`);
  return Math.min(COLUMNS_DEF.max, columns);
}

/** `env` without the size variables: after a resize (SIGWINCH) exported sizes are stale, the terminal's own is not. */
export function withoutSizeVars(env: Env): Env {
  const out: Record<string, string | undefined> = { ...env };
  for (const name of SIZE_VARS) delete out[name];
  return out;
}

/** `--size WxH`, `Wx`, `xH` or `W` (chafa's spelling): a box, so any size, capped to what the art can have. */
function parseSize(raw: string): { columns?: number; rows?: number } {
  // × as \u00d7: the CLI bundle stays ASCII (scripts/bundle-cli.ts).
  const m = /^\s*([+-]?\d*)\s*(?:[xX\u00d7]\s*([+-]?\d*))?\s*$/.exec(raw);
  if (!m || (m[1] === '' && (m[2] ?? '') === '')) throw usageError(`--size must be WxH, Wx or xH in characters, e.g. 80x24 (got ${JSON.stringify(raw)})`);
  const dimension = (name: string, text: string) => integerFlag(`--size ${name}`, text, 1, Number.MAX_SAFE_INTEGER, 'a positive integer');
  return {
    columns: m[1] ? boxColumns(dimension('width', m[1]), `--size ${raw.trim()}`) : undefined,
    rows: m[2] ? Math.min(MAX_ROWS, dimension('height', m[2])) : undefined,
  };
}

/** `--size`'s help: what it does, and the caps of boxColumns and MAX_ROWS. */
export const SIZE_HELP = `fit in a box of W columns and H rows, aspect kept (also Wx or xH); a box wider than ${COLUMNS_DEF.max} columns or taller than ${MAX_ROWS} rows, the art's most, is capped`;

/**
 * The columns or the box of the art. Columns the user gave (`--columns` or `-w` alone) are used
 * as given. `--size`, or `-w` with `-H`, is a box the image fits in, its aspect kept; `-H` alone
 * bounds the rows, the width bounded by the terminal if known and written to it. Otherwise, written to standard
 * output: the terminal (or terminalBox's variables), one line left for the prompt on a terminal,
 * every line when piped (a previewer's pane has no prompt below the art); a file (-o) gets the
 * default, whatever window it was made in.
 */
export function resolveBox(params: Partial<RenderParams>, flags: ViewFlags, output: string | undefined, env: Env = process.env, isTty = stdoutIsTty()): { params: Partial<RenderParams>; fit: FitBox | undefined } {
  const out = { ...params };
  // A file is the same whatever window it was made in: the terminal bounds only what is shown in it.
  const shownBox = (): Box => (output === undefined ? terminalBox(env, isTty) : {});
  if (flags.width !== undefined) {
    if (params.columns !== undefined) throw usageError('-w/--width and --columns both set the width: give one');
    out.columns = integerFlag('-w/--width', flags.width, COLUMNS_DEF.min, COLUMNS_DEF.max);
  }
  const height = flags.height !== undefined ? integerFlag('-H/--height', flags.height, 1, MAX_ROWS) : undefined;
  if (flags.size !== undefined) {
    if (out.columns !== undefined || height !== undefined) throw usageError('--size gives both dimensions: drop -w/--width, -H/--height and --columns');
    const size = parseSize(flags.size);
    const term = shownBox();
    return { params: out, fit: { columns: size.columns ?? (term.columns ? boxColumns(term.columns, term.columnsFrom) : COLUMNS_DEF.max), ...(size.rows ? { rows: size.rows, strict: true } : {}) } };
  }
  if (height !== undefined) {
    const columns = out.columns;
    delete out.columns;
    const term = shownBox();
    return { params: out, fit: { columns: columns ?? (term.columns ? boxColumns(term.columns, term.columnsFrom) : COLUMNS_DEF.max), rows: height, strict: true } };
  }
  if (out.columns !== undefined || output !== undefined) return { params: out, fit: undefined };
  const term = terminalBox(env, isTty);
  if (term.columns === undefined && term.rows === undefined) return { params: out, fit: undefined };
  return {
    params: out,
    fit: {
      columns: term.columns ? boxColumns(term.columns, term.columnsFrom) : COLUMNS_DEF.default,
      ...(term.rows ? { rows: Math.max(1, isTty ? term.rows - 1 : term.rows) } : {}),
    },
  };
}

/**
 * -c/--colors' value as a mode, else a usage error: chafa's spellings get a hint, and so does a
 * value that names an existing file (jp2a's --colors is a switch: `v2a --colors a.png` took the
 * file as the mode, and commander then said only that the file was missing).
 */
export function colorMode(raw: string): ColorSupport {
  const mode = raw.trim() as ColorSupport;
  if ((COLOR_MODES as readonly string[]).includes(mode)) return mode;
  const habit = COLOR_MODE_HABITS[mode.toLowerCase()];
  const hint = habit !== undefined ? ` (Did you mean ${habit === 'none' ? '--no-color' : `-c ${habit}`}?)`
    : existsSync(raw) ? ` (-c/--colors takes a mode before the file: -c truecolor ${raw}, or --color for colour at the terminal's depth)` : '';
  throw usageError(`-c/--colors must be one of ${COLOR_MODES.join(', ')} (got ${JSON.stringify(raw)})${hint}`);
}

/**
 * Colour: `--colors` as given (`none` turns colour off; a depth turns it on); else, written to
 * standard output and neither --color, --no-color nor --format given, colour when the terminal
 * supports it (detectColor). Ansi output on standard output, a terminal or piped, gets the depth
 * the environment tells (colorDepthWhenOn).
 */
export function resolveColor(params: Partial<RenderParams>, flags: ViewFlags, output: string | undefined, env: Env = process.env, isTty = stdoutIsTty()): Partial<RenderParams> {
  const out = { ...params };
  if (flags.colors !== undefined) {
    const mode = colorMode(flags.colors);
    if (mode === 'none') {
      if (params.color === true) throw usageError('--colors none and --color contradict each other: give one');
      out.color = false;
      delete out.colorDepth;
      // As --no-color: ANSI's mono ink still in the depth the terminal has (a 24-bit code on a
      // 16-colour console, which -c none was asked to avoid, was a bug).
      return output === undefined ? withTerminalDepth(out, env) : out;
    }
    if (params.color === false) throw usageError(`--colors ${mode} and --no-color contradict each other: give one`);
    if (params.colorDepth !== undefined) throw usageError('--colors is given twice');
    out.color = true;
    out.colorDepth = mode as ColorDepth;
    return out;
  }
  if (output !== undefined) return out;
  if (params.color === undefined && params.format === undefined && detectColor(env, isTty) !== 'none') out.color = true;
  return withTerminalDepth(out, env);
}

/**
 * Colour on, or ANSI (whose mono ink is a colour too), in the depth the terminal supports. NO_COLOR,
 * TERM=dumb and FORCE_COLOR=0 turn only the default off: colour turned on by hand (--color,
 * --format ansi) still gets that depth.
 */
function withTerminalDepth(out: Partial<RenderParams>, env: Env): Partial<RenderParams> {
  const depth = colorDepthWhenOn(env);
  if ((out.color || out.format === 'ansi') && depth !== 'truecolor' && out.colorDepth === undefined) out.colorDepth = depth;
  return out;
}
