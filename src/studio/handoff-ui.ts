/**
 * The "Send to A2V" card: reads the handoff manifest, opens the receiver and feeds it frames
 * (handoff.ts speaks the protocol). webcam-stream starts the camera itself when it is not running
 * and keeps the handoff across that start; the stream's frames come from the worker's own loop,
 * so the rate holds while the receiver's window is in front.
 */
import { HANDOFF_MODES, type HandoffManifest, type HandoffMode } from '../contract/handoff.js';
import type { CompactOutput } from '../core/index.js';
import { apiUrl } from './api-url.js';
import { $, fill, h } from './dom.js';
import { exportAs } from './export.js';
import { HandoffSession, TRACE_ID, freshTraceId, targetOriginOf, type HandoffFrame } from './handoff.js';
import type { ResultInfo } from './protocol.js';
import { updateWants } from './recording.js';
import { state } from './state.js';
import { startWebcam, streamHooks } from './stream.js';

const MODE_LABELS: Readonly<Record<HandoffMode, string>> = {
  'latest-frame': 'This picture, once',
  'webcam-stream': 'The webcam, live',
  'video-stream': 'The video file, live',
};

const modeSel = $('#handoff-mode') as HTMLSelectElement;
const traceInput = $('#trace-id') as HTMLInputElement;
const startBtn = $('#handoff-start') as HTMLButtonElement;
const stopBtn = $('#handoff-stop') as HTMLButtonElement;
const statusEl = $('#handoff-status');
// The running count is not in the live region: read out twice a second, it would drown the rest.
const sentEl = $('#handoff-sent');

export function handoffWantsCompact(): boolean {
  const s = state.handoff;
  return !!s?.active && s.mode !== 'latest-frame';
}

/** The count of frames sent the status shows, and when it was written. */
let shownSent = 0;
let shownAt = 0;
let sentLater: ReturnType<typeof setTimeout> | undefined;

function setStatus(st: string, detail: string): void {
  statusEl.textContent = detail;
  sentEl.textContent = '';
  shownSent = 0;
  clearTimeout(sentLater);
  statusEl.dataset.state = st;
  state.stats.handoff.state = st;
  const active = state.handoff?.active ?? false;
  startBtn.disabled = active || !state.manifest;
  stopBtn.disabled = !active;
  modeSel.disabled = active;
  traceInput.disabled = active;
  updateWants();
}

/** Picks the mode that fits the shown source (unless a handoff runs). */
export function suggestMode(): void {
  if (state.handoff?.active) return;
  const k = state.shown.kind;
  modeSel.value = k === 'webcam' ? 'webcam-stream' : k === 'video' ? 'video-stream' : 'latest-frame';
}

async function loadManifest(): Promise<void> {
  const receiverEl = $('#handoff-receiver');
  try {
    const res = await fetch(apiUrl('handoff'));
    if (!res.ok) throw new Error(`status ${res.status}`);
    const m = (await res.json()) as HandoffManifest;
    const origin = targetOriginOf(m);
    state.manifest = m;
    fill(receiverEl, 'Receiver: ', h('code', { text: origin }));
    receiverEl.title = `Protocol ${m.protocol}`;
    startBtn.disabled = false;
  } catch (err) {
    receiverEl.textContent = `The handoff is unavailable: ${(err as Error).message}`;
  }
}

function payload(c: CompactOutput | { columns: number; rows: number; text: string; chroma: CompactOutput['chroma'] }, r: ResultInfo): HandoffFrame {
  return {
    columns: c.columns, rows: c.rows, text: c.text,
    ...(r.params.color ? { chroma: c.chroma } : {}),
    director: { status: r.director.status, rubric: r.director.rubric, score: r.director.score },
  };
}

/** The shown picture as a handoff frame (a still: its json-compact export). */
async function latestFrame(): Promise<HandoffFrame | null> {
  const r = state.result;
  if (!r) return null;
  if (r.kind === 'frame' && r.compact) return payload(r.compact, r);
  const out = await exportAs('json-compact');
  return payload(JSON.parse(out.body as string) as CompactOutput, r);
}

export function onFrameForHandoff(r: ResultInfo): void {
  const s = state.handoff;
  if (!s || s.state !== 'ready' || s.mode === 'latest-frame' || !r.compact) return;
  s.sendFrame(payload(r.compact, r));
  state.stats.handoff.sent = s.sent;
  if (s.sent === 1) statusEl.textContent = `Streaming to ${s.targetOrigin}`;
  showSent();
}

/**
 * The count of frames sent, written at most once a second, by time: every 15th frame, as before,
 * stood seconds behind at a receiver's low maxFps (1 while 11 had arrived). A count held back is
 * written once the second is up, so that a stream that stops or pauses shows its last count.
 */
function showSent(): void {
  const s = state.handoff;
  clearTimeout(sentLater);
  if (!s || s.sent === shownSent) return;
  const wait = shownSent === 0 ? 0 : shownAt + 1000 - performance.now();
  if (wait > 0) {
    sentLater = setTimeout(showSent, wait);
    return;
  }
  sentEl.textContent = `Frames sent: ${s.sent}`;
  shownSent = s.sent;
  shownAt = performance.now();
}

function start(): void {
  const manifest = state.manifest;
  if (!manifest) return;
  const mode = modeSel.value as HandoffMode;
  const given = traceInput.value.trim().toLowerCase();
  if (given && !TRACE_ID.test(given)) {
    traceInput.setAttribute('aria-invalid', 'true');
    // The words saying what is wrong are the field's description, heard when it takes the focus again.
    traceInput.setAttribute('aria-describedby', statusEl.id);
    setStatus('error', 'The trace id must be 32 hex characters (or empty for a random one).');
    return;
  }
  traceInput.removeAttribute('aria-invalid');
  traceInput.removeAttribute('aria-describedby');
  if (mode === 'video-stream' && state.shown.kind !== 'video') {
    setStatus('error', 'Open a video file first to send it live.');
    return;
  }
  if (mode === 'latest-frame' && !state.result) {
    setStatus('error', 'Render something first: this sends the picture on screen.');
    return;
  }
  const traceId = given || freshTraceId();
  let session: HandoffSession;
  try {
    session = new HandoffSession(manifest, mode, traceId);
  } catch (err) {
    setStatus('error', (err as Error).message);
    return;
  }
  state.handoff = session;
  state.stats.handoff = { state: 'opening', sent: 0, traceId, handoff: session.handoff };
  session.onState = (st, detail) => {
    if (state.handoff === session) setStatus(st, detail);
  };
  session.onReady = () => {
    if (mode !== 'latest-frame') return;
    void latestFrame().then((frame) => {
      if (frame) session.sendFrame(frame);
      state.stats.handoff.sent = session.sent;
      session.end('complete');
    });
  };
  traceInput.placeholder = traceId;
  $('#handoff-trace').textContent = `trace ${traceId} · handoff ${session.handoff.slice(0, 8)}…`;
  // The receiver window opens first (inside the click: popup blockers), then the camera starts
  // without ending the handoff that just began.
  if (!session.open()) return;
  if (mode === 'webcam-stream' && state.shown.kind !== 'webcam') void startWebcam({ keepHandoff: true });
  updateWants();
}

export function initHandoffUi(): void {
  for (const mode of HANDOFF_MODES) modeSel.append(h('option', { value: mode, text: MODE_LABELS[mode] ?? mode }));
  startBtn.addEventListener('click', start);
  stopBtn.addEventListener('click', () => state.handoff?.end('stopped'));
  // A stream handoff ends with its stream; a camera that cannot start ends webcam-stream.
  streamHooks.ended = (kind) => {
    const s = state.handoff;
    if (s?.active && ((kind === 'webcam' && s.mode === 'webcam-stream') || (kind === 'video' && s.mode === 'video-stream'))) s.end('stopped');
  };
  streamHooks.cameraFailed = (message) => {
    const s = state.handoff;
    if (s?.active && s.mode === 'webcam-stream') s.error('camera-denied', message);
  };
  void loadManifest();
}
