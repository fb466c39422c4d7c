/**
 * The markup and ANSI formats as they were before they wrote bytes (src/core/format/bytes.ts):
 * strings built per run, with the run splitting of the time. The oracle of test/format-bytes.test.ts:
 * every document the byte writers produce must equal these, byte for byte. Do not optimise.
 */
import type { ColorDepth } from '../../src/core/params/definitions.js';
import { CELL_ASPECT, type CellGrid, type RenderResult } from '../../src/core/types.js';
import { groundFor, hexOfPacked, packedAt, parseHexColor } from '../../src/core/format/color.js';
import { FONT_STACK, artLabel, escapeMarkup } from '../../src/core/format/escape.js';
import { blankTable, checkGrid, gridLines } from '../../src/core/format/grid.js';
import { nearestEntry, paletteOf, quantizePlane, type Palette } from '../../src/core/format/palette.js';
import { SVG_BASELINE, SVG_CELL_HEIGHT, SVG_CELL_WIDTH, SVG_FONT_SIZE } from '../../src/core/format/svg.js';

/** A run of cells printed in one colour (-1: no colour needed). */
interface Run {
  readonly color: number;
  readonly text: string;
}

/**
 * The colour runs of row `y`: consecutive cells of equal colour are merged, and blank cells join
 * whatever run they are in (their colour is invisible). Leading blanks form a run with colour -1.
 * `texts[g]` is the (already escaped) text of glyph g.
 */
function rowRuns(grid: CellGrid, texts: readonly string[], blank: Uint8Array, y: number): Run[] {
  const { columns, cells, colors } = grid;
  const runs: Run[] = [];
  const base = y * columns;
  let color = -1;
  let text = '';
  for (let i = base, end = base + columns; i < end; i++) {
    const g = cells[i]!;
    if (blank[g]) {
      text += texts[g]!;
      continue;
    }
    const c = packedAt(colors, i);
    if (c === color) {
      text += texts[g]!;
      continue;
    }
    if (text !== '') runs.push({ color, text });
    color = c;
    text = texts[g]!;
  }
  if (text !== '') runs.push({ color, text });
  return runs;
}

/** A run of cells with one ink colour (-1: only blanks, any ink) and one background colour. */
interface PairRun {
  readonly color: number;
  readonly background: number;
  readonly text: string;
}

/**
 * The runs of row `y` of a grid with a `background` plane: consecutive cells with the same ink and
 * background are merged; a blank cell shows only its background, so it joins a run of the same
 * background whatever its ink.
 */
function rowPairRuns(grid: CellGrid, texts: readonly string[], blank: Uint8Array, y: number): PairRun[] {
  const { columns, cells, colors } = grid;
  const bgPlane = grid.background!;
  const runs: PairRun[] = [];
  const base = y * columns;
  let color = -1, background = -1;
  let text = '';
  for (let i = base, end = base + columns; i < end; i++) {
    const g = cells[i]!;
    const b = packedAt(bgPlane, i);
    const c = blank[g] ? -1 : packedAt(colors, i);
    if (text !== '' && b === background && (c === -1 || color === -1 || c === color)) {
      if (color === -1) color = c;
      text += texts[g]!;
      continue;
    }
    if (text !== '') runs.push({ color, background, text });
    color = c;
    background = b;
    text = texts[g]!;
  }
  if (text !== '') runs.push({ color, background, text });
  return runs;
}

// --- svg

/** Cell size in SVG user units: the reference 1:2 cell. */
/** Cell height in SVG user units (twice SVG_CELL_WIDTH). */
/** Font size: DejaVu Sans Mono advances 0.602em, so 10 units gives a 6.02-unit advance. */
/**
 * Baseline offset inside a cell: DejaVu Sans Mono's ascent + descent is 1.164em (11.64 units),
 * centred in the 12-unit cell its baseline is at 0.18 + 9.28 = 9.46; rounded to 9.5.
 */

/**
 * `svg`: a standalone SVG 1.1 document; viewBox `0 0 (columns*6) (rows*12)` fits the grid exactly.
 * A ground `<rect>` (same rule as html: `groundFor(monoColor)`), then one `<text>` per row with
 * `xml:space="preserve"` and `textLength` = the row's width, so glyphs sit on the 6-unit grid
 * even where the fallback font's advance differs. With `color=true`, runs of equal colour are
 * `<tspan fill>` (blank cells join any run). Every glyph escaped; no script, no external resource.
 */
export function refSvg(result: RenderResult): string {
  checkGrid(result, result.params.color);
  const { columns, rows, glyphs, params } = result;
  const width = columns * SVG_CELL_WIDTH;
  // Another cell aspect (the cellAspect extension) keeps the picture's proportions: taller or
  // shorter rows, the glyphs centred in them. At the default 0.5 this is the 12-unit cell.
  const cellHeight = result.cellAspect === 0.5 ? SVG_CELL_HEIGHT : Math.round((SVG_CELL_WIDTH / result.cellAspect) * 100) / 100;
  const baseline = SVG_BASELINE + (cellHeight - SVG_CELL_HEIGHT) / 2;
  const height = Math.round(rows * cellHeight * 100) / 100;
  const ink = hexOfPacked(parseHexColor(params.monoColor));
  const ground = groundFor(params.monoColor);
  const font = FONT_STACK.map((f) => (f === 'monospace' ? f : `'${f}'`)).join(',');
  const title = artLabel(columns, rows, params.color);

  let body = '';
  let cellsBg = '';
  if (params.color && result.background) {
    // Two colours per cell (extension): one rect per run of equal background under the text.
    const texts = glyphs.map(() => ' ');
    const none = new Uint8Array(glyphs.length).fill(1);
    for (let y = 0; y < rows; y++) {
      let x = 0;
      for (const run of rowPairRuns(result, texts, none, y)) {
        cellsBg += `<rect x="${x * SVG_CELL_WIDTH}" y="${Math.round(y * cellHeight * 100) / 100}" width="${run.text.length * SVG_CELL_WIDTH}" height="${cellHeight}" fill="${hexOfPacked(run.background)}"/>\n`;
        x += run.text.length;
      }
    }
  }
  const open = (y: number): string =>
    `<text x="0" y="${Math.round((y * cellHeight + baseline) * 100) / 100}" textLength="${width}" lengthAdjust="spacing" xml:space="preserve">`;
  if (!params.color) {
    const lines = gridLines(result);
    for (let y = 0; y < rows; y++) body += open(y) + escapeMarkup(lines[y]!) + '</text>\n';
  } else {
    const texts = glyphs.map(escapeMarkup);
    const blank = blankTable(glyphs);
    for (let y = 0; y < rows; y++) {
      body += open(y);
      for (const run of rowRuns(result, texts, blank, y)) {
        body += run.color < 0 ? run.text : `<tspan fill="${hexOfPacked(run.color)}">${run.text}</tspan>`;
      }
      body += '</text>\n';
    }
  }

  return (
    '<?xml version="1.0" encoding="UTF-8"?>\n' +
    `<svg xmlns="http://www.w3.org/2000/svg" version="1.1" width="${width}" height="${height}" ` +
    // One image with a name, as html's <pre role="img">: without the role a screen reader reads
    // every row of glyphs as text. aria-label, not aria-labelledby: an id would clash when
    // several are inlined in one page.
    `viewBox="0 0 ${width} ${height}" role="img" aria-label="${escapeMarkup(title)}">\n` +
    `<title>${escapeMarkup(title)}</title>\n` +
    `<rect x="0" y="0" width="${width}" height="${height}" fill="${ground}"/>\n` +
    (cellsBg ? `<g shape-rendering="crispEdges">\n${cellsBg}</g>\n` : '') +
    `<g font-family="${font}" font-size="${SVG_FONT_SIZE}" fill="${ink}" ` +
    'style="white-space:pre;font-variant-ligatures:none">\n' +
    body +
    '</g>\n' +
    '</svg>\n'
  );
}

// --- html

/**
 * Font size in px of the html document. The line height is 1.2em: DejaVu Sans Mono advances
 * 0.602em, so a cell is 0.602em x 1.2em, the reference 1:2 cell; another `cellAspect` scales the
 * line height (0.6em at 1), so the art keeps its proportions as the SVG's rows do.
 */
const FONT_PX = 12;
const LINE_HEIGHT = 1.2;
/**
 * `blocks` art: the font's block glyphs are about 1.19em tall, a hair short of the 1.2em line, which
 * showed as dark lines between rows. Its lines are set 1.16em apart and stretched back to 1.2em
 * (scaleY), so blocks overlap by a hair and the cell stays 1:2.
 */
const BLOCK_LINE_HEIGHT = 1.16;

/**
 * `html`: a complete, self-contained HTML5 document: inline `<style>` only, no script, no external
 * resource; the art in one `<pre>`, every glyph escaped.
 * - Ink: `monoColor` on the `<pre>`; with `color=true`, runs of equal colour become
 *   `<span style="color:#rrggbb">` (blank cells join any run; row-leading blanks stay outside).
 * - Ground: dark (#0b0b0b) when the ink `monoColor` is light (relative luminance > 0.5), else
 *   light (#fafafa); see `groundFor`.
 */
export function refHtml(result: RenderResult): string {
  checkGrid(result, result.params.color);
  const { columns, rows, glyphs, params } = result;
  const ink = hexOfPacked(parseHexColor(params.monoColor));
  const ground = groundFor(params.monoColor);
  const font = FONT_STACK.map((f) => (f === 'monospace' ? f : `"${f}"`)).join(',');
  const title = artLabel(columns, rows, params.color);
  const blocks = result.charset === 'blocks';
  // Another cell aspect sets its own line pitch (the glyphs' width stays the font's).
  const line = result.cellAspect === CELL_ASPECT ? LINE_HEIGHT : +((LINE_HEIGHT * CELL_ASPECT) / result.cellAspect).toFixed(4);

  let art: string;
  if (!params.color) {
    art = gridLines(result).map(escapeMarkup).join('\n');
  } else {
    const texts = glyphs.map(escapeMarkup);
    const blank = blankTable(glyphs);
    const lines = new Array<string>(rows);
    for (let y = 0; y < rows; y++) {
      let line = '';
      if (result.background) {
        // Two colours per cell (extension): each run carries its background as well.
        for (const run of rowPairRuns(result, texts, blank, y)) {
          const ink = run.color < 0 ? '' : `color:${hexOfPacked(run.color)};`;
          line += `<span style="${ink}background:${hexOfPacked(run.background)}">${run.text}</span>`;
        }
      } else {
        for (const run of rowRuns(result, texts, blank, y)) {
          line += run.color < 0 ? run.text : `<span style="color:${hexOfPacked(run.color)}">${run.text}</span>`;
        }
      }
      lines[y] = line;
    }
    art = lines.join('\n');
  }

  return (
    '<!doctype html>\n' +
    '<html lang="en">\n' +
    '<head>\n' +
    '<meta charset="utf-8">\n' +
    '<meta name="viewport" content="width=device-width, initial-scale=1">\n' +
    `<meta name="generator" content="v2a ${escapeMarkup(result.version)}">\n` +
    `<title>${escapeMarkup(title)}</title>\n` +
    '<style>\n' +
    `html,body{margin:0;background:${ground}}\n` +
    `pre{margin:0;padding:1em;color:${ink};background:${ground};font:${FONT_PX}px/${blocks ? BLOCK_LINE_HEIGHT : line} ${font};` +
    `letter-spacing:0;white-space:pre;font-variant-ligatures:none${blocks ? `;transform:scaleY(${+(line / BLOCK_LINE_HEIGHT).toFixed(4)});transform-origin:0 0` : ''}}\n` +
    '</style>\n' +
    '</head>\n' +
    '<body>\n' +
    // The newline right after <pre> is dropped by HTML parsers, so the art starts on its first row.
    `<pre role="img" aria-label="${escapeMarkup(title)}">\n${art}</pre>\n` +
    '</body>\n' +
    '</html>\n'
  );
}

// --- ansi

const ESC = '\x1b';
/** SGR reset, written at the end of every row. */
const SGR_RESET = `${ESC}[0m`;

/** 24-bit foreground SGR of a packed 0xRRGGBB colour: `ESC[38;2;r;g;bm`. */
function sgrForeground(rgb: number): string {
  return `${ESC}[38;2;${(rgb >>> 16) & 255};${(rgb >>> 8) & 255};${rgb & 255}m`;
}

/** 24-bit background SGR of a packed 0xRRGGBB colour: `ESC[48;2;r;g;bm` (extension: two colours per cell). */
function sgrBackground(rgb: number): string {
  return `${ESC}[48;2;${(rgb >>> 16) & 255};${(rgb >>> 8) & 255};${rgb & 255}m`;
}

type ColorLayer = 'fg' | 'bg';

/**
 * A colour plane made ready for SGR at the grid's `colorDepth`: at truecolor the plane itself;
 * at 256 or 16 each cell replaced by its palette colour (nearest in OKLab, dithered with
 * `colorDither`), so equal-colour runs merge on palette entries. `sgr(packed)` is the SGR of a
 * colour of the returned plane. The foreground and, when a grid has one, the background plane
 * are one call each.
 */
function ansiPlane(result: RenderResult, plane: Uint8Array, layer: ColorLayer): { plane: Uint8Array; sgr: (rgb: number) => string } {
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
export function refAnsi(result: RenderResult): string {
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
