/**
 * The glyph ramps of decisions.md ("Charsets"), built from glyph shapes measured from the reference
 * font (font-data.generated.ts, written by `npm run glyphs`). Nothing here is hand-ordered: every
 * ramp is sorted by measured ink coverage. Pure TypeScript (no Node or DOM).
 */
import type { Charset } from '../params/definitions.js';
import { CHARSETS } from '../params/definitions.js';
import { BLOCK_GLYPHS, FALLBACK_FONT, FONT, FONT_CELL_ASPECT, GLYPH_DATA, MEASURE_CELL } from './font-data.generated.js';
import { SAMPLES, SUB_X, SUB_Y, type GlyphSet } from './types.js';

/** The reference font (identity and metrics in font units) the shapes were measured from. */
export const REFERENCE_FONT = FONT;
/** The font the Braille patterns were measured from (DejaVu Sans Mono has none; terminals fall back). */
export const REFERENCE_FALLBACK_FONT = FALLBACK_FONT;
/**
 * Cell aspect width / height of the reference font, advance / line height = 1233 / 2384 = 0.5172
 * (the renderer's documented reference cell is 1:2; this is the measured one).
 */
export const MEASURED_CELL_ASPECT: number = FONT_CELL_ASPECT;
/** Cell size in px of the raster the templates were measured on. */
export const MEASURED_CELL = MEASURE_CELL;

/** The source glyphs of the ASCII ramps of decisions.md, before ordering by measured coverage. */
export const RAMP_SOURCES = {
  standard: ' .:-=+*#%@',
  minimal: ' .:-+*',
} as const;

/** The directional glyphs `structure` and `edges` substitute along contours. */
export const DIRECTIONAL_CHARS = { horizontal: '-', vertical: '|', diagonalUp: '/', diagonalDown: '\\' } as const;


/** Measured shape of one glyph. */
export interface GlyphShape {
  /** Mean ink coverage 0..1 of the whole cell. */
  readonly coverage: number;
  /** SAMPLES sub-cell ink coverages 0..1, row-major SUB_X x SUB_Y (a fresh copy). */
  readonly template: Float32Array;
}

interface Decoded { readonly coverage: number; readonly template: Float32Array }
let decoded: Map<string, Decoded> | undefined;

/** Hex template rows ('0a1b2c3d 4e5f...') -> SAMPLES floats 0..1. */
function decodeTemplate(hex: string, cp: number): Float32Array {
  const digits = hex.replace(/ /g, '');
  if (digits.length !== SAMPLES * 2 || !/^[0-9a-f]+$/.test(digits)) {
    throw new Error(`font-data.generated.ts: bad template for U+${cp.toString(16)}`);
  }
  const t = new Float32Array(SAMPLES);
  for (let i = 0; i < SAMPLES; i++) t[i] = parseInt(digits.slice(2 * i, 2 * i + 2), 16) / 255;
  return t;
}

function shapes(): Map<string, Decoded> {
  if (!decoded) {
    if (MEASURE_CELL.subX !== SUB_X || MEASURE_CELL.subY !== SUB_Y) {
      throw new Error('font-data.generated.ts was measured for another template grid; run `npm run glyphs`');
    }
    decoded = new Map(GLYPH_DATA.map(([cp, coverage, hex]) => [String.fromCodePoint(cp), { coverage, template: decodeTemplate(hex, cp) }]));
  }
  return decoded;
}

function shapeOf(ch: string): Decoded {
  const s = shapes().get(ch);
  if (!s) throw new Error(`glyph ${JSON.stringify(ch)} was not measured (scripts/measure-glyphs.ts)`);
  return s;
}

/** The measured shape of any measured glyph (printable ASCII, block elements, Braille), else undefined. */
export function glyphShape(ch: string): GlyphShape | undefined {
  const s = shapes().get(ch);
  return s && { coverage: s.coverage, template: Float32Array.from(s.template) };
}

const cp = (ch: string) => ch.codePointAt(0)!;

/** Ascending measured coverage; ties by code point (stable, deterministic). */
function byCoverage(glyphs: readonly string[]): string[] {
  return [...glyphs].sort((a, b) => shapeOf(a).coverage - shapeOf(b).coverage || cp(a) - cp(b));
}

const PRINTABLE_ASCII = Array.from({ length: 0x7f - 0x20 }, (_, i) => String.fromCodePoint(0x20 + i));
const BRAILLE = Array.from({ length: 256 }, (_, i) => String.fromCodePoint(0x2800 + i));

function densest(glyphs: readonly string[]): string {
  return byCoverage(glyphs).reduce((a, b) => (shapeOf(b).coverage > shapeOf(a).coverage ? b : a));
}

function build(name: Charset): GlyphSet {
  let kind: GlyphSet['kind'] = 'ramp';
  let glyphs: string[];
  switch (name) {
    case 'standard': glyphs = byCoverage([...RAMP_SOURCES.standard]); break;
    case 'minimal': glyphs = byCoverage([...RAMP_SOURCES.minimal]); break;
    case 'detailed': glyphs = byCoverage(PRINTABLE_ASCII); break;
    case 'binary': glyphs = [' ', densest(PRINTABLE_ASCII)]; break;
    case 'blocks': kind = 'blocks'; glyphs = byCoverage([...BLOCK_GLYPHS]); break;
    case 'dots': kind = 'braille'; glyphs = BRAILLE; break; // code-point order: index = dot bits
    default: throw new Error(`unknown charset ${JSON.stringify(name)}; expected one of ${CHARSETS.join(', ')}`);
  }
  const coverage = new Float32Array(glyphs.length);
  const templates = new Float32Array(glyphs.length * SAMPLES);
  glyphs.forEach((ch, i) => {
    const s = shapeOf(ch);
    coverage[i] = s.coverage;
    templates.set(s.template, i * SAMPLES);
  });
  if (coverage[0] !== 0) throw new Error(`charset ${name}: the first glyph is not blank`);
  return Object.freeze({ name, kind, glyphs: Object.freeze(glyphs), coverage, templates });
}

const cache = new Map<Charset, GlyphSet>();

/**
 * The glyph set of a charset (built once, then cached; do not mutate its typed arrays).
 *
 * - `standard` (` .:-=+*#%@`), `minimal` (` .:-+*`), `detailed` (the 95 printable ASCII glyphs):
 *   kind `ramp`, sorted by measured coverage ascending, ties by code point; the space is first.
 * - `binary`: kind `ramp`, the space and the densest printable ASCII glyph (measured: `@`).
 * - `blocks`: kind `blocks`, the 19 glyphs of BLOCK_GLYPHS (the space, the shades ░▒▓ and all 15
 *   non-blank 2x2 quadrant/half/full blocks), sorted by measured coverage.
 * - `dots`: kind `braille`, the 256 Braille patterns U+2800..U+28FF in CODE-POINT order, NOT
 *   coverage order (the exception to GlyphSet's "sorted by coverage"): glyph index i is the pattern
 *   with dot bits i (bit 0 = dot 1 ... bit 7 = dot 8), which is how the renderer addresses them.
 *   The blank U+2800 is still first. Shapes are measured from DejaVu Sans, which a terminal uses as
 *   the fallback for DejaVu Sans Mono (it has no Braille), centred in the cell.
 */
export function getGlyphSet(name: Charset): GlyphSet {
  let set = cache.get(name);
  if (!set) {
    set = build(name);
    cache.set(name, set);
  }
  return set;
}

