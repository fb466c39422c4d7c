/**
 * The CLI in a box it must not leave, as a previewer's pane (fzf, lf, ranger) gives it: a tall
 * image fitted to a small box however the box is given (--size, -H, FZF_PREVIEW_*, COLUMNS/LINES),
 * a box narrower than the art's fewest columns refused alike from each, one wider than its most
 * capped; and the frames of --animate, which carry their display time. Runs the built bin
 * (helpers/cli-run.ts) on images made with sharp.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import sharp from 'sharp';
import { decodeCompact } from '../src/core/format/compact.js';
import { cliEnv, ROOT, V2A, ensureCliBuilt, runCli, type CliRun } from './helpers/cli-run.js';

const env = (extra: Record<string, string> = {}) => cliEnv({ V2A_DEBUG: '', ...extra }, { terminal: true, settings: true });
const v2a = (args: readonly string[], extra: Record<string, string> = {}): Promise<CliRun> => runCli(args, env(extra));

/** The art's lines, escapes removed. */
function artLines(out: string): string[] {
  assert.ok(out.endsWith('\n'), 'ends with a newline');
  return out.slice(0, -1).replace(/\x1b\[[0-9;]*m/g, '').split('\n');
}

let dir = '';
/** 100 x 800, white: at 8 columns, the fewest, 32 rows. */
let tall = '';
/** The same, black (dense glyphs with --invert). */
let tallBlack = '';
/** 10 x 20000: even at 8 columns 8000 rows, past the 800 the art can have. */
let needle = '';
/** 400 x 100. */
let wide = '';
/** Three frames of 50, 120 and 80 ms. */
let gif = '';

before(async () => {
  await ensureCliBuilt();
  dir = mkdtempSync(join(tmpdir(), 'v2a-box-'));
  tall = join(dir, 'tall.png');
  tallBlack = join(dir, 'tall-black.png');
  needle = join(dir, 'needle.png');
  wide = join(dir, 'wide.png');
  gif = join(dir, 'anim.gif');
  await sharp({ create: { width: 100, height: 800, channels: 3, background: '#ffffff' } }).png().toFile(tall);
  await sharp({ create: { width: 100, height: 800, channels: 3, background: '#000000' } }).png().toFile(tallBlack);
  await sharp({ create: { width: 10, height: 20000, channels: 3, background: '#ffffff' } }).png().toFile(needle);
  await sharp({ create: { width: 400, height: 100, channels: 3, background: '#808080' } }).png().toFile(wide);
  const frames = Buffer.concat([40, 140, 240].map((v) => Buffer.alloc(32 * 16 * 3, v)));
  await sharp(frames, { raw: { width: 32, height: 48, channels: 3, pageHeight: 16 } }).gif({ delay: [50, 120, 80], loop: 0 }).toFile(gif);
});

after(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** The image drawn in the middle of blank margins: each line blank at both ends, glyphs between, centred. */
function assertCentred(lines: readonly string[]): void {
  for (const l of lines) {
    const m = /^( +)(\S+)( +)$/.exec(l);
    assert.ok(m, `margins, then the image: ${JSON.stringify(l)}`);
    assert.ok(Math.abs(m[1]!.length - m[3]!.length) <= 1, `centred: ${JSON.stringify(l)}`);
  }
}

describe('a tall image in a small box fits it, however the box is given', { concurrency: 4 }, () => {
  test('--size 40x12, -w 40 -H 12, FZF_PREVIEW_* and COLUMNS/LINES: exactly 12 lines, 8 columns, the image centred; the same art each way', async () => {
    const routes: [string[], Record<string, string>][] = [
      [['--size', '40x12'], {}],
      [['-w', '40', '-H', '12'], {}],
      [['-H', '12'], { COLUMNS: '40' }],
      [[], { FZF_PREVIEW_COLUMNS: '40', FZF_PREVIEW_LINES: '12' }],
      [[], { COLUMNS: '40', LINES: '12' }],
    ];
    const runs = await Promise.all(routes.map(([args, extra]) => v2a(['render', tall, ...args], extra)));
    runs.forEach((r, i) => {
      const route = `${routes[i]![0].join(' ')} ${JSON.stringify(routes[i]![1])}`;
      assert.equal(r.code, 0, `${route}: ${r.stderr}`);
      const lines = artLines(r.stdout);
      assert.equal(lines.length, 12, route);
      for (const l of lines) assert.equal([...l].length, 8, `${route}: ${JSON.stringify(l)}`);
      assertCentred(lines);
      assert.equal(r.stdout, runs[0]!.stdout, route);
    });
  });

  test('in colour too, and with --invert the margins are the inverted ground: blank', async () => {
    const [colour, inverted] = await Promise.all([
      v2a(['render', '--color', tall], { FZF_PREVIEW_COLUMNS: '40', FZF_PREVIEW_LINES: '12' }),
      v2a(['render', '--invert', '--size', '40x12', tallBlack]),
    ]);
    for (const r of [colour, inverted]) {
      assert.equal(r.code, 0, r.stderr);
      const lines = artLines(r.stdout);
      assert.equal(lines.length, 12);
      assertCentred(lines);
    }
    assert.match(colour.stdout, /\x1b\[/, 'coloured');
  });

  test('blocks in colour: the margins of an image without alpha (a JPEG-like RGB PNG) are clear, the terminal\'s own background, not black', async () => {
    const r = await v2a(['render', '--charset', 'blocks', '--color', '--colors', 'truecolor', '--size', '40x12', tall]);
    assert.equal(r.code, 0, r.stderr);
    assert.doesNotMatch(r.stdout, /\x1b\[48;2;0;0;0m/, 'no black background');
    assert.match(r.stdout.split('\n')[0]!, /^(?:\x1b\[38;2;\d+;\d+;\d+m)?\x1b\[49m /, 'a row begins in the margin: the default background');
  });

  test('an image too tall for any column count (10 x 20000) fits a box as well', async () => {
    const r = await v2a(['render', needle, '--size', '40x12']);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(artLines(r.stdout).length, 12);
  });

  test('--animate fits the box too: each NDJSON frame has the box\'s rows', async () => {
    const r = await v2a(['render', tall, '--animate', '--size', '40x12']);
    assert.equal(r.code, 0, r.stderr);
    const frame = decodeCompact(r.stdout.trim());
    assert.equal(frame.rows, 12);
    assert.ok(frame.columns <= 40);
  });
});

describe('a box from 8 to 400 columns', { concurrency: 4 }, () => {
  test('narrower than 8 columns, from --size or the environment: refused alike, naming the box and the fewest (exit 2)', async () => {
    const cases: [string[], Record<string, string>, string][] = [
      [['--size', '5x10'], {}, '--size 5x10'],
      [[], { COLUMNS: '5' }, 'COLUMNS=5'],
      [[], { FZF_PREVIEW_COLUMNS: '5', FZF_PREVIEW_LINES: '10' }, 'FZF_PREVIEW_COLUMNS=5'],
      [['-H', '10'], { COLUMNS: '5' }, 'COLUMNS=5'],
    ];
    const runs = await Promise.all(cases.map(([args, extra]) => v2a(['render', wide, ...args], extra)));
    runs.forEach((r, i) => {
      assert.equal(r.code, 2, cases[i]![2]);
      assert.equal(r.stdout, '');
      assert.equal(r.stderr, `v2a: the box is 5 columns wide (${cases[i]![2]}); the art needs at least 8\n`);
    });
  });

  test('wider than 400 columns or taller than 800 rows, from --size as from the environment: capped', async () => {
    const [size, columns, tallBox] = await Promise.all([
      v2a(['render', wide, '--size', '500x']),
      v2a(['render', wide], { COLUMNS: '1000' }),
      v2a(['render', tall, '--size', '40x5000']),
    ]);
    assert.equal(size.code, 0, size.stderr);
    assert.equal(Math.max(...artLines(size.stdout).map((l) => [...l].length)), 400);
    assert.equal(columns.stdout, size.stdout);
    assert.equal(tallBox.code, 0, tallBox.stderr);
    assert.equal(artLines(tallBox.stdout).length, 160, '40 columns of a 1:8 image');
    const help = await v2a(['render', '--help']);
    assert.match(help.stdout.replace(/\s+/g, ' '), /a box wider than 400 columns or taller than 800 rows, the art's most, is capped/);
  });
});

describe('--animate writes each frame\'s display time', () => {
  test('every NDJSON frame carries delayMs; v2a decode reads the frames as before; --help says so', async () => {
    const r = await v2a(['render', gif, '--animate', '-w', '16']);
    assert.equal(r.code, 0, r.stderr);
    const frames = r.stdout.trimEnd().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    assert.deepEqual(frames.map((f) => f.delayMs), [50, 120, 80]);
    // An addition: json-compact's members are all there, as they were.
    for (const f of frames) assert.deepEqual(Object.keys(f), ['v', 'columns', 'rows', 'text', 'chroma', 'delayMs']);
    const ndjson = join(dir, 'frames.ndjson');
    const out = join(dir, 'frame.png');
    writeFileSync(ndjson, r.stdout);
    const decoded = spawnSync(V2A[0]!, [...V2A.slice(1), 'decode', ndjson, '-o', out], { cwd: ROOT, env: env(), encoding: 'utf8' });
    assert.equal(decoded.status, 0, decoded.stderr);
    for (const n of ['0001', '0002', '0003']) assert.ok(existsSync(join(dir, `frame-${n}.png`)), n);
    // A still image is one frame: decoded as one document.
    const still = await v2a(['render', wide, '--animate', '-w', '16']);
    const one = spawnSync(V2A[0]!, [...V2A.slice(1), 'decode', '-'], { cwd: ROOT, env: env(), input: still.stdout });
    assert.equal(one.status, 0, String(one.stderr));
    const [render, play] = await Promise.all([v2a(['render', '--help']), v2a(['play', '--help'])]);
    for (const help of [render, play]) assert.match(help.stdout.replace(/\s+/g, ' '), /display time in milliseconds as "delayMs"/);
  });
});

describe('a file cut short (still downloading) shows what it holds', () => {
  test('a truncated JPEG renders its top, with a one-line warning naming it; exit 0', async () => {
    const jpeg = await sharp({ create: { width: 256, height: 256, channels: 3, background: '#000', noise: { type: 'gaussian', mean: 200, sigma: 30 } } }).jpeg().toBuffer();
    const cut = join(dir, 'partial.jpg');
    writeFileSync(cut, jpeg.subarray(0, Math.floor(jpeg.length / 2)));
    const r = await v2a(['render', cut, '--columns', '20']);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stderr, `v2a: ${cut}: the image is truncated or damaged: showing the part that could be decoded\n`);
    const lines = artLines(r.stdout);
    assert.equal(lines[0]!.length, 20);
    assert.ok(lines[0]!.trim().length > 10, 'the top rows are drawn');
    // An intact file says nothing on stderr.
    const whole = join(dir, 'whole.jpg');
    writeFileSync(whole, jpeg);
    const ok = await v2a(['render', whole, '--columns', '20']);
    assert.deepEqual([ok.code, ok.stderr], [0, '']);
  });
});
