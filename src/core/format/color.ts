/** Colour helpers shared by the formats: hex parsing and printing, and the ground colour rule. */
import { describeType } from '../args.js';

/** `HEX_BYTE[b]` = two lower-case hex digits of byte b. */
export const HEX_BYTE: readonly string[] = Object.freeze(Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0')));

/** `#rrggbb` (lower case) of a packed 0xRRGGBB colour. */
export function hexOfPacked(rgb: number): string {
  if (!Number.isInteger(rgb) || rgb < 0 || rgb > 0xffffff) throw new RangeError(`hexOfPacked: a packed colour is an integer from 0 to 0xffffff (got ${typeof rgb === 'number' ? rgb : describeType(rgb)})`);
  return '#' + HEX_BYTE[(rgb >>> 16) & 255]! + HEX_BYTE[(rgb >>> 8) & 255]! + HEX_BYTE[rgb & 255]!;
}

/** The packed 0xRRGGBB colour of cell i of a row-major RGB byte array. */
export function packedAt(rgb: Uint8Array, i: number): number {
  const o = i * 3;
  return (rgb[o]! << 16) | (rgb[o + 1]! << 8) | rgb[o + 2]!;
}

const HEX_COLOR = /^#(?:([0-9a-f]{6})|([0-9a-f]{3}))$/i;

/** Whether `s` is `#rrggbb` or `#rgb`: what parseHexColor() reads. */
export function isHexColor(s: string): boolean {
  return HEX_COLOR.test(s);
}

/** Parses `#rrggbb` or `#rgb` into a packed 0xRRGGBB number; throws on anything else. */
export function parseHexColor(s: string): number {
  const m = typeof s === 'string' ? HEX_COLOR.exec(s) : null;
  if (!m) throw new TypeError(`not a hex colour (#rgb or #rrggbb): ${typeof s === 'string' ? JSON.stringify(s.slice(0, 40)) : describeType(s)}`);
  if (m[1]) return parseInt(m[1], 16);
  const [r, g, b] = m[2]!.split('').map((d) => parseInt(d + d, 16)) as [number, number, number];
  return (r << 16) | (g << 8) | b;
}

function linear(c8: number): number {
  const c = c8 / 255;
  return c <= 0.04045 ? c / 12.92 : Math.pow((c + 0.055) / 1.055, 2.4);
}

/** WCAG 2 relative luminance (Rec. 709 primaries, linear light) of a packed sRGB colour, 0..1. */
export function relativeLuminance(rgb: number): number {
  return 0.2126 * linear((rgb >>> 16) & 255) + 0.7152 * linear((rgb >>> 8) & 255) + 0.0722 * linear(rgb & 255);
}

/** Dark ground (used under light ink). */
export const DARK_GROUND = '#0b0b0b';
/** Light ground (used under dark ink). */
export const LIGHT_GROUND = '#fafafa';

/**
 * Ground (background) colour of the html and svg documents, chosen from the ink `monoColor`
 * (also with `color=true`: the cell colours are the image's own, and `invert` plus a dark
 * `monoColor` is how one asks for dark-on-light art):
 * a dark ground (#0b0b0b) when the ink is light, i.e. its WCAG relative luminance is above 0.5,
 * else a light ground (#fafafa). The default ink #e5e5e5 (luminance 0.78) gets the dark ground,
 * like a terminal; an ink such as #222222 gets the light one, like paper.
 */
export function groundFor(monoColor: string): string {
  return relativeLuminance(parseHexColor(monoColor)) > 0.5 ? DARK_GROUND : LIGHT_GROUND;
}
