/** The six output formats of interface.md §2.3, plus png. Pure ECMAScript: no Node or DOM APIs. */
import type { Format } from '../params/definitions.js';
import type { RenderResult } from '../types.js';
import { formatAnsi } from './ansi.js';
import { formatCompact } from './compact.js';
import { formatHtml } from './html.js';
import { FORMAT_INFO, contentTypeHeader } from './info.js';
import { formatJson } from './json.js';
import { formatPng } from './png.js';
import { formatSvg } from './svg.js';
import { formatText } from './text.js';

export interface FormattedOutput {
  /** Text for every format but png, whose body is the PNG bytes. */
  readonly body: string | Uint8Array;
  /** Full `Content-Type` header value, with `charset=utf-8` for the text formats. */
  readonly contentType: string;
  /** File extension without the dot. */
  readonly extension: string;
}

const FORMATTERS: Readonly<Record<Format, (result: RenderResult) => string | Uint8Array>> = {
  text: formatText,
  ansi: formatAnsi,
  html: formatHtml,
  json: formatJson,
  'json-compact': formatCompact,
  svg: formatSvg,
  png: formatPng,
};

/** The formats whose body is text (every one but png). */
export type TextFormat = Exclude<Format, 'png'>;

/** A formatted output known to be text. */
export interface TextOutput extends FormattedOutput {
  readonly body: string;
}

/** Formats a render result in `format` (default: `result.params.format`). */
export function formatResult(result: RenderResult, format: TextFormat): TextOutput;
export function formatResult(result: RenderResult, format?: Format): FormattedOutput;
export function formatResult(result: RenderResult, format: Format = result.params.format): FormattedOutput {
  const formatter = FORMATTERS[format];
  if (!formatter) throw new RangeError(`unknown format ${JSON.stringify(format)}`);
  return { body: formatter(result), contentType: contentTypeHeader(format), extension: FORMAT_INFO[format].extension };
}

/** The body of a text output; a TypeError for a binary one (png), which has no text. */
export function bodyText(output: FormattedOutput): string {
  if (typeof output.body !== 'string') throw new TypeError(`${output.extension} output is binary, not text`);
  return output.body;
}

export { FORMAT_INFO, CHROMA_ENCODING, BACKGROUND_ENCODING, COMPACT_VERSION, contentTypeHeader, type FormatInfo } from './info.js';
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
  formatPng, renderPng, compactGrid, pngSize, PNG_CELL_WIDTH, PNG_CELL_HEIGHT, PNG_SCALES, type PngScale, type PngOptions,
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
