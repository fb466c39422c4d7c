import { CELL_ASPECT, type RenderResult } from '../types.js';
import { groundFor, hexOfPacked, parseHexColor } from './color.js';
import { FONT_STACK, artLabel, escapeMarkup } from './escape.js';
import { textDecoder } from '../text-codec.js';
import { ByteWriter, glyphBytes, utf8, writeColorRuns } from './bytes.js';
import { blankTable, checkGrid, gridLines, rowRunsFor, splitRowPairs } from './grid.js';

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
export function formatHtml(result: RenderResult): string {
  return textDecoder().decode(htmlBytes(result));
}

const NEWLINE = utf8('\n');
const SPAN_STYLE = utf8('<span style="');
const COLOR = utf8('color:#');
const SEMICOLON = utf8(';');
const BACKGROUND = utf8('background:#');
const TAG_END = utf8('">');
const SPAN_END = utf8('</span>');
const SPAN_COLOR = utf8('<span style="color:#');

/** The html document up to the art (its first row follows the <pre>). */
export function htmlHead(result: RenderResult): string {
  const { columns, rows, params } = result;
  const ink = hexOfPacked(parseHexColor(params.monoColor));
  const ground = groundFor(params.monoColor);
  const font = FONT_STACK.map((f) => (f === 'monospace' ? f : `"${f}"`)).join(',');
  const title = artLabel(columns, rows, params.color);
  const blocks = result.charset === 'blocks';
  // Another cell aspect sets its own line pitch (the glyphs' width stays the font's).
  const line = result.cellAspect === CELL_ASPECT ? LINE_HEIGHT : +((LINE_HEIGHT * CELL_ASPECT) / result.cellAspect).toFixed(4);
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
    `<pre role="img" aria-label="${escapeMarkup(title)}">\n`
  );
}

/** The html document after the art. */
export const HTML_TAIL = '</pre>\n</body>\n</html>\n';

/** formatHtml's document as UTF-8 bytes, written as such (bytes.ts). */
export function htmlBytes(result: RenderResult): Uint8Array {
  checkGrid(result, result.params.color);
  const { columns, rows, glyphs, params, cells } = result;
  const w = new ByteWriter();
  w.text(htmlHead(result));
  if (!params.color) {
    w.text(gridLines(result).map(escapeMarkup).join('\n'));
  } else {
    const table = glyphBytes(glyphs.map(escapeMarkup));
    const blank = blankTable(glyphs);
    const runs = rowRunsFor(columns);
    for (let y = 0; y < rows; y++) {
      if (y > 0) w.raw(NEWLINE);
      const base = y * columns;
      if (result.background) {
        // Two colours per cell (extension): each run carries its background as well.
        splitRowPairs(result, blank, y, runs);
        for (let k = 0, from = base; k < runs.count; k++) {
          const to = base + runs.ends[k]!;
          const color = runs.colors[k]!, b = runs.backgrounds[k]!;
          // A clear run (the source transparent there) shows the page's own ground: blanks alone
          // need no span at all.
          if (b < 0 && color < 0) {
            w.glyphs(cells, from, to, table);
            from = to;
            continue;
          }
          w.raw(SPAN_STYLE);
          if (color >= 0) {
            w.raw(COLOR);
            w.hex6(color);
            w.raw(SEMICOLON);
          }
          if (b >= 0) {
            w.raw(BACKGROUND);
            w.hex6(b);
          }
          w.raw(TAG_END);
          w.glyphs(cells, from, to, table);
          w.raw(SPAN_END);
          from = to;
        }
      } else {
        writeColorRuns(w, result, blank, y, runs, table, SPAN_COLOR, SPAN_END);
      }
    }
  }
  w.text(HTML_TAIL);
  return w.done();
}
