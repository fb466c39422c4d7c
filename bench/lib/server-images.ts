/**
 * JPEG inputs of the server bench, quality 90, cached in bench/.cache/:
 * - 12 MP: `bigJpeg()` of images.ts (4000x3000, shared with `npm run bench`);
 * - 1 MP: the same recipe at 1155x866 — the 640x480 photo (astronaut) resized with lanczos3 to
 *   cover the size, plus the same fine deterministic noise and texture, so it does not compress
 *   trivially (a camera photo has sensor noise; an upscaled PNG would be unrealistically smooth).
 */
import { readFileSync, statSync } from 'node:fs';
import sharp from 'sharp';
import { bigJpeg, noisyJpeg } from './images.js';

export interface JpegInput {
  readonly label: string;
  readonly file: string;
  readonly width: number;
  readonly height: number;
  readonly bytes: number;
  readonly source: string;
  readonly data: Buffer;
}


/** The bench's JPEGs: `1mp` (1155x866) and `12mp` (4000x3000), both q90. */
export async function serverBenchImages(which: readonly string[], log: (s: string) => void = console.log): Promise<JpegInput[]> {
  const out: JpegInput[] = [];
  for (const label of which) {
    let f: { file: string; source: string };
    if (label === '12mp') f = await bigJpeg(log);
    else if (label === '1mp') f = await noisyJpeg(1155, 866, 'jpeg-1155x866', log);
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
