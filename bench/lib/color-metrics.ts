/**
 * Colour side of the quality bench: colour art as an image, and its distance from the source.
 *
 * - A colour rendering is drawn as a terminal draws it: each cell's glyph mask m (the reference
 *   font's ink coverage, 0..1) blends the cell's foreground over its background. The blend is done
 *   in linear light (what the eye averages at any distance where the glyph's anti-aliasing is not
 *   resolved). A cell without a background shows the terminal's ground: black.
 * - Distances are taken per cell (the mean linear RGB of the cell's pixels, art and source alike):
 *   CIELAB ΔE*ab (1976, D65) and OKLab ΔE x 100, and the chroma error (OKLab C x 100): mean
 *   absolute and mean signed (art minus source: > 0 oversaturated).
 * - SSIM of the luminance (OKLab L, no tone fit: colour output is absolute) after the two blurs of
 *   the mono side, beside the score of an all-black (blank) grid.
 */
import { gaussianBlur, plane, ssim, type Plane } from './metrics.js';
import type { RgbaImage } from '../../src/core/types.js';

export const srgb8ToLinear = (v: number): number => {
  const c = v / 255;
  return c <= 0.04045 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
};
const LIN = Float32Array.from({ length: 256 }, (_, i) => srgb8ToLinear(i));

/** Linear-light RGB, one plane per channel. */
export interface RgbPlanes { readonly r: Plane; readonly g: Plane; readonly b: Plane }

export function linearPlanes(img: RgbaImage): RgbPlanes {
  const n = img.width * img.height;
  const r = new Float32Array(n), g = new Float32Array(n), b = new Float32Array(n);
  for (let i = 0; i < n; i++) {
    r[i] = LIN[img.data[i * 4]!]!;
    g[i] = LIN[img.data[i * 4 + 1]!]!;
    b[i] = LIN[img.data[i * 4 + 2]!]!;
  }
  return { r: plane(img.width, img.height, r), g: plane(img.width, img.height, g), b: plane(img.width, img.height, b) };
}

/** Per-cell colours of a colour rendering: fg (always) and bg (null: black ground), sRGB bytes. */
export interface CellColours {
  readonly columns: number;
  readonly rows: number;
  readonly fg: Uint8Array;
  readonly bg: Uint8Array | null;
}

/** Composites an ink mask (8-bit coverage, cell grid) with per-cell fg/bg into linear RGB planes. */
export function compositeColour(ink: { width: number; height: number; cellWidth: number; cellHeight: number; data: Uint8Array }, c: CellColours): RgbPlanes {
  const { width: W, height: H, cellWidth: cw, cellHeight: ch } = ink;
  const r = new Float32Array(W * H), g = new Float32Array(W * H), b = new Float32Array(W * H);
  for (let y = 0; y < H; y++) {
    const row = Math.min(c.rows - 1, (y / ch) | 0);
    for (let x = 0; x < W; x++) {
      const col = Math.min(c.columns - 1, (x / cw) | 0);
      const k = (row * c.columns + col) * 3;
      const m = ink.data[y * W + x]! / 255;
      const i = y * W + x;
      const fr = LIN[c.fg[k]!]!, fg = LIN[c.fg[k + 1]!]!, fb = LIN[c.fg[k + 2]!]!;
      const br = c.bg ? LIN[c.bg[k]!]! : 0, bgc = c.bg ? LIN[c.bg[k + 1]!]! : 0, bb = c.bg ? LIN[c.bg[k + 2]!]! : 0;
      r[i] = br + (fr - br) * m;
      g[i] = bgc + (fg - bgc) * m;
      b[i] = bb + (fb - bb) * m;
    }
  }
  return { r: plane(W, H, r), g: plane(W, H, g), b: plane(W, H, b) };
}

// --- colour spaces -------------------------------------------------------------------------

/** Linear sRGB -> OKLab (Ottosson 2020). */
export function oklab(r: number, g: number, b: number): [number, number, number] {
  const l = Math.cbrt(0.4122214708 * r + 0.5363325363 * g + 0.0514459929 * b);
  const m = Math.cbrt(0.2119034982 * r + 0.6806995451 * g + 0.1073969566 * b);
  const s = Math.cbrt(0.0883024619 * r + 0.2817188376 * g + 0.6299787005 * b);
  return [
    0.2104542553 * l + 0.793617785 * m - 0.0040720468 * s,
    1.9779984951 * l - 2.428592205 * m + 0.4505937099 * s,
    0.0259040371 * l + 0.7827717662 * m - 0.808675766 * s,
  ];
}

/** Linear sRGB -> CIELAB (D65). */
export function cielab(r: number, g: number, b: number): [number, number, number] {
  const X = (0.4124564 * r + 0.3575761 * g + 0.1804375 * b) / 0.95047;
  const Y = 0.2126729 * r + 0.7151522 * g + 0.072175 * b;
  const Z = (0.0193339 * r + 0.119192 * g + 0.9503041 * b) / 1.08883;
  const f = (t: number) => (t > 216 / 24389 ? Math.cbrt(t) : (24389 / 27 * t + 16) / 116);
  const fx = f(X), fy = f(Y), fz = f(Z);
  return [116 * fy - 16, 500 * (fx - fy), 200 * (fy - fz)];
}

/** Mean linear RGB per cell. */
function cellRgb(p: RgbPlanes, cw: number, ch: number, cols: number, rows: number): Float32Array {
  const out = new Float32Array(cols * rows * 3);
  const W = p.r.width;
  const inv = 1 / (cw * ch);
  for (let cy = 0; cy < rows; cy++) {
    for (let cx = 0; cx < cols; cx++) {
      let r = 0, g = 0, b = 0;
      for (let y = cy * ch; y < (cy + 1) * ch; y++) {
        for (let x = cx * cw, i = y * W + x; x < (cx + 1) * cw; x++, i++) {
          r += p.r.data[i]!; g += p.g.data[i]!; b += p.b.data[i]!;
        }
      }
      const k = (cy * cols + cx) * 3;
      out[k] = r * inv; out[k + 1] = g * inv; out[k + 2] = b * inv;
    }
  }
  return out;
}

export interface ColourScores {
  /** Mean per-cell CIELAB ΔE*ab (1976). Lower is better. */
  readonly deltaE: number;
  /** Mean per-cell OKLab ΔE x 100. */
  readonly deltaEok: number;
  /** Mean |C_art - C_src| per cell (OKLab chroma x 100). */
  readonly chromaAbs: number;
  /** Mean C_art - C_src (> 0: more saturated than the source). */
  readonly chromaSigned: number;
  /** SSIM of OKLab L at the fine and coarse blur (no tone fit). */
  readonly ssimFine: number;
  readonly ssimCoarse: number;
  /** Pearson r of blurred OKLab L, fine and coarse. */
  readonly corrFine: number;
  readonly corrCoarse: number;
}

/** OKLab L of blurred linear RGB planes. */
function blurredL(p: RgbPlanes, sigma: number): Plane {
  const r = gaussianBlur(p.r, sigma), g = gaussianBlur(p.g, sigma), b = gaussianBlur(p.b, sigma);
  const out = new Float32Array(r.data.length);
  for (let i = 0; i < out.length; i++) out[i] = oklab(r.data[i]!, g.data[i]!, b.data[i]!)[0];
  return plane(r.width, r.height, out);
}

export interface ColourReference {
  readonly planes: RgbPlanes;
  readonly cells: Float32Array;
  readonly fine: Plane;
  readonly coarse: Plane;
  readonly sigmas: readonly [number, number];
  readonly cellWidth: number;
  readonly cellHeight: number;
  readonly columns: number;
  readonly rows: number;
}

export function prepareColourReference(planes: RgbPlanes, cw: number, ch: number, cols: number, rows: number, sigmas: readonly [number, number]): ColourReference {
  return { planes, cells: cellRgb(planes, cw, ch, cols, rows), fine: blurredL(planes, sigmas[0]), coarse: blurredL(planes, sigmas[1]), sigmas, cellWidth: cw, cellHeight: ch, columns: cols, rows };
}

export function scoreColour(art: RgbPlanes, ref: ColourReference, pearson: (a: ArrayLike<number>, b: ArrayLike<number>) => number): ColourScores {
  const cells = cellRgb(art, ref.cellWidth, ref.cellHeight, ref.columns, ref.rows);
  const n = ref.columns * ref.rows;
  let dE = 0, dEok = 0, cAbs = 0, cSigned = 0;
  for (let i = 0; i < n; i++) {
    const a = cielab(cells[i * 3]!, cells[i * 3 + 1]!, cells[i * 3 + 2]!);
    const s = cielab(ref.cells[i * 3]!, ref.cells[i * 3 + 1]!, ref.cells[i * 3 + 2]!);
    dE += Math.hypot(a[0] - s[0], a[1] - s[1], a[2] - s[2]);
    const ao = oklab(cells[i * 3]!, cells[i * 3 + 1]!, cells[i * 3 + 2]!);
    const so = oklab(ref.cells[i * 3]!, ref.cells[i * 3 + 1]!, ref.cells[i * 3 + 2]!);
    dEok += 100 * Math.hypot(ao[0] - so[0], ao[1] - so[1], ao[2] - so[2]);
    const dc = 100 * (Math.hypot(ao[1], ao[2]) - Math.hypot(so[1], so[2]));
    cAbs += Math.abs(dc);
    cSigned += dc;
  }
  const fine = blurredL(art, ref.sigmas[0]), coarse = blurredL(art, ref.sigmas[1]);
  return {
    deltaE: dE / n, deltaEok: dEok / n, chromaAbs: cAbs / n, chromaSigned: cSigned / n,
    ssimFine: ssim(fine, ref.fine), ssimCoarse: ssim(coarse, ref.coarse),
    corrFine: pearson(fine.data, ref.fine.data), corrCoarse: pearson(coarse.data, ref.coarse.data),
  };
}

// --- ANSI ----------------------------------------------------------------------------------

/**
 * Parses SGR colour output (24-bit `38;2` / `48;2`, `7` inverse, `0`/`39`/`49` resets) into the
 * plain text grid and per-cell colours. Other escape sequences are dropped. Default colours: the
 * foreground white, the background the terminal's black ground.
 */
export function parseAnsi(raw: string, columns: number, rows: number): { lines: string[]; colours: CellColours; problem: string | null } {
  const fg = new Uint8Array(columns * rows * 3);
  const bg = new Uint8Array(columns * rows * 3);
  const lines: string[] = [];
  let cur = { fg: [255, 255, 255], bg: [0, 0, 0], inverse: false };
  const reset = () => { cur = { fg: [255, 255, 255], bg: [0, 0, 0], inverse: false }; };
  const text = raw.replace(/\r/g, '');
  let row = 0, col = 0, line = '';
  let problem: string | null = null;
  // eslint-disable-next-line no-control-regex
  const re = /\x1b\[([0-9;?]*)([@-~])|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]|\n|[^\x1b\n]/gu;
  for (const m of text.matchAll(re)) {
    const s = m[0];
    if (s === '\n') {
      if (row < rows) lines.push(line);
      line = '';
      row++;
      col = 0;
      continue;
    }
    if (s.startsWith('\x1b')) {
      if (m[2] !== 'm') continue;
      const ps = (m[1] ?? '').split(';').map((x) => (x === '' ? 0 : Number(x)));
      for (let i = 0; i < ps.length; i++) {
        const p = ps[i]!;
        if (p === 0) reset();
        else if (p === 7) cur.inverse = true;
        else if (p === 27) cur.inverse = false;
        else if (p === 39) cur.fg = [255, 255, 255];
        else if (p === 49) cur.bg = [0, 0, 0];
        else if ((p === 38 || p === 48) && ps[i + 1] === 2) {
          const c = [ps[i + 2]!, ps[i + 3]!, ps[i + 4]!];
          if (p === 38) cur.fg = c; else cur.bg = c;
          i += 4;
        } else if ((p === 38 || p === 48) && ps[i + 1] === 5) i += 2;
      }
      continue;
    }
    if (row < rows && col < columns) {
      const k = (row * columns + col) * 3;
      const f = cur.inverse ? cur.bg : cur.fg, b = cur.inverse ? cur.fg : cur.bg;
      fg.set(f, k);
      bg.set(b, k);
    }
    line += s;
    col++;
  }
  if (line) { if (row < rows) lines.push(line); row++; }
  if (lines.length !== rows) problem = `${lines.length} lines instead of ${rows}`;
  else if (lines.some((l) => [...l].length !== columns)) problem = `line widths differ from ${columns}`;
  return { lines, colours: { columns, rows, fg, bg }, problem };
}
