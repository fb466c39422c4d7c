import type { RenderResult } from '../types.js';
import { groundFor, hexOfPacked, parseHexColor } from './color.js';
import { FONT_STACK, artLabel, escapeMarkup } from './escape.js';
import { blankTable, checkGrid, gridLines, rowPairRuns, rowRuns } from './grid.js';

/** Cell size in SVG user units: the reference 1:2 cell. */
export const SVG_CELL_WIDTH = 6;
/** Cell height in SVG user units (twice SVG_CELL_WIDTH). */
export const SVG_CELL_HEIGHT = 12;
/** Font size: DejaVu Sans Mono advances 0.602em, so 10 units gives a 6.02-unit advance. */
export const SVG_FONT_SIZE = 10;
/**
 * Baseline offset inside a cell: DejaVu Sans Mono's ascent + descent is 1.164em (11.64 units),
 * centred in the 12-unit cell its baseline is at 0.18 + 9.28 = 9.46; rounded to 9.5.
 */
export const SVG_BASELINE = 9.5;

/**
 * `svg`: a standalone SVG 1.1 document; viewBox `0 0 (columns*6) (rows*12)` fits the grid exactly.
 * A ground `<rect>` (same rule as html: `groundFor(monoColor)`), then one `<text>` per row with
 * `xml:space="preserve"` and `textLength` = the row's width, so glyphs sit on the 6-unit grid
 * even where the fallback font's advance differs. With `color=true`, runs of equal colour are
 * `<tspan fill>` (blank cells join any run). Every glyph escaped; no script, no external resource.
 */
export function formatSvg(result: RenderResult): string {
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
