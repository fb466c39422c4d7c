/**
 * The text formats and the formatted output's shape, without the png encoder: the part of
 * formatting every face shares. index.ts adds png for the library's synchronous `formatResult`;
 * deferred.ts adds it on demand for the render job.
 */
import type { Format } from '../params/definitions.js';
import type { RenderResult } from '../types.js';
import { ansiBytes, formatAnsi } from './ansi.js';
import { utf8 } from './bytes.js';
import { formatCompact } from './compact.js';
import { formatHtml, htmlBytes } from './html.js';
import { FORMAT_INFO, contentTypeHeader } from './info.js';
import { formatJson } from './json.js';
import { formatSvg, svgBytes } from './svg.js';
import { formatText } from './text.js';

export interface FormattedOutput {
  /** Text for every format but png, whose body is the PNG bytes. */
  readonly body: string | Uint8Array;
  /** Full `Content-Type` header value, with `charset=utf-8` for the text formats. */
  readonly contentType: string;
  /** File extension without the dot. */
  readonly extension: string;
}

/** The formats whose body is text (every one but png). */
export type TextFormat = Exclude<Format, 'png'>;

/** A formatted output known to be text. */
export interface TextOutput extends FormattedOutput {
  readonly body: string;
}

/** A formatted output as bytes (formatBytes): a text format's UTF-8, or png. */
export interface ByteOutput extends FormattedOutput {
  readonly body: Uint8Array;
}

/** A formatted output known to be the PNG bytes. */
export interface PngOutput extends ByteOutput {
  readonly body: Uint8Array;
}

export const TEXT_FORMATTERS: Readonly<Record<TextFormat, (result: RenderResult) => string>> = {
  text: formatText,
  ansi: formatAnsi,
  html: formatHtml,
  json: formatJson,
  'json-compact': formatCompact,
  svg: formatSvg,
};

/** The formats written as bytes in the first place (bytes.ts; their text is those bytes decoded). */
const BYTE_WRITERS: Partial<Readonly<Record<TextFormat, (result: RenderResult) => Uint8Array>>> = { svg: svgBytes, html: htmlBytes, ansi: ansiBytes };

/** A text format's body as UTF-8: written as bytes where the format is, else its text encoded. */
export function formatTextBytes(result: RenderResult, format: TextFormat): Uint8Array {
  const write = BYTE_WRITERS[format];
  return write ? write(result) : utf8(TEXT_FORMATTERS[format](result));
}

/** A body with the headers of `format`. */
export function formatted<B extends string | Uint8Array>(format: Format, body: B): FormattedOutput & { readonly body: B } {
  return { body, contentType: contentTypeHeader(format), extension: FORMAT_INFO[format].extension };
}

/** Formats a render result in a text format. */
export function formatTextResult(result: RenderResult, format: TextFormat): TextOutput {
  const formatter = TEXT_FORMATTERS[format];
  if (!formatter) throw new RangeError(`unknown format ${JSON.stringify(format)}`);
  return formatted(format, formatter(result));
}

/** The body of a text output; a TypeError for a binary one (png), which has no text. */
export function bodyText(output: FormattedOutput): string {
  if (typeof output.body !== 'string') throw new TypeError(`${output.extension} output is binary, not text`);
  return output.body;
}
