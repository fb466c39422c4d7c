/**
 * Live sources, rendered frame by frame through FrameRenderer (the temporal filter) in the worker.
 *
 * A MediaStream (the webcam, a canvas stream) goes to the worker as a stream of VideoFrames
 * (MediaStreamTrackProcessor) that the worker reads itself: no requestAnimationFrame, no timer, so
 * the rate holds when this page is hidden behind the a2v receiver's window. A video file goes the
 * same way, as its element's captureStream() track (requestVideoFrameCallback, like
 * requestAnimationFrame, all but stops in a page in the background). Where the browser has no
 * MediaStreamTrackProcessor (or no captureStream), frames are grabbed on the video element's
 * requestVideoFrameCallback instead, at most two in flight.
 */
import { SUB_X, SUB_Y } from '../core/glyphs/types.js';
import { gridRows } from '../core/pipeline/geometry.js';
import { DEFAULTS } from '../core/index.js';
import type { ParamControls } from './controls.js';
import { $ } from './dom.js';
import { updateCurl } from './export.js';
import { clearError, el, focusOr, say, sayFirst, showError, updateSourcePane } from './layout.js';
import { stopRecording } from './recording.js';
import { isLive, newSourceId, openingSource, setShown, state } from './state.js';
import { send } from './worker-link.js';

let controls: ParamControls;
const webcamBtn = $('#webcam');
const pauseBtn = $('#pause');
const streamBar = $('#stream-bar');
const fpsEl = $('#fps');
const frameTimes: number[] = [];
const flickers: number[] = [];
/** The video file's captureStream(), while the worker reads its track (stopped with the video). */
let captured: MediaStream | null = null;
/** The worker reads the frames itself (a track processor), so the page grabs none. */
let workerReads = false;

type Processor = new (init: { track: MediaStreamTrack; maxBufferSize?: number }) => { readable: ReadableStream<VideoFrame> };
const trackProcessor = (): Processor | undefined => (globalThis as { MediaStreamTrackProcessor?: Processor }).MediaStreamTrackProcessor;

/** Hands `track`'s frames to the worker's own stream loop; false where the browser cannot. */
function workerStream(track: MediaStreamTrack | undefined): boolean {
  const P = trackProcessor();
  if (!track || !P) return false;
  const { readable } = new P({ track, maxBufferSize: 1 });
  send({ t: 'stream', on: true, sourceId: state.shown.sourceId, readable }, [readable as unknown as Transferable]);
  workerReads = true;
  return true;
}

/** Hooks into the handoff (set by handoff-ui.ts): end a stream handoff when its stream ends. */
export const streamHooks = {
  ended: (_kind: 'webcam' | 'video' | 'none') => {},
  cameraFailed: (_message: string) => {},
};

export function initStream(c: ParamControls): void {
  controls = c;
  webcamBtn.addEventListener('click', () => void (isLive() && state.shown.kind === 'webcam' ? stopWebcam() : startWebcam()));
  pauseBtn.addEventListener('click', togglePause);
  $('#snapshot').addEventListener('click', snapshot);
  const steady = $('#steady') as HTMLInputElement;
  steady.addEventListener('change', () => {
    state.stats.temporal = steady.checked;
    send({ t: 'temporal', on: steady.checked });
  });
  window.__v2aStudio.useStream = useStream;
}

export function setStreamUi(): void {
  const live = isLive();
  const active = document.activeElement;
  streamBar.dataset.live = String(live);
  for (const b of streamBar.querySelectorAll<HTMLButtonElement | HTMLSelectElement | HTMLInputElement>('button, select, input')) b.disabled = !live;
  // The button's words say what it does now ("Stop webcam"): a pressed state beside them would
  // be read as "Stop webcam, pressed".
  webcamBtn.dataset.on = String(state.shown.kind === 'webcam');
  webcamBtn.textContent = state.shown.kind === 'webcam' ? 'Stop webcam' : 'Webcam';
  // A stream bar control that had the focus (Snapshot, Pause when `w` stopped the webcam) is
  // disabled now: the focus goes to the webcam button, not to the page's body.
  if (!live && active instanceof HTMLElement && streamBar.contains(active)) focusOr(webcamBtn);
  updateSourcePane();
  updateCurl();
}

/**
 * Stops the live source. What it showed last stays on screen (kind `frame`). `keepHandoff`: a
 * stream handoff continues (the caller is about to start the source it streams).
 */
export function stopStream(opts: { keepHandoff?: boolean } = {}): void {
  const was = state.shown.kind;
  if (!isLive(was)) return;
  stopRecording();
  if (!opts.keepHandoff) streamHooks.ended(was);
  send({ t: 'stream', on: false });
  state.stream?.getTracks().forEach((t) => t.stop());
  state.stream = null;
  if (captured) {
    // Chromium adds a live track to an element's captured stream for each source the element
    // gets after it: the retired stream stops a video's as they come. A webcam's is the camera's
    // own track (the same id; stopping it stopped the camera): it ends with the camera.
    captured.getTracks().forEach((t) => t.stop());
    captured.onaddtrack = (e) => {
      const source = el.video.srcObject;
      if (!(source instanceof MediaStream && source.getTrackById(e.track.id))) e.track.stop();
    };
    captured = null;
  }
  workerReads = false;
  el.video.pause();
  el.video.srcObject = null;
  el.video.removeAttribute('src');
  if (state.videoUrl) URL.revokeObjectURL(state.videoUrl);
  state.videoUrl = null;
  state.paused = false;
  // A stopped stream's rate is no rate of the still shown now (it kept reading "25").
  resetRate();
  pauseBtn.dataset.on = 'false';
  pauseBtn.textContent = 'Pause';
  state.frameInFlight = 0;
  // The last frame stays, as a still: tunable and exportable like any image (a new source that
  // fails to open leaves it on screen).
  if (state.result?.kind === 'frame') {
    state.stillBusy = true;
    const sourceId = newSourceId();
    send({ t: 'snapshot', sourceId });
    setShown('image', state.shown.name, sourceId);
  } else {
    setShown('none', state.shown.name, newSourceId());
  }
  setStreamUi();
}

function resetMeters(): void {
  const s = state.stats;
  s.frames = 0;
  s.sumRenderMs = 0;
  s.sumDrawMs = 0;
  s.sumFrontMs = 0;
  s.flicker = null;
  s.meanFlicker = null;
  s.codebookChoices = null;
  frameTimes.length = 0;
  flickers.length = 0;
}

/** Starts rendering `s` (a camera or any MediaStream). */
export async function useStream(s: MediaStream, kind: 'webcam' | 'video' = 'webcam', opts: { keepHandoff?: boolean } = {}): Promise<void> {
  openingSource();
  stopStream(opts);
  state.stream = s;
  el.video.srcObject = s;
  resetMeters();
  setShown(kind, kind === 'webcam' ? 'webcam' : 'stream', newSourceId());
  takeOver();
  send({ t: 'params', params: controls.values() });
  if (workerStream(s.getVideoTracks()[0])) {
    setStreamUi();
    // The video element only shows the source (side by side); frames do not depend on it.
    void el.video.play().catch(() => {});
    return;
  }
  send({ t: 'stream', on: true, sourceId: state.shown.sourceId });
  setStreamUi();
  await el.video.play();
  el.video.requestVideoFrameCallback(onVideoFrame);
}

export async function startWebcam(opts: { keepHandoff?: boolean } = {}): Promise<void> {
  if (!navigator.mediaDevices?.getUserMedia) {
    const msg = 'This browser offers no camera access here (it needs https or localhost).';
    showError(msg);
    streamHooks.cameraFailed(msg);
    return;
  }
  const seq = openingSource();
  say('Asking for the camera…');
  try {
    const s = await navigator.mediaDevices.getUserMedia({
      video: { width: { ideal: 640 }, height: { ideal: 480 }, frameRate: { ideal: 60 } },
      audio: false,
    });
    // Another source opened while the camera was asked for wins: this camera is let go, unused.
    if (seq !== state.opened) {
      s.getTracks().forEach((t) => t.stop());
      return;
    }
    await useStream(s, 'webcam', opts);
    clearError();
    say('Webcam live.');
  } catch (err) {
    const name = (err as DOMException).name;
    const msg = name === 'NotAllowedError' ? 'Camera access was denied.' : name === 'NotFoundError' ? 'No camera was found.' : `The camera could not start: ${(err as Error).message}`;
    if (seq === state.opened) showError(msg);
    streamHooks.cameraFailed(msg);
  }
}

function stopWebcam(): void {
  // Its last frame is rendered again as a still, whose news follows this instead of replacing it.
  const snapshot = state.result?.kind === 'frame';
  stopStream();
  (snapshot ? sayFirst : say)('Webcam stopped.');
}

/**
 * Opens a video file. It takes over only once the browser has decoded a picture of it: a file
 * that is no video, or has no picture (audio only), leaves the source shown as it was.
 */
export function openVideo(file: File): void {
  const seq = openingSource();
  const name = file.name || 'video';
  const url = URL.createObjectURL(file);
  say(`Opening ${name}…`);
  firstPicture(url).then(() => {
    // Another source opened meanwhile wins.
    if (seq !== state.opened) return URL.revokeObjectURL(url);
    stopStream();
    state.videoUrl = url;
    el.video.src = url;
    resetMeters();
    setShown('video', name, newSourceId());
    takeOver();
    say(`Playing ${name} in a loop${state.shortcuts ? ' (p pauses)' : ''}.`);
    send({ t: 'params', params: controls.values() });
    send({ t: 'stream', on: true, sourceId: state.shown.sourceId });
    setStreamUi();
    el.video.play().then(() => {
      // Another source opened meanwhile wins.
      if (state.videoUrl !== url) return;
      // The worker reads the playing element's own track where it can: the rate then holds while
      // this page is hidden (the a2v receiver in front), as the webcam's does. Pause, resume and
      // loop act on the element, and so on its track.
      if (!workerStream(capture(el.video))) el.video.requestVideoFrameCallback(onVideoFrame);
      else if (state.paused) send({ t: 'pause', on: true });
      clearError();
    }, (err: Error) => showError(`The video could not play: ${err.message}`));
  }, (err: Error) => {
    URL.revokeObjectURL(url);
    if (seq === state.opened) showError(`${name}: ${err.message}`);
  });
}

/** The video track of `video`'s captureStream() (kept in `captured`), or undefined where there is none. */
function capture(video: HTMLVideoElement): MediaStreamTrack | undefined {
  const cs = (video as { captureStream?: () => MediaStream }).captureStream;
  if (!trackProcessor() || typeof cs !== 'function') return undefined;
  try {
    const s = cs.call(video);
    const track = s.getVideoTracks()[0];
    if (!track) {
      s.getTracks().forEach((t) => t.stop());
      return undefined;
    }
    captured = s;
    return track;
  } catch {
    return undefined;
  }
}

/** MediaError codes in words (2: network, 3: decode, 4: not supported; 1, aborted, needs none). */
const MEDIA_ERRORS: Readonly<Record<number, string>> = {
  2: ' (it could not be read)',
  3: ' (it is damaged or its codec failed)',
  4: ' (not a video format or codec this browser plays)',
};

/** Resolves once the video at `url` has a decoded picture; rejects, in words, when it cannot have one. */
function firstPicture(url: string): Promise<void> {
  const probe = document.createElement('video');
  probe.muted = true;
  probe.preload = 'auto';
  return new Promise<void>((resolve, reject) => {
    probe.addEventListener('loadeddata', () => {
      if (probe.videoWidth > 0) resolve();
      else reject(new Error('it has no picture (an audio file?).'));
    }, { once: true });
    // MediaError's message is the decoder's own ("PipelineStatus::DEMUXER_ERROR_…"): its code says it in words.
    probe.addEventListener('error', () => reject(new Error(`the browser cannot play it as a video${MEDIA_ERRORS[probe.error?.code ?? 0] ?? ''}.`)), { once: true });
    probe.src = url;
  }).finally(() => {
    probe.removeAttribute('src');
    probe.load();
  });
}

/**
 * A live source took over: a still being opened or rendered is no longer what will be shown, and
 * the image of the last one is no source of this (nor of a snapshot of it).
 */
function takeOver(): void {
  if (state.sourceUrl) URL.revokeObjectURL(state.sourceUrl);
  state.sourceUrl = null;
  state.pending = null;
  state.stillBusy = false;
  state.stillDirty = false;
}

function onVideoFrame(): void {
  if (!isLive() || (!state.videoUrl && !state.stream)) return;
  state.newFrame = true;
  pump();
  el.video.requestVideoFrameCallback(onVideoFrame);
}

/**
 * Video element frames go to the worker as they arrive, at most MAX_IN_FLIGHT at a time (two: the
 * worker renders one while the page grabs the next, never a queue), grabbed at the renderer's
 * working resolution (SUB_X x SUB_Y samples per cell) when the video is larger.
 */
const MAX_IN_FLIGHT = 2;

/** A page frame came back from the worker (rendered, failed or dropped): room for the next. */
export function frameDone(): void {
  state.frameInFlight = Math.max(0, state.frameInFlight - 1);
}

export function pump(): void {
  if (!isLive() || state.paused || state.frameInFlight >= MAX_IN_FLIGHT || !state.newFrame) return;
  const video = el.video;
  if (video.readyState < 2 || !video.videoWidth) return;
  state.newFrame = false;
  state.frameInFlight++;
  const vw = video.videoWidth, vh = video.videoHeight;
  const columns = Number(controls.values().columns ?? DEFAULTS.columns);
  let opts: ImageBitmapOptions = {};
  try {
    const rows = gridRows(vw, vh, columns);
    const w = columns * SUB_X, hgt = rows * SUB_Y;
    if (w < vw && hgt < vh) opts = { resizeWidth: w, resizeHeight: hgt, resizeQuality: 'medium' };
  } catch { /* too tall: the worker reports it */ }
  createImageBitmap(video, opts).then(
    (bitmap) => send({ t: 'frame', bitmap, time: performance.now() }, [bitmap]),
    () => { state.frameInFlight--; },
  );
}

/**
 * The fps readout while paused says so (it kept the last rate, ~20 fps, for a stream standing
 * still); the rate counts afresh on resuming, from the frames that come after it.
 */
function resetRate(): void {
  frameTimes.length = 0;
  state.stats.fps = 0;
  fpsEl.textContent = state.paused ? 'paused' : '–';
}

function togglePause(): void {
  state.paused = !state.paused;
  pauseBtn.dataset.on = String(state.paused);
  pauseBtn.textContent = state.paused ? 'Resume' : 'Pause';
  send({ t: 'pause', on: state.paused });
  resetRate();
  if (state.shown.kind === 'video' && state.videoUrl) {
    if (state.paused) el.video.pause();
    else el.video.play().catch((err: Error) => showError(`The video could not play: ${err.message}`));
  }
  if (!state.paused && !workerReads) { state.newFrame = true; pump(); }
  // By `p` or Space the button is not in view, or not where the focus is: the change is said.
  say(state.paused ? 'Paused.' : 'Resumed.');
}

function snapshot(): void {
  if (!state.result || state.result.kind !== 'frame') return;
  const name = `${state.shown.name}-snapshot`;
  stopStream();
  setShown('image', name, state.shown.sourceId);
  setStreamUi();
  // A snapshot is a source that succeeded: an error left by one that failed (a file with no
  // picture, opened while the stream played) is over, as after any other.
  clearError();
  sayFirst('Snapshot taken: a still you can tune and export in every format.');
}

/** Frame meters: fps over the last second, mean glyph changes per frame, codebook choices. */
export function meterFrame(flicker: number | null, choices: number | null | undefined): void {
  const s = state.stats;
  const now = performance.now();
  s.frames++;
  s.lastFrameAt = now;
  // Held frames rendered again while paused are not counted in the rate.
  if (state.paused) return;
  frameTimes.push(now);
  while (frameTimes.length && frameTimes[0]! < now - 1000) frameTimes.shift();
  s.fps = frameTimes.length > 1 ? ((frameTimes.length - 1) * 1000) / (now - frameTimes[0]!) : 0;
  if (choices !== undefined) s.codebookChoices = choices;
  if (flicker !== null) {
    s.flicker = flicker;
    flickers.push(flicker);
    if (flickers.length > frameTimes.length) flickers.splice(0, flickers.length - frameTimes.length);
    s.meanFlicker = flickers.reduce((a, b) => a + b, 0) / flickers.length;
  }
}
