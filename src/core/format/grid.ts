/**
 * Shared reading of a CellGrid: invariant checks, row strings and colour runs. Every format goes
 * through here, so every format sees the same rows.
 */
import { checkObject, describeType } from '../args.js';
import type { CellGrid } from '../types.js';
import { packedAt } from './color.js';

/** True for a glyph whose ink is invisible, so its colour does not matter: space and blank Braille. */
export function isBlankGlyph(glyph: string): boolean {
  return glyph === ' ' || glyph === '\u2800';
}

/**
 * Checks what the formats rely on: rows * columns cells and (with `colors`, for a format that
 * draws them) 3 * rows * columns colour bytes, cell indices inside the glyph table, and each glyph
 * exactly one printable code point (no control character, no lone surrogate, nothing XML
 * forbids), so each row is exactly `columns` code points. A format without colour must not read
 * them: mono art computes its colours on first read (render.ts).
 * Throws a RangeError naming the broken invariant (a renderer bug, not a user error).
 */
export function checkGrid(grid: CellGrid, colors = true): void {
  checkObject(grid, 'grid (a render result or cell grid)');
  const { columns, rows, cells, glyphs } = grid;
  if (!Number.isInteger(columns) || columns < 1 || !Number.isInteger(rows) || rows < 1) {
    throw new RangeError(`grid size ${columns}x${rows} is not positive integers`);
  }
  const n = columns * rows;
  if (cells.length !== n) throw new RangeError(`grid has ${cells.length} cells, expected ${n}`);
  if (colors && grid.colors.length !== n * 3) throw new RangeError(`grid has ${grid.colors.length} colour bytes, expected ${n * 3}`);
  if (grid.background && grid.background.length !== n * 3) throw new RangeError(`grid has ${grid.background.length} background bytes, expected ${n * 3}`);
  if (grid.clear && (!grid.background || grid.clear.length !== n)) throw new RangeError(`grid has ${grid.clear.length} clear flags${grid.background ? `, expected ${n}` : ' without a background plane'}`);
  for (let g = 0; g < glyphs.length; g++) {
    const s = glyphs[g]!;
    const cp = s.codePointAt(0);
    const ok = cp !== undefined && s.length === (cp > 0xffff ? 2 : 1) && cp >= 0x20 && !(cp >= 0x7f && cp <= 0x9f)
      && !(cp >= 0xd800 && cp <= 0xdfff) && cp !== 0xfffe && cp !== 0xffff;
    if (!ok) throw new RangeError(`glyph ${g} (${JSON.stringify(s)}) is not exactly one printable code point`);
  }
  let max = 0;
  for (let i = 0; i < n; i++) if (cells[i]! > max) max = cells[i]!;
  if (max >= glyphs.length) throw new RangeError(`cell glyph index ${max} outside the glyph table of ${glyphs.length}`);
}

/** The rows of the grid as strings (glyphs only, no newline). Assumes `checkGrid` passed. */
export function gridLines(grid: CellGrid): string[] {
  const { columns, rows, cells, glyphs } = grid;
  const lines = new Array<string>(rows);
  // One UTF-16 unit per glyph: each row built as char codes in one call. (Loops, not callbacks:
  // see wasm/kernels.ts openNested() on closures made for every call.)
  const code = columns <= 0x2000 ? bmpCodes(glyphs) : null;
  if (code) {
    const row = new Uint16Array(columns);
    for (let y = 0; y < rows; y++) {
      const base = y * columns;
      for (let x = 0; x < columns; x++) row[x] = code[cells[base + x]!]!;
      lines[y] = String.fromCharCode.apply(null, row as unknown as number[]);
    }
  } else {
    for (let y = 0; y < rows; y++) {
      const base = y * columns;
      let s = '';
      for (let x = 0; x < columns; x++) s += glyphs[cells[base + x]!]!;
      lines[y] = s;
    }
  }
  return lines;
}

/** Each glyph's UTF-16 unit, or null when one is not a single unit. */
function bmpCodes(glyphs: readonly string[]): Uint16Array | null {
  const code = new Uint16Array(glyphs.length);
  for (let g = 0; g < glyphs.length; g++) {
    if (glyphs[g]!.length !== 1) return null;
    code[g] = glyphs[g]!.charCodeAt(0);
  }
  return code;
}

/** A run of cells printed in one colour. `color` is packed 0xRRGGBB, or -1 for "no colour needed". */
export interface Run {
  readonly color: number;
  readonly text: string;
}

/** Per glyph index: 1 when the glyph is blank (see isBlankGlyph). */
export function blankTable(glyphs: readonly string[]): Uint8Array {
  const blank = new Uint8Array(glyphs.length);
  for (let g = 0; g < glyphs.length; g++) blank[g] = isBlankGlyph(glyphs[g]!) ? 1 : 0;
  return blank;
}

/**
 * The runs of one row, in typed arrays reused from row to row: run k covers the row's cells up to
 * (not including) `ends[k]`, from the end of run k - 1 (or 0), in ink `colors[k]` and (pair runs)
 * background `backgrounds[k]` (-1: clear cells, no background of their own); `count` runs.
 */
export interface RowRuns {
  count: number;
  readonly ends: Int32Array;
  readonly colors: Int32Array;
  readonly backgrounds: Int32Array;
}

/** Room for the runs of a row of `columns` cells (at most one per cell). */
export function rowRunsFor(columns: number): RowRuns {
  return { count: 0, ends: new Int32Array(columns), colors: new Int32Array(columns), backgrounds: new Int32Array(columns) };
}

/**
 * The colour runs of row `y` into `out`: consecutive cells of equal colour are merged, and blank
 * cells join whatever run they are in (their colour is invisible). Leading blanks form a run with
 * colour -1.
 */
export function splitRow(grid: CellGrid, blank: Uint8Array, y: number, out: RowRuns): void {
  const { columns, cells, colors } = grid;
  const base = y * columns;
  let n = 0, color = -1, open = false;
  for (let x = 0; x < columns; x++) {
    const g = cells[base + x]!;
    if (blank[g]) {
      open = true;
      continue;
    }
    const c = packedAt(colors, base + x);
    if (c === color) continue;
    if (open) {
      out.ends[n] = x;
      out.colors[n++] = color;
    }
    color = c;
    open = true;
  }
  if (open) {
    out.ends[n] = columns;
    out.colors[n++] = color;
  }
  out.count = n;
}

/**
 * The runs of row `y` of a grid with a `background` plane into `out`: consecutive cells with the
 * same ink and background are merged; a blank cell shows only its background, so it joins a run
 * of the same background whatever its ink (a run of blanks alone has ink -1). A `clear` cell's
 * background is -1: none of its own, the viewer's ground.
 */
export function splitRowPairs(grid: CellGrid, blank: Uint8Array, y: number, out: RowRuns): void {
  const { columns, cells, colors, clear } = grid;
  const bgPlane = grid.background!;
  const base = y * columns;
  let n = 0, color = -1, background = -1, open = false;
  for (let x = 0; x < columns; x++) {
    const i = base + x;
    const b = clear?.[i] ? -1 : packedAt(bgPlane, i);
    const c = blank[cells[i]!] ? -1 : packedAt(colors, i);
    if (open && b === background && (c === -1 || color === -1 || c === color)) {
      if (color === -1) color = c;
      continue;
    }
    if (open) {
      out.ends[n] = x;
      out.colors[n] = color;
      out.backgrounds[n++] = background;
    }
    color = c;
    background = b;
    open = true;
  }
  if (open) {
    out.ends[n] = columns;
    out.colors[n] = color;
    out.backgrounds[n++] = background;
  }
  out.count = n;
}

/** The exported row helpers' row: an integer inside the grid (a RangeError naming it, not runs of "undefined"). */
function checkRow(grid: CellGrid, y: number, who: string): void {
  checkObject(grid, `${who}: grid`);
  if (!Number.isInteger(y) || y < 0 || y >= grid.rows) throw new RangeError(`${who}: row must be an integer from 0 to ${grid.rows - 1} (got ${typeof y === 'number' ? y : describeType(y)})`);
}

/** The text of a row's cells `from` up to `to`: `texts[g]` is glyph g's (already escaped) text. */
function runText(grid: CellGrid, texts: readonly string[], from: number, to: number): string {
  let text = '';
  for (let i = from; i < to; i++) text += texts[grid.cells[i]!]!;
  return text;
}

/**
 * The colour runs of row `y`: consecutive cells of equal colour are merged, and blank cells join
 * whatever run they are in (their colour is invisible). `texts[g]` is glyph g's (already escaped)
 * text. (splitRow, with each run's text.)
 */
export function rowRuns(grid: CellGrid, texts: readonly string[], blank: Uint8Array, y: number): Run[] {
  checkRow(grid, y, 'rowRuns');
  const runs = rowRunsFor(grid.columns);
  splitRow(grid, blank, y, runs);
  const out: Run[] = [];
  const base = y * grid.columns;
  for (let k = 0, from = base; k < runs.count; k++) {
    const to = base + runs.ends[k]!;
    out.push({ color: runs.colors[k]!, text: runText(grid, texts, from, to) });
    from = to;
  }
  return out;
}

/** A run of cells with one ink colour (-1: only blanks, any ink) and one background colour (-1: clear cells, the viewer's ground). */
export interface PairRun {
  readonly color: number;
  readonly background: number;
  readonly text: string;
}

/**
 * The runs of row `y` of a grid with a `background` plane: consecutive cells with the same ink and
 * background are merged; a blank cell shows only its background, so it joins a run of the same
 * background whatever its ink. A run of `clear` cells (the source seen through) has background
 * -1: none of its own, the viewer's ground. (splitRowPairs, with each run's text.)
 */
export function rowPairRuns(grid: CellGrid, texts: readonly string[], blank: Uint8Array, y: number): PairRun[] {
  checkRow(grid, y, 'rowPairRuns');
  if (!grid.background) throw new TypeError('rowPairRuns: the grid has no background plane (two colours per cell); use rowRuns');
  const runs = rowRunsFor(grid.columns);
  splitRowPairs(grid, blank, y, runs);
  const out: PairRun[] = [];
  const base = y * grid.columns;
  for (let k = 0, from = base; k < runs.count; k++) {
    const to = base + runs.ends[k]!;
    out.push({ color: runs.colors[k]!, background: runs.backgrounds[k]!, text: runText(grid, texts, from, to) });
    from = to;
  }
  return out;
}
