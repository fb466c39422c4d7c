/**
 * `v2a render <file | ->`: one image to character art on standard output or into `-o <file>`.
 * Declares its flags from PARAMS (flags.ts); sharp and the renderer are imported only when the
 * command runs.
 */
import { extname } from 'node:path';
import type { Command } from 'commander';
import { DEFAULTS, FORMATS, type Format, type RenderParams } from '../core/params/definitions.js';
import { FORMAT_INFO } from '../core/format/info.js';
import { MAX_ROWS } from '../core/pipeline/geometry.js';
import type { FitBox } from '../core/job.js';
import { addParamOptions, collectParams } from './flags.js';
import { readInput, readLimits, usageError, writeFile, writeStdout } from './terminal.js';
import { COLORS_FLAG, COLORS_HELP, resolveBox, resolveColor, type ViewFlags } from './view.js';

/** Extensions that name a format besides FORMAT_INFO's own (`.htm`). */
const EXTENSION_ALIASES: Readonly<Record<string, Format>> = { htm: 'html' };

/** Formats written to files with this extension (no dot, any case), in FORMATS order: `json` -> [json, json-compact]. */
export function formatsForExtension(ext: string): Format[] {
  const e = ext.toLowerCase();
  const out = FORMATS.filter((f) => FORMAT_INFO[f].extension === e);
  const alias = EXTENSION_ALIASES[e];
  if (alias && !out.includes(alias)) out.push(alias);
  return out;
}

/** `.txt text, .ans ansi, ...` from FORMAT_INFO, for help and messages. */
export function extensionList(): string {
  const byExt = new Map<string, Format[]>();
  for (const f of FORMATS) {
    const ext = FORMAT_INFO[f].extension;
    byExt.set(ext, [...(byExt.get(ext) ?? []), f]);
  }
  for (const [ext, f] of Object.entries(EXTENSION_ALIASES)) byExt.set(ext, [f]);
  return [...byExt].map(([ext, fs]) => `.${ext} ${fs[0]}`).join(', ');
}

/** The output file's extension without the dot, or '' (none, or no output file). */
export function outputExtension(output: string | undefined): string {
  return output ? extname(output).slice(1) : '';
}

/**
 * The output format: `--format` if given (an error if the output file's extension names another
 * format); else the extension of `-o` (`.json` is json; json-compact needs --format); else `ansi`
 * when `--color` is on; else the parameter default (text).
 */
export function resolveFormat(params: Partial<RenderParams>, output: string | undefined): Format {
  const ext = outputExtension(output);
  const candidates = ext ? formatsForExtension(ext) : [];
  const explicit = params.format;
  if (explicit) {
    if (candidates.length && !candidates.includes(explicit)) {
      throw usageError(
        `--format ${explicit} conflicts with the output file extension .${ext} (${candidates.join(' or ')}): ` +
          `drop --format, or name the file *.${FORMAT_INFO[explicit].extension}`,
      );
    }
    return explicit;
  }
  if (candidates.length) return candidates[0]!;
  if (ext) {
    throw usageError(`cannot tell the output format from the extension .${ext}: give --format, or use one of ${extensionList()}`);
  }
  return params.color ? 'ansi' : DEFAULTS.format;
}

function withNewline(body: string): string {
  return body.endsWith('\n') ? body : body + '\n';
}

interface RenderOpts extends ViewFlags {
  output?: string;
  animate?: boolean;
  loop?: string;
}

/** The flags that say where the art goes and how it looks there (view.ts), for render and play. */
export function addViewOptions(cmd: Command): Command {
  return cmd
    .option('-w, --width <n>', 'width in characters (the same as --columns); with -H, a box to fit in')
    .option('-H, --height <n>', `at most <n> rows (1 to ${MAX_ROWS}): the image is fitted, its aspect kept`)
    .option('--size <WxH>', 'fit in a box of W columns and H rows, aspect kept (also Wx or xH)')
    .option(COLORS_FLAG, `colour depth: ${COLORS_HELP}`);
}

/** Parameters from flags, colour and size resolved for the place the art goes. */
export function viewParams(cmd: Command, output: string | undefined): { params: Partial<RenderParams>; fit: FitBox | undefined; flags: ViewFlags } {
  const flags = cmd.opts<ViewFlags>();
  const coloured = resolveColor(collectParams(cmd), flags, output);
  const { params, fit } = resolveBox(coloured, flags, output);
  return { params, fit, flags };
}

async function renderAction(file: string, cmd: Command): Promise<void> {
  const opts = cmd.opts<RenderOpts>();
  const { params, fit, flags } = viewParams(cmd, opts.output);
  const limits = readLimits();
  if (opts.loop !== undefined && !opts.animate) throw usageError('--loop only applies with --animate');
  if (opts.animate) {
    const { animate } = await import('./animate.js');
    return animate({ file, params, fit, output: opts.output, loop: opts.loop, limits });
  }
  const format = resolveFormat(params, opts.output);
  if (flags.colors !== undefined && params.colorDepth !== undefined && params.colorDepth !== 'truecolor' && format !== 'ansi') {
    throw usageError(`--colors ${params.colorDepth} applies to ansi output, not ${format}`);
  }
  // Columns and format go to the job only when the user set them or they differ from the
  // defaults, so that the json output's `explicit` lists what the user (or the terminal) chose.
  const renderParams: Partial<RenderParams> = { ...params };
  if (params.format !== undefined || format !== DEFAULTS.format) renderParams.format = format;
  // The file is read while sharp and the renderer load.
  const modules = Promise.all([import('../node/index.js'), import('../core/job.js')]);
  modules.catch(() => undefined);
  const bytes = await readInput(file, limits.maxBytes);
  const [{ decodeImage }, { runJob }] = await modules;
  const { output } = await runJob({ kind: 'bytes', bytes }, renderParams, {
    decoder: decodeImage,
    limits,
    fit: fit ?? { columns: DEFAULTS.columns },
  });
  const body = withNewline(output.body);
  if (opts.output) writeFile(opts.output, body);
  else await writeStdout(body);
}

export function registerRender(program: Command): void {
  const cmd = program
    .command('render', { isDefault: true })
    .description('Render an image (JPEG, PNG, WebP, GIF, AVIF, TIFF) as character art.')
    .argument('<file>', "image file, or - to read it from standard input")
    .option('-o, --output <file>', `write to <file> instead of standard output; its extension chooses the format (${extensionList()})`)
    .option('--animate', 'render every frame of an animated GIF or WebP: played in place on a terminal, NDJSON of json-compact otherwise')
    .option('--loop <n>', 'with --animate on a terminal: play <n> times, 0 = until Ctrl-C (default 1)');
  addViewOptions(cmd);
  addParamOptions(cmd, {
    columns: 'when not given: the terminal width (clamped to the range) if standard output is a terminal, else the default',
    format: `when not given: from the -o extension, else ansi if --color is on, else ${DEFAULTS.format}`,
  });
  cmd.addHelpText(
    'after',
    `
Output format: --format wins; otherwise the extension of -o:
  ${extensionList()}
(json-compact is chosen with --format only; a --format that contradicts the extension is an
error). Without either: ${DEFAULTS.format}, or ansi (24-bit colour) when --color is on, whether
standard output is a terminal or a pipe.

Columns: --columns as given, never adjusted. Without it: the terminal width when the art is
written to a terminal (no -o), else ${DEFAULTS.columns}; a default is narrowed if an extremely tall image
would need more than ${MAX_ROWS} rows.

Animation (--animate): on a terminal the frames play in place (cursor hidden, frame delays
honoured, --loop times; Ctrl-C stops and restores the terminal) as text, or ansi with --color;
without --columns they fit the terminal's width and height. Otherwise (piped, or -o) one
json-compact object per line (NDJSON) per frame; --format other than json-compact is then an
error. Frames share the Bayesian temporal filter (see --motion-sensitivity).

Examples:
  v2a render photo.jpg
  v2a render photo.jpg --color --columns 100
  v2a render photo.jpg -o photo.svg --color
  curl -s https://example.com/cat.png | v2a render - --charset blocks
  v2a render anim.gif --animate --loop 0
  v2a render anim.gif --animate > frames.ndjson
`,
  );
  cmd.action((file: string, _opts: unknown, command: Command) => renderAction(file, command));
}
