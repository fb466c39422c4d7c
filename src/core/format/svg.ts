import type { RenderResult } from '../types.js';
import { groundFor, hexOfPacked, parseHexColor } from './color.js';
import { FONT_STACK, artLabel, escapeMarkup } from './escape.js';
import { textDecoder } from '../text-codec.js';
import { ByteWriter, glyphBytes, utf8, writeColorRuns } from './bytes.js';
import { blankTable, checkGrid, gridLines, rowRunsFor, splitRowPairs } from './grid.js';

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
  return textDecoder().decode(svgBytes(result));
}

const RECT = utf8('<rect x="');
const RECT_END = utf8('"/>\n');
const TSPAN = utf8('<tspan fill="#');
const TSPAN_END = utf8('</tspan>');

/** The svg document's frame: its head (up to the ground), the text group's opening, each row's <text> opening, the cell height. */
export interface SvgLayout {
  readonly head: string;
  readonly textGroup: string;
  readonly rowOpen: (y: number) => string;
  readonly cellHeight: number;
}

export function svgLayout(result: RenderResult): SvgLayout {
  const { columns, rows, params } = result;
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
  return {
    head: '<?xml version="1.0" encoding="UTF-8"?>\n' +
      `<svg xmlns="http://www.w3.org/2000/svg" version="1.1" width="${width}" height="${height}" ` +
      // One image with a name, as html's <pre role="img">: without the role a screen reader reads
      // every row of glyphs as text. aria-label, not aria-labelledby: an id would clash when
      // several are inlined in one page.
      `viewBox="0 0 ${width} ${height}" role="img" aria-label="${escapeMarkup(title)}">\n` +
      `<title>${escapeMarkup(title)}</title>\n` +
      `<rect x="0" y="0" width="${width}" height="${height}" fill="${ground}"/>\n`,
    textGroup: `<g font-family="${font}" font-size="${SVG_FONT_SIZE}" fill="${ink}" ` + 'style="white-space:pre;font-variant-ligatures:none">\n',
    rowOpen: (y) => `<text x="0" y="${Math.round((y * cellHeight + baseline) * 100) / 100}" textLength="${width}" lengthAdjust="spacing" xml:space="preserve">`,
    cellHeight,
  };
}

/** formatSvg's document as UTF-8 bytes, written as such (bytes.ts). */
export function svgBytes(result: RenderResult): Uint8Array {
  checkGrid(result, result.params.color);
  const { columns, rows, glyphs, params } = result;
  const { head, textGroup, rowOpen: open, cellHeight } = svgLayout(result);
  const w = new ByteWriter();
  w.text(head);
  const runs = rowRunsFor(columns);
  if (params.color && result.background) {
    // Two colours per cell (extension): one rect per run of equal background under the text.
    w.text('<g shape-rendering="crispEdges">\n');
    const none = new Uint8Array(glyphs.length).fill(1);
    const tail = utf8(`" height="${cellHeight}" fill="#`);
    for (let y = 0; y < rows; y++) {
      const row = utf8(`" y="${Math.round(y * cellHeight * 100) / 100}" width="`);
      splitRowPairs(result, none, y, runs);
      for (let k = 0, x = 0; k < runs.count; k++) {
        const end = runs.ends[k]!;
        // No rect for a clear run (the source transparent there): the document's ground shows.
        if (runs.backgrounds[k]! < 0) {
          x = end;
          continue;
        }
        w.raw(RECT);
        w.uint(x * SVG_CELL_WIDTH);
        w.raw(row);
        w.uint((end - x) * SVG_CELL_WIDTH);
        w.raw(tail);
        w.hex6(runs.backgrounds[k]!);
        w.raw(RECT_END);
        x = end;
      }
    }
    w.text('</g>\n');
  }
  w.text(textGroup);
  if (!params.color) {
    const lines = gridLines(result);
    for (let y = 0; y < rows; y++) w.text(open(y) + escapeMarkup(lines[y]!) + '</text>\n');
  } else {
    const table = glyphBytes(glyphs.map(escapeMarkup));
    const blank = blankTable(glyphs);
    for (let y = 0; y < rows; y++) {
      w.text(open(y));
      writeColorRuns(w, result, blank, y, runs, table, TSPAN, TSPAN_END);
      w.text('</text>\n');
    }
  }
  w.text('</g>\n</svg>\n');
  return w.done();
}
