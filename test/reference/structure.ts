import {
  DIR_DIAGONAL_DOWN, DIR_DIAGONAL_UP, DIR_HORIZONTAL, DIR_VERTICAL, type CellStructure,
} from '../../src/core/pipeline/structure.js';

/** Gradient energy (mean squared, 0..1 scale) at which strength reaches half its coherence. */
const ENERGY_HALF = 0.004;
const TAN_22_5 = Math.tan(Math.PI / 8);

/**
 * Structure tensor per cell over its sub-samples (central differences): coherence
 * (l1 - l2) / (l1 + l2) says whether one orientation dominates, the mean energy whether there is a
 * contour at all. Samples are square (a 1:2 cell holds 4x8), so angles are true angles.
 */
export function cellStructure(src: Float32Array, w: number, h: number, subX: number, subY: number): CellStructure {
  const cols = Math.floor(w / subX);
  const rows = Math.floor(h / subY);
  const n = cols * rows;
  const direction = new Uint8Array(n);
  const strength = new Float32Array(n);
  const inv = 1 / (subX * subY);
  // Cell by cell with the sums in registers; only cells on the raster's left or right border
  // need clamped neighbours.
  for (let cy = 0, c = 0; cy < rows; cy++) {
    for (let cx = 0; cx < cols; cx++, c++) {
      let a = 0, b = 0, d = 0;
      const x0 = cx * subX, x1 = x0 + subX;
      const inner = x0 > 0 && x1 < w;
      for (let y = cy * subY, yEnd = y + subY; y < yEnd; y++) {
        const r = y * w;
        const up = (y > 0 ? y - 1 : 0) * w;
        const dn = (y < h - 1 ? y + 1 : h - 1) * w;
        if (inner) {
          for (let x = x0; x < x1; x++) {
            const gx = (src[r + x + 1]! - src[r + x - 1]!) * 0.5;
            const gy = (src[dn + x]! - src[up + x]!) * 0.5;
            a += gx * gx; b += gy * gy; d += gx * gy;
          }
        } else {
          for (let x = x0; x < x1; x++) {
            const gx = (src[r + (x < w - 1 ? x + 1 : x)]! - src[r + (x > 0 ? x - 1 : x)]!) * 0.5;
            const gy = (src[dn + x]! - src[up + x]!) * 0.5;
            a += gx * gx; b += gy * gy; d += gx * gy;
          }
        }
      }
      cellTensor(a, b, d, inv, c, direction, strength);
    }
  }
  return { direction, strength };
}

/** Orientation class and strength of one cell from its summed tensor (a = Jxx, b = Jyy, d = Jxy). */
function cellTensor(a: number, b: number, d: number, inv: number, c: number, direction: Uint8Array, strength: Float32Array): void {
  const tr = a + b;
  if (tr <= 1e-12) return;
  const coherence = Math.sqrt((a - b) * (a - b) + 4 * d * d) / tr;
  const energy = tr * inv;
  strength[c] = coherence * (energy / (energy + ENERGY_HALF));
  // Dominant gradient direction (gx, gy) ~ eigenvector of the larger eigenvalue.
  const l1 = 0.5 * (tr + Math.sqrt((a - b) * (a - b) + 4 * d * d));
  let vx: number, vy: number;
  if (Math.abs(d) > 1e-12) { vx = l1 - b; vy = d; } else if (a >= b) { vx = 1; vy = 0; } else { vx = 0; vy = 1; }
  const ax = Math.abs(vx), ay = Math.abs(vy);
  // Gradient mostly horizontal -> vertical contour; mostly vertical -> horizontal contour.
  if (ay <= ax * TAN_22_5) direction[c] = DIR_VERTICAL;
  else if (ax <= ay * TAN_22_5) direction[c] = DIR_HORIZONTAL;
  // y grows downwards: a gradient along (1, 1) is the normal of a '/' contour.
  else direction[c] = vx * vy > 0 ? DIR_DIAGONAL_UP : DIR_DIAGONAL_DOWN;
}
