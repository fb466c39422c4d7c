/**
 * JPEG inputs of the server bench, quality 90, cached in bench/.cache/:
 * - 12 MP: `bigJpeg()` of images.ts (4000x3000, shared with `npm run bench`);
 * - 1 MP: the same recipe at 1155x866 — the 640x480 photo (astronaut) resized with lanczos3 to
 *   cover the size, plus the same fine deterministic noise and texture, so it does not compress
 *   trivially (a camera photo has sensor noise; an upscaled PNG would be unrealistically smooth).
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import sharp from 'sharp';
import { CACHE_DIR, bigJpeg, photo640 } from './images.js';

export interface JpegInput {
  readonly label: string;
  readonly file: string;
  readonly width: number;
  readonly height: number;
  readonly bytes: number;
  readonly source: string;
  readonly data: Buffer;
}

async function noisyJpeg(W: number, H: number, log: (s: string) => void): Promise<{ file: string; source: string }> {
  const { file: photo, source } = await photo640(log);
  const file = join(CACHE_DIR, `jpeg-${W}x${H}-${source}-q90.jpg`);
  if (!existsSync(file)) {
    const base = await sharp(photo).resize(W, H, { fit: 'cover', kernel: 'lanczos3' }).removeAlpha().raw().toBuffer();
    let seed = 0x9e3779b9;
    const rnd = () => {
      seed ^= seed << 13; seed >>>= 0;
      seed ^= seed >>> 17;
      seed ^= seed << 5; seed >>>= 0;
      return seed / 4294967296;
    };
    for (let y = 0; y < H; y++) {
      for (let x = 0; x < W; x++) {
        const tex = 6 * Math.sin(x * 0.37 + Math.sin(y * 0.05) * 3) * Math.sin(y * 0.29);
        const i = (y * W + x) * 3;
        for (let c = 0; c < 3; c++) {
          const v = base[i + c]! + tex + (rnd() - 0.5) * 24;
          base[i + c] = v < 0 ? 0 : v > 255 ? 255 : v;
        }
      }
    }
    await sharp(base, { raw: { width: W, height: H, channels: 3 } }).jpeg({ quality: 90 }).toFile(file);
  }
  return { file, source };
}

/** The bench's JPEGs: `1mp` (1155x866) and `12mp` (4000x3000), both q90. */
export async function serverBenchImages(which: readonly string[], log: (s: string) => void = console.log): Promise<JpegInput[]> {
  const out: JpegInput[] = [];
  for (const label of which) {
    let f: { file: string; source: string };
    if (label === '12mp') f = await bigJpeg(log);
    else if (label === '1mp') f = await noisyJpeg(1155, 866, log);
    else throw new Error(`unknown image "${label}" (have: 1mp, 12mp)`);
    const meta = await sharp(f.file).metadata();
    out.push({
      label: label === '1mp' ? '1 MP' : '12 MP',
      file: f.file,
      width: meta.width!,
      height: meta.height!,
      bytes: statSync(f.file).size,
      source: f.source,
      data: readFileSync(f.file),
    });
  }
  return out;
}
