/**
 * The png format's deflate on Node (core/format/png.ts `deflate`): node:zlib's, in C. For callers
 * that bound the image's size themselves (it deflates the whole image at once): the MCP reply's
 * preview, at most 1600 px on a side.
 *
 * Level 4, not the format's own 6: on a 120-column preview (960 x 720 px) it takes half the time
 * for mono art (1.5 against 3.2 ms, 6 % more bytes) and 70 % for colour (7.0 against 10.3 ms, 2 %
 * more); level 3 and below drop lazy matching and grow mono previews by 20 %.
 */
import { deflateSync } from 'node:zlib';

export const zlibDeflate = (scanlines: Uint8Array): Uint8Array => deflateSync(scanlines, { level: 4 });
