import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isPending } from '../src/core/lazy.js';
import { ERRORS, isV2aError } from '../src/core/errors.js';
import { colorsWhen, prepare, render } from '../src/core/render.js';
import { withDefaults } from '../src/core/params/validate.js';
import { formatResult } from '../src/core/format/index.js';
import { runJob } from '../src/core/job.js';
import { FrameRenderer } from '../src/core/video.js';
import { scene } from './helpers/images.js';
import type { RenderResult, RgbaImage } from '../src/core/types.js';

/** True while the result's colours are still a getter (not yet computed). */
const deferred = isPending;

describe('mono art computes its colours on first read', () => {
  const img = scene(320, 240, 7);

  it('text, ansi, html, svg and png of mono art never compute them', () => {
    for (const format of ['text', 'ansi', 'html', 'svg', 'png'] as const) {
      const r = render(img, { columns: 48, format });
      formatResult(r, format);
      assert.equal(deferred(r, 'colors'), true, `${format}: colours computed`);
      assert.equal(deferred(r.director.metrics, 'roundTrip'), true, `${format}: round-trip metric computed`);
    }
  });

  it('read after other renders, they are what the render read at once gives, in the same key order', () => {
    const r = render(img, { columns: 48 });
    // Other renders reuse the scratch rasters and the WebAssembly memory in between.
    render(scene(200, 300, 3), { columns: 64 });
    render(img, { columns: 30, charset: 'blocks', color: true });
    const now = render(img, { columns: 48 });
    const colors = now.colors, roundTrip = now.director.metrics.roundTrip;
    assert.equal(deferred(now, 'colors'), false);
    assert.deepEqual(r.colors, colors);
    assert.equal(r.director.metrics.roundTrip, roundTrip);
    assert.equal(typeof roundTrip, 'number');
    assert.ok(colors.some((v) => v > 0), 'the scene has colour');
    assert.deepEqual(Object.keys(r), Object.keys(now));
    assert.equal(Object.keys(r.director.metrics).at(-1), 'roundTrip');
    // JSON and spreads see plain values.
    const json = JSON.parse(formatResult(render(img, { columns: 48, format: 'json' }), 'json').body as string);
    assert.equal(typeof json.director.metrics.roundTrip, 'number');
    assert.ok({ ...render(img, { columns: 48 }) }.colors instanceof Uint8Array);
  });

  it("a mono render leaves the cells' RGB for later: its colourfulness is measured when read, the same as colour art's", () => {
    const r = render(img, { columns: 48 });
    const colour = render(img, { columns: 48, color: true });
    assert.equal(deferred(colour.director.source, 'colorfulness'), false, 'colour art measures it with the render');
    assert.equal(deferred(r.director.source, 'colorfulness'), true, 'mono art has not read the RGB');
    // Other renders in between reuse the kernel memory the later resample takes.
    render(scene(200, 300, 3), { columns: 64 });
    assert.equal(r.director.source.colorfulness, colour.director.source.colorfulness);
    assert.ok(r.director.source.colorfulness! > 0, 'the scene has colour');
    assert.deepEqual(Object.keys(r.director.source), Object.keys(colour.director.source), 'it keeps its place in the key order');
    // Formats that carry the colours resample them with the luminance (one pass over the image).
    for (const format of ['json', 'json-compact'] as const) {
      const carried = render(img, { columns: 48, format });
      assert.equal(deferred(carried.director.source, 'colorfulness'), false, `${format}: measured with the render`);
      assert.equal(carried.director.source.colorfulness, colour.director.source.colorfulness);
    }
  });

  it("the cells' RGB resampled later is the one resampled at once", () => {
    const later = prepare(img, 48, false, undefined, 'later');
    const now = Float32Array.from(prepare(img, 48, false, undefined, 'now').resampled.cellLinearRgb);
    render(scene(200, 300, 3), { columns: 64, color: true });
    assert.equal(deferred(later.resampled, 'cellLinearRgb'), true);
    assert.deepEqual(later.resampled.cellLinearRgb, now);
  });

  it('a mono render whose image changed before its colours were read throws instead of drawing another picture', () => {
    // A square image changed everywhere but on its diagonal: an even sample of it lay there.
    const square = scene(64, 64, 7);
    const sq = render(square, { columns: 16 });
    for (let i = 0; i < 64 * 64; i++) if (i % 65 !== 0) square.data.fill(0, i * 4, i * 4 + 3);
    assert.throws(() => sq.colors, /^V2aError: the image changed before its colours were read/);
    for (const change of [(d: RgbaImage['data']) => d.fill(0), (d: RgbaImage['data']) => d.set(scene(320, 240, 8).data)]) {
      const own = scene(320, 240, 7);
      const r = render(own, { columns: 48 });
      change(own.data);
      assert.throws(() => r.colors, /the image changed before its colours were read/);
      assert.throws(() => formatResult(r, 'json-compact'), /keep the pixels until then, or read the colours first/);
    }
    // Read first, the pixels are free to change.
    const own = scene(320, 240, 7);
    const r = render(own, { columns: 48 });
    const colors = Uint8Array.from(r.colors);
    const colourfulness = r.director.source.colorfulness;
    own.data.fill(0);
    assert.deepEqual(r.colors, colors);
    assert.equal(r.director.source.colorfulness, colourfulness);
    assert.equal(typeof JSON.parse(formatResult(r, 'json').body as string).director.source.colorfulness, 'number');
  });

  it('a changed image is a V2aError of its own code wherever the colours are first read (JSON, structuredClone, colors)', () => {
    // It surfaces far from the render: a plain RangeError there read as a bug of v2a's.
    for (const read of [(r: RenderResult) => JSON.stringify(r), (r: RenderResult) => structuredClone(r), (r: RenderResult) => r.colors]) {
      const own = scene(320, 240, 7);
      const r = render(own, { columns: 48, format: 'text' });
      own.data.fill(1);
      assert.throws(() => read(r), (e: unknown) => isV2aError(e) && e.code === 'image-changed' && ERRORS[e.code].local === true && /keep the pixels until then/.test(e.message), String(read));
    }
  });

  it('a render resamples them with the luminance where the Director or the format reads them, else later', () => {
    const when = (p: Parameters<typeof withDefaults>[0]) => colorsWhen(withDefaults(p));
    assert.equal(when({}), 'later');
    for (const format of ['text', 'ansi', 'html', 'svg', 'png'] as const) assert.equal(when({ format }), 'later', format);
    assert.equal(when({ color: true }), 'now');
    assert.equal(when({ qualityTarget: 'round-trip' }), 'now', 'the round-trip rubric reads them in the Director');
    for (const format of ['json', 'json-compact'] as const) assert.equal(when({ format }), 'now', format);
    assert.equal(colorsWhen(withDefaults({}), true), 'now', 'a caller that reads the whole report');
  });

  it('a job whose face reads the whole report (MCP) resamples them at once', async () => {
    const limits = { maxBytes: 1 << 20, maxPixels: 1 << 22, decodeTimeoutSeconds: 10 };
    const job = (readsReport: boolean) => runJob({ kind: 'image', image: img }, { columns: 48 }, { limits, readsReport });
    const [later, now] = [await job(false), await job(true)];
    assert.equal(deferred(later.result.director.source, 'colorfulness'), true);
    assert.equal(deferred(now.result.director.source, 'colorfulness'), false);
    assert.equal(now.result.director.source.colorfulness, later.result.director.source.colorfulness);
    assert.deepEqual(now.result.colors, later.result.colors);
    assert.equal(now.output.body, later.output.body);
  });

  it('colour output and the round-trip rubric compute them with the render', () => {
    assert.equal(deferred(render(img, { columns: 48, color: true }), 'colors'), false);
    const rt = render(img, { columns: 48, qualityTarget: 'round-trip' });
    assert.equal(deferred(rt.director.metrics, 'roundTrip'), false);
    assert.equal(typeof rt.director.metrics.roundTrip, 'number');
  });

  it('video frames defer them too, and a kept report still reads', () => {
    const frames = new FrameRenderer({ columns: 48 });
    const a = frames.render(img);
    const b = frames.render(img);
    assert.equal(deferred(b, 'colors'), true);
    assert.deepEqual(b.colors, a.colors);
    assert.equal(typeof a.director.metrics.roundTrip, 'number');
  });

  /** Three frames of a scene that changes colour and tone from one to the next. */
  const [f1, f2, f3] = [scene(320, 240, 7), scene(320, 240, 8), scene(320, 240, 9)];

  /**
   * Frames 1 and 2 through a fresh FrameRenderer, then frames 3 and 1 again, which reuse the
   * resampler's scratch raster and the WebAssembly memory: frame 2 (handed to `unread` before
   * the later frames, while nothing of it has been read) and frame 3.
   */
  function readAfterLaterFrames(unread: (second: RenderResult) => void): { second: RenderResult; third: RenderResult } {
    const frames = new FrameRenderer({ columns: 48 });
    frames.render(f1);
    const second = frames.render(f2);
    unread(second);
    const third = frames.render(f3);
    frames.render(f1);
    return { second, third };
  }

  it("a video frame's colours, read after later frames, are its own: resampled from its kept pixels", () => {
    const early = new FrameRenderer({ columns: 48 });
    early.render(f1);
    const e2 = early.render(f2);
    const atOnce = Uint8Array.from(e2.colors);
    const roundTrip = e2.director.metrics.roundTrip;
    const { second, third } = readAfterLaterFrames((l2) => assert.equal(deferred(l2, 'colors'), true, 'a mono frame on a kept tuning defers its colours'));
    assert.deepEqual(second.colors, atOnce);
    assert.equal(second.director.metrics.roundTrip, roundTrip);
    assert.notDeepEqual(Uint8Array.from(third.colors), atOnce, 'the frames differ in colour');
  });

  it("a video frame's report, scored on first read after later frames, is the one scored at once", () => {
    const early = new FrameRenderer({ columns: 48 });
    const e1 = early.render(f1);
    assert.equal(deferred(e1, 'director'), false, 'the first frame is tuned and scored at once');
    const atOnce = structuredClone(early.render(f2).director);
    const { second, third } = readAfterLaterFrames((l2) => assert.equal(deferred(l2, 'director'), true, 'a frame on a kept tuning scores its report when read'));
    assert.deepEqual(structuredClone(second.director), atOnce);
    assert.deepEqual(Object.keys(second), Object.keys(e1), 'the report keeps its place in the key order');
    assert.notDeepEqual(structuredClone(third.director.metrics), atOnce.metrics, 'the frames score differently');
  });
});
