/**
 * The stage: the art fitted to the window (or a fixed zoom), full screen, side by side with its
 * source; the status line and the error shown beside the art; the collapsible panel; the page
 * theme. Sizes are computed from the stage box, never from content, so nothing shifts the layout.
 */
import { groundFor } from '../core/index.js';
import { $ } from './dom.js';
import { send } from './worker-link.js';
import { isLive, isSnapshot, state } from './state.js';
import type { ViewSettings } from './protocol.js';

export const el = {
  canvas: $('#art') as HTMLCanvasElement,
  view: $('#view'),
  viewport: $('#viewport'),
  status: $('#status'),
  readout: $('#readout'),
  zoom: $('#zoom') as HTMLSelectElement,
  sourcePane: $('#source-pane'),
  sourceImg: $('#source-img') as HTMLImageElement,
  sourceNone: $('#source-none'),
  video: $('#video') as HTMLVideoElement,
  sideBySide: $('#side-by-side'),
  error: $('#art-error'),
  errorText: $('#art-error-text'),
};

/** Words the next status line starts with (sayFirst). */
let lead = '';
/** A status line waiting to be said (sayLater); anything said or shown first replaces it. */
let later: ReturnType<typeof setTimeout> | undefined;

export function say(text: string): void {
  clearTimeout(later);
  el.status.textContent = lead ? `${lead} ${text}` : text;
  lead = '';
}

/**
 * `text` once `ms` passed with nothing else said: the art rendered again while a slider moves is
 * told once, when it stops, not on every step (the status line is a live region).
 */
export function sayLater(text: string, ms = 1000): void {
  clearTimeout(later);
  later = setTimeout(() => say(text), ms);
}

/**
 * `text` now, and at the head of the next status line too: an action whose result is reported
 * at once (a snapshot, then its still's render) is not replaced before a screen reader reads it.
 */
export function sayFirst(text: string): void {
  say(text);
  lead = text;
}

/** Where the focus was when the error box opened: Dismiss takes it back there. */
let focusBeforeError: HTMLElement | null = null;

/**
 * An error, in the API's (or the browser's) own words, beside the art; the art stays. The box is
 * the one live region that announces it (role=alert): the status line keeps its own words, so a
 * screen reader does not read the error twice.
 */
export function showError(text: string): void {
  const active = document.activeElement;
  if (el.error.hidden && active instanceof HTMLElement && !el.error.contains(active)) focusBeforeError = active;
  clearTimeout(later);
  el.errorText.textContent = text;
  el.error.hidden = false;
  // What the status said ("Decoding …") is over; emptied, not repeated, so nothing is read twice.
  el.status.textContent = '';
  state.stats.error = text;
}

export function clearError(): void {
  el.error.hidden = true;
  state.stats.error = null;
}

/**
 * The user closed the error box (Dismiss, Escape): where nothing was said since the error emptied
 * the status line, it tells again what is on screen (the art the failed attempt left).
 */
function retellShown(): void {
  const r = state.result;
  if (el.status.textContent === '' && r && state.shown.name) el.status.textContent = `${artSummary(state.shown.name, r.columns, r.rows)}.`;
}

/** How the status line names the art shown: its source and its size in characters. */
export function artSummary(name: string, columns: number, rows: number): string {
  return `${name}: ${columns}×${rows} characters`;
}

/** A control that can take the focus now: still in the page, shown and enabled. */
function focusable(e: Element | null): e is HTMLElement {
  return e instanceof HTMLElement && e.isConnected && e.getClientRects().length > 0 && !(e as HTMLButtonElement).disabled;
}

/** Focus to `e`, or to the first source button when `e` cannot take it (never left on the page's body). */
export function focusOr(e: Element | null): void {
  (focusable(e) ? e : $('#open-image')).focus();
}

function dismissError(): void {
  // The Dismiss button disappears with the box: the focus goes back where it was, not to the body.
  clearError();
  retellShown();
  focusOr(focusBeforeError);
  focusBeforeError = null;
}
$('#art-error-close').addEventListener('click', dismissError);
// Escape closes it too. The focus moves only when it was in the box (or lost on the page's body):
// Escape pressed in a field, to close its tooltip, leaves it there.
document.addEventListener('keydown', (e) => {
  if (e.key !== 'Escape' || el.error.hidden) return;
  const active = document.activeElement;
  if (!active || active === document.body || el.error.contains(active)) dismissError();
  else {
    clearError();
    retellShown();
    focusBeforeError = null;
  }
});

const narrow = matchMedia('(max-width: 700px)');

/** CSS pixels across a cell at zoom 100 %. */
const CELL_AT_100 = 6;

/** CSS pixels per cell across (the cell is twice as high) for the shown grid. */
function cssCellWidth(columns: number, rows: number): number {
  if (el.zoom.value !== 'fit') return CELL_AT_100 * Number(el.zoom.value);
  const box = el.viewport.getBoundingClientRect();
  const w = box.width - 16, hgt = box.height - 16;
  return Math.max(0.5, Math.min(w / columns, hgt > 40 ? hgt / (rows * 2) : Infinity, 32));
}

/**
 * Largest canvas the art is painted into, in backing pixels: Chromium refuses a canvas over 32767
 * px a side or 2^28 pixels, and one of a few hundred megabytes fails before that (the worker keeps
 * its own copy of the pixels), leaving the last paint stretched: half its area, with no message.
 */
const MAX_SIDE = 32767;
const MAX_AREA = 2 ** 27;

/** Backing pixels across a painted cell for `css` CSS pixels (2 to 32). */
const backingCell = (css: number): number => Math.max(2, Math.min(32, Math.round(css * devicePixelRatio)));

/** The cell size shown (CSS px) and painted (backing px), kept within the canvas limits. */
function cellSizes(columns: number, rows: number): { css: number; cell: number; limited: boolean } {
  const css = cssCellWidth(columns, rows);
  const cell = backingCell(css);
  const fits = Math.max(2, Math.floor(Math.min(MAX_SIDE / columns, MAX_SIDE / (2 * rows), Math.sqrt(MAX_AREA / (2 * columns * rows)))));
  if (cell <= fits) return { css, cell, limited: false };
  return { css: fits / devicePixelRatio, cell: fits, limited: true };
}

function view(): ViewSettings {
  const r = state.result;
  return { cell: r ? cellSizes(r.columns, r.rows).cell : backingCell(CELL_AT_100), ground: null };
}

/** Said when the zoom asked for is more than the canvas can hold ('' when it is not). */
export function zoomNote(): string {
  const r = state.result;
  if (!r || el.zoom.value === 'fit') return '';
  const s = cellSizes(r.columns, r.rows);
  return s.limited ? `Zoom limited to ${Math.floor((100 * s.css) / CELL_AT_100)} % for a picture this large.` : '';
}

let viewKey = '';
/** Sizes the canvas to the stage and tells the worker the cell size it paints at. */
export function layout(): void {
  const r = state.result;
  if (!r) return;
  const { css: cssCell } = cellSizes(r.columns, r.rows);
  el.canvas.style.width = `${r.columns * cssCell}px`;
  el.canvas.style.height = `${r.rows * cssCell * 2}px`;
  const v = view();
  const key = JSON.stringify(v);
  if (key !== viewKey) {
    viewKey = key;
    send({ t: 'view', view: v });
  }
  // The preview's ground is the one html, svg and png downloads use: ink and ground stay a pair.
  el.viewport.style.setProperty('--ground', groundFor(r.params.monoColor));
}

export function initialView(): ViewSettings {
  return view();
}

new ResizeObserver(() => layout()).observe(el.viewport);
el.zoom.addEventListener('change', () => {
  layout();
  // A zoom the canvas cannot hold is said, not shown stretched.
  const note = zoomNote();
  if (note) say(note);
});
narrow.addEventListener('change', layout);

// Side by side: the source next to the art (a still's image, a stream's video).
/** What the source pane says when it has no picture of the source to show. */
const NO_SOURCE = {
  server: 'The server rendered this image; it is not kept in the page.',
  // A still without an image of its own is a stream's snapshot (the frame went to the worker).
  snapshot: 'A snapshot of the stream: the stream is not kept in the page.',
  none: 'Nothing is open yet.',
} as const;

export function updateSourcePane(): void {
  const on = el.sideBySide.getAttribute('aria-pressed') === 'true';
  const live = isLive();
  el.sourcePane.hidden = !on;
  el.view.dataset.split = String(on);
  el.sourceImg.hidden = !(on && !live && state.sourceUrl && state.shown.kind === 'image');
  if (state.sourceUrl && el.sourceImg.src !== state.sourceUrl) el.sourceImg.src = state.sourceUrl;
  el.video.hidden = !(on && live);
  el.sourceNone.hidden = !(on && !live && el.sourceImg.hidden);
  el.sourceNone.textContent = NO_SOURCE[state.shown.kind === 'server' ? 'server' : isSnapshot() ? 'snapshot' : 'none'];
  layout();
}
el.sideBySide.addEventListener('click', () => {
  el.sideBySide.setAttribute('aria-pressed', String(el.sideBySide.getAttribute('aria-pressed') !== 'true'));
  updateSourcePane();
});

const stage = $('#stage');
const fullscreenBtn = $('#fullscreen');
fullscreenBtn.addEventListener('click', () => {
  if (document.fullscreenElement) void document.exitFullscreen();
  else void stage.requestFullscreen?.().catch((err: Error) => showError(`Full screen is not available: ${err.message}`));
});
document.addEventListener('fullscreenchange', () => {
  fullscreenBtn.textContent = document.fullscreenElement ? 'Exit full screen' : 'Full screen';
  layout();
});

// The panel folds away: the art takes the whole width.
const panelToggle = $('#panel-toggle');
function showPanel(open: boolean): void {
  document.body.dataset.panel = open ? 'open' : 'closed';
  panelToggle.setAttribute('aria-expanded', String(open));
  panelToggle.textContent = open ? 'Hide settings' : 'Show settings';
}
panelToggle.addEventListener('click', () => showPanel(document.body.dataset.panel !== 'open'));
// "Skip to settings" opens them first when they are hidden (a link to a hidden target goes nowhere).
$('.skip').addEventListener('click', (e) => {
  e.preventDefault();
  showPanel(true);
  $('#controls').focus();
});

// Theme: the system's by default; the button picks the other one, kept across reloads (as the
// render settings and the shortcuts switch are) until the user picks again.
const themeBtn = $('#theme');
const prefersLight = matchMedia('(prefers-color-scheme: light)');
const THEME_KEY = 'v2a-studio-theme';
function applyTheme(light: boolean): void {
  document.documentElement.dataset.theme = light ? 'light' : 'dark';
  themeBtn.setAttribute('aria-pressed', String(light));
}
function chosenTheme(): 'light' | 'dark' | null {
  try {
    const t = localStorage.getItem(THEME_KEY);
    return t === 'light' || t === 'dark' ? t : null;
  } catch {
    return null;
  }
}
applyTheme(chosenTheme() ? chosenTheme() === 'light' : prefersLight.matches);
prefersLight.addEventListener('change', () => {
  if (!chosenTheme()) applyTheme(prefersLight.matches);
});
themeBtn.addEventListener('click', () => {
  const light = document.documentElement.dataset.theme !== 'light';
  applyTheme(light);
  try {
    localStorage.setItem(THEME_KEY, light ? 'light' : 'dark');
  } catch { /* storage refused (a private window, a policy): for this page only */ }
});
