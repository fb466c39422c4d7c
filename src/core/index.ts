/**
 * The v2a renderer core: pure TypeScript over typed arrays, no Node or DOM imports. The server,
 * MCP tool, CLI and studio are thin adapters over these exports.
 */
import { render as renderImage, type RenderOptions } from './render.js';
import type { RenderInput, RenderResult, RgbaImage } from './types.js';

export * from './params/index.js';
export * from './types.js';
export type { RenderOptions, TunedSource } from './render.js';
export { FrameRenderer, FrameFront, FrameBack, detachHandoff, type FrameHandoff } from './video.js';
export { TemporalFilter, type TemporalFilterOptions } from './temporal/filter.js';
export { getGlyphSet } from './glyphs/charsets.js';
export type { GlyphSet } from './glyphs/types.js';
export { DECODE_PIXELS_PER_COLUMN, GeometryError, MAX_ROWS } from './pipeline/geometry.js';
export * from './format/index.js';
// The one table of error codes: every error thrown carries `code` (ErrorCode), narrowed by isV2aError.
export { ERRORS, EXIT, V2aError, isV2aError, type ErrorCode, type ErrorInfo, type FieldError, type V2aErrorOptions } from './errors.js';

/**
 * Renders an image (8-bit RGBA) into a cell grid; `formatResult` turns it into text, ANSI, HTML,
 * JSON or SVG. Parameters not given take their defaults or are tuned by the Auto Director
 * (`autoOptimize`). Throws ParamValidationError for an out-of-range value.
 */
export function render(image: RgbaImage, params: RenderInput = {}, options: RenderOptions = {}): RenderResult {
  return renderImage(image, params, options);
}
