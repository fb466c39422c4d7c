/** A single-channel float raster, row-major. Values are tone in 0..1 unless stated otherwise. */
export interface Raster {
  readonly width: number;
  readonly height: number;
  readonly data: Float32Array;
}

export function createRaster(width: number, height: number): Raster {
  return { width, height, data: new Float32Array(width * height) };
}

/** Mean of each cellW x cellH block: one value per cell. */
export function cellMeans(r: Raster, cellW: number, cellH: number, out?: Float32Array): Float32Array {
  const cols = Math.floor(r.width / cellW);
  const rows = Math.floor(r.height / cellH);
  const res = out ?? new Float32Array(cols * rows);
  res.fill(0);
  const d = r.data;
  const inv = 1 / (cellW * cellH);
  for (let y = 0; y < rows * cellH; y++) {
    const base = y * r.width;
    const crow = Math.floor(y / cellH) * cols;
    for (let cx = 0; cx < cols; cx++) {
      let s = 0;
      const x0 = base + cx * cellW;
      for (let k = 0; k < cellW; k++) s += d[x0 + k]!;
      res[crow + cx]! += s;
    }
  }
  for (let i = 0; i < res.length; i++) res[i]! *= inv;
  return res;
}
