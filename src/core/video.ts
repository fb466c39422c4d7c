import type { RenderParams } from './params/definitions.js';
import { parseParamsOrThrow, withDefaults } from './params/validate.js';
import { gridRows } from './pipeline/geometry.js';
import { prepare, renderPrepared } from './render.js';
import { SHIFT_DELTA, TemporalFilter } from './temporal/filter.js';
import type { DirectorReport, RenderResult, RgbaImage } from './types.js';

/**
 * Renders a stream of frames (webcam, video, animated GIF) without flicker: the Bayesian temporal
 * filter smooths each sample, stable cells keep their glyph unless another is clearly better
 * (hysteresis), and the Auto Director's tuning and the glyph codebook are chosen on the first
 * frame and kept, since re-tuning per frame would itself flicker. A scene cut re-tunes on the
 * next frame: most cells in motion at once AND a change no noise explains, in absolute terms:
 * most cell means moved by more than CUT_DELTA (a new scene), or the whole frame's mean moved by
 * more than SHIFT_DELTA (a fade). Absolute, so a noise estimate still settling (the first frames)
 * or reading low cannot pass a still noisy scene for a cut at any column count.
 * `retune()` starts afresh (a new source, or the caller changed parameters).
 * Mono frames on a kept tuning compute their cells' colours only when something reads them (json's
 * chroma, the report's round-trip metric), from the frame's pixels: keep a frame's pixels as they
 * are until its result's colours are read, or read them before reusing the buffer.
 */
/** Share of cells in motion, and of cells whose mean changed, that counts as a scene cut. */
const SCENE_CUT = 0.6;

export class FrameRenderer {
  private readonly requested: RenderParams;
  private readonly explicit: readonly string[];
  private filter: TemporalFilter | null = null;
  private previous: Uint16Array | null = null;
  private tuned: { params: RenderParams; report: DirectorReport } | null = null;
  private codebook: Int32Array | null = null;
  private choices = 0;

  constructor(params: Readonly<Record<string, unknown>> = {}) {
    const explicit = parseParamsOrThrow(params, 'json');
    this.requested = withDefaults(explicit);
    this.explicit = Object.keys(explicit);
  }

  retune(): void {
    this.filter?.reset();
    this.previous = null;
    this.tuned = null;
    this.codebook = null;
  }

  /** How many times the tuning and the codebook were chosen: 1 after the first frame, +1 per scene cut or retune. */
  get codebookChoices(): number {
    return this.choices;
  }

  render(frame: RgbaImage): RenderResult {
    const { columns, invert, cellAspect } = this.requested;
    const rows = gridRows(frame.width, frame.height, columns, cellAspect);
    // The filter of the same grid goes on; a new grid starts a new one (after the resample).
    const kept = this.filter && this.filter.rows === rows && this.filter.columns === columns ? this.filter : null;
    if (kept) {
      const stats = kept.stats;
      if (stats.frames > 1 && stats.motionShare > SCENE_CUT && (stats.changedShare > SCENE_CUT || Math.abs(stats.meanShift) > SHIFT_DELTA)) {
        this.tuned = null;
        this.codebook = null;
      }
    }
    // The cells' RGB feeds the Director and colour art; a mono frame on a kept tuning may never
    // need it (about a fifth of the resample at 200 columns): resampled on first read then.
    const prep = prepare(frame, columns, invert, cellAspect, this.tuned && !this.requested.color ? 'later' : 'now');
    const filter = kept ?? (this.filter = new TemporalFilter({ columns, rows }));
    if (!kept) this.previous = null;
    const raster = prep.resampled.luma;
    filter.setUpsampled(raster.width > frame.width || raster.height > frame.height);
    const result = renderPrepared(prep, this.requested, this.explicit, frame, {
      temporal: filter,
      previous: this.previous ?? undefined,
      tuned: this.tuned ?? undefined,
      codebook: this.codebook ?? undefined,
    });
    if (!this.tuned) this.tuned = { params: result.params, report: result.director };
    if (!this.codebook) {
      this.choices++;
      this.codebook = Int32Array.from([...result.codebook.glyphs], (ch) => result.glyphs.indexOf(ch));
    }
    this.previous = result.cells;
    return result;
  }
}
