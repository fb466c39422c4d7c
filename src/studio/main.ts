/**
 * The v2a studio page. It owns the sources (file, drop, paste, image URL, webcam, video), the
 * controls and the reports; rendering and painting happen in the worker (worker.ts), so the page
 * stays responsive while the core runs on every frame.
 */
import './styles.css';
import { SUB_X, SUB_Y } from '../core/glyphs/types.js';
import { gridRows } from '../core/pipeline/geometry.js';
import {
  DEFAULTS, type CompactOutput, DARK_GROUND, FORMATS, groundFor, FORMAT_INFO, LIGHT_GROUND, PARAMS, type Format, type RenderParams,
} from '../core/index.js';
import { HANDOFF_MODES, HANDOFF_MODE_INFO, type HandoffManifest, type HandoffMode } from '../contract/handoff.js';
import { ParamControls } from './controls.js';
import { $, fill, h, num } from './dom.js';
import { HandoffSession, TRACE_ID, freshTraceId, targetOriginOf, type HandoffFrame } from './handoff.js';
import type { ExplicitParams, FromWorker, RemoteGrid, ResultInfo, ToWorker, ViewSettings } from './protocol.js';
import { renderCodebook, renderDirector } from './reports.js';

type SourceKind = 'none' | 'image' | 'url' | 'webcam' | 'video';

/** Live numbers for the readouts, the tests and bench/studio.ts. */
export interface StudioStats {
  source: SourceKind;
  results: number;
  frames: number;
  fps: number;
  renderMs: number;
  drawMs: number;
  /** Sums over the stream's frames (means: divide by frames). */
  sumRenderMs: number;
  sumDrawMs: number;
  /** Streams: temporal filter on. */
  temporal: boolean;
  /** Share of glyphs changed in the last frame, and its mean over the last second. */
  flicker: number | null;
  meanFlicker: number | null;
  columns: number;
  rows: number;
  kind: ResultInfo['kind'] | null;
  handoff: { state: string; sent: number; traceId: string | null; handoff: string | null };
}

declare global {
  interface Window {
    __v2aStats: StudioStats;
    __v2aStudio: { useStream(stream: MediaStream, kind?: 'webcam' | 'video'): Promise<void>; explicit(): ExplicitParams };
  }
}

const stats: StudioStats = {
  source: 'none', results: 0, frames: 0, fps: 0, renderMs: 0, drawMs: 0, sumRenderMs: 0, sumDrawMs: 0, temporal: true, flicker: null, meanFlicker: null,
  columns: 0, rows: 0, kind: null, handoff: { state: 'idle', sent: 0, traceId: null, handoff: null },
};
window.__v2aStats = stats;

// ---------------------------------------------------------------------------------------------
// Elements

const canvas = $('#art') as HTMLCanvasElement;
const viewport = $('#viewport');
const statusEl = $('#status');
const readout = $('#readout');
const video = $('#video') as HTMLVideoElement;
const imageFile = $('#image-file') as HTMLInputElement;
const videoFile = $('#video-file') as HTMLInputElement;
const zoomSel = $('#zoom') as HTMLSelectElement;
const groundSel = $('#ground') as HTMLSelectElement;
const streamBar = $('#stream-bar');
const webcamBtn = $('#webcam');
const pauseBtn = $('#pause');
const recordBtn = $('#record');
const inkMono = $('#ink-mono');
const inkColor = $('#ink-color');

function say(text: string, tone: 'info' | 'error' = 'info'): void {
  statusEl.textContent = text;
  statusEl.dataset.tone = tone;
}

// ---------------------------------------------------------------------------------------------
// Worker

const worker = new Worker(new URL('./worker.ts', import.meta.url), { type: 'module', name: 'v2a-render' });
const send = (m: ToWorker, transfer: Transferable[] = []) => worker.postMessage(m, transfer);

let source: SourceKind = 'none';
let sourceName = 'art';
let result: ResultInfo | null = null;
let lastDirectorKey = '';
/** Say what the next still or server result is (after a new source). */
let announce = false;

function view(): ViewSettings {
  const columns = result?.columns ?? 120;
  const rows = result?.rows ?? 45;
  const cssCell = cssCellWidth(columns, rows);
  const ground = groundSel.value === 'dark' ? DARK_GROUND : groundSel.value === 'light' ? LIGHT_GROUND : null;
  return { cell: Math.max(2, Math.min(24, Math.round(cssCell * devicePixelRatio))), ground };
}

const narrow = matchMedia('(max-width: 700px)');
narrow.addEventListener('change', () => layout());

function cssCellWidth(columns: number, rows: number): number {
  if (zoomSel.value !== 'fit') return 6 * Number(zoomSel.value);
  const w = viewport.clientWidth - 24, hgt = viewport.clientHeight - 24;
  // On a phone the preview grows with the art (fit to width); elsewhere it fits the box.
  const byHeight = !narrow.matches && hgt > 80 ? hgt / (rows * 2) : Infinity;
  return Math.max(1, Math.min(w / columns, byHeight, 14));
}

const offscreen = canvas.transferControlToOffscreen();
send({ t: 'canvas', canvas: offscreen, view: view() }, [offscreen]);

let viewKey = '';
function layout(): void {
  if (!result) return;
  const cssCell = cssCellWidth(result.columns, result.rows);
  canvas.style.width = `${result.columns * cssCell}px`;
  canvas.style.height = `${result.rows * cssCell * 2}px`;
  const v = view();
  const key = JSON.stringify(v);
  if (key !== viewKey) {
    viewKey = key;
    send({ t: 'view', view: v });
  }
  const ground = v.ground ?? groundFor(result.params.monoColor);
  viewport.style.setProperty('--ground', ground);
}

new ResizeObserver(() => layout()).observe(viewport);
zoomSel.addEventListener('change', layout);
groundSel.addEventListener('change', layout);

// ---------------------------------------------------------------------------------------------
// Controls

const controls = new ParamControls($('#controls'), $('#presets'));
$('#reset-all').addEventListener('click', () => controls.resetAll());

function syncInk(): void {
  const color = result?.params.color ?? (controls.values().color === true);
  inkMono.setAttribute('aria-pressed', String(!color));
  inkColor.setAttribute('aria-pressed', String(color));
}
inkMono.addEventListener('click', () => controls.set('color', false));
inkColor.addEventListener('click', () => controls.set('color', true));

/** Still renders: one in flight; changes meanwhile are sent when it returns (latest only). */
let stillBusy = false;
let stillDirty = false;
let remoteTimer: ReturnType<typeof setTimeout> | undefined;

function paramsChanged(params: ExplicitParams): void {
  syncInk();
  updateCurl();
  if (source === 'url') {
    clearTimeout(remoteTimer);
    remoteTimer = setTimeout(() => void renderRemote(), 300);
    return;
  }
  if (source === 'image') {
    if (stillBusy) {
      stillDirty = true;
      return;
    }
    stillBusy = true;
  }
  send({ t: 'params', params });
}
controls.onChange = paramsChanged;
send({ t: 'params', params: controls.values() });

// ---------------------------------------------------------------------------------------------
// Results

const directorEl = $('#director');
const codebookEl = $('#codebook');
const fpsEl = $('#fps');
const flickerEl = $('#flicker');
const coreEl = $('#core-ms');
const frameTimes: number[] = [];
const flickers: number[] = [];

function onResult(r: ResultInfo): void {
  result = r;
  stats.results++;
  stats.kind = r.kind;
  stats.columns = r.columns;
  stats.rows = r.rows;
  stats.renderMs = r.renderMs;
  stats.drawMs = r.drawMs;
  viewport.dataset.empty = 'false';
  canvas.setAttribute('aria-label', `Character art preview, ${r.columns} by ${r.rows} cells, ${r.params.charset} glyphs${r.params.color ? ', colour' : ''}`);
  canvas.dataset.columns = String(r.columns);
  canvas.dataset.rows = String(r.rows);
  layout();
  syncInk();

  if (r.kind === 'frame') {
    const now = performance.now();
    stats.frames++;
    stats.sumRenderMs += r.renderMs;
    stats.sumDrawMs += r.drawMs;
    frameTimes.push(now);
    while (frameTimes.length && frameTimes[0]! < now - 1000) frameTimes.shift();
    stats.fps = frameTimes.length > 1 ? ((frameTimes.length - 1) * 1000) / (now - frameTimes[0]!) : 0;
    if (r.flicker !== null) {
      stats.flicker = r.flicker;
      flickers.push(r.flicker);
      if (flickers.length > frameTimes.length) flickers.splice(0, flickers.length - frameTimes.length);
      stats.meanFlicker = flickers.reduce((a, b) => a + b, 0) / flickers.length;
    }
    if (stats.frames % 6 === 0) {
      fpsEl.textContent = num(stats.fps, 1);
      flickerEl.textContent = stats.meanFlicker === null ? '–' : `${num(stats.meanFlicker * 100, 2)}%`;
      coreEl.textContent = `${num(r.renderMs, 1)} ms`;
    }
    onFrameForHandoff(r);
    onFrameForRecording(r);
  } else if (announce) {
    announce = false;
    say(`${sourceName}: ${r.columns}×${r.rows} cells${r.kind === 'remote' ? ', rendered by the server' : ` in ${num(r.renderMs, 0)} ms`}.`);
  }
  if (r.kind !== 'frame' || stats.frames % 10 === 1) {
    readout.textContent = `${r.columns}×${r.rows} · ${r.source.width}×${r.source.height}px${r.kind === 'remote' ? ' · rendered by the server' : ` · ${num(r.renderMs, 0)} ms`}`;
  }

  // Reports: every still; for streams only when the Director's verdict changes (a retune).
  const key = JSON.stringify([r.director.status, r.director.score, r.director.adjustments, r.codebook.glyphs, r.params]);
  if (r.kind !== 'frame' || key !== lastDirectorKey) {
    lastDirectorKey = key;
    fill(directorEl, renderDirector(r.director));
    fill(codebookEl, renderCodebook(r.codebook));
    controls.showEffective(r.params, r.director.adjustments);
  }
  setExportEnabled(true);
}

worker.addEventListener('message', (event: MessageEvent<FromWorker>) => {
  const m = event.data;
  switch (m.t) {
    case 'result':
      if (m.result.kind === 'still') {
        stillBusy = false;
        if (stillDirty) {
          stillDirty = false;
          stillBusy = true;
          send({ t: 'params', params: controls.values() });
        }
      }
      if (m.result.kind === 'frame') frameInFlight = Math.max(0, frameInFlight - 1);
      onResult(m.result);
      if (m.result.kind === 'frame') pump();
      break;
    case 'loaded':
      say(`Rendering ${sourceName} (${m.width}×${m.height} px)…`);
      break;
    case 'export': {
      const pending = exports.get(m.id);
      exports.delete(m.id);
      pending?.resolve({ body: m.body, extension: m.extension, contentType: m.contentType });
      break;
    }
    case 'error':
      if (m.during === 'frame') {
        frameInFlight = Math.max(0, frameInFlight - 1);
        say(`A frame failed: ${m.message}`, 'error');
        return;
      }
      if (m.during === 'export' && m.id !== undefined) {
        exports.get(m.id)?.reject(new Error(m.message));
        exports.delete(m.id);
        return;
      }
      stillBusy = false;
      say(m.message, 'error');
      break;
  }
});
worker.addEventListener('error', (e) => say(`The render worker failed: ${e.message}`, 'error'));

// ---------------------------------------------------------------------------------------------
// Sources: still images (file picker, drop, paste)

let imageId = 0;
function openImage(blob: Blob, name: string): void {
  stopStream();
  source = 'image';
  stats.source = source;
  sourceName = name;
  say(`Decoding ${name}…`);
  announce = true;
  stillBusy = true;
  stillDirty = false;
  send({ t: 'image', id: ++imageId, blob, params: controls.values() });
  setStreamUi();
}

function openFile(file: File): void {
  if (file.type.startsWith('video/')) openVideo(file);
  else if (file.type.startsWith('image/') || file.type === '') openImage(file, file.name || 'image');
  else say(`${file.name} is neither an image nor a video.`, 'error');
}

$('#open-image').addEventListener('click', () => imageFile.click());
$('#open-video').addEventListener('click', () => videoFile.click());
imageFile.addEventListener('change', () => {
  const f = imageFile.files?.[0];
  if (f) openFile(f);
  imageFile.value = '';
});
videoFile.addEventListener('change', () => {
  const f = videoFile.files?.[0];
  if (f) openVideo(f);
  videoFile.value = '';
});

let dragDepth = 0;
window.addEventListener('dragenter', (e) => {
  if (!e.dataTransfer?.types.includes('Files')) return;
  dragDepth++;
  document.body.classList.add('dragging');
});
window.addEventListener('dragleave', () => {
  dragDepth = Math.max(0, dragDepth - 1);
  if (!dragDepth) document.body.classList.remove('dragging');
});
window.addEventListener('dragover', (e) => {
  if (e.dataTransfer?.types.includes('Files')) e.preventDefault();
});
window.addEventListener('drop', (e) => {
  dragDepth = 0;
  document.body.classList.remove('dragging');
  const f = e.dataTransfer?.files[0];
  if (!f) return;
  e.preventDefault();
  openFile(f);
});

document.addEventListener('paste', (e) => {
  const target = e.target as HTMLElement | null;
  const editing = target instanceof HTMLInputElement || target instanceof HTMLTextAreaElement;
  const items = e.clipboardData ? Array.from(e.clipboardData.items) : [];
  const file = items.find((i) => i.kind === 'file' && (i.type.startsWith('image/') || i.type.startsWith('video/')))?.getAsFile();
  if (file) {
    e.preventDefault();
    openFile(file.name ? file : new File([file], 'pasted image', { type: file.type }));
    return;
  }
  if (editing) return;
  const text = e.clipboardData?.getData('text/plain').trim() ?? '';
  if (/^https?:\/\/\S+$/i.test(text)) {
    e.preventDefault();
    urlInput.value = text;
    void startRemote(text);
  }
});

// ---------------------------------------------------------------------------------------------
// Sources: image URL, rendered by the server (its URL rules apply)

const urlInput = $('#url') as HTMLInputElement;
let remoteUrl = '';
let remoteAbort: AbortController | null = null;

$('#url-form').addEventListener('submit', (e) => {
  e.preventDefault();
  const url = urlInput.value.trim();
  if (!url) {
    say('Enter the address of an image (https).', 'error');
    urlInput.focus();
    return;
  }
  void startRemote(url);
});

async function startRemote(url: string): Promise<void> {
  stopStream();
  source = 'url';
  stats.source = source;
  remoteUrl = url;
  sourceName = url.replace(/[?#].*$/, '').split('/').pop() || 'image';
  setStreamUi();
  await renderRemote();
}

/** POST /api/v1/render: the problem+json detail of a failure, or the reply. */
async function apiRender(body: Record<string, unknown>, signal?: AbortSignal): Promise<Response> {
  const res = await fetch('/api/v1/render', {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/plain, */*' },
    body: JSON.stringify(body),
    ...(signal ? { signal } : {}),
  });
  if (!res.ok) {
    let detail = `The server answered ${res.status}.`;
    try {
      const p = (await res.json()) as { detail?: string; title?: string };
      detail = p.detail ?? p.title ?? detail;
    } catch { /* not JSON */ }
    throw new Error(detail);
  }
  return res;
}

async function renderRemote(): Promise<void> {
  remoteAbort?.abort();
  const abort = new AbortController();
  remoteAbort = abort;
  say(`Rendering ${remoteUrl} on the server…`);
  try {
    const { format: _f, ...params } = controls.values();
    const res = await apiRender({ imageUrl: remoteUrl, ...params, format: 'json' }, abort.signal);
    const json = (await res.json()) as RemoteGrid;
    if (abort.signal.aborted || source !== 'url') return;
    announce = true;
    send({ t: 'remote', grid: json });
  } catch (err) {
    if (abort.signal.aborted) return;
    say(`The server could not render that URL: ${(err as Error).message}`, 'error');
  }
}

// ---------------------------------------------------------------------------------------------
// Sources: webcam and video, streamed through FrameRenderer (temporal filter) in the worker

let stream: MediaStream | null = null;
let videoUrl: string | null = null;
let paused = false;
let frameInFlight = 0;
let newFrame = false;

function setStreamUi(): void {
  const live = source === 'webcam' || source === 'video';
  streamBar.hidden = !live;
  webcamBtn.setAttribute('aria-pressed', String(source === 'webcam'));
  webcamBtn.textContent = source === 'webcam' ? 'Stop webcam' : 'Webcam';
  document.body.dataset.source = source;
  updateHandoffModes();
}

function stopStream(): void {
  if (recording) stopRecording();
  if (handoff?.active && handoff.mode !== 'latest-frame') handoff.end('stopped');
  if (source === 'webcam' || source === 'video') send({ t: 'stream', on: false });
  stream?.getTracks().forEach((t) => t.stop());
  stream = null;
  video.pause();
  video.srcObject = null;
  video.removeAttribute('src');
  if (videoUrl) URL.revokeObjectURL(videoUrl);
  videoUrl = null;
  paused = false;
  pauseBtn.setAttribute('aria-pressed', 'false');
  pauseBtn.textContent = 'Pause';
  frameInFlight = 0;
}

async function startVideoElement(kind: 'webcam' | 'video'): Promise<void> {
  source = kind;
  stats.source = kind;
  stats.frames = 0;
  stats.sumRenderMs = 0;
  stats.sumDrawMs = 0;
  stats.flicker = null;
  stats.meanFlicker = null;
  frameTimes.length = 0;
  flickers.length = 0;
  send({ t: 'params', params: controls.values() });
  send({ t: 'stream', on: true });
  setStreamUi();
  await video.play();
  video.requestVideoFrameCallback(onVideoFrame);
}

async function useStream(s: MediaStream, kind: 'webcam' | 'video' = 'webcam'): Promise<void> {
  stopStream();
  stream = s;
  video.srcObject = s;
  await startVideoElement(kind);
}
window.__v2aStudio = { useStream, explicit: () => controls.values() };

async function startWebcam(): Promise<void> {
  if (source === 'webcam') {
    stopStream();
    source = 'none';
    stats.source = source;
    setStreamUi();
    say('Webcam stopped.');
    return;
  }
  if (!navigator.mediaDevices?.getUserMedia) {
    say('This browser offers no camera access here (it needs https or localhost).', 'error');
    return;
  }
  say('Asking for the camera…');
  try {
    const s = await navigator.mediaDevices.getUserMedia({
      video: { width: { ideal: 640 }, height: { ideal: 480 }, frameRate: { ideal: 60 } },
      audio: false,
    });
    sourceName = 'webcam';
    await useStream(s, 'webcam');
    say('Webcam live.');
  } catch (err) {
    const name = (err as DOMException).name;
    say(name === 'NotAllowedError' ? 'Camera access was denied.' : name === 'NotFoundError' ? 'No camera was found.' : `The camera could not start: ${(err as Error).message}`, 'error');
    if (handoff?.active && handoff.mode === 'webcam-stream') handoff.error('camera-denied', 'The camera could not be started for webcam-stream.');
  }
}
webcamBtn.addEventListener('click', () => void startWebcam());

function openVideo(file: File): void {
  stopStream();
  sourceName = file.name || 'video';
  videoUrl = URL.createObjectURL(file);
  video.src = videoUrl;
  say(`Playing ${sourceName}…`);
  startVideoElement('video').catch((err: Error) => say(`The video could not play: ${err.message}`, 'error'));
}

function onVideoFrame(): void {
  if (source !== 'webcam' && source !== 'video') return;
  newFrame = true;
  pump();
  video.requestVideoFrameCallback(onVideoFrame);
}

/**
 * Frames go to the worker as they arrive, at most MAX_IN_FLIGHT at a time (two: the worker renders
 * one while the page grabs the next, never a queue). Each is grabbed at the renderer's working
 * resolution (SUB_X x SUB_Y samples per cell) when the video is larger: the browser's scaler
 * does on capture what the core's area resampling would do, much cheaper, as the server's
 * shrink-on-load does for stills.
 */
const MAX_IN_FLIGHT = 2;
function pump(): void {
  if ((source !== 'webcam' && source !== 'video') || paused || frameInFlight >= MAX_IN_FLIGHT || !newFrame) return;
  if (video.readyState < 2 || !video.videoWidth) return;
  newFrame = false;
  frameInFlight++;
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
    () => { frameInFlight--; },
  );
}

// Steady: the temporal filter and glyph hysteresis on streams (off renders every frame alone).
const steady = $('#steady') as HTMLInputElement;
steady.addEventListener('change', () => {
  stats.temporal = steady.checked;
  send({ t: 'temporal', on: steady.checked });
});

pauseBtn.addEventListener('click', () => {
  paused = !paused;
  pauseBtn.setAttribute('aria-pressed', String(paused));
  pauseBtn.textContent = paused ? 'Resume' : 'Pause';
  if (source === 'video') void (paused ? video.pause() : video.play());
  if (!paused) { newFrame = true; pump(); }
});

$('#snapshot').addEventListener('click', () => {
  if (!result || result.kind !== 'frame') return;
  const name = `${sourceName}-snapshot`;
  stopStream();
  source = 'image';
  stats.source = source;
  sourceName = name;
  stillBusy = true;
  announce = true;
  send({ t: 'snapshot' });
  setStreamUi();
  say('Snapshot taken: a still you can tune and export in every format.');
});

// Recording: json-compact frames, one per line (NDJSON).
let recording: string[] | null = null;
const MAX_RECORDED = 3000;
const recInfo = $('#rec-info');

function onFrameForRecording(r: ResultInfo): void {
  if (!recording || !r.compactLine) return;
  recording.push(r.compactLine);
  recInfo.textContent = `● ${recording.length} frames`;
  if (recording.length >= MAX_RECORDED) stopRecording();
}

function stopRecording(): void {
  if (!recording) return;
  const lines = recording;
  recording = null;
  recordBtn.setAttribute('aria-pressed', 'false');
  recordBtn.textContent = 'Record clip';
  recInfo.textContent = '';
  updateWants();
  if (lines.length) {
    download(lines.join('\n') + '\n', `${base()}-clip.ndjson`, 'application/x-ndjson');
    say(`Clip saved: ${lines.length} json-compact frames, one per line.`);
  }
}

recordBtn.addEventListener('click', () => {
  if (recording) {
    stopRecording();
    return;
  }
  recording = [];
  recordBtn.setAttribute('aria-pressed', 'true');
  recordBtn.textContent = 'Stop & save';
  updateWants();
});

function updateWants(): void {
  send({ t: 'wants', compact: !!handoff?.active && handoff.mode !== 'latest-frame', compactLine: recording !== null });
}

// ---------------------------------------------------------------------------------------------
// Export: copy and download in every format

const exports = new Map<number, { resolve: (v: { body: string; extension: string; contentType: string }) => void; reject: (e: Error) => void }>();
let exportId = 0;

async function exportAs(format: Format): Promise<{ body: string; extension: string; contentType: string }> {
  if (source === 'url') {
    const { format: _f, ...params } = controls.values();
    const res = await apiRender({ imageUrl: remoteUrl, ...params, format });
    return { body: await res.text(), extension: FORMAT_INFO[format].extension, contentType: res.headers.get('content-type') ?? FORMAT_INFO[format].contentType };
  }
  const id = ++exportId;
  return new Promise((resolve, reject) => {
    exports.set(id, { resolve, reject });
    send({ t: 'export', id, format });
  });
}

function base(): string {
  return ('v2a-' + sourceName.replace(/\.[a-z0-9]+$/i, '')).replace(/[^a-z0-9._-]+/gi, '-').replace(/-+/g, '-').slice(0, 60);
}

function fileName(format: Format): string {
  return `${base()}${format === 'json-compact' ? '.compact' : ''}.${FORMAT_INFO[format].extension}`;
}

function download(body: string, name: string, type: string): void {
  const url = URL.createObjectURL(new Blob([body], { type }));
  const a = h('a', { href: url, download: name });
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

function currentFormat(): Format {
  return (controls.values().format as Format | undefined) ?? 'text';
}

async function copyText(text: string): Promise<void> {
  try {
    await navigator.clipboard.writeText(text);
  } catch {
    const ta = h('textarea', { class: 'sr-only', 'aria-hidden': 'true' });
    ta.value = text;
    document.body.append(ta);
    ta.select();
    document.execCommand('copy');
    ta.remove();
  }
}

const copyBtn = $('#copy') as HTMLButtonElement;
const downloadBtn = $('#download') as HTMLButtonElement;
const downloads = $('#downloads');
const downloadButtons = FORMATS.map((format) => {
  const info = FORMAT_INFO[format];
  const b = h('button', { type: 'button', class: 'btn small fmt', 'data-format': format, title: `Download ${info.label} (.${info.extension})`, disabled: true },
    h('span', { text: format }), h('small', { text: `.${info.extension}` }));
  b.setAttribute('aria-label', `Download ${format} (${info.label}, .${info.extension})`);
  b.addEventListener('click', () => void doDownload(format));
  downloads.append(b);
  return b;
});

function setExportEnabled(on: boolean): void {
  copyBtn.disabled = !on;
  downloadBtn.disabled = !on;
  for (const b of downloadButtons) b.disabled = !on;
  const f = currentFormat();
  $('#export-format').textContent = `${f} · .${FORMAT_INFO[f].extension}`;
}

async function doDownload(format: Format): Promise<void> {
  try {
    const out = await exportAs(format);
    download(out.body, fileName(format), out.contentType);
    say(`Saved ${fileName(format)}.`);
  } catch (err) {
    say(`Export failed: ${(err as Error).message}`, 'error');
  }
}

copyBtn.addEventListener('click', async () => {
  try {
    const format = currentFormat();
    const out = await exportAs(format);
    await copyText(out.body);
    say(`Copied the ${format} output (${out.body.length} characters).`);
  } catch (err) {
    say(`Copy failed: ${(err as Error).message}`, 'error');
  }
});
downloadBtn.addEventListener('click', () => void doDownload(currentFormat()));

const curlEl = $('#curl');
function updateCurl(): void {
  const { format, ...params } = controls.values();
  const quote = (s: string) => (/^[\w.,:/@%+=-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`);
  const fields = Object.entries({ ...params, format: format ?? currentFormat() }).map(([k, v]) => ` \\\n  -F ${quote(`${k}=${String(v)}`)}`);
  const image = source === 'url' ? `imageUrl=${remoteUrl}` : `image=@${sourceName === 'art' ? 'image.png' : sourceName}`;
  curlEl.textContent = `curl -sS ${location.origin}/api/v1/render \\\n  -F ${quote(image)}${fields.join('')}`;
}
updateCurl();
$('#copy-curl').addEventListener('click', () => void copyText(curlEl.textContent ?? '').then(() => say('Copied the curl command.')));

// ---------------------------------------------------------------------------------------------
// The a2v handoff

let manifest: HandoffManifest | null = null;
let handoff: HandoffSession | null = null;
const modeSel = $('#handoff-mode') as HTMLSelectElement;
const traceInput = $('#trace-id') as HTMLInputElement;
const handoffStart = $('#handoff-start') as HTMLButtonElement;
const handoffStop = $('#handoff-stop') as HTMLButtonElement;
const handoffStatus = $('#handoff-status');

for (const mode of HANDOFF_MODES) modeSel.append(h('option', { value: mode, text: mode, title: HANDOFF_MODE_INFO[mode] }));

function updateHandoffModes(): void {
  if (handoff?.active) return;
  if (source === 'webcam') modeSel.value = 'webcam-stream';
  else if (source === 'video') modeSel.value = 'video-stream';
  else if (source === 'image' || source === 'url') modeSel.value = 'latest-frame';
}

async function loadManifest(): Promise<void> {
  const receiverEl = $('#handoff-receiver');
  try {
    const res = await fetch('/api/v1/a2v-handoff');
    if (!res.ok) throw new Error(`status ${res.status}`);
    const m = (await res.json()) as HandoffManifest;
    const origin = targetOriginOf(m);
    manifest = m;
    fill(receiverEl, 'Receiver ', h('code', { text: origin }), ' · protocol ', h('code', { text: m.protocol }));
    handoffStart.disabled = false;
  } catch (err) {
    receiverEl.textContent = `The handoff manifest is unavailable: ${(err as Error).message}`;
  }
}
void loadManifest();

function setHandoffStatus(state: string, detail: string): void {
  handoffStatus.textContent = detail;
  handoffStatus.dataset.state = state;
  stats.handoff.state = state;
  const active = handoff?.active ?? false;
  handoffStart.disabled = active || !manifest;
  handoffStop.disabled = !active;
  modeSel.disabled = active;
  traceInput.disabled = active;
  updateWants();
}

/** The current frame as a handoff payload (a still: its json-compact export). */
async function latestFrame(): Promise<HandoffFrame | null> {
  if (!result) return null;
  const director = { status: result.director.status, rubric: result.director.rubric, score: result.director.score };
  if (result.kind === 'frame' && result.compact) {
    const c = result.compact;
    return { columns: c.columns, rows: c.rows, text: c.text, ...(result.params.color ? { chroma: c.chroma } : {}), director };
  }
  const out = await exportAs('json-compact');
  const c = JSON.parse(out.body) as CompactOutput;
  return { columns: c.columns, rows: c.rows, text: c.text, ...(result.params.color ? { chroma: c.chroma } : {}), director };
}

function onFrameForHandoff(r: ResultInfo): void {
  if (!handoff || handoff.state !== 'ready' || handoff.mode === 'latest-frame' || !r.compact) return;
  const c = r.compact;
  handoff.sendFrame({
    columns: c.columns, rows: c.rows, text: c.text,
    ...(r.params.color ? { chroma: c.chroma } : {}),
    director: { status: r.director.status, rubric: r.director.rubric, score: r.director.score },
  });
  stats.handoff.sent = handoff.sent;
  if (handoff.sent % 15 === 1) handoffStatus.textContent = `Streaming to ${handoff.targetOrigin} · frames sent: ${handoff.sent}`;
}

handoffStart.addEventListener('click', () => {
  if (!manifest) return;
  const mode = modeSel.value as HandoffMode;
  const given = traceInput.value.trim().toLowerCase();
  if (given && !TRACE_ID.test(given)) {
    traceInput.setAttribute('aria-invalid', 'true');
    setHandoffStatus('error', 'The trace id must be 32 hex characters (or empty for a random one).');
    return;
  }
  traceInput.removeAttribute('aria-invalid');
  if (mode === 'video-stream' && source !== 'video') {
    setHandoffStatus('error', 'Open a video file first for video-stream.');
    return;
  }
  if (mode === 'latest-frame' && !result) {
    setHandoffStatus('error', 'Render something first: latest-frame sends the current frame.');
    return;
  }
  const traceId = given || freshTraceId();
  let session: HandoffSession;
  try {
    session = new HandoffSession(manifest, mode, traceId);
  } catch (err) {
    setHandoffStatus('error', (err as Error).message);
    return;
  }
  handoff = session;
  stats.handoff = { state: 'opening', sent: 0, traceId, handoff: session.handoff };
  session.onState = (state, detail) => {
    if (handoff === session) setHandoffStatus(state, detail);
  };
  session.onReady = () => {
    if (mode !== 'latest-frame') return;
    void latestFrame().then((frame) => {
      if (frame) session.sendFrame(frame);
      stats.handoff.sent = session.sent;
      session.end('complete');
    });
  };
  traceInput.placeholder = traceId;
  $('#handoff-trace').textContent = `trace ${traceId} · handoff ${session.handoff.slice(0, 8)}…`;
  if (!session.open()) return;
  if (mode === 'webcam-stream' && source !== 'webcam') void startWebcam();
  updateWants();
});

handoffStop.addEventListener('click', () => handoff?.end('stopped'));

// ---------------------------------------------------------------------------------------------
// Keyboard

document.addEventListener('keydown', (e) => {
  const t = e.target as HTMLElement;
  if (e.ctrlKey || e.metaKey || e.altKey || t.closest('input, select, textarea, [contenteditable]')) return;
  if (e.key === 'o') { e.preventDefault(); imageFile.click(); }
  else if (e.key === 'w') { e.preventDefault(); void startWebcam(); }
  else if (e.key === ' ' && (source === 'webcam' || source === 'video') && t === document.body) { e.preventDefault(); pauseBtn.click(); }
});

// Every PARAMS entry has a control: a guard against drift (the controls are generated from it).
if (document.querySelectorAll('[data-param]').length !== PARAMS.length) say('Some parameter controls are missing.', 'error');
setStreamUi();
say('Open an image, drop or paste one, start the webcam, or play a video.');
export type { RenderParams };
