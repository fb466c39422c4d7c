import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { detachHandoff, FrameBack, FrameFront, FrameRenderer } from '../src/core/video.js';
import { prepare, renderPrepared } from '../src/core/render.js';
import { parseParamsOrThrow, withDefaults } from '../src/core/params/validate.js';
import { gridRows } from '../src/core/pipeline/geometry.js';
import { CUT_DELTA, SHIFT_DELTA, TemporalFilter } from '../src/core/temporal/filter.js';
import { scene, withNoise } from './helpers/images.js';
import type { DirectorReport, RenderResult, RgbaImage } from '../src/core/types.js';
import type { RenderParams } from '../src/core/params/definitions.js';

/**
 * The oracle: FrameRenderer as it was written before its halves, one renderPrepared() per frame
 * with the filter, the kept tuning and codebook, and the previous cells passed in.
 */
class OnePass {
  private readonly requested: RenderParams;
  private readonly explicit: readonly string[];
  private filter: TemporalFilter | null = null;
  private previous: Uint16Array | null = null;
  private tuned: { params: RenderParams; report: DirectorReport } | null = null;
  private codebook: Int32Array | null = null;
  private lastCells: Float32Array | null = null;
  choices = 0;

  constructor(params: Record<string, unknown>) {
    const explicit = parseParamsOrThrow(params, 'json');
    this.requested = withDefaults(explicit);
    this.explicit = Object.keys(explicit);
  }

  render(frame: RgbaImage): RenderResult {
    const { columns, invert, cellAspect } = this.requested;
    const rows = gridRows(frame.width, frame.height, columns, cellAspect);
    const kept = this.filter && this.filter.rows === rows && this.filter.columns === columns ? this.filter : null;
    if (kept) {
      const s = kept.stats;
      if (s.frames > 1 && s.motionShare > 0.6 && (s.changedShare > 0.6 || Math.abs(s.meanShift) > SHIFT_DELTA)) {
        this.tuned = null;
        this.codebook = null;
      }
    }
    const prep = prepare(frame, columns, invert, cellAspect, this.tuned && !this.requested.color ? 'later' : 'now');
    // A hard cut (over 60 % of the cells' means moved by more than CUT_DELTA) is tuned for in its own frame.
    const last = kept ? this.lastCells : null;
    if (last && last.length === prep.cellLuma.length) {
      const moved = prep.cellLuma.filter((v, i) => Math.abs(v - last[i]!) > CUT_DELTA).length;
      if (moved > 0.6 * prep.cellLuma.length) {
        this.tuned = null;
        this.codebook = null;
      }
    }
    this.lastCells = prep.cellLuma.slice();
    const filter = kept ?? (this.filter = new TemporalFilter({ columns, rows }));
    if (!kept) this.previous = null;
    filter.setUpsampled(prep.resampled.luma.width > frame.width || prep.resampled.luma.height > frame.height);
    const result = renderPrepared(prep, this.requested, this.explicit, frame, {
      temporal: filter, previous: this.previous ?? undefined, tuned: this.tuned ?? undefined, codebook: this.codebook ?? undefined,
    });
    if (!this.tuned) this.tuned = { params: result.params, report: result.director };
    if (!this.codebook) {
      this.choices++;
      this.codebook = Int32Array.from([...result.codebook.glyphs], (ch) => result.glyphs.indexOf(ch));
    }
    this.previous = result.cells;
    return result;
  }
}

/** Everything a frame's result holds, colours and report included (typed arrays as arrays). */
function snapshot(r: RenderResult): string {
  return JSON.stringify(r, (_k, v: unknown) => (ArrayBuffer.isView(v) ? Array.from(v as Uint8Array) : v));
}

/** The scene's negative: every cell changes, a cut whatever the noise. */
const negative = (f: RgbaImage): RgbaImage => ({ width: f.width, height: f.height, data: f.data.map((v, i) => (i % 4 === 3 ? v : 255 - v)) });

/** Noisy frames of one scene, a cut to another, and a different frame size (a new grid). */
function sequence(): RgbaImage[] {
  const a = scene(320, 240, 7), b = negative(a), c = scene(400, 240, 5);
  // Half transparent on the left: colours composite over the ground (`invert` changes it).
  for (let i = 3; i < c.data.length; i += 4) if (((i >> 2) % 400) < 100) c.data[i] = 128;
  return [
    ...Array.from({ length: 5 }, (_, f) => withNoise(a, 2, 10 + f)),
    ...Array.from({ length: 4 }, (_, f) => withNoise(b, 2, 20 + f)),
    ...Array.from({ length: 3 }, (_, f) => withNoise(c, 2, 30 + f)),
    ...Array.from({ length: 2 }, (_, f) => withNoise(a, 2, 40 + f)),
  ];
}

const copy = (f: RgbaImage): RgbaImage => ({ width: f.width, height: f.height, data: f.data.slice() });

describe('FrameRenderer in two halves (FrameFront, FrameBack), as the studio runs it on two threads', () => {
  const cases: Record<string, unknown>[] = [
    { columns: 64 },
    { columns: 48, charset: 'blocks', color: true },
    { columns: 40, charset: 'dots', color: true },
    { columns: 56, color: true, dither: true },
    { columns: 50, edges: true, invert: true, motionSensitivity: 0.2 },
    { columns: 60, charset: 'standard', qualityTarget: 'round-trip' },
    { columns: 44, invert: true },
  ];
  for (const params of cases) {
    it(`the same frames, colours and reports through a structured clone: ${JSON.stringify(params)}`, () => {
      const oracle = new OnePass(params), whole = new FrameRenderer(params);
      const front = new FrameFront(params), back = new FrameBack();
      const frames = sequence();
      const ref: RenderResult[] = [], one: RenderResult[] = [], two: RenderResult[] = [];
      for (const frame of frames) {
        ref.push(oracle.render(frame));
        one.push(whole.render(frame));
        // The back gets its own copy of the pixels and a clone of the handoff, as a worker would.
        const { handoff, transfer } = detachHandoff(front.render(frame));
        two.push(back.render(copy(frame), structuredClone(handoff, { transfer })));
      }
      // Colours and reports read only now, after later frames: from each frame's own pixels.
      frames.forEach((_, i) => {
        const want = snapshot(ref[i]!);
        assert.equal(snapshot(one[i]!), want, `frame ${i}: FrameRenderer`);
        assert.equal(snapshot(two[i]!), want, `frame ${i}: FrameFront + FrameBack`);
      });
      assert.equal(whole.codebookChoices, oracle.choices);
      assert.equal(back.codebookChoices, oracle.choices);
      assert.ok(oracle.choices >= 2, `the cut chooses anew (${oracle.choices})`);
    });
  }

  it('retune() on both halves starts afresh as FrameRenderer.retune() does', () => {
    const whole = new FrameRenderer({ columns: 48 });
    const front = new FrameFront({ columns: 48 }), back = new FrameBack();
    const frames = sequence().slice(0, 6);
    frames.forEach((frame, i) => {
      if (i === 3) {
        whole.retune();
        front.retune();
        back.retune();
      }
      const { handoff, transfer } = detachHandoff(front.render(frame));
      assert.equal(snapshot(back.render(copy(frame), structuredClone(handoff, { transfer }))), snapshot(whole.render(frame)), `frame ${i}`);
    });
    // The first frame, the retune at 3, and the cut to the negative at 5 (tuned in its own frame).
    assert.equal(back.codebookChoices, 3);
  });

  it('the back refuses a frame other than the one the handoff was made from (a RangeError, not wrong colours)', () => {
    const front = new FrameFront({ columns: 48, color: true }), back = new FrameBack();
    const h = front.render(scene(320, 240, 7));
    assert.throws(() => back.render(scene(160, 120, 7), h), /RangeError: FrameBack\.render: the frame is 160 x 120; the handoff was made from a 320 x 240 frame/);
    assert.throws(() => back.render(scene(320, 240, 7), null as never), /TypeError: FrameBack\.render: handoff must be an object/);
    assert.equal(back.render(scene(320, 240, 7), h).columns, 48, 'the frame it was made from still renders');
  });

  it('a detached handoff owns its arrays: the front goes on with its own', () => {
    const front = new FrameFront({ columns: 48 });
    const frame = withNoise(scene(320, 240, 7), 2, 1);
    front.render(frame);
    const h = front.render(frame);
    const { handoff, transfer } = detachHandoff(h);
    assert.notEqual(handoff.tuned.luma.buffer, h.tuned.luma.buffer);
    assert.notEqual(handoff.tuned.stable!.buffer, h.tuned.stable!.buffer);
    assert.ok(transfer.includes(handoff.tuned.luma.buffer as ArrayBuffer));
    assert.ok(!transfer.includes(h.tuned.luma.buffer as ArrayBuffer));
    structuredClone(handoff, { transfer });
    assert.equal(handoff.tuned.luma.length, 0, 'transferred away');
    // The filter's estimate and state were not transferred: the next frame still renders.
    assert.ok(front.render(frame).tuned.luma.length > 0);
  });
});
