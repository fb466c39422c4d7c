/**
 * Still sources: file picker, drop, paste and image URL. The browser decodes what it can (in the
 * worker); what it cannot (TIFF, SVG, a damaged file) goes to the server, which renders TIFF and
 * names what is wrong with the rest. A source is shown only once it rendered: until then, and
 * after any failure, the last good picture, its name and its exports stay as they were.
 */
import { DEFAULTS, type Format } from '../core/index.js';
import type { RemoteGrid } from './protocol.js';
import { $ } from './dom.js';
import { clearError, say, showError, updateSourcePane } from './layout.js';
import { serverRender, type ServerLimits } from './server-api.js';
import { newSourceId, openingSource, setShown, state, type ServerSource } from './state.js';
import { openVideo, stopStream } from './stream.js';
import { send } from './worker-link.js';
import type { ParamControls } from './controls.js';

let controls: ParamControls;
let imageId = 0;
/**
 * Stills sent to the worker and not answered yet. The worker drops one when a newer source reached
 * it first; one it rendered before the newer arrived is painted, so it is named (see pendingRendered).
 */
const sent = new Map<number, NonNullable<typeof state.pending>>();

export function initSources(c: ParamControls): void {
  controls = c;
}

function baseName(name: string): string {
  return name.replace(/[?#].*$/, '').split('/').pop() || 'image';
}

/** A still from a file, a drop or a paste: decoded and rendered in the worker. */
export function openImage(blob: Blob, name: string): void {
  stopStream();
  openingSource();
  const id = ++imageId;
  const sourceId = newSourceId();
  state.pending = { id, sourceId, name, blob };
  sent.set(id, state.pending);
  say(`Decoding ${name}…`);
  state.stillBusy = true;
  state.stillDirty = false;
  send({ t: 'image', id, sourceId, blob, params: controls.values() });
}

/**
 * The worker rendered still `id`: it is what is shown now. That may be an older one than the
 * pending one (rendered before the newer reached the worker), which then stays pending.
 */
export function pendingRendered(id: number | undefined): boolean {
  const p = id === undefined ? undefined : sent.get(id);
  if (id !== undefined) for (const k of sent.keys()) if (k <= id) sent.delete(k);
  // No still pending: a stream or a server render was opened since, and it is what is shown.
  if (!p || !state.pending) return false;
  if (state.pending.id === id) state.pending = null;
  if (state.sourceUrl) URL.revokeObjectURL(state.sourceUrl);
  state.sourceUrl = URL.createObjectURL(p.blob);
  setShown('image', p.name, p.sourceId, null, p.width !== undefined && p.height !== undefined ? { bytes: p.blob.size, width: p.width, height: p.height, cmyk: p.cmyk ?? false } : null);
  clearError();
  updateSourcePane();
  return true;
}

/** The worker decoded still `id`: its full size (the API's pixel limit applies to it), and whether it is CMYK. */
export function pendingLoaded(id: number, width: number, height: number, cmyk: boolean): void {
  const p = sent.get(id);
  if (p) Object.assign(p, { width, height, cmyk });
}

/** The worker dropped still `id` unseen (a newer source reached it first). */
export function stillDropped(id: number): void {
  sent.delete(id);
  state.stats.stillsDropped++;
}

/** The worker could not decode or render the pending still. */
export function pendingFailed(id: number | undefined, during: string, message: string): void {
  if (id !== undefined) sent.delete(id);
  const p = state.pending;
  if (!p || id !== p.id) return;
  state.stillBusy = false;
  if (during === 'decode') {
    // The browser cannot read it: the server can render TIFF and names the rest precisely.
    void openOnServer({ file: p.blob, fileName: p.name }, p.name, { pendingId: id, seq: state.opened });
    return;
  }
  state.pending = null;
  showError(`${p.name}: ${message}`);
}

export function openFile(file: File): void {
  if (file.type.startsWith('video/')) openVideo(file);
  else if (file.type.startsWith('image/') || file.type === '' || /\.(tiff?|svg)$/i.test(file.name)) openImage(file, file.name || 'image');
  else showError(`${file.name} is neither an image nor a video.`);
}

// ---------------------------------------------------------------------------------------------
// Server renders: an image URL, or a file the browser cannot decode

let serverAbort: AbortController | null = null;
let serverTimer: ReturnType<typeof setTimeout> | undefined;

/**
 * Renders `src` on the server; shows it (named `name`) only when that succeeded and no source was
 * opened after source number `seq` (see openingSource; a newly opened source unless given).
 * `pendingId`: the pending still the browser could not decode.
 */
export async function openOnServer(src: ServerSource, name: string, opts: { pendingId?: number; seq?: number; rerender?: boolean } = {}): Promise<void> {
  const seq = opts.seq ?? openingSource();
  if (seq !== state.opened) return;
  stopStream();
  serverAbort?.abort();
  const abort = new AbortController();
  serverAbort = abort;
  // Rendered again for changed settings, the picture is no news until it is there (main.ts says it then).
  if (!opts.rerender) say(`Rendering ${name} on the server…`);
  const params = controls.values();
  try {
    const res = await serverRender(src, params, 'json', abort.signal);
    const grid = (await res.json()) as RemoteGrid;
    if (abort.signal.aborted || seq !== state.opened) return;
    // Any pending still is older (the worker drops it when this arrives); so is a still render in flight.
    state.pending = null;
    state.stillBusy = false;
    state.stillDirty = false;
    if (state.sourceUrl) URL.revokeObjectURL(state.sourceUrl);
    state.sourceUrl = null;
    const sourceId = newSourceId();
    if (opts.rerender) state.rerenderSourceId = sourceId;
    setShown('server', name, sourceId, src);
    state.serverParams = params;
    clearError();
    updateSourcePane();
    // The server's json names extension parameters only when not at their default, and its format
    // is the transport this page asked for: the controls show what the picture was rendered with.
    const used = { ...DEFAULTS, ...grid.params, format: (params.format as Format | undefined) ?? DEFAULTS.format };
    send({ t: 'remote', sourceId, grid: { ...grid, params: used } });
  } catch (err) {
    if (abort.signal.aborted || seq !== state.opened) return;
    if (opts.pendingId !== undefined && state.pending?.id === opts.pendingId) state.pending = null;
    // The API's own words; the picture and everything about it stay as they were. A render again
    // for changed settings says the picture is not of the new ones.
    const stale = opts.rerender ? ' The picture shown is still the one rendered before this change.' : '';
    showError(`${name}: ${(err as Error).message}${stale}`);
  }
}

/**
 * Parameters changed while a server-rendered still is shown: render it again (debounced), unless
 * another source is opened meanwhile.
 */
export function rerenderOnServer(): void {
  const shown = state.shown;
  if (shown.kind !== 'server' || !shown.server) return;
  const src = shown.server;
  const seq = state.opened;
  clearTimeout(serverTimer);
  serverTimer = setTimeout(() => void openOnServer(src, shown.name, { seq, rerender: true }), 300);
}

// ---------------------------------------------------------------------------------------------
// Wiring: picker, drop, paste, URL box

export function wireSources(): void {
  const imageFile = $('#image-file') as HTMLInputElement;
  const videoFile = $('#video-file') as HTMLInputElement;
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

  const urlForm = $('#url-form') as HTMLFormElement;
  const urlInput = $('#url') as HTMLInputElement;
  const openUrl = (url: string) => void openOnServer({ url }, baseName(url));
  urlForm.addEventListener('submit', (e) => {
    e.preventDefault();
    const url = urlInput.value.trim();
    if (!url) {
      showError('Enter the address of an image (https).');
      urlInput.focus();
      return;
    }
    openUrl(url);
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
    if (!/^https?:\/\/\S+$/i.test(text)) return;
    e.preventDefault();
    // A pasted address the server will not fetch is said so, not dropped without a word.
    if (!state.limits.imageUrlHosts.length) {
      showError('This server fetches images from no host (V2A_IMAGE_FETCH_ALLOWLIST is empty): save the image, then drop or open the file.');
      return;
    }
    urlInput.value = text;
    openUrl(text);
  });
}

/** Keeps the server's limits; shows the URL box only when it fetches from some host, and names them. */
export function useServerLimits(limits: ServerLimits): void {
  state.limits = limits;
  const hosts = limits.imageUrlHosts;
  const form = $('#url-form') as HTMLFormElement;
  form.hidden = hosts.length === 0;
  const input = $('#url') as HTMLInputElement;
  input.placeholder = `https://… image on ${hosts.slice(0, 2).join(', ')}${hosts.length > 2 ? ', …' : ''}`;
  input.title = `The server fetches images from: ${hosts.join(', ')}`;
}

