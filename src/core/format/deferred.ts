/**
 * Formatting as the render job does it: the text formats synchronously, png through a dynamic
 * import. A process that never writes png (a CLI run to the terminal) never loads pako (the glyph
 * bitmaps load with the renderer: its fine stage reads them). Kept out of index.ts, so that bundles of the library (the studio) do not meet
 * a dynamic import of a module they already hold.
 */
import type { Format } from '../params/definitions.js';
import type { RenderResult } from '../types.js';
import { formatTextResult, formatted, type FormattedOutput } from './output.js';

/** Formats a render result in `format` (default: `result.params.format`); png loads its encoder on first use. */
export async function formatOutput(result: RenderResult, format: Format = result.params.format): Promise<FormattedOutput> {
  if (format !== 'png') return formatTextResult(result, format);
  const { formatPng } = await import('./png.js');
  return formatted(format, formatPng(result));
}
