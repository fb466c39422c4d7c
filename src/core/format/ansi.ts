import type { ColorDepth } from '../params/definitions.js';
import type { RenderResult } from '../types.js';
import { parseHexColor } from './color.js';
import { blankTable, checkGrid, gridLines, rowPairRuns, rowRuns } from './grid.js';
import { nearestEntry, paletteOf, quantizePlane, type Palette } from './palette.js';

const ESC = '\x1b';
/** SGR reset, written at the end of every row. */
export const SGR_RESET = `${ESC}[0m`;

/** 24-bit foreground SGR of a packed 0xRRGGBB colour: `ESC[38;2;r;g;bm`. */
export function sgrForeground(rgb: number): string {
  return `${ESC}[38;2;${(rgb >>> 16) & 255};${(rgb >>> 8) & 255};${rgb & 255}m`;
}

/** 24-bit background SGR of a packed 0xRRGGBB colour: `ESC[48;2;r;g;bm` (extension: two colours per cell). */
export function sgrBackground(rgb: number): string {
  return `${ESC}[48;2;${(rgb >>> 16) & 255};${(rgb >>> 8) & 255};${rgb & 255}m`;
}

export type ColorLayer = 'fg' | 'bg';

/**
 * A colour plane made ready for SGR at the grid's `colorDepth`: at truecolor the plane itself;
 * at 256 or 16 each cell replaced by its palette colour (nearest in OKLab, dithered with
 * `colorDither`), so equal-colour runs merge on palette entries. `sgr(packed)` is the SGR of a
 * colour of the returned plane. The foreground and, when a grid has one, the background plane
 * are one call each.
 */
export function ansiPlane(result: RenderResult, plane: Uint8Array, layer: ColorLayer): { plane: Uint8Array; sgr: (rgb: number) => string } {
  const depth: ColorDepth = result.params.colorDepth ?? 'truecolor';
  if (depth === 'truecolor') return { plane, sgr: layer === 'fg' ? sgrForeground : sgrBackground };
  const palette = paletteOf(depth);
  const entries = quantizePlane(plane, result.columns, result.rows, palette, result.params.colorDither === true);
  const out = new Uint8Array(plane.length);
  for (let i = 0, o = 0; i < entries.length; i++, o += 3) {
    const c = palette.rgb[entries[i]!]!;
    out[o] = (c >>> 16) & 255;
    out[o + 1] = (c >>> 8) & 255;
    out[o + 2] = c & 255;
  }
  return { plane: out, sgr: paletteSgr(palette, layer) };
}

/** SGR of a palette colour (packed 0xRRGGBB of one of its entries). */
function paletteSgr(palette: Palette, layer: ColorLayer): (rgb: number) => string {
  const codes = layer === 'fg' ? palette.fg : palette.bg;
  const byRgb = new Map<number, string>();
  palette.rgb.forEach((c, k) => byRgb.set(c, `${ESC}[${codes[k]}m`));
  return (rgb) => byRgb.get(rgb) ?? `${ESC}[${codes[nearestEntry(palette, rgb)]}m`;
}

/** The one SGR of mono output: `monoColor` at the grid's colour depth. */
function monoSgr(result: RenderResult): string {
  const ink = parseHexColor(result.params.monoColor);
  const depth: ColorDepth = result.params.colorDepth ?? 'truecolor';
  if (depth === 'truecolor') return sgrForeground(ink);
  const palette = paletteOf(depth);
  return `${ESC}[${palette.fg[nearestEntry(palette, ink)]}m`;
}

/**
 * `ansi`: SGR text. Each row is `[SGR] glyphs ... ESC[0m \n`.
 * - `color=false`: one SGR in `monoColor` at the start of each row.
 * - `color=true`: one SGR per run of equal colour; blank cells (space, U+2800) join the run they
 *   are in, and blanks at the start of a row are written before the first SGR.
 * - `colorDepth`: truecolor `ESC[38;2;r;g;bm` (the contract's); 256 `ESC[38;5;nm` (n 16-255);
 *   16 `ESC[30m`-`ESC[37m`, `ESC[90m`-`ESC[97m`.
 * - with a `background` plane (two colours per cell): each run of equal ink and background gets
 *   `ESC[38;2;...m` (omitted for runs of blanks) and `ESC[48;2;...m`.
 * Glyphs are printable code points (checked), so the art cannot carry other escape sequences.
 */
export function formatAnsi(result: RenderResult): string {
  checkGrid(result, result.params.color);
  const { rows, glyphs } = result;
  let out = '';
  if (!result.params.color) {
    const sgr = monoSgr(result);
    for (const line of gridLines(result)) out += sgr + line + SGR_RESET + '\n';
    return out;
  }
  const fg = ansiPlane(result, result.colors, 'fg');
  const grid = fg.plane === result.colors ? result : { ...result, colors: fg.plane };
  const blank = blankTable(glyphs);
  if (result.background) {
    // Both planes at the grid's colour depth: runs then merge on equal palette entries.
    const bg = ansiPlane(result, result.background, 'bg');
    const pairs = { ...grid, background: bg.plane };
    for (let y = 0; y < rows; y++) {
      for (const run of rowPairRuns(pairs, glyphs, blank, y)) {
        out += (run.color < 0 ? '' : fg.sgr(run.color)) + bg.sgr(run.background) + run.text;
      }
      out += SGR_RESET + '\n';
    }
    return out;
  }
  const sgrCache = new Map<number, string>();
  for (let y = 0; y < rows; y++) {
    for (const run of rowRuns(grid, glyphs, blank, y)) {
      if (run.color < 0) {
        out += run.text;
        continue;
      }
      let sgr = sgrCache.get(run.color);
      if (sgr === undefined) sgrCache.set(run.color, (sgr = fg.sgr(run.color)));
      out += sgr + run.text;
    }
    out += SGR_RESET + '\n';
  }
  return out;
}
