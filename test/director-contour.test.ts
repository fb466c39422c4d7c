/**
 * The Director's glyph-scale term: each glyph's measured texture up close (font-data.generated.ts),
 * the contour metric built from it (director/metrics.ts contourOf), and how it chooses among the
 * crisp contrasts (director/director.ts crispest) on a real render.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { getGlyphSet, glyphTextures } from '../src/core/glyphs/charsets.js';
import { GLYPH_DATA } from '../src/core/glyphs/font-data.generated.js';
import { crispest } from '../src/core/director/director.js';
import { contourOf } from '../src/core/director/metrics.js';
import { render } from '../src/core/render.js';
import { DEFAULTS } from '../src/core/params/definitions.js';
import { image, rng, scene } from './helpers/images.js';

describe('glyph texture up close', () => {
  it('is a variance of ink the glyph has: 0 when blank or solid, at most coverage x (1 - coverage)', () => {
    for (const [cp, coverage, , texture] of GLYPH_DATA) {
      const ch = String.fromCodePoint(cp);
      assert.ok(texture >= 0, `${ch}: ${texture}`);
      assert.ok(texture <= coverage * (1 - coverage) + 1e-6, `${ch}: ${texture} > c(1 - c) for c = ${coverage}`);
      if (coverage > 0.01 && coverage < 0.99) assert.ok(texture > 0, `${ch} has strokes`);
    }
    const [blank, full] = glyphTextures([' ', '\u2588']);
    assert.equal(blank, 0);
    assert.ok(full! < 1e-4, `full block ${full}`);
  });

  it('is larger for glyphs of thin separate strokes than for even ones of the same ink', () => {
    // M and @ carry almost the same ink; M's four strokes vary far more up close.
    const [m, at] = glyphTextures(['M', '@']);
    assert.ok(m! > 1.5 * at!, `M ${m} vs @ ${at}`);
    // The ramp's glyphs in order; an unmeasured glyph counts as flat.
    const set = getGlyphSet('standard');
    assert.deepEqual([...glyphTextures(set.glyphs)], set.glyphs.map((g) => GLYPH_DATA.find(([cp]) => cp === g.codePointAt(0))![3]).map(Math.fround));
    assert.deepEqual([...glyphTextures(['\u{1F600}'])], [0]);
  });
});

describe('contour metric', () => {
  it('is the tone correlation when glyphs are flat, and falls as their texture rises', () => {
    const cov = 3, vr = 4, vs = 9, n = 10;
    assert.equal(contourOf(cov, vr, vs, n, 0), cov / Math.sqrt(vr * vs));
    const a = contourOf(cov, vr, vs, n, 0.1), b = contourOf(cov, vr, vs, n, 0.3);
    assert.ok(a < cov / Math.sqrt(vr * vs) && b < a, `${a} ${b}`);
    // Spread tones outweigh the same texture: more variance of rendered tone, same texture.
    assert.ok(contourOf(2 * cov, 4 * vr, vs, n, 0.3) > b);
    assert.equal(contourOf(0, 0, vs, n, 0), 0, 'a flat rendering');
    assert.equal(contourOf(cov, vr, 0, n, 0.1), 0, 'a flat source');
  });
});

describe('crisp contrasts', () => {
  const sim = (fidelity: number, clipping: number, contour: number) => ({ sim: { metrics: { fidelity, clipping, contour } } });
  const guards = { fidelity: 0.05, clipping: 0.1 };

  it('keeps the best contour among the crisp results the guards let through', () => {
    const searched = sim(0.95, 0.9, 0.5);
    const a = sim(0.94, 0.9, 0.55), b = sim(0.92, 0.85, 0.6), clearlyLessTrue = sim(0.89, 0.9, 0.9), clearlyCrushed = sim(0.95, 0.79, 0.9);
    assert.equal(crispest(searched, [a, b, clearlyLessTrue, clearlyCrushed], guards), b);
    assert.equal(crispest(searched, [a, clearlyLessTrue], guards), a);
    assert.equal(crispest(searched, [clearlyLessTrue, clearlyCrushed], guards), undefined);
    // Ties keep the first (the lower contrast).
    const tie = sim(0.93, 0.9, 0.55);
    assert.equal(crispest(searched, [a, tie], guards), a);
  });

  it('a balanced render takes one of the crisp contrasts where they pass, and reports the rubric\'s metrics only', () => {
    const r = render(scene(320, 240, 7), { columns: 80 });
    const to = r.director.adjustments.contrast?.to;
    const scaled = [2.2, 2.4, 2.6, 2.8].map((c) => Math.round((DEFAULTS.contrast + DEFAULTS.autoOptimize * (c - DEFAULTS.contrast)) * 1000) / 1000);
    assert.ok(to !== undefined && scaled.includes(to), `contrast ${to} (crisp: ${scaled.join(', ')})`);
    assert.ok(!('contour' in r.director.metrics), Object.keys(r.director.metrics).join(', '));
    // Other rubrics do not search crisp contrasts.
    const p = render(scene(320, 240, 7), { columns: 80, qualityTarget: 'portrait' });
    assert.ok(!scaled.includes(p.params.contrast), `portrait contrast ${p.params.contrast}`);
  });
});

describe('the tone grid', () => {
  it('a low-contrast scan (dark strokes on a paper gradient) takes its deepest gamma, 0.4; a photo-like scene does not', () => {
    const r = rng(7);
    const strokes = Array.from({ length: 40 }, () => [r() * 320, r() * 240, (r() - 0.5) * 3, 8 + r() * 30] as const);
    const scan = image(320, 240, (x, y) => {
      let v = 140 + (35 * x) / 320 + (r() - 0.5) * 6;
      for (const [sx, sy, slope, len] of strokes) if (x >= sx && x - sx < len && Math.abs(y - (sy + slope * (x - sx))) < 1.2) v = 90;
      return [v, v, v];
    });
    const deepest = Math.round((DEFAULTS.gamma + DEFAULTS.autoOptimize * (0.4 - DEFAULTS.gamma)) * 1000) / 1000;
    for (const columns of [80, 160]) assert.equal(render(scan, { columns }).director.adjustments.gamma?.to, deepest, `${columns} columns`);
    assert.notEqual(render(scene(), { columns: 80 }).params.gamma, deepest);
  });
});

describe('tone intents the caller sets', () => {
  // A dark, low-contrast scene (as a scan of text or the moon): where the Director lifts most.
  const base = scene(320, 240, 7);
  const dark = image(320, 240, (x, y) => {
    const i = (y * 320 + x) * 4;
    const v = (c: number) => Math.round(40 + 0.25 * base.data[i + c]!);
    return [v(0), v(1), v(2)];
  });
  const ink = getGlyphSet('detailed').coverage;
  const meanInk = (img: typeof base, p: object) => {
    const r = render(img, { columns: 60, ...p });
    return r.cells.reduce((sum, c) => sum + ink[c]!, 0) / r.cells.length;
  };
  const rising = (values: readonly number[]) => values.every((v, i) => i === 0 || v >= values[i - 1]!);

  it('brightness and gamma move the art as their names promise, at the default autoOptimize too: the Director does not make up for them', () => {
    for (const [name, img] of [['scene', base], ['dark scene', dark]] as const) {
      const byBrightness = [-100, -50, -20, 0, 20, 50, 100].map((brightness) => meanInk(img, { brightness }));
      assert.ok(rising(byBrightness), `${name}, brightness: ${byBrightness.map((v) => v.toFixed(3)).join(' ')}`);
      const byGamma = [0.4, 0.7, 1, 1.5, 2, 3].map((gamma) => meanInk(img, { gamma }));
      assert.ok(rising(byGamma), `${name}, gamma: ${byGamma.map((v) => v.toFixed(3)).join(' ')}`);
    }
    // What the caller did not set is still tuned, the same whatever its brightness.
    const adjusted = [-50, 0, 50].map((brightness) => render(dark, { columns: 60, brightness }).director.adjustments);
    assert.ok(Object.keys(adjusted[0]!).length > 0);
    assert.deepEqual(adjusted[0], adjusted[2]);
    assert.equal(adjusted[0]!.brightness, undefined, 'never the caller\'s own');
  });
});
