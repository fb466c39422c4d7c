/**
 * `v2a play` and `v2a render --animate`: every frame of an animated GIF or WebP (decoded by sharp)
 * or of a video (mp4, webm, mkv, mov, avi, ogg, mpeg; decoded by a system ffmpeg, video-source.ts)
 * through one FrameRenderer (the Bayesian temporal filter, glyph hysteresis, one Director tuning
 * and codebook for the clip). Video plays at the clip's frame rate, dropping frames that render
 * too late.
 *
 * - Standard output a terminal and no -o: played in place (cursor hidden, cursor home before each
 *   frame, frame delays honoured, `--loop` times, 0 = until Ctrl-C), as text or, with --color or
 *   --format ansi, as ansi. The terminal is restored on the end, on errors and on SIGINT/SIGTERM.
 * - Otherwise (piped, or -o): NDJSON, one json-compact object per line per frame. --format is
 *   refused unless it is json-compact: silently writing something else than asked is worse.
 *
 * A still image is one frame.
 */
import { closeSync, openSync, readSync, writeSync } from 'node:fs';
import type { FitBox, FrameDecoder, FrameJobResult } from '../core/job.js';
import { DEFAULTS, type Format, type RenderParams } from '../core/params/definitions.js';
import { bodyText } from '../core/format/output.js';
import { formatsForExtension, outputExtension } from './render-command.js';
import {
  ESC, EXIT, ioError, readInput, withReadFd, stdoutIsTty, usageError, writeStdout, type InputLimits,
} from './terminal.js';
import { isVideo, videoFrameDecoder, type VideoInput } from './video-source.js';

export interface AnimateOptions {
  readonly file: string;
  readonly params: Partial<RenderParams>;
  /** The box to fit when `columns` is not set (view.ts); absent: the default columns. */
  readonly fit: FitBox | undefined;
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
  if (output === undefined && stdoutIsTty()) {
    const format: Format = params.format ?? (params.color ? 'ansi' : DEFAULTS.format);
    if (format !== 'text' && format !== 'ansi') {
      throw usageError(`an animation plays as text or ansi on a terminal, not ${format}: pipe the output or use -o for NDJSON of json-compact`);
    }
    return { kind: 'play', format, loop: parseLoop(opts.loop) };
  }
  if (params.format !== undefined && params.format !== 'json-compact') {
    throw usageError(`an animation is written as NDJSON of json-compact (one object per frame) when not played on a terminal; --format ${params.format} is not supported`);
  }
  const ext = outputExtension(output);
  const named = ext ? formatsForExtension(ext) : [];
  if (named.length && !named.includes('json-compact')) {
    throw usageError(`an animation is written as NDJSON of json-compact; the output file extension .${ext} (${named.join(' or ')}) does not fit: use .ndjson or .json`);
  }
  parseLoop(opts.loop); // validated even though only playback uses it
  return { kind: 'ndjson', output };
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** The first bytes of a file, to tell a video from an image without reading it all. */
function head(path: string): Uint8Array {
  return withReadFd(path, (fd) => {
    const buf = new Uint8Array(256);
    return buf.subarray(0, readSync(fd, buf, 0, buf.length, 0));
  });
}

/** The frames' source: a video for ffmpeg (a path it opens, or standard input's bytes), or image bytes for sharp. */
async function frameSource(opts: AnimateOptions, realtime: boolean): Promise<{ bytes: Uint8Array; decoder: FrameDecoder; video: boolean }> {
  const fromFile = opts.file !== '-';
  if (fromFile && isVideo(head(opts.file))) {
    // A video file streams through ffmpeg: its size is not bounded by V2A_MAX_IMAGE_BYTES.
    return { bytes: new Uint8Array(0), decoder: videoFrameDecoder({ input: { path: opts.file }, realtime }), video: true };
  }
  const sharpFrames = import('./renderer.js');
  sharpFrames.catch(() => undefined);
  const bytes = await readInput(opts.file, opts.limits.maxBytes);
  if (!fromFile && isVideo(bytes)) {
    const input: VideoInput = { bytes };
    return { bytes, decoder: videoFrameDecoder({ input, realtime }), video: true };
  }
  return { bytes, decoder: (await sharpFrames).decodeFrames, video: false };
}

export async function animate(opts: AnimateOptions): Promise<void> {
  const mode = chooseMode(opts);
  const job = import('./renderer.js');
  job.catch(() => undefined);
  const source = await frameSource(opts, mode.kind === 'play');
  const { runFrameJob } = await job;
  const pass = () => runFrameJob(source.bytes, opts.params, {
    frameDecoder: source.decoder,
    limits: opts.limits,
    fit: opts.fit ?? { columns: DEFAULTS.columns },
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
      for await (const { output } of pass()) {
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

  // A video is decoded again for each pass rather than held in memory; GIF/WebP frames are kept.
  await play(pass, mode.loop, !source.video);
}

/**
 * Plays frames in place. The first pass renders them as they decode; later passes replay the
 * kept bodies (`keep`), or run the job again.
 */
async function play(pass: () => AsyncIterable<FrameJobResult>, loop: number, keep: boolean): Promise<void> {
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
    for await (const { output, frame } of pass()) {
      count = frame.count;
      const body = bodyText(output);
      if (loop !== 1 && keep) kept.push({ body, delay: frame.delayMs });
      await show(body, frame.delayMs);
    }
    // A still image (or a one-frame animation) has nothing to replay.
    if (count > 1) {
      for (let n = 1; loop === 0 || n < loop; n++) {
        if (keep) for (const { body, delay } of kept) await show(body, delay);
        else for await (const { output, frame } of pass()) await show(bodyText(output), frame.delayMs);
      }
    }
  } finally {
    restore();
    process.removeListener('SIGINT', onSignal);
    process.removeListener('SIGTERM', onSignal);
  }
}
