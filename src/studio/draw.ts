/**
 * Paints a cell grid into a canvas, in the worker: each glyph is rasterised once per cell size
 * (an alpha mask, in the font stack the html and svg outputs name), then each frame's cells are
 * blended pixel by pixel into one ImageData kept between frames (only the cells that changed; see
 * paint): no text layout per frame, under a millisecond for a stream at 200 columns.
 * Cells are 1:2 (the renderer's reference cell), so the art keeps the image's aspect.
 */
import { FONT_STACK, SVG_BASELINE, SVG_CELL_HEIGHT, SVG_CELL_WIDTH, SVG_FONT_SIZE, groundFor, parseHexColor } from '../core/index.js';

export interface PaintGrid {
  readonly columns: number;
  readonly rows: number;
  /** Glyph per cell, as indices into `glyphs`. */
  readonly glyphs: readonly string[];
  readonly cells: Uint16Array;
  /** rows * columns * 3 bytes of sRGB. */
  readonly colors: Uint8Array;
  /** Two colours per cell (cellColors fg-bg): each cell's ground, as the html, svg and png downloads paint it. */
  readonly background?: Uint8Array;
  /** With `background`: 1 where the cell is clear (the source transparent there): it shows the page's ground. */
  readonly clear?: Uint8Array;
}

const FONT = FONT_STACK.map((f) => (f === 'monospace' ? f : `"${f}"`)).join(', ');

/** Little-endian RGBA packed as one Uint32 (ImageData byte order). */
function pack(rgb: number): number {
  return ((255 << 24) | ((rgb & 255) << 16) | (rgb & 0xff00) | ((rgb >>> 16) & 255)) >>> 0;
}

/** Quadrants of U+2596..U+259F as bits: 1 upper left, 2 upper right, 4 lower left, 8 lower right. */
const QUADRANTS = [4, 8, 1, 13, 9, 7, 11, 2, 6, 14];

/**
 * Block elements (U+2580..U+259F) drawn as the geometry they name, edge to edge: a font's block
 * glyphs stop short of a 1:2 cell (their ascent plus descent is less than the line), which
 * showed as dark lines between the rows of `blocks` art. Shades are flat alpha at their coverage.
 */
function blockMask(glyph: string, w: number, h: number): Uint8Array | null {
  const cp = glyph.codePointAt(0) ?? 0;
  if (glyph.length !== 1 || cp < 0x2580 || cp > 0x259f) return null;
  const m = new Uint8Array(w * h);
  const rect = (x0: number, y0: number, x1: number, y1: number, a = 255) => {
    for (let y = Math.round(y0); y < Math.round(y1); y++) for (let x = Math.round(x0); x < Math.round(x1); x++) m[y * w + x] = a;
  };
  if (cp === 0x2580) rect(0, 0, w, h / 2);
  else if (cp >= 0x2581 && cp <= 0x2588) rect(0, h - (h * (cp - 0x2580)) / 8, w, h);
  else if (cp >= 0x2589 && cp <= 0x258f) rect(0, 0, (w * (0x2590 - cp)) / 8, h);
  else if (cp === 0x2590) rect(w / 2, 0, w, h);
  else if (cp >= 0x2591 && cp <= 0x2593) rect(0, 0, w, h, Math.round((255 * (cp - 0x2590)) / 4));
  else if (cp === 0x2594) rect(0, 0, w, h / 8);
  else if (cp === 0x2595) rect((w * 7) / 8, 0, w, h);
  else {
    const q = QUADRANTS[cp - 0x2596]!;
    if (q & 1) rect(0, 0, w / 2, h / 2);
    if (q & 2) rect(w / 2, 0, w, h / 2);
    if (q & 4) rect(0, h / 2, w / 2, h);
    if (q & 8) rect(w / 2, h / 2, w, h);
  }
  return m;
}

export class ArtPainter {
  private cellW = 6;
  private cellH = 12;
  private ground: string | null = null;
  private masks = new Map<string, Uint8Array>();
  private scratch: OffscreenCanvasRenderingContext2D | null = null;
  private image: ImageData | null = null;
  /** What the image holds: the cells and colours painted last, and the key of everything else. */
  private shown: { key: string; cells: Uint16Array; colors: Uint8Array | null; background: Uint8Array | null; clear: Uint8Array | null } | null = null;
  private tiles = new Map<string, Uint32Array>();
  private tileKey = '';

  constructor(private readonly canvas: OffscreenCanvas) {}

  setView(cell: number, ground: string | null): void {
    const w = Math.max(2, Math.min(32, Math.round(cell)));
    if (w !== this.cellW) {
      this.cellW = w;
      this.cellH = 2 * w;
      this.masks.clear();
      this.scratch = null;
    }
    this.ground = ground;
  }

  /** Alpha mask (cellW x cellH) of one glyph, drawn the way the svg output places it. */
  private mask(glyph: string): Uint8Array {
    let m = this.masks.get(glyph);
    if (m) return m;
    const { cellW: w, cellH: h } = this;
    const block = blockMask(glyph, w, h);
    if (block) {
      this.masks.set(glyph, block);
      return block;
    }
    if (!this.scratch) {
      const c = new OffscreenCanvas(w, h);
      this.scratch = c.getContext('2d', { willReadFrequently: true })!;
    }
    const ctx = this.scratch;
    ctx.clearRect(0, 0, w, h);
    ctx.font = `${(SVG_FONT_SIZE * w) / SVG_CELL_WIDTH}px ${FONT}`;
    ctx.textBaseline = 'alphabetic';
    ctx.fillStyle = '#fff';
    const advance = ctx.measureText(glyph).width;
    // Glyphs wider than the cell (fallback fonts) are squeezed, like svg's textLength does.
    const squeeze = advance > w ? w / advance : 1;
    ctx.save();
    ctx.scale(squeeze, 1);
    ctx.fillText(glyph, ((w - advance * squeeze) / 2) / squeeze, (SVG_BASELINE * h) / SVG_CELL_HEIGHT);
    ctx.restore();
    const px = ctx.getImageData(0, 0, w, h).data;
    m = new Uint8Array(w * h);
    for (let i = 0; i < m.length; i++) m[i] = px[i * 4 + 3]!;
    this.masks.set(glyph, m);
    return m;
  }

  /** Size of the painted art in backing pixels for a grid. */
  size(columns: number, rows: number): { width: number; height: number } {
    return { width: columns * this.cellW, height: rows * this.cellH };
  }

  /**
   * Paints the grid. Only cells that differ from the grid painted last (glyph, or colour) are
   * blended again and only their bounding box is put into the canvas, everything else being the
   * same (size, cell, ink, ground, glyph table): a stream's temporally filtered frames change a few
   * per cent of their cells, and at 200 columns blending all 15,000 took 5 % of the worker's time.
   */
  paint(grid: PaintGrid, color: boolean, monoColor: string): void {
    // Colours are read only where drawn: mono art computes them on first read (core/render.ts).
    const { columns, rows, cells, glyphs } = grid;
    const { cellW: cw, cellH: ch } = this;
    const W = columns * cw, H = rows * ch;
    if (this.canvas.width !== W || this.canvas.height !== H) {
      this.canvas.width = W;
      this.canvas.height = H;
      this.shown = null;
    }
    if (!this.image || this.image.width !== W || this.image.height !== H) {
      this.image = new ImageData(W, H);
      this.shown = null;
    }
    const out = new Uint32Array(this.image.data.buffer);
    const groundHex = this.ground ?? groundFor(monoColor);
    const ground = parseHexColor(groundHex);
    const gr = (ground >>> 16) & 255, gg = (ground >>> 8) & 255, gb = ground & 255;
    const groundPx = pack(ground);
    const colors = color ? grid.colors : null;
    const bg = colors ? grid.background ?? null : null;
    const clear = bg ? grid.clear ?? null : null;
    const key = [cw, color, monoColor, groundHex, !!bg, glyphs.join('\u0000')].join('|');
    // Same key and same canvas size (a resize dropped `shown`): the same columns and rows.
    const prev = this.shown?.key === key ? this.shown : null;
    const prevCells = prev?.cells, prevColors = prev?.colors, prevBg = prev?.background, prevClear = prev?.clear ?? null;
    // The bounding box of the cells drawn (rows are visited in order: y0 is the first, y1 the last).
    let x0 = columns, y0 = -1, x1 = -1, y1 = -1;

    if (!colors) {
      // One pre-blended tile per glyph; cells copy it.
      const tiles = this.monoTiles(glyphs, monoColor, groundHex);
      for (let y = 0; y < rows; y++) {
        for (let x = 0; x < columns; x++) {
          const g = cells[y * columns + x]!;
          if (prevCells && prevCells[y * columns + x] === g) continue;
          if (x < x0) x0 = x;
          if (x > x1) x1 = x;
          if (y0 < 0) y0 = y;
          y1 = y;
          const tile = tiles[g]!;
          let o = y * ch * W + x * cw;
          for (let py = 0, k = 0; py < ch; py++, o += W) for (let px = 0; px < cw; px++, k++) out[o + px] = tile[k]!;
        }
      }
    } else {
      const masks = glyphs.map((g) => this.mask(g));
      const blank = masks.map((m) => m.every((a) => a === 0));
      for (let y = 0; y < rows; y++) {
        for (let x = 0; x < columns; x++) {
          const i = y * columns + x;
          const g = cells[i]!;
          const r = colors[i * 3]!, gc = colors[i * 3 + 1]!, b = colors[i * 3 + 2]!;
          if (prevCells && prevColors && prevCells[i] === g && prevColors[i * 3] === r && prevColors[i * 3 + 1] === gc && prevColors[i * 3 + 2] === b &&
            (!bg || (prevBg && prevBg[i * 3] === bg[i * 3] && prevBg[i * 3 + 1] === bg[i * 3 + 1] && prevBg[i * 3 + 2] === bg[i * 3 + 2] && (prevClear?.[i] ?? 0) === (clear?.[i] ?? 0)))) continue;
          if (x < x0) x0 = x;
          if (x > x1) x1 = x;
          if (y0 < 0) y0 = y;
          y1 = y;
          let o = y * ch * W + x * cw;
          // The cell's own ground where it carries one: ink and background blended by coverage,
          // in sRGB as the png download does (without it, blocks and dots art read as noise).
          const own = bg && !clear?.[i];
          const cr = own ? bg[i * 3]! : gr, cg = own ? bg[i * 3 + 1]! : gg, cb = own ? bg[i * 3 + 2]! : gb;
          const cellPx = own ? pack((cr << 16) | (cg << 8) | cb) : groundPx;
          if (blank[g]) {
            for (let py = 0; py < ch; py++, o += W) out.fill(cellPx, o, o + cw);
            continue;
          }
          const m = masks[g]!;
          const dr = r - cr, dg = gc - cg, db = b - cb;
          for (let py = 0, k = 0; py < ch; py++, o += W) {
            for (let px = 0; px < cw; px++, k++) {
              const a = m[k]!;
              if (a === 0) out[o + px] = cellPx;
              else {
                const f = a / 255;
                out[o + px] = (0xff000000 | (((cb + db * f + 0.5) & 255) << 16) | (((cg + dg * f + 0.5) & 255) << 8) | ((cr + dr * f + 0.5) & 255)) >>> 0;
              }
            }
          }
        }
      }
    }
    this.shown = { key, cells: cells.slice(), colors: colors ? colors.slice() : null, background: bg ? bg.slice() : null, clear: clear ? clear.slice() : null };
    if (x1 < 0) return;
    this.canvas.getContext('2d')!.putImageData(this.image, 0, 0, x0 * cw, y0 * ch, (x1 - x0 + 1) * cw, (y1 - y0 + 1) * ch);
  }

  /** The glyphs' masks blended from ground to ink, one tile each; kept while ink, ground and cell stay. */
  private monoTiles(glyphs: readonly string[], monoColor: string, groundHex: string): Uint32Array[] {
    const key = `${this.cellW} ${monoColor} ${groundHex}`;
    if (this.tileKey !== key) {
      this.tileKey = key;
      this.tiles.clear();
    }
    const ground = parseHexColor(groundHex), ink = parseHexColor(monoColor);
    const gr = (ground >>> 16) & 255, gg = (ground >>> 8) & 255, gb = ground & 255;
    const ir = (ink >>> 16) & 255, ig = (ink >>> 8) & 255, ib = ink & 255;
    const groundPx = pack(ground);
    return glyphs.map((glyph) => {
      let t = this.tiles.get(glyph);
      if (t) return t;
      const m = this.mask(glyph);
      t = new Uint32Array(m.length);
      for (let k = 0; k < m.length; k++) {
        const a = m[k]!;
        t[k] = a === 0 ? groundPx : pack(
          ((gr + ((ir - gr) * a) / 255 + 0.5) << 16) | ((gg + ((ig - gg) * a) / 255 + 0.5) << 8) | (gb + ((ib - gb) * a) / 255 + 0.5),
        );
      }
      this.tiles.set(glyph, t);
      return t;
    });
  }
}
