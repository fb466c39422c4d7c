/**
 * Messages between the studio page (main.ts) and its render worker (worker.ts). Plain data and
 * transferables only. The page never renders: it sends sources, parameters and frames, the worker
 * runs the renderer core and draws the art into the page's canvas (an OffscreenCanvas).
 */
import type { CodebookReport, CompactOutput, DirectorReport, Format, RenderParams } from '../core/index.js';

/** Explicit render parameters, in the order the user set them (the API gets the same order). */
export type ExplicitParams = Record<string, unknown>;

export interface ViewSettings {
  /** Backing-store pixels per cell across (the cell is twice as high). */
  readonly cell: number;
  /** Ground colour of the preview; null: the one html and svg use (groundFor(monoColor)). */
  readonly ground: string | null;
}

/** A server-rendered grid (image URL source: `json` output of POST /api/v1/render). */
export interface RemoteGrid {
  readonly columns: number;
  readonly rows: number;
  readonly lines: readonly string[];
  readonly colors?: readonly (readonly string[])[];
  /** Two colours per cell: each cell's background (json's extension; null where the cell is clear). */
  readonly background?: readonly (readonly (string | null)[])[];
  readonly params: RenderParams;
  readonly explicit: readonly string[];
  readonly director: DirectorReport;
  readonly codebook: CodebookReport;
  readonly source: { readonly width: number; readonly height: number };
}

/**
 * Messages that hand the worker a source carry `sourceId`, the page's number for it (state.ts
 * newSourceId), and every result carries its source's number: a result still in flight for a
 * source the page has moved on from is known as such.
 */
export type ToWorker =
  | { readonly t: 'canvas'; readonly canvas: OffscreenCanvas; readonly view: ViewSettings }
  | { readonly t: 'view'; readonly view: ViewSettings }
  | { readonly t: 'params'; readonly params: ExplicitParams }
  /** A still image (file, drop, paste): decoded in the worker. */
  | { readonly t: 'image'; readonly id: number; readonly sourceId: number; readonly blob: Blob; readonly params: ExplicitParams }
  /** Start (on) or stop a stream: frames follow with `frame`, or come from `readable` (a
   * MediaStreamTrackProcessor's frames, transferred), which the worker reads itself. */
  | { readonly t: 'stream'; readonly on: true; readonly sourceId: number; readonly readable?: ReadableStream<VideoFrame> }
  | { readonly t: 'stream'; readonly on: false }
  | { readonly t: 'pause'; readonly on: boolean }
  /** Streams: the temporal filter and glyph hysteresis (FrameRenderer) on, or each frame alone. */
  | { readonly t: 'temporal'; readonly on: boolean }
  | { readonly t: 'frame'; readonly bitmap: ImageBitmap; readonly time: number }
  /** Turn the last stream frame into the still source (snapshot). */
  | { readonly t: 'snapshot'; readonly sourceId: number }
  | { readonly t: 'remote'; readonly sourceId: number; readonly grid: RemoteGrid }
  /** `maxPixels`: a png's most pixels, the server's image limit (as the API holds its png to it). */
  | { readonly t: 'export'; readonly id: number; readonly format: Format; readonly maxPixels: number }
  /** What each frame result should carry besides the reports. */
  | { readonly t: 'wants'; readonly compact: boolean; readonly compactLine: boolean };

export interface ResultInfo {
  readonly kind: 'still' | 'frame' | 'remote';
  /** The page's number for the source rendered (see ToWorker). */
  readonly sourceId: number;
  readonly columns: number;
  readonly rows: number;
  readonly source: { readonly width: number; readonly height: number };
  readonly params: RenderParams;
  readonly explicit: readonly string[];
  readonly director: DirectorReport;
  readonly codebook: CodebookReport;
  /** Milliseconds the core took (decode excluded), and the drawing. */
  readonly renderMs: number;
  /** Live frames on two threads: the part of renderMs the front thread took (at the same time as the frame before's back half). */
  readonly frontMs?: number;
  readonly drawMs: number;
  /** Share of cells whose glyph changed since the previous frame (frames only). */
  readonly flicker: number | null;
  /** Share of cells drawn with a non-blank glyph. */
  readonly inkCoverage: number;
  /** Frames: the json-compact object (handoff). */
  readonly compact?: CompactOutput;
  /** Frames: the json-compact text (recording). */
  readonly compactLine?: string;
  /** Frames with the temporal filter: how many times the tuning and codebook were chosen. */
  readonly codebookChoices?: number | null;
  /** The `image` message this result answers. */
  readonly id?: number;
}

export type FromWorker =
  | { readonly t: 'result'; readonly result: ResultInfo }
  /** Still `id` decoded: its full size, and whether it is a CMYK JPEG (see image-facts.ts). */
  | { readonly t: 'loaded'; readonly id: number; readonly width: number; readonly height: number; readonly cmyk: boolean }
  /** Still `id` was not shown: a newer source reached the worker while it decoded or rendered. */
  | { readonly t: 'dropped'; readonly id: number }
  | { readonly t: 'export'; readonly id: number; readonly format: Format; readonly body: string | Uint8Array; readonly extension: string; readonly contentType: string }
  /** The worker's stream reader ended (the track stopped) for stream `sourceId`. */
  | { readonly t: 'stream-ended'; readonly sourceId: number }
  /** A `frame` the page sent was not rendered: new parameters or a new source replaced it in flight. */
  | { readonly t: 'frame-dropped' }
  /** `decode`: the browser could not decode the image (the page asks the server); `image`: it
   * decoded but did not render. Either way the last good image stays. */
  | { readonly t: 'error'; readonly id?: number; readonly during: 'decode' | 'image' | 'render' | 'frame' | 'export'; readonly message: string };
