/**
 * Measures glyph shapes of the reference font and writes src/core/glyphs/font-data.generated.ts
 * (coverages and matching templates) and src/core/glyphs/bitmaps.generated.ts (the small coverage
 * bitmaps the png format draws with).
 *
 *   npm run glyphs              regenerate the files
 *   npm run glyphs -- --check   regenerate in memory; exit 1 when a committed file differs
 *
 * Glyphs: printable ASCII U+0020..U+007E, the block elements of the `blocks` charset and the 256
 * Braille patterns U+2800..U+28FF. Each is rasterized as one terminal cell of DejaVu Sans Mono
 * (scripts/lib/glyph-raster.ts) at MEASURE_CELL_HEIGHT px, then reduced to its mean ink coverage
 * and a SUB_X x SUB_Y template of area-averaged sub-cell coverages; the same raster, area-averaged
 * to BITMAP_WIDTH x BITMAP_HEIGHT px and quantised to 16 levels, is each glyph's png bitmap.
 */
// glyph-raster must be imported before anything renders text (it configures fontconfig).
import { fallbackFont, rasterizeGlyphs, referenceFont } from './lib/glyph-raster.js';
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { NEAR_BLUR, SUB_X, SUB_Y } from '../src/core/glyphs/types.js';

/**
 * 116 px: the font's hinted advance at the largest size with a 116 px line is 60 px, so the raster
 * cell (60 x 116, aspect 0.51724) matches the design cell aspect 1233/2384 = 0.51720 to 0.01 %.
 * (At 96 px the cell would be 49 x 96, aspect 0.5104.)
 */
const MEASURE_CELL_HEIGHT = 116;
const OUT = fileURLToPath(new URL('../src/core/glyphs/font-data.generated.ts', import.meta.url));
const BITMAPS_OUT = fileURLToPath(new URL('../src/core/glyphs/bitmaps.generated.ts', import.meta.url));

/**
 * The png format's cell: 8 x 16 px keeps the grid's 1:2 reference aspect, is the cell `v2a decode`
 * rebuilds images at, and reads well (120 columns are 960 px wide). 16 coverage levels are one
 * hex digit a pixel; antialiasing finer than 1/15 is invisible at this size.
 */
const BITMAP_WIDTH = 8;
const BITMAP_HEIGHT = 16;
const BITMAP_LEVELS = 16;

const ASCII = Array.from({ length: 0x7f - 0x20 }, (_, i) => String.fromCodePoint(0x20 + i));
const BLOCKS = [...' ░▒▓█▀▄▌▐▖▗▘▝▙▚▛▜▞▟▁▂▃▅▆▇▏▎▍▋▊▉▔▕'];
const BRAILLE = Array.from({ length: 256 }, (_, i) => String.fromCodePoint(0x2800 + i));

/** Overlap of pixel [p, p+1) with each of `n` equal bins over [0, size): weights[bin][p]. */
function binWeights(size: number, n: number): Float64Array[] {
  const step = size / n;
  return Array.from({ length: n }, (_, b) => {
    const w = new Float64Array(size);
    const lo = b * step;
    const hi = (b + 1) * step;
    for (let p = Math.floor(lo); p < Math.min(size, Math.ceil(hi)); p++) w[p] = Math.min(hi, p + 1) - Math.max(lo, p);
    return w;
  });
}

interface Measured { readonly codePoint: number; readonly coverage: number; readonly template: Uint8Array; readonly texture: number }

function measure(bmp: Uint8Array, w: number, h: number, wx: Float64Array[], wy: Float64Array[]): { coverage: number; template: Float64Array } {
  let sum = 0;
  for (let i = 0; i < bmp.length; i++) sum += bmp[i]!;
  const template = new Float64Array(SUB_X * SUB_Y);
  const area = (w / SUB_X) * (h / SUB_Y) * 255;
  for (let sy = 0; sy < SUB_Y; sy++) {
    for (let sx = 0; sx < SUB_X; sx++) {
      let acc = 0;
      for (let y = 0; y < h; y++) {
        const ky = wy[sy]![y]!;
        if (ky === 0) continue;
        let row = 0;
        for (let x = 0; x < w; x++) row += wx[sx]![x]! * bmp[y * w + x]!;
        acc += ky * row;
      }
      template[sy * SUB_X + sx] = acc / area;
    }
  }
  return { coverage: sum / (w * h * 255), template };
}

/**
 * The glyph's texture up close: the variance of its ink (0..1 per pixel) blurred by NEAR_BLUR
 * cell heights (a Gaussian), over a flat field of the same glyph (the raster wrapped at the cell's
 * edges, as a region of one tone repeats it).
 */
function texture(bmp: Uint8Array, w: number, h: number): number {
  const sigma = NEAR_BLUR * h;
  const r = Math.ceil(3 * sigma);
  const k = new Float64Array(2 * r + 1);
  let ks = 0;
  for (let i = -r; i <= r; i++) ks += k[i + r] = Math.exp(-(i * i) / (2 * sigma * sigma));
  const wrap = (v: number, n: number) => ((v % n) + n) % n;
  const across = new Float64Array(w * h);
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) {
      let s = 0;
      for (let i = -r; i <= r; i++) s += k[i + r]! * bmp[y * w + wrap(x + i, w)]!;
      across[y * w + x] = s / (ks * 255);
    }
  }
  const blurred = new Float64Array(w * h);
  let mean = 0;
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) {
      let s = 0;
      for (let i = -r; i <= r; i++) s += k[i + r]! * across[wrap(y + i, h) * w + x]!;
      mean += blurred[y * w + x] = s / ks;
    }
  }
  mean /= w * h;
  let v = 0;
  for (const b of blurred) v += (b - mean) ** 2;
  return v / (w * h);
}

const hex2 = (v: number) => v.toString(16).padStart(2, '0');
const cpHex = (cp: number) => '0x' + cp.toString(16).padStart(4, '0');

function sanity(byChar: Map<string, { coverage: number; template: Float64Array }>): void {
  const t = (ch: string) => byChar.get(ch)!.template;
  const rows = (ch: string, from: number, to: number) => {
    let s = 0;
    for (let r = from; r < to; r++) for (let c = 0; c < SUB_X; c++) s += t(ch)[r * SUB_X + c]!;
    return s / ((to - from) * SUB_X);
  };
  const fail = (msg: string) => { throw new Error(`glyph placement check failed: ${msg}`); };
  if (byChar.get(' ')!.coverage !== 0 || byChar.get('\u2800')!.coverage !== 0) fail('blank glyphs have ink');
  if (byChar.get('█')!.coverage < 0.97) fail('full block does not fill its cell');
  if (rows('▀', 0, SUB_Y / 2) < 0.97 || rows('▀', SUB_Y / 2, SUB_Y) > 0.03) fail('upper half block is not the top half');
  if (rows('▄', SUB_Y / 2, SUB_Y) < 0.97 || rows('▄', 0, SUB_Y / 2) > 0.03) fail('lower half block is not the bottom half');
  if (rows('_', SUB_Y - 1, SUB_Y) <= 0 || rows('_', 0, SUB_Y - 1) > 0) fail("'_' is not at the bottom of the cell");
  if (rows('^', 0, SUB_Y / 2) <= 0 || rows('^', SUB_Y / 2, SUB_Y) > 0) fail("'^' is not in the top half of the cell");
}

/** Area-averaged coverage of each bin of the w x h raster, as one hex digit (0..BITMAP_LEVELS-1) per pixel. */
function bitmapOf(bmp: Uint8Array, w: number, bx: Float64Array[], by: Float64Array[], binArea: number): string {
  const rows: string[] = [];
  for (let y = 0; y < by.length; y++) {
    let row = '';
    for (let x = 0; x < bx.length; x++) {
      let acc = 0;
      const wy = by[y]!;
      const wx = bx[x]!;
      for (let py = 0; py < wy.length; py++) {
        if (wy[py] === 0) continue;
        let line = 0;
        for (let px = 0; px < w; px++) line += wx[px]! * bmp[py * w + px]!;
        acc += wy[py]! * line;
      }
      const level = Math.round(Math.min(1, Math.max(0, acc / (binArea * 255))) * (BITMAP_LEVELS - 1));
      row += level.toString(16);
    }
    rows.push(row);
  }
  return rows.join(' ');
}

function bitmapsText(chars: readonly string[], raster: { bitmaps: Map<string, Uint8Array>; cellWidth: number; cellHeight: number }): string {
  const { cellWidth: w, cellHeight: h } = raster;
  const bx = binWeights(w, BITMAP_WIDTH);
  const by = binWeights(h, BITMAP_HEIGHT);
  const binArea = (w / BITMAP_WIDTH) * (h / BITMAP_HEIGHT);
  const rows = chars.map((ch) => {
    const cp = ch.codePointAt(0)!;
    const label = ch === ' ' ? 'space' : ch;
    return `  [${cpHex(cp)}, '${bitmapOf(raster.bitmaps.get(ch)!, w, bx, by, binArea)}'], // ${label}`;
  });
  return `/**
 * GENERATED by \`npm run glyphs\` (scripts/measure-glyphs.ts) — do not edit; regenerate instead.
 * \`npm run glyphs -- --check\` verifies that this file is current.
 *
 * The glyph bitmaps the png format draws with: the same ${w} x ${h} px rasters of the reference font
 * that font-data.generated.ts measures (see there), area-averaged to ${BITMAP_WIDTH} x ${BITMAP_HEIGHT} px cells and
 * quantised to ${BITMAP_LEVELS} ink coverage levels. No system font is used when drawing, so a png is the
 * same bytes on every machine.
 *
 * GLYPH_BITMAPS rows: [code point, bitmap]. A bitmap is ${BITMAP_HEIGHT} space-separated rows (top first) of
 * ${BITMAP_WIDTH} hex digits, one per pixel: coverage * ${BITMAP_LEVELS - 1}, rounded. Pure data: no imports.
 */

/** Pixel size of one cell and the number of coverage levels (one hex digit each). */
export const BITMAP_CELL = { width: ${BITMAP_WIDTH}, height: ${BITMAP_HEIGHT}, levels: ${BITMAP_LEVELS} } as const;

/** Every measured glyph's bitmap, by code point (the glyphs of GLYPH_DATA, same order). */
export const GLYPH_BITMAPS: readonly (readonly [codePoint: number, bitmap: string])[] = [
${rows.join('\n')}
];
`;
}

async function generate(): Promise<{ text: string; bitmaps: string; summary: string }> {
  const chars = [...new Set([...ASCII, ...BLOCKS, ...BRAILLE])].sort((a, b) => a.codePointAt(0)! - b.codePointAt(0)!);
  const raster = await rasterizeGlyphs(chars, MEASURE_CELL_HEIGHT);
  const { cellWidth: w, cellHeight: h } = raster;
  const wx = binWeights(w, SUB_X);
  const wy = binWeights(h, SUB_Y);
  const byChar = new Map(chars.map((ch) => [ch, measure(raster.bitmaps.get(ch)!, w, h, wx, wy)]));
  sanity(byChar);
  const measured: Measured[] = chars.map((ch) => {
    const m = byChar.get(ch)!;
    return {
      codePoint: ch.codePointAt(0)!,
      coverage: Math.round(m.coverage * 1e5) / 1e5,
      template: Uint8Array.from(m.template, (v) => Math.round(Math.min(1, Math.max(0, v)) * 255)),
      texture: Math.round(texture(raster.bitmaps.get(ch)!, w, h) * 1e6) / 1e6,
    };
  });
  const f = referenceFont;
  const fb = fallbackFont;
  const fallbackCount = raster.fallbackGlyphs.size;
  const u = (cp: number) => 'U+' + cp.toString(16).toUpperCase().padStart(4, '0');
  const fallbackCps = [...raster.fallbackGlyphs].map((ch) => ch.codePointAt(0)!);
  const fallbackRange = `${u(Math.min(...fallbackCps))}..${u(Math.max(...fallbackCps))}`;
  const aspect = Math.round(f.cellAspect * 1e5) / 1e5;
  const rowOf = (m: Measured) => {
    const groups: string[] = [];
    for (let r = 0; r < SUB_Y; r++) groups.push(Array.from(m.template.subarray(r * SUB_X, (r + 1) * SUB_X), hex2).join(''));
    const ch = String.fromCodePoint(m.codePoint);
    const label = ch === ' ' ? 'space' : ch;
    return `  [${cpHex(m.codePoint)}, ${m.coverage}, '${groups.join(' ')}', ${m.texture}], // ${label}`;
  };
  const text = `/**
 * GENERATED by \`npm run glyphs\` (scripts/measure-glyphs.ts) — do not edit; regenerate instead.
 * \`npm run glyphs -- --check\` verifies that this file is current.
 *
 * Glyph shapes measured from the reference font ${f.family} (${f.version}; file ttf/DejaVuSansMono.ttf
 * of the npm package ${f.packageId}), rasterized with sharp (libvips, Pango, cairo, FreeType):
 * grayscale antialiasing, no hinting, one ${w} x ${h} px terminal cell per glyph (glyph at its pen
 * position and baseline, ink outside the cell clipped). ${f.family} has no Braille: those
 * ${fallbackCount} glyphs come from ${fb.family} (${fb.version}, same package), the font a terminal
 * falls back to, at the same size and baseline, centred in the cell as VTE draws them.
 *
 * GLYPH_DATA rows: [code point, mean ink coverage 0..1 of the whole cell (5 decimals),
 * template, texture]. A template is ${SUB_X} x ${SUB_Y} area-averaged sub-cell ink coverages as bytes
 * 0..255 (coverage * 255, rounded) in hex, one space-separated group of ${SUB_X} bytes per sub-cell row,
 * top row first. The texture (6 decimals) is the variance of the glyph's ink blurred by ${NEAR_BLUR} cell
 * heights over a field of the same glyph: how much it varies up close where the source is flat.
 * Pure data: no imports.
 */

/** The reference font: identity and hhea/hmtx metrics in font units. */
export const FONT = {
  family: ${JSON.stringify(f.family)},
  version: ${JSON.stringify(f.version)},
  source: ${JSON.stringify(`${f.packageId} ttf/DejaVuSansMono.ttf`)},
  unitsPerEm: ${f.unitsPerEm},
  advance: ${f.advance},
  ascender: ${f.ascender},
  descender: ${f.descender},
  lineGap: ${f.lineGap},
} as const;

/** The font the glyphs missing from FONT (the Braille patterns) were measured from. */
export const FALLBACK_FONT = {
  family: ${JSON.stringify(fb.family)},
  version: ${JSON.stringify(fb.version)},
  source: ${JSON.stringify(`${fb.packageId} ttf/DejaVuSans.ttf`)},
  glyphs: '${fallbackRange}',
} as const;

/** Cell aspect width / height of the font: advance / (ascender - descender + lineGap). */
export const FONT_CELL_ASPECT = ${aspect};

/** The raster the shapes were measured on (cell aspect ${(w / h).toFixed(5)}). */
export const MEASURE_CELL = { width: ${w}, height: ${h}, subX: ${SUB_X}, subY: ${SUB_Y} } as const;

/** The block-element glyphs of the \`blocks\` charset, blank first, in this order of listing. */
export const BLOCK_GLYPHS = ${JSON.stringify(BLOCKS.join(''))};

/** Every measured glyph (printable ASCII, block elements, Braille), by code point. */
export const GLYPH_DATA: readonly (readonly [codePoint: number, coverage: number, template: string, texture: number])[] = [
${measured.map(rowOf).join('\n')}
];
`;
  const ascii = measured.filter((m) => m.codePoint < 0x7f);
  const densest = ascii.reduce((a, b) => (b.coverage > a.coverage ? b : a));
  const summary = `${measured.length} glyphs, cell ${w}x${h} px (font size ${raster.fontSizePx} px), ` +
    `font cell aspect ${aspect}, densest ASCII '${String.fromCodePoint(densest.codePoint)}' (${densest.coverage})`;
  return { text, bitmaps: bitmapsText(chars, raster), summary };
}

const check = process.argv.includes('--check');
const { text, bitmaps, summary } = await generate();
const files: readonly (readonly [path: string, content: string])[] = [[OUT, text], [BITMAPS_OUT, bitmaps]];
if (check) {
  let stale = false;
  for (const [path, content] of files) {
    const name = path.slice(path.lastIndexOf('/') + 1);
    let current = '';
    try { current = readFileSync(path, 'utf8'); } catch { /* missing */ }
    if (current !== content) {
      console.error(`${name} is OUT OF DATE (${summary}); run \`npm run glyphs\``);
      stale = true;
    } else {
      console.log(`${name} is current (${summary})`);
    }
  }
  if (stale) process.exit(1);
} else {
  for (const [path, content] of files) {
    writeFileSync(path, content);
    console.log(`wrote ${path} (${content.length} bytes): ${summary}`);
  }
}
