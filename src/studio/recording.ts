/**
 * Recording a stream: a WebM clip of the art (MediaRecorder on the art canvas's own stream, so
 * the clip is exactly what is painted, at the painted size), or json-compact frames, one per line
 * (NDJSON), for programs.
 */
import { $ } from './dom.js';
import { el, say, showError } from './layout.js';
import { downloadBlob, exportBase } from './export.js';
import type { ResultInfo } from './protocol.js';
import { state } from './state.js';
import { send } from './worker-link.js';
import { handoffWantsCompact } from './handoff-ui.js';
import { finishWebm } from './webm.js';
import { ndjsonParts } from './ndjson.js';

const recordBtn = $('#record');
const recordAs = $('#record-as') as HTMLSelectElement;
const recInfo = $('#rec-info');
/** Bounds a recording: json-compact lines kept in memory, and seconds of WebM. */
const MAX_LINES = 3000;
const MAX_WEBM_MS = 5 * 60_000;
let webmTimer: ReturnType<typeof setTimeout> | undefined;
let meterTimer: ReturnType<typeof setInterval> | undefined;

export function updateWants(): void {
  send({ t: 'wants', compact: handoffWantsCompact(), compactLine: state.recording?.kind === 'ndjson' });
}

function webmType(): string | null {
  for (const t of ['video/webm;codecs=vp9', 'video/webm;codecs=vp8', 'video/webm']) if (MediaRecorder.isTypeSupported(t)) return t;
  return null;
}

function startRecording(): void {
  if (recordAs.value === 'webm') {
    const type = typeof MediaRecorder === 'undefined' ? null : webmType();
    if (!type) {
      showError('This browser cannot record WebM; record json-compact frames instead.');
      return;
    }
    let stream: MediaStream;
    try {
      stream = el.canvas.captureStream(30);
    } catch (err) {
      showError(`The art cannot be recorded here: ${(err as Error).message}`);
      return;
    }
    const recorder = new MediaRecorder(stream, { mimeType: type, videoBitsPerSecond: 4_000_000 });
    const rec = { kind: 'webm' as const, recorder, chunks: [] as Blob[], bytes: 0, started: performance.now(), stopped: 0 };
    recorder.addEventListener('dataavailable', (e) => {
      if (!e.data.size) return;
      rec.chunks.push(e.data);
      rec.bytes += e.data.size;
      webmMeter(rec);
    });
    recorder.addEventListener('stop', () => {
      stream.getTracks().forEach((t) => t.stop());
      if (!rec.chunks.length) {
        // The encoder had produced nothing yet (a clip stopped within its first moments).
        showError('The clip was too short to encode: record for a second or more.');
        return;
      }
      // Named now: the source may change while the clip is read.
      const name = `${exportBase()}-clip.webm`;
      void new Blob(rec.chunks).arrayBuffer().then((bytes) => {
        // The frames the file holds (the encoder takes fewer than the art's results), and its length.
        const clip = finishWebm(new Uint8Array(bytes), rec.stopped - rec.started);
        const blob = new Blob([...clip.parts], { type: 'video/webm' });
        downloadBlob(blob, name);
        say(`Clip saved: ${clip.frames} frames as WebM (${Math.round(blob.size / 1024)} KiB).`);
      }).catch(clipLost);
    });
    recorder.start(1000);
    state.recording = rec;
    webmTimer = setTimeout(stopRecording, MAX_WEBM_MS);
    // On a clock, not on the art's results: a paused source records on, its art held.
    webmMeter(rec);
    meterTimer = setInterval(() => webmMeter(rec), 250);
  } else {
    state.recording = { kind: 'ndjson', lines: [] };
  }
  recordBtn.dataset.on = 'true';
  recordBtn.textContent = 'Stop and save';
  recordAs.disabled = true;
  updateWants();
}

export function stopRecording(): void {
  const rec = state.recording;
  if (!rec) return;
  state.recording = null;
  clearTimeout(webmTimer);
  clearInterval(meterTimer);
  recordBtn.dataset.on = 'false';
  recordBtn.textContent = 'Record clip';
  recordAs.disabled = false;
  recInfo.textContent = '';
  updateWants();
  if (rec.kind === 'webm') {
    rec.stopped = performance.now();
    if (rec.recorder.state !== 'inactive') rec.recorder.stop();
    return;
  }
  if (rec.lines.length) {
    try {
      downloadBlob(new Blob(ndjsonParts(rec.lines), { type: 'application/x-ndjson' }), `${exportBase()}-clip.ndjson`);
      say(`Clip saved: ${rec.lines.length} json-compact frames, one per line.`);
    } catch (err) {
      clipLost(err);
    }
  }
}

/** A clip that could not be saved (out of memory, say) is told, not lost without a word. */
function clipLost(err: unknown): void {
  showError(`The clip could not be saved: ${err instanceof Error ? err.message : String(err)}`);
}

/**
 * A WebM recording's time, and its size once the encoder has written (a busy machine's encoder may
 * lag the art by seconds, and a clip stopped before then has nothing to save). The frames it
 * holds are known once it is saved (see finishWebm).
 */
function webmMeter(rec: { started: number; bytes: number }): void {
  if (state.recording !== rec) return;
  const s = Math.floor((performance.now() - rec.started) / 1000);
  recInfo.textContent = rec.bytes ? `● ${s} s, ${Math.max(1, Math.round(rec.bytes / 1024))} KiB` : `● ${s} s`;
}

export function onFrameForRecording(r: ResultInfo): void {
  const rec = state.recording;
  if (rec?.kind !== 'ndjson' || !r.compactLine) return;
  rec.lines.push(r.compactLine);
  recInfo.textContent = `● ${rec.lines.length} frames`;
  if (rec.lines.length >= MAX_LINES) stopRecording();
}

export function initRecording(): void {
  recordBtn.addEventListener('click', () => (state.recording ? stopRecording() : startRecording()));
}
