/**
 * The png format's deflate on Node (core/format/png.ts `deflate`): node:zlib's, in C, at the
 * level the format's own pako deflate uses. For callers that bound the image's size themselves
 * (it deflates the whole image at once): the MCP reply's preview, at most 1600 px on a side.
 */
import { deflateSync } from 'node:zlib';

export const zlibDeflate = (scanlines: Uint8Array): Uint8Array => deflateSync(scanlines, { level: 6 });
