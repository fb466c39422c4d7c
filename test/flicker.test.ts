import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { render } from '../src/core/render.js';
import { FrameRenderer } from '../src/core/video.js';
import { scene, withNoise, image, grey, gaussian, rng } from './helpers/images.js';
import type { RenderResult } from '../src/core/types.js';
import { getGlyphSet, glyphShape } from '../src/core/glyphs/charsets.js';

function changedShare(a: RenderResult, b: RenderResult): number {
  let n = 0;
  for (let i = 0; i < a.cells.length; i++) if (a.glyphs[a.cells[i]!] !== b.glyphs[b.cells[i]!]) n++;
  return n / a.cells.length;
}

const base = scene(320, 240, 7);
const SIGMA = 2; // 2/255, as a webcam's sensor noise

describe('temporal filtering of video frames', () => {
  for (const charset of ['detailed', 'standard', 'blocks', 'dots'] as const) {
    it(`a still scene with fresh noise flickers on at most 1% of glyphs per frame (${charset})`, () => {
      const video = new FrameRenderer({ columns: 80, charset });
      const frames: RenderResult[] = [];
      for (let f = 0; f < 16; f++) frames.push(video.render(withNoise(base, SIGMA, 100 + f)));
      const shares = frames.slice(6).map((r, i) => changedShare(frames[5 + i]!, r));
      const worst = Math.max(...shares);
      assert.ok(worst <= 0.01, `${charset}: up to ${(worst * 100).toFixed(2)}% of glyphs changed per frame`);

      // Without the filter the same noise makes the art flicker: the test can fail.
      const raw = Array.from({ length: 4 }, (_, f) => render(withNoise(base, SIGMA, 100 + f), { columns: 80, charset, autoOptimize: 0 }));
      const rawShare = Math.max(...raw.slice(1).map((r, i) => changedShare(raw[i]!, r)));
      assert.ok(rawShare > worst, `unfiltered ${rawShare} should exceed filtered ${worst}`);
    });
  }

  for (const charset of ['blocks', 'dots'] as const) {
    it(`two colours per cell (${charset} + colour): a still noisy scene flickers on at most 1% of glyphs, a new one still shows`, () => {
      const video = new FrameRenderer({ columns: 80, charset, color: true });
      const frames: RenderResult[] = [];
      for (let f = 0; f < 12; f++) frames.push(video.render(withNoise(base, SIGMA, 400 + f)));
      const worst = Math.max(...frames.slice(6).map((r, i) => changedShare(frames[5 + i]!, r)));
      assert.ok(worst <= 0.01, `up to ${(worst * 100).toFixed(2)}% of glyphs changed per frame`);
      const raw = Array.from({ length: 3 }, (_, f) => render(withNoise(base, SIGMA, 400 + f), { columns: 80, charset, color: true }));
      const rawShare = Math.max(...raw.slice(1).map((r, i) => changedShare(raw[i]!, r)));
      assert.ok(rawShare > 0.05, `unfiltered ${charset}+colour should flicker (${rawShare})`);
      const other = image(320, 240, (x, y) => grey(((x >> 5) + (y >> 4)) % 2 ? 235 : 25));
      video.render(withNoise(other, SIGMA, 500));
      const moved = video.render(withNoise(other, SIGMA, 501));
      assert.ok(changedShare(frames[11]!, moved) > 0.3, 'a new scene must show');
    });
  }

  it('a real scene change shows within 2 frames', () => {
    const video = new FrameRenderer({ columns: 80 });
    for (let f = 0; f < 8; f++) video.render(withNoise(base, SIGMA, 200 + f));
    const other = image(320, 240, (x, y) => grey(((x >> 5) + (y >> 5)) % 2 ? 235 : 25));
    video.render(withNoise(other, SIGMA, 300));
    const second = video.render(withNoise(other, SIGMA, 301));
    // Displayed tone per cell against the new scene's squares (bright -> dense ink).
    let agree = 0;
    for (let cy = 0; cy < second.rows; cy++) {
      for (let cx = 0; cx < second.columns; cx++) {
        const x = Math.floor(((cx + 0.5) * 320) / second.columns), y = Math.floor(((cy + 0.5) * 240) / second.rows);
        const bright = ((x >> 5) + (y >> 5)) % 2 === 1;
        const ink = (glyphShape(second.glyphs[second.cells[cy * second.columns + cx]!]!)?.coverage ?? 0) > 0.1;
        if (bright === ink) agree++;
      }
    }
    const share = agree / second.cells.length;
    assert.ok(share > 0.85, `only ${(share * 100).toFixed(1)}% of cells show the new scene after 2 frames`);
  });

  it('motionSensitivity: higher follows a slow fade sooner', () => {
    const ink = getGlyphSet('detailed').coverage;
    const meanInk = (r: RenderResult) => r.cells.reduce((sum, c) => sum + ink[c]!, 0) / r.cells.length;
    // Summed over the fade: how far the displayed tone trails what a still render of each frame shows.
    const lag = (ms: number) => {
      const video = new FrameRenderer({ columns: 40, motionSensitivity: ms, autoOptimize: 0, autoLevels: 0 });
      let trail = 0;
      for (let f = 0; f < 12; f++) {
        const frame = image(160, 120, () => grey(60 + 8 * f));
        trail += Math.abs(meanInk(video.render(frame)) - meanInk(render(frame, { columns: 40, autoOptimize: 0, autoLevels: 0 })));
      }
      return trail;
    };
    const [slow, fast] = [lag(0), lag(1)];
    assert.ok(slow > 0.02, `sensitivity 0 should trail a fade (trail ${slow})`);
    assert.ok(fast < slow / 2, `sensitivity 1 trails ${fast}, 0 trails ${slow}`);
  });

  // A webcam's sensor noise is the same on all three channels (luma noise). 640x480 at 120, 160
  // and 200 columns: downsampled, one pixel per sample, upsampled 1.25x. Before the absolute
  // scene-cut test, the settling noise estimate (160) and the upsampled raster (200) passed this
  // scene for cuts: the codebook was re-chosen and the art popped.
  it('a still noisy 640x480 scene at 120, 160 and 200 columns: no scene cuts, flicker <= 1%', () => {
    const still = scene(640, 480, 7);
    const lumaNoise = (seed: number) => {
      const g = gaussian(rng(seed));
      const data = new Uint8ClampedArray(still.data.length);
      for (let i = 0; i < data.length; i += 4) {
        const n = g() * 8;
        data[i] = still.data[i]! + n; data[i + 1] = still.data[i + 1]! + n; data[i + 2] = still.data[i + 2]! + n; data[i + 3] = 255;
      }
      return { width: 640, height: 480, data };
    };
    for (const columns of [120, 160, 200]) {
      const video = new FrameRenderer({ columns });
      const frames: RenderResult[] = [];
      for (let f = 0; f < 24; f++) frames.push(video.render(lumaNoise(500 + f)));
      assert.equal(video.codebookChoices, 1, `${columns} columns: the codebook was re-chosen ${video.codebookChoices - 1} times`);
      const shares = frames.slice(10).map((r, i) => changedShare(frames[9 + i]!, r));
      const mean = shares.reduce((a, b) => a + b, 0) / shares.length;
      assert.ok(mean <= 0.01, `${columns} columns: ${(mean * 100).toFixed(2)}% of glyphs changed per frame`);
    }
  });
});

describe('scene cuts', () => {
  it('a hard cut is drawn in its own frame with a tuning of its own: a slide-show GIF shows each slide on time', () => {
    const flat = (v: number) => image(96, 72, () => grey(v));
    const a = scene(96, 72, 1);
    const text = (r: RenderResult) => r.glyphs.length && Array.from(r.cells, (c) => r.glyphs[c]).join('');
    for (const [name, frames] of [
      ['black -> white', [flat(0), flat(255), flat(255)]],
      ['white -> scene', [flat(255), a, a]],
      ['scene -> black -> scene', [a, a, flat(0), a]],
    ] as const) {
      const video = new FrameRenderer({ columns: 16 });
      const out = frames.map((f) => video.render(f));
      // Each frame reads as the same picture rendered on its own.
      frames.forEach((f, i) => {
        const alone = new FrameRenderer({ columns: 16 }).render(f);
        if (i === 0 || frames[i - 1] !== f) assert.equal(text(out[i]!), text(alone), `${name}: frame ${i}`);
      });
    }
  });
});
