import type { CodebookReport } from '../core/index.js';
import { num } from './format-number.js';

/**
 * What the codebook card says of its size. The whole set is used where it was asked for (fixed),
 * where even it leaves more tone error than the bound, and where the art needs every glyph (dots,
 * two colours per cell, a video's kept codebook: the report names the strategy asked for, so the
 * size tells); else the codebook is the fewest glyphs within the bound. No DOM: tested in Node.
 */
export function codebookNote(c: CodebookReport): string {
  const error = num(c.rmse, 4), bound = num(c.maxRmse);
  if (c.size < c.rampSize) return `The fewest characters whose tone error (${error}) stays within ${bound}.`;
  if (c.strategy === 'fixed') return `The whole set, as asked (fixed): its tone error is ${error}.`;
  if (c.rmse > c.maxRmse) return `Even every character leaves a tone error of ${error}, over the bound of ${bound}: the whole set is used.`;
  return `Every character of the set, for this style: its tone error is ${error}.`;
}
