import { describeType } from '../args.js';
import { FORMATS, type Format } from '../params/definitions.js';

/** One output format's media type, file extension and human label (interface.md §2.3). */
export interface FormatInfo {
  /** Media type without parameters, exactly as in interface.md §2.3. */
  readonly contentType: string;
  /** File extension without the dot (`Content-Disposition: inline; filename="ascii.<ext>"`). */
  readonly extension: string;
  readonly label: string;
  /** Bytes, not text: no `charset` in the Content-Type (png). */
  readonly binary?: true;
  /**
   * Carries the cells' colours in mono art too (json's report: colourfulness and round-trip
   * metric; json-compact's chroma): a render for it resamples them at once (render.ts colorsWhen()).
   */
  readonly colors?: true;
  /** One whole document (a root element, a file signature): two in one stream make no valid file. */
  readonly document?: true;
}

/** The format table of interface.md §2.3, defined once. */
export const FORMAT_INFO: Readonly<Record<Format, FormatInfo>> = Object.freeze({
  text: { contentType: 'text/plain', extension: 'txt', label: 'plain text' },
  ansi: { contentType: 'text/plain', extension: 'ans', label: 'ANSI, truecolor' },
  html: { contentType: 'text/html', extension: 'html', label: 'HTML', document: true },
  json: { contentType: 'application/json', extension: 'json', label: 'JSON', colors: true },
  'json-compact': { contentType: 'application/json', extension: 'json', label: 'compact JSON plus chroma', colors: true },
  svg: { contentType: 'image/svg+xml', extension: 'svg', label: 'SVG', document: true },
  // Extension beyond the contract: the art rasterised from the reference font's glyph bitmaps.
  png: { contentType: 'image/png', extension: 'png', label: 'PNG image (extension)', binary: true, document: true },
});

/** FORMAT_INFO of a format a library caller names: one it does not know is a TypeError listing them. */
function infoOf(format: Format, who: string): FormatInfo {
  if (typeof format !== 'string' || !Object.hasOwn(FORMAT_INFO, format)) throw new TypeError(`${who}: format must be one of ${FORMATS.join(', ')} (got ${typeof format === 'string' ? JSON.stringify(format.slice(0, 40)) : describeType(format)})`);
  return FORMAT_INFO[format];
}

/**
 * The end of a file name for `format`: `.txt`, `.png`, ...; json-compact `.compact.json`, which
 * tells it from json (the studio's downloads; the CLI reads it back from `-o` as json-compact).
 */
export function fileSuffix(format: Format): string {
  return `${format === 'json-compact' ? '.compact' : ''}.${infoOf(format, 'fileSuffix').extension}`;
}

/** Chroma encoding identifier of `json-compact` (interface.md §9). */
export const CHROMA_ENCODING = 'rgb24-b64-v1';

/**
 * Encoding identifier of json-compact's `background` plane (extension: two colours per cell):
 * the same layout as `rgb24-b64-v1`, the cells' background colours.
 */
export const BACKGROUND_ENCODING = 'rgb24-bg-b64-v1';

/** Version of the `json-compact` envelope (`"v": 1`). */
export const COMPACT_VERSION = 1;

/**
 * The `Content-Type` header of a reply in `format`. Every text output is UTF-8 (`blocks` and
 * `dots` are not ASCII), so every one carries `charset=utf-8`; for `application/json` the
 * parameter is redundant (RFC 8259 §11) but harmless, and keeps the rule uniform. Binary
 * formats (png) carry none.
 */
export function contentTypeHeader(format: Format): string {
  const info = infoOf(format, 'contentTypeHeader');
  return info.binary ? info.contentType : `${info.contentType}; charset=utf-8`;
}
