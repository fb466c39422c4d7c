/**
 * `png`: the art rasterised from the glyph bitmaps generated from the reference font
 * (glyphs/bitmaps.generated.ts), so the bytes are the same on every machine: no system font, no
 * text engine. One cell is 8 x 16 px (the grid's 1:2 reference cell); `scale` 2, 4 or 8 draws
 * smaller cells from the same bitmaps, area-averaged (previews with a bounded size). Another
 * `cellAspect` keeps the picture's proportions, as svg and html do: the cell stays 8 px wide and
 * its height is 8 / cellAspect px, the bitmaps resampled to it (a font of that shape).
 *
 * Colours follow the other documents: the ground is `groundFor(monoColor)` (html, svg), or the
 * cell's own background colour where the grid carries a background plane; the ink is the cell's
 * colour with `color=true`, else `monoColor`. Pixels blend ground to ink by the glyph's coverage in
 * sRGB, as browsers draw antialiased text.
 *
 * Encoding: mono art without a background plane is one ink on one ground, so a 16-colour palette
 * image at 4 bits a pixel; anything else 8-bit RGB. Every scanline is unfiltered (type None):
 * art repeats its glyphs' pixel patterns, which deflate finds as they are, while Sub's differences
 * tie each cell's bytes to its neighbour's colours (colour photos' pngs were 15-25 % larger and
 * took 10-25 % longer to deflate with Sub). Pixels are blended per cell from a 16-entry palette
 * (the bitmaps have 16 levels). Deflated by pako (a port of zlib) as it is produced: memory holds
 * one band of cells and the compressed output, never the whole raster (unless a caller passes its
 * own one-shot `deflate`, which then gets the whole raster: the Node faces' MCP preview). No
 * ancillary chunks (no time stamp), so equal grids give equal bytes.
 */
import { Deflate } from 'pako';
import { BITMAP_CELL, GLYPH_BITMAPS, glyphBitmap } from '../glyphs/bitmaps.js';
import type { CellGrid, RenderResult } from '../types.js';
import { groundFor, isHexColor, parseHexColor } from './color.js';
import type { DecodedCompact } from './compact.js';
import { checkGrid } from './grid.js';
import { checkObject, describeType } from '../args.js';
import { PARAM_BY_NAME, describeDomain } from '../params/definitions.js';
import { PNG_CELL_HEIGHT, PNG_CELL_WIDTH, pngCell, type PngScale } from './png-size.js';

export { PNG_CELL_WIDTH, PNG_CELL_HEIGHT, PNG_SCALES, pngCell, pngSize, type PngScale } from './png-size.js';

export interface PngOptions {
  /** Ink from the cells' colours (true) or `monoColor` (false). */
  readonly color: boolean;
  /** Mono ink (`#rrggbb` or `#rgb`), and what the ground is chosen from (`groundFor`). */
  readonly monoColor: string;
  /** Divides the cell: 2 draws 4 x 8 px cells. Default 1. */
  readonly scale?: PngScale;
  /** Width / height of the cell the grid was made for (its rows): the cell's height follows. Default 0.5 (8 x 16); the cellAspect parameter's range (0.25 to 1). */
  readonly cellAspect?: number;
  /**
   * A one-shot zlib-format deflate of the whole image's scanlines (told which kind they are),
   * instead of pako's streaming one (which holds one band at a time): a Node face passes
   * node:zlib's (src/node/deflate.ts; the MCP reply's mono preview at 960 x 720 px: 1.5 ms at its
   * level 4 against pako's 7.8 at 6), where it bounds the image's size itself. The pixels are the
   * same; the compressed bytes and IDAT chunks may differ.
   */
  readonly deflate?: (scanlines: Uint8Array, kind: PngKind) => Uint8Array;
}

/** What the scanlines a `deflate` gets hold: 4-bit palette indices (mono art) or 8-bit RGB. */
export type PngKind = 'palette' | 'rgb';

/** A grid that may carry a second colour per cell (rows x columns x 3 sRGB bytes). */
export type MaybeBackground = CellGrid & { readonly background?: Uint8Array };

let fullSize: Map<number, Uint8Array> | undefined;
/** Bitmaps by cell size ("w x h"), made on first use; few sizes in practice (a scale, an aspect). */
const scaled = new Map<string, Map<number, Uint8Array>>();
const MAX_SIZES = 32;
const LEVELS = BITMAP_CELL.levels;

/** Coverage level 0..15 per pixel of each glyph at scale 1. */
function fullBitmaps(): Map<number, Uint8Array> {
  if (fullSize) return fullSize;
  const map = new Map<number, Uint8Array>();
  for (const [cp] of GLYPH_BITMAPS) map.set(cp, glyphBitmap(cp)!);
  return (fullSize = map);
}

/**
 * The bitmaps for a `w` x `h` px cell: each pixel the mean level of the 8 x 16 bitmap over its
 * footprint, rounded. `w` divides 8; `h` is any height, each source row weighted by how much of
 * it the pixel's footprint covers (exact integer sums when `h` divides 16).
 */
function bitmapsAt(w: number, h: number): Map<number, Uint8Array> {
  const full = fullBitmaps();
  if (w === PNG_CELL_WIDTH && h === PNG_CELL_HEIGHT) return full;
  const key = `${w}x${h}`;
  let map = scaled.get(key);
  if (map) return map;
  const sx = PNG_CELL_WIDTH / w;
  // Row weights: footprint of output row y is [y * fy, (y + 1) * fy) in source rows.
  const fy = PNG_CELL_HEIGHT / h;
  const weights = new Float64Array(h * PNG_CELL_HEIGHT);
  for (let y = 0; y < h; y++) {
    for (let r = 0; r < PNG_CELL_HEIGHT; r++) {
      weights[y * PNG_CELL_HEIGHT + r] = Math.max(0, Math.min(r + 1, (y + 1) * fy) - Math.max(r, y * fy));
    }
  }
  const area = sx * fy;
  map = new Map();
  for (const [cp, src] of full) {
    const out = new Uint8Array(w * h);
    for (let y = 0; y < h; y++) {
      for (let x = 0; x < w; x++) {
        let sum = 0;
        for (let r = 0; r < PNG_CELL_HEIGHT; r++) {
          const wr = weights[y * PNG_CELL_HEIGHT + r]!;
          if (wr === 0) continue;
          let line = 0;
          for (let dx = 0, at = r * PNG_CELL_WIDTH + x * sx; dx < sx; dx++) line += src[at + dx]!;
          sum += wr * line;
        }
        out[y * w + x] = Math.round(sum / area);
      }
    }
    map.set(cp, out);
  }
  if (scaled.size >= MAX_SIZES) scaled.clear();
  scaled.set(key, map);
  return map;
}

/** Writes the LEVELS colours from ground (level 0) to ink (the last level) into `pal` (RGB triples) from `at`. */
function blend(pal: Uint8Array, at: number, gr: number, gg: number, gb: number, ir: number, ig: number, ib: number): void {
  const top = LEVELS - 1;
  for (let l = 0, p = at; l < LEVELS; l++) {
    const g = top - l;
    // Exact rounding of (ground * g + ink * l) / top: all terms are non-negative.
    pal[p++] = ((gr * g + ir * l) * 2 + top) / (2 * top);
    pal[p++] = ((gg * g + ig * l) * 2 + top) / (2 * top);
    pal[p++] = ((gb * g + ib * l) * 2 + top) / (2 * top);
  }
}

/**
 * Each bitmap packed two pixels a byte, the left one in the high nibble (the 4-bit palette
 * image's own rows), for cells an even number of pixels wide: a cell's row is then whole bytes.
 */
function packedTable(table: readonly Uint8Array[]): Uint8Array[] {
  const packed: Uint8Array[] = [];
  for (const bmp of table) {
    const out = new Uint8Array(bmp.length >> 1);
    for (let i = 0; i < out.length; i++) out[i] = (bmp[2 * i]! << 4) | bmp[2 * i + 1]!;
    packed.push(out);
  }
  return packed;
}

const CRC_TABLE = (() => {
  const t = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    t[n] = c >>> 0;
  }
  return t;
})();

/** CRC-32 (ISO 3309, as PNG chunks use) of the chunk type and data. */
function crc32(bytes: Uint8Array): number {
  let c = 0xffffffff;
  for (let i = 0; i < bytes.length; i++) c = CRC_TABLE[(c ^ bytes[i]!) & 0xff]! ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

/** One PNG chunk: length, type, data, CRC of type + data. */
function chunk(type: string, data: Uint8Array): Uint8Array {
  const out = new Uint8Array(12 + data.length);
  const view = new DataView(out.buffer);
  view.setUint32(0, data.length);
  for (let i = 0; i < 4; i++) out[4 + i] = type.charCodeAt(i);
  out.set(data, 8);
  view.setUint32(8 + data.length, crc32(out.subarray(4, 8 + data.length)));
  return out;
}

const SIGNATURE = Uint8Array.of(0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a);

/** The glyph bitmaps of the grid's glyph table, by glyph index. */
function glyphTable(glyphs: readonly string[], cw: number, ch: number): Uint8Array[] {
  const bitmaps = bitmapsAt(cw, ch);
  // A loop, not map() with a callback made for every call: see wasm/kernels.ts openNested().
  const table: Uint8Array[] = [];
  for (const g of glyphs) {
    const bmp = bitmaps.get(g.codePointAt(0)!);
    if (!bmp) throw new RangeError(`glyph ${JSON.stringify(g)} has no bitmap in the reference font data`);
    table.push(bmp);
  }
  return table;
}

const MONO = PARAM_BY_NAME.get('monoColor')!;

/**
 * A caller's png options, checked as render()'s are (a wrong type a TypeError, a bad value a
 * RangeError, each naming the option): a missing monoColor was a plain "not a hex colour:
 * undefined". Other members are ignored (a result's `params` will do as options). `scale` and
 * `cellAspect` are pngCell()'s.
 */
function checkPngOptions(opts: Readonly<Record<string, unknown>>): void {
  if (typeof opts.color !== 'boolean') throw new TypeError(`renderPng: options.color must be true or false (got ${describeType(opts.color)})`);
  const mono = opts.monoColor;
  if (typeof mono !== 'string') throw new TypeError(`renderPng: options.monoColor must be a string, ${describeDomain(MONO)} (got ${describeType(mono)})`);
  if (!isHexColor(mono)) throw new RangeError(`renderPng: options.monoColor must be ${describeDomain(MONO)}, #rrggbb or #rgb (got ${JSON.stringify(mono.slice(0, 40))})`);
  if (opts.deflate !== undefined && typeof opts.deflate !== 'function') throw new TypeError(`renderPng: options.deflate must be a function (got ${describeType(opts.deflate)})`);
}

/** Renders a cell grid (a render result, or one rebuilt from json-compact) as PNG bytes. */
export function renderPng(grid: CellGrid, opts: PngOptions): Uint8Array {
  checkObject(opts, 'renderPng: options');
  checkGrid(grid, opts.color === true);
  checkPngOptions(opts);
  const { columns, rows, cells } = grid;
  // Mono art's colours are computed on first read: read only where drawn.
  const colors = opts.color ? grid.colors : new Uint8Array(0);
  const { background, clear } = grid as MaybeBackground;
  if (background && background.length !== columns * rows * 3) {
    throw new RangeError(`grid has ${background.length} background bytes, expected ${columns * rows * 3}`);
  }
  const { width: cw, height: ch } = pngCell(opts.scale, opts.cellAspect);
  const width = columns * cw;
  const height = rows * ch;
  const table = glyphTable(grid.glyphs, cw, ch);
  const mono = parseHexColor(opts.monoColor);
  const ground = parseHexColor(groundFor(opts.monoColor));
  const useColor = opts.color;

  const idat: Uint8Array[] = [];
  // One flat ink on one flat ground: a 16-colour palette image at 4 bits a pixel (a sixth of RGB).
  const indexed = !useColor && !background;
  const pal = new Uint8Array(LEVELS * 3);
  if (indexed) blend(pal, 0, (ground >>> 16) & 255, (ground >>> 8) & 255, ground & 255, (mono >>> 16) & 255, (mono >>> 8) & 255, mono & 255);
  const stride = indexed ? 1 + Math.ceil(width / 2) : 1 + width * 3;
  // With a one-shot deflate the bands are the rows of the whole image; else each band is pushed
  // through pako as it is drawn. pako, not fflate: fflate 0.8.3's streaming deflate can emit
  // back-references before the start of the data (fflate issue #260; seen here on scale-8
  // previews), which every PNG decoder refuses.
  const whole = opts.deflate ? new Uint8Array(stride * ch * rows) : null;
  const zlib = whole ? null : new Deflate({ level: 6 });
  if (zlib) zlib.onData = (data) => { idat.push(chunk('IDAT', data)); };
  let band = whole ? whole.subarray(0, stride * ch) : new Uint8Array(stride * ch);
  // Cells of an even pixel width (scales 1, 2, 4) take whole bytes of a 4-bit row: copied from
  // packed bitmaps. Each cell's palette (RGB art) is blended once per row of cells, not per line.
  const packed = indexed && cw % 2 === 0 ? packedTable(table) : null;
  const rowGlyphs: Uint8Array[] = new Array<Uint8Array>(columns);
  const rowPal = indexed ? pal : new Uint8Array(columns * LEVELS * 3);
  for (let y = 0; y < rows; y++) {
    if (whole) band = whole.subarray(y * stride * ch, (y + 1) * stride * ch);
    const first = y * columns;
    for (let x = 0; x < columns; x++) rowGlyphs[x] = (packed ?? table)[cells[first + x]!]!;
    if (packed) drawPacked(band, stride, ch, cw >> 1, rowGlyphs);
    else if (indexed) drawNibbles(band, stride, ch, cw, rowGlyphs);
    else {
      for (let x = 0; x < columns; x++) {
        const o = (first + x) * 3;
        const ink = useColor ? (colors[o]! << 16) | (colors[o + 1]! << 8) | colors[o + 2]! : mono;
        const grd = background && !clear?.[first + x] ? (background[o]! << 16) | (background[o + 1]! << 8) | background[o + 2]! : ground;
        blend(rowPal, x * LEVELS * 3, (grd >>> 16) & 255, (grd >>> 8) & 255, grd & 255, (ink >>> 16) & 255, (ink >>> 8) & 255, ink & 255);
      }
      drawRgb(band, stride, ch, cw, rowGlyphs, rowPal);
    }
    zlib?.push(band, y === rows - 1);
  }
  if (whole) idat.push(chunk('IDAT', opts.deflate!(whole, indexed ? 'palette' : 'rgb')));

  const ihdr = new Uint8Array(13);
  const hv = new DataView(ihdr.buffer);
  hv.setUint32(0, width);
  hv.setUint32(4, height);
  ihdr[8] = indexed ? 4 : 8; // bit depth
  ihdr[9] = indexed ? 3 : 2; // colour type: palette, or RGB
  // compression 0 (deflate), filter 0 (adaptive set), interlace 0: the remaining bytes stay 0.
  const parts = [SIGNATURE, chunk('IHDR', ihdr), ...(indexed ? [chunk('PLTE', pal)] : []), ...idat, chunk('IEND', new Uint8Array(0))];
  let length = 0;
  for (const part of parts) length += part.length;
  const out = new Uint8Array(length);
  let at = 0;
  for (const part of parts) { out.set(part, at); at += part.length; }
  return out;
}

/** A row of cells into a 4-bit band from packed bitmaps (`half` bytes a cell's line); filter bytes stay 0 (None). */
function drawPacked(band: Uint8Array, stride: number, lines: number, half: number, glyphs: readonly Uint8Array[]): void {
  for (let py = 0; py < lines; py++) {
    let o = py * stride + 1;
    const from = py * half;
    for (let x = 0; x < glyphs.length; x++) {
      const p = glyphs[x]!;
      for (let k = from; k < from + half; k++) band[o++] = p[k]!;
    }
  }
}

/** A row of cells into a 4-bit band a pixel at a time (cells of an odd pixel width share bytes). */
function drawNibbles(band: Uint8Array, stride: number, lines: number, cw: number, glyphs: readonly Uint8Array[]): void {
  band.fill(0);
  for (let x = 0; x < glyphs.length; x++) {
    const bmp = glyphs[x]!;
    for (let py = 0; py < lines; py++) {
      const line = py * stride + 1;
      for (let px = 0, X = x * cw; px < cw; px++, X++) band[line + (X >> 1)]! |= bmp[py * cw + px]! << (X & 1 ? 0 : 4);
    }
  }
}

/**
 * A row of cells into an RGB band (filter bytes stay 0: None). Cell x's colours are
 * `pal[x * 48 ..]`, from ground (level 0) to ink.
 */
function drawRgb(band: Uint8Array, stride: number, lines: number, cw: number, glyphs: readonly Uint8Array[], pal: Uint8Array): void {
  for (let py = 0; py < lines; py++) {
    let o = py * stride + 1;
    const row = py * cw;
    for (let x = 0; x < glyphs.length; x++) {
      const bmp = glyphs[x]!;
      const base = x * LEVELS * 3;
      for (let px = row; px < row + cw; px++) {
        const q = base + bmp[px]! * 3;
        band[o++] = pal[q]!;
        band[o++] = pal[q + 1]!;
        band[o++] = pal[q + 2]!;
      }
    }
  }
}

/** `png`: the art at 8 x 16 px per cell (8 px wide and 8 / cellAspect px tall for another cell aspect). */
export function formatPng(result: RenderResult): Uint8Array {
  checkObject(result, 'formatPng: result');
  checkObject(result.params, 'formatPng: result.params (a render result)');
  return renderPng(result, { color: result.params.color, monoColor: result.params.monoColor, cellAspect: result.cellAspect });
}

/**
 * The cell grid of a decoded json-compact document: its rows' glyphs and its chroma as the cell
 * colours (and its background plane, when the decoder yields one as `background`), so that its png
 * (with the same color and monoColor) is the png of the render itself.
 */
export function compactGrid(decoded: Pick<DecodedCompact, 'columns' | 'rows' | 'lines' | 'rgb'> & { readonly background?: Uint8Array }): MaybeBackground {
  const { columns, rows, lines, rgb } = decoded;
  const index = new Map<string, number>();
  const glyphs: string[] = [];
  const cells = new Uint16Array(columns * rows);
  let i = 0;
  for (const line of lines) {
    for (const g of line) {
      let k = index.get(g);
      if (k === undefined) {
        k = glyphs.length;
        if (k > 0xffff) throw new RangeError('more distinct glyphs than a cell index holds');
        glyphs.push(g);
        index.set(g, k);
      }
      cells[i++] = k;
    }
  }
  return { columns, rows, glyphs, cells, colors: rgb, ...(decoded.background ? { background: decoded.background } : {}) };
}
