import { DECODE_PIXELS_PER_COLUMN } from '../core/pipeline/geometry.js';

/**
 * The size the studio decodes a still image at for `columns`, as the server's render worker does
 * (DECODE_PIXELS_PER_COLUMN): wider images are shrunk to that width (never enlarged), so the
 * renderer sees about the same pixels in the browser as on the server. Below that width both
 * decode the image as it is, and for a PNG (lossless) the bytes of every output are the same
 * (test/studio-e2e.test.ts checks it).
 */
export const PIXELS_PER_COLUMN = DECODE_PIXELS_PER_COLUMN;

export function decodeWidth(width: number, height: number, columns: number): { width: number; height: number } {
  const target = columns * PIXELS_PER_COLUMN;
  if (width <= target) return { width, height };
  return { width: target, height: Math.max(1, Math.round((height * target) / width)) };
}
