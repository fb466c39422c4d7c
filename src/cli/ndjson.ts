/**
 * The frames `render --animate` and `play` write when they do not play on a terminal: NDJSON, one
 * json-compact object a line, each with its frame's display time added (FRAME_DELAY), so that a
 * reader can play them at their pace. json-compact's decoder (core/format/compact.ts) takes the
 * member as an extension, as it does `background`.
 */

/** The member that carries a frame's display time in milliseconds (0 for a still image). */
export const FRAME_DELAY = 'delayMs';

/** The shape, for the help of every command that writes or reads it. */
export const NDJSON_FRAMES = `NDJSON: one json-compact object per frame, one a line, with the frame's display time in milliseconds as "${FRAME_DELAY}"`;

/** Output file extensions NDJSON frames may be written under (none at all too): others are refused. */
export const NDJSON_EXTENSIONS: readonly string[] = ['ndjson', 'jsonl', 'json'];

/** One line of NDJSON: the frame's json-compact object (`{...}`) with its delay as the last member. */
export function frameLine(compact: string, delayMs: number): string {
  const end = compact.lastIndexOf('}');
  return `${compact.slice(0, end)},${JSON.stringify(FRAME_DELAY)}:${delayMs}}\n`;
}
