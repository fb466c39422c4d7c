import type { RgbaImage } from './types.js';

/**
 * The image a thread renders to warm up before its first real render (the server's workers and
 * the studio's worker at 640 x 480; the render job's primer, render.ts warmUp(), at 32 x 24): a sky gradient, a lit disc, a dark block with straight edges and
 * a fine deterministic grain, in colour, so that every stage has work (the Director's measures,
 * the structure and fine-shape cells, both colour paths). Opaque RGBA.
 */
export function warmUpScene(width = 640, height = 480): RgbaImage {
  const data = new Uint8Array(width * height * 4);
  const sx = width / 640, sy = height / 480;
  let seed = 0x2545f491;
  for (let y = 0, i = 0; y < height; y++) {
    for (let x = 0; x < width; x++, i += 4) {
      seed = (seed * 1103515245 + 12345) >>> 0;
      const grain = (seed >>> 27) - 16;
      const dx = (x / sx - 220) / 120, dy = (y / sy - 200) / 120;
      const disc = dx * dx + dy * dy < 1;
      const block = x > 400 * sx && x < 580 * sx && y > 260 * sy && y < 420 * sy;
      let v = 40 + (150 * y) / height;
      if (disc) v = 90 + 160 * Math.max(0, 1 - Math.hypot(dx + 0.35, dy + 0.35));
      if (block) v = 20 + 10 * Math.sin(x / 3);
      data[i] = Math.max(0, Math.min(255, v + grain));
      data[i + 1] = Math.max(0, Math.min(255, v * 0.85 + grain));
      data[i + 2] = Math.max(0, Math.min(255, (block ? 120 : v * 0.6) + grain));
      data[i + 3] = 255;
    }
  }
  return { width, height, data };
}

/** The parameters of the warm-up's renders: the defaults twice (the second runs the code V8 tiered up during the first), then both colour paths. */
export const WARM_UP_RENDERS: readonly Readonly<Record<string, unknown>>[] = [{}, {}, { charset: 'blocks', color: true, format: 'ansi' }, { color: true, format: 'json-compact' }];
