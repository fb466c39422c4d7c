/**
 * Tables that depend on no input, computed once at build time (scripts/build-tables.ts writes
 * tables.generated.ts, not committed) by the same code that computes them at run time: the sRGB
 * encoding table, the default charset's glyph set (its order, coverages, templates and textures:
 * font-data.generated.ts decoded) and the fine shapes (pipeline/refine.ts) of its glyphs. A
 * process's first render built them itself: 3-7 ms of it on 2 cores, interpreted or in kernels not
 * yet optimised.
 * Without a generated file (the generator's own run) every table is computed as before;
 * test/tables.test.ts checks that the generated tables equal freshly computed ones bit for bit.
 */
import { PRECOMPUTED } from './tables.generated.js';
import { fromBase64 } from './wasm/kernels.js';

/** What tables.generated.ts holds: typed arrays as base64 of their bytes (little-endian). */
export interface Precomputed {
  /** pipeline/linear.ts encLut(): f32. */
  readonly enc: string;
  /** glyphs/charsets.ts: the default charset's glyph set (its glyphs in order; coverage and templates f32) and glyphTextures() of it (f32). */
  readonly detailed: {
    readonly glyphs: string;
    readonly coverage: string;
    readonly templates: string;
    readonly textures: string;
  };
  /**
   * pipeline/refine.ts fineTable() at FINE_BLUR_PASSES of `detailed.glyphs`, in that order (the
   * default charset's glyph table: the default render takes it as it is).
   */
  readonly fine: {
    /** f32, the filter's 2 x TAPS weights. */
    readonly taps: string;
    /** f32, FINE_SAMPLES per glyph. */
    readonly templates: string;
    /** f64 per glyph. */
    readonly g2: string;
    readonly gm: string;
    readonly spread: string;
    /** f32, BLOCKS per glyph. */
    readonly blocks: string;
    /** f64, 2 per glyph. */
    readonly blockStats: string;
  };
}

/** base64 bytes as an aligned copy, a whole number of `size`-byte elements. */
function bytesOf(b64: string, size: number): ArrayBuffer {
  const b = fromBase64(b64);
  if (b.byteLength % size !== 0) throw new Error('tables.generated.ts: a table of the wrong length');
  // Node's decoder may hand back a view into a shared pool (and a Buffer's slice() is a view too):
  // copied, so the typed array is aligned and its own.
  return new Uint8Array(b).buffer;
}

export const f32Of = (b64: string): Float32Array => new Float32Array(bytesOf(b64, 4));
export const f64Of = (b64: string): Float64Array => new Float64Array(bytesOf(b64, 8));

/** The generated tables, or null where there are none. */
export function precomputed(): Precomputed | null {
  return PRECOMPUTED;
}
