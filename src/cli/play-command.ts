/**
 * `v2a play <file | ->`: a video (through a system ffmpeg), an animated GIF/WebP or an image,
 * played in place on the terminal at its own frame rate; `render --animate` is the same.
 * Piped or with -o: NDJSON of json-compact, one object per frame.
 */
import type { Command } from 'commander';
import { addParamOptions } from './flags.js';
import { VIDEO_FORMATS_IN_WORDS } from './media-type.js';
import { addViewOptions, viewParams } from './render-command.js';
import { NDJSON_EXTENSIONS, NDJSON_FRAMES } from './ndjson.js';
import { once, outputFile, readLimits } from './terminal.js';

interface PlayOpts {
  output?: string;
  loop?: string;
}

async function playAction(file: string, cmd: Command): Promise<void> {
  const opts = cmd.opts<PlayOpts>();
  const output = outputFile(opts.output, file);
  const { params, fit, flags } = viewParams(cmd, output);
  const limits = readLimits(process.env, true);
  const { animate } = await import('./animate.js');
  return animate({ file, params, fit, output, loop: opts.loop, limits, colors: flags.colors });
}

export function registerPlay(program: Command): void {
  const cmd = program
    .command('play')
    .description(`Play a video (${VIDEO_FORMATS_IN_WORDS}; needs ffmpeg on the PATH) or an animated GIF/WebP in the terminal.`)
    .argument('<file>', 'video or animated image, or - to read it from standard input')
    .option('-o, --output <file>', `write NDJSON of json-compact (one object per frame) to <file> instead of playing (${NDJSON_EXTENSIONS.map((e) => `.${e}`).join(', ')} or no extension; -: standard output, as without -o)`, once('-o/--output'))
    .option('--loop <n>', 'play <n> times on a terminal, 0 = until q or Ctrl-C (default 1)', once('--loop'));
  addViewOptions(cmd);
  addParamOptions(cmd, {
    columns: 'the same as -w; when neither is given, the clip fits the terminal (piped without COLUMNS, or with -o: 120)',
    format: 'piped or with -o: json-compact only, as NDJSON',
  });
  cmd.addHelpText('after', `
On a terminal the frames play in place at the clip's frame rate (frames that render too late are dropped, so the clip keeps its speed), fitted to the terminal's width and height, and refitted when it is resized, unless -w/-H/--size/--columns say otherwise. q stops; Ctrl-C stops and restores the cursor and colours (exit 130); Ctrl-Z suspends (fg resumes); in the background (&, or bg) it plays on and leaves the keyboard to the shell until fg. A terminal that cannot move the cursor (TERM=dumb) is refused: use -o. Piped or with -o: ${NDJSON_FRAMES}; the file is written once the first frame has rendered. The input is a file, a pipe or FIFO (<(...)) or -; what is read into memory is at most V2A_MAX_IMAGE_BYTES (a video file is streamed by ffmpeg from disk instead). Video is decoded by ffmpeg and ffprobe from the PATH (Debian: apt-get install ffmpeg); without them v2a says so and exits 3.

Examples:
  v2a play clip.mp4
  v2a play clip.webm --loop 0 --charset blocks
  v2a play clip.mp4 --colors 256 --size 80x24
  v2a play cat.gif > frames.ndjson
`);
  cmd.action((file: string, _opts: unknown, command: Command) => playAction(file, command));
}
