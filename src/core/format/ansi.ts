import type { ColorDepth } from '../params/definitions.js';
import type { RenderResult } from '../types.js';
import { parseHexColor } from './color.js';
import { textDecoder } from '../text-codec.js';
import { ByteWriter, glyphBytes, utf8 } from './bytes.js';
import { blankTable, checkGrid, gridLines, rowRunsFor, splitRow, splitRowPairs } from './grid.js';
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
export function ansiPlane(result: RenderResult, plane: Uint8Array, layer: ColorLayer): AnsiPlane {
  const depth: ColorDepth = result.params.colorDepth ?? 'truecolor';
  if (depth === 'truecolor') return { plane, sgr: layer === 'fg' ? sgrForeground : sgrBackground, truecolor: layer === 'fg' ? 38 : 48 };
  const palette = paletteOf(depth);
  const entries = quantizePlane(plane, result.columns, result.rows, palette, result.params.colorDither === true);
  const out = new Uint8Array(plane.length);
  for (let i = 0, o = 0; i < entries.length; i++, o += 3) {
    const c = palette.rgb[entries[i]!]!;
    out[o] = (c >>> 16) & 255;
    out[o + 1] = (c >>> 8) & 255;
    out[o + 2] = c & 255;
  }
  return { plane: out, sgr: paletteSgr(palette, layer), truecolor: 0 };
}

/** A colour plane ready for SGR (ansiPlane). */
export interface AnsiPlane {
  readonly plane: Uint8Array;
  /** The SGR of a colour of `plane`. */
  readonly sgr: (rgb: number) => string;
  /** 38 or 48 at truecolor (the SGR's digits are written as bytes, no string per run), else 0. */
  readonly truecolor: 0 | 38 | 48;
}

const SGR_FG = utf8(`${ESC}[38;2;`);
/** The terminal's own background: a clear cell's (the source is transparent there). */
const SGR_DEFAULT_BG = utf8(`${ESC}[49m`);
const SGR_BG = utf8(`${ESC}[48;2;`);
const SEMICOLON = utf8(';');
const SGR_END = utf8('m');

/** The SGR of colour `rgb` of `p` (as p.sgr(rgb) reads), written to `w`. */
function writeSgr(w: ByteWriter, p: AnsiPlane, rgb: number): void {
  if (!p.truecolor) return w.text(p.sgr(rgb));
  w.raw(p.truecolor === 38 ? SGR_FG : SGR_BG);
  w.uint((rgb >>> 16) & 255);
  w.raw(SEMICOLON);
  w.uint((rgb >>> 8) & 255);
  w.raw(SEMICOLON);
  w.uint(rgb & 255);
  w.raw(SGR_END);
}

/** SGR of a palette colour (packed 0xRRGGBB of one of its entries). */
function paletteSgr(palette: Palette, layer: ColorLayer): (rgb: number) => string {
  const codes = layer === 'fg' ? palette.fg : palette.bg;
  const byRgb = new Map<number, string>();
  palette.rgb.forEach((c, k) => byRgb.set(c, `${ESC}[${codes[k]}m`));
  return (rgb) => byRgb.get(rgb) ?? `${ESC}[${codes[nearestEntry(palette, rgb)]}m`;
}

/** The one SGR of mono output: `monoColor` at the grid's colour depth. */
export function monoSgr(result: RenderResult): string {
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
 *   `ESC[38;2;...m` (omitted for runs of blanks) and `ESC[48;2;...m`, or `ESC[49m` (the
 *   terminal's own background) for `clear` cells, where the source is transparent.
 * Glyphs are printable code points (checked), so the art cannot carry other escape sequences.
 */
export function formatAnsi(result: RenderResult): string {
  return textDecoder().decode(ansiBytes(result));
}

/** formatAnsi's text as UTF-8 bytes, written as such (bytes.ts). */
export function ansiBytes(result: RenderResult): Uint8Array {
  checkGrid(result, result.params.color);
  const { rows, columns, glyphs, cells } = result;
  const w = new ByteWriter();
  if (!result.params.color) {
    const sgr = monoSgr(result);
    for (const line of gridLines(result)) w.text(sgr + line + SGR_RESET + '\n');
    return w.done();
  }
  const fg = ansiPlane(result, result.colors, 'fg');
  const grid = fg.plane === result.colors ? result : { ...result, colors: fg.plane };
  const table = glyphBytes(glyphs);
  const blank = blankTable(glyphs);
  const runs = rowRunsFor(columns);
  const end = utf8(SGR_RESET + '\n');
  // Both planes at the grid's colour depth: runs then merge on equal palette entries.
  const bg = result.background ? ansiPlane(result, result.background, 'bg') : undefined;
  const pairs = bg ? { ...grid, background: bg.plane } : undefined;
  for (let y = 0; y < rows; y++) {
    const base = y * columns;
    if (pairs) splitRowPairs(pairs, blank, y, runs);
    else splitRow(grid, blank, y, runs);
    for (let k = 0, from = base; k < runs.count; k++) {
      const to = base + runs.ends[k]!;
      const color = runs.colors[k]!;
      if (color >= 0) writeSgr(w, fg, color);
      if (bg) {
        const b = runs.backgrounds[k]!;
        if (b >= 0) writeSgr(w, bg, b);
        else w.raw(SGR_DEFAULT_BG);
      }
      w.glyphs(cells, from, to, table);
      from = to;
    }
    w.raw(end);
  }
  return w.done();
}
