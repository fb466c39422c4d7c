/**
 * The png format's geometry: its cell (the glyph bitmaps' 8 x 16 px, 8 / cellAspect tall for another
 * aspect) and the image a grid makes. Apart from the encoder (png.ts, which loads pako), so that
 * the render job can hold a png to the pixel limit before drawing it.
 */
import { BITMAP_CELL } from '../glyphs/bitmaps.js';
import { describeType } from '../args.js';
import { PARAM_BY_NAME, describeDomain, type NumberDef } from '../params/definitions.js';

/** Pixel size of one cell at scale 1. */
export const PNG_CELL_WIDTH = BITMAP_CELL.width;
/** Pixel height of one cell at scale 1, for the reference 1:2 cell. */
export const PNG_CELL_HEIGHT = BITMAP_CELL.height;
/** Cell divisors `renderPng` accepts: they divide both cell sides. */
export const PNG_SCALES = Object.freeze([1, 2, 4, 8] as const);
export type PngScale = (typeof PNG_SCALES)[number];

/** The reference cell's width / height: the bitmaps' own 8 x 16. */
const REFERENCE_ASPECT = PNG_CELL_WIDTH / PNG_CELL_HEIGHT;

/** The cellAspect parameter's range, which a png's cells keep to: 0.001 made cells 8000 px tall. */
const ASPECT = PARAM_BY_NAME.get('cellAspect') as NumberDef;

/** Pixel size of one cell at `scale` for a cell of `cellAspect`: 8 / scale px wide, as tall as the aspect makes it (at least 1 px). */
export function pngCell(scale: PngScale = 1, cellAspect = REFERENCE_ASPECT): { width: number; height: number } {
  if (!PNG_SCALES.includes(scale)) throw new RangeError(`png scale must be one of ${PNG_SCALES.join(', ')} (got ${scale})`);
  if (typeof cellAspect !== 'number') throw new TypeError(`png cellAspect must be a number (got ${describeType(cellAspect)})`);
  if (!(cellAspect >= ASPECT.min && cellAspect <= ASPECT.max)) throw new RangeError(`png cellAspect must be ${describeDomain(ASPECT)}, as the parameter (got ${cellAspect})`);
  const width = PNG_CELL_WIDTH / scale;
  return { width, height: cellAspect === REFERENCE_ASPECT ? PNG_CELL_HEIGHT / scale : Math.max(1, Math.round(width / cellAspect)) };
}

/** Pixel size of the png of a `columns` x `rows` grid at `scale`, for a cell of `cellAspect`. */
export function pngSize(columns: number, rows: number, scale: PngScale = 1, cellAspect = REFERENCE_ASPECT): { width: number; height: number } {
  if (!(Number.isSafeInteger(columns) && columns > 0 && Number.isSafeInteger(rows) && rows > 0)) {
    throw new RangeError(`pngSize: columns and rows must be positive integers (got ${columns} x ${rows})`);
  }
  const cell = pngCell(scale, cellAspect);
  return { width: columns * cell.width, height: rows * cell.height };
}
