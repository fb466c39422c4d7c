import { test } from 'node:test';
import assert from 'node:assert/strict';
import zlib from 'node:zlib';
import sharp from 'sharp';
import type { Sharp } from 'sharp';
import {
  ALLOWED_FORMATS,
  ImageInputError,
  decodeFrames,
  decodeImage,
  fromSharpError,
  probeImage,
  type DecodedFrame,
  type ImageInputErrorCode,
} from '../src/node/index.js';
import { MAX_JPEG_SCANS, gifComplete, jpegScans, tiffPages, withoutPngText } from '../src/node/structure.js';
import { DecodeBudget } from '../src/node/decode-budget.js';

const MAX = 50_000_000;

/** Raw pixels of one colour. */
function solid(width: number, height: number, rgba: readonly number[]): Buffer {
  const ch = rgba.length;
  const buf = Buffer.alloc(width * height * ch);
  for (let i = 0; i < width * height; i++) for (let c = 0; c < ch; c++) buf[i * ch + c] = rgba[c]!;
  return buf;
}

function fromRaw(data: Buffer, width: number, height: number, channels: 1 | 2 | 3 | 4, pageHeight?: number) {
  return sharp(data, { raw: { width, height, channels, ...(pageHeight ? { pageHeight } : {}) } });
}

function px(img: { width: number; data: Uint8Array }, x: number, y: number): number[] {
  const i = (y * img.width + x) * 4;
  return [img.data[i]!, img.data[i + 1]!, img.data[i + 2]!, img.data[i + 3]!];
}

function near(actual: readonly number[], expected: readonly number[], tol: number, what = ''): void {
  for (let c = 0; c < expected.length; c++) {
    assert.ok(
      Math.abs(actual[c]! - expected[c]!) <= tol,
      `${what} channel ${c}: got [${actual.join(',')}], expected [${expected.join(',')}] ±${tol}`,
    );
  }
}

async function rejectsWith(p: Promise<unknown>, code: ImageInputErrorCode, status: number): Promise<ImageInputError> {
  let caught: unknown;
  try {
    await p;
  } catch (err) {
    caught = err;
  }
  assert.ok(caught instanceof ImageInputError, `expected ImageInputError(${code}), got ${String(caught)}`);
  assert.equal(caught.reason, code, caught.message);
  assert.equal(caught.status, status);
  assert.doesNotMatch(caught.message, /\/tmp|\/home|\/work|node_modules|Vips|\n\s+at /);
  return caught;
}

/** A PNG chunk with a correct CRC. */
function pngChunk(type: string, data: Buffer): Buffer {
  const len = Buffer.alloc(4);
  len.writeUInt32BE(data.length);
  const typed = Buffer.concat([Buffer.from(type, 'latin1'), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(zlib.crc32(typed) >>> 0);
  return Buffer.concat([len, typed, crc]);
}

/** A tiny PNG whose header claims width x height RGB pixels (a decompression bomb). */
function bombPng(width: number, height: number, rows = 4): Buffer {
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr[8] = 8; // bit depth
  ihdr[9] = 2; // RGB
  const idat = zlib.deflateSync(Buffer.alloc((width * 3 + 1) * rows)); // a few zero rows
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    pngChunk('IHDR', ihdr),
    pngChunk('IDAT', idat),
    pngChunk('IEND', Buffer.alloc(0)),
  ]);
}

const COLOUR = [200, 60, 30] as const;

const encoders: Record<string, (s: Sharp) => Sharp> = {
  jpeg: (s) => s.jpeg({ quality: 95 }),
  png: (s) => s.png(),
  webp: (s) => s.webp({ quality: 95 }),
  gif: (s) => s.gif(),
  avif: (s) => s.avif({ quality: 80 }),
  tiff: (s) => s.tiff(),
};

for (const [name, encode] of Object.entries(encoders)) {
  test(`decodes ${name} to RGBA at the right size and colour`, async () => {
    const bytes = await encode(fromRaw(solid(64, 48, COLOUR), 64, 48, 3)).toBuffer();
    const img = await decodeImage(bytes, { maxPixels: MAX });
    assert.equal(img.format, name);
    assert.equal(img.width, 64);
    assert.equal(img.height, 48);
    assert.equal(img.sourceWidth, 64);
    assert.equal(img.sourceHeight, 48);
    assert.equal(img.data.length, 64 * 48 * 4);
    assert.ok(img.data instanceof Uint8Array);
    near(px(img, 32, 24), [...COLOUR, 255], name === 'gif' ? 16 : 10, name);
    const probe = await probeImage(bytes);
    assert.deepEqual(probe, { format: name, width: 64, height: 48, pages: 1 });
  });
}

test('ALLOWED_FORMATS is the raster whitelist', () => {
  assert.deepEqual([...ALLOWED_FORMATS].sort(), ['gif', 'heif', 'jpeg', 'png', 'tiff', 'webp']);
});

test('EXIF orientation 6 swaps width/height and moves pixels', async () => {
  // 40x20, a red 10x10 block in the top-left corner on black.
  const raw = Buffer.alloc(40 * 20 * 3);
  for (let y = 0; y < 10; y++) for (let x = 0; x < 10; x++) raw[(y * 40 + x) * 3] = 255;
  const jpeg = await fromRaw(raw, 40, 20, 3).withMetadata({ orientation: 6 }).jpeg({ quality: 95 }).toBuffer();
  assert.equal((await sharp(jpeg).metadata()).orientation, 6);
  const img = await decodeImage(jpeg, { maxPixels: MAX });
  assert.equal(img.width, 20);
  assert.equal(img.height, 40);
  assert.equal(img.sourceWidth, 20);
  assert.equal(img.sourceHeight, 40);
  // Orientation 6 = rotate 90° clockwise: the top-left block ends up top-right.
  near(px(img, 15, 4), [255, 0, 0], 40, 'top-right');
  near(px(img, 4, 4), [0, 0, 0], 40, 'top-left');
  near(px(img, 15, 35), [0, 0, 0], 40, 'bottom-right');
  const probe = await probeImage(jpeg);
  assert.equal(probe.width, 20);
  assert.equal(probe.height, 40);
  assert.equal(img.opaque, true, 'no alpha band: marked opaque');
});

test('alpha is preserved, not flattened (straight, also after shrinking)', async () => {
  const png = await fromRaw(solid(8, 8, [10, 200, 90, 128]), 8, 8, 4).png().toBuffer();
  const img = await decodeImage(png, { maxPixels: MAX });
  near(px(img, 3, 3), [10, 200, 90, 128], 1);
  assert.equal(img.opaque, undefined, 'an alpha band: not marked opaque');
  const big = await fromRaw(solid(200, 100, [10, 200, 90, 128]), 200, 100, 4).png().toBuffer();
  const shrunk = await decodeImage(big, { maxPixels: MAX, targetWidth: 50 });
  assert.equal(shrunk.width, 50);
  near(px(shrunk, 25, 12), [10, 200, 90, 128], 2);
});

test('CMYK JPEG without and with an ICC profile decodes to sRGB', async () => {
  const red = fromRaw(solid(16, 16, [255, 0, 0]), 16, 16, 3);
  const plain = await red.clone().toColourspace('cmyk').jpeg().toBuffer();
  const withIcc = await red.clone().withIccProfile('cmyk').jpeg().toBuffer();
  const m1 = await sharp(plain).metadata();
  const m2 = await sharp(withIcc).metadata();
  assert.equal(m1.space, 'cmyk');
  assert.equal(m1.hasProfile, false);
  assert.equal(m2.space, 'cmyk');
  assert.equal(m2.hasProfile, true);
  for (const bytes of [plain, withIcc]) {
    const img = await decodeImage(bytes, { maxPixels: MAX });
    assert.equal(img.data.length, 16 * 16 * 4);
    const [r, g, b, a] = px(img, 8, 8);
    assert.ok(r! > 190 && g! < 80 && b! < 80 && a === 255, `CMYK red came out as ${[r, g, b, a].join(',')}`);
  }
});

test('16-bit, palette, grey and grey+alpha PNGs decode to 8-bit RGBA', async () => {
  const p16 = await fromRaw(solid(8, 8, [255, 128, 0]), 8, 8, 3).toColourspace('rgb16').png().toBuffer();
  assert.equal((await sharp(p16).metadata()).depth, 'ushort');
  near(px(await decodeImage(p16, { maxPixels: MAX }), 4, 4), [255, 128, 0, 255], 1, '16-bit');

  const pal = await fromRaw(solid(8, 8, [0, 0, 255]), 8, 8, 3).png({ palette: true }).toBuffer();
  assert.equal((await sharp(pal).metadata()).isPalette, true);
  near(px(await decodeImage(pal, { maxPixels: MAX }), 4, 4), [0, 0, 255, 255], 2, 'palette');

  const grey = await fromRaw(solid(8, 8, [90]), 8, 8, 1).toColourspace('b-w').png().toBuffer();
  assert.equal((await sharp(grey).metadata()).channels, 1);
  const g = await decodeImage(grey, { maxPixels: MAX });
  assert.equal(g.data.length, 8 * 8 * 4);
  near(px(g, 4, 4), [90, 90, 90, 255], 1, 'grey');

  const greyA = await fromRaw(solid(8, 8, [90, 64]), 8, 8, 2).toColourspace('b-w').png().toBuffer();
  assert.equal((await sharp(greyA).metadata()).channels, 2);
  const ga = await decodeImage(greyA, { maxPixels: MAX });
  assert.equal(ga.data.length, 8 * 8 * 4);
  near(px(ga, 4, 4), [90, 90, 90, 64], 1, 'grey+alpha');
});

test('SVG is refused from its header, before anything is rasterized', async () => {
  const svg = Buffer.from(
    '<svg xmlns="http://www.w3.org/2000/svg" width="20000" height="20000"><rect width="20000" height="20000" fill="red"/></svg>',
  );
  const t0 = performance.now();
  // If the pixel limit or a decode came first this would be too_many_pixels (or slow).
  const err = await rejectsWith(decodeImage(svg, { maxPixels: 1_000_000 }), 'unsupported_format', 400);
  assert.match(err.message, /SVG/);
  assert.ok(performance.now() - t0 < 1000);
  const small = Buffer.from('<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"/>');
  await rejectsWith(decodeImage(small, { maxPixels: MAX }), 'unsupported_format', 400);
  await rejectsWith(probeImage(small), 'unsupported_format', 400);
  // An SVG without dimensions makes libvips' svgload fail on the header: still unsupported.
  const bare = Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"><circle r="5"/></svg>');
  await rejectsWith(decodeImage(bare, { maxPixels: MAX }), 'unsupported_format', 400);
  await rejectsWith(decodeFrames(small, { maxPixels: MAX }).next(), 'unsupported_format', 400);
});

test('random bytes, empty input and over-long input are refused', async () => {
  const random = Buffer.alloc(4096);
  let s = 42;
  for (let i = 0; i < random.length; i++) random[i] = (s = (s * 1103515245 + 12345) >>> 0) >>> 24;
  let caught: unknown;
  try {
    await decodeImage(random, { maxPixels: MAX });
  } catch (err) {
    caught = err;
  }
  assert.ok(caught instanceof ImageInputError);
  assert.ok(['unsupported_format', 'undecodable'].includes(caught.reason), caught.reason);
  assert.equal(caught.status, 400);

  await rejectsWith(decodeImage(new Uint8Array(0), { maxPixels: MAX }), 'empty', 400);
  await rejectsWith(probeImage(new Uint8Array(0)), 'empty', 400);
  // Named by the function called (it said "decode: input").
  await assert.rejects(probeImage('x' as never), /^TypeError: probeImage: input must be a Uint8Array or Buffer \(got a string\)$/);

  const png = await fromRaw(solid(8, 8, [1, 2, 3]), 8, 8, 3).png().toBuffer();
  await rejectsWith(decodeImage(png, { maxPixels: MAX, maxBytes: 10 }), 'too_large', 413);
  // A valid PNG signature followed by garbage.
  const broken = Buffer.concat([png.subarray(0, 8), random.subarray(0, 200)]);
  caught = undefined;
  try {
    await decodeImage(broken, { maxPixels: MAX });
  } catch (err) {
    caught = err;
  }
  assert.ok(caught instanceof ImageInputError && caught.status === 400);
});

test('text that sharp\'s SVG loader claims (a script or a page with <svg in it) is of an unsupported format, not a damaged image, as the CLI says', async () => {
  await rejectsWith(decodeImage(Buffer.from('const icon = "<svg width=10>";\nexport default icon;\n'), { maxPixels: MAX }), 'unsupported_format', 400);
  await rejectsWith(decodeImage(Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"><rect'), { maxPixels: MAX }), 'unsupported_format', 400);
  await assert.rejects(decodeImage(Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"><rect'), { maxPixels: MAX }), /^ImageInputError: SVG \(vector\) images are not supported/);
  // Only such text: a JPEG or a GIF cut inside its first bytes is still damaged.
  for (const head of [[0xff, 0xd8], [0x47, 0x49, 0x46, 0x38]]) await rejectsWith(decodeImage(Buffer.from(head), { maxPixels: MAX }), 'undecodable', 400);
});

test('a truncated JPEG is refused as undecodable', async () => {
  const jpeg = await sharp({
    create: { width: 256, height: 256, channels: 3, background: '#000', noise: { type: 'gaussian', mean: 128, sigma: 40 } },
  })
    .jpeg()
    .toBuffer();
  const cut = jpeg.subarray(0, Math.floor(jpeg.length * 0.6));
  await rejectsWith(decodeImage(cut, { maxPixels: MAX }), 'undecodable', 400);
  await rejectsWith(decodeImage(cut, { maxPixels: MAX, targetWidth: 64 }), 'undecodable', 400);
});

test('a GIF cut short is refused (libnsgif drew its last frame half blank, unwarned); partial decodeImage marks it damaged', async () => {
  const w = 64, h = 48, n = 5, buf = Buffer.alloc(w * h * n * 4);
  for (let i = 0; i < buf.length; i++) buf[i] = (i * 7919) % 251;
  const gif = await sharp(buf, { raw: { width: w, height: h * n, channels: 4, pageHeight: h } } as never).gif({ delay: [100, 200, 300, 40, 0] }).toBuffer();
  assert.equal(gifComplete(gif), true);
  let whole = 0;
  for await (const _ of decodeFrames(gif, { maxPixels: MAX })) whole++;
  assert.equal(whole, 5);
  for (const frac of [0.3, 0.6, 0.95]) {
    const cut = gif.subarray(0, Math.floor(gif.length * frac));
    assert.equal(gifComplete(cut), false, String(frac));
    await assert.rejects((async () => { for await (const _ of decodeFrames(cut, { maxPixels: MAX })) { /* read */ } })(), (e: unknown) => e instanceof ImageInputError && e.reason === 'undecodable', `frames at ${frac}`);
    await rejectsWith(decodeImage(cut, { maxPixels: MAX }), 'undecodable', 400);
    const part = await decodeImage(cut, { maxPixels: MAX, partial: true });
    assert.equal(part.damaged, true, `partial at ${frac}`);
    // The frames the file holds, each marked (v2a play of a file still downloading).
    const frames = [];
    for await (const f of decodeFrames(cut, { maxPixels: MAX, partial: true })) frames.push(f);
    assert.ok(frames.length >= 1 && frames.length <= 5 && frames.every((f) => f.damaged === true), `frames at ${frac}: ${frames.map((f) => f.damaged)}`);
  }
  for await (const f of decodeFrames(gif, { maxPixels: MAX, partial: true })) assert.equal(f.damaged, undefined, 'an intact GIF is not marked');
  // Zero padding after the trailer is still a whole file; not a GIF: nothing to say.
  assert.equal(gifComplete(Buffer.concat([gif, Buffer.alloc(16)])), true);
  assert.equal(gifComplete(Buffer.from('not a gif at all, no')), true);
});

test('decode options of the wrong kind are refused, naming the option and what it got', async () => {
  const png = await sharp({ create: { width: 8, height: 8, channels: 3, background: '#888' } }).png().toBuffer();
  const refused = async (opts: Record<string, unknown>, message: RegExp) => assert.rejects(decodeImage(png, opts as never), message);
  await refused({ partial: 'false' }, /^TypeError: decode: partial must be a boolean \(got "false"\)$/);
  await refused({ checkSize: 'x' }, /decode: checkSize must be a function \(got "x"\)/);
  await refused({ whileDecoding: 5 }, /decode: whileDecoding must be a function \(got 5\)/);
  await refused({ limitNames: 5 }, /decode: limitNames must be an object of names/);
  await refused({ targetWidth: '10' }, /^TypeError: decode: targetWidth must be a number \(got "10"\)$/);
  await refused({ maxPixels: '5' }, /^TypeError: decode: maxPixels must be a number \(got "5"\)$/);
  await refused({ targetWidth: 0.5 }, /^RangeError: decode: targetWidth must be an integer from 1 to 100000000 \(got 0.5\)$/);
  await refused({ maxPixels: -1 }, /decode: maxPixels must be a positive integer \(got -1\)/);
  // Each function takes only its own options.
  await refused({ maxFrames: 2 }, /maxFrames/);
  await assert.rejects((async () => { for await (const _ of decodeFrames(png, { maxFrames: 0 })) { /* read */ } })(), /^RangeError: decodeFrames: maxFrames must be a positive integer \(got 0\)$/);
  await assert.rejects((async () => { for await (const _ of decodeFrames(png, { partial: 'yes' } as never)) { /* read */ } })(), /^TypeError: decode: partial must be a boolean/);
});

test('partial: a truncated JPEG or PNG decodes as far as it goes, marked damaged; an intact one is not marked', async () => {
  const photo = sharp({ create: { width: 256, height: 256, channels: 3, background: '#000', noise: { type: 'gaussian', mean: 210, sigma: 20 } } });
  for (const bytes of [await photo.clone().jpeg().toBuffer(), await photo.clone().png().toBuffer()]) {
    const whole = await decodeImage(bytes, { maxPixels: MAX, partial: true });
    assert.equal(whole.damaged, undefined);
    const cut = bytes.subarray(0, Math.floor(bytes.length * 0.5));
    const part = await decodeImage(cut, { maxPixels: MAX, partial: true });
    assert.equal(part.damaged, true);
    assert.deepEqual([part.width, part.height], [256, 256]);
    // decodeFrames takes the same option: one frame, the same pixels, marked.
    const frames = [];
    for await (const f of decodeFrames(cut, { maxPixels: MAX, partial: true })) frames.push(f);
    assert.deepEqual(frames.map((f) => [f.damaged, f.width, f.height]), [[true, 256, 256]]);
    assert.deepEqual(frames[0]!.data, part.data);
    await assert.rejects((async () => { for await (const _ of decodeFrames(cut, { maxPixels: MAX })) { /* read */ } })(), (e: unknown) => e instanceof ImageInputError && e.reason === 'undecodable');
    // The top rows came from the file: light, as the image is.
    const top = part.data.subarray(0, 256 * 16 * 4);
    assert.ok(top.reduce((a, v) => a + v, 0) / top.length > 180, 'the top rows are the image');
  }
  // A header cut short is no image to show: still refused.
  const jpeg = await photo.clone().jpeg().toBuffer();
  await rejectsWith(decodeImage(jpeg.subarray(0, 40), { maxPixels: MAX, partial: true }), 'undecodable', 400);
});

test('a TIFF cut short (its directory gone) is damaged, not of an unsupported format; text stays unsupported', async () => {
  // A TIFF header whose first directory lies past the end of the file (written after the pixels, then cut).
  const cut = Buffer.concat([Buffer.from('II*\0', 'latin1'), Buffer.from([0x00, 0x10, 0x00, 0x00]), Buffer.alloc(512, 0x80)]);
  await rejectsWith(decodeImage(cut, { maxPixels: MAX }), 'undecodable', 400);
  await rejectsWith(decodeImage(Buffer.from('plain text, no image at all'), { maxPixels: MAX }), 'unsupported_format', 400);
});

test('a decompression bomb (30000 x 30000 header) is refused quickly and cheaply', async () => {
  const bomb = bombPng(30000, 30000);
  assert.ok(bomb.length < 2000);
  const rss0 = process.memoryUsage().rss;
  const t0 = performance.now();
  const err = await rejectsWith(decodeImage(bomb, { maxPixels: MAX }), 'too_many_pixels', 413);
  const ms = performance.now() - t0;
  assert.ok(ms < 1000, `took ${ms} ms`);
  assert.ok(process.memoryUsage().rss - rss0 < 200 * 1024 * 1024, 'allocated too much');
  assert.match(err.message, /30000 x 30000/);
  await rejectsWith(decodeFrames(bomb, { maxPixels: MAX }).next(), 'too_many_pixels', 413);
  // probeImage reads the header and applies no limit.
  assert.deepEqual(await probeImage(bomb), { format: 'png', width: 30000, height: 30000, pages: 1 });
  // Within an absurdly high maxPixels, libvips' own checks still refuse the tiny IDAT.
  await assert.rejects(decodeImage(bomb, { maxPixels: 30000 * 30000, targetWidth: 100, timeoutSeconds: 5 }), ImageInputError);
});

test('a PNG\'s text chunks are dropped before libvips reads it: compressed ones (zTXt, iTXt) were inflated without bound, twice', async () => {
  const png = await sharp({ create: { width: 10, height: 10, channels: 3, background: { r: 200, g: 40, b: 90 } } }).png().toBuffer();
  const iend = png.length - 12;
  // 8 zTXt chunks of 25 MB of text each, 25 KB compressed: libpng inflated 200 MB on the header
  // read and again on the decode (about 2.5 s and 250 MB per 50 MB chunk and read).
  const ztxt = pngChunk('zTXt', Buffer.concat([Buffer.from('Comment\0\0', 'latin1'), zlib.deflateSync(Buffer.alloc(25_000_000, 0x41), { level: 9 })]));
  const itxt = pngChunk('iTXt', Buffer.from('Title\0\0\0\0\0hello', 'latin1'));
  const text = pngChunk('tEXt', Buffer.from('Software\0v2a', 'latin1'));
  const bomb = Buffer.concat([png.subarray(0, 33), text, ...Array<Buffer>(8).fill(ztxt), itxt, png.subarray(33, iend), ztxt, png.subarray(iend)]);
  assert.ok(bomb.length < 400_000, `${bomb.length} bytes`);
  assert.deepEqual(withoutPngText(bomb), png, 'every text chunk out, every other byte as it was');
  assert.equal(withoutPngText(png), png, 'a PNG without text is passed on as it is');
  const jpeg = await sharp({ create: { width: 4, height: 4, channels: 3, background: '#123' } }).jpeg().toBuffer();
  assert.equal(withoutPngText(jpeg), jpeg);
  // A length past the end (a file cut short) keeps the rest for the decoder to judge.
  const cut = Buffer.concat([png.subarray(0, 33), text, png.subarray(33, 60)]);
  assert.deepEqual(withoutPngText(cut), Buffer.concat([png.subarray(0, 33), png.subarray(33, 60)]));

  const t0 = performance.now();
  const image = await decodeImage(bomb, { maxPixels: MAX });
  assert.deepEqual(await probeImage(bomb), { format: 'png', width: 10, height: 10, pages: 1 });
  for await (const frame of decodeFrames(bomb, { maxPixels: MAX })) assert.equal(frame.width, 10);
  const ms = performance.now() - t0;
  assert.ok(ms < 3000, `took ${ms.toFixed(0)} ms`);
  assert.deepEqual([image.width, image.height, [...image.data.subarray(0, 4)]], [10, 10, [200, 40, 90, 255]]);
});

test('a PNG header past libspng\'s own bounds (2147483647 x 1) is too many pixels, not undecodable', async () => {
  const wide = bombPng(2 ** 31 - 1, 1, 0);
  const err = await rejectsWith(decodeImage(wide, { maxPixels: MAX }), 'too_many_pixels', 413);
  assert.match(err.message, /2147483647 x 1/);
  await rejectsWith(decodeFrames(wide, { maxPixels: MAX }).next(), 'too_many_pixels', 413);
  // Where the limit would allow it, it stays what libspng says: undecodable.
  await rejectsWith(decodeImage(wide, { maxPixels: 2 ** 31 }), 'undecodable', 400);
});

/** A JPEG of Gaussian noise: it does not compress away, so decoding it takes real work. */
function noisyJpeg(width: number, height: number): Promise<Buffer> {
  return sharp({ create: { width, height, channels: 3, background: '#000', noise: { type: 'gaussian', mean: 128, sigma: 30 } } })
    .jpeg({ quality: 80 })
    .toBuffer();
}

test('shrink-on-load: a 4000x3000 JPEG decodes near targetWidth', async () => {
  const jpeg = await noisyJpeg(4000, 3000);
  const img = await decodeImage(jpeg, { maxPixels: MAX, targetWidth: 480 });
  assert.ok(img.width >= 480 && img.width < 4000, `width ${img.width}`);
  assert.equal(img.height, Math.round((img.width * 3) / 4));
  assert.equal(img.sourceWidth, 4000);
  assert.equal(img.sourceHeight, 3000);
  assert.equal(img.data.length, img.width * img.height * 4);
  // Both sides: the result covers the target box.
  const both = await decodeImage(jpeg, { maxPixels: MAX, targetWidth: 200, targetHeight: 400 });
  assert.ok(both.width >= 200 && both.height >= 400 && both.width < 4000, `${both.width}x${both.height}`);
  // Never enlarges.
  const small = await fromRaw(solid(32, 16, [1, 2, 3]), 32, 16, 3).png().toBuffer();
  const same = await decodeImage(small, { maxPixels: MAX, targetWidth: 960 });
  assert.equal(same.width, 32);
  assert.equal(same.height, 16);
});

test('whileDecoding runs once, while libvips decodes the pixels, and what it throws does not fail the decode', async () => {
  const jpeg = await noisyJpeg(900, 600);
  const plain = await decodeImage(jpeg, { maxPixels: MAX, targetWidth: 320 });
  let calls = 0;
  let settled = false;
  const pending = decodeImage(jpeg, {
    maxPixels: MAX,
    targetWidth: 320,
    whileDecoding: () => {
      calls++;
      // Called after the header was read and the pixel decode handed to libvips: not yet done.
      assert.equal(settled, false);
      throw new Error('the caller\'s own failure');
    },
  });
  void pending.then(() => { settled = true; }, () => { settled = true; });
  const img = await pending;
  assert.equal(calls, 1);
  assert.deepEqual([img.width, img.height, Buffer.compare(img.data, plain.data)], [plain.width, plain.height, 0]);
  // A refused image never starts a decode, so there is nothing to overlap.
  let refusedCalls = 0;
  await assert.rejects(decodeImage(Buffer.from('not an image'), { maxPixels: MAX, whileDecoding: () => { refusedCalls++; } }), ImageInputError);
  assert.equal(refusedCalls, 0);
});

async function collect(gen: AsyncGenerator<DecodedFrame>): Promise<DecodedFrame[]> {
  const out: DecodedFrame[] = [];
  for await (const f of gen) out.push(f);
  return out;
}

const FRAME_COLOURS = [
  [255, 0, 0],
  [0, 255, 0],
  [0, 0, 255],
] as const;

function frameStrip(): Buffer {
  return Buffer.concat(FRAME_COLOURS.map((c) => solid(16, 16, c)));
}

for (const kind of ['gif', 'webp'] as const) {
  test(`animated ${kind}: decodeFrames yields 3 distinct frames, decodeImage the first`, async () => {
    const s = fromRaw(frameStrip(), 16, 48, 3, 16);
    const bytes = await (kind === 'gif'
      ? s.gif({ delay: [100, 200, 300], loop: 0 })
      : s.webp({ delay: [100, 200, 300], loop: 0, lossless: true })
    ).toBuffer();
    assert.equal((await probeImage(bytes)).pages, 3);
    const frames = await collect(decodeFrames(bytes, { maxPixels: MAX }));
    assert.equal(frames.length, 3);
    frames.forEach((f, i) => {
      assert.equal(f.index, i);
      assert.equal(f.count, 3);
      assert.equal(f.width, 16);
      assert.equal(f.height, 16);
      assert.equal(f.delayMs, [100, 200, 300][i]);
      near(px(f, 8, 8), [...FRAME_COLOURS[i]!, 255], 8, `frame ${i}`);
    });
    const first = await decodeImage(bytes, { maxPixels: MAX });
    assert.equal(first.width, 16);
    assert.equal(first.height, 16);
    near(px(first, 8, 8), [255, 0, 0, 255], 8, 'first frame');
    // Chunked (all 3 at once), chunks of 2 + 1, and one pipeline per frame; with and without
    // a resize (which must not bleed colour across frame borders).
    for (const maxPixels of [MAX, 16 * 16 * 2, 16 * 16]) {
      for (const targetWidth of [undefined, 8]) {
        const got = await collect(decodeFrames(bytes, { maxPixels, ...(targetWidth ? { targetWidth } : {}) }));
        assert.equal(got.length, 3);
        got.forEach((f, i) => {
          const side = targetWidth ?? 16;
          assert.equal(f.width, side);
          assert.equal(f.height, side);
          assert.equal(f.data.length, side * side * 4);
          for (const [x, y] of [[0, 0], [side - 1, side - 1], [side >> 1, 0], [0, side - 1]] as const) {
            near(px(f, x, y), [...FRAME_COLOURS[i]!, 255], 8, `maxPixels ${maxPixels} target ${targetWidth} frame ${i} (${x},${y})`);
          }
        });
      }
    }
    const capped = await collect(decodeFrames(bytes, { maxPixels: MAX, maxFrames: 2 }));
    assert.deepEqual(
      capped.map((f) => [f.index, f.count]),
      [
        [0, 2],
        [1, 2],
      ],
    );
  });
}

test('decodeFrames on a still image yields one frame', async () => {
  const png = await fromRaw(solid(8, 4, [5, 6, 7]), 8, 4, 3).png().toBuffer();
  const frames = await collect(decodeFrames(png, { maxPixels: MAX }));
  assert.equal(frames.length, 1);
  assert.equal(frames[0]!.index, 0);
  assert.equal(frames[0]!.count, 1);
  assert.equal(frames[0]!.delayMs, 0);
  near(px(frames[0]!, 2, 2), [5, 6, 7, 255], 1);
});

test('sharp errors map to safe ImageInputErrors', () => {
  const timeout = fromSharpError(new Error('timeout: 3% complete'), { timeoutSeconds: 5 });
  assert.equal(timeout.reason, 'decode_timeout');
  assert.equal(timeout.code, 'image-too-large');
  assert.equal(timeout.status, 413);
  const leaky = fromSharpError(new Error('VipsJpeg: "/srv/uploads/secret.jpg": premature end of JPEG image\n  at x'));
  assert.equal(leaky.reason, 'undecodable');
  assert.equal(leaky.code, 'undecodable-image');
  assert.doesNotMatch(leaky.message, /srv|secret|Vips/);
  assert.doesNotMatch(String(leaky.cause), /srv|secret/);
  assert.equal(fromSharpError(new Error('Input image exceeds pixel limit')).reason, 'too_many_pixels');
  assert.equal(fromSharpError(new Error('Input buffer contains unsupported image format')).reason, 'unsupported_format');
  assert.equal(fromSharpError(new Error('Input buffer contains unsupported image format')).code, 'unsupported-image');
});

test('a render of a decode shrunk on load has the rows and source size of the image itself (rows = round(columns x h / w / 2))', async () => {
  // 2912 x 250 at 58 columns: round(58 x 250 / 2912 / 2) = 2; the decode at 4 px a column is
  // 232 x 20, whose own shape would give round(2.5) = 3.
  const png = await sharp(solid(2912, 250, [90, 140, 200]), { raw: { width: 2912, height: 250, channels: 3 } }).png().toBuffer();
  const { render } = await import('../src/core/render.js');
  const { runJob } = await import('../src/core/job.js');
  const shrunk = await decodeImage(png, { maxPixels: MAX, targetWidth: 58 * 4 });
  assert.deepEqual([shrunk.width, shrunk.height, shrunk.sourceWidth, shrunk.sourceHeight], [232, 20, 2912, 250]);
  const full = render(await decodeImage(png, { maxPixels: MAX }), { columns: 58 });
  const fromShrunk = render(shrunk, { columns: 58 });
  const job = (await runJob({ kind: 'bytes', bytes: png }, { columns: 58, format: 'json' }, { decoder: decodeImage, limits: { maxBytes: MAX, maxPixels: MAX } })).result;
  for (const r of [full, fromShrunk, job]) {
    assert.equal(r.rows, 2);
    assert.deepEqual(r.source, { width: 2912, height: 250 });
  }
  // Library images without a source size keep their own shape; a half-given one is refused.
  assert.deepEqual(render({ width: 232, height: 20, data: shrunk.data }, { columns: 58 }).rows, 3);
  assert.throws(() => render({ width: 232, height: 20, data: shrunk.data, sourceWidth: 2912 }, { columns: 58 }), /sourceWidth and sourceHeight must be positive integers/);
});

test('a progressive JPEG with more scans than any encoder writes is refused before decoding; usual ones pass', async () => {
  const base = sharp({ create: { width: 64, height: 48, channels: 3, background: '#4080c0' } });
  for (const options of [{ progressive: true }, { progressive: true, mozjpeg: true }, { progressive: false }]) {
    const jpeg = await base.clone().jpeg(options).toBuffer();
    assert.ok(jpegScans(jpeg, 1e9) <= 10, JSON.stringify(options));
    assert.equal((await decodeImage(jpeg, { maxPixels: MAX })).width, 64);
  }
  // sharp's progressive JPEG with its last scan (SOS to EOI) written again and again.
  const jpeg = await base.clone().jpeg({ progressive: true }).toBuffer();
  const lastScan = jpeg.lastIndexOf(Buffer.from([0xff, 0xda]));
  const scan = jpeg.subarray(lastScan, jpeg.length - 2);
  const bomb = Buffer.concat([jpeg.subarray(0, jpeg.length - 2), ...Array.from({ length: MAX_JPEG_SCANS }, () => scan), jpeg.subarray(jpeg.length - 2)]);
  assert.equal(jpegScans(bomb, 1e9), jpegScans(jpeg, 1e9) + MAX_JPEG_SCANS);
  let decoding = false;
  const refused = (err: unknown) => err instanceof ImageInputError && err.code === 'undecodable-image' && /more than 100 progressive scans/.test(err.message);
  await assert.rejects(decodeImage(bomb, { maxPixels: MAX, whileDecoding: () => { decoding = true; } }), refused);
  await assert.rejects(decodeFrames(bomb, { maxPixels: MAX }).next(), refused);
  assert.equal(decoding, false, 'refused before the decode started');
});

test('checkSize sees the size after EXIF orientation, before any pixel is decoded; what it throws is thrown', async () => {
  const png = await sharp({ create: { width: 30, height: 20, channels: 3, background: '#808080' } }).withMetadata({ orientation: 6 }).jpeg().toBuffer();
  const seen: number[][] = [];
  let decoding = false;
  const no = new Error('not this size');
  await assert.rejects(decodeImage(png, { checkSize: (w, h) => { seen.push([w, h]); throw no; }, whileDecoding: () => { decoding = true; } }), (err) => err === no);
  assert.deepEqual(seen, [[20, 30]], 'rotated by its EXIF orientation');
  assert.equal(decoding, false);
  await assert.rejects(decodeFrames(png, { checkSize: () => { throw no; } }).next(), (err) => err === no);
  assert.equal((await decodeImage(png, { checkSize: () => undefined })).width, 20);
});

test('a TIFF of more than 10,000 pages is refused before libtiff walks them; sharp\'s TIFFs (classic and BigTIFF) count theirs', async () => {
  const base = sharp({ create: { width: 8, height: 6, channels: 3, background: '#808080' } });
  for (const bigtiff of [false, true]) {
    const tiff = await base.clone().tiff({ bigtiff }).toBuffer();
    assert.equal(tiffPages(tiff, 1e9), 1, `bigtiff ${bigtiff}`);
    assert.equal((await decodeImage(tiff, { maxPixels: MAX })).width, 8);
  }
  assert.equal(tiffPages(await base.clone().png().toBuffer(), 1e9), 0, 'not a TIFF');
  // A little-endian TIFF of empty directories, each linked to the next (6 bytes each); then one
  // whose last directory links back to the first.
  const chain = (n: number, loop = false) => {
    const buf = Buffer.alloc(8 + 6 * n);
    buf.write('II', 0, 'latin1');
    buf.writeUInt16LE(42, 2);
    buf.writeUInt32LE(8, 4);
    for (let i = 0; i < n; i++) buf.writeUInt32LE(i + 1 < n ? 8 + 6 * (i + 1) : loop ? 8 : 0, 8 + 6 * i + 2);
    return buf;
  };
  assert.equal(tiffPages(chain(10_001), 1e9), 10_001);
  assert.equal(tiffPages(chain(5, true), 1e9), 5, 'a loop ends the count');
  const refused = (err: unknown) => err instanceof ImageInputError && err.code === 'undecodable-image' && /more than 10000 pages/.test(err.message);
  await assert.rejects(decodeImage(chain(10_001), { maxPixels: MAX }), refused);
  await assert.rejects(probeImage(chain(10_001)), refused);
  await assert.rejects(decodeImage(chain(10_000), { maxPixels: MAX }), (err) => err instanceof ImageInputError && !/pages/.test(err.message), 'at the limit: the decoder\'s own word');
});

test('async checkSize and whileDecoding: a rejected checkSize refuses the image, a rejected whileDecoding is ignored; neither escapes as an unhandled rejection', async () => {
  const png = await sharp({ create: { width: 30, height: 20, channels: 3, background: '#808080' } }).png().toBuffer();
  const unhandled: unknown[] = [];
  const onUnhandled = (reason: unknown) => unhandled.push(reason);
  process.on('unhandledRejection', onUnhandled);
  try {
    const no = new Error('not this size');
    let decoding = false;
    await assert.rejects(decodeImage(png, { checkSize: async () => { throw no; }, whileDecoding: () => { decoding = true; } }), (err) => err === no);
    assert.equal(decoding, false, 'refused before any pixel is decoded');
    await assert.rejects(decodeFrames(png, { checkSize: async () => { throw no; } }).next(), (err) => err === no);
    const img = await decodeImage(png, { checkSize: async () => undefined, whileDecoding: async () => { throw new Error('the caller\'s own failure'); } });
    assert.equal(img.width, 30);
    await new Promise((r) => setTimeout(r, 20));
    assert.deepEqual(unhandled, []);
  } finally {
    process.off('unhandledRejection', onUnhandled);
  }
});

test('a decode out of time and an input over maxBytes share the code (413) but not the reason', async () => {
  // Both were reason too_large: a caller could tell them apart only by the message.
  const png = await sharp({ create: { width: 8, height: 8, channels: 3, background: '#808080' } }).png().toBuffer();
  const bytes = await rejectsWith(decodeImage(png, { maxPixels: MAX, maxBytes: 10 }), 'too_large', 413);
  const slow = fromSharpError(new Error('timeout: 40% complete'), { timeoutSeconds: 1 });
  assert.deepEqual([slow.reason, slow.code, slow.status], ['decode_timeout', bytes.code, 413]);
  assert.match(slow.message, /^The image took too long to decode \(limit 1 s\)\./);
  assert.equal(new ImageInputError('decode_timeout').message, 'The image took too long to decode. Use a smaller or simpler image.');
});

test('timeoutSeconds is whole seconds (libvips\' clock), refused otherwise', async () => {
  const png = await sharp({ create: { width: 8, height: 8, channels: 3, background: '#808080' } }).png().toBuffer();
  for (const t of [0.2, 1.5, -1, 3601, Number.NaN]) {
    await assert.rejects(decodeImage(png, { timeoutSeconds: t }), new RegExp(`^RangeError: decode: timeoutSeconds must be a whole number of seconds from 0 to 3600 \\(got ${String(t).replace('.', '\\.')}\\)$`), String(t));
  }
  assert.equal((await decodeImage(png, { timeoutSeconds: 1 })).width, 8);
});

test('timeoutSeconds holds for the whole call: each pipeline gets what the ones before it left, and none starts once it is spent', async () => {
  // A stand-in for a sharp pipeline that records the timeout it was given.
  const given: number[] = [];
  const pipeline = { timeout: ({ seconds }: { seconds: number }) => (given.push(seconds), pipeline) } as unknown as Sharp;
  const budget = new DecodeBudget(2);
  const work = (ms: number) => () => new Promise<void>((r) => setTimeout(r, ms));
  await budget.run(pipeline, work(1100));
  await budget.run(pipeline, work(950));
  await assert.rejects(budget.run(pipeline, work(0)), (err) => err instanceof ImageInputError && err.reason === 'decode_timeout' && /took too long to decode \(limit 2 s\)/.test(err.message));
  assert.deepEqual(given, [2, 1], 'the second pipeline had the second left, the third none');
  // No limit: no timeout is set at all.
  await new DecodeBudget(0).run(pipeline, work(0));
  assert.deepEqual(given, [2, 1]);
});

test('a refusal names the limit as the caller set it (the option; the settings for the render job) and never rounds both sides alike', async () => {
  const png = await sharp({ create: { width: 200, height: 150, channels: 3, background: '#808080' } }).png().toBuffer();
  const refusal = async (opts: Parameters<typeof decodeImage>[1]) => {
    try {
      await decodeImage(png, opts);
    } catch (err) {
      assert.ok(err instanceof ImageInputError);
      return err.message;
    }
    return assert.fail('refused');
  };
  // 90,000 bytes against 1,000 read "about 1 MiB; the limit is 1 MiB".
  // An 8-bit image not interlaced is told only the remedy that would help it.
  assert.equal(await refusal({ maxDecodedBytes: 1000 }), 'Decoding the image would take about 90,000 bytes (200 x 150 pixels x 3 channels x 8-bit); the limit is 1,000 bytes (maxDecodedBytes). Use a smaller image.');
  const deep = await sharp({ create: { width: 200, height: 150, channels: 3, background: '#808080' } }).toColourspace('rgb16').png({ progressive: true }).toBuffer();
  await assert.rejects(decodeImage(deep, { maxPixels: MAX, maxDecodedBytes: 1000 }), /16-bit\); the limit is 1,000 bytes \(maxDecodedBytes\)\. Use a smaller image, 8-bit, or not interlaced\.$/);
  assert.equal(await refusal({ maxPixels: 29_999 }), 'The image has too many pixels (200 x 150 = 30,000 pixels); the limit is 29,999 pixels (maxPixels). Use a smaller image.');
  assert.equal(await refusal({ maxBytes: 100 }), `The image is too large (${png.byteLength} bytes); the limit is 100 bytes (maxBytes).`);
  // The render job's limits are the settings: named so.
  const { runJob } = await import('../src/core/job.js');
  await assert.rejects(runJob({ kind: 'bytes', bytes: png }, { columns: 20 }, { decoder: decodeImage, limits: { maxBytes: 1 << 20, maxPixels: 1000, maxDecodedBytes: 1 << 20 } }),
    /^ImageInputError: The image has too many pixels \(200 x 150 = 30,000 pixels\); the limit is 1,000 pixels \(V2A_MAX_IMAGE_PIXELS\)\. Use a smaller image\.$/);
  await assert.rejects(runJob({ kind: 'bytes', bytes: png }, { columns: 20 }, { decoder: decodeImage, limits: { maxBytes: 100, maxPixels: MAX } }), /the limit is 100 bytes \(V2A_MAX_IMAGE_BYTES\)/);
});
