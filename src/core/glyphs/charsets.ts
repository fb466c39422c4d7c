/**
 * The glyph ramps of decisions.md ("Charsets"), built from glyph shapes measured from the reference
 * font (font-data.generated.ts, written by `npm run glyphs`). Nothing here is hand-ordered: every
 * ramp is sorted by measured ink coverage. Pure TypeScript (no Node or DOM).
 */
import type { Charset } from '../params/definitions.js';
import { CHARSETS } from '../params/definitions.js';
import { BLOCK_GLYPHS, FALLBACK_FONT, FONT, FONT_CELL_ASPECT, GLYPH_DATA, MEASURE_CELL } from './font-data.generated.js';
import { SAMPLES, SUB_X, SUB_Y, type GlyphSet } from './types.js';
import { f32Of, precomputed } from '../tables.js';

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
/** Raw rows by glyph; each template is decoded on first use (a start-up needs about a quarter of them). */
let raw: Map<string, readonly [codePoint: number, coverage: number, template: string, texture: number]> | undefined;
const decoded = new Map<string, Decoded>();

/** A hex digit's value, or -1. */
function hexDigit(c: number): number {
  if (c >= 48 && c <= 57) return c - 48;
  if (c >= 97 && c <= 102) return c - 87;
  return -1;
}

/** Hex template rows ('0a1b2c3d 4e5f...') -> SAMPLES floats 0..1. */
function decodeTemplate(hex: string, cp: number): Float32Array {
  const t = new Float32Array(SAMPLES);
  let i = 0;
  for (let k = 0; k < hex.length; k++) {
    const c = hex.charCodeAt(k);
    if (c === 32) continue;
    const hi = hexDigit(c);
    const lo = hexDigit(hex.charCodeAt(++k));
    if (hi < 0 || lo < 0 || i >= SAMPLES) throw new Error(`font-data.generated.ts: bad template for U+${cp.toString(16)}`);
    t[i++] = (hi * 16 + lo) / 255;
  }
  if (i !== SAMPLES) throw new Error(`font-data.generated.ts: bad template for U+${cp.toString(16)}`);
  return t;
}

function rows(): Map<string, readonly [number, number, string, number]> {
  if (!raw) {
    if (MEASURE_CELL.subX !== SUB_X || MEASURE_CELL.subY !== SUB_Y) {
      throw new Error('font-data.generated.ts was measured for another template grid; run `npm run glyphs`');
    }
    raw = new Map(GLYPH_DATA.map((row) => [String.fromCodePoint(row[0]), row]));
  }
  return raw;
}

function lookup(ch: string): Decoded | undefined {
  let s = decoded.get(ch);
  if (!s) {
    const row = rows().get(ch);
    if (!row) return undefined;
    s = { coverage: row[1], template: decodeTemplate(row[2], row[0]) };
    decoded.set(ch, s);
  }
  return s;
}

/** Coverage of a measured glyph without decoding its template, or undefined. */
function coverageOf(ch: string): number | undefined {
  return rows().get(ch)?.[1];
}

/**
 * Each glyph's texture up close (font-data.generated.ts: the variance of its ink blurred by
 * NEAR_BLUR over a field of the same glyph), 0 for one not measured: a flat region drawn in `Q`s
 * (0.021) or `M`s (0.039) reads as noise up close, in blanks (0) as flat.
 */
export function glyphTextures(glyphs: readonly string[]): Float32Array {
  const pre = precomputed();
  if (pre && glyphs.join('') === pre.detailed.glyphs) return f32Of(pre.detailed.textures);
  return computeGlyphTextures(glyphs);
}

/** glyphTextures() from the font data (scripts/build-tables.ts precomputes the default ramp's). */
export function computeGlyphTextures(glyphs: readonly string[]): Float32Array {
  return Float32Array.from(glyphs, (ch) => rows().get(ch)?.[3] ?? 0);
}

function shapeOf(ch: string): Decoded {
  const s = lookup(ch);
  if (!s) throw new Error(`glyph ${JSON.stringify(ch)} was not measured (scripts/measure-glyphs.ts)`);
  return s;
}

/** The measured shape of any measured glyph (printable ASCII, block elements, Braille), else undefined. */
export function glyphShape(ch: string): GlyphShape | undefined {
  const s = lookup(ch);
  return s && { coverage: s.coverage, template: Float32Array.from(s.template) };
}

const cp = (ch: string) => ch.codePointAt(0)!;

/** Ascending measured coverage; ties by code point (stable, deterministic). */
function byCoverage(glyphs: readonly string[]): string[] {
  const cov = (ch: string) => {
    const c = coverageOf(ch);
    if (c === undefined) throw new Error(`glyph ${JSON.stringify(ch)} was not measured (scripts/measure-glyphs.ts)`);
    return c;
  };
  return [...glyphs].sort((a, b) => cov(a) - cov(b) || cp(a) - cp(b));
}

const PRINTABLE_ASCII = Array.from({ length: 0x7f - 0x20 }, (_, i) => String.fromCodePoint(0x20 + i));
const BRAILLE = Array.from({ length: 256 }, (_, i) => String.fromCodePoint(0x2800 + i));

function densest(glyphs: readonly string[]): string {
  return byCoverage(glyphs).reduce((a, b) => (coverageOf(b)! > coverageOf(a)! ? b : a));
}

function build(name: Charset): GlyphSet {
  const pre = name === 'detailed' ? precomputed() : null;
  // The default charset as the build decoded it (core/tables.ts): a first render decoded its
  // 95 templates and sorted its glyphs interpreted, 1-2 ms.
  if (pre) {
    const p = pre.detailed;
    return Object.freeze({ name, key: name, kind: 'ramp' as const, glyphs: Object.freeze([...p.glyphs]), coverage: f32Of(p.coverage), templates: f32Of(p.templates) });
  }
  return computeGlyphSet(name);
}

/** The glyph set of a charset from the font data (scripts/build-tables.ts precomputes the default's). */
export function computeGlyphSet(name: Charset): GlyphSet {
  let kind: GlyphSet['kind'] = 'ramp';
  let glyphs: string[];
  switch (name) {
    case 'standard': glyphs = byCoverage([...RAMP_SOURCES.standard]); break;
    case 'minimal': glyphs = byCoverage([...RAMP_SOURCES.minimal]); break;
    case 'detailed': glyphs = byCoverage(PRINTABLE_ASCII); break;
    case 'binary': glyphs = [' ', densest(PRINTABLE_ASCII)]; break;
    case 'blocks': kind = 'blocks'; glyphs = byCoverage([...BLOCK_GLYPHS]); break;
    case 'dots': kind = 'braille'; glyphs = BRAILLE; break; // code-point order: index = dot bits
    default: throw new RangeError(`unknown charset ${JSON.stringify(name)}; expected one of ${CHARSETS.join(', ')}`);
  }
  return freezeSet(name, name, kind, glyphs);
}

function freezeSet(name: Charset, key: string, kind: GlyphSet['kind'], glyphs: string[]): GlyphSet {
  const coverage = new Float32Array(glyphs.length);
  const templates = new Float32Array(glyphs.length * SAMPLES);
  glyphs.forEach((ch, i) => {
    const s = shapeOf(ch);
    coverage[i] = s.coverage;
    templates.set(s.template, i * SAMPLES);
  });
  if (coverage[0] !== 0) throw new Error(`charset ${key}: the first glyph is not blank`);
  return Object.freeze({ name, key, kind, glyphs: Object.freeze(glyphs), coverage, templates });
}

const cache = new Map<Charset, GlyphSet>();

/**
 * The glyph set of a charset (built once, then cached; do not mutate its typed arrays).
 *
 * - `standard` (` .:-=+*#%@`), `minimal` (` .:-+*`), `detailed` (the 95 printable ASCII glyphs):
 *   kind `ramp`, sorted by measured coverage ascending, ties by code point; the space is first.
 * - `binary`: kind `ramp`, the space and the densest printable ASCII glyph (measured: `@`).
 * - `blocks`: kind `blocks`, the 33 glyphs of BLOCK_GLYPHS (the space, the shades ░▒▓, all 15
 *   non-blank 2x2 quadrant/half/full blocks, the lower eighths ▁▂▃▅▆▇ with ▔, and the left eighths
 *   ▏▎▍▋▊▉ with ▕), sorted by measured coverage. DejaVu Sans Mono has no sextants (U+1FB00..).
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


// ---------------------------------------------------------------------------------------------
// Custom ramps (the `glyphs` parameter).

/** `'a' (U+0061)`: a glyph as messages name it; control characters by code point only. */
function nameGlyph(ch: string): string {
  const cp = ch.codePointAt(0)!;
  const u = 'U+' + cp.toString(16).toUpperCase().padStart(4, '0');
  const printable = cp >= 0x20 && !(cp >= 0x7f && cp <= 0x9f) && !(cp >= 0xd800 && cp <= 0xdfff);
  return printable ? `${JSON.stringify(ch)} (${u})` : u;
}

function isPrintable(cp: number): boolean {
  return cp >= 0x20 && !(cp >= 0x7f && cp <= 0x9f) && !(cp >= 0xd800 && cp <= 0xdfff) && cp !== 0xfffe && cp !== 0xffff
    && !(cp >= 0x2028 && cp <= 0x202e) && !(cp >= 0x2066 && cp <= 0x2069) && cp !== 0x200b && cp !== 0xfeff;
}

/**
 * Why `text` cannot be a custom ramp (a clause naming the offending glyph), or undefined when it can. Every glyph must be one printable
 * code point whose shape was measured (printable ASCII, the block elements, Braille), given once;
 * at most `maxGlyphs` glyphs; '' is valid (no custom ramp). The message names the first offending
 * character.
 */
export function glyphsProblem(text: string, maxGlyphs: number): string | undefined {
  if (text === '') return undefined; // the charset's ramp
  const chars = [...text];
  if (chars.length > maxGlyphs) return `it has ${chars.length}`;
  const seen = new Set<string>();
  for (const ch of chars) {
    const cp = ch.codePointAt(0)!;
    if (!isPrintable(cp)) return `${nameGlyph(ch)} is not printable`;
    if (coverageOf(ch) === undefined) return `${nameGlyph(ch)} was not measured from the reference font`;
    if (seen.has(ch)) return `${nameGlyph(ch)} is given twice`;
    seen.add(ch);
  }
  const ink = chars.filter((ch) => !isBlankShape(ch));
  if (ink.length === 0) return 'it has no glyph with ink (give one besides the space)';
  return undefined;
}

function isBlankShape(ch: string): boolean {
  return coverageOf(ch) === 0;
}

/** Bounded: a server sees arbitrary ramps, and each set holds its templates. */
const CUSTOM_CACHE_SIZE = 32;
const customCache = new Map<string, GlyphSet>();

/**
 * The glyph set of a custom ramp (already validated by `glyphsProblem`): kind `ramp`, sorted by
 * measured coverage like every charset, with the space added as the ground (the lightest glyph)
 * when the ramp has no blank glyph, because transparent and empty areas render as blank.
 * Blank glyphs other than the first are dropped (they are the same tone). Cached, least recently
 * used first out.
 */
export function customGlyphSet(name: Charset, text: string): GlyphSet {
  const key = `glyphs:${text}`;
  const hit = customCache.get(key);
  if (hit) {
    customCache.delete(key);
    customCache.set(key, hit);
    return hit;
  }
  const ink = [...text].filter((ch) => !isBlankShape(ch));
  const blank = [...text].find(isBlankShape) ?? ' ';
  const set = freezeSet(name, key, 'ramp', [blank, ...byCoverage(ink)]);
  customCache.set(key, set);
  if (customCache.size > CUSTOM_CACHE_SIZE) customCache.delete(customCache.keys().next().value!);
  return set;
}

/** The ramp of effective parameters: the custom `glyphs` when given, else the charset's. */
export function glyphSetOf(params: { readonly charset: Charset; readonly glyphs: string }): GlyphSet {
  return params.glyphs ? customGlyphSet(params.charset, params.glyphs) : getGlyphSet(params.charset);
}
