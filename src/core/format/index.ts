/** The six output formats of interface.md §2.3, plus png. Pure ECMAScript: no Node or DOM APIs. */
import { checkObject } from '../args.js';
import { V2aError } from '../errors.js';
import { parseParamsOrThrow } from '../params/validate.js';
import type { Format } from '../params/definitions.js';
import type { RenderResult } from '../types.js';
import { formatTextBytes, formatTextResult, formatted, type ByteOutput, type FormattedOutput, type PngOutput, type TextFormat, type TextOutput } from './output.js';
import { formatPng } from './png.js';

export { bodyText, type ByteOutput, type FormattedOutput, type PngOutput, type TextFormat, type TextOutput } from './output.js';

/** Formats a render result in `format` (default: `result.params.format`), png included, synchronously. */
export function formatResult(result: RenderResult, format: TextFormat): TextOutput;
export function formatResult(result: RenderResult, format: 'png'): PngOutput;
export function formatResult(result: RenderResult, format?: Format): FormattedOutput;
export function formatResult(result: RenderResult, format?: Format): FormattedOutput {
  const f = formatOf(result, format, 'formatResult');
  return f === 'png' ? formatted(f, formatPng(result)) : formatTextResult(result, f);
}

/**
 * Formats a render result as formatResult does, as bytes: a text format's UTF-8, or png's. For a
 * caller that sends or writes the output rather than reading it: a large colour svg, html or ansi
 * is written as bytes (2-5x faster than its string and that string's encoding, measured), never a string.
 */
export function formatBytes(result: RenderResult, format?: Format): ByteOutput {
  const f = formatOf(result, format, 'formatBytes');
  return formatted(f, f === 'png' ? formatPng(result) : formatTextBytes(result, f));
}

/** The format a result is formatted in, checked (formatResult, formatBytes). */
function formatOf(result: RenderResult, format: Format | undefined, who: string): Format {
  checkObject(result, `${who}: result`);
  checkObject(result.params, `${who}: result.params (a render result)`);
  // A format asked for by name is a parameter like render's: one it does not know is refused as render refuses it.
  if (format !== undefined) parseParamsOrThrow({ format }, 'json');
  const f = format ?? result.params.format;
  // Glyphs chosen for an ink and a background colour (a render with colour and no format) read as
  // noise without their colours: plain text by default would be silently wrong (interface.md:
  // color is ignored by plain text, so text wants the glyphs of one-colour art). Text asked for
  // by name is the caller's choice (the MCP reply's text beside a png).
  if (format === undefined && f === 'text' && result.background !== undefined) {
    throw new V2aError('invalid-parameters', 'This result\'s cells were chosen for an ink and a background colour (cellColors fg-bg), which plain text cannot show: render with format: \'text\' (or cellColors: \'fg\') for text, or format it as ansi, html, svg, png or json.', {
      errors: [{ parameter: 'format', message: 'text cannot show the cells\' two colours' }],
    });
  }
  return f;
}

export { FORMAT_INFO, CHROMA_ENCODING, BACKGROUND_ENCODING, COMPACT_VERSION, contentTypeHeader, fileSuffix, type FormatInfo } from './info.js';
export { Base64Error, encodeBase64, decodeBase64, unwrapBase64, decodeBase64Input, type Base64Input } from './base64.js';
export {
  HEX_BYTE, hexOfPacked, packedAt, parseHexColor, relativeLuminance, groundFor, DARK_GROUND, LIGHT_GROUND,
} from './color.js';
export { escapeMarkup, FONT_STACK } from './escape.js';
export { checkGrid, gridLines, isBlankGlyph, blankTable, rowRuns, rowPairRuns, type Run, type PairRun } from './grid.js';
export { formatText } from './text.js';
export { formatAnsi, sgrForeground, sgrBackground, SGR_RESET } from './ansi.js';
export { formatHtml } from './html.js';
export {
  formatPng, renderPng, compactGrid, pngCell, pngSize, PNG_CELL_WIDTH, PNG_CELL_HEIGHT, PNG_SCALES, type PngScale, type PngOptions, type PngKind,
} from './png.js';
export { formatSvg, SVG_CELL_WIDTH, SVG_CELL_HEIGHT, SVG_FONT_SIZE, SVG_BASELINE } from './svg.js';
export { formatJson, buildJsonOutput, colorRows, type JsonOutput } from './json.js';
export {
  formatCompact, buildCompact, decodeCompact, compactToImage, mixedCellColors, CompactDecodeError,
  type CompactOutput, type DecodedCompact, type CompactImageOptions,
} from './compact.js';
export {
  JSON_OUTPUT_SCHEMA, JSON_COMPACT_OUTPUT_SCHEMA, CODEBOOK_SCHEMA, DIRECTOR_SCHEMA, PARAMS_SCHEMA, type JsonSchema,
} from './jsonSchemas.js';
