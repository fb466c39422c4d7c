/**
 * `v2a play` and `v2a render --animate`: every frame of an animated GIF or WebP (decoded by sharp)
 * or of a video (the containers of media-type.ts; decoded by a system ffmpeg, video-source.ts)
 * through one FrameRenderer (the Bayesian temporal filter, glyph hysteresis, one Director tuning
 * and codebook for the clip). Video plays at the clip's frame rate, dropping frames that render
 * too late.
 *
 * - Standard output a terminal and no -o: played in place below the prompt (cursor hidden, each
 *   frame drawn over the last, frame delays honoured, `--loop` times, 0 = until Ctrl-C), as text
 *   or, with --color or --format ansi, as ansi; the keys, signals, drawing and restoring of the
 *   terminal are playback-terminal.ts's. A size that came from the terminal follows it when it is
 *   resized: the clip goes on at the next frame, rendered for the new size. A terminal without
 *   cursor addressing (TERM=dumb) is refused.
 * - Otherwise (piped, or -o): NDJSON (ndjson.ts: json-compact with each frame's delay), once (--loop
 *   is refused). --format is refused unless it is json-compact: silently writing something else
 *   than asked is worse.
 *
 * A still image is one frame. The input is any file, a pipe or FIFO (`<(...)`), or `-`; what is
 * read into memory is bounded by V2A_MAX_IMAGE_BYTES. A video file is not read: ffmpeg streams it
 * from disk frame by frame, so its size costs no memory (each frame is bounded by
 * V2A_MAX_IMAGE_PIXELS); a bound of 16 MiB would refuse most real clips.
 */
import { closeSync, openSync, statSync, writeSync } from 'node:fs';
import { V2aError } from '../core/errors.js';
import type { DecodeRequest, DecodedFrame, FitBox, FrameJobResult } from '../core/job.js';
import { DEFAULTS, type Format, type RenderParams } from '../core/params/definitions.js';
import { bodyText } from '../core/format/output.js';
import type { DecodedFrame as SharpFrame } from '../node/decode.js';
import { PlaybackTerminal } from './playback-terminal.js';
import { damagedNote, formatsForExtension, loadRenderer, outputExtension, refuseDepthFor } from './render-command.js';
import { aboutFile, integerFlag, ioError, readHead, readInput, withReadFd, stdoutIsTty, usageError, writeError, writeStdout, type InputLimits } from './terminal.js';
import { VIDEO_FORMATS_IN_WORDS, isVideo, refuseUnknown } from './media-type.js';
import { spoolVideo, videoFrameDecoder } from './video-source.js';
import { resolveBox, withoutSizeVars } from './view.js';
import { fitFrameDecoder } from './box-fit.js';
import { NDJSON_EXTENSIONS, frameLine } from './ndjson.js';

export interface AnimateOptions {
  readonly file: string;
  readonly params: Partial<RenderParams>;
  /** The box to fit when `columns` is not set (view.ts); absent: the default columns. */
  readonly fit: FitBox | undefined;
  readonly output: string | undefined;
  /** `--loop` as typed, or undefined (1). */
  readonly loop: string | undefined;
  readonly limits: InputLimits;
  /** `-c/--colors` as typed: a palette depth applies to ansi only, and is refused otherwise. */
  readonly colors?: string | undefined;
}

/** Shortest time a frame stays on screen while playing: a 0 ms delay must not spin the CPU. */
const MIN_FRAME_MS = 10;
const MAX_LOOP = 1_000_000;

function parseLoop(raw: string | undefined): number {
  return raw === undefined ? 1 : integerFlag('--loop', raw, 0, MAX_LOOP, `an integer from 0 (forever) to ${MAX_LOOP}`);
}

type Mode = { kind: 'play'; format: 'text' | 'ansi'; loop: number } | { kind: 'ndjson'; output: string | undefined };

function chooseMode(opts: Omit<AnimateOptions, 'file'>): Mode {
  const { params, output } = opts;
  if (output === undefined && stdoutIsTty()) {
    const format: Format = params.format ?? (params.color ? 'ansi' : DEFAULTS.format);
    if (format !== 'text' && format !== 'ansi') {
      throw usageError(`an animation plays as text or ansi on a terminal, not ${format}: pipe the output or use -o for NDJSON of json-compact`);
    }
    refuseDepthFor(format, params, opts);
    // Without cursor addressing each frame would scroll under the last: a wall of text, not a clip.
    if (process.env.TERM === 'dumb') {
      throw usageError('this terminal (TERM=dumb) cannot play an animation in place: write the frames with -o frames.ndjson, or play it in a terminal with cursor addressing');
    }
    return { kind: 'play', format, loop: parseLoop(opts.loop) };
  }
  if (params.format !== undefined && params.format !== 'json-compact') {
    throw usageError(`an animation is written as NDJSON of json-compact (one object per frame) when not played on a terminal; --format ${params.format} is not supported`);
  }
  // An extension that names no format (.gif, .mp4) is refused as one that names another: a user
  // who writes -o clip.gif expects a GIF, not NDJSON under its name.
  const ext = outputExtension(output);
  if (ext && !NDJSON_EXTENSIONS.includes(ext.toLowerCase())) {
    const named = formatsForExtension(ext);
    throw usageError(`an animation is written as NDJSON of json-compact; the output file extension .${ext}${named.length ? ` (${named.join(' or ')})` : ''} does not fit: use .ndjson or .json`);
  }
  refuseDepthFor('json-compact', params, opts, 'NDJSON of json-compact');
  // Written once: a count of passes would be silently dropped (or, 0, never end).
  if (opts.loop !== undefined) {
    parseLoop(opts.loop);
    throw usageError(`--loop applies to playing on a terminal; ${output === undefined ? 'piped' : 'with -o'}, the frames are written once as NDJSON`);
  }
  return { kind: 'ndjson', output };
}

/** Frames from index `from` on (a player resumes there after a resize). */
type Frames = (bytes: Uint8Array, request: DecodeRequest, from: number) => AsyncGenerator<DecodedFrame, void, undefined>;

/** A pass over the frames from `from` on, fitted to `fit`. */
type Pass = (fit: FitBox | undefined, from: number) => AsyncIterable<FrameJobResult>;

/**
 * The first bytes of a regular file, to tell a video from an image without reading it all;
 * undefined for anything else: opening a FIFO to look would take bytes from its reader.
 */
function sniff(path: string): { head: Uint8Array } | undefined {
  try {
    if (!statSync(path).isFile()) return undefined;
  } catch (err) {
    throw ioError('read', path, err);
  }
  return withReadFd(path, (fd) => ({ head: readHead(fd) }));
}

/**
 * Sharp decodes an animation from its start: the frames before `from` are skipped. A damaged
 * frame (a file cut short, decoded as far as it goes) is told to `seen`.
 */
async function* skipTo(frames: AsyncGenerator<SharpFrame, void, undefined>, from: number, seen: Seen): AsyncGenerator<DecodedFrame, void, undefined> {
  for await (const frame of frames) {
    if (frame.damaged) seen.damaged = true;
    if (frame.index >= from) yield frame;
  }
}

/** What the frames' source turned out to be: a video (ffmpeg's errors are its own), a damaged file. */
type Seen = { video: boolean; damaged: boolean };

/**
 * The frames' source: a video for ffmpeg (a regular file by its path, else its bytes), or image
 * bytes for sharp. Standard input, a pipe or a FIFO can be read only once: it is read whole, as
 * an image is. `clock`: the player's, for dropping late video frames.
 */
async function frameSource(opts: AnimateOptions, clock: (() => number) | undefined, seen: Seen): Promise<{ bytes: Uint8Array; frames: Frames; video: boolean; remove?: () => void }> {
  const { file, limits } = opts;
  const realtime = clock !== undefined;
  const onShort = () => { seen.damaged = true; };
  // Neither an image nor a video is refused from its first bytes, before it is read or sharp loads.
  const regular = file === '-' ? undefined : sniff(file);
  if (regular) refuseUnknown(regular.head, true);
  if (regular && isVideo(regular.head)) {
    // Streamed by ffmpeg from disk: no byte bound (see above).
    return { bytes: new Uint8Array(0), frames: videoFrameDecoder({ input: { path: file }, realtime, clock, onShort }), video: true };
  }
  let sharpFrames = regular ? loadRenderer() : undefined;
  const bytes = await readInput(file, limits.maxBytes, regular ? undefined : (head) => {
    refuseUnknown(head, true);
    if (!isVideo(head)) sharpFrames = loadRenderer();
  });
  if (isVideo(bytes)) {
    const spooled = spoolVideo(bytes);
    return { bytes, frames: videoFrameDecoder({ input: spooled.input, realtime, clock, onShort }), video: true, remove: spooled.remove };
  }
  const { decodeFrames } = await sharpFrames!;
  // A file cut short (still downloading) plays what it holds, as render shows it, with a warning.
  return { bytes, frames: (b, request, from) => skipTo(decodeFrames(b, { ...request, partial: true }), from, seen), video: false };
}

export function animate(opts: AnimateOptions): Promise<void> {
  return animator(opts)(opts.file);
}

/** The options checked once (`render --animate a.gif b.gif`): a function that plays or writes one file. */
export function animator(opts: Omit<AnimateOptions, 'file'>): (file: string) => Promise<void> {
  const mode = chooseMode(opts);
  return async (file) => {
    // Before the input is read: keys typed meanwhile are not echoed, and Ctrl-C restores from the start.
    const term = mode.kind === 'play' ? new PlaybackTerminal(file === '-') : undefined;
    const seen: Seen = { video: false, damaged: false };
    try {
      return await animateFrom({ ...opts, file }, mode, term, seen);
    } catch (err) {
      // Neither an image nor a video it knows: sharp's message named only the image formats.
      if (!seen.video && err instanceof V2aError && err.code === 'unsupported-image') throw aboutFile(file, new V2aError(err.code, `${err.message} ${VIDEO_FORMATS}`));
      throw aboutFile(file, err);
    } finally {
      term?.close();
      // Once the terminal is restored: a line written while playing would be drawn over.
      if (seen.damaged) process.stderr.write(damagedNote(file, seen.video ? 'video' : 'image'));
    }
  };
}

/** What the frames' sources take beside images. */
const VIDEO_FORMATS = `Or a video ffmpeg reads: ${VIDEO_FORMATS_IN_WORDS}.`;

async function animateFrom(opts: AnimateOptions, mode: Mode, term: PlaybackTerminal | undefined, seen: Seen): Promise<void> {
  const reading = frameSource(opts, term?.now, seen);
  const source = term ? await Promise.race([reading, term.quitting.then(() => undefined)]) : await reading;
  if (!source) {
    // q while the input was still being read: nothing to play. The read ends with the process (or,
    // with more files to play, when its input does); whatever it ends in is no one's error now.
    reading.then((s) => s.remove?.(), () => undefined);
    return;
  }
  seen.video = source.video;
  try {
    const { runFrameJob } = await loadRenderer();
    // A pass ended early (a resize, q) ends its decoder, and so its ffmpeg, too: runFrameJob's own
    // return() does, which for-await calls on a break or a throw.
    const pass: Pass = (fit, from) => runFrameJob(source.bytes, opts.params, {
      frameDecoder: fitFrameDecoder((bytes, request) => source.frames(bytes, request, from), opts.params, fit),
      limits: opts.limits,
      fit: fit ?? { columns: DEFAULTS.columns },
      format: mode.kind === 'play' ? mode.format : 'json-compact',
    });
    if (mode.kind === 'ndjson') return await writeNdjson(pass(opts.fit, 0), mode.output);
    // Only a size wholly the terminal's (no -w/-H/--size/--columns) follows it: resolved again,
    // from the terminal itself: exported COLUMNS and LINES do not follow a resize.
    // A terminal resized narrower than the fewest columns keeps the last size: the clip goes on.
    const refit = opts.fit && !opts.fit.strict ? (current: FitBox | undefined) => {
      try {
        return resolveBox(opts.params, {}, undefined, withoutSizeVars(process.env)).fit;
      } catch {
        return current;
      }
    } : undefined;
    // A video is decoded again for each pass rather than held in memory; GIF/WebP frames are kept.
    await play(term!, pass, opts.fit, refit, mode.loop, !source.video);
  } finally {
    source.remove?.();
  }
}

async function writeNdjson(frames: AsyncIterable<FrameJobResult>, output: string | undefined): Promise<void> {
  let fd: number | undefined;
  try {
    for await (const { output: art, frame } of frames) {
      const line = frameLine(bodyText(art), frame.delayMs);
      if (output === undefined) await writeStdout(line);
      else {
        try {
          // Opened once a frame has rendered: an input that fails leaves an existing file as it was, as render does.
          fd ??= openSync(output, 'w');
          writeSync(fd, line);
        } catch (err) {
          throw writeError(output, err);
        }
      }
    }
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/**
 * Plays frames in place, `loop` times (0: until stopped). The first pass renders them as they
 * decode; later passes replay the kept bodies (`keep`), or run the job again. A resize that
 * changes the fit (`refit`) ends the pass and starts it again at the next frame, at the new size.
 */
async function play(term: PlaybackTerminal, pass: Pass, fit: FitBox | undefined, refit: ((current: FitBox | undefined) => FitBox | undefined) | undefined, loop: number, keep: boolean): Promise<void> {
  let kept: { body: string; delay: number }[] | undefined;
  let next = term.now();
  const show = async (body: string, delay: number) => {
    const wait = next - term.now();
    if (wait > 0) await term.wait(wait);
    if (term.quit) return;
    await term.draw(body);
    next = Math.max(next + Math.max(delay, MIN_FRAME_MS), term.now());
  };
  /** Whether a resize changed the fit; then the kept bodies are the old size's. */
  const refitted = (): boolean => {
    if (!refit || !term.takeResize()) return false;
    const box = refit(fit);
    if (box?.columns === fit?.columns && box?.rows === fit?.rows) return false;
    fit = box;
    kept = undefined;
    return true;
  };
  let count = 0;
  let from = 0;
  for (let n = 0; (loop === 0 || n < loop) && !term.quit;) {
    let resume = -1;
    if (kept && from === 0) {
      const bodies = kept;
      for (let i = 0; i < bodies.length; i++) {
        const { body, delay } = bodies[i]!;
        await show(body, delay);
        if (term.quit) break;
        if (refitted()) {
          resume = i + 1;
          break;
        }
      }
    } else {
      const collect: typeof kept = keep && loop !== 1 && from === 0 ? [] : undefined;
      for await (const { output, frame } of pass(fit, from)) {
        count = frame.count;
        const body = bodyText(output);
        collect?.push({ body, delay: frame.delayMs });
        await show(body, frame.delayMs);
        if (term.quit) break;
        if (refitted()) {
          resume = frame.index + 1;
          break;
        }
      }
      if (resume < 0 && !term.quit) kept = collect;
    }
    if (resume >= 0) {
      from = resume;
      continue;
    }
    from = 0;
    n++;
    // A still image (or a one-frame animation) has nothing to replay.
    if (count <= 1) break;
  }
}
