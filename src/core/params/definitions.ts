/**
 * The render parameters of interface.md §2.2, defined once. Validation, the OpenAPI document, the
 * MCP tool schema, the manifests, llms.txt, the CLI flags and the studio controls are all derived
 * from this table; nothing else may restate a name, range or default.
 */
import { deepFreeze, frozenMap, frozenSet } from '../freeze.js';
import type { DocumentedParams } from './render-params.generated.js';

/** The charsets, in the contract's order: the glyph sets a render can use. */
export const CHARSETS = ['standard', 'detailed', 'blocks', 'binary', 'dots', 'minimal'] as const;
/** The contract's six formats, then `png` (an extension: the art rasterised from the reference font's glyph data). */
export const FORMATS = ['text', 'ansi', 'html', 'json', 'json-compact', 'svg', 'png'] as const;
/** The output formats in words, for the one-line descriptions of v2a: "text, ANSI, HTML, JSON, SVG and PNG". */
export const FORMATS_IN_WORDS = FORMATS.filter((f) => f !== 'json-compact')
  .map((f) => (f === 'text' ? f : f.toUpperCase()))
  .join(', ').replace(/, ([^,]+)$/, ' and $1');
/** The Auto Director's rubrics (`qualityTarget`). */
export const QUALITY_TARGETS = ['balanced', 'portrait', 'motion', 'low-light', 'round-trip'] as const;
/** How the glyph codebook is chosen (`glyphStrategy`): per image, or the charset as it is. */
export const GLYPH_STRATEGIES = ['adaptive', 'fixed'] as const;
/** ANSI colour depths (extension): 24-bit SGR, the xterm 256-colour palette, the 16 ANSI colours. */
export const COLOR_DEPTHS = ['truecolor', '256', '16'] as const;
/** Colours per cell (`cellColors`, extension): auto (two for blocks and dots), ink only, ink and background. */
export const CELL_COLOR_MODES = ['auto', 'fg', 'fg-bg'] as const;

export type Charset = (typeof CHARSETS)[number];
export type Format = (typeof FORMATS)[number];
export type QualityTarget = (typeof QUALITY_TARGETS)[number];
export type GlyphStrategy = (typeof GLYPH_STRATEGIES)[number];
export type ColorDepth = (typeof COLOR_DEPTHS)[number];
export type CellColorMode = (typeof CELL_COLOR_MODES)[number];

export type ParamGroup = 'output' | 'tone' | 'detail' | 'glyphs' | 'director' | 'video';

interface Base<N extends string> {
  readonly name: N;
  readonly group: ParamGroup;
  readonly description: string;
  /**
   * Beyond the interface contract (interface.md §2.2). Its description starts with
   * "Extension (beyond the contract)", so every generated listing says so, and its default
   * reproduces the contract's output exactly.
   */
  readonly extension?: true;
  /** The CLI's own flag for it, when it is not `--<kebab-name>` (the CLI documents its values). */
  readonly cliFlag?: string;
}
export interface IntegerDef<N extends string = string> extends Base<N> {
  readonly type: 'integer';
  readonly min: number;
  readonly max: number;
  readonly default: number;
}
export interface NumberDef<N extends string = string> extends Base<N> {
  readonly type: 'number';
  readonly min: number;
  readonly max: number;
  readonly default: number;
  /** Step for sliders and CLI help; validation accepts any float in range. */
  readonly step: number;
}
export interface BooleanDef<N extends string = string> extends Base<N> {
  readonly type: 'boolean';
  readonly default: boolean;
}
export interface EnumDef<N extends string = string, V extends string = string> extends Base<N> {
  readonly type: 'enum';
  readonly values: readonly V[];
  readonly default: V;
}
export interface ColorDef<N extends string = string> extends Base<N> {
  readonly type: 'color';
  readonly default: string;
}
/**
 * A custom glyph ramp: a string of glyphs, each one printable code point whose shape was measured
 * from the reference font (glyphs/charsets.ts says which); '' = none (the charset's ramp).
 */
export interface GlyphsDef<N extends string = string> extends Base<N> {
  readonly type: 'glyphs';
  readonly default: string;
  /** Most glyphs (code points) in the ramp. */
  readonly maxGlyphs: number;
}
export type ParamDef = IntegerDef | NumberDef | BooleanDef | EnumDef | ColorDef | GlyphsDef;

/** Every render parameter, defined once: name, type, range or values, default, meaning (frozen). */
export const PARAMS = deepFreeze([
  { name: 'columns', type: 'integer', min: 8, max: 400, default: 120, group: 'output',
    description: 'Output width in characters; the row count follows the image aspect and the 1:2 cell aspect.' },
  { name: 'charset', type: 'enum', values: CHARSETS, default: 'detailed', group: 'glyphs',
    description: 'Glyph ramp: standard (10 ASCII glyphs), detailed (all 95 printable ASCII), blocks (Unicode shades, 2x2 quadrants and eighth blocks), binary (blank and the densest glyph), dots (Braille 2x4), minimal (6 light ASCII glyphs).' },
  { name: 'format', type: 'enum', values: FORMATS, default: 'text', group: 'output',
    description: 'Output format: text, ansi (24-bit SGR), html, json, json-compact (text plus rgb24-b64-v1 chroma), svg; extension: png (the art drawn from the reference font\'s glyphs at 8x16 px per cell; 8 px wide and 8 / cellAspect tall for another cellAspect).' },
  { name: 'color', type: 'boolean', default: false, group: 'output',
    description: 'Per-cell 24-bit colour in ansi, html, svg, json and png; ignored by plain text.' },
  { name: 'invert', type: 'boolean', default: false, group: 'tone',
    description: 'Invert the luminance mapping: dark areas get dense glyphs (for dark ink on a light or transparent ground; html, svg and png keep the ground monoColor picks: a negative under the default).' },
  { name: 'contrast', type: 'number', min: 0.2, max: 4, default: 1.15, step: 0.05, group: 'tone',
    description: 'Tonal contrast multiplier around mid-grey.' },
  { name: 'brightness', type: 'number', min: -150, max: 150, default: 0, step: 1, group: 'tone',
    description: 'Luminance offset on a 0-255 scale.' },
  { name: 'saturation', type: 'number', min: 0, max: 4, default: 1.4, step: 0.05, group: 'tone',
    description: 'Colour saturation multiplier for colour output (0 = grey).' },
  { name: 'gamma', type: 'number', min: 0.2, max: 3, default: 1, step: 0.05, group: 'tone',
    description: 'Perceptual midtone response: above 1 lifts midtones, below 1 deepens them.' },
  { name: 'edges', type: 'boolean', default: false, group: 'detail',
    description: 'Sobel edge-detection line-art mode: glyphs trace edges instead of tone.' },
  { name: 'edgeStrength', type: 'number', min: 0.1, max: 5, default: 1.8, step: 0.1, group: 'detail',
    description: 'Edge magnitude multiplier in edges mode (near 0.1 few edges are left, often none).' },
  { name: 'dither', type: 'boolean', default: false, group: 'glyphs',
    description: 'Floyd-Steinberg (serpentine) error diffusion across the available glyph levels.' },
  { name: 'sharpen', type: 'number', min: 0, max: 1, default: 0.35, step: 0.05, group: 'detail',
    description: 'Unsharp-mask detail enhancement.' },
  { name: 'autoLevels', type: 'number', min: 0, max: 1, default: 0.9, step: 0.05, group: 'tone',
    description: 'Automatic percentile histogram stretch: 0 none, 1 a full stretch of the 0.5th-99.5th percentiles.' },
  { name: 'structure', type: 'number', min: 0, max: 1, default: 0.55, step: 0.05, group: 'detail',
    description: 'Contour-aware directional glyph substitution (- / | and backslash) where the local gradient is coherent; in the ASCII ramps (binary keeps its two levels, but for edges\' line art; a custom ramp needs all four glyphs). In edges mode at least 0.5: line art draws its lines.' },
  { name: 'denoise', type: 'number', min: 0, max: 1, default: 0.35, step: 0.05, group: 'detail',
    description: 'Edge-preserving bilateral denoising before detail recovery.' },
  { name: 'motionSensitivity', type: 'number', min: 0, max: 1, default: 0.7, step: 0.05, group: 'video',
    description: 'Motion responsiveness of the Bayesian temporal filter for video (studio and animated CLI input); a still image is unaffected.' },
  { name: 'autoOptimize', type: 'number', min: 0, max: 1, default: 0.9, step: 0.05, group: 'director',
    description: 'Strength of the source-aware Auto Director tuning of parameters you did not set; 0 turns it off.' },
  { name: 'qualityTarget', type: 'enum', values: QUALITY_TARGETS, default: 'balanced', group: 'director',
    description: 'Quality rubric the Auto Director tunes for: balanced, portrait, motion, low-light, round-trip.' },
  { name: 'glyphStrategy', type: 'enum', values: GLYPH_STRATEGIES, default: 'adaptive', group: 'glyphs',
    description: 'adaptive: the smallest glyph codebook from the ramp whose measured luminance RMSE is within maxGlyphRmse; fixed: the whole ramp.' },
  { name: 'maxGlyphRmse', type: 'number', min: 0.005, max: 0.1, default: 0.03, step: 0.005, group: 'glyphs',
    description: 'Maximum normalized luminance quantization RMSE for adaptive glyph selection.' },
  { name: 'monoColor', type: 'color', default: '#e5e5e5', group: 'output',
    description: 'Ink colour (#rrggbb) for mono output in ansi, html and svg. It also picks the ground of html, svg and png, with color=true too: dark (#0b0b0b) under a light ink, light (#fafafa) under a dark one, where art that is not inverted reads as a negative: with a dark monoColor, set invert for dark art on light.' },
  // Extensions beyond interface.md §2.2 (the terminal's habits). Their defaults change nothing.
  { name: 'glyphs', type: 'glyphs', default: '', maxGlyphs: 256, group: 'glyphs', extension: true,
    description: 'Extension (beyond the contract): custom glyph ramp instead of the charset\'s, e.g. " .oO@": each glyph must be measured from the reference font (printable ASCII, the block elements of blocks, Braille); ordered by measured coverage, the space always included as the ground. Empty: the charset\'s ramp.' },
  { name: 'cellAspect', type: 'number', min: 0.25, max: 1, default: 0.5, step: 0.01, group: 'output', extension: true,
    description: 'Extension (beyond the contract): width / height of the character cell the art is shown in (0.5: the 1:2 reference cell; DejaVu Sans Mono measures 0.517); rows = round(columns x image height / width x cellAspect).' },
  { name: 'colorDepth', type: 'enum', values: COLOR_DEPTHS, default: 'truecolor', group: 'output', extension: true, cliFlag: '-c, --colors',
    description: 'Extension (beyond the contract): colour depth of ansi output: truecolor (24-bit SGR 38;2), 256 (xterm palette, SGR 38;5;n) or 16 (SGR 30-37, 90-97), the palette colour nearest in OKLab; other formats ignore it.' },
  { name: 'colorDither', type: 'boolean', default: false, group: 'output', extension: true,
    description: 'Extension (beyond the contract): with colorDepth 256 or 16: Floyd-Steinberg error diffusion of the cell colours in OKLab (smoother gradients, more colour changes).' },
  { name: 'cellColors', type: 'enum', values: CELL_COLOR_MODES, default: 'auto', group: 'output', extension: true,
    description: 'Extension (beyond the contract): colours per cell with color=true. fg: ink only; fg-bg: ink and background, chosen with the glyph; auto: fg-bg for blocks and dots, fg for the ASCII charsets. Plain text shows no colour: art rendered for it (format text) has the glyphs of color=false, and reports cellColors fg.' },
  { name: 'fineShapes', type: 'boolean', default: false, group: 'glyphs', extension: true,
    description: 'Extension (beyond the contract): choose every cell\'s glyph again by its shape on an 8x16 grid per cell (the 4x8 grid\'s matching sees strokes a quarter of a cell wide). Off (the default), only the cells with structure (an edge, a stroke, texture) are chosen again: crisper up close and truer from afar than the 4x8 choice alone. On, every cell: crisper contours still, with cell tone a little less even, about 1.1-1.2x the default\'s render time. ASCII ramps of still images without dither; blocks, dots and video frames keep the 4x8 choice.' },
] as const satisfies readonly ParamDef[]);

export type ParamName = (typeof PARAMS)[number]['name'];

type ValueOf<D> = D extends { type: 'boolean' } ? boolean
  : D extends { type: 'enum'; values: readonly (infer V)[] } ? V
  : D extends { type: 'color' | 'glyphs' } ? string
  : number;

type DerivedParams = { -readonly [D in (typeof PARAMS)[number] as D['name']]: ValueOf<D> };

/**
 * Every render parameter: the type PARAMS derives, in the documented form `npm run docs` writes
 * from PARAMS (render-params.generated.ts), whose per-parameter doc comments an editor shows.
 */
export type RenderParams = DocumentedParams;

// A parameter changed without `npm run docs` fails to compile here (the two types must be one).
type Same<A, B> = (<T>() => T extends A ? 1 : 2) extends (<T>() => T extends B ? 1 : 2) ? true : false;
const documentedIsDerived: Same<DerivedParams, DocumentedParams> = true;
void documentedIsDerived;

/** PARAMS by name (read-only). */
export const PARAM_BY_NAME: ReadonlyMap<string, ParamDef> = frozenMap(PARAMS.map((d) => [d.name, d as ParamDef]));

/** The default of every parameter. */
export const DEFAULTS: Readonly<RenderParams> = Object.freeze(
  Object.fromEntries(PARAMS.map((d) => [d.name, d.default])) as RenderParams,
);

/** `edgeStrength` -> `edge-strength`, for CLI flags. */
export function kebabName(name: string): string {
  return name.replace(/[A-Z]/g, (c) => '-' + c.toLowerCase());
}

/** Human text of a parameter's domain, used in error messages and help. */
export function describeDomain(def: ParamDef): string {
  switch (def.type) {
    case 'integer': return `an integer from ${def.min} to ${def.max}`;
    case 'number': return `a number from ${def.min} to ${def.max}`;
    case 'boolean': return 'true or false';
    case 'enum': return `one of ${def.values.join(', ')}`;
    case 'color': return 'a hex colour such as #e5e5e5';
    case 'glyphs': return `up to ${def.maxGlyphs} measured glyphs (printable ASCII, block elements, Braille), or empty`;
  }
}

/** The parameters beyond the interface contract. */
export const EXTENSION_PARAMS: ReadonlySet<string> = frozenSet((PARAMS as readonly ParamDef[]).filter((d) => d.extension).map((d) => d.name));

/**
 * The names the caller set as outputs report them (json `explicit`, MCP's structuredContent): in
 * the parameters' own order, not the request's, so that the same parameters give the same bytes
 * whatever their order.
 */
export function reportedExplicit(explicit: readonly string[]): string[] {
  return PARAMS.filter((d) => explicit.includes(d.name)).map((d) => d.name);
}

/**
 * The effective parameters as outputs report them (json `params`): every contract parameter, and
 * an extension parameter only when it differs from its default, so that at the defaults the
 * output is the contract's, byte for byte.
 */
export function reportedParams(params: Readonly<RenderParams>): Partial<RenderParams> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(params)) {
    if (EXTENSION_PARAMS.has(k) && v === (DEFAULTS as Record<string, unknown>)[k]) continue;
    out[k] = v;
  }
  return out as Partial<RenderParams>;
}
