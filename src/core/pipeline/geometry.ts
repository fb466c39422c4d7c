import { CELL_ASPECT } from '../types.js';

/** Most rows a render may have: bounds memory for extreme aspect ratios (400 x 800 cells). */
export const MAX_ROWS = 800;

export class GeometryError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'GeometryError';
  }
}

/** Rows for `columns` cells across an image, keeping its aspect with the 1:2 reference cell. */
export function gridRows(width: number, height: number, columns: number): number {
  if (!(width > 0 && height > 0)) throw new GeometryError('the image has no pixels');
  const rows = Math.max(1, Math.round((columns * height * CELL_ASPECT) / width));
  if (rows > MAX_ROWS) {
    throw new GeometryError(`the image is too tall for ${columns} columns: it would need ${rows} rows (at most ${MAX_ROWS}); use fewer columns or crop it`);
  }
  return rows;
}
