/**
 * Benchmark images.
 *
 * Real photos come from Debian's `python3-skimage` package (the scikit-image sample data), taken
 * WITHOUT installing it: `apt-get download python3-skimage` into bench/.cache/, `dpkg-deb -x`, and
 * only the wanted files of skimage/data are kept (bench/.cache/skimage/). Two more images are
 * generated here (a lit sphere scene with gradients and shapes, and thin lines at many angles).
 *
 * Every image is normalized once into bench/.cache/input/<name>.png: 8-bit sRGB, 3 channels, alpha
 * flattened on black. That file is what every tool reads (peers get the path, v2a and the
 * reference get its decoded pixels), so all of them see exactly the same pixels.
 */
import { copyFileSync, existsSync, mkdirSync, readdirSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import sharp from 'sharp';
import type { RgbaImage } from '../../src/core/types.js';
import { aptUpdateIfNeeded, canApt } from './peers.js';
import { run, which } from './proc.js';

export const BENCH_DIR = fileURLToPath(new URL('..', import.meta.url));
export const CACHE_DIR = join(BENCH_DIR, '.cache');
export const OUT_DIR = join(BENCH_DIR, 'out');

/** The scikit-image photos used, in this order (missing ones are skipped). */
export const SKIMAGE_PHOTOS = [
  'camera.png', 'astronaut.png', 'coffee.png', 'chelsea.png', 'moon.png', 'rocket.jpg', 'horse.png',
  'coins.png', 'text.png', 'motorcycle_left.png', 'hubble_deep_field.jpg',
] as const;
export const GENERATED = ['sphere', 'lines'] as const;

export interface BenchImage {
  /** File name without extension (`camera`, `sphere`, ...). */
  readonly name: string;
  readonly origin: 'skimage' | 'generated';
  /** Normalized 8-bit RGB PNG: the file every tool reads. */
  readonly file: string;
  readonly rgba: RgbaImage;
}

const SKIMAGE_DIR = join(CACHE_DIR, 'skimage');

/**
 * Directory with the skimage photos, fetching them with apt-get download + dpkg-deb on first use.
 * Returns null (after printing why) when the package cannot be had.
 */
export async function skimageDir(log: (s: string) => void = console.log): Promise<string | null> {
  const have = () => existsSync(SKIMAGE_DIR) && SKIMAGE_PHOTOS.some((f) => existsSync(join(SKIMAGE_DIR, f)));
  if (have()) return SKIMAGE_DIR;
  const why = (s: string) => {
    log(`skimage photos unavailable (${s}): running on the generated images only`);
    return null;
  };
  if (!which('apt-get') || !which('dpkg-deb')) return why('no apt-get/dpkg-deb on this machine');
  const work = join(CACHE_DIR, 'deb');
  mkdirSync(work, { recursive: true });
  if (canApt()) await aptUpdateIfNeeded(['python3-skimage'], log);
  log('fetching python3-skimage with apt-get download (not installed; only its sample images are used)');
  // Sandbox user root: the download goes into our own directory, which _apt may not be able to write.
  const dl = await run('apt-get', ['download', '-o', 'APT::Sandbox::User=root', 'python3-skimage'], { cwd: work });
  const deb = readdirSync(work).find((f) => /^python3-skimage_.*\.deb$/.test(f));
  if (dl.code !== 0 || !deb) return why(`apt-get download failed: ${dl.stderr.trim().split('\n').pop() ?? dl.code}`);
  const x = join(work, 'x');
  const ex = await run('dpkg-deb', ['-x', join(work, deb), x]);
  if (ex.code !== 0) return why(`dpkg-deb -x failed: ${ex.stderr.trim()}`);
  const data = join(x, 'usr/lib/python3/dist-packages/skimage/data');
  if (!existsSync(data)) return why(`${deb} has no skimage/data`);
  mkdirSync(SKIMAGE_DIR, { recursive: true });
  let n = 0;
  for (const f of SKIMAGE_PHOTOS) {
    if (existsSync(join(data, f))) {
      copyFileSync(join(data, f), join(SKIMAGE_DIR, f));
      n++;
    }
  }
  rmSync(work, { recursive: true, force: true });
  log(`cached ${n} skimage photos from ${deb} in ${SKIMAGE_DIR}`);
  return have() ? SKIMAGE_DIR : why(`${deb} has none of the wanted photos`);
}

const clamp01 = (v: number) => (v < 0 ? 0 : v > 1 ? 1 : v);
const smooth = (edge: number, d: number) => clamp01(0.5 - d / edge); // 1 inside (d<0), AA over ~1 px

/** Writes an RGB float image (0..1 per channel, sRGB-encoded) as an 8-bit PNG. */
async function writeRgb(file: string, w: number, h: number, f: (x: number, y: number) => [number, number, number]): Promise<void> {
  const buf = Buffer.alloc(w * h * 3);
  const SS = 3; // 3x3 supersampling for anti-aliased edges
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) {
      let r = 0, g = 0, b = 0;
      for (let j = 0; j < SS; j++) {
        for (let i = 0; i < SS; i++) {
          const c = f(x + (i + 0.5) / SS, y + (j + 0.5) / SS);
          r += c[0]; g += c[1]; b += c[2];
        }
      }
      const k = (y * w + x) * 3;
      const n = SS * SS;
      buf[k] = Math.round(clamp01(r / n) * 255);
      buf[k + 1] = Math.round(clamp01(g / n) * 255);
      buf[k + 2] = Math.round(clamp01(b / n) * 255);
    }
  }
  await sharp(buf, { raw: { width: w, height: h, channels: 3 } }).png().toFile(file);
}

/** Lit sphere on a gradient floor, a grey ramp, and some flat shapes: tone and edges. */
function sphereScene(x: number, y: number): [number, number, number] {
  const W = 640, H = 480;
  // Background: vertical gradient, dark top to mid-grey floor.
  let c: [number, number, number] = [0.05 + 0.35 * (y / H), 0.06 + 0.33 * (y / H), 0.1 + 0.3 * (y / H)];
  // Horizontal grey ramp along the bottom.
  if (y > 430 && y < 470 && x > 20 && x < 620) {
    const v = (x - 20) / 600;
    c = [v, v, v];
  }
  // Flat shapes: white rectangle, dark-grey triangle, mid-grey ring.
  if (x > 460 && x < 600 && y > 40 && y < 120) c = [0.95, 0.95, 0.95];
  const tx = x - 530, ty = y - 170;
  if (ty > 0 && ty < 110 && Math.abs(tx) < ty * 0.6) c = [0.2, 0.45, 0.25];
  const rr = Math.hypot(x - 90, y - 110);
  if (rr > 40 && rr < 60) c = [0.55, 0.55, 0.6];
  // Shadow under the sphere.
  const sh = ((x - 300) / 150) ** 2 + ((y - 395) / 30) ** 2;
  if (sh < 1) c = c.map((v) => v * (0.35 + 0.65 * sh)) as [number, number, number];
  // Lambert + Phong sphere, light from the upper left.
  const cx = 290, cy = 240, R = 150;
  const dx = (x - cx) / R, dy = (y - cy) / R;
  const d2 = dx * dx + dy * dy;
  if (d2 < 1) {
    const nz = Math.sqrt(1 - d2);
    const L = [-0.5, -0.6, 0.62];
    const ln = Math.hypot(L[0]!, L[1]!, L[2]!);
    const ndl = Math.max(0, (dx * L[0]! + dy * L[1]! + nz * L[2]!) / ln);
    // Half vector with the viewer (0, 0, 1).
    const hx = L[0]! / ln, hy = L[1]! / ln, hz = L[2]! / ln + 1;
    const hn = Math.hypot(hx, hy, hz);
    const spec = Math.max(0, (dx * hx + dy * hy + nz * hz) / hn) ** 40;
    const lin = 0.04 + 0.85 * ndl;
    const toSrgb = (v: number) => (v <= 0.0031308 ? 12.92 * v : 1.055 * v ** (1 / 2.4) - 0.055);
    c = [toSrgb(lin * 0.9 + spec), toSrgb(lin * 0.55 + spec), toSrgb(lin * 0.35 + spec)];
  }
  return c;
}

/** Thin anti-aliased lines at 15 degree steps: bright on dark (left), dark on bright (right). */
function linesScene(x: number, y: number): [number, number, number] {
  const left = x < 320;
  const bg = left ? 0.04 : 0.93;
  const fg = left ? 0.96 : 0.08;
  const cx = left ? 160 : 480, cy = 240;
  const px = x - cx, py = y - cy;
  const r = Math.hypot(px, py);
  let cov = 0;
  if (r > 12 && r < 150) {
    for (let k = 0; k < 12; k++) {
      const a = (k * Math.PI) / 12;
      // Distance to the line through the centre at angle a; widths 1, 1.5, 2 px in turn.
      const d = Math.abs(-Math.sin(a) * px + Math.cos(a) * py);
      const half = [0.5, 0.75, 1][k % 3]!;
      cov = Math.max(cov, smooth(1, d - half));
    }
  }
  // A few near-horizontal and near-vertical hairlines across the bottom.
  if (y > 410 && y < 470) {
    for (let k = 0; k < 6; k++) {
      const d = Math.abs(y - (415 + k * 10) - (x % 320) * Math.tan((k * Math.PI) / 180));
      cov = Math.max(cov, smooth(1, d - 0.5));
    }
  }
  const v = bg + (fg - bg) * cov;
  return [v, v, v];
}

/** Generates (once) the synthetic images into bench/.cache/generated/. */
export async function generatedFiles(): Promise<Map<string, string>> {
  const dir = join(CACHE_DIR, 'generated');
  mkdirSync(dir, { recursive: true });
  const out = new Map<string, string>();
  const scenes: Record<(typeof GENERATED)[number], (x: number, y: number) => [number, number, number]> = {
    sphere: sphereScene,
    lines: linesScene,
  };
  for (const name of GENERATED) {
    const file = join(dir, `${name}.png`);
    if (!existsSync(file)) await writeRgb(file, 640, 480, scenes[name]);
    out.set(name, file);
  }
  return out;
}

/** Decodes an image file to straight 8-bit RGBA with sharp. */
export async function decodeRgba(file: string | Buffer): Promise<RgbaImage> {
  const { data, info } = await sharp(file).ensureAlpha().raw().toBuffer({ resolveWithObject: true });
  if (info.channels !== 4) throw new Error(`decode: expected 4 channels, got ${info.channels}`);
  return { width: info.width, height: info.height, data: new Uint8Array(data.buffer, data.byteOffset, data.length) };
}

/** The normalized copy (8-bit sRGB, 3 channels, alpha flattened on black) of `src`. */
export async function normalizedCopy(src: string, name: string): Promise<string> {
  const dir = join(CACHE_DIR, 'input');
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `${name}.png`);
  if (!existsSync(file) || statSync(file).mtimeMs < statSync(src).mtimeMs) {
    await sharp(src).flatten({ background: '#000000' }).toColourspace('srgb').removeAlpha().png().toFile(file);
  }
  return file;
}

/** Source files by image name: the skimage photos (if they can be had) then the generated ones. */
export async function sourceFiles(log: (s: string) => void = console.log): Promise<Map<string, { file: string; origin: BenchImage['origin'] }>> {
  const out = new Map<string, { file: string; origin: BenchImage['origin'] }>();
  const dir = await skimageDir(log);
  if (dir) {
    for (const f of SKIMAGE_PHOTOS) {
      const p = join(dir, f);
      if (existsSync(p)) out.set(f.replace(/\.[^.]+$/, ''), { file: p, origin: 'skimage' });
      else log(`skipping ${f}: not in the skimage package`);
    }
  }
  for (const [name, file] of await generatedFiles()) out.set(name, { file, origin: 'generated' });
  return out;
}

/**
 * The benchmark images, optionally only those named in `only` (unknown names are reported).
 * Each is normalized and decoded.
 */
export async function loadBenchImages(only?: readonly string[], log: (s: string) => void = console.log): Promise<BenchImage[]> {
  const files = await sourceFiles(log);
  if (only) {
    for (const n of only) if (!files.has(n)) log(`unknown or unavailable image "${n}" (have: ${[...files.keys()].join(', ')})`);
  }
  const images: BenchImage[] = [];
  for (const [name, { file, origin }] of files) {
    if (only && !only.includes(name)) continue;
    const norm = await normalizedCopy(file, name);
    images.push({ name, origin, file: norm, rgba: await decodeRgba(norm) });
  }
  return images;
}

/**
 * A 640x480 photo for the speed bench (astronaut, else coffee, else any skimage photo, else the
 * generated sphere scene), resized with sharp to fill 640x480 (centre crop); cached as a PNG.
 */
export async function photo640(log: (s: string) => void = console.log): Promise<{ file: string; source: string }> {
  const files = await sourceFiles(log);
  const pick = ['astronaut', 'coffee', ...files.keys()].find((n) => files.get(n)?.origin === 'skimage') ?? 'sphere';
  const src = files.get(pick)!.file;
  const file = join(CACHE_DIR, `photo-640x480-${pick}.png`);
  if (!existsSync(file)) {
    await sharp(src).flatten({ background: '#000000' }).toColourspace('srgb').resize(640, 480, { fit: 'cover' }).removeAlpha().png().toFile(file);
  }
  return { file, source: pick };
}

/**
 * A 4000x3000 (12 MP) JPEG, quality 90, for the CLI bench: a photo upscaled to cover 4000x3000
 * with fine deterministic noise and a texture added so it does not compress trivially. Cached.
 */
export async function bigJpeg(log: (s: string) => void = console.log): Promise<{ file: string; bytes: number; source: string }> {
  const { file, source } = await noisyJpeg(4000, 3000, `big-4000x3000`, log);
  return { file, bytes: statSync(file).size, source };
}

/**
 * A W x H JPEG (q90) of the bench photo with fine deterministic noise and texture, so it does not
 * compress trivially. Cached as `<prefix>-<source>.jpg`.
 */
export async function noisyJpeg(W: number, H: number, prefix: string, log: (s: string) => void = console.log): Promise<{ file: string; source: string }> {
  const { file: photo, source } = await photo640(log);
  const file = join(CACHE_DIR, `${prefix}-${source}.jpg`);
  if (!existsSync(file)) {
    const base = await sharp(photo).resize(W, H, { fit: 'cover', kernel: 'lanczos3' }).removeAlpha().raw().toBuffer();
    let seed = 0x9e3779b9;
    const rnd = () => {
      // xorshift32
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

/** A test pattern for checking a tool's orientation: a square in the middle, `fg` on `bg` (0..255). */
export async function squarePattern(fg: number, bg: number): Promise<string> {
  const dir = join(CACHE_DIR, 'generated');
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `square-${fg}-on-${bg}.png`);
  if (!existsSync(file)) {
    const w = 320, h = 160;
    const buf = Buffer.alloc(w * h * 3, bg);
    for (let y = 40; y < 120; y++) buf.fill(fg, (y * w + 80) * 3, (y * w + 240) * 3);
    await sharp(buf, { raw: { width: w, height: h, channels: 3 } }).png().toFile(file);
  }
  return file;
}

/** A 1x1 PNG (for measuring a peer's startup cost). */
export async function tinyPng(): Promise<string> {
  const dir = join(CACHE_DIR, 'generated');
  mkdirSync(dir, { recursive: true });
  const file = join(dir, 'one-pixel.png');
  if (!existsSync(file)) await sharp(Buffer.from([128, 128, 128]), { raw: { width: 1, height: 1, channels: 3 } }).png().toFile(file);
  return file;
}
