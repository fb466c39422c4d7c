/**
 * `v2a render --animate`: every frame of an animated GIF or WebP through one FrameRenderer (the
 * Bayesian temporal filter, glyph hysteresis, one Director tuning and codebook for the clip).
 *
 * - Standard output a terminal and no -o: played in place (cursor hidden, cursor home before each
 *   frame, frame delays honoured, `--loop` times, 0 = until Ctrl-C), as text or, with --color or
 *   --format ansi, as ansi. The terminal is restored on the end, on errors and on SIGINT/SIGTERM.
 * - Otherwise (piped, or -o): NDJSON, one json-compact object per line per frame. --format is
 *   refused unless it is json-compact: silently writing something else than asked is worse.
 *
 * A still image is one frame.
 */
import { closeSync, openSync, writeSync } from 'node:fs';
import type { FrameJobResult } from '../core/job.js';
import { DEFAULTS, type Format, type RenderParams } from '../core/params/definitions.js';
import { bodyText } from '../core/format/index.js';
import { formatsForExtension, outputExtension } from './render-command.js';
import {
  ESC, EXIT, clampColumns, ioError, readInput, terminalSize, usageError, writeStdout, type InputLimits,
} from './terminal.js';

export interface AnimateOptions {
  readonly file: string;
  readonly params: Partial<RenderParams>;
  readonly output: string | undefined;
  /** `--loop` as typed, or undefined (1). */
  readonly loop: string | undefined;
  readonly limits: InputLimits;
}

/** Shortest time a frame stays on screen while playing: a 0 ms delay must not spin the CPU. */
const MIN_FRAME_MS = 10;
const MAX_LOOP = 1_000_000;

function parseLoop(raw: string | undefined): number {
  if (raw === undefined) return 1;
  const t = raw.trim();
  const n = /^\d{1,7}$/.test(t) ? Number(t) : NaN;
  if (!(Number.isInteger(n) && n >= 0 && n <= MAX_LOOP)) {
    throw usageError(`loop must be an integer from 0 (forever) to ${MAX_LOOP} (got ${JSON.stringify(raw)})`);
  }
  return n;
}

type Mode = { kind: 'play'; format: 'text' | 'ansi'; loop: number } | { kind: 'ndjson'; output: string | undefined };

function chooseMode(opts: AnimateOptions): Mode {
  const { params, output } = opts;
  const term = output === undefined ? terminalSize() : undefined;
  if (term) {
    const format: Format = params.format ?? (params.color ? 'ansi' : DEFAULTS.format);
    if (format !== 'text' && format !== 'ansi') {
      throw usageError(`--animate plays text or ansi on a terminal, not ${format}: pipe the output or use -o for NDJSON of json-compact`);
    }
    return { kind: 'play', format, loop: parseLoop(opts.loop) };
  }
  if (params.format !== undefined && params.format !== 'json-compact') {
    throw usageError(`--animate writes NDJSON of json-compact (one object per frame) when not playing on a terminal; --format ${params.format} is not supported`);
  }
  const ext = outputExtension(output);
  const named = ext ? formatsForExtension(ext) : [];
  if (named.length && !named.includes('json-compact')) {
    throw usageError(`--animate writes NDJSON of json-compact; the output file extension .${ext} (${named.join(' or ')}) does not fit: use .ndjson or .json`);
  }
  parseLoop(opts.loop); // validated even though only playback uses it
  return { kind: 'ndjson', output };
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export async function animate(opts: AnimateOptions): Promise<void> {
  const mode = chooseMode(opts);
  const modules = Promise.all([import('../node/index.js'), import('../core/job.js')]);
  modules.catch(() => undefined);
  const bytes = await readInput(opts.file, opts.limits.maxBytes);
  const [{ decodeFrames }, { runFrameJob }] = await modules;

  // Without --columns: fit the terminal (full width, no taller than its height minus the cursor's
  // line) when playing, else the default.
  const term = mode.kind === 'play' ? terminalSize() : undefined;
  const fit = term ? { columns: clampColumns(term.columns), rows: Math.max(1, term.rows - 1) } : { columns: DEFAULTS.columns };
  const frames = runFrameJob(bytes, opts.params, {
    frameDecoder: decodeFrames,
    limits: opts.limits,
    fit,
    format: mode.kind === 'play' ? mode.format : 'json-compact',
  });

  if (mode.kind === 'ndjson') {
    let fd: number | undefined;
    if (mode.output !== undefined) {
      try {
        fd = openSync(mode.output, 'w');
      } catch (err) {
        throw ioError('write', mode.output, err);
      }
    }
    try {
      for await (const { output } of frames) {
        const line = bodyText(output) + '\n';
        if (fd === undefined) await writeStdout(line);
        else {
          try {
            writeSync(fd, line);
          } catch (err) {
            throw ioError('write', mode.output!, err);
          }
        }
      }
    } finally {
      if (fd !== undefined) closeSync(fd);
    }
    return;
  }

  await play(frames, mode.loop);
}

/** Plays frames in place; the first pass renders them as they decode, later passes replay. */
async function play(frames: AsyncIterable<FrameJobResult>, loop: number): Promise<void> {
  let started = false;
  const restore = () => {
    if (started) writeSync(1, ESC.reset + ESC.showCursor);
    started = false;
  };
  const onSignal = (signal: NodeJS.Signals) => {
    restore();
    process.exit(signal === 'SIGINT' ? EXIT.interrupted : 128 + 15);
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  try {
    const kept: { body: string; delay: number }[] = [];
    let next = performance.now();
    const show = async (body: string, delay: number) => {
      const wait = next - performance.now();
      if (wait > 0) await sleep(wait);
      if (!started) {
        started = true;
        await writeStdout(ESC.hideCursor + ESC.clearScreen);
      }
      await writeStdout(ESC.home + body);
      next = Math.max(next + Math.max(delay, MIN_FRAME_MS), performance.now());
    };
    let count = 0;
    for await (const { output, frame } of frames) {
      count = frame.count;
      const body = bodyText(output);
      if (loop !== 1) kept.push({ body, delay: frame.delayMs });
      await show(body, frame.delayMs);
    }
    // A still image (or a one-frame animation) has nothing to replay.
    if (count > 1) {
      for (let pass = 1; loop === 0 || pass < loop; pass++) {
        for (const { body, delay } of kept) await show(body, delay);
      }
    }
  } finally {
    restore();
    process.removeListener('SIGINT', onSignal);
    process.removeListener('SIGTERM', onSignal);
  }
}
