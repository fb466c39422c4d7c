/**
 * `json-compact`: `{ "v": 1, "columns", "rows", "text", "chroma": { "encoding": "rgb24-b64-v1", "data" } }`.
 * `text` is the `text` output (rows joined by `\n`, trailing newline); `data` is base64 of
 * rows * columns * 3 bytes, row-major RGB, the cell colours, always present whatever `color` says.
 * The decoder and `compactToImage` are what the `round-trip` rubric measures.
 */
import type { CellGrid, RgbaImage } from '../types.js';
import { V2aError } from '../errors.js';
import { describeType, isRecord } from '../args.js';
import { Base64Error, decodeBase64, encodeBase64 } from './base64.js';
import { checkGrid, gridLines } from './grid.js';
import { BACKGROUND_ENCODING, CHROMA_ENCODING, COMPACT_VERSION } from './info.js';
import { glyphShape } from '../glyphs/charsets.js';
import { SRGB8_TO_LINEAR, encodeLinear } from '../pipeline/linear.js';

export interface CompactOutput {
  readonly v: typeof COMPACT_VERSION;
  readonly columns: number;
  readonly rows: number;
  readonly text: string;
  readonly chroma: { readonly encoding: typeof CHROMA_ENCODING; readonly data: string };
  /** Extension: the background plane, only when cells carry two colours (chroma is then the ink). */
  readonly background?: { readonly encoding: typeof BACKGROUND_ENCODING; readonly data: string };
}

export interface DecodedCompact {
  readonly columns: number;
  readonly rows: number;
  /** The rows, each exactly `columns` code points. */
  readonly lines: string[];
  /** rows * columns * 3 bytes, row-major RGB. */
  readonly rgb: Uint8Array;
  /** Extension: rows * columns * 3 bytes of background colour, when the document has that plane. */
  readonly background?: Uint8Array;
  /** Extension: a frame's display time in milliseconds, when the document is a line of the CLI's NDJSON frames. */
  readonly delayMs?: number;
}

/** Thrown by `decodeCompact` for anything that is not a valid `json-compact` v1 document. */
export class CompactDecodeError extends V2aError {
  override name = 'CompactDecodeError';
  readonly #reason: string;
  readonly #otherFile: boolean;

  /**
   * @param reason what is wrong, without the message's `invalid json-compact: ` prefix
   * @param otherFile the input is another kind of file altogether (not JSON, not an object, v2a's
   *   json output, no version), not a json-compact document with a fault
   */
  constructor(reason: string, otherFile = false) {
    super('invalid-compact', `invalid json-compact: ${reason}`);
    this.#reason = reason;
    this.#otherFile = otherFile;
  }

  // Getters, as V2aError's detail: no own property for JSON, spreads or deepEqual to see.
  get reason(): string {
    return this.#reason;
  }

  get otherFile(): boolean {
    return this.#otherFile;
  }
}

/** The cell sizes compactToImage takes, in pixels (integers). */
export const CELL_SIZE_RANGE = Object.freeze({ min: 1, max: 256 });

/** The `json-compact` object of a grid. */
export function buildCompact(grid: CellGrid): CompactOutput {
  checkGrid(grid);
  return {
    v: COMPACT_VERSION,
    columns: grid.columns,
    rows: grid.rows,
    text: gridLines(grid).join('\n') + '\n',
    chroma: { encoding: CHROMA_ENCODING, data: encodeBase64(grid.colors) },
    ...(grid.background ? { background: { encoding: BACKGROUND_ENCODING, data: encodeBase64(grid.background) } } : {}),
  };
}

/** `json-compact`: `buildCompact` serialised compactly. */
export function formatCompact(grid: CellGrid): string {
  return JSON.stringify(buildCompact(grid));
}

const TOP_KEYS = ['v', 'columns', 'rows', 'text', 'chroma'];
/** `delayMs`: the CLI's NDJSON frames (render --animate, play to a pipe) add each frame's display time. */
const OPTIONAL_KEYS = ['background', 'delayMs'];
const CHROMA_KEYS = ['encoding', 'data'];

function checkKeys(o: Record<string, unknown>, keys: readonly string[], where: string, optional: readonly string[] = []): void {
  // A document with no version is no json-compact at all.
  for (const k of keys) if (!(k in o)) throw new CompactDecodeError(`${where} lacks "${k}"`, where === 'document' && k === 'v');
  for (const k of Object.keys(o)) {
    if (!keys.includes(k) && !optional.includes(k)) throw new CompactDecodeError(`${where} has an unknown member "${k}"`);
  }
}

/** A plane member (`chroma`, `background`): { encoding, data } of exactly `cells` RGB triples. */
function decodePlane(plane: unknown, name: string, encoding: string, cells: number): Uint8Array {
  if (!isRecord(plane)) throw new CompactDecodeError(`"${name}" must be an object`);
  checkKeys(plane, CHROMA_KEYS, `"${name}"`);
  if (plane.encoding !== encoding) {
    throw new CompactDecodeError(`unsupported ${name} encoding ${JSON.stringify(plane.encoding)}, expected "${encoding}"`);
  }
  const data = plane.data;
  if (typeof data !== 'string') throw new CompactDecodeError(`"${name}.data" must be a string`);
  // rows * columns * 3 bytes is a multiple of 3, so its base64 has exactly 4 characters per cell.
  if (data.length !== cells * 4) {
    throw new CompactDecodeError(`"${name}.data" has ${data.length} base64 characters, expected ${cells * 4} (${cells * 3} bytes)`);
  }
  try {
    return decodeBase64(data);
  } catch (e) {
    if (e instanceof Base64Error) throw new CompactDecodeError(`"${name}.data": ${e.message}`);
    throw e;
  }
}

function checkDimension(x: unknown, name: string): number {
  if (typeof x !== 'number' || !Number.isSafeInteger(x) || x < 1) {
    throw new CompactDecodeError(`"${name}" must be a positive integer, got ${JSON.stringify(x)}`);
  }
  return x;
}

/**
 * Number of code points of `line`, rejecting what a row can never contain: control characters
 * (C0, DEL, C1) and lone surrogates.
 */
function checkLine(line: string, row: number, columns: number): void {
  let count = 0;
  for (let i = 0; i < line.length; i++, count++) {
    const c = line.charCodeAt(i);
    if (c < 0x20 || (c >= 0x7f && c <= 0x9f)) {
      throw new CompactDecodeError(`row ${row} contains control character U+${c.toString(16).padStart(4, '0').toUpperCase()}`);
    }
    if (c >= 0xd800 && c <= 0xdbff) {
      const d = line.charCodeAt(i + 1);
      if (!(d >= 0xdc00 && d <= 0xdfff)) throw new CompactDecodeError(`row ${row} contains a lone surrogate`);
      i++;
    } else if (c >= 0xdc00 && c <= 0xdfff) {
      throw new CompactDecodeError(`row ${row} contains a lone surrogate`);
    }
  }
  if (count !== columns) throw new CompactDecodeError(`row ${row} has ${count} code points, expected ${columns}`);
}

/**
 * Decodes and strictly validates a `json-compact` document (its JSON text or the parsed object):
 * exactly the members `v` (1), `columns`, `rows`, `text`, `chroma` { `encoding`
 * (`rgb24-b64-v1`), `data` }, and optionally (extension) `background` { `encoding`
 * (`rgb24-bg-b64-v1`), `data` } and `delayMs` (a frame's display time: a number of milliseconds,
 * 0 or more); `text` = `rows` rows of exactly `columns` code points, each ended
 * by `\n`; `data` = strict base64 of exactly rows * columns * 3 bytes. Throws `CompactDecodeError`.
 */
export function decodeCompact(input: string | object): DecodedCompact {
  // Bytes type-check as an object, and were then "a document that lacks v".
  if (ArrayBuffer.isView(input) || input instanceof ArrayBuffer) throw new TypeError(`decodeCompact: pass the document's text (decode the bytes first) or its parsed object (got ${describeType(input)})`);
  let doc: unknown = input;
  if (typeof input === 'string') {
    try {
      doc = JSON.parse(input);
    } catch {
      throw new CompactDecodeError('not JSON', true);
    }
  }
  if (!isRecord(doc)) throw new CompactDecodeError('not a JSON object', true);
  // v2a's json output says its format: name it, rather than the first member json-compact lacks.
  if (typeof doc.format === 'string' && !('v' in doc)) throw new CompactDecodeError(`this is v2a's ${JSON.stringify(doc.format)} output, not json-compact`, true);
  // The version first: another version's members are its own, and naming one it lacks would hide why.
  if ('v' in doc && doc.v !== COMPACT_VERSION) throw new CompactDecodeError(`unsupported version "v": ${JSON.stringify(doc.v)}, expected 1`);
  checkKeys(doc, TOP_KEYS, 'document', OPTIONAL_KEYS);
  const columns = checkDimension(doc.columns, 'columns');
  const rows = checkDimension(doc.rows, 'rows');
  const cells = columns * rows;
  if (!Number.isSafeInteger(cells * 4)) throw new CompactDecodeError(`grid ${columns}x${rows} is too large`);

  const rgb = decodePlane(doc.chroma, 'chroma', CHROMA_ENCODING, cells);
  const background = doc.background === undefined ? undefined : decodePlane(doc.background, 'background', BACKGROUND_ENCODING, cells);
  const delayMs = doc.delayMs;
  if (delayMs !== undefined && !(typeof delayMs === 'number' && Number.isFinite(delayMs) && delayMs >= 0)) {
    throw new CompactDecodeError('"delayMs" must be a number of milliseconds, 0 or more');
  }

  const text = doc.text;
  if (typeof text !== 'string') throw new CompactDecodeError('"text" must be a string');
  if (!text.endsWith('\n')) throw new CompactDecodeError('"text" must end with a newline');
  const lines = text.slice(0, -1).split('\n');
  if (lines.length !== rows) throw new CompactDecodeError(`"text" has ${lines.length} rows, expected ${rows}`);
  for (let y = 0; y < rows; y++) checkLine(lines[y]!, y, columns);

  return { columns, rows, lines, rgb, ...(background ? { background } : {}), ...(delayMs !== undefined ? { delayMs } : {}) };
}

export interface CompactImageOptions {
  /** Pixels per cell horizontally, default 1. */
  readonly cellWidth?: number;
  /** Pixels per cell vertically, default 2 (so the image has the 1:2 cell aspect). */
  readonly cellHeight?: number;
}

function checkCellSize(v: number, name: string): number {
  const { min, max } = CELL_SIZE_RANGE;
  if (!Number.isInteger(v) || v < min || v > max) throw new RangeError(`${name} must be an integer from ${min} to ${max}, got ${v}`);
  return v;
}

/** The share of a cell its glyph's ink takes when two colours mix: its measured coverage, else half. */
const mixCoverage = (ch: string): number => glyphShape(ch)?.coverage ?? 0.5;

/** mixCoverage of each glyph of a grid, by the cells' glyph index. */
export const mixCoverages = (glyphs: readonly string[]): Float32Array => Float32Array.from(glyphs, mixCoverage);

/**
 * The colour each cell shows when it carries two colours: its background and its ink mixed in
 * linear light by the glyph's measured coverage (a glyph the font data lacks counts as half).
 */
export function mixedCellColors(columns: number, rows: number, lines: readonly string[], ink: Uint8Array, background: Uint8Array): Uint8Array {
  const out = new Uint8Array(columns * rows * 3);
  const coverage = new Map<string, number>();
  for (let y = 0; y < rows; y++) {
    let x = 0;
    for (const ch of lines[y] ?? '') {
      if (x >= columns) break;
      let m = coverage.get(ch);
      if (m === undefined) coverage.set(ch, (m = mixCoverage(ch)));
      const o = (y * columns + x) * 3;
      for (let k = 0; k < 3; k++) {
        const b = SRGB8_TO_LINEAR[background[o + k]!]!, f = SRGB8_TO_LINEAR[ink[o + k]!]!;
        out[o + k] = Math.round(encodeLinear(b + m * (f - b)) * 255);
      }
      x++;
    }
  }
  return out;
}

/**
 * Rebuilds an image from the chroma: each cell a cellWidth x cellHeight block of its colour,
 * opaque. Size (columns * cellWidth) x (rows * cellHeight). With a background plane (and the
 * lines), a cell's colour is what it shows: ink and background mixed by the glyph's coverage.
 */
export function compactToImage(
  decoded: Pick<DecodedCompact, 'columns' | 'rows' | 'rgb'> & Partial<Pick<DecodedCompact, 'lines' | 'background'>>,
  options: CompactImageOptions = {},
): RgbaImage {
  const cw = checkCellSize(options.cellWidth ?? 1, 'cellWidth');
  const ch = checkCellSize(options.cellHeight ?? 2, 'cellHeight');
  const { columns, rows } = decoded;
  if (decoded.rgb.length !== columns * rows * 3) {
    throw new RangeError(`rgb has ${decoded.rgb.length} bytes, expected ${columns * rows * 3}`);
  }
  const rgb = decoded.background && decoded.lines ? mixedCellColors(columns, rows, decoded.lines, decoded.rgb, decoded.background) : decoded.rgb;
  const width = columns * cw;
  const height = rows * ch;
  const stride = width * 4;
  const data = new Uint8Array(stride * height);
  let s = 0;
  for (let y = 0; y < rows; y++) {
    const top = y * ch * stride;
    let o = top;
    for (let x = 0; x < columns; x++, s += 3) {
      const r = rgb[s]!;
      const g = rgb[s + 1]!;
      const b = rgb[s + 2]!;
      for (let k = 0; k < cw; k++, o += 4) {
        data[o] = r;
        data[o + 1] = g;
        data[o + 2] = b;
        data[o + 3] = 255;
      }
    }
    for (let k = 1; k < ch; k++) data.copyWithin(top + k * stride, top, top + stride);
  }
  return { width, height, data };
}
