/**
 * What one `render_ascii` call answers, built from the render result where the render ran (a
 * server worker, or the stdio face's own process), so every face answers alike:
 * - a text block: the output in the requested format (for png, the art as plain text);
 * - an image block: the png rendering (in colour where the format shows colour: not for text),
 *   bounded to MCP_IMAGE_MAX_EDGE px on its longer side and MCP_IMAGE_MAX_BYTES, drawn with
 *   smaller cells (scale 2, 4, 8) when the full one is larger (for format png, noted as a preview);
 * - structuredContent, conforming to RENDER_OUTPUT_SCHEMA: the art again as `text` (several
 *   clients show the model only the JSON of structuredContent when there is one) and a summary
 *   (dimensions, charset, codebook, Director report, effective parameters);
 * - a character budget: when the art plus the summary would exceed `maxChars`, no result but a
 *   `reply-too-large` error naming the columns and the formats that fit. The art is counted once:
 *   a client shows the model one of its two copies.
 * Pure: core imports only (it runs in worker threads and in `v2a mcp`).
 */
import { V2aError } from '../../core/errors.js';
import { encodeBase64 } from '../../core/format/base64.js';
import { formatResult, type FormattedOutput } from '../../core/format/index.js';
import { CODEBOOK_SCHEMA, DIRECTOR_SCHEMA, PARAMS_SCHEMA, type JsonSchema } from '../../core/format/jsonSchemas.js';
import { PNG_SCALES, pngCell, pngSize, renderPng, type PngOptions, type PngScale } from '../../core/format/png.js';
import { CHARSETS, FORMATS, PARAMS, reportedExplicit, reportedParams, type Format, type RenderParams } from '../../core/params/definitions.js';
import { paramJsonSchema } from '../../core/params/schema.js';
import type { CodebookReport, DirectorReport, RenderResult } from '../../core/types.js';

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
  /** The art: the text block's string. */
  readonly text: string;
  readonly format: Format;
  readonly contentType: string;
  readonly columns: number;
  readonly rows: number;
  readonly charset: string;
  readonly cellAspect: number;
  /** Characters of the art (`text`). */
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
  description: 'The art (text, the same string as the text block) and what was rendered. The image block is the art as a png.',
  required: ['text', 'format', 'contentType', 'columns', 'rows', 'charset', 'cellAspect', 'characters', 'image', 'codebook', 'director', 'params', 'explicit', 'source'],
  additionalProperties: false,
  properties: {
    text: { type: 'string', description: 'The art itself, the same string as content[0].text: the output in the requested format (png: the art as plain text).' },
    format: { enum: [...FORMATS], description: 'Format of the text block (png: the text block is the art as plain text; the image block is the png).' },
    contentType: { type: 'string', description: 'Media type of the requested format.' },
    columns: { type: 'integer', minimum: 1, description: 'Cells per row.' },
    rows: { type: 'integer', minimum: 1, description: 'Number of rows.' },
    charset: { enum: [...CHARSETS] },
    cellAspect: { type: 'number', exclusiveMinimum: 0, description: 'Cell width / height the row count used.' },
    characters: { type: 'integer', minimum: 0, description: 'Length of the art (text) in UTF-16 code units. The character budget counts the art once, with the rest of this summary.' },
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
    text,
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
    explicit: reportedExplicit(result.explicit),
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

/**
 * The art and the rest of the summary, and their length together (what the budget counts): the
 * art once, though the text block and structuredContent.text both carry it, since a client shows
 * the model one of them.
 */
function measure(result: RenderResult, output: FormattedOutput): { text: string; overhead: number; total: number } {
  const text = textOf(result, result.params.format, output);
  // The summary's image size hardly changes its length: the full-size one stands in before any png is drawn.
  const cell = pngCell(1, result.cellAspect);
  const full = { width: result.columns * cell.width, height: result.rows * cell.height, cellWidth: cell.width, cellHeight: cell.height };
  const overhead = JSON.stringify(summary(result, output, '', { mimeType: 'image/png', ...full })).length;
  return { text, overhead, total: text.length + overhead };
}

/** A reply measured at some columns. */
interface Sized {
  readonly columns: number;
  readonly total: number;
  readonly overhead: number;
}

/**
 * The columns to try next, strictly between the largest known to fit (`fits`; none yet: the
 * smallest allowed) and the smallest known over (`over`). A reply grows about with its cells, so
 * with columns squared (rows follow columns): interpolated between the two, or scaled down from
 * `over` alone, `margin` under the boundary.
 */
function nextColumns(fits: Sized | undefined, over: Sized, maxChars: number, margin: number): number {
  let columns: number;
  if (fits) {
    const t = (maxChars - fits.total) / Math.max(1, over.total - fits.total);
    columns = Math.floor(Math.sqrt(fits.columns ** 2 + t * (over.columns ** 2 - fits.columns ** 2)));
  } else {
    const room = Math.max(0, maxChars - over.overhead) / Math.max(1, over.total - over.overhead);
    columns = Math.floor(over.columns * Math.sqrt(room) * margin);
  }
  return Math.min(over.columns - 1, Math.max(fits ? fits.columns + 1 : COLUMNS.min, columns));
}

/** Most renders the refusal spends on finding the columns it names. */
const FIT_TRIES = 6;

/**
 * The columns to name in a refusal: the most that fit, found by rendering at the columns
 * nextColumns() proposes until the largest that fits and the smallest that is over are
 * neighbours (a reply's characters per cell grow as columns fall: html and ansi merge fewer
 * equal-colour runs, so a size is only known once rendered). After FIT_TRIES renders, the largest
 * found to fit: what is named was always rendered and fits. undefined: nothing fits from the
 * smallest columns up, or none was found. Without `rerender`, an unchecked estimate 15 % under.
 */
async function fittingColumns(result: RenderResult, size: number, overhead: number, maxChars: number, rerender?: Rerender): Promise<number | undefined> {
  let over: Sized = { columns: result.columns, total: size, overhead };
  if (!rerender) {
    const columns = nextColumns(undefined, over, maxChars, 0.85);
    return columns < result.columns && overhead < maxChars ? columns : undefined;
  }
  // The summary alone is over: no columns fit (its size hardly depends on them).
  if (overhead >= maxChars) return undefined;
  let fits: Sized | undefined;
  for (let i = 0; i < FIT_TRIES && (fits ? fits.columns + 1 : COLUMNS.min) < over.columns; i++) {
    const columns = nextColumns(fits, over, maxChars, 0.97);
    let again: Awaited<ReturnType<Rerender>>;
    try {
      again = await rerender(columns);
    } catch {
      break; // the advice is not worth a failure of its own
    }
    const m = measure(again.result, again.output);
    const sized = { columns, total: m.total, overhead: m.overhead };
    if (m.total <= maxChars) fits = sized;
    else over = sized;
  }
  return fits?.columns;
}

/**
 * The refusal of a reply over budget: the most columns that fit (fittingColumns) and the formats
 * that fit at these columns (measured: formatted from the same result). png is never named: its
 * reply carries the art as plain text, as text's does, so it fits exactly when text fits.
 */
async function overBudget(result: RenderResult, format: Format, size: number, overhead: number, maxChars: number, rerender?: Rerender): Promise<V2aError> {
  const { columns } = result;
  const fits: string[] = [];
  for (const f of FORMATS) {
    if (f === format || f === 'png') continue;
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
 * The reply to one call; throws V2aError `reply-too-large` when the art and summary would exceed
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
