import type { RenderResult } from '../types.js';
import { parseHexColor } from './color.js';
import { blankTable, checkGrid, gridLines, rowPairRuns, rowRuns } from './grid.js';

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

/**
 * `ansi`: 24-bit SGR text. Each row is `[SGR] glyphs ... ESC[0m \n`.
 * - `color=false`: one SGR in `monoColor` at the start of each row.
 * - `color=true`: one SGR per run of equal colour; blank cells (space, U+2800) join the run they
 *   are in, and blanks at the start of a row are written before the first SGR.
 * - with a `background` plane (two colours per cell): each run of equal ink and background gets
 *   `ESC[38;2;...m` (omitted for runs of blanks) and `ESC[48;2;...m`.
 * Glyphs are printable code points (checked), so the art cannot carry other escape sequences.
 */
export function formatAnsi(result: RenderResult): string {
  checkGrid(result);
  const { rows, glyphs } = result;
  let out = '';
  if (!result.params.color) {
    const sgr = sgrForeground(parseHexColor(result.params.monoColor));
    for (const line of gridLines(result)) out += sgr + line + SGR_RESET + '\n';
    return out;
  }
  const blank = blankTable(glyphs);
  if (result.background) {
    for (let y = 0; y < rows; y++) {
      for (const run of rowPairRuns(result, glyphs, blank, y)) {
        out += (run.color < 0 ? '' : sgrForeground(run.color)) + sgrBackground(run.background) + run.text;
      }
      out += SGR_RESET + '\n';
    }
    return out;
  }
  const sgrCache = new Map<number, string>();
  for (let y = 0; y < rows; y++) {
    for (const run of rowRuns(result, glyphs, blank, y)) {
      if (run.color < 0) {
        out += run.text;
        continue;
      }
      let sgr = sgrCache.get(run.color);
      if (sgr === undefined) sgrCache.set(run.color, (sgr = sgrForeground(run.color)));
      out += sgr + run.text;
    }
    out += SGR_RESET + '\n';
  }
  return out;
}
