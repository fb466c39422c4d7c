import type { Raster } from '../../src/core/pipeline/raster.js';

export type { Raster };

/** Mean of each cellW x cellH block: one value per cell. */
export function cellMeans(r: Raster, cellW: number, cellH: number, out?: Float32Array): Float32Array {
  const cols = Math.floor(r.width / cellW);
  const rows = Math.floor(r.height / cellH);
  const res = out ?? new Float32Array(cols * rows);
  const d = r.data;
  const w = r.width;
  const inv = 1 / (cellW * cellH);
  for (let cy = 0, c = 0; cy < rows; cy++) {
    const top = cy * cellH * w;
    for (let cx = 0; cx < cols; cx++, c++) {
      let s = 0;
      for (let y = 0, p = top + cx * cellW; y < cellH; y++, p += w) {
        for (let k = 0; k < cellW; k++) s += d[p + k]!;
      }
      res[c] = s * inv;
    }
  }
  return res;
}
