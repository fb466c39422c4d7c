/**
 * The v2a renderer core: pure TypeScript over typed arrays, no Node or DOM imports. The server,
 * MCP tool, CLI and studio are thin adapters over these exports.
 */
export * from './params/index.js';
export * from './types.js';
export { render, type RenderOptions } from './render.js';
export { FrameRenderer } from './video.js';
export { TemporalFilter } from './temporal/filter.js';
export { getGlyphSet } from './glyphs/charsets.js';
export { DECODE_PIXELS_PER_COLUMN, GeometryError, MAX_ROWS } from './pipeline/geometry.js';
export * from './format/index.js';
