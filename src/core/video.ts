import type { RenderParams } from './params/definitions.js';
import { parseParamsOrThrow } from './params/validate.js';
import { gridRows, sourceSize } from './pipeline/geometry.js';
import { checkPixels, glyphStage, prepare, requestedParams, sourceStage, type TunedSource } from './render.js';
import { checkObject } from './args.js';
import { SUB_X, SUB_Y } from './glyphs/types.js';
import { laterCellRgb } from './pipeline/resample.js';
import { CUT_DELTA, SHIFT_DELTA, TemporalFilter } from './temporal/filter.js';
import type { DirectorReport, RenderInput, RenderResult, RgbaImage } from './types.js';

/** Share of cells in motion, and of cells whose mean changed, that counts as a scene cut. */
const SCENE_CUT = 0.6;

/** More than SCENE_CUT of the cells' means moved by more than CUT_DELTA since the previous frame. */
function hardCut(previous: Float32Array, cells: Float32Array): boolean {
  const need = SCENE_CUT * cells.length;
  let moved = 0;
  for (let i = 0; i < cells.length; i++) {
    const d = cells[i]! - previous[i]!;
    if ((d > CUT_DELTA || d < -CUT_DELTA) && ++moved > need) return true;
  }
  return false;
}

/**
 * What FrameFront hands FrameBack for one frame: plain data and typed arrays, so the two halves
 * may run on two threads (structured clone; see `detachHandoff` for the transfer list).
 */
export interface FrameHandoff {
  /** The size of the frame it was made from: the back's frame must be that one. */
  readonly frame: { readonly width: number; readonly height: number };
  readonly columns: number;
  readonly rows: number;
  /** The parameter names the caller set (the result's `explicit`). */
  readonly explicit: readonly string[];
  readonly tuned: TunedSource;
  /** Mean perceptual luminance per cell (the report's scores read it). */
  readonly cellLuma: Float32Array;
  /** Mean linear RGB per cell, or null: resampled from the frame's pixels when first read. */
  readonly cellLinearRgb: Float32Array | null;
  /** Tuned on this frame (the first, a scene cut, a retune): the back chooses a new codebook. */
  readonly tunedHere: boolean;
  /** The temporal filter started afresh (a new grid): the previous frame's cells no longer apply. */
  readonly restarted: boolean;
}

/**
 * The first half of FrameRenderer: resample, scene cuts, the Auto Director's tuning and the
 * temporal filter. Its handoffs go, in order, to one FrameBack.
 */
export class FrameFront {
  private readonly requested: RenderParams;
  private readonly explicit: readonly string[];
  private filter: TemporalFilter | null = null;
  private tuned: { params: RenderParams; report: DirectorReport } | null = null;
  /** The previous frame's cell means (the same grid), to see a hard cut before it is tuned for. */
  private lastCells: Float32Array | null = null;

  constructor(params: RenderInput = {}) {
    const explicit = parseParamsOrThrow(params, 'json');
    // As render()'s: frames for plain text, named so, get one colour's glyphs.
    this.requested = requestedParams(explicit);
    this.explicit = Object.keys(explicit);
  }

  /** Starts afresh (with FrameBack.retune() on its back). */
  retune(): void {
    this.filter?.reset();
    this.tuned = null;
  }

  /**
   * The frame's handoff. Its arrays are this front's scratch and the filter's state, valid until
   * the next call: pass it to the back at once, or `detachHandoff` it.
   */
  render(frame: RgbaImage): FrameHandoff {
    checkPixels(frame);
    const { columns, invert, cellAspect } = this.requested;
    const source = sourceSize(frame);
    const rows = gridRows(source.width, source.height, columns, cellAspect);
    // The filter of the same grid goes on; a new grid starts a new one (after the resample).
    const kept = this.filter && this.filter.rows === rows && this.filter.columns === columns ? this.filter : null;
    if (kept) {
      const stats = kept.stats;
      if (stats.frames > 1 && stats.motionShare > SCENE_CUT && (stats.changedShare > SCENE_CUT || Math.abs(stats.meanShift) > SHIFT_DELTA)) {
        this.tuned = null;
      }
    }
    // The cells' RGB feeds the Director and colour art; a mono frame on a kept tuning may never
    // need it (about a fifth of the resample at 200 columns): resampled on first read then.
    const later = this.tuned !== null && !this.requested.color;
    // The temporal filter reads the luminance at once, in JavaScript: copied out, not kept.
    const prep = prepare(frame, columns, invert, cellAspect, later ? 'later' : 'now', 'copied');
    // A hard cut (most cells' means moved more than any noise explains: CUT_DELTA) is tuned for in
    // its own frame. The filter's statistics above see it only a frame later, when a slide-show
    // GIF's next slide has already been drawn with the tone of the one before (black -> white
    // showed a blank frame for the white slide's whole delay).
    const last = kept ? this.lastCells : null;
    if (this.tuned && last && last.length === prep.cellLuma.length && hardCut(last, prep.cellLuma)) this.tuned = null;
    if (!last || last.length !== prep.cellLuma.length) this.lastCells = new Float32Array(prep.cellLuma.length);
    this.lastCells!.set(prep.cellLuma);
    const filter = kept ?? (this.filter = new TemporalFilter({ columns, rows }));
    const raster = prep.resampled.luma;
    filter.setUpsampled(raster.width > frame.width || raster.height > frame.height);
    const tunedHere = this.tuned === null;
    const tuned = sourceStage(prep, this.requested, this.explicit, { temporal: filter, tuned: this.tuned ?? undefined });
    this.tuned ??= { params: tuned.params, report: tuned.report };
    return {
      frame: { width: frame.width, height: frame.height }, columns, rows, explicit: this.explicit, tuned, cellLuma: prep.cellLuma,
      cellLinearRgb: later ? null : prep.resampled.cellLinearRgb, tunedHere, restarted: !kept,
    };
  }
}

/**
 * A handoff that owns its arrays (the shared ones copied), and the buffers to transfer with it to
 * another thread.
 */
export function detachHandoff(h: FrameHandoff): { handoff: FrameHandoff; transfer: ArrayBuffer[] } {
  const t = h.tuned;
  const tuned: TunedSource = { ...t, luma: t.luma.slice(0, t.width * t.height), stable: t.stable && t.stable.slice() };
  const handoff: FrameHandoff = { ...h, tuned };
  const transfer = [tuned.luma.buffer, tuned.stable?.buffer, h.cellLuma.buffer, h.cellLinearRgb?.buffer];
  return { handoff, transfer: [...new Set(transfer.filter((b): b is ArrayBuffer => b instanceof ArrayBuffer))] };
}

/**
 * The second half of FrameRenderer: denoise, tone and sharpening, glyphs with hysteresis against
 * the previous frame, the codebook chosen on a new tuning and kept, colours, the result. Takes the handoffs of one
 * FrameFront in order, each with the frame it came from.
 */
export class FrameBack {
  private previous: Uint16Array | null = null;
  private codebook: Int32Array | null = null;
  private choices = 0;

  /** Starts afresh (with FrameFront.retune() on its front). */
  retune(): void {
    this.previous = null;
    this.codebook = null;
  }

  get codebookChoices(): number {
    return this.choices;
  }

  /** `frame`: the pixels `h` was made from (colours read later come from them: keep them as they are until then). */
  render(frame: RgbaImage, h: FrameHandoff): RenderResult {
    checkPixels(frame);
    checkObject(h, 'FrameBack.render: handoff');
    // Another frame's pixels would be read at this one's grid: wrong colours, or reads past its end.
    if (frame.width !== h.frame?.width || frame.height !== h.frame?.height) {
      throw new RangeError(`FrameBack.render: the frame is ${frame.width} x ${frame.height}; the handoff was made from a ${h.frame?.width} x ${h.frame?.height} frame`);
    }
    if (h.restarted) this.previous = null;
    if (h.tunedHere) this.codebook = null;
    const p = h.tuned.params;
    const source = {
      image: frame, columns: h.columns, rows: h.rows, cellLuma: h.cellLuma,
      resampled: h.cellLinearRgb ? { cellLinearRgb: h.cellLinearRgb } : laterCellRgb(frame, h.columns, h.rows, SUB_X, SUB_Y, p.invert ? 1 : 0),
    };
    const result = glyphStage(source, h.tuned, h.explicit, frame, {
      previous: this.previous ?? undefined,
      codebook: this.codebook ?? undefined,
      keptTuning: !h.tunedHere,
    });
    if (!this.codebook) {
      this.choices++;
      this.codebook = Int32Array.from([...result.codebook.glyphs], (ch) => result.glyphs.indexOf(ch));
    }
    this.previous = result.cells;
    return result;
  }
}

/**
 * Renders a stream of frames (webcam, video, animated GIF) without flicker: the Bayesian temporal
 * filter smooths each sample, stable cells keep their glyph unless another is clearly better
 * (hysteresis), and the Auto Director's tuning and the glyph codebook are chosen on the first
 * frame and kept, since re-tuning per frame would itself flicker. A hard cut (most cell means
 * moved by more than CUT_DELTA since the previous frame) re-tunes in its own frame; the filter's
 * view of a cut re-tunes on the next: most cells in motion at once AND a change no noise explains,
 * in absolute terms: most cell means moved by more than CUT_DELTA from its estimate, or the whole
 * frame's mean moved by more than SHIFT_DELTA (a fade). Absolute, so a noise estimate still settling (the first frames)
 * or reading low cannot pass a still noisy scene for a cut at any column count.
 * `retune()` starts afresh (a new source, or the caller changed parameters).
 * Mono frames on a kept tuning compute their cells' colours only when something reads them (json's
 * chroma, the report's round-trip metric), from the frame's pixels: keep a frame's pixels as they
 * are until its result's colours are read, or read them before reusing the buffer.
 * It is FrameFront then FrameBack on one thread; the studio runs the two halves on two.
 */
export class FrameRenderer {
  private readonly front: FrameFront;
  private readonly back = new FrameBack();

  /** `params` as render()'s: validated at run time too (ParamValidationError). */
  constructor(params: RenderInput = {}) {
    this.front = new FrameFront(params);
  }

  retune(): void {
    this.front.retune();
    this.back.retune();
  }

  /** How many times the tuning and the codebook were chosen: 1 after the first frame, +1 per scene cut or retune. */
  get codebookChoices(): number {
    return this.back.codebookChoices;
  }

  render(frame: RgbaImage): RenderResult {
    return this.back.render(frame, this.front.render(frame));
  }
}
