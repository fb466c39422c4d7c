import { test } from 'node:test';
import assert from 'node:assert/strict';
import { crc32, deflateSync } from 'node:zlib';
import sharp from 'sharp';
import { decodeImage } from '../src/node/index.js';
import { render } from '../src/core/render.js';
import { formatResult } from '../src/core/format/index.js';

/**
 * A baseline uncompressed little-endian RGB TIFF with 16-bit samples, written by hand: sharp
 * rescales raw 16-bit input, and the case that matters is samples stored exactly as given.
 */
function tiff16(width: number, height: number, sample: (x: number, y: number) => number): Buffer {
  const entries: [tag: number, type: number, count: number, value: number][] = [];
  const dataBytes = width * height * 3 * 2;
  const ifdOffset = 8;
  const nEntries = 10;
  const ifdSize = 2 + nEntries * 12 + 4;
  const bpsOffset = ifdOffset + ifdSize;
  const stripOffset = bpsOffset + 6;
  const SHORT = 3, LONG = 4;
  entries.push([256, LONG, 1, width], [257, LONG, 1, height], [258, SHORT, 3, bpsOffset], [259, SHORT, 1, 1], [262, SHORT, 1, 2],
    [273, LONG, 1, stripOffset], [277, SHORT, 1, 3], [278, LONG, 1, height], [279, LONG, 1, dataBytes], [284, SHORT, 1, 1]);
  const buf = Buffer.alloc(stripOffset + dataBytes);
  buf.write('II', 0, 'latin1');
  buf.writeUInt16LE(42, 2);
  buf.writeUInt32LE(ifdOffset, 4);
  buf.writeUInt16LE(nEntries, ifdOffset);
  entries.forEach(([tag, type, count, value], i) => {
    const o = ifdOffset + 2 + i * 12;
    buf.writeUInt16LE(tag, o);
    buf.writeUInt16LE(type, o + 2);
    buf.writeUInt32LE(count, o + 4);
    if (type === SHORT && count === 1) buf.writeUInt16LE(value, o + 8);
    else buf.writeUInt32LE(value, o + 8);
  });
  buf.writeUInt32LE(0, ifdOffset + 2 + nEntries * 12);
  for (let k = 0; k < 3; k++) buf.writeUInt16LE(16, bpsOffset + 2 * k);
  for (let y = 0, o = stripOffset; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const v = sample(x, y);
      for (let c = 0; c < 3; c++, o += 2) buf.writeUInt16LE(v, o);
    }
  }
  return buf;
}

const OPTS = { maxBytes: 50_000_000, maxPixels: 50_000_000 };

test('a 16-bit TIFF whose samples span 0..255 keeps its 256 levels and does not render blank', async () => {
  // A bright disc on a dark ramp, in 8-bit values stored as 16-bit samples.
  const file = tiff16(64, 32, (x, y) => (Math.hypot(x - 32, (y - 16) * 2) < 12 ? 255 : x * 2));
  const meta = await sharp(file).metadata();
  assert.equal(meta.format, 'tiff');
  assert.equal(meta.depth, 'ushort');
  const img = await decodeImage(file, OPTS);
  const at = (x: number, y: number) => img.data[(y * img.width + x) * 4]!;
  assert.equal(at(32, 16), 255);
  assert.equal(at(10, 2), 20);
  const text = formatResult(render(img, { columns: 32 }), 'text').body;
  assert.match(text, /[^ \n]/, 'the art is not blank');
  // The disc is drawn denser than the dark corner.
  const lines = text.split('\n');
  assert.notEqual(lines[4]![16], ' ');
});

test('a 16-bit TIFF using its full range is converted as before (about value / 257)', async () => {
  const file = tiff16(16, 8, (x) => x * 4096 + 257);
  const img = await decodeImage(file, OPTS);
  for (let x = 0; x < 16; x++) assert.ok(Math.abs(img.data[x * 4]! - (x * 4096 + 257) / 257) <= 1, `x ${x}: ${img.data[x * 4]}`);
});

/** A 16-bit PNG (colour type 6 RGBA or 4 grey+alpha) written by hand, samples stored as given. */
function png16(width: number, height: number, colourType: 4 | 6, pixel: (x: number, y: number) => readonly number[]): Buffer {
  const chunk = (type: string, data: Buffer) => {
    const td = Buffer.concat([Buffer.from(type, 'latin1'), data]);
    const out = Buffer.alloc(td.length + 8);
    out.writeUInt32BE(data.length, 0);
    td.copy(out, 4);
    out.writeUInt32BE(crc32(td), td.length + 4);
    return out;
  };
  const bands = colourType === 6 ? 4 : 2;
  const raw = Buffer.alloc(height * (1 + width * bands * 2));
  for (let y = 0, o = 0; y < height; y++) {
    raw[o++] = 0;
    for (let x = 0; x < width; x++) for (const v of pixel(x, y)) o = raw.writeUInt16BE(v, o);
  }
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr.set([16, colourType, 0, 0, 0], 8);
  return Buffer.concat([Buffer.from([137, 80, 78, 71, 13, 10, 26, 10]), chunk('IHDR', ihdr), chunk('IDAT', deflateSync(raw)), chunk('IEND', Buffer.alloc(0))]);
}

test('a 16-bit PNG with alpha whose samples all span 0..255 widens its alpha too: opaque stays opaque, not blank', async () => {
  const rgba = await decodeImage(png16(64, 32, 6, (x) => [x * 4, 255 - x * 4, 128, 255]), OPTS);
  const grey = await decodeImage(png16(64, 32, 4, (x) => [x * 4, 255]), OPTS);
  for (const img of [rgba, grey]) {
    for (let i = 3; i < img.data.length; i += 4) assert.equal(img.data[i], 255, 'opaque');
    assert.equal(img.data[10 * 4], 40);
    assert.match(formatResult(render(img, { columns: 32 }), 'text').body, /[^ \n]/, 'the art is not blank');
  }
  // Semi-transparent in 8-bit values: alpha widened with the colour (x * 4 of 255).
  const semi = await decodeImage(png16(64, 32, 6, (x) => [255, 255, 255, x * 4]), OPTS);
  assert.equal(semi.data[10 * 4 + 3], 40);
  // A true 16-bit alpha is kept as it is (65535 is opaque) while the narrow colour is widened.
  const full = await decodeImage(png16(64, 32, 6, (x) => [x * 4, 0, 0, 65535]), OPTS);
  assert.equal(full.data[10 * 4], 40);
  assert.equal(full.data[10 * 4 + 3], 255);
});

test('an image over 1024 px across is checked on its reduced samples: 8-bit values widened, a full range kept, a lone bright sample still widened', async () => {
  // Larger than the check's 1024 px: its samples are a linear reduction of these.
  const narrow = await decodeImage(tiff16(2600, 8, (x) => (x % 256)), OPTS);
  assert.ok(Math.abs(narrow.data[(200) * 4]! - 200) <= 1, `widened: ${narrow.data[200 * 4]}`);
  const full = await decodeImage(tiff16(2600, 8, (x) => (x * 25) % 65536), OPTS);
  assert.ok(Math.abs(full.data[2000 * 4]! - ((2000 * 25) % 65536) / 257) <= 1, `kept: ${full.data[2000 * 4]}`);
  // One sample at 65535 in a field of 8-bit values: its mean with its neighbours stays above 255,
  // so the image reads as a true 16-bit one, as the exact maximum said.
  const speck = await decodeImage(tiff16(2600, 8, (x, y) => (x === 1300 && y === 4 ? 65535 : 100)), OPTS);
  assert.ok(speck.data[(4 * 2600 + 1300) * 4]! >= 254 && speck.data[0]! <= 1, 'not widened');
});
