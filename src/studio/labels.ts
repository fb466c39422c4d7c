/**
 * Human names for the parameter controls and the style presets. The parameters themselves (range,
 * default, description) come from PARAMS; only the words a person reads are here. A parameter
 * added to PARAMS without a label here gets its name spelled out ("cellAspect" -> "Cell aspect").
 */
import { DEFAULTS, LIGHT_GROUND, groundFor, type RenderParams } from '../core/index.js';

const LABELS: Readonly<Record<string, string>> = {
  // Names differ from the stage's and panel's own ("Colour" ink, the "Characters" group, the "Tune
  // for" chips): a speech-input user says one, a screen reader lists each.
  columns: 'Width (characters)',
  charset: 'Character set',
  format: 'Download format',
  color: 'Colour art',
  invert: 'Swap light and dark',
  contrast: 'Contrast',
  brightness: 'Brightness',
  saturation: 'Colour strength',
  gamma: 'Midtones',
  edges: 'Line art (edges)',
  edgeStrength: 'Line strength',
  dither: 'Dithering',
  sharpen: 'Sharpen',
  autoLevels: 'Auto levels',
  structure: 'Follow contours',
  denoise: 'Smooth noise',
  motionSensitivity: 'Motion response',
  autoOptimize: 'Auto-tuning strength',
  qualityTarget: 'Quality target',
  glyphStrategy: 'Character choice',
  maxGlyphRmse: 'Fewest characters within',
  monoColor: 'Ink colour',
};

/**
 * The report's measurements where their names alone would read as a setting's (gamma is
 * "Midtones"): what each measures. The others are spelled out (dynamicRange -> "Dynamic range").
 */
const MEASURE_LABELS: Readonly<Record<string, string>> = {
  shadows: 'Shadow detail',
  midtones: 'Midtone detail',
  highlights: 'Highlight detail',
  levels: 'Tone levels',
  range: 'Tonal range',
  median: 'Median tone',
};

/** A Director report's measurement (on the art or the source), in words. */
export function measureLabelOf(name: string): string {
  return MEASURE_LABELS[name] ?? labelOf(name);
}

/** Names of enum values a person reads (the value itself is what the API gets). */
const VALUE_LABELS: Readonly<Record<string, Readonly<Record<string, string>>>> = {
  charset: { standard: 'Classic ASCII', detailed: 'All ASCII', blocks: 'Blocks', binary: 'Solid and blank', dots: 'Braille dots', minimal: 'Light ASCII' },
  glyphStrategy: { adaptive: 'Adaptive (fewest that fit)', fixed: 'The whole set' },
  qualityTarget: { balanced: 'Balanced', portrait: 'Portraits', motion: 'Motion', 'low-light': 'Low light', 'round-trip': 'Round trip (re-readable)' },
};

export function labelOf(name: string): string {
  if (LABELS[name]) return LABELS[name];
  // In the project's spelling, as in its prose ("colorDepth" -> "Colour depth").
  const words = name.replace(/([a-z0-9])([A-Z])/g, '$1 $2').toLowerCase().replace(/\bcolor/g, 'colour');
  return words.charAt(0).toUpperCase() + words.slice(1);
}

export function valueLabelOf(name: string, value: string): string {
  return VALUE_LABELS[name]?.[value] ?? value;
}

/** Ink and ground go together: ink on a light ground is dark and vice versa, never invisible. */
export const DARK_INK = DEFAULTS.monoColor;
export const LIGHT_GROUND_INK = '#1a1a1a';

export function groundIsLight(monoColor: string): boolean {
  return groundFor(monoColor) === LIGHT_GROUND;
}

export interface StylePreset {
  readonly id: string;
  readonly label: string;
  readonly hint: string;
  /** Parameters this style sets; the others keep what they are. */
  readonly params: Partial<RenderParams>;
}

/** One click to the modes that look best; each is a plain set of parameters (see the curl box). */
export const STYLE_PRESETS: readonly StylePreset[] = [
  { id: 'colour-blocks', label: 'Colour blocks', hint: 'Unicode blocks in the image\'s colours: the richest picture.', params: { charset: 'blocks', color: true, edges: false, dither: false } },
  { id: 'braille-colour', label: 'Braille in colour', hint: 'Braille dots (2×4 per character) in colour: fine detail.', params: { charset: 'dots', color: true, edges: false, dither: false } },
  { id: 'ascii-colour', label: 'Colour ASCII', hint: 'All printable ASCII characters, coloured.', params: { charset: 'detailed', color: true, edges: false, dither: false } },
  { id: 'classic', label: 'Classic ASCII', hint: 'Ten classic ASCII characters in one ink.', params: { charset: 'standard', color: false, edges: false, dither: false } },
  { id: 'line-art', label: 'Line art', hint: 'Characters trace the edges instead of the tones.', params: { charset: 'standard', color: false, edges: true, dither: false } },
];
