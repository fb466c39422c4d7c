/**
 * Colour quantisation for terminals with fewer than 24 bits of colour: the xterm 256-colour
 * palette (its 6x6x6 cube and 24 greys, indices 16-255, which terminals do not let themes
 * redefine) and the 16 ANSI colours (xterm's default values). Each cell takes the palette colour
 * nearest in OKLab (Ottosson 2020), a perceptual space where Euclidean distance follows seen
 * difference far better than in sRGB; optionally with Floyd-Steinberg error diffusion in OKLab.
 *
 * One call quantises one plane (rows x columns x 3 sRGB bytes): the foreground, and the
 * background plane when a grid has one, are two calls. Pure TypeScript over typed arrays.
 */
import type { ColorDepth } from '../params/definitions.js';

export interface Palette {
  /** SGR code of each entry, foreground: `38;5;n` or `30`..`37`, `90`..`97`. */
  readonly fg: readonly string[];
  /** SGR code of each entry, background: `48;5;n` or `40`..`47`, `100`..`107`. */
  readonly bg: readonly string[];
  /** Entry colours, packed 0xRRGGBB. */
  readonly rgb: Int32Array;
  /** Entry colours in OKLab, 3 per entry. */
  readonly lab: Float32Array;
  /** Weight of the chroma (a, b) difference for a neutral colour: see nearest(). */
  readonly neutralChroma: number;
}

/** sRGB byte -> linear light. */
const LINEAR = Float32Array.from({ length: 256 }, (_, i) => {
  const c = i / 255;
  return c <= 0.04045 ? c / 12.92 : Math.pow((c + 0.055) / 1.055, 2.4);
});

/** OKLab of linear RGB, written into out[o..o+2]. */
function linearToOklab(r: number, g: number, b: number, out: Float32Array, o: number): void {
  const l = Math.cbrt(0.4122214708 * r + 0.5363325363 * g + 0.0514459929 * b);
  const m = Math.cbrt(0.2119034982 * r + 0.6806995451 * g + 0.1073969566 * b);
  const s = Math.cbrt(0.0883024619 * r + 0.2817188376 * g + 0.6299787005 * b);
  out[o] = 0.2104542553 * l + 0.793617785 * m - 0.0040720468 * s;
  out[o + 1] = 1.9779984951 * l - 2.428592205 * m + 0.4505937099 * s;
  out[o + 2] = 0.0259040371 * l + 0.7827717662 * m - 0.808675766 * s;
}

function build(colors: readonly number[], fg: readonly string[], bg: readonly string[], neutralChroma = 1): Palette {
  const rgb = Int32Array.from(colors);
  const lab = new Float32Array(colors.length * 3);
  colors.forEach((c, i) => linearToOklab(LINEAR[(c >>> 16) & 255]!, LINEAR[(c >>> 8) & 255]!, LINEAR[c & 255]!, lab, i * 3));
  return { fg, bg, rgb, lab, neutralChroma };
}

/** xterm's cube levels. */
const CUBE = [0, 95, 135, 175, 215, 255];

function xterm256(): Palette {
  const colors: number[] = [];
  const fg: string[] = [];
  const bg: string[] = [];
  for (let i = 16; i < 256; i++) {
    let r: number, g: number, b: number;
    if (i < 232) {
      const k = i - 16;
      r = CUBE[Math.floor(k / 36)]!;
      g = CUBE[Math.floor(k / 6) % 6]!;
      b = CUBE[k % 6]!;
    } else {
      r = g = b = 8 + 10 * (i - 232);
    }
    colors.push((r << 16) | (g << 8) | b);
    fg.push(`38;5;${i}`);
    bg.push(`48;5;${i}`);
  }
  return build(colors, fg, bg);
}

/** The 16 ANSI colours as xterm draws them by default: 0-7 normal (SGR 30-37), 8-15 bright (90-97). */
const ANSI16 = [
  0x000000, 0xcd0000, 0x00cd00, 0xcdcd00, 0x0000ee, 0xcd00cd, 0x00cdcd, 0xe5e5e5,
  0x7f7f7f, 0xff0000, 0x00ff00, 0xffff00, 0x5c5cff, 0xff00ff, 0x00ffff, 0xffffff,
];

function ansi16(): Palette {
  return build(
    ANSI16,
    ANSI16.map((_, i) => String(i < 8 ? 30 + i : 90 + i - 8)),
    ANSI16.map((_, i) => String(i < 8 ? 40 + i : 100 + i - 8)),
    3,
  );
}

const palettes = new Map<ColorDepth, Palette>();

/** The palette of a colour depth (truecolor has none). */
export function paletteOf(depth: Exclude<ColorDepth, 'truecolor'>): Palette {
  let p = palettes.get(depth);
  if (!p) palettes.set(depth, (p = depth === '256' ? xterm256() : ansi16()));
  return p;
}

/** Chroma below which a colour counts as (partly) neutral in nearest(). */
const NEUTRAL_CHROMA = 0.06;

/**
 * The entry nearest in OKLab; for a neutral or nearly neutral colour (chroma under
 * NEUTRAL_CHROMA) the chroma difference weighs up to `neutralChroma` times, fading to once at
 * that chroma. In plain OKLab the 16 colours' nearest to mid-grey (165-185) was cyan (36: it is
 * lighter than 90 and darker than 37 by more than its hue is off), so a grey photo came out
 * half cyan; the 256 palette has greys enough and weighs 1.
 */
function nearest(p: Palette, L: number, a: number, b: number): number {
  const lab = p.lab;
  const w = p.neutralChroma === 1 ? 1 : 1 + (p.neutralChroma - 1) * Math.max(0, 1 - Math.hypot(a, b) / NEUTRAL_CHROMA);
  let best = 0;
  let bestD = Infinity;
  for (let k = 0, o = 0; o < lab.length; k++, o += 3) {
    const dL = L - lab[o]!, da = a - lab[o + 1]!, db = b - lab[o + 2]!;
    const d = dL * dL + w * (da * da + db * db);
    if (d < bestD) {
      bestD = d;
      best = k;
    }
  }
  return best;
}

/** The palette entry nearest in OKLab to a packed 0xRRGGBB colour. */
export function nearestEntry(p: Palette, rgb: number): number {
  const lab = new Float32Array(3);
  linearToOklab(LINEAR[(rgb >>> 16) & 255]!, LINEAR[(rgb >>> 8) & 255]!, LINEAR[rgb & 255]!, lab, 0);
  return nearest(p, lab[0]!, lab[1]!, lab[2]!);
}

function addError(lab: Float32Array, q: number, eL: number, ea: number, eb: number, w: number): void {
  lab[q] = lab[q]! + eL * w;
  lab[q + 1] = lab[q + 1]! + ea * w;
  lab[q + 2] = lab[q + 2]! + eb * w;
}

/**
 * Palette entry per cell of one plane (rows x columns x 3 sRGB bytes, row-major). Without
 * dithering each cell independently takes its nearest entry (identical colours, identical
 * entries, memoised). With `dither`: serpentine Floyd-Steinberg in OKLab, the error of each cell
 * carried to its unvisited neighbours.
 */
export function quantizePlane(plane: Uint8Array, columns: number, rows: number, palette: Palette, dither: boolean): Uint16Array {
  const n = columns * rows;
  if (plane.length !== n * 3) throw new RangeError(`colour plane has ${plane.length} bytes, expected ${n * 3}`);
  const out = new Uint16Array(n);
  const lab = new Float32Array(n * 3);
  for (let i = 0, o = 0; i < n; i++, o += 3) linearToOklab(LINEAR[plane[o]!]!, LINEAR[plane[o + 1]!]!, LINEAR[plane[o + 2]!]!, lab, o);
  const pl = palette.lab;
  if (!dither) {
    const memo = new Map<number, number>();
    for (let i = 0, o = 0; i < n; i++, o += 3) {
      const key = (plane[o]! << 16) | (plane[o + 1]! << 8) | plane[o + 2]!;
      let k = memo.get(key);
      if (k === undefined) memo.set(key, (k = nearest(palette, lab[o]!, lab[o + 1]!, lab[o + 2]!)));
      out[i] = k;
    }
    return out;
  }
  for (let y = 0; y < rows; y++) {
    const ltr = (y & 1) === 0;
    for (let step = 0; step < columns; step++) {
      const x = ltr ? step : columns - 1 - step;
      const i = y * columns + x;
      const o = i * 3;
      const k = nearest(palette, lab[o]!, lab[o + 1]!, lab[o + 2]!);
      out[i] = k;
      const eL = lab[o]! - pl[k * 3]!, ea = lab[o + 1]! - pl[k * 3 + 1]!, eb = lab[o + 2]! - pl[k * 3 + 2]!;
      // Error to the unvisited neighbours: ahead 7/16, behind-below 3/16, below 5/16, ahead-below 1/16.
      const dx = ltr ? 1 : -1;
      const ahead = x + dx >= 0 && x + dx < columns;
      const behind = x - dx >= 0 && x - dx < columns;
      if (ahead) addError(lab, o + dx * 3, eL, ea, eb, 7 / 16);
      if (y + 1 < rows) {
        const below = o + columns * 3;
        if (behind) addError(lab, below - dx * 3, eL, ea, eb, 3 / 16);
        addError(lab, below, eL, ea, eb, 5 / 16);
        if (ahead) addError(lab, below + dx * 3, eL, ea, eb, 1 / 16);
      }
    }
  }
  return out;
}
