import type { CellGrid } from '../types.js';
import { checkGrid, gridLines } from './grid.js';

/** `text`: the rows joined by `\n`, with a trailing newline; every row exactly `columns` cells. */
export function formatText(grid: CellGrid): string {
  checkGrid(grid, false);
  return gridLines(grid).join('\n') + '\n';
}
