import { V2aError } from '../errors.js';
import { PARAM_BY_NAME, type IntegerDef } from '../params/definitions.js';
import { CELL_ASPECT, type RgbaImage } from '../types.js';

/**
 * Source width per column the adapters decode at (server, CLI, studio): wider images are shrunk
 * on load to this. 4 is one source pixel per sub-sample (SUB_X), so the core's resample is a copy
 * along x. Measured against 8 on the bench:quality images: SSIM 0.932 vs 0.935 near, 0.974 vs 0.977
 * far, the same wins against chafa; and a 1 MP JPEG at 120 columns decodes and renders in 17 ms
 * instead of 27.
 */
export const DECODE_PIXELS_PER_COLUMN = 4;

/** Most rows a render may have: bounds memory for extreme aspect ratios (400 x 800 cells). */
export const MAX_ROWS = 800;

/** Fewest columns any render has: the `columns` parameter's minimum. */
export const MIN_COLUMNS = (PARAM_BY_NAME.get('columns') as IntegerDef).min;

/** Most columns any render has: the `columns` parameter's maximum. */
export const MAX_COLUMNS = (PARAM_BY_NAME.get('columns') as IntegerDef).max;

/** The most cells a render's grid has: the most columns by MAX_ROWS. */
export const MAX_GRID_CELLS = MAX_COLUMNS * MAX_ROWS;

/** A grid the image cannot have: `image-too-tall`, naming `columns`. */
export class GeometryError extends V2aError {
  override name = 'GeometryError';
  constructor(detail: string) {
    super('image-too-tall', detail, { errors: [{ parameter: 'columns', message: detail }] });
  }
}

/** The size an image's grid follows: the source it was decoded from where known (RgbaImage). */
export function sourceSize(image: Omit<RgbaImage, 'data'>): { width: number; height: number } {
  return { width: image.sourceWidth ?? image.width, height: image.sourceHeight ?? image.height };
}

function rowsOf(width: number, height: number, columns: number, cellAspect: number): number {
  return Math.max(1, Math.round((columns * height * cellAspect) / width));
}

/**
 * Rows for `columns` cells across an image, keeping its aspect with cells of `cellAspect` width /
 * height (default: the 1:2 reference cell).
 */
export function gridRows(width: number, height: number, columns: number, cellAspect = CELL_ASPECT): number {
  if (!(width > 0 && height > 0)) throw new V2aError('undecodable-image', 'The image has no pixels (zero width or height).');
  const rows = rowsOf(width, height, columns, cellAspect);
  if (rows > MAX_ROWS) {
    // Fewer columns help only down to the minimum; below it no parameter can, only a crop.
    const fewest = rowsOf(width, height, MIN_COLUMNS, cellAspect);
    const fit = fitColumns(width, height, columns, undefined, cellAspect);
    throw new GeometryError(fewest > MAX_ROWS
      ? `The image is too tall to render: even at ${MIN_COLUMNS} columns, the fewest, it would need ${fewest} rows (at most ${MAX_ROWS}); crop it.`
      : `The image is too tall for ${columns} columns: it would need ${rows} rows (at most ${MAX_ROWS}); use ${fit === MIN_COLUMNS ? `${fit} columns, the fewest,` : `${fit} columns or fewer,`} or crop it.`);
  }
  return rows;
}

/**
 * The column count up to `columns` for a grid of at most `rows` rows (and MAX_ROWS), for a column
 * count the caller did not choose (a terminal's size): an image taller than the box is narrowed to
 * fit it, never below MIN_COLUMNS. With `rows` (a box), the count that keeps the image's aspect at
 * that many rows, rounded as the rows are; without, the widest within MAX_ROWS (the most a
 * "too tall" refusal can offer).
 */
export function fitColumns(width: number, height: number, columns: number, rows?: number, cellAspect = CELL_ASPECT): number {
  if (!(width > 0 && height > 0)) return columns;
  const limit = Math.min(rows ?? MAX_ROWS, MAX_ROWS);
  // rows = round(c * h * cellAspect / w). In a box, the widest count that merely rounds to `limit`
  // rows stretched a 1-row grid by up to half (--size 100x1 on a 7:1 image drew 21 columns for
  // 14). Either way, where a column is more than a row's worth of image, step down.
  let c = Math.min(columns, rows === undefined
    ? Math.floor(((limit + 0.5) * width) / (height * cellAspect))
    : Math.round((limit * width) / (height * cellAspect)));
  while (c > MIN_COLUMNS && rowsOf(width, height, c, cellAspect) > limit) c--;
  return Math.max(MIN_COLUMNS, c);
}
