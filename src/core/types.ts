import type { Charset, GlyphStrategy, QualityTarget, RenderParams } from './params/definitions.js';

/**
 * Render parameters as a caller passes them: any of RenderParams, the type derived from the one
 * table in params/definitions.ts, so a wrong name or type (`{ columns: 'wide' }`) does not
 * compile. Values are still validated at run time (ranges; input from JavaScript).
 */
export type RenderInput = Readonly<Partial<RenderParams>>;

/** Service and document version (interface.md §9). */
export const VERSION = '0.3.0';

/**
 * A decoded image: 8-bit sRGB, straight (non-premultiplied) alpha, row-major RGBA. Decoders
 * (sharp on Node, canvas in the browser) produce it; the core never decodes.
 */
export interface RgbaImage {
  readonly width: number;
  readonly height: number;
  readonly data: Uint8Array | Uint8ClampedArray;
  /**
   * Size of the image these pixels were decoded from, where the decode shrank it on load
   * (decodeImage() sets them): the grid's rows, a fit to a box and the result's `source` follow
   * it, so they do not depend on how far the decode shrank. Default: width and height.
   */
  readonly sourceWidth?: number;
  readonly sourceHeight?: number;
  /**
   * True when every pixel's alpha is 255 (decodeImage() sets it for an image without an alpha
   * channel, a JPEG): two-colour art then skips looking for transparency (one pass over the
   * alpha bytes). A hint: set it only where it holds, since transparent pixels are then drawn
   * as composited over the ground (black; white with `invert`).
   */
  readonly opaque?: boolean;
}

/** Reference cell: width:height = 1:2 (a terminal cell); rows = round(columns * h / w * CELL_ASPECT). */
export const CELL_ASPECT = 0.5;

/** The adaptive (or fixed) glyph codebook actually used, with its measured error. */
export interface CodebookReport {
  readonly strategy: GlyphStrategy;
  /** The glyphs of the codebook, in ramp order (lightest first). */
  readonly glyphs: string;
  readonly size: number;
  /** Size of the ramp it was chosen from. */
  readonly rampSize: number;
  /** Measured RMSE (0..1) of quantizing this image's cell luminances to the codebook's levels. */
  readonly rmse: number;
  readonly maxRmse: number;
  /** Shannon entropy in bits of the glyph histogram of the output: the rate in rate-distortion. */
  readonly bitsPerCell: number;
}

export type DirectorStatus = 'target_met' | 'best_effort';

export interface DirectorReport {
  readonly status: DirectorStatus;
  readonly rubric: QualityTarget;
  /** 0..1, higher is better, of the rendered result against the rubric. */
  readonly score: number;
  readonly threshold: number;
  /** Strength the tuning was applied with (autoOptimize). 0 = disabled. */
  readonly strength: number;
  /** Named metrics (0..1 unless the name says otherwise) measured on the rendered grid. */
  readonly metrics: Readonly<Record<string, number>>;
  /** Source measurements the tuning was based on. */
  readonly source: Readonly<Record<string, number>>;
  readonly adjustments: Readonly<Record<string, { readonly from: number; readonly to: number }>>;
}

/** The renderer's output before formatting: one glyph and one colour per cell. */
export interface CellGrid {
  readonly columns: number;
  readonly rows: number;
  /** Glyph table; `cells` index into it. */
  readonly glyphs: readonly string[];
  /** rows * columns glyph indices, row-major. */
  readonly cells: Uint16Array;
  /**
   * rows * columns * 3 bytes of sRGB: the cell's ink colour (after tone and saturation), always
   * present. With `color` and one colour per cell it is chosen so that the glyph's coverage times
   * the ink gives the cell's colour (tone is carried once, by the glyph and the ink together).
   * Without `color` it is computed on first read (json, json-compact, the Director's round-trip
   * metric read it; text output never does): until then the result holds the image's pixels
   * (its whole `data`), and a read that finds them changed throws V2aError `image-changed`. Read
   * it once to compute it and let the pixels go.
   */
  readonly colors: Uint8Array;
  /**
   * Extension (cellColors): rows * columns * 3 bytes of sRGB, the cell's background colour, chosen
   * with the glyph and the ink so that the cell matches the source in linear light. Present only
   * when cells carry two colours; undefined means ink only, on the terminal's own ground.
   */
  readonly background?: Uint8Array;
  /**
   * Extension, with `background`: rows * columns bytes, 1 where the source is seen through in the
   * cell. Such a cell shows no background of its own but the viewer's ground (ansi's default
   * background, the page's): blank where every pixel is nearly transparent; else (an edge, a
   * faint area) the glyph nearest the shape of its opacity, in its pixels' colour. So a
   * transparent logo drawn with two colours per cell keeps no box or fringe of the ground it was
   * composited over. Absent when no cell is clear; `background` holds that ground there (black,
   * or white with `invert`), which json-compact, without the flags, carries.
   */
  readonly clear?: Uint8Array;
}

export interface RenderResult extends CellGrid {
  readonly version: string;
  readonly charset: Charset;
  /** Effective parameters: defaults, the caller's values and the Director's adjustments. */
  readonly params: RenderParams;
  /** Names of the parameters the caller set explicitly. */
  readonly explicit: readonly string[];
  readonly codebook: CodebookReport;
  readonly director: DirectorReport;
  readonly source: { readonly width: number; readonly height: number };
  readonly cellAspect: number;
}
