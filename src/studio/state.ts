/**
 * The studio page's one state object. Every module reads and writes it; nothing else is kept at
 * module level but the elements. `shown` describes what is on screen and changes only when a
 * render of a new source succeeded, so after any failure the picture, its name (download names)
 * and its exports still belong together.
 */
import type { HandoffManifest } from '../contract/handoff.js';
import type { HandoffSession } from './handoff.js';
import type { ResultInfo } from './protocol.js';
import type { ServerLimits } from './server-api.js';

/**
 * image: a still the worker rendered; server: a still the server rendered (an image URL, or a file
 * the browser cannot decode, e.g. TIFF); webcam, video: live streams (a stopped stream's last
 * frame stays as an `image`).
 */
export type SourceKind = 'none' | 'image' | 'server' | 'webcam' | 'video';

/** What the server renders for a `server` source: an image URL or the file itself. */
export type ServerSource = { readonly url: string } | { readonly file: Blob; readonly fileName: string };

/**
 * A still file's size: its bytes and its full decoded size (the API's limits apply to both); and
 * whether it is a CMYK JPEG, which the API decodes otherwise (image-facts.ts).
 */
export interface FileSize {
  readonly bytes: number;
  readonly width: number;
  readonly height: number;
  readonly cmyk: boolean;
}

/** Live numbers for the readouts, the tests and bench/studio.ts. */
export interface StudioStats {
  source: SourceKind;
  results: number;
  frames: number;
  /** performance.now() when the last stream frame's result arrived (0: none yet). */
  lastFrameAt: number;
  fps: number;
  renderMs: number;
  drawMs: number;
  /** Sums over the stream's frames (means: divide by frames). */
  sumRenderMs: number;
  sumDrawMs: number;
  /** The part of sumRenderMs on the front thread (live frames on two threads; 0 on one). */
  sumFrontMs: number;
  /** Streams: temporal filter on. */
  temporal: boolean;
  /** Share of glyphs changed in the last frame, and its mean over the last second. */
  flicker: number | null;
  meanFlicker: number | null;
  /** Streams: times the tuning and glyph codebook were chosen (1 = never re-chosen). */
  codebookChoices: number | null;
  columns: number;
  rows: number;
  kind: ResultInfo['kind'] | null;
  /** Stills the worker dropped unseen because a newer source reached it first. */
  stillsDropped: number;
  /** The last error shown beside the art (null after a success). */
  error: string | null;
  handoff: { state: string; sent: number; traceId: string | null; handoff: string | null };
}

export const state = {
  /**
   * What is on screen: its kind, its name (downloads are named after it), its server source, and
   * for a still file its size (the API command says when the API would refuse it); the number of
   * its source (see newSourceId).
   */
  shown: { kind: 'none' as SourceKind, name: 'art', sourceId: 0, server: null as ServerSource | null, size: null as FileSize | null },
  /** The last source number handed out (newSourceId). */
  sourceIds: 0,
  /** The parameters the shown server render used (its exports use them too). */
  serverParams: {} as Record<string, unknown>,
  /** A source being opened (not shown until it renders); its size once the worker decoded it. */
  pending: null as { id: number; sourceId: number; name: string; blob: Blob; width?: number; height?: number; cmyk?: boolean } | null,
  /** Counts sources opened (see openingSource): work for an older one that ends later is dropped. */
  opened: 0,
  /** The last result drawn. */
  result: null as ResultInfo | null,
  /** The source number of the last server render again for changed settings (not news of a picture opened). */
  rerenderSourceId: 0,
  /** Object URL of the shown still (side-by-side view). */
  sourceUrl: null as string | null,
  /** Still renders: one in flight; changes meanwhile are sent when it returns (latest only). */
  stillBusy: false,
  stillDirty: false,
  /** Streams. */
  stream: null as MediaStream | null,
  videoUrl: null as string | null,
  paused: false,
  /** The single-key shortcuts (o, w, p, Space) are on: the Keyboard shortcuts switch turns them off (WCAG 2.1.4). */
  shortcuts: true,
  frameInFlight: 0,
  newFrame: false,
  /** Recording: json-compact lines, or a WebM MediaRecorder. */
  recording: null as null | { kind: 'ndjson'; lines: string[] } | { kind: 'webm'; recorder: MediaRecorder; chunks: Blob[]; bytes: number; started: number; stopped: number },
  /** The a2v handoff. */
  manifest: null as HandoffManifest | null,
  handoff: null as HandoffSession | null,
  /** The server's limits (its image hosts: empty hides the URL box; its image sizes). */
  limits: { imageUrlHosts: [], maxImageBytes: null, maxImagePixels: null } as ServerLimits,
  stats: {
    source: 'none', results: 0, frames: 0, lastFrameAt: 0, fps: 0, renderMs: 0, drawMs: 0, sumRenderMs: 0, sumDrawMs: 0, sumFrontMs: 0, temporal: true,
    flicker: null, meanFlicker: null, codebookChoices: null, columns: 0, rows: 0, kind: null, stillsDropped: 0, error: null,
    handoff: { state: 'idle', sent: 0, traceId: null, handoff: null },
  } as StudioStats,
};

export type State = typeof state;

export function isLive(kind: SourceKind = state.shown.kind): kind is 'webcam' | 'video' {
  return kind === 'webcam' || kind === 'video';
}

/**
 * A new source is being opened: returns its number. A video still loading, a server render or a
 * debounced server re-render started for an earlier one checks it and drops its result, so the
 * later source wins whatever order they end in.
 */
export function openingSource(): number {
  return ++state.opened;
}

/**
 * A number for a source handed to the worker, which tags that source's results with it. They
 * count up: a result whose number is below that of the source shown belongs to one shown before
 * (a still render or snapshot still in flight when a stream took over), and is not shown.
 */
export function newSourceId(): number {
  return ++state.sourceIds;
}

/** Sets what is shown (after a source rendered): `sourceId`, its number (newSourceId). */
export function setShown(kind: SourceKind, name: string, sourceId: number, server: ServerSource | null = null, size: FileSize | null = null): void {
  state.shown = { kind, name, sourceId, server, size };
  state.stats.source = kind;
  document.body.dataset.source = kind;
}

/** The still shown is a stream's snapshot: it has no file of its own (nor a picture beside it). */
export function isSnapshot(): boolean {
  return state.shown.kind === 'image' && !state.sourceUrl;
}
