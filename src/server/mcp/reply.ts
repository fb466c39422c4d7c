/**
 * What one `render_ascii` call answers, built from the render result where the render ran (a
 * server worker, or the stdio face's own process), so every face answers alike:
 * - a text block: the output in the requested format (for png, the art as plain text);
 * - an image block: the png rendering (in colour where the format shows colour: not for text),
 *   bounded to MCP_IMAGE_MAX_EDGE px on its longer side and MCP_IMAGE_MAX_BYTES, drawn with
 *   smaller cells (scale 2, 4, 8) when the full one is larger (for format png, noted as a preview);
 * - structuredContent: a summary that conforms to RENDER_OUTPUT_SCHEMA (dimensions, charset,
 *   codebook, Director report, effective parameters), never the json payload a second time;
 * - a character budget: when text plus summary would exceed `maxChars`, no result but a
 *   `reply-too-large` error naming the columns and the formats that fit.
 * Pure: core imports only (it runs in worker threads and in `v2a mcp`).
 */
import { V2aError } from '../../core/errors.js';
import { encodeBase64 } from '../../core/format/base64.js';
import { formatResult, type FormattedOutput } from '../../core/format/index.js';
import { CODEBOOK_SCHEMA, DIRECTOR_SCHEMA, PARAMS_SCHEMA, type JsonSchema } from '../../core/format/jsonSchemas.js';
import { PNG_SCALES, pngCell, pngSize, renderPng, type PngOptions, type PngScale } from '../../core/format/png.js';
import { CHARSETS, FORMATS, PARAMS, reportedParams, type Format, type RenderParams } from '../../core/params/definitions.js';
import { paramJsonSchema } from '../../core/params/schema.js';
import type { CodebookReport, DirectorReport, RenderResult } from '../../core/types.js';

/** Default character budget of one reply: about 20k tokens of art, under common client caps (25k tokens). */
export const DEFAULT_MCP_MAX_CHARS = 60_000;
/** The image block's longer side at most (what vision models take without downscaling, about). */
export const MCP_IMAGE_MAX_EDGE = 1600;
/** The image block's PNG at most, before base64. */
export const MCP_IMAGE_MAX_BYTES = 768 * 1024;

const COLUMNS = PARAMS.find((d) => d.name === 'columns')! as { readonly min: number; readonly max: number };

export interface ToolImage {
  /** Base64 of the PNG. */
  readonly data: string;
  readonly mimeType: 'image/png';
}

/** The structuredContent of every successful call (RENDER_OUTPUT_SCHEMA). */
export interface RenderSummary {
  readonly format: Format;
  readonly contentType: string;
  readonly columns: number;
  readonly rows: number;
  readonly charset: string;
  readonly cellAspect: number;
  /** Characters of the text block. */
  readonly characters: number;
  readonly image: PreviewSize;
  readonly codebook: CodebookReport;
  readonly director: DirectorReport;
  readonly params: RenderParams;
  readonly explicit: readonly string[];
  readonly source: { readonly width: number; readonly height: number };
}

/** The image block's size; `note` only for format png drawn smaller than the png itself. */
export interface PreviewSize {
  readonly mimeType: 'image/png';
  readonly width: number;
  readonly height: number;
  readonly cellWidth: number;
  readonly cellHeight: number;
  readonly note?: string;
}

export interface ToolReply {
  readonly text: string;
  readonly image: ToolImage;
  readonly structured: RenderSummary;
}

/**
 * The effective parameters by name and JSON type only: each one's description, range and
 * default are in the inputSchema beside it, and tools/list sends both.
 */
const PARAMS_BY_TYPE: JsonSchema = {
  type: 'object',
  description: `${PARAMS_SCHEMA.description as string} Each is described in the inputSchema.`,
  additionalProperties: false,
  properties: Object.fromEntries(PARAMS.map((d) => [d.name, { type: paramJsonSchema(d).type }])),
};

/** The Director's report, its adjustments keyed by parameter name without listing the names again. */
const DIRECTOR_SUMMARY: JsonSchema = (() => {
  const properties = DIRECTOR_SCHEMA.properties as Record<string, JsonSchema>;
  const { propertyNames: _names, ...adjustments } = properties.adjustments!;
  return { ...DIRECTOR_SCHEMA, properties: { ...properties, adjustments } };
})();

/**
 * JSON Schema (draft-07 compatible, as MCP clients validate) of every call's structuredContent.
 * The parameters' names are listed once (params), not again under explicit and the Director's
 * adjustments.
 */
export const RENDER_OUTPUT_SCHEMA: JsonSchema = {
  type: 'object',
  description: 'What was rendered. The art itself is the text block (in the requested format) and the image block (png).',
  required: ['format', 'contentType', 'columns', 'rows', 'charset', 'cellAspect', 'characters', 'image', 'codebook', 'director', 'params', 'explicit', 'source'],
  additionalProperties: false,
  properties: {
    format: { enum: [...FORMATS], description: 'Format of the text block (png: the text block is the art as plain text; the image block is the png).' },
    contentType: { type: 'string', description: 'Media type of the requested format.' },
    columns: { type: 'integer', minimum: 1, description: 'Cells per row.' },
    rows: { type: 'integer', minimum: 1, description: 'Number of rows.' },
    charset: { enum: [...CHARSETS] },
    cellAspect: { type: 'number', exclusiveMinimum: 0, description: 'Cell width / height the row count used.' },
    characters: { type: 'integer', minimum: 0, description: 'Length of the text block in UTF-16 code units (what the character budget counts).' },
    image: {
      type: 'object',
      description: 'The image block: the png rendering, with smaller cells when the full size would exceed the bounds.',
      required: ['mimeType', 'width', 'height', 'cellWidth', 'cellHeight'],
      additionalProperties: false,
      properties: {
        mimeType: { const: 'image/png' },
        width: { type: 'integer', minimum: 1, maximum: MCP_IMAGE_MAX_EDGE },
        height: { type: 'integer', minimum: 1, maximum: MCP_IMAGE_MAX_EDGE },
        cellWidth: { type: 'integer', minimum: 1 },
        cellHeight: { type: 'integer', minimum: 1 },
        note: { type: 'string', description: 'Only for format png when the image block is drawn with smaller cells than the png: says it is a preview, and how to get the png at full size.' },
      },
    },
    codebook: CODEBOOK_SCHEMA,
    director: DIRECTOR_SUMMARY,
    params: PARAMS_BY_TYPE,
    explicit: { type: 'array', uniqueItems: true, items: { type: 'string' }, description: 'Names of the params the caller set (the Director leaves them alone).' },
    source: {
      type: 'object',
      required: ['width', 'height'],
      additionalProperties: false,
      properties: { width: { type: 'integer', minimum: 1 }, height: { type: 'integer', minimum: 1 } },
    },
  },
};

/** The image block: the first scale whose png is within both bounds (the format's own bytes when it is png at full size). */
function imageBlock(result: RenderResult, output: FormattedOutput, deflate: PngOptions['deflate']): { image: ToolImage; size: RenderSummary['image'] } {
  // Scale 8 (1 px wide cells) fits every grid's width (400 columns). Its height fits at the
  // reference aspect (800 rows of 2 px); rows are capped at 800 whatever the aspect, so a smaller
  // one (cells 3 or 4 px tall) could pass the edge: the preview's cells are then made flatter,
  // the picture squashed rather than over the bound the output schema states.
  const aspectAt = (scale: PngScale): number => {
    if (scale !== 8 || pngSize(result.columns, result.rows, 8, result.cellAspect).height <= MCP_IMAGE_MAX_EDGE) return result.cellAspect;
    return 1 / Math.max(1, Math.floor(MCP_IMAGE_MAX_EDGE / result.rows));
  };
  // Colour as the format shows it: plain text ignores color (definitions.ts), so its preview is
  // mono (and its base64 some 40 times smaller than a colour one).
  const color = result.params.color && result.params.format !== 'text';
  const style = { color, monoColor: result.params.monoColor, ...(deflate ? { deflate } : {}) };
  let chosen: { png: Uint8Array; scale: PngScale } | undefined;
  for (const scale of PNG_SCALES) {
    const { width, height } = pngSize(result.columns, result.rows, scale, result.cellAspect);
    if (Math.max(width, height) > MCP_IMAGE_MAX_EDGE && scale !== 8) continue;
    const png = scale === 1 && output.body instanceof Uint8Array ? output.body : renderPng(result, { ...style, scale, cellAspect: aspectAt(scale) });
    chosen = { png, scale };
    if (png.byteLength <= MCP_IMAGE_MAX_BYTES) break;
  }
  const { png, scale } = chosen!;
  const cell = pngCell(scale, aspectAt(scale));
  const size = { mimeType: 'image/png', width: result.columns * cell.width, height: result.rows * cell.height, cellWidth: cell.width, cellHeight: cell.height } as const;
  return { image: { data: encodeBase64(png), mimeType: 'image/png' }, size: scale === 1 || result.params.format !== 'png' ? size : { ...size, note: previewNote(result) } };
}

/** The note of a png drawn smaller than its own size: the image block is then no copy of the output. */
function previewNote(result: RenderResult): string {
  const full = pngSize(result.columns, result.rows, 1, result.cellAspect);
  return `A preview with smaller cells: the png itself is ${full.width} x ${full.height} px, over this reply's bound ` +
    `(${MCP_IMAGE_MAX_EDGE} px a side, ${grouped(MCP_IMAGE_MAX_BYTES)} bytes); ask for fewer columns to get it at full size here.`;
}

function summary(result: RenderResult, output: FormattedOutput, text: string, image: RenderSummary['image']): RenderSummary {
  return {
    format: result.params.format,
    contentType: output.contentType,
    columns: result.columns,
    rows: result.rows,
    charset: result.charset,
    cellAspect: result.cellAspect,
    characters: text.length,
    image,
    codebook: result.codebook,
    director: result.director,
    params: reportedParams(result.params) as RenderParams,
    explicit: result.explicit,
    source: result.source,
  };
}

/** The text block of a format: its body, or for png the art as plain text. */
function textOf(result: RenderResult, format: Format, output?: FormattedOutput): string {
  const out = output && typeof output.body === 'string' ? output.body : formatResult(result, format === 'png' ? 'text' : format).body;
  return typeof out === 'string' ? out : '';
}

const grouped = (n: number) => n.toLocaleString('en-US');

/** The same source rendered again at other columns: lets the over-budget refusal measure its advice. */
export type Rerender = (columns: number) => Promise<{ result: RenderResult; output: FormattedOutput }>;

/** Text and summary of a reply, and their length together (what the budget counts). */
function measure(result: RenderResult, output: FormattedOutput): { text: string; overhead: number; total: number } {
  const text = textOf(result, result.params.format, output);
  // The summary's image size hardly changes its length: the full-size one stands in before any png is drawn.
  const cell = pngCell(1, result.cellAspect);
  const full = { width: result.columns * cell.width, height: result.rows * cell.height, cellWidth: cell.width, cellHeight: cell.height };
  const overhead = JSON.stringify(summary(result, output, text, { mimeType: 'image/png', ...full })).length;
  return { text, overhead, total: text.length + overhead };
}

/**
 * Columns whose reply should fit, from one reply's size: its cells scaled by budget / size with a
 * 15 % margin, and always fewer than it has.
 */
function fewerColumns(columns: number, rows: number, size: number, overhead: number, maxChars: number): number {
  const cells = columns * rows * Math.max(0, (maxChars - overhead) / Math.max(1, size - overhead)) * 0.85;
  return Math.min(columns - 1, Math.floor(Math.sqrt(cells * columns / rows)));
}

/** Most renders the refusal spends on checking the columns it names. */
const FIT_TRIES = 4;

/**
 * The columns to name in a refusal: the estimate, checked by rendering at it when `rerender` is
 * given (a reply's characters per cell grow as columns fall: html and ansi merge fewer equal-colour
 * runs), and lowered from each measured size until one fits. undefined: nothing from the smallest
 * columns up fits, or no check came out within FIT_TRIES.
 */
async function fittingColumns(result: RenderResult, size: number, overhead: number, maxChars: number, rerender?: Rerender): Promise<number | undefined> {
  let columns = fewerColumns(result.columns, result.rows, size, overhead, maxChars);
  if (!rerender) return columns >= COLUMNS.min ? columns : undefined;
  for (let i = 0; i < FIT_TRIES && columns >= COLUMNS.min; i++) {
    let again: Awaited<ReturnType<Rerender>>;
    try {
      again = await rerender(columns);
    } catch {
      return undefined; // the advice is not worth a failure of its own: the refusal names formats only
    }
    const m = measure(again.result, again.output);
    if (m.total <= maxChars) return columns;
    columns = fewerColumns(columns, again.result.rows, m.total, m.overhead, maxChars);
  }
  return undefined;
}

/**
 * The refusal of a reply over budget: the columns that fit (fittingColumns) and the formats that
 * fit at these columns (measured: formatted from the same result).
 */
async function overBudget(result: RenderResult, format: Format, size: number, overhead: number, maxChars: number, rerender?: Rerender): Promise<V2aError> {
  const { columns } = result;
  const fits: string[] = [];
  for (const f of FORMATS) {
    if (f === format || (f === 'png' && format === 'text')) continue;
    const n = textOf(result, f).length + overhead;
    if (n <= maxChars) fits.push(`format=${f} (${grouped(n)})`);
  }
  const suggested = await fittingColumns(result, size, overhead, maxChars, rerender);
  const parts: string[] = [];
  if (suggested !== undefined) parts.push(`columns=${suggested} or fewer with format=${format}`);
  if (fits.length) parts.push(`${fits.join(', ')} at ${columns} columns`);
  // Nothing found that fits: no format at these columns, and no fewer columns in this format.
  const advice = parts.length ? ` Ask again with ${parts.join('; or ')}.` : ` No format fits at ${columns} columns, and no fewer columns were found that fit with format=${format}: the budget is too small for this image.`;
  return new V2aError('reply-too-large',
    `The ${format} reply at ${columns} columns would be ${grouped(size)} characters, over this server's budget of ${grouped(maxChars)} characters per reply; ` +
    `nothing was cut.${advice} (The budget is V2A_MCP_MAX_CHARS on the HTTP server; on v2a mcp, --max-chars, else V2A_MCP_MAX_CHARS; 0 turns it off.)`);
}

/**
 * The reply to one call; throws V2aError `reply-too-large` when text and summary would exceed
 * `maxChars` (0: no budget), naming columns that `rerender` showed to fit. `deflate`: the preview
 * png's deflate (core/format/png.ts): the Node faces pass node:zlib's (src/node/deflate.ts), which
 * this module, core imports only, does not import itself.
 */
export async function buildToolReply(result: RenderResult, output: FormattedOutput, maxChars: number, deflate?: PngOptions['deflate'], rerender?: Rerender): Promise<ToolReply> {
  // The budget is checked before any png is drawn.
  const { text, overhead, total } = measure(result, output);
  if (maxChars > 0 && total > maxChars) throw await overBudget(result, result.params.format, total, overhead, maxChars, rerender);
  const { image, size } = imageBlock(result, output, deflate);
  return { text, image, structured: summary(result, output, text, size) };
}
