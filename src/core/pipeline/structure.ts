import { frame } from '../wasm/kernels.js';

/** Orientation classes of the directional glyphs, by the direction of the contour (not the gradient). */
export const DIR_HORIZONTAL = 0; // -
export const DIR_DIAGONAL_UP = 1; // /
export const DIR_VERTICAL = 2; // |
export const DIR_DIAGONAL_DOWN = 3; // \

export interface CellStructure {
  /** Contour orientation class per cell (DIR_*). */
  readonly direction: Uint8Array;
  /** 0..1: coherence of the local gradient times how strong it is. */
  readonly strength: Float32Array;
}

/**
 * tan(22.5°), the orientation class boundary, from Math.tan here so the kernel needs no libm. The
 * kernel's strength reaches half the coherence at a mean squared gradient (0..1 scale) of 0.004.
 */
export const TAN_22_5 = Math.tan(Math.PI / 8);

/**
 * Structure tensor per cell over its sub-samples (central differences): coherence
 * (l1 - l2) / (l1 + l2) says whether one orientation dominates, the mean energy whether there is a
 * contour at all. Samples are square (a 1:2 cell holds 4x8), so angles are true angles.
 */
export function cellStructure(src: Float32Array, w: number, h: number, subX: number, subY: number): CellStructure {
  const cols = Math.floor(w / subX);
  const rows = Math.floor(h / subY);
  const n = cols * rows;
  // In WebAssembly (assembly/kernels.ts): cell by cell with the sums in registers; only cells on
  // the raster's left or right border need clamped neighbours.
  const f = frame();
  const ps = f.f32(w * h), pd = f.bytes(n), pst = f.f32(n);
  const k = f.ready();
  f.viewF32(ps, w * h).set(src.subarray(0, w * h));
  k.structure(ps, w, h, subX, subY, TAN_22_5, pd, pst);
  return { direction: f.viewU8(pd, n).slice(), strength: f.viewF32(pst, n).slice() };
}
