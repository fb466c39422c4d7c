/**
 * Export: copy and download the shown art in every format, and the same render as a curl command.
 * Exports always describe what is on screen: the worker formats the still or frame it painted,
 * with the parameters it was painted with; a server-rendered still is asked again with the
 * parameters of its shown render.
 */
import { FORMATS, FORMAT_INFO, fileSuffix, type Format } from '../core/index.js';
import { apiUrl } from './api-url.js';
import type { ParamControls } from './controls.js';
import { $, h } from './dom.js';
import { say, showError } from './layout.js';
import { uploadTooLargeDetail } from '../contract/problems.js';
// A pure module (no Node API): the server's words for an image over the pixel limit.
import { pixelsMessage } from '../node/errors.js';
import { MAX_IMAGE_PIXELS } from '../settings/index.js';
import { serverRender } from './server-api.js';
import { isLive, isSnapshot, state, type FileSize } from './state.js';
import { workerExport, type Exported } from './worker-link.js';

/**
 * The formats offered for download: the one list. Every format of the core is here, so a format
 * the core gains (png) gets its button; bytes (Uint8Array bodies) download as they are.
 */
export const EXPORT_FORMATS: readonly Format[] = FORMATS;

/** Formats whose output is text (copyable). */
function isText(out: Exported): boolean {
  return typeof out.body === 'string';
}

let controls: ParamControls;

export async function exportAs(format: Format): Promise<Exported> {
  const shown = state.shown;
  if (shown.kind === 'server' && shown.server) {
    const res = await serverRender(shown.server, state.serverParams, format);
    const contentType = res.headers.get('content-type') ?? FORMAT_INFO[format].contentType;
    const body = /^(text\/|application\/(json|x-ndjson)|image\/svg)/.test(contentType) ? await res.text() : new Uint8Array(await res.arrayBuffer());
    return { body, extension: FORMAT_INFO[format].extension, contentType };
  }
  if (shown.kind === 'none') throw new Error('nothing to export yet: open an image, the webcam or a video');
  // The API's png limit (this server's, else its default): an 82 MP png took the tab seconds and
  // hundreds of MB, where the same render over the API is refused with the columns that fit.
  return workerExport(format, state.limits.maxImagePixels ?? MAX_IMAGE_PIXELS.default);
}

/** File names follow what is shown: "v2a-<source name>". */
export function exportBase(): string {
  return ('v2a-' + state.shown.name.replace(/\.[a-z0-9]+$/i, '')).replace(/[^a-z0-9._-]+/gi, '-').replace(/-+/g, '-').slice(0, 60);
}

function fileName(format: Format): string {
  return `${exportBase()}${fileSuffix(format)}`;
}

export function downloadBlob(blob: Blob, name: string): void {
  const url = URL.createObjectURL(blob);
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
let downloadButtons: HTMLButtonElement[] = [];

export function setExportEnabled(on: boolean): void {
  const f = currentFormat();
  // An image cannot go to the clipboard as text: Copy waits for a text format.
  copyBtn.disabled = !on || FORMAT_INFO[f].binary === true;
  copyBtn.title = FORMAT_INFO[f].binary ? `${f} is an image: download it` : '';
  downloadBtn.disabled = !on;
  for (const b of downloadButtons) b.disabled = !on;
  // Plain text shows no colour: its characters are the mono art's (as the API's format=text), so
  // with colour on they are not the characters on screen; said here rather than found out.
  const mono = f === 'text' && state.result?.params.color ? ' · plain text has no colours: it holds the mono art\'s characters' : '';
  $('#export-format').textContent = `${f} · ${fileSuffix(f)}${mono}`;
}

async function doDownload(format: Format): Promise<void> {
  const name = fileName(format);
  try {
    const out = await exportAs(format);
    downloadBlob(new Blob([out.body as BlobPart], { type: out.contentType }), name);
    say(`Saved ${name}.`);
  } catch (err) {
    showError(`Export failed: ${(err as Error).message}`);
  }
}

const curlEl = $('#curl');
const curlNote = $('#curl-note');
const copyCurlBtn = $('#copy-curl') as HTMLButtonElement;

/** A shell word: as it is when plain, else in single quotes. */
const shellWord = (s: string) => (/^[\w.,:/@%+=-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`);
/**
 * A file name as curl's -F reads it after `@`: plain, or in double quotes with `"` and `\`
 * escaped (unquoted, a `,` or `;` ends the name, and curl takes what follows for options).
 */
const curlFileName = (name: string) => (/^[\w.+-]+$/.test(name) ? name : `"${name.replace(/["\\]/g, '\\$&')}"`);

/** What the API cannot render as the studio did: live sources, and a snapshot (no file of its own). */
const NO_COMMAND = {
  live: 'The API renders still images only: there is no command for a video or the webcam. Open an image file to get its command.',
  snapshot: 'The API renders image files only: this snapshot of the stream is not one, so there is no command for it.',
} as const;

export function updateCurl(): void {
  const none = isLive() ? NO_COMMAND.live : isSnapshot() ? NO_COMMAND.snapshot : null;
  const note = none ?? apiNote();
  curlNote.textContent = note ?? '';
  curlNote.hidden = !note;
  curlEl.hidden = copyCurlBtn.hidden = none !== null;
  if (none) {
    curlEl.textContent = '';
    return;
  }
  const { format, ...params } = controls.values();
  // Every value as --form-string: -F would read a glyph ramp starting with @ or < as a file,
  // end it at a ;, and drop its leading spaces.
  const fields = Object.entries({ ...params, format: format ?? currentFormat() }).map(([k, v]) => `--form-string ${shellWord(`${k}=${String(v)}`)}`);
  const server = state.shown.server;
  const image = server && 'url' in server
    ? `--form-string ${shellWord(`imageUrl=${server.url}`)}`
    : `-F ${shellWord(`image=@${curlFileName(state.shown.kind === 'none' ? 'image.png' : state.shown.name)}`)}`;
  // The page's own base, not its origin: behind a proxy that strips a path prefix, the API is under it too.
  curlEl.textContent = [`curl -sS ${shellWord(apiUrl('render'))}`, image, ...fields].join(' \\\n  ');
}

/**
 * Why the API's answer for the shown still would not be the studio's, in words; null when it
 * would be. The command is still shown.
 */
function apiNote(): string | null {
  const size = state.shown.kind === 'image' ? state.shown.size : null;
  if (!size) return null;
  return apiRefusal(size) ?? (size.cmyk ? 'This is a CMYK JPEG: the API decodes its colours otherwise than this browser does, so its art will differ from what is shown here.' : null);
}

/**
 * Why the API would refuse the shown still, in its own 413 words; null when it would not. The
 * studio renders such an image in the page (sparing the server), so the command is still shown.
 */
function apiRefusal(size: FileSize): string | null {
  const { maxImageBytes, maxImagePixels } = state.limits;
  const why =
    maxImageBytes !== null && size.bytes > maxImageBytes ? uploadTooLargeDetail(maxImageBytes)
    : maxImagePixels !== null && size.width * size.height > maxImagePixels ? pixelsMessage(size, maxImagePixels)
    : null;
  return why && `This server's API refuses this image (413): ${why}`;
}

export function initExport(c: ParamControls): void {
  controls = c;
  const downloads = $('#downloads');
  downloadButtons = EXPORT_FORMATS.map((format) => {
    const info = FORMAT_INFO[format];
    // The button's text is its accessible name: the format and the end of its file's name (json-compact: .compact.json, as saved).
    const b = h('button', { type: 'button', class: 'btn small fmt', 'data-format': format, title: `Download ${info.label}`, disabled: true },
      h('span', { text: format }), ' ', h('small', { text: fileSuffix(format) }));
    b.addEventListener('click', () => void doDownload(format));
    downloads.append(b);
    return b;
  });
  copyBtn.addEventListener('click', async () => {
    try {
      const format = currentFormat();
      const out = await exportAs(format);
      if (!isText(out)) throw new Error(`${format} is not text; download it instead`);
      await copyText(out.body as string);
      say(`Copied the ${format} output (${(out.body as string).length} characters).`);
    } catch (err) {
      showError(`Copy failed: ${(err as Error).message}`);
    }
  });
  downloadBtn.addEventListener('click', () => void doDownload(currentFormat()));
  copyCurlBtn.addEventListener('click', () => void copyText(curlEl.textContent ?? '').then(() => say('Copied the curl command.')));
  updateCurl();
}
