/**
 * Measures glyph shapes of the reference font and writes src/core/glyphs/font-data.generated.ts.
 *
 *   npm run glyphs              regenerate the file
 *   npm run glyphs -- --check   regenerate in memory; exit 1 when the committed file differs
 *
 * Glyphs: printable ASCII U+0020..U+007E, the block elements of the `blocks` charset and the 256
 * Braille patterns U+2800..U+28FF. Each is rasterized as one terminal cell of DejaVu Sans Mono
 * (scripts/lib/glyph-raster.ts) at MEASURE_CELL_HEIGHT px, then reduced to its mean ink coverage
 * and a SUB_X x SUB_Y template of area-averaged sub-cell coverages.
 */
// glyph-raster must be imported before anything renders text (it configures fontconfig).
import { fallbackFont, rasterizeGlyphs, referenceFont } from './lib/glyph-raster.js';
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { SUB_X, SUB_Y } from '../src/core/glyphs/types.js';

/**
 * 116 px: the font's hinted advance at the largest size with a 116 px line is 60 px, so the raster
 * cell (60 x 116, aspect 0.51724) matches the design cell aspect 1233/2384 = 0.51720 to 0.01 %.
 * (At 96 px the cell would be 49 x 96, aspect 0.5104.)
 */
const MEASURE_CELL_HEIGHT = 116;
const OUT = fileURLToPath(new URL('../src/core/glyphs/font-data.generated.ts', import.meta.url));

const ASCII = Array.from({ length: 0x7f - 0x20 }, (_, i) => String.fromCodePoint(0x20 + i));
const BLOCKS = [...' ░▒▓█▀▄▌▐▖▗▘▝▙▚▛▜▞▟'];
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

interface Measured { readonly codePoint: number; readonly coverage: number; readonly template: Uint8Array }

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

async function generate(): Promise<{ text: string; summary: string }> {
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
    return `  [${cpHex(m.codePoint)}, ${m.coverage}, '${groups.join(' ')}'], // ${label}`;
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
 * template]. A template is ${SUB_X} x ${SUB_Y} area-averaged sub-cell ink coverages as bytes 0..255
 * (coverage * 255, rounded) in hex, one space-separated group of ${SUB_X} bytes per sub-cell row,
 * top row first. Pure data: no imports.
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
export const GLYPH_DATA: readonly (readonly [codePoint: number, coverage: number, template: string])[] = [
${measured.map(rowOf).join('\n')}
];
`;
  const ascii = measured.filter((m) => m.codePoint < 0x7f);
  const densest = ascii.reduce((a, b) => (b.coverage > a.coverage ? b : a));
  const summary = `${measured.length} glyphs, cell ${w}x${h} px (font size ${raster.fontSizePx} px), ` +
    `font cell aspect ${aspect}, densest ASCII '${String.fromCodePoint(densest.codePoint)}' (${densest.coverage})`;
  return { text, summary };
}

const check = process.argv.includes('--check');
const { text, summary } = await generate();
if (check) {
  let current = '';
  try { current = readFileSync(OUT, 'utf8'); } catch { /* missing */ }
  if (current !== text) {
    console.error(`font-data.generated.ts is OUT OF DATE (${summary}); run \`npm run glyphs\``);
    process.exit(1);
  }
  console.log(`font-data.generated.ts is current (${summary})`);
} else {
  writeFileSync(OUT, text);
  console.log(`wrote ${OUT} (${text.length} bytes): ${summary}`);
}
