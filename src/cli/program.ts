/**
 * The `v2a` command line: commander setup, error reporting and exit codes. Commands live in their
 * own modules and register themselves through a `CommandRegistrar`; a registrar only declares
 * the command and its options, and imports anything heavy (sharp, the renderer, a server)
 * lazily inside its action, so that `v2a --help` and every other command stay fast to start.
 *
 * To add a command (e.g. `v2a serve`): write `src/cli/serve-command.ts` exporting
 * `registerServe: CommandRegistrar`, and add it to the list in `cli.ts`.
 */
import { existsSync } from 'node:fs';
import { Command, CommanderError } from 'commander';
import { EXIT_MEANINGS, V2aError } from '../core/errors.js';
import { VERSION } from '../core/types.js';
import { paramSummary, switchValues } from './flags.js';
import { FORMATS_IN_WORDS } from '../core/params/definitions.js';
import { CLI_MAX_DECODED_BYTES, CLI_MAX_IMAGE_BYTES, CLI_MAX_IMAGE_PIXELS, MAX_DECODED_BYTES, MAX_IMAGE_BYTES, MAX_IMAGE_PIXELS, describeRange } from '../settings/index.js';
import { EXIT, Reported, usageError } from './terminal.js';
import { helpWidth, wrapHelp } from './help-text.js';
import { editDistance } from '../settings/edit-distance.js';
import { COLORS_FLAG, COLORS_HELP } from './view.js';

/** The flags of every command whose value is required: commander takes the next argument as it, whatever it looks like. */
function valueFlags(program: Command): Set<string> {
  const flags = new Set<string>();
  for (const cmd of [program, ...program.commands]) {
    for (const opt of cmd.options) {
      if (!opt.required) continue;
      if (opt.long) flags.add(opt.long);
      if (opt.short) flags.add(opt.short);
    }
  }
  return flags;
}

/** The name of the help command (`v2a help [command]`). */
const HELP_COMMAND = 'help';

/** The end of a usage error's line: the help of the command at fault (`v2a play --help`). */
const helpHint = (cmd?: Command): string => `(see v2a ${cmd && cmd.parent ? `${cmd.name()} ` : ''}--help)`;
const HELP_HINT = helpHint();

/**
 * One line, as every message of the CLI: an unknown option's suggestion (ours: suggestOption)
 * joins it, and the pointer to --help ends it.
 */
const outputError = (cmd: Command) => (str: string, write: (str: string) => void): void => {
  const unknown = /^error: unknown option '(.*)'\s*$/s.exec(str);
  const text = unknown ? `${str.trim()}${suggestOption(cmd, unknown[1]!)}` : str;
  write(`${text.replace(/^error: /, 'v2a: ').trim().replace(/\s*\n\s*/g, ' ')} ${helpHint(cmd)}\n`);
};

/** Flags of chafa, viu, timg and jp2a that v2a spells otherwise. */
const OPTION_HABITS: Readonly<Record<string, string>> = {
  '--symbols': '--charset', // chafa
  '--fill': '--charset', // chafa
  '--fg-only': '--cell-colors fg', // chafa
  '--font-ratio': '--cell-aspect', // chafa
  '-s': '--size', // chafa
  '-f': '--format', // chafa
  '-g': '--size', // timg
  '-W': '--width', // timg
  '--cols': '--columns',
  '--chars': '--glyphs', // jp2a
  '-i': '--invert', // jp2a
};

/**
 * `-h 20`: viu's and timg's height, which is -h, v2a's help, here. Where -h is followed by a
 * number, that number, for the usage error that names -H (it printed the whole help, exit 0,
 * and drew nothing).
 */
function heightAsHelp(argv: readonly string[]): string | undefined {
  for (let i = 2; i < argv.length - 1; i++) {
    if (argv[i] === '--') return undefined;
    if (argv[i] === '-h' && /^\+?\d+$/.test(argv[i + 1]!)) return argv[i + 1];
  }
  return undefined;
}

/**
 * ` (Did you mean --color?)` for an unknown option: another tool's spelling of one of v2a's
 * (OPTION_HABITS), else a long option of `cmd` (or its parents) a typo away (`similar`).
 */
function suggestOption(cmd: Command, flag: string): string {
  const name = flag.replace(/=.*$/s, '');
  const habit = OPTION_HABITS[name];
  if (habit !== undefined) return ` (Did you mean ${habit}?)`;
  if (!name.startsWith('--')) return '';
  const longs = new Set(['--help']);
  for (let c: Command | null = cmd; c; c = c.parent) for (const o of c.options) if (o.long) longs.add(o.long);
  const near = similar(name.slice(2), [...longs].map((l) => l.slice(2)));
  return near.length ? ` (Did you mean ${near.map((n) => `--${n}`).join(' or ')}?)` : '';
}

export type CommandRegistrar = (program: Command) => void;

const EXIT_CODES_HELP = `Exit codes:\n${(Object.keys(EXIT) as (keyof typeof EXIT)[]).map((k) => `  ${String(EXIT[k]).padStart(3)}  ${EXIT_MEANINGS[k]}`).join('\n')}`;

/** The environment variables the CLI reads, for `v2a --help` and the README (npm run docs). */
export const CLI_ENV: readonly { readonly name: string; readonly default: string; readonly meaning: string }[] = [
  // The CLI's render and play read larger files than the server (settings/index.ts): their default first.
  ...([[MAX_IMAGE_BYTES, CLI_MAX_IMAGE_BYTES], [MAX_IMAGE_PIXELS, CLI_MAX_IMAGE_PIXELS], [MAX_DECODED_BYTES, CLI_MAX_DECODED_BYTES]] as const).map(([s, cli]) => ({
    name: s.name,
    default: `${cli} for render and play, ${s.default} for decode, mcp and serve`,
    meaning: `${s.meaning} Must be ${describeRange(s)}.`,
  })),
  { name: 'V2A_DEBUG', default: '(unset)', meaning: 'Set to 1 to print stack traces of errors.' },
  // Colour, in the order it is read (color-support.ts, as Node's getColorDepth).
  { name: 'FORCE_COLOR', default: '(unset)', meaning: 'The colour depth, even when piped and whatever NO_COLOR and TERM say: 1, true or empty 16 colours, 2 256, 3 truecolor; 0 or any other value none.' },
  { name: 'NO_COLOR, NODE_DISABLE_COLORS', default: '(unset)', meaning: 'Set (to anything but empty): no colour by default (https://no-color.org); --color and --colors still work, at the depth of the terminal.' },
  { name: 'CLICOLOR', default: '(unset)', meaning: '0: no colour by default, on a terminal too (https://bixense.com/clicolors/), unless CLICOLOR_FORCE is set and not 0; --color still turns it on.' },
  { name: 'CLICOLOR_FORCE', default: '(unset)', meaning: 'Set and not 0: colour also when piped (https://bixense.com/clicolors/), at the depth COLORTERM and TERM give, else 16 colours; after NO_COLOR, which wins.' },
  { name: 'COLORTERM, TERM, TERM_PROGRAM', default: '(from the terminal)', meaning: 'The colour depth of a terminal, and of colour turned on when piped (--color, CLICOLOR_FORCE): COLORTERM=truecolor|24bit, a TERM of xterm-kitty, xterm-ghostty, wezterm, alacritty, foot, *-direct or *-truecolor, or TERM_PROGRAM=iTerm.app|WezTerm|ghostty truecolor; else TERM=*-256color 256, another TERM 16; TERM=dumb: no colour by default, as NO_COLOR.' },
  // Size, in the order it is read (view.ts terminalBox).
  { name: 'FZF_PREVIEW_COLUMNS, FZF_PREVIEW_LINES', default: '(unset)', meaning: 'Piped (fzf\'s --preview): the box the art fits, before COLUMNS and LINES; every line is used. On a terminal they are ignored (fzf\'s execute() runs on the whole terminal).' },
  { name: 'COLUMNS, LINES', default: '(unset)', meaning: 'The terminal size the art fits, instead of the terminal\'s own; also when piped, where every line is used (on a terminal one is left for the prompt). A resize while playing goes back to the terminal\'s own size.' },
  {
    name: 'NODE_COMPILE_CACHE, NODE_DISABLE_COMPILE_CACHE',
    default: '(unset)',
    meaning: 'v2a keeps the code each command compiled (and its bundle of sharp\'s) in a code cache (and on Node >= 22.8 turns on Node\'s compile cache for what it loads from node_modules), in NODE_COMPILE_CACHE or else <os.tmpdir()>/node-compile-cache, so later runs start faster; NODE_DISABLE_COMPILE_CACHE=1 turns both off.',
  },
];

/**
 * `v2a help [command]`, in place of commander's, which answers `help help` and `help <unknown>`
 * with the whole help on stderr and exit 2, the unknown name unsaid.
 */
function addHelpCommand(program: Command): void {
  program
    .command(HELP_COMMAND)
    .description('show help for a command')
    .argument('[command]', 'the command to show help for')
    .action((name: string | undefined) => {
      if (name === undefined) return program.outputHelp();
      const cmd = program.commands.find((c) => c.name() === name || c.aliases().includes(name));
      if (cmd === undefined) throw usageError(`unknown command '${name}'${didYouMean(program, name)} ${HELP_HINT}`);
      cmd.outputHelp();
    });
}

const ENV_HELP = `Environment:\n${CLI_ENV.map((e) => `  ${e.name} (default ${e.default})\n      ${e.meaning}`).join('\n')}`;

/** Builds the program with the given commands. Commander errors are thrown, never `process.exit`. */
export function createProgram(registrars: readonly CommandRegistrar[]): Command {
  const program = new Command('v2a')
    .usage('[options] <file... | -> | <command> ...')
    .description(`Images (and video) to character art: ${FORMATS_IN_WORDS}.\nv2a <file> renders it to fit the terminal, in colour when the terminal has colour.`)
    .version(VERSION, '-V, --version', 'print the version')
    .helpOption('-h, --help', 'show help')
    .helpCommand(false)
    .exitOverride()
    // Suggestions are ours (outputError), stricter than commander's.
    .showSuggestionAfterError(false)
    .configureOutput({
      // Help is written through writeOut: the hand-written parts are wrapped to the width commander wraps its lists to.
      getOutHelpWidth: helpWidth,
      writeOut: (str) => process.stdout.write(wrapHelp(str, helpWidth())),
    });
  // Settings above are inherited by commands created from here on.
  for (const register of registrars) register(program);
  addHelpCommand(program);
  for (const cmd of [program, ...program.commands]) cmd.configureOutput({ outputError: outputError(cmd) });
  // A function: the text is built only when help is shown, not on every run.
  program.addHelpText(
    'after',
    () => `\nRender parameters (flags of v2a render and v2a play; see v2a render --help):\n${paramSummary([[COLORS_FLAG, COLORS_HELP], ['-w, --width <n>', 'the same as --columns'], ['-H, --height <n>', 'at most <n> rows, aspect kept'], ['--size <WxH>', 'fit in W columns by H rows, aspect kept']])}\n\nExamples:\n  v2a photo.jpg\n  v2a photo.jpg --size 80x24 --colors 256\n  v2a play clip.mp4\n  v2a completion bash > ~/.local/share/bash-completion/completions/v2a\n\n${EXIT_CODES_HELP}\n\n${ENV_HELP}\n`,
  );
  return program;
}

function debugStack(err: unknown): void {
  if (process.env.V2A_DEBUG !== '1' || !(err instanceof Error)) return;
  if (err.stack) process.stderr.write(`${err.stack}\n`);
  if (err.cause instanceof Error && err.cause.stack) process.stderr.write(`caused by ${err.cause.stack}\n`);
}

const debugHint = () => (process.env.V2A_DEBUG === '1' ? '' : ' (set V2A_DEBUG=1 for details)');

/**
 * An unexpected error as one line: sharp's own load failure (an install without its optional
 * platform package, `npm install --omit=optional`) says what to do; any other message keeps its
 * first line (V2A_DEBUG=1 prints the rest with the stack).
 */
export function internalMessage(text: string): string {
  if (/Could not load the "sharp" module/.test(text)) {
    return `sharp's native library for this platform (${process.platform}-${process.arch}) is not installed: reinstall v2a with optional dependencies (npm install --include=optional)${debugHint()}`;
  }
  return `internal error: ${text.split('\n', 1)[0]}${debugHint()}`;
}

/** Prints `v2a: <message>` (no stack trace unless V2A_DEBUG=1) and returns the exit code. */
export function reportError(err: unknown): number {
  if (err instanceof CommanderError) {
    // commander has already written its message (or the help / version text).
    return err.exitCode === 0 ? EXIT.ok : EXIT.usage;
  }
  if (err instanceof Reported) return err.exitCode;
  debugStack(err);
  let code: number = EXIT.internal;
  let lines: string[];
  // An internal error with a cause is a bug caught by the render job: show the cause.
  if (err instanceof V2aError && (err.code !== 'internal-error' || err.cause === undefined)) {
    code = err.info.exit;
    // One line per parameter (or setting) at fault; every other error is one line.
    lines = (err.code === 'invalid-parameters' || err.code === 'usage') && err.errors ? err.errors.map((e) => e.message) : [err.message];
  } else {
    const cause = err instanceof V2aError && err.cause !== undefined ? err.cause : err;
    lines = [internalMessage(cause instanceof Error ? cause.message : String(cause))];
  }
  process.stderr.write(lines.map((line) => `v2a: ${printable(line)}\n`).join(''));
  return code;
}

/**
 * `text` with its control characters escaped (\u001b, \n): a file name or value from the command
 * line may hold an escape sequence (a terminal title, colours) or a line break, and messages are
 * one line each, shown as typed.
 */
export function printable(text: string): string {
  return text.replace(/[\u0000-\u001f\u007f-\u009f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/**
 * `v2a <file>` renders (render is the default command), so a mistyped command would read as a
 * file name: a first word that is no command, no existing file and does not look like a path
 * (no dot, no slash) is reported as an unknown command.
 */
function unknownCommand(program: Command, argv: readonly string[]): string | undefined {
  const first = argv[2];
  if (first === undefined || first.startsWith('-') || /[./\\]/.test(first)) return undefined;
  if (program.commands.some((c) => c.name() === first || c.aliases().includes(first))) return undefined;
  return existsSync(first) ? undefined : first;
}

/** ` (Did you mean play?)` for a name a typo away from a command's (`similar`). */
function didYouMean(program: Command, name: string): string {
  const near = similar(name, program.commands.flatMap((c) => [c.name(), ...c.aliases()]));
  return near.length ? ` (Did you mean ${near.join(' or ')}?)` : '';
}

/**
 * The candidates a typo away from `name`, sorted: the fewest edits (a swap of neighbours is one),
 * at most one per four letters of the longer word, and at least one. Commander's own rule (up to
 * three edits that keep 40%) guessed --saturation for --duration and --dither for --title.
 */
function similar(name: string, candidates: readonly string[]): string[] {
  let best = Infinity;
  let near: string[] = [];
  for (const candidate of new Set(candidates)) {
    const d = editDistance(name, candidate);
    if (d > Math.max(1, Math.floor(Math.max(name.length, candidate.length) / 4)) || d > best) continue;
    near = d < best ? [candidate] : [...near, candidate];
    best = d;
  }
  return near.sort();
}

/** Parses `argv` (process.argv form) and runs the chosen command; resolves to the exit code. */
export async function run(argv: readonly string[], registrars: readonly CommandRegistrar[]): Promise<number> {
  try {
    const program = createProgram(registrars);
    if (argv.length <= 2) {
      // No arguments: the usage line, as for any usage error (the whole help is v2a --help's).
      process.stderr.write(`Usage: ${program.name()} ${program.usage()}\nv2a: no input: give an image file, - for standard input, or a command ${HELP_HINT}\n`);
      return EXIT.usage;
    }
    const unknown = unknownCommand(program, argv);
    if (unknown !== undefined) {
      process.stderr.write(`v2a: unknown command '${printable(unknown)}' (and no such file)${didYouMean(program, unknown)} ${HELP_HINT}\n`);
      return EXIT.usage;
    }
    const height = heightAsHelp(argv);
    if (height !== undefined) {
      process.stderr.write(`v2a: -h is --help; the height in rows is -H (-H ${height}) ${HELP_HINT}\n`);
      return EXIT.usage;
    }
    await program.parseAsync(switchValues(argv, valueFlags(program)));
    return EXIT.ok;
  } catch (err) {
    return reportError(err);
  }
}
