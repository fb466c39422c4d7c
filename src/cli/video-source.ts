/**
 * Video frames for the terminal (`v2a play`, `render --animate` on a video), decoded by a system
 * `ffmpeg` (and its `ffprobe`) found on the PATH: nothing is downloaded or bundled. ffprobe reads
 * the size and frame rate; ffmpeg writes raw RGBA frames, already scaled to the width the render
 * job asks for, on a pipe that is read frame by frame (back-pressure bounds the memory to a frame
 * or two). The child processes are killed when the iteration ends early (Ctrl-C, an error, a
 * consumer that stops).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { accessSync, constants, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { V2aError } from '../core/errors.js';
import type { DecodeRequest, DecodedFrame, DecodedImage } from '../core/job.js';
import { FFMPEG_STILLS_IN_WORDS } from './media-type.js';

/** The path of an executable on the PATH, or undefined. */
export function findExecutable(name: string, env: Readonly<Record<string, string | undefined>> = process.env): string | undefined {
  for (const dir of (env.PATH ?? '').split(delimiter)) {
    if (!dir) continue;
    const path = join(dir, name);
    try {
      accessSync(path, constants.X_OK);
      return path;
    } catch {
      // not here
    }
  }
  return undefined;
}

/** ffmpeg processes running now: killed if the process exits in their middle (Ctrl-C during playback). */
const running = new Set<ChildProcess>();
let exitHook = false;
function track(child: ChildProcess): void {
  running.add(child);
  child.on('close', () => running.delete(child));
  if (!exitHook) {
    exitHook = true;
    process.on('exit', () => { for (const c of running) c.kill('SIGKILL'); });
  }
}

const noFfmpeg = (still: boolean) => `${still ? `${FFMPEG_STILLS_IN_WORDS} images need` : 'video needs'} ffmpeg (with ffprobe) on the PATH, e.g. \`apt-get install ffmpeg\` or \`brew install ffmpeg\`; v2a downloads nothing`;

/**
 * Where the video is: a path ffmpeg opens itself, or bytes (standard input) fed on a pipe. With
 * `demuxer`, a still image of a format ffmpeg must be told (media-type.ts ffmpegStill): its reader
 * named rather than guessed from the name (a `%d` in a .ppm's name was read as a numbered
 * sequence, another file), and its largest picture (an icon holds several) drawn.
 */
export type VideoInput = { readonly path: string; readonly demuxer?: string } | { readonly bytes: Uint8Array };

/** The input is a still image, not a video: its messages say so. */
const isStill = (input: VideoInput): boolean => 'demuxer' in input && input.demuxer !== undefined;
/** `image` or `video`, for messages. */
const noun = (input: VideoInput): string => (isStill(input) ? 'image' : 'video');
/** ffmpeg's and ffprobe's options before the input: its reader, where named. */
const readerOf = (input: VideoInput): string[] => ('demuxer' in input && input.demuxer ? ['-f', input.demuxer] : []);

/**
 * A video read from a pipe, a FIFO or standard input, for ffmpeg: written to a private temporary
 * file (removed when the process exits), since an MP4 or MOV whose index (moov) follows its data,
 * ffmpeg's own default layout, cannot be read from a pipe (ffmpeg must seek back: "Error marking
 * filters as finished"), and a player that resumes after a resize seeks. Where no temporary file
 * can be written, the bytes go down ffmpeg's pipe as before. `remove()` deletes the copy (the
 * caller's `finally`); an exit removes it too, and so does SIGINT, SIGTERM or SIGHUP: removed
 * first, then the signal goes on to whoever else handles it (the player: it restores the terminal
 * and exits, or dies of SIGHUP when the terminal closed, which no exit handler would see), or where
 * nothing does (writing NDJSON), to its own default.
 */
export function spoolVideo(bytes: Uint8Array): { input: VideoInput; remove: () => void } {
  let dir: string | undefined;
  try {
    dir = mkdtempSync(join(tmpdir(), 'v2a-video-'));
    writeFileSync(join(dir, 'input'), bytes, { mode: 0o600 });
  } catch {
    if (dir) rmSync(dir, { recursive: true, force: true });
    return { input: { bytes }, remove: () => undefined };
  }
  const made = dir;
  const signals = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;
  const onSignal = (signal: NodeJS.Signals) => {
    remove();
    if (process.listenerCount(signal) === 0) process.kill(process.pid, signal);
  };
  const remove = () => {
    process.off('exit', remove);
    for (const s of signals) process.off(s, onSignal);
    rmSync(made, { recursive: true, force: true });
  };
  process.once('exit', remove);
  for (const s of signals) process.prependOnceListener(s, onSignal);
  return { input: { path: join(made, 'input') }, remove };
}

interface Probe {
  /** The video stream drawn, among the input's video streams (an icon's largest picture). */
  readonly stream: number;
  readonly width: number;
  readonly height: number;
  readonly fps: number;
  readonly codec: string;
  readonly frames?: number;
  /** The video stream's duration in seconds, else the container's (which an audio track may make longer), where either says. */
  readonly seconds?: number;
  /** Whether `seconds` is the video stream's own. */
  readonly ownSeconds?: boolean;
}

/**
 * The frames decodeVideo writes (at info.fps over the duration), else the stream's own count; 0
 * where neither is known. A variable-rate stream's nb_frames counts its own frames, not these.
 */
function expectedFrames(info: Probe): number {
  return info.seconds !== undefined ? Math.max(1, Math.round(info.seconds * info.fps)) : (info.frames ?? 0);
}

/** Runs a tool to completion; stdout whole, stderr's last 4 KiB. */
function runTool(cmd: string, args: readonly string[], input: VideoInput): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { stdio: ['bytes' in input ? 'pipe' : 'ignore', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    let err = '';
    child.stdout!.on('data', (c: Buffer) => out.push(c));
    child.stderr!.on('data', (c: Buffer) => { err = (err + c.toString('utf8')).slice(-4096); });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout: Buffer.concat(out).toString('utf8'), stderr: err }));
    if ('bytes' in input) {
      child.stdin!.on('error', () => undefined); // ffprobe may stop reading early
      child.stdin!.end(input.bytes);
    }
  });
}

/** ffmpeg's last line of stderr, without its `[component]` tag or the input's name (v2a's message names the file already). */
function lastLine(text: string, input?: VideoInput): string {
  const lines = text.split('\n').map((l) => l.trim()).filter(Boolean);
  let line = (lines.at(-1) ?? 'no details').replace(/^\[[^\]]*\]\s*/, '');
  const name = input ? `${source(input)}: ` : undefined;
  if (name && line.startsWith(name)) line = line.slice(name.length);
  return line.slice(0, 200);
}

/**
 * What ffmpeg and ffprobe are told to open. A path goes through ffmpeg's file protocol: bare, a
 * name that reads as a protocol (`http://host/x.mp4`, `concat:a|b`, a file of that name in an
 * archive a previewer shows) would have been opened as one, a fetch or a read of other files.
 */
const source = (input: VideoInput) => ('path' in input ? `file:${input.path}` : 'pipe:0');

function rate(text: string | undefined): number {
  const m = /^(\d+)(?:\/(\d+))?$/.exec(text ?? '');
  if (!m) return NaN;
  const v = Number(m[1]) / (m[2] ? Number(m[2]) : 1);
  return Number.isFinite(v) ? v : NaN;
}

async function probe(ffprobe: string, input: VideoInput): Promise<Probe> {
  const r = await runTool(ffprobe, ['-v', 'error', '-select_streams', isStill(input) ? 'v' : 'v:0', '-show_entries',
    'stream=width,height,avg_frame_rate,r_frame_rate,codec_name,nb_frames,duration,sample_aspect_ratio:stream_side_data=rotation:stream_tags=rotate:format=duration', '-of', 'json', ...readerOf(input), source(input)], input);
  let stream: Record<string, unknown> | undefined;
  let index = 0;
  let seconds = NaN;
  try {
    const parsed = JSON.parse(r.stdout) as { streams?: Record<string, unknown>[]; format?: { duration?: string } };
    // A still's largest picture; a video's first stream.
    const area = (s: Record<string, unknown>) => (Number(s.width) || 0) * (Number(s.height) || 0);
    parsed.streams?.forEach((s, i) => { if (!stream || area(s) > area(stream)) [stream, index] = [s, i]; });
    seconds = Number(parsed.format?.duration);
  } catch {
    stream = undefined;
  }
  if (r.code !== 0 || !stream) {
    throw new V2aError('undecodable-image', `ffprobe cannot read the ${noun(input)}: ${r.code === 0 ? `it has no ${isStill(input) ? 'picture' : 'video stream'}` : lastLine(r.stderr, input)}`);
  }
  const width = Number(stream.width);
  const height = Number(stream.height);
  if (!(width > 0 && height > 0)) throw new V2aError('undecodable-image', `the ${noun(input)} has no picture size`);
  // Anamorphic video: display width = coded width x sample aspect ratio.
  const sar = /^(\d+):(\d+)$/.exec(String(stream.sample_aspect_ratio ?? ''));
  const displayWidth = sar && Number(sar[1]) > 0 && Number(sar[2]) > 0 ? Math.round((width * Number(sar[1])) / Number(sar[2])) : width;
  let fps = rate(stream.avg_frame_rate as string);
  if (!(fps > 0 && fps <= 240)) fps = rate(stream.r_frame_rate as string);
  if (!(fps > 0 && fps <= 240)) fps = 25;
  const frames = Number(stream.nb_frames);
  const own = Number(stream.duration);
  // A phone's portrait video is stored landscape with a rotation (a display matrix, or an older
  // `rotate` tag): ffmpeg turns the picture upright as it decodes, so the frame is sized upright
  // (it was drawn squashed into the stored shape).
  const turn = Number((stream.side_data_list as { rotation?: unknown }[] | undefined)?.find((d) => d.rotation !== undefined)?.rotation
    ?? (stream.tags as { rotate?: unknown } | undefined)?.rotate ?? 0);
  const upright = Math.abs(turn) % 180 === 90;
  return {
    stream: index,
    width: upright ? height : displayWidth, height: upright ? displayWidth : height, fps, codec: String(stream.codec_name ?? 'video'),
    ...(frames > 0 ? { frames } : {}),
    ...(own > 0 ? { seconds: own, ownSeconds: true } : seconds > 0 ? { seconds } : {}),
  };
}

export interface VideoOptions {
  readonly input: VideoInput;
  /** Drop frames that are more than a frame late at this clock, so playback keeps the clip's speed. */
  readonly realtime?: boolean;
  /** The clock of `realtime` (default performance.now); the player's stands still while it is suspended. */
  readonly clock?: () => number;
  /**
   * Called when ffmpeg ends well short of the frames the video's duration promises (a file cut
   * short, still downloading): it exits 0 having decoded what there is.
   */
  readonly onShort?: () => void;
}

/**
 * A FrameDecoder (for runFrameJob) over ffmpeg: its bytes argument is ignored, the video comes
 * from `opts.input`. Frames carry the clip's frame interval as their delay. `from`: the index of
 * the first frame, found by ffmpeg's seeking (a player resumes there after a resize).
 */
export function videoFrameDecoder(opts: VideoOptions): (bytes: Uint8Array, request: DecodeRequest, from?: number) => AsyncGenerator<DecodedFrame, void, undefined> {
  return (_bytes, request, from = 0) => decodeVideo(opts, request, from);
}

/**
 * One frame of a video as a still image, for `v2a render clip.mp4` (a file manager's preview):
 * the frame a tenth of the way in, since a first frame is often black (a fade-in) or a title;
 * the first where that one cannot be had.
 */
export async function videoStill(input: VideoInput, request: DecodeRequest): Promise<DecodedImage> {
  const ffprobe = findExecutable('ffprobe');
  if (!findExecutable('ffmpeg') || !ffprobe) throw new V2aError('unsupported-image', noFfmpeg(isStill(input)));
  const info = await probe(ffprobe, input);
  await request.checkSize?.(info.width, info.height);
  const total = expectedFrames(info);
  for (const from of total >= 10 ? [Math.floor(total / 10), 0] : [0]) {
    for await (const f of decodeVideo({ input }, request, from, info, 1)) {
      return { width: f.width, height: f.height, data: f.data, sourceWidth: f.sourceWidth, sourceHeight: f.sourceHeight, format: f.format };
    }
  }
  throw new V2aError('undecodable-image', `the ${noun(input)} has no frames`);
}

/** `most`: frames ffmpeg decodes at most (a still's one: it stops at once, not when its pipe closes). */
async function* decodeVideo(opts: VideoOptions, request: DecodeRequest, from: number, probed?: Probe, most?: number): AsyncGenerator<DecodedFrame, void, undefined> {
  const ffmpeg = findExecutable('ffmpeg');
  const ffprobe = findExecutable('ffprobe');
  if (!ffmpeg || !ffprobe) throw new V2aError('unsupported-image', noFfmpeg(isStill(opts.input)));
  const info = probed ?? await probe(ffprobe, opts.input);
  if (info.width * info.height > request.maxPixels) {
    throw new V2aError('image-too-large', `The ${isStill(opts.input) ? 'image is' : 'video frames are'} too large (${info.width}x${info.height} pixels); the limit is ${request.maxPixels} pixels (V2A_MAX_IMAGE_PIXELS).`);
  }
  // Decode at the width the job asks for (never enlarge); even sizes suit every pixel format.
  const width = Math.max(2, Math.min(info.width, request.targetWidth) & ~1);
  const height = Math.max(2, Math.round((width * info.height) / info.width) & ~1);
  const frameBytes = width * height * 4;
  const seek = from > 0 ? ['-ss', (from / info.fps).toFixed(3)] : [];
  const child: ChildProcess = spawn(ffmpeg, ['-v', 'error', '-nostdin', ...seek, ...readerOf(opts.input), '-i', source(opts.input), '-map', `0:v:${info.stream}`, '-an', '-sn', ...(most ? ['-frames:v', String(most)] : []),
    // At a constant info.fps, the rate every frame is timed and seeked by: a variable-rate MP4
    // (a phone's, a screen recording) came out at its stream's r_frame_rate, 25 fps, timed at its
    // average, 8.7 fps: it played 2.9 times too slowly.
    // One frame (a still) needs no timing: the filter dropped an icon's one frame (a stream of
    // 90000 fps and no duration, as ffprobe reads an ICO).
    '-vf', `${most === 1 ? '' : `fps=${info.fps},`}scale=${width}:${height}:flags=area`, '-f', 'rawvideo', '-pix_fmt', 'rgba', 'pipe:1'],
  { stdio: ['bytes' in opts.input ? 'pipe' : 'ignore', 'pipe', 'pipe'] });
  track(child);
  let stderr = '';
  child.stderr!.on('data', (c: Buffer) => { stderr = (stderr + c.toString('utf8')).slice(-4096); });
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  const spawnError = new Promise<never>((_, reject) => child.on('error', (err) => reject(new V2aError('io-error', `cannot run ffmpeg: ${err.message}`))));
  spawnError.catch(() => undefined);
  if ('bytes' in opts.input) {
    child.stdin!.on('error', () => undefined);
    child.stdin!.end(opts.input.bytes);
  }
  const delayMs = 1000 / info.fps;
  const count = expectedFrames(info);
  const clock = opts.clock ?? (() => performance.now());
  let index = from;
  let frame = Buffer.allocUnsafe(frameBytes);
  let filled = 0;
  let start = -1;
  try {
    for await (const chunk of child.stdout! as AsyncIterable<Buffer>) {
      let off = 0;
      while (off < chunk.length) {
        const n = Math.min(frameBytes - filled, chunk.length - off);
        chunk.copy(frame, filled, off, off + n);
        filled += n;
        off += n;
        if (filled < frameBytes) continue;
        const i = index++;
        filled = 0;
        const now = clock();
        if (start < 0) start = now;
        // Behind by more than a frame: skip this one rather than slow the clip down.
        if (opts.realtime && i > from && now > start + (i - from + 1) * delayMs) continue;
        const data = new Uint8Array(frame.buffer, frame.byteOffset, frameBytes);
        frame = Buffer.allocUnsafe(frameBytes); // the yielded frame is the consumer's now
        yield { width, height, data, format: info.codec, sourceWidth: info.width, sourceHeight: info.height, delayMs, index: i, count: Math.max(count, i + 1) };
      }
    }
    const code = await Promise.race([exited, spawnError]);
    if (code !== 0) throw new V2aError('undecodable-image', `ffmpeg cannot decode the ${noun(opts.input)}: ${lastLine(stderr, opts.input)}`);
    // (Resumed past the last frame, there is simply nothing left.)
    if (index === 0) throw new V2aError('undecodable-image', `the ${noun(opts.input)} has no frames`);
    // A frame or two short is the rate's rounding; 2 % is a file that ends early. Only against the
    // video's own duration: a container's may be its audio's, longer than the picture.
    if (!most && info.ownSeconds && index < count * 0.98 - 2) opts.onShort?.();
  } finally {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  }
}
