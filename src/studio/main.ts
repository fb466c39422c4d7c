/**
 * The v2a studio page: wires its parts around one state object (state.ts). Sources (sources.ts,
 * stream.ts), the stage (layout.ts), export (export.ts), recording (recording.ts) and the a2v
 * handoff (handoff-ui.ts); rendering and painting happen in the worker (worker.ts), so the page
 * stays responsive while the core runs on every frame.
 */
import './styles.css';
import { DEFAULTS, PARAMS, type RenderParams } from '../core/index.js';
import { artLabel } from '../core/format/escape.js';
import { ParamControls } from './controls.js';
import { $, fill, h, num } from './dom.js';
import { initExport, setExportEnabled, updateCurl } from './export.js';
import { initHandoffUi, onFrameForHandoff, suggestMode } from './handoff-ui.js';
import { DARK_INK, LIGHT_GROUND_INK, STYLE_PRESETS, groundIsLight } from './labels.js';
import { artSummary, clearError, el, initialView, layout, say, sayFirst, sayLater, showError, zoomNote } from './layout.js';
import type { ExplicitParams, FromWorker, ResultInfo } from './protocol.js';
import { initRecording, onFrameForRecording, updateWants } from './recording.js';
import { renderCodebook, renderDirector } from './reports.js';
import { serverLimits } from './server-api.js';
import { saveSettings, savedSettings } from './settings-store.js';
import { initSources, pendingFailed, pendingLoaded, pendingRendered, rerenderOnServer, stillDropped, useServerLimits, wireSources } from './sources.js';
import { isLive, state, type StudioStats } from './state.js';
import { frameDone, initStream, meterFrame, pump, setStreamUi, stopStream } from './stream.js';
import { send, settleExport, worker } from './worker-link.js';

declare global {
  interface Window {
    __v2aStats: StudioStats;
    __v2aStudio: { useStream(stream: MediaStream, kind?: 'webcam' | 'video'): Promise<void>; explicit(): ExplicitParams; settled(): boolean };
  }
}

window.__v2aStats = state.stats;

const controls = new ParamControls($('#controls'), $('#presets'));
// settled(): no still opening, rendering or queued, so the last result is what the controls ask for
// (a result counted alone may be an earlier render's, when changes came while one was in flight).
window.__v2aStudio = { useStream: async () => {}, explicit: () => controls.values(), settled: () => !state.pending && !state.stillBusy && !state.stillDirty };

const offscreen = el.canvas.transferControlToOffscreen();
send({ t: 'canvas', canvas: offscreen, view: initialView() }, [offscreen]);

initSources(controls);
initStream(controls);
initExport(controls);
initRecording();
initHandoffUi();
wireSources();
void serverLimits().then((limits) => {
  useServerLimits(limits);
  updateCurl();
});

// ---------------------------------------------------------------------------------------------
// Controls, and the stage's ink, ground and style buttons (plain parameter sets)

$('#reset-all').addEventListener('click', () => controls.resetAll());

const inkMono = $('#ink-mono');
const inkColor = $('#ink-color');
const groundDark = $('#ground-dark');
const groundLight = $('#ground-light');
const styles = $('#styles');
/**
 * On a light ground the ink is dark: tones are inverted so that bright areas stay light, but line
 * art is not, since its lines are the ink either way (inverted, it drew the ground in `@`s and
 * the edges as gaps).
 */
const invertOn = (light: boolean, edges: boolean): boolean => light && !edges;
const lightGround = (): boolean => groundIsLight(String(controls.current('monoColor') ?? DEFAULTS.monoColor));
const styleButtons = STYLE_PRESETS.map((p) => {
  const b = h('button', { type: 'button', class: 'chip style', 'data-style': p.id, 'aria-pressed': 'false', title: p.hint, text: p.label });
  // A style keeps the ground: on a light one, the invert that suits its tones or lines.
  b.addEventListener('click', () => controls.setMany(lightGround() ? { ...p.params, invert: invertOn(true, p.params.edges === true) } : p.params));
  styles.append(b);
  return { preset: p, button: b };
});
// The controls and styles are built: show the page (hidden until now so nothing jumps into place).
document.documentElement.classList.add('ready');

/** The stage buttons show the values in force: set by the user, else those of the last render. */
function syncStageButtons(): void {
  const color = controls.current('color') === true;
  inkMono.setAttribute('aria-pressed', String(!color));
  inkColor.setAttribute('aria-pressed', String(color));
  const light = lightGround();
  groundDark.setAttribute('aria-pressed', String(!light));
  groundLight.setAttribute('aria-pressed', String(light));
  for (const { preset, button } of styleButtons) {
    const on = Object.entries(preset.params).every(([k, v]) => controls.current(k) === v);
    button.setAttribute('aria-pressed', String(on));
  }
}
inkMono.addEventListener('click', () => controls.set('color', false));
inkColor.addEventListener('click', () => controls.set('color', true));
// Ground, ink and invert move together, so no choice leaves the art invisible: a light ground
// takes dark ink and inverted tones (bright areas stay light; line art's lines stay the ink), a
// dark ground the reverse.
groundDark.addEventListener('click', () => controls.setMany({ monoColor: DARK_INK, invert: false }));
groundLight.addEventListener('click', () => controls.setMany({ monoColor: LIGHT_GROUND_INK, invert: invertOn(true, controls.current('edges') === true) }));

function paramsChanged(params: ExplicitParams): void {
  syncStageButtons();
  updateCurl();
  const kind = state.shown.kind;
  if (kind === 'server') {
    // A still being opened replaces the server's picture: the worker renders it with these.
    if (state.pending) send({ t: 'params', params });
    else rerenderOnServer();
    return;
  }
  if (kind === 'image') {
    if (state.stillBusy) {
      state.stillDirty = true;
      return;
    }
    state.stillBusy = true;
  }
  send({ t: 'params', params });
}
// The settings of the last visit, before the first render asks for any.
for (const [name, value] of Object.entries(savedSettings())) controls.set(name, value, false);
syncStageButtons();
let lastEdges = controls.current('edges') === true;
controls.onChange = (params) => {
  // Line art turned on or off by its own control on a light ground: the invert follows it, as the
  // ground and style buttons set it (else the lines came out as a negative, or tones uninverted).
  const edges = controls.current('edges') === true;
  if (edges !== lastEdges && lightGround() && controls.current('invert') !== invertOn(true, edges)) {
    controls.set('invert', invertOn(true, edges), false);
    params = controls.values();
  }
  lastEdges = edges;
  saveSettings(params);
  paramsChanged(params);
};
send({ t: 'params', params: controls.values() });

// ---------------------------------------------------------------------------------------------
// Results

const directorEl = $('#director');
const codebookEl = $('#codebook');
const fpsEl = $('#fps');
const flickerEl = $('#flicker');
let lastReportKey = '';
let lastShape = '';

function onResult(r: ResultInfo): void {
  // The picture shown rendered again for changed settings (its source's number unchanged, or a
  // server render again), not a picture opened.
  const rerender = r.sourceId === state.result?.sourceId || r.sourceId === state.rerenderSourceId;
  state.result = r;
  const s = state.stats;
  s.results++;
  s.kind = r.kind;
  s.columns = r.columns;
  s.rows = r.rows;
  s.renderMs = r.renderMs;
  s.drawMs = r.drawMs;
  // A stream's frames mostly repeat the last one's shape: the page (its style, layout and paint,
  // on the core the render worker shares on a small machine) is touched only when it changed.
  const shape = [r.kind, r.columns, r.rows, r.params.color, r.params.format, state.shown.kind, state.handoff?.active ?? false].join(' ');
  const reshaped = r.kind !== 'frame' || shape !== lastShape;
  lastShape = shape;
  if (reshaped) {
    el.viewport.dataset.empty = 'false';
    el.canvas.setAttribute('aria-label', artLabel(r.columns, r.rows, r.params.color));
    el.canvas.dataset.columns = String(r.columns);
    el.canvas.dataset.rows = String(r.rows);
    layout();
  }

  if (r.kind === 'frame') {
    s.sumRenderMs += r.renderMs;
    s.sumDrawMs += r.drawMs;
    s.sumFrontMs += r.frontMs ?? 0;
    meterFrame(r.flicker, r.codebookChoices);
    // A paused stream's held frame, rendered again for new settings, is no frame of the stream: the readout says paused.
    if (s.frames % 6 === 0 && !state.paused) {
      fpsEl.textContent = num(s.fps, 1);
      flickerEl.textContent = s.meanFlicker === null ? '–' : `${num(s.meanFlicker * 100, 2)}%`;
    }
    onFrameForHandoff(r);
    onFrameForRecording(r);
  } else {
    const note = zoomNote();
    // A change of settings is told once the changes stop, in a few words (not while a still is
    // being opened: its news comes next).
    if (!rerender) say(`${artSummary(state.shown.name, r.columns, r.rows)}${r.kind === 'remote' ? ', rendered by the server' : `, rendered in ${num(r.renderMs, 0)} ms after decoding`}.${note ? ` ${note}` : ''}`);
    else if (!state.pending) sayLater(`Art updated: ${r.columns}×${r.rows} characters.${note ? ` ${note}` : ''}`);
  }
  if (r.kind !== 'frame' || s.frames % 10 === 1) {
    el.readout.textContent = `${r.columns}×${r.rows} · ${r.source.width}×${r.source.height} px${r.kind === 'remote' ? ' · server' : ` · ${num(r.renderMs, 0)} ms`}`;
  }

  // Reports: every still; for streams only when the verdict changes (a retune).
  const key = JSON.stringify([r.director.status, r.director.score, r.director.adjustments, r.codebook.glyphs, r.params]);
  if (r.kind !== 'frame' || key !== lastReportKey) {
    lastReportKey = key;
    fill(directorEl, renderDirector(r.director, r.inkCoverage));
    fill(codebookEl, renderCodebook(r.codebook));
    controls.showEffective(r.params, r.director.adjustments);
    syncStageButtons();
  }
  if (reshaped) {
    setExportEnabled(true);
    updateCurl();
    suggestMode();
  }
}

/**
 * The frame failure shown for a stream: told once, not rewritten on every failing frame (a
 * dozen times a second, undismissable, hiding any later message); cleared by the next good frame.
 */
let frameFailure: { text: string; sourceId: number } | null = null;

worker.addEventListener('message', (event: MessageEvent<FromWorker>) => {
  const m = event.data;
  if (settleExport(m)) return;
  switch (m.t) {
    case 'result': {
      const r = m.result;
      // A result of a source shown before this one (a snapshot or still render in flight when a
      // stream took over, a frame in flight when the stream stopped) is no news of the source
      // shown: the status line, readout and reports stay with that one.
      const current = r.sourceId >= state.shown.sourceId;
      if (r.kind === 'still') {
        pendingRendered(r.id);
        if (current) {
          state.stillBusy = false;
          if (state.stillDirty) {
            state.stillDirty = false;
            state.stillBusy = true;
            send({ t: 'params', params: controls.values() });
          }
        }
      }
      if (r.kind === 'frame') frameDone();
      if (current && r.kind === 'frame' && frameFailure) {
        if (!el.error.hidden && el.errorText.textContent === frameFailure.text) clearError();
        frameFailure = null;
      }
      if (current) onResult(r);
      if (r.kind === 'frame') pump();
      break;
    }
    case 'dropped':
      stillDropped(m.id);
      break;
    case 'loaded':
      pendingLoaded(m.id, m.width, m.height, m.cmyk);
      say(`Rendering ${state.pending?.name ?? 'the image'} (${m.width}×${m.height} px)…`);
      break;
    case 'stream-ended':
      // The track ended (a camera unplugged): the source stops as when the user stops it (its
      // last frame stays, as a still), not left looking live with its frames frozen.
      if (isLive() && m.sourceId === state.shown.sourceId) {
        stopStream();
        sayFirst('The stream ended.');
      }
      break;
    case 'frame-dropped':
      frameDone();
      pump();
      break;
    case 'error':
      if (m.during === 'frame') {
        frameDone();
        const text = `A frame failed: ${m.message}`;
        if (frameFailure?.text !== text || frameFailure.sourceId !== state.shown.sourceId) {
          frameFailure = { text, sourceId: state.shown.sourceId };
          showError(text);
        }
        return;
      }
      if (m.during === 'decode' || m.during === 'image') {
        pendingFailed(m.id, m.during, m.message);
        return;
      }
      state.stillBusy = false;
      showError(`Could not render: ${m.message}`);
      break;
  }
});
worker.addEventListener('error', (e) => showError(`The render worker failed: ${e.message}`));

// ---------------------------------------------------------------------------------------------
// Keyboard

// Single-key shortcuts can be turned off (WCAG 2.1.4: they fire on a speech-input word or a stray
// key); the choice is remembered where storage is allowed.
const SHORTCUTS_KEY = 'v2a-studio-shortcuts';
const shortcutsSwitch = $('#shortcuts') as HTMLInputElement;
const keyed = [...document.querySelectorAll<HTMLElement>('[aria-keyshortcuts]')].map((e) => [e, e.getAttribute('aria-keyshortcuts')!] as const);
function useShortcuts(on: boolean): void {
  state.shortcuts = on;
  shortcutsSwitch.checked = on;
  // Off, no button announces a key that does nothing, and the empty stage does not offer them.
  for (const [e, keys] of keyed) {
    if (on) e.setAttribute('aria-keyshortcuts', keys);
    else e.removeAttribute('aria-keyshortcuts');
  }
  $('#keys-hint').hidden = !on;
}
try {
  useShortcuts(localStorage.getItem(SHORTCUTS_KEY) !== 'off');
} catch {
  useShortcuts(true);
}
shortcutsSwitch.addEventListener('change', () => {
  useShortcuts(shortcutsSwitch.checked);
  try {
    localStorage.setItem(SHORTCUTS_KEY, shortcutsSwitch.checked ? 'on' : 'off');
  } catch { /* storage refused (a private window, a policy): on for this page only */ }
});

/**
 * Whether Space scrolls something from `e`: a box taller than it shows (the zoomed art, the
 * panel), else the page itself where it is taller than the window (a narrow screen stacks the
 * panels: there Space pausing instead of scrolling left keyboard users stuck; `p` still pauses).
 */
function scrollsFrom(e: Element | null): boolean {
  for (; e && e !== document.body; e = e.parentElement) {
    if (/auto|scroll/.test(getComputedStyle(e).overflowY) && e.scrollHeight > e.clientHeight) return true;
  }
  const page = document.scrollingElement;
  return page !== null && page.scrollHeight > page.clientHeight;
}

document.addEventListener('keydown', (e) => {
  const t = e.target as HTMLElement;
  if (!state.shortcuts || e.ctrlKey || e.metaKey || e.altKey || t.closest('input, select, textarea, [contenteditable]')) return;
  if (e.key === 'o') { e.preventDefault(); ($('#image-file') as HTMLInputElement).click(); }
  else if (e.key === 'w') { e.preventDefault(); $('#webcam').click(); }
  // Space pauses unless a button or link has the focus (Space presses it) or it would scroll (the
  // zoomed art, the panel, a code box); `p` pauses from anywhere.
  else if (isLive() && (e.key === 'p' || (e.key === ' ' && !t.closest('button, a, summary, pre') && !scrollsFrom(t)))) { e.preventDefault(); $('#pause').click(); }
});

// Every PARAMS entry has a control: a guard against drift (the controls are generated from it).
if (document.querySelectorAll('[data-param]').length !== PARAMS.length) showError('Some parameter controls are missing.');
setStreamUi();
syncStageButtons();
updateWants();
say('Open an image, drop or paste one, start the webcam, or play a video.');
export type { RenderParams };
