import type { RgbaImage } from '../../src/core/types.js';

/** Deterministic PRNG (mulberry32) so generated images and noise are reproducible. */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export function gaussian(next: () => number): () => number {
  return () => {
    const u = Math.max(1e-12, next());
    return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * next());
  };
}

export function image(width: number, height: number, fn: (x: number, y: number) => [number, number, number, number?]): RgbaImage {
  const data = new Uint8ClampedArray(width * height * 4);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const [r, g, b, a = 255] = fn(x, y);
      const i = (y * width + x) * 4;
      data[i] = r; data[i + 1] = g; data[i + 2] = b; data[i + 3] = a;
    }
  }
  return { width, height, data };
}

export const grey = (v: number): [number, number, number] => [v, v, v];

/** Left-to-right grey ramp. */
export function gradient(width = 320, height = 160): RgbaImage {
  return image(width, height, (x) => grey(Math.round((255 * x) / (width - 1))));
}

/** A soft photo-like scene: lit sphere, gradient sky, a dark bar and a coloured patch. */
export function scene(width = 320, height = 240, seed = 1): RgbaImage {
  const g = gaussian(rng(seed));
  return image(width, height, (x, y) => {
    const cx = width * 0.4, cy = height * 0.5, r = height * 0.33;
    const dx = (x - cx) / r, dy = (y - cy) / r;
    const d2 = dx * dx + dy * dy;
    let v = 40 + (120 * y) / height;
    let col: [number, number, number] = [v * 0.8, v * 0.9, v * 1.1];
    if (d2 < 1) {
      const lit = Math.max(0, -0.5 * dx - 0.6 * dy + 0.62 * Math.sqrt(1 - d2));
      v = 30 + 220 * lit;
      col = [v, v * 0.85, v * 0.7];
    }
    if (x > width * 0.75 && x < width * 0.85) col = [20, 20, 25];
    if (x > width * 0.86 && y < height * 0.3) col = [200, 40, 40];
    const n = g() * 2;
    return [col[0] + n, col[1] + n, col[2] + n];
  });
}

/** Thin lines at 0, 45, 90 and 135 degrees on black. */
export function lines(width = 320, height = 320): RgbaImage {
  return image(width, height, (x, y) => {
    const on = Math.abs(y - height / 4) < 2 || Math.abs(x - width / 4) < 2 ||
      Math.abs((x - width / 2) - (height / 2 - y)) < 2.5 || Math.abs((x - width / 2) - (y - height / 2)) < 2.5;
    return grey(on ? 255 : 0);
  });
}

/** Black square on white. */
export function square(width = 240, height = 240): RgbaImage {
  return image(width, height, (x, y) => grey(x > width / 4 && x < (3 * width) / 4 && y > height / 4 && y < (3 * height) / 4 ? 0 : 255));
}

/** Add Gaussian noise of sigma (0..255 scale) to an image, deterministically. */
export function withNoise(img: RgbaImage, sigma: number, seed: number): RgbaImage {
  const g = gaussian(rng(seed));
  const data = new Uint8ClampedArray(img.data.length);
  for (let i = 0; i < data.length; i += 4) {
    data[i] = img.data[i]! + g() * sigma;
    data[i + 1] = img.data[i + 1]! + g() * sigma;
    data[i + 2] = img.data[i + 2]! + g() * sigma;
    data[i + 3] = img.data[i + 3]!;
  }
  return { width: img.width, height: img.height, data };
}
