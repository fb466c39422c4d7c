// AssemblyScript: the structure tensor of one cell (pipeline/structure.ts), shared by the whole
// raster's kernel (kernels.ts structure()) and the glyph matcher (match.ts), which asks for it
// only in the cells where a directional glyph could still win.
import { laneSum, ld } from './mem';

const DIR_HORIZONTAL: u8 = 0;
const DIR_DIAGONAL_UP: u8 = 1;
const DIR_VERTICAL: u8 = 2;
const DIR_DIAGONAL_DOWN: u8 = 3;
const ENERGY_HALF: f64 = 0.004;

/**
 * The tensor of cell (cx, cy) of the w x h raster at src (central differences, neighbours clamped
 * at the raster's border), then cellTensor() into direction and strength at c, which must hold 0.
 * The sums in the scalar order: structure()'s two-cell lanes give the same bits.
 */
export function tensorAt(src: usize, w: i32, h: i32, subX: i32, subY: i32, cx: i32, cy: i32, inv: f64, tan225: f64,
  c: i32, direction: usize, strength: usize): void {
  let a: f64 = 0, b: f64 = 0, d: f64 = 0;
  const x0 = cx * subX, x1 = x0 + subX;
  const inner = x0 > 0 && x1 < w;
  for (let y = cy * subY, yEnd = y + subY; y < yEnd; y++) {
    const r = y * w;
    const up = (y > 0 ? y - 1 : 0) * w;
    const dn = (y < h - 1 ? y + 1 : h - 1) * w;
    if (inner) {
      for (let x = x0; x < x1; x++) {
        const gx = (ld(src, r + x + 1) - ld(src, r + x - 1)) * 0.5;
        const gy = (ld(src, dn + x) - ld(src, up + x)) * 0.5;
        a += gx * gx; b += gy * gy; d += gx * gy;
      }
    } else {
      for (let x = x0; x < x1; x++) {
        const gx = (ld(src, r + (x < w - 1 ? x + 1 : x)) - ld(src, r + (x > 0 ? x - 1 : x))) * 0.5;
        const gy = (ld(src, dn + x) - ld(src, up + x)) * 0.5;
        a += gx * gx; b += gy * gy; d += gx * gy;
      }
    }
  }
  cellTensor(a, b, d, inv, tan225, c, direction, strength);
}

/**
 * An upper bound on cellTensor()'s strength of cell (cx, cy): its energy factor e / (e + half),
 * with e (the mean of gx^2 + gy^2) taken in f32 lanes and raised by 0.1 % for their rounding
 * (coherence is at most 1: d^2 <= ab). Cells at the raster's left or right border return 1. The
 * matcher skips the tensor of a cell whose bound times the structure amount cannot pass its
 * threshold: three in four of the cells it asked for at 160 columns of a photo.
 */
export function strengthBound(src: usize, w: i32, h: i32, subX: i32, subY: i32, cx: i32, cy: i32, inv: f64): f64 {
  const x0 = cx * subX;
  if (subX != 4 || x0 < 1 || x0 + 5 > w) return 1;
  // The differences unhalved (exact powers of two apart): their squares' sum is 4 tr.
  let acc = f32x4.splat(0);
  for (let y = cy * subY, yEnd = y + subY; y < yEnd; y++) {
    const r = src + (<usize>(y * w + x0) << 2);
    const up = src + (<usize>((y > 0 ? y - 1 : 0) * w + x0) << 2);
    const dn = src + (<usize>((y < h - 1 ? y + 1 : h - 1) * w + x0) << 2);
    const dx = f32x4.sub(v128.load(r, 4), v128.load(r - 4));
    const dy = f32x4.sub(v128.load(dn), v128.load(up));
    acc = f32x4.add(acc, f32x4.add(f32x4.mul(dx, dx), f32x4.mul(dy, dy)));
  }
  const tr = 0.25 * laneSum(acc);
  const e = tr * inv * 1.001;
  return e / (e + ENERGY_HALF);
}

/** Orientation class and strength of cell c from its summed tensor (a = Jxx, b = Jyy, d = Jxy). */
export function cellTensor(a: f64, b: f64, d: f64, inv: f64, tan225: f64, c: i32, direction: usize, strength: usize): void {
  const tr = a + b;
  if (tr <= 1e-12) return;
  const coherence = Math.sqrt((a - b) * (a - b) + 4 * d * d) / tr;
  const energy = tr * inv;
  store<f32>(strength + (<usize>c << 2), <f32>(coherence * (energy / (energy + ENERGY_HALF))));
  const l1 = 0.5 * (tr + Math.sqrt((a - b) * (a - b) + 4 * d * d));
  let vx: f64, vy: f64;
  if (Math.abs(d) > 1e-12) { vx = l1 - b; vy = d; } else if (a >= b) { vx = 1; vy = 0; } else { vx = 0; vy = 1; }
  const ax = Math.abs(vx), ay = Math.abs(vy);
  let dir: u8;
  if (ay <= ax * tan225) dir = DIR_VERTICAL;
  else if (ax <= ay * tan225) dir = DIR_HORIZONTAL;
  else dir = vx * vy > 0 ? DIR_DIAGONAL_UP : DIR_DIAGONAL_DOWN;
  store<u8>(direction + <usize>c, dir);
}
