/**
 * The viewing model of glyph matching: a [1 2 1]/4 blur in both axes (about half a cell width),
 * applied alike to the target and, within each cell, to the glyph templates. Texture finer than
 * that (grass, noise) then matches by its tone instead of by glyphs whose strokes happen to line
 * up with it, while a real edge, wider than the blur, still picks its shape. In f32 (each
 * operation rounded with Math.fround), as the kernel's f32x4 lanes: tap121().
 */
export function viewBlur(src: Float32Array, w: number, h: number, out: Float32Array, tmp: Float32Array): Float32Array {
  for (let y = 0; y < h; y++) blurRow3(src, y * w, w, tmp);
  for (let y = 0; y < h; y++) {
    const u = (y > 0 ? y - 1 : y) * w, d = (y < h - 1 ? y + 1 : y) * w;
    blurColumns3(tmp, u, y * w, d, w, out);
  }
  return out;
}

/** [1 2 1]/4 along one row; edges clamp (the outer neighbour of a border sample is itself). */
function blurRow3(src: Float32Array, r: number, w: number, tmp: Float32Array): void {
  if (w === 1) { tmp[r] = src[r]!; return; }
  tmp[r] = tap121(src[r]!, src[r]!, src[r + 1]!);
  for (let i = r + 1, end = r + w - 1; i < end; i++) tmp[i] = tap121(src[i - 1]!, src[i]!, src[i + 1]!);
  tmp[r + w - 1] = tap121(src[r + w - 2]!, src[r + w - 1]!, src[r + w - 1]!);
}

/** [1 2 1]/4 across rows u, r, d into row r of out. */
function blurColumns3(tmp: Float32Array, u: number, r: number, d: number, w: number, out: Float32Array): void {
  for (let x = 0; x < w; x++) out[r + x] = tap121(tmp[u + x]!, tmp[r + x]!, tmp[d + x]!);
}

/** ((a + (b + b)) + c) * 0.25, each operation rounded to f32. */
function tap121(a: number, b: number, c: number): number {
  const f = Math.fround;
  return f(f(f(a + f(b + b)) + c) * 0.25);
}
