/**
 * UTF-8 output built as bytes. The markup and ANSI formats of a colour grid write one tag or SGR
 * per run of equal colour, up to one per cell: built as strings (a template per run, `+=` per
 * glyph) a 400 x 800 colour svg of noise took 0.67 s and 183 MB of heap for a 30 MB document, held
 * as two-byte characters and encoded again to be sent. Written here, each run is a few stores
 * into one growing buffer. Pure ECMAScript apart from the runtime's TextEncoder and TextDecoder
 * (text-codec.ts): text goes through encodeInto, and the string form is the document decoded once.
 */
import { textEncoder } from '../text-codec.js';
import type { CellGrid } from '../types.js';
import { splitRow, type RowRuns } from './grid.js';

/** A glyph table as UTF-8: glyph g's bytes are `bytes[start[g]]` up to `bytes[start[g + 1]]`. */
export interface GlyphBytes {
  readonly bytes: Uint8Array;
  readonly start: Int32Array;
  /** The longest glyph's byte count (the room a cell may need). */
  readonly longest: number;
}

/** The lower-case hex digits' bytes. */
const HEX = Uint8Array.from('0123456789abcdef', (c) => c.charCodeAt(0));

/** Size of a ByteWriter's chunks: large enough that a chunk change is rare, small beside a document. */
const CHUNK = 1 << 18;

/**
 * A growing byte buffer: UTF-8 text, bytes, decimal integers, hex colours and glyph runs. Written
 * in chunks joined once at the end: a buffer that doubled left each smaller copy behind as garbage
 * (114 MB of buffers for a 30 MB document).
 */
export class ByteWriter {
  private buf: Uint8Array;
  private n = 0;
  private readonly full: Uint8Array[] = [];
  private before = 0;

  constructor(capacity = CHUNK) {
    this.buf = new Uint8Array(capacity);
  }

  /** Bytes written so far. */
  get length(): number {
    return this.before + this.n;
  }

  /** Room for `k` more bytes in the current chunk: else a new chunk. */
  private room(k: number): void {
    if (this.n + k <= this.buf.length) return;
    this.full.push(this.buf.subarray(0, this.n));
    this.before += this.n;
    this.buf = new Uint8Array(Math.max(CHUNK, k));
    this.n = 0;
  }

  /** Bytes as they are (an encoded constant: utf8()). */
  raw(bytes: Uint8Array): void {
    const len = bytes.length;
    this.room(len);
    const b = this.buf;
    let n = this.n;
    // A copy call costs more than a few stores: short constants byte by byte.
    if (len > 24) b.set(bytes, n);
    else for (let i = 0; i < len; i++) b[n + i] = bytes[i]!;
    this.n = n + len;
  }

  /** Text of any code points, as UTF-8, by the runtime's encoder (a lone surrogate as U+FFFD). */
  text(s: string): void {
    this.room(s.length * 3);
    this.n += textEncoder().encodeInto(s, this.buf.subarray(this.n)).written;
  }

  /** A number in decimal, as String(v) writes it (a non-negative safe integer without a string). */
  uint(v: number): void {
    if (!(v >= 0 && Number.isSafeInteger(v))) return this.text(String(v));
    this.room(16);
    const b = this.buf;
    // Colour channels and coordinates: up to four digits without a loop.
    if (v < 10) {
      b[this.n++] = 48 + v;
      return;
    }
    if (v < 100) {
      const t = (v / 10) | 0;
      b[this.n] = 48 + t;
      b[this.n + 1] = 48 + v - t * 10;
      this.n += 2;
      return;
    }
    if (v < 1000) {
      const h = (v / 100) | 0, t = ((v / 10) | 0) % 10;
      b[this.n] = 48 + h;
      b[this.n + 1] = 48 + t;
      b[this.n + 2] = 48 + (v % 10);
      this.n += 3;
      return;
    }
    let digits = 0;
    for (let t = v; t >= 1; t = Math.floor(t / 10)) digits++;
    let n = this.n + digits;
    this.n = n;
    for (let t = v; digits-- > 0; t = Math.floor(t / 10)) b[--n] = 48 + (t % 10);
  }

  /** Six lower-case hex digits of a packed 0xRRGGBB colour (hexOfPacked without its #). */
  hex6(rgb: number): void {
    this.room(6);
    const b = this.buf;
    const n = this.n;
    b[n] = HEX[(rgb >>> 20) & 15]!;
    b[n + 1] = HEX[(rgb >>> 16) & 15]!;
    b[n + 2] = HEX[(rgb >>> 12) & 15]!;
    b[n + 3] = HEX[(rgb >>> 8) & 15]!;
    b[n + 4] = HEX[(rgb >>> 4) & 15]!;
    b[n + 5] = HEX[rgb & 15]!;
    this.n = n + 6;
  }

  /** The glyphs of `cells[from]` up to `cells[to]`, from their UTF-8 table. */
  glyphs(cells: Uint16Array, from: number, to: number, table: GlyphBytes): void {
    const { bytes, start } = table;
    this.room((to - from) * table.longest);
    const b = this.buf;
    let n = this.n;
    for (let i = from; i < to; i++) {
      const g = cells[i]!;
      for (let k = start[g]!, end = start[g + 1]!; k < end; k++) b[n++] = bytes[k]!;
    }
    this.n = n;
  }

  /** The bytes written, in a buffer of their own (exactly their length: transferable as it is). */
  done(): Uint8Array {
    const out = new Uint8Array(this.length);
    let o = 0;
    for (const c of this.full) {
      out.set(c, o);
      o += c.length;
    }
    out.set(this.buf.subarray(0, this.n), o);
    return out;
  }
}

/** `s` as UTF-8 bytes, by the runtime's encoder (a format's constant for ByteWriter.raw; a whole text document). */
export function utf8(s: string): Uint8Array {
  return textEncoder().encode(s);
}

/** The UTF-8 table of `texts` (each glyph's text as a format writes it: escaped for markup). */
export function glyphBytes(texts: readonly string[]): GlyphBytes {
  const w = new ByteWriter(texts.length * 8);
  const start = new Int32Array(texts.length + 1);
  let longest = 0;
  for (let g = 0; g < texts.length; g++) {
    w.text(texts[g]!);
    start[g + 1] = w.length;
    longest = Math.max(longest, start[g + 1]! - start[g]!);
  }
  return { bytes: w.done(), start, longest };
}

const TAG_END = utf8('">');

/**
 * Row `y`'s colour runs (splitRow, into `runs`), each as `open`, its colour's six hex digits, `">`,
 * its glyphs and `close`; a run of blanks only (colour -1) as its glyphs: html's spans, svg's tspans.
 */
export function writeColorRuns(w: ByteWriter, grid: CellGrid, blank: Uint8Array, y: number, runs: RowRuns, table: GlyphBytes, open: Uint8Array, close: Uint8Array): void {
  splitRow(grid, blank, y, runs);
  const base = y * grid.columns;
  for (let k = 0, from = base; k < runs.count; k++) {
    const to = base + runs.ends[k]!;
    const color = runs.colors[k]!;
    if (color >= 0) {
      w.raw(open);
      w.hex6(color);
      w.raw(TAG_END);
    }
    w.glyphs(grid.cells, from, to, table);
    if (color >= 0) w.raw(close);
    from = to;
  }
}
