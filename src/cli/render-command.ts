/**
 * `v2a render <file | ->`: one image to character art on standard output or into `-o <file>`.
 * Declares its flags from PARAMS (flags.ts); sharp and the renderer are imported only when the
 * command runs.
 */
import { statSync } from 'node:fs';
import { extname } from 'node:path';
import type { Command } from 'commander';
import { DEFAULTS, FORMATS, type Format, type RenderParams } from '../core/params/definitions.js';
import { FORMAT_INFO, fileSuffix } from '../core/format/info.js';
import { MAX_ROWS, MIN_COLUMNS } from '../core/pipeline/geometry.js';
import type { Decoder, FitBox } from '../core/job.js';
import { addParamOptions, collectParams } from './flags.js';
import { printable, reportError } from './program.js';
import { EXIT, Reported, aboutFile, once, outputFile, readHead, readInput, readLimits, withReadFd, stdoutIsTty, usageError, writeFile, writeStdout, type InputLimits } from './terminal.js';
import { COLORS_FLAG, COLORS_HELP, SIZE_HELP, colorMode, resolveBox, resolveColor, type ViewFlags } from './view.js';
import { FFMPEG_STILLS_IN_WORDS, ffmpegStill, isVideo, refuseUnknown } from './media-type.js';
import { fitDecoder } from './box-fit.js';
import { NDJSON_FRAMES } from './ndjson.js';

/** Extensions that name a format besides FORMAT_INFO's own: `.htm`, and `.ansi` beside `.ans`. */
const EXTENSION_ALIASES: Readonly<Record<string, Format>> = { htm: 'html', ansi: 'ansi' };

/** Formats written to files with this extension (no dot, any case), in FORMATS order: `json` -> [json, json-compact]. */
export function formatsForExtension(ext: string): Format[] {
  const e = ext.toLowerCase();
  const out = FORMATS.filter((f) => FORMAT_INFO[f].extension === e);
  const alias = EXTENSION_ALIASES[e];
  if (alias && !out.includes(alias)) out.push(alias);
  return out;
}

/** `.txt text, .ans ansi, ..., .compact.json json-compact` from FORMAT_INFO and fileSuffix, for help and messages. */
export function extensionList(): string {
  const bySuffix = new Map<string, Format[]>();
  for (const f of FORMATS) {
    const suffix = fileSuffix(f);
    bySuffix.set(suffix, [...(bySuffix.get(suffix) ?? []), f]);
  }
  for (const [ext, f] of Object.entries(EXTENSION_ALIASES)) bySuffix.set(`.${ext}`, [f]);
  return [...bySuffix].map(([suffix, fs]) => `${suffix} ${fs[0]}`).join(', ');
}

/** The output file's extension without the dot, or '' (none, or no output file). */
export function outputExtension(output: string | undefined): string {
  return output ? extname(output).slice(1) : '';
}

/**
 * The output format: `--format` if given (an error if the output file's extension names another
 * format); else the extension of `-o` (`.json` is json, `.compact.json` json-compact); else `ansi`
 * when `--color` is on; else the parameter default (text).
 */
export function resolveFormat(params: Partial<RenderParams>, output: string | undefined): Format {
  const ext = outputExtension(output);
  // `x.compact.json` (as the studio names its downloads): json-compact, unless --format json.
  const compact = output?.toLowerCase().endsWith(fileSuffix('json-compact'));
  const candidates = compact ? ['json-compact', 'json'] as Format[] : ext ? formatsForExtension(ext) : [];
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

/** Text ends with a newline; bytes (png) are written as they are. */
function withNewline(body: string | Uint8Array): string | Uint8Array {
  if (typeof body !== 'string') return body;
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
    .option('-w, --width <n>', 'width in characters (the same as --columns); with -H, a box to fit in', once('-w/--width'))
    .option('-H, --height <n>', `at most <n> rows (1 to ${MAX_ROWS}): the image is fitted, its aspect kept`, once('-H/--height'))
    .option('--size <WxH>', SIZE_HELP, once('--size'))
    // Checked as it is parsed: before commander's own errors (`--colors a.png`: the file missing).
    .option(COLORS_FLAG, `colour depth: ${COLORS_HELP}`, (value: string, previous: unknown) => {
      once('-c/--colors')(value, previous);
      colorMode(value);
      return value;
    });
}

/** Parameters from flags, colour and size resolved for the place the art goes. */
export function viewParams(cmd: Command, output: string | undefined): { params: Partial<RenderParams>; fit: FitBox | undefined; flags: ViewFlags } {
  const flags = cmd.opts<ViewFlags>();
  const coloured = resolveColor(collectParams(cmd), flags, output);
  const { params, fit } = resolveBox(coloured, flags, output);
  return { params, fit, flags };
}

/**
 * `v2a a.png b.png`: each file in turn, as chafa and viu do; one that fails is reported, naming
 * it, and the next goes on; the exit code is the highest of them. One file: its error as it is.
 */
async function renderAction(files: readonly string[], cmd: Command): Promise<void> {
  const opts = cmd.opts<RenderOpts>();
  if (files.length > 1) {
    if (opts.output !== undefined && opts.output !== '-') throw usageError(`-o/--output writes one file, and ${files.length} inputs were given: render them one at a time`);
    if (files.filter((f) => f === '-').length > 1) throw usageError('- (standard input) was given more than once');
  }
  const output = outputFile(opts.output, files[0]!);
  const { params, fit, flags } = viewParams(cmd, output);
  // Text, ANSI and JSON (a document a line) follow one another on a stream; these do not.
  if (files.length > 1 && !opts.animate && params.format && FORMAT_INFO[params.format].document) {
    throw usageError(`--format ${params.format} makes one whole document per image, and ${files.length} inputs were given: several in one stream make no valid file; render them one at a time, each with -o <name>.${FORMAT_INFO[params.format].extension}`);
  }
  const limits = readLimits(process.env, true);
  if (opts.loop !== undefined && !opts.animate) throw usageError('--loop only applies with --animate');
  // Several images on a terminal: a blank line between them tells where one ends (a pipe gets the art alone).
  const separate = files.length > 1 && output === undefined && stdoutIsTty();
  const one = opts.animate ? (await import('./animate.js')).animator({ params, fit, output, loop: opts.loop, limits, colors: flags.colors }) : renderImage(params, fit, flags, output, limits, separate);
  if (files.length === 1) return one(files[0]!);
  let worst: number = EXIT.ok;
  for (const file of files) {
    try {
      await one(file);
    } catch (err) {
      worst = Math.max(worst, reportError(err));
    }
  }
  if (worst !== EXIT.ok) throw new Reported(worst);
}

/** A palette depth given by hand (-c 256, -c 16) with a format that has no palette: refused, not ignored. */
export function refuseDepthFor(format: Format, params: Partial<RenderParams>, flags: Pick<ViewFlags, 'colors'>, what: string = format): void {
  if (flags.colors !== undefined && params.colorDepth !== undefined && params.colorDepth !== 'truecolor' && format !== 'ansi') {
    throw usageError(`--colors ${params.colorDepth} applies to ansi output, not ${what}`);
  }
}

/** Renders one image file to the output: the format and flags checked once, before any file is read. */
function renderImage(params: Partial<RenderParams>, fit: FitBox | undefined, flags: ViewFlags, output: string | undefined, limits: InputLimits, separate = false): (file: string) => Promise<void> {
  const format = resolveFormat(params, output);
  if (format === 'png' && !output && process.stdout.isTTY) {
    throw usageError('png is binary and standard output is a terminal: write it with -o art.png, or pipe it');
  }
  refuseDepthFor(format, params, flags);
  // Columns and format go to the job only when the user set them or they differ from the
  // defaults, so that the json output's `explicit` lists what the user (or the terminal) chose.
  const renderParams: Partial<RenderParams> = { ...params };
  // A depth detected from the terminal only concerns ansi.
  if (format !== 'ansi' && flags.colors === undefined) delete renderParams.colorDepth;
  if (params.format !== undefined || format !== DEFAULTS.format) renderParams.format = format;
  let shown = false;
  return async (file) => {
    try {
      await renderFile(file, renderParams, fit, output, limits, separate && shown ? '\n' : '');
      shown = true;
    } catch (err) {
      throw aboutFile(file, err);
    }
  };
}

/** The warning for a file decoded only as far as it goes (render, and play once it stops). */
export const damagedNote = (file: string, what: 'image' | 'video' = 'image'): string => `v2a: ${printable(file === '-' ? 'standard input' : file)}: the ${what} is truncated or damaged: showing the part that could be decoded\n`;

/**
 * The render job and sharp's decoders (renderer.ts), loaded once an input is known to need them;
 * a failure is seen where the promise is awaited, not as an unhandled rejection meanwhile.
 */
export function loadRenderer(): Promise<typeof import('./renderer.js')> {
  const job = import('./renderer.js');
  job.catch(() => undefined);
  return job;
}

/** `before`: written to standard output ahead of the art (a separator). */
async function renderFile(file: string, renderParams: Partial<RenderParams>, fit: FitBox | undefined, output: string | undefined, limits: InputLimits, before = ''): Promise<void> {
  // Sharp and the renderer load once the first bytes say this is an image, while the rest is read.
  let renderer: Promise<typeof import('./renderer.js')> | undefined;
  // A video file is drawn as one of its frames (a file manager's preview of a clip), decoded by
  // ffmpeg from the file itself: nothing of it is read here. Piped in, it is told to use play.
  // Only a regular file is looked at first (readHead reads at offset 0, which a pipe or FIFO,
  // `<(...)`, refuses); a piped video is told to use play by readInput's check below.
  // So is a still of a format only ffmpeg reads (BMP, ICO, PNM), from a file.
  const head = file !== '-' && (statSync(file, { throwIfNoEntry: false })?.isFile() ?? false) ? withReadFd(file, readHead) : undefined;
  const still = head && ffmpegStill(head);
  const video = head !== undefined && (isVideo(head) || still !== undefined);
  const bytes = video ? new Uint8Array(0) : await readInput(file, limits.maxBytes, (head) => {
    refuseUnknown(head, false, (v) => (v ? 'This is a video: play it with v2a play -, or render it from a file.'
      : ffmpegStill(head) ? `${FFMPEG_STILLS_IN_WORDS} images are read through ffmpeg from a file: give its name instead of a pipe.` : ''));
    renderer = loadRenderer();
  });
  const { decodeImage, runJob } = await (renderer ?? loadRenderer());
  // A file cut short (still downloading, a broken copy) shows what it holds, as chafa shows it,
  // with a warning; the server refuses one instead.
  // ffmpeg's code (child_process) loads only for a video, as animate.js does for --animate.
  const decoder: Decoder = video ? async (_b, request) => (await import('./video-source.js')).videoStill({ path: file, ...(still ? { demuxer: still } : {}) }, request) : async (b, request) => {
    const image = await decodeImage(b, { ...request, partial: true });
    if (image.damaged) process.stderr.write(damagedNote(file));
    return image;
  };
  const { output: art } = await runJob({ kind: 'bytes', bytes }, renderParams, {
    decoder: fitDecoder(decoder, renderParams, fit),
    limits,
    fit: fit ?? { columns: DEFAULTS.columns },
  });
  const body = withNewline(art.body);
  if (output) writeFile(output, body);
  else await writeStdout(before && typeof body === 'string' ? before + body : body);
}

/** The manual part of `v2a render --help` (the README's command-line section says the same). */
const RENDER_HELP = `Render is the default command: v2a photo.jpg is v2a render photo.jpg. A video file is drawn as one frame, a tenth of the way in, decoded by ffmpeg (--animate or v2a play plays it). ${FFMPEG_STILLS_IN_WORDS} images, which sharp does not read, are drawn by render through ffmpeg too, from a file. Several files (v2a *.png) are rendered one after the other (on a terminal, a blank line between them): one that fails is reported, naming it, the others are rendered, and the exit code is the highest of theirs; -o takes one input.

Size: --columns or -w as given, never adjusted. --size WxH (or -w with -H) fits the image in a box of W columns and H rows, its aspect kept; -H alone bounds the rows (the width follows, up to the terminal's, unless written with -o). An image too tall for the box even at ${MIN_COLUMNS} columns, the fewest, is drawn at ${MIN_COLUMNS} columns, centred between blank margins, in the box's rows: never art outside the box. A box narrower than ${MIN_COLUMNS} columns, from any of them or the terminal, is refused (exit 2). Without any of them the art fits a box, its width and its height: piped, fzf's preview window (FZF_PREVIEW_COLUMNS, FZF_PREVIEW_LINES) when set; else COLUMNS and LINES when set, also piped; else the terminal. On a terminal one line is left for the prompt; piped, every line is the art's (a previewer's pane has no prompt). Piped without any of them, or written with -o: ${DEFAULTS.columns} columns. A default is narrowed if an extremely tall image would need more than ${MAX_ROWS} rows. --cell-aspect sets the width/height of your terminal's cell (0.5 by default; 0.45 suits narrow fonts).

Colour: FORCE_COLOR, when set, decides, also piped and before NO_COLOR (1: 16 colours, 2: 256, 3: truecolor, 0: none). Otherwise, on a terminal that supports colour (COLORTERM, TERM), the art is ansi in colour unless --no-color, --format, NO_COLOR or NODE_DISABLE_COLORS (set, not empty), or TERM=dumb say otherwise; piped it is text, unless CLICOLOR_FORCE is set and not 0. -c/--colors truecolor|256|16 turns colour on at that depth (256 and 16 pick the palette colour nearest in OKLab; --color-dither diffuses the error), none turns it off. Otherwise the depth is detected, on a terminal and piped alike, from COLORTERM=truecolor|24bit (and truecolor TERMs and TERM_PROGRAMs: kitty, ghostty, WezTerm, alacritty, foot, iTerm), TERM=*-256color, other TERM values (16); --color with NO_COLOR or TERM=dumb keeps it; with none of them, 16.

Output format: --format wins; otherwise the extension of -o:
  ${extensionList()}
(.compact.json, as the studio names it; a --format that contradicts the extension is an error). Without either: ansi when colour is on, else ${DEFAULTS.format}.

Glyphs: --charset picks a ramp; --glyphs ' .:oO@' uses your own (each glyph must be measured from the reference font: printable ASCII, the blocks glyphs, Braille; the space is always the ground).

Animation (--animate, or v2a play): every frame of an animated GIF/WebP or of a video (through ffmpeg) plays in place on a terminal at its own pace (--loop times; Ctrl-C stops and restores the terminal); piped or with -o, ${NDJSON_FRAMES}. Frames share the Bayesian temporal filter (see --motion-sensitivity).

Examples:
  v2a photo.jpg                            fit the terminal, in colour if it has colour
  v2a photo.jpg -w 100                     100 columns
  v2a photo.jpg --size 80x24               fit 80x24, aspect kept
  v2a photo.jpg -H 20                      20 rows
  v2a photo.jpg --colors 256               xterm 256-colour palette
  v2a photo.jpg -c 16 --color-dither       16 colours, dithered
  NO_COLOR=1 v2a photo.jpg                 no colour
  COLUMNS=60 v2a photo.jpg | less -R       60 columns into a pager
  v2a photo.jpg --glyphs ' .oO@'           your own ramp
  v2a photo.jpg --cell-aspect 0.45         a narrow terminal font
  v2a photo.jpg -o photo.svg --color       a file; the extension picks the format
  curl -s https://example.com/cat.png | v2a - --charset blocks
  v2a anim.gif --animate --loop 0
  v2a clip.mp4 --animate > frames.ndjson`;

export function registerRender(program: Command): void {
  const cmd = program
    .command('render', { isDefault: true })
    .description(`Render an image (JPEG, PNG, WebP, GIF, AVIF, TIFF; ${FFMPEG_STILLS_IN_WORDS} through ffmpeg) as character art (the default command).`)
    .argument('<file...>', 'image files, rendered one after the other, or - to read one from standard input')
    .option('-o, --output <file>', `write to <file> instead of standard output (-: standard output); its extension chooses the format (${extensionList()}); one input only`, once('-o/--output'))
    .option('--animate', 'render every frame of an animated GIF/WebP or a video (needs ffmpeg): played in place on a terminal, NDJSON of json-compact otherwise')
    .option('--loop <n>', 'with --animate on a terminal: play <n> times, 0 = until q or Ctrl-C (default 1)', once('--loop'));
  addViewOptions(cmd);
  addParamOptions(cmd, {
    columns: 'the same as -w; when neither is given, the art fits the terminal (see Size below)',
    format: 'an -o file\'s extension chooses it first',
    color: 'see Colour below',
  });
  cmd.addHelpText('after', `\n${RENDER_HELP}`);
  cmd.action((files: string[], _opts: unknown, command: Command) => renderAction(files, command));
}
