import type { Charset } from '../params/definitions.js';

/** Sub-cell sampling grid of glyph templates and of the renderer's working raster. */
export const SUB_X = 4;
export const SUB_Y = 8;
export const SAMPLES = SUB_X * SUB_Y;

/**
 * The close viewing distance, as a blur in cell heights: bench:quality's contour score blurs
 * source and art by this much (issue 11's glyph scale), and at it a glyph's strokes still show.
 * Each glyph's texture (font-data.generated.ts) is measured at it.
 */
export const NEAR_BLUR = 0.08;

/**
 * A glyph ramp with measured shapes. Everything here is derived from the reference font by
 * scripts/measure-glyphs.ts; nothing is hand-typed.
 */
export interface GlyphSet {
  /** The charset; a custom ramp (the `glyphs` parameter) keeps the charset it replaced. */
  readonly name: Charset;
  /** Identifies the ramp: the charset name, or `glyphs:` and the custom ramp. */
  readonly key: string;
  readonly kind: 'ramp' | 'blocks' | 'braille';
  /** Glyphs sorted by measured ink coverage, lightest first (the first is always blank). */
  readonly glyphs: readonly string[];
  /** Mean ink coverage 0..1 of each glyph over its whole cell. */
  readonly coverage: Float32Array;
  /** glyphs.length * SAMPLES sub-cell ink coverages 0..1, each glyph row-major SUB_X x SUB_Y. */
  readonly templates: Float32Array;
}
