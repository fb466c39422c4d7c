import { test } from 'node:test';
import assert from 'node:assert/strict';
import { TemporalFilter, motionThreshold } from '../src/core/temporal/filter.js';
import { SAMPLES, SUB_X, SUB_Y } from '../src/core/glyphs/types.js';
import { rng } from './helpers/images.js';

const COLS = 60;
const ROWS = 20;
const W = COLS * SUB_X;
const H = ROWS * SUB_Y;
const N = W * H;
const SIGMA = 2 / 255;

const mulberry32 = rng;

/** Box-Muller standard normal from a uniform source. */
function gaussian(rand: () => number): () => number {
  let spare = NaN;
  return () => {
    if (!Number.isNaN(spare)) {
      const s = spare;
      spare = NaN;
      return s;
    }
    const u = 1 - rand();
    const v = rand();
    const r = Math.sqrt(-2 * Math.log(u));
    spare = r * Math.sin(2 * Math.PI * v);
    return r * Math.cos(2 * Math.PI * v);
  };
}

/** Textured still scene in [0.1, 0.9]: gradients, a ripple and hard-edged rectangles. */
function texturedBase(): Float32Array {
  const b = new Float32Array(N);
  for (let y = 0; y < H; y++) {
    for (let x = 0; x < W; x++) {
      let v = 0.15 + 0.45 * (x / W) + 0.15 * (y / H) + 0.05 * Math.sin(x / 5) * Math.cos(y / 7);
      if (x >= 30 && x < 70 && y >= 20 && y < 60) v = 0.88;
      if (x >= 150 && x < 210 && y >= 90 && y < 140) v = 0.12;
      if (x >= 100 && x < 118 && y >= 10 && y < 150) v = 0.7;
      b[y * W + x] = v;
    }
  }
  return b;
}

function addNoise(clean: Float32Array, gauss: () => number, sigma: number, into: Float32Array): Float32Array {
  for (let i = 0; i < clean.length; i++) {
    const v = clean[i]! + sigma * gauss();
    into[i] = v < 0 ? 0 : v > 1 ? 1 : v;
  }
  return into;
}

function cellMeans(r: Float32Array, cols: number, rows: number): Float64Array {
  const w = cols * SUB_X;
  const m = new Float64Array(cols * rows);
  for (let y = 0; y < rows * SUB_Y; y++) {
    for (let x = 0; x < w; x++) m[(y >> 3) * cols + (x >> 2)]! += r[y * w + x]!;
  }
  for (let c = 0; c < m.length; c++) m[c]! /= SAMPLES;
  return m;
}

/** Sum of squared differences over the samples of the given cell rows [cy0, cy1). */
function sqDiff(a: Float32Array, b: Float32Array, cy0 = 0, cy1 = ROWS): { sum: number; n: number } {
  let sum = 0;
  for (let i = cy0 * SUB_Y * W; i < cy1 * SUB_Y * W; i++) {
    const d = a[i]! - b[i]!;
    sum += d * d;
  }
  return { sum, n: (cy1 - cy0) * SUB_Y * W };
}

const to255 = (v: number): string => (v * 255).toFixed(3);

test('first frame passes through; buffer is owned and reused; per-cell outputs sized', () => {
  const f = new TemporalFilter({ columns: COLS, rows: ROWS });
  const gauss = gaussian(mulberry32(1));
  const base = texturedBase();
  const a = addNoise(base, gauss, SIGMA, new Float32Array(N));
  const out1 = f.step(a, 0.7);
  assert.deepEqual(Array.from(out1), Array.from(a));
  assert.notEqual(out1, a);
  assert.equal(f.cellMotion.length, COLS * ROWS);
  assert.equal(f.cellStable.length, COLS * ROWS);
  assert.ok(f.cellStable.every((v) => v === 0), 'no hysteresis on a first frame');
  assert.equal(f.stats.meanGain, 1);
  const out2 = f.step(addNoise(base, gauss, SIGMA, new Float32Array(N)), 0.7);
  const out3 = f.step(addNoise(base, gauss, SIGMA, new Float32Array(N)), 0.7);
  assert.equal(out2, out1);
  assert.equal(out3, out1);
  assert.ok(f.stats.meanGain < 1);
});

test('still scene: noise is averaged down with small bias', (t) => {
  for (const s of [0, 0.7, 1]) {
    const f = new TemporalFilter({ columns: COLS, rows: ROWS });
    const gauss = gaussian(mulberry32(42));
    const base = texturedBase();
    const noisy = new Float32Array(N);
    const prevNoisy = new Float32Array(N);
    const prevOut = new Float32Array(N);
    const biasSum = new Float64Array(N);
    let rawSq = 0;
    let outSq = 0;
    let errSq = 0;
    let count = 0;
    let frames = 0;
    const WARMUP = 5;
    for (let frame = 0; frame < 40; frame++) {
      addNoise(base, gauss, SIGMA, noisy);
      const out = f.step(noisy, s);
      if (frame >= WARMUP) {
        rawSq += sqDiff(noisy, prevNoisy).sum;
        outSq += sqDiff(out, prevOut).sum;
        errSq += sqDiff(out, base).sum;
        for (let i = 0; i < N; i++) biasSum[i]! += out[i]! - base[i]!;
        count += N;
        frames++;
      }
      prevNoisy.set(noisy);
      prevOut.set(out);
    }
    const rawRms = Math.sqrt(rawSq / count);
    const outRms = Math.sqrt(outSq / count);
    const ratio = outRms / rawRms;
    const errRms = Math.sqrt(errSq / count);
    const cellBias = cellMeans(Float32Array.from(biasSum, (v) => v / frames), COLS, ROWS);
    let maxCellBias = 0;
    let meanBias = 0;
    for (const b of cellBias) {
      maxCellBias = Math.max(maxCellBias, Math.abs(b));
      meanBias += b / cellBias.length;
    }
    t.diagnostic(`s=${s}: frame-to-frame RMS raw ${to255(rawRms)}/255, filtered ${to255(outRms)}/255, ratio ${ratio.toFixed(3)}; `
      + `RMS error vs clean ${to255(errRms)}/255 (noise ${to255(SIGMA)}/255); mean bias ${to255(meanBias)}/255, max cell bias ${to255(maxCellBias)}/255; `
      + `sigma est ${to255(f.stats.noiseSigma)}/255, gain ${f.stats.meanGain.toFixed(3)}, motion share ${f.stats.motionShare.toFixed(3)}`);
    assert.ok(rawRms > 2.5 / 255, 'the unfiltered baseline really flickers');
    assert.ok(ratio <= 0.25, `jitter ratio ${ratio} at s=${s}`);
    assert.ok(errRms < 0.5 * SIGMA, `RMS error vs clean ${errRms}`);
    assert.ok(Math.abs(meanBias) < 0.2 / 255, `mean bias ${meanBias}`);
    assert.ok(maxCellBias < 1 / 255, `max cell bias ${maxCellBias}`);
    assert.ok(Math.abs(f.stats.noiseSigma - SIGMA) < 0.15 * SIGMA, `noise estimate ${f.stats.noiseSigma}`);
    assert.ok(f.stats.motionShare < 0.05, `static cells flagged as moving: ${f.stats.motionShare}`);
  }
});

test('scene change (inversion) shows within 2 frames for every motionSensitivity, incl. 0', (t) => {
  const base = texturedBase();
  const inverted = Float32Array.from(base, (v) => 1 - v);
  const target = cellMeans(inverted, COLS, ROWS);
  const maxCellError = (out: Float32Array): number => {
    const m = cellMeans(out, COLS, ROWS);
    let worst = 0;
    for (let c = 0; c < m.length; c++) worst = Math.max(worst, Math.abs(m[c]! - target[c]!));
    return worst;
  };

  // Baseline: a fixed-gain average as smooth as this filter's static gain (0.2) fails this test.
  {
    const ema = Float32Array.from(base);
    for (let k = 0; k < 2; k++) for (let i = 0; i < N; i++) ema[i]! += 0.2 * (inverted[i]! - ema[i]!);
    assert.ok(maxCellError(ema) > 0.3, 'fixed-gain baseline lags');
  }

  for (const s of [0, 0.35, 0.7, 1]) {
    const f = new TemporalFilter({ columns: COLS, rows: ROWS });
    const gauss = gaussian(mulberry32(7));
    const noisy = new Float32Array(N);
    for (let frame = 0; frame < 12; frame++) f.step(addNoise(base, gauss, SIGMA, noisy), s);
    const errs: number[] = [];
    let latency = -1;
    for (let k = 1; k <= 6; k++) {
      const e = maxCellError(f.step(addNoise(inverted, gauss, SIGMA, noisy), s));
      errs.push(e);
      if (latency < 0 && e <= 0.05) latency = k;
      if (k === 1) {
        assert.ok(f.stats.meanGain > 0.9, `gain on the cut ${f.stats.meanGain}`);
        assert.ok(f.stats.motionShare > 0.8, `motion share on the cut ${f.stats.motionShare}`);
      }
    }
    t.diagnostic(`s=${s}: max cell-mean error after frames 1..6: ${errs.map((e) => e.toFixed(4)).join(', ')}; latency ${latency} frame(s)`);
    assert.ok(latency >= 1 && latency <= 2, `latency ${latency} at s=${s}`);
    assert.ok(errs[1]! <= 0.05);
    assert.ok(errs[5]! <= 0.01, 'settles on the new scene');
  }
});

test('moving square is tracked without lag while the background stays stable', (t) => {
  const base = texturedBase();
  const SQ = 4;
  const CY0 = 8;
  const scene = (frame: number, into: Float32Array): Float32Array => {
    into.set(base);
    const cx0 = 2 + frame;
    for (let y = CY0 * SUB_Y; y < (CY0 + SQ) * SUB_Y; y++) {
      for (let x = cx0 * SUB_X; x < (cx0 + SQ) * SUB_X; x++) into[y * W + x] = 0.97;
    }
    return into;
  };
  for (const s of [0, 0.7, 1]) {
    const f = new TemporalFilter({ columns: COLS, rows: ROWS });
    const gauss = gaussian(mulberry32(99));
    const clean = new Float32Array(N);
    const prevClean = new Float32Array(N);
    const noisy = new Float32Array(N);
    const prevNoisy = new Float32Array(N);
    const prevOut = new Float32Array(N);
    let errNow = 0;
    let errPrevFrame = 0;
    let nCells = 0;
    let rawSq = 0;
    let outSq = 0;
    let cnt = 0;
    let worstFrame = 0;
    for (let frame = 0; frame < 50; frame++) {
      scene(frame, clean);
      addNoise(clean, gauss, SIGMA, noisy);
      const out = f.step(noisy, s);
      if (frame >= 5) {
        const mo = cellMeans(out, COLS, ROWS);
        const mc = cellMeans(clean, COLS, ROWS);
        const mp = cellMeans(prevClean, COLS, ROWS);
        // The square's cells plus the column it just left (where a lagging filter would show it).
        let frameErr = 0;
        for (let cy = CY0; cy < CY0 + SQ; cy++) {
          for (let cx = 1 + frame; cx < 2 + frame + SQ; cx++) {
            const c = cy * COLS + cx;
            errNow += Math.abs(mo[c]! - mc[c]!);
            errPrevFrame += Math.abs(mo[c]! - mp[c]!);
            frameErr += Math.abs(mo[c]! - mc[c]!) / (SQ * (SQ + 1));
            nCells++;
          }
        }
        worstFrame = Math.max(worstFrame, frameErr);
        // Background: the cell rows the square never touches.
        for (const [a, b] of [[0, CY0 - 1], [CY0 + SQ + 1, ROWS]] as const) {
          rawSq += sqDiff(noisy, prevNoisy, a, b).sum;
          const d = sqDiff(out, prevOut, a, b);
          outSq += d.sum;
          cnt += d.n;
        }
      }
      prevClean.set(clean);
      prevNoisy.set(noisy);
      prevOut.set(out);
    }
    const meanErr = errNow / nCells;
    const meanErrPrev = errPrevFrame / nCells;
    const bgRatio = Math.sqrt(outSq / cnt) / Math.sqrt(rawSq / cnt);
    t.diagnostic(`s=${s}: square cells mean |error| vs current frame ${meanErr.toFixed(4)} (worst frame ${worstFrame.toFixed(4)}), `
      + `vs previous frame ${meanErrPrev.toFixed(4)}; background jitter ratio ${bgRatio.toFixed(3)}`);
    assert.ok(meanErrPrev > 0.1, 'a one-frame lag would be visible to this metric');
    assert.ok(meanErr < 0.02, `square tracking error ${meanErr} at s=${s}`);
    assert.ok(worstFrame < 0.05, `worst frame ${worstFrame}`);
    assert.ok(bgRatio <= 0.25, `background jitter ratio ${bgRatio} at s=${s}`);
  }
});

test('motionSensitivity: higher tracks a slow ramp closer, lower jitters less', (t) => {
  const base = Float32Array.from(texturedBase(), (v) => 0.1 + 0.6 * v);
  const results: { s: number; err: number; jitter: number }[] = [];
  for (const s of [0, 0.5, 0.7, 1]) {
    const f = new TemporalFilter({ columns: COLS, rows: ROWS });
    const gauss = gaussian(mulberry32(2024));
    const clean = new Float32Array(N);
    const noisy = new Float32Array(N);
    const prevOut = new Float32Array(N);
    let errSq = 0;
    let jitSq = 0;
    let cnt = 0;
    for (let frame = 0; frame < 60; frame++) {
      const offset = frame / 255;
      for (let i = 0; i < N; i++) clean[i] = base[i]! + offset;
      const out = f.step(addNoise(clean, gauss, SIGMA, noisy), s);
      if (frame >= 15) {
        for (let i = 0; i < N; i++) {
          const e = out[i]! - clean[i]!;
          const j = out[i]! - prevOut[i]! - 1 / 255; // deviation from the true per-frame change
          errSq += e * e;
          jitSq += j * j;
        }
        cnt += N;
      }
      prevOut.set(out);
    }
    results.push({ s, err: Math.sqrt(errSq / cnt), jitter: Math.sqrt(jitSq / cnt) });
  }
  t.diagnostic(results.map((r) => `s=${r.s}: RMS tracking error ${to255(r.err)}/255, RMS jitter ${to255(r.jitter)}/255`).join('; '));
  for (let k = 1; k < results.length; k++) {
    assert.ok(results[k]!.err < results[k - 1]!.err, `tracking error not decreasing at s=${results[k]!.s}`);
    assert.ok(results[k]!.jitter > results[k - 1]!.jitter, `jitter not increasing at s=${results[k]!.s}`);
  }
  // Every setting still smooths compared with the unfiltered input (jitter sqrt(2) * sigma).
  assert.ok(results[results.length - 1]!.jitter < Math.SQRT2 * SIGMA);
  assert.ok(motionThreshold(0) > motionThreshold(0.7) && motionThreshold(0.7) > motionThreshold(1));
});

test('resizing resets cleanly; reset() restarts; bad sizes throw', () => {
  const f = new TemporalFilter({ columns: COLS, rows: ROWS });
  const gauss = gaussian(mulberry32(5));
  const base = texturedBase();
  const first = f.step(addNoise(base, gauss, SIGMA, new Float32Array(N)), 0.7);
  f.step(addNoise(base, gauss, SIGMA, new Float32Array(N)), 0.7);
  assert.equal(f.stats.frames, 2);

  // New column count: passed explicitly.
  const small = new Float32Array(30 * 10 * SAMPLES).fill(0.25);
  const outSmall = f.step(small, 0.7, 30);
  assert.equal(f.columns, 30);
  assert.equal(f.rows, 10);
  assert.equal(outSmall.length, small.length);
  assert.deepEqual(Array.from(outSmall), Array.from(small), 'first frame after a resize passes through');
  assert.equal(f.stats.frames, 1);
  assert.equal(f.cellMotion.length, 300);
  assert.equal(f.cellStable.length, 300);
  assert.notEqual(outSmall, first);
  const again = f.step(new Float32Array(small.length).fill(0.25), 0.7);
  assert.equal(again, outSmall, 'buffer reused after the resize');
  assert.ok(f.cellStable.every((v) => v === 1));

  // Same columns, new length: rows follow from the length.
  const taller = new Float32Array(30 * 12 * SAMPLES).fill(0.6);
  assert.deepEqual(Array.from(f.step(taller, 0.7)), Array.from(taller));
  assert.equal(f.rows, 12);

  // reset(): the next frame passes through.
  f.step(new Float32Array(taller.length).fill(0.6), 0.7);
  f.reset();
  const jump = new Float32Array(taller.length).fill(0.1);
  assert.deepEqual(Array.from(f.step(jump, 0.7)), Array.from(jump));

  assert.throws(() => f.step(new Float32Array(30 * SAMPLES + 1), 0.7), RangeError);
  assert.throws(() => new TemporalFilter({ columns: 0, rows: 3 }), RangeError);
});

test('noise sigma is estimated from the data; a full-frame pan is motion, not noise', (t) => {
  const base = texturedBase();
  for (const sigma of [0.75 / 255, 6 / 255]) {
    const f = new TemporalFilter({ columns: COLS, rows: ROWS });
    const gauss = gaussian(mulberry32(11));
    const noisy = new Float32Array(N);
    const prevNoisy = new Float32Array(N);
    const prevOut = new Float32Array(N);
    const trace: string[] = [];
    let rawSq = 0;
    let outSq = 0;
    for (let frame = 0; frame < 40; frame++) {
      const out = f.step(addNoise(base, gauss, sigma, noisy), 0.7);
      if (frame % 5 === 4) trace.push(`${frame + 1}:${to255(f.stats.noiseSigma)}`);
      if (frame >= 20) {
        rawSq += sqDiff(noisy, prevNoisy).sum;
        outSq += sqDiff(out, prevOut).sum;
      }
      prevNoisy.set(noisy);
      prevOut.set(out);
    }
    const ratio = Math.sqrt(outSq / rawSq);
    t.diagnostic(`true sigma ${to255(sigma)}/255: estimate after frames ${trace.join(', ')}; jitter ratio ${ratio.toFixed(3)}`);
    assert.ok(Math.abs(f.stats.noiseSigma - sigma) < 0.1 * sigma, `sigma estimate ${f.stats.noiseSigma} for ${sigma}`);
    assert.ok(ratio <= 0.25, `jitter ratio ${ratio}`);
  }

  // Every cell moves (texture panned 3 samples per frame): the frame-to-frame residual is all motion.
  const f = new TemporalFilter({ columns: COLS, rows: ROWS });
  const gauss = gaussian(mulberry32(12));
  const clean = new Float32Array(N);
  const noisy = new Float32Array(N);
  let err = 0;
  let cnt = 0;
  for (let frame = 0; frame < 30; frame++) {
    for (let y = 0; y < H; y++) {
      for (let x = 0; x < W; x++) clean[y * W + x] = 0.5 + 0.3 * Math.sin((x + 3 * frame) / 6) * Math.cos(y / 9);
    }
    const out = f.step(addNoise(clean, gauss, SIGMA, noisy), 0.7);
    if (frame >= 5) {
      err += sqDiff(out, clean).sum;
      cnt += N;
    }
  }
  const rms = Math.sqrt(err / cnt);
  t.diagnostic(`pan: sigma estimate ${to255(f.stats.noiseSigma)}/255, motion share ${f.stats.motionShare.toFixed(3)}, RMS error vs clean ${to255(rms)}/255`);
  assert.ok(f.stats.noiseSigma < 1.2 * SIGMA, `pan inflated the noise estimate to ${f.stats.noiseSigma}`);
  assert.ok(f.stats.motionShare > 0.5, `pan motion share ${f.stats.motionShare}`);
  assert.ok(rms < 1.5 * SIGMA, `pan ghosting ${rms}`);
});
