/**
 * The runs of the markup and ANSI formats as they were written before bytes (src/core/format/bytes.ts):
 * strings built per run and per glyph, with the run splitting of the time. The documents' frames
 * (svg's head and row openings, html's head, ansi's SGR planes) are the formats' own, shared. The
 * oracle of test/format-bytes.test.ts: every document the byte writers produce must equal these,
 * byte for byte. Do not optimise.
 */
import { type CellGrid, type RenderResult } from '../../src/core/types.js';
import { hexOfPacked, packedAt } from '../../src/core/format/color.js';
import { escapeMarkup } from '../../src/core/format/escape.js';
import { blankTable, checkGrid, gridLines } from '../../src/core/format/grid.js';
import { SVG_CELL_WIDTH, svgLayout } from '../../src/core/format/svg.js';
import { HTML_TAIL, htmlHead } from '../../src/core/format/html.js';
import { SGR_RESET, ansiPlane, monoSgr } from '../../src/core/format/ansi.js';

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


export function refSvg(result: RenderResult): string {
  checkGrid(result, result.params.color);
  const { rows, glyphs, params } = result;
  const { head, textGroup, rowOpen: open, cellHeight } = svgLayout(result);
  let body = '';
  let cellsBg = '';
  if (params.color && result.background) {
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
  return head + (cellsBg ? `<g shape-rendering="crispEdges">\n${cellsBg}</g>\n` : '') + textGroup + body + '</g>\n</svg>\n';
}

export function refHtml(result: RenderResult): string {
  checkGrid(result, result.params.color);
  const { rows, glyphs, params } = result;
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
  return htmlHead(result) + art + HTML_TAIL;
}

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
  for (let y = 0; y < rows; y++) {
    for (const run of rowRuns(grid, glyphs, blank, y)) out += run.color < 0 ? run.text : fg.sgr(run.color) + run.text;
    out += SGR_RESET + '\n';
  }
  return out;
}
