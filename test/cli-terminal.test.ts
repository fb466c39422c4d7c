/**
 * The CLI on a real pseudo-terminal (util-linux `script`, sized with stty): fitting both terminal
 * dimensions, colour on by default and off with NO_COLOR, the 256- and 16-colour palettes,
 * COLUMNS/LINES when piped, and video playback through a system ffmpeg (skipped, saying so, when
 * ffmpeg is not installed).
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import sharp from 'sharp';
import { cliEnv, V2A_BIN, ensureCliBuilt, shellQuote } from './helpers/cli-run.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const hasScript = spawnSync('script', ['--version']).status === 0;
const hasFfmpeg = spawnSync('ffmpeg', ['-version']).status === 0 && spawnSync('ffprobe', ['-version']).status === 0;


/** The environment of a plain colour terminal, without what the test runner's may carry. */
function termEnv(extra: Record<string, string> = {}): Record<string, string> {
  return cliEnv({ TERM: 'xterm-256color', COLORTERM: 'truecolor', V2A_DEBUG: '', ...extra }, { terminal: true });
}

interface PtyRun { code: number | null; out: string }

/**
 * Runs `v2a args` with standard output on a pseudo-terminal of cols x rows. `keys` are typed
 * into the terminal once the output so far satisfies `when` (e.g. Ctrl-C after some frames).
 */
function inPty(args: readonly string[], size: { cols: number; rows: number }, env: Record<string, string>, keys?: { text: string; when: (out: string) => boolean }): Promise<PtyRun> {
  const cmd = `stty rows ${size.rows} cols ${size.cols}; exec ${shellQuote(process.execPath)} ${[V2A_BIN, ...args].map(shellQuote).join(' ')}`;
  return new Promise((resolve, reject) => {
    const child = spawn('script', ['-q', '-e', '-c', cmd, '/dev/null'], { cwd: ROOT, env, stdio: ['pipe', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    let typed = false;
    child.stdout.on('data', (c: Buffer) => {
      out.push(c);
      if (keys && !typed && keys.when(Buffer.concat(out).toString('utf8'))) {
        typed = true;
        child.stdin.write(keys.text);
      }
    });
    child.on('error', reject);
    child.on('close', (code) => {
      resolve({ code, out: Buffer.concat(out).toString('utf8').replace(/\r/g, '') });
    });
  });
}

function piped(args: readonly string[], env: Record<string, string>): Promise<PtyRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [V2A_BIN, ...args], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    child.stdout.on('data', (c: Buffer) => out.push(c));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, out: Buffer.concat(out).toString('utf8') }));
  });
}

const SGR = /\x1b\[([0-9;]*)m/g;
const sgrCodes = (s: string) => [...s.matchAll(SGR)].map((m) => m[1]!);
/** The art's rows: escapes removed, empty lines dropped. */
const artRows = (s: string) => s.replace(/\x1b\[[0-9;?]*[A-Za-z]/g, '').split('\n').filter((l) => l.length > 0);

let dir = '';
let wide = '';
let tall = '';
let clip = '';

before(async () => {
  await ensureCliBuilt();
  dir = mkdtempSync(join(tmpdir(), 'v2a-tty-'));
  wide = join(dir, 'wide.png');
  tall = join(dir, 'tall.png');
  const paint = (w: number, h: number) => {
    const d = Buffer.alloc(w * h * 3);
    for (let y = 0; y < h; y++) for (let x = 0; x < w; x++) {
      const i = (y * w + x) * 3;
      d[i] = (255 * x) / w; d[i + 1] = (255 * y) / h; d[i + 2] = Math.hypot(x - w / 2, y - h / 2) < Math.min(w, h) / 3 ? 230 : 40;
    }
    return sharp(d, { raw: { width: w, height: h, channels: 3 } });
  };
  await paint(400, 100).png().toFile(wide);
  await paint(200, 400).png().toFile(tall);
  if (hasFfmpeg) {
    clip = join(dir, 'clip.mp4');
    const r = spawnSync('ffmpeg', ['-v', 'error', '-f', 'lavfi', '-i', 'testsrc=size=160x120:rate=10', '-t', '1', '-pix_fmt', 'yuv420p', '-y', clip]);
    assert.equal(r.status, 0, String(r.stderr));
  }
});

after(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('v2a on a terminal', { skip: hasScript ? false : 'util-linux script is not installed' }, () => {
  for (const size of [{ cols: 100, rows: 30 }, { cols: 40, rows: 60 }]) {
    test(`${size.cols}x${size.rows}: the art fits both dimensions, wide and tall images alike`, async () => {
      for (const file of [wide, tall]) {
        const r = await inPty([file], size, termEnv({ NO_COLOR: '1' }));
        assert.equal(r.code, 0, r.out);
        const rows = artRows(r.out);
        const width = Math.max(...rows.map((l) => [...l].length));
        assert.ok(rows.length <= size.rows - 1, `${rows.length} rows in a ${size.rows}-row terminal`);
        assert.ok(width <= size.cols, `${width} columns in a ${size.cols}-column terminal`);
        // Fitted, not merely small: one dimension is used up.
        assert.ok(width === size.cols || rows.length >= size.rows - 2, `${width}x${rows.length} in ${size.cols}x${size.rows}`);
      }
    });
  }

  test('colour by default on a colour terminal; NO_COLOR=1 on the same terminal gives no colour SGR', async () => {
    const size = { cols: 80, rows: 24 };
    const coloured = await inPty([wide], size, termEnv());
    assert.equal(coloured.code, 0, coloured.out);
    assert.ok(sgrCodes(coloured.out).some((c) => c.startsWith('38;2;')), 'truecolor SGR with COLORTERM=truecolor');
    const plain = await inPty([wide], size, termEnv({ NO_COLOR: '1' }));
    assert.equal(plain.code, 0, plain.out);
    assert.deepEqual(sgrCodes(plain.out), [], 'no SGR at all');
    const term256 = await inPty([wide], size, { ...termEnv(), COLORTERM: '' });
    assert.ok(sgrCodes(term256.out).some((c) => c.startsWith('38;5;')), 'TERM=xterm-256color without COLORTERM: 256 colours');
    const dumb = await inPty([wide], size, { ...termEnv(), TERM: 'dumb', COLORTERM: '' });
    assert.deepEqual(sgrCodes(dumb.out), [], 'TERM=dumb: no colour');
  });

  test('--colors 256 emits only 38;5;n, --colors 16 only 30-37 and 90-97', async () => {
    const size = { cols: 80, rows: 24 };
    const c256 = sgrCodes((await inPty([wide, '--colors', '256'], size, termEnv())).out);
    assert.ok(c256.length > 10);
    for (const c of c256) assert.ok(c === '0' || /^38;5;\d+$/.test(c), `unexpected SGR ${c}`);
    const c16 = sgrCodes((await inPty([tall, '-c', '16'], size, termEnv())).out);
    assert.ok(c16.length > 5);
    for (const c of c16) assert.ok(c === '0' || /^(3[0-7]|9[0-7])$/.test(c), `unexpected SGR ${c}`);
    const none = sgrCodes((await inPty([wide, '--colors', 'none'], size, termEnv())).out);
    assert.deepEqual(none, []);
  });

  test('several images on a terminal: a blank line between them (piped, and one image, as they were)', async () => {
    const size = { cols: 80, rows: 24 };
    const run = (...files: string[]) => inPty([...files, '-w', '20'], size, termEnv({ NO_COLOR: '1' }));
    const [both, one, two] = await Promise.all([run(wide, tall), run(wide), run(tall)]);
    const text = (r: PtyRun) => r.out.replace(/\x1b\[[0-9;?]*[A-Za-z]/g, '');
    assert.equal(both.code, 0, both.out);
    assert.equal(text(both), `${text(one)}\n${text(two)}`);
    const pipedBoth = await piped([wide, tall, '-w', '20'], termEnv({ NO_COLOR: '1' }));
    const [pipedOne, pipedTwo] = await Promise.all([piped([wide, '-w', '20'], termEnv({ NO_COLOR: '1' })), piped([tall, '-w', '20'], termEnv({ NO_COLOR: '1' }))]);
    assert.equal(pipedBoth.out, pipedOne.out + pipedTwo.out);
  });

  test('-w, -H and --size on a terminal', async () => {
    const size = { cols: 100, rows: 30 };
    const w = artRows((await inPty([wide, '-w', '60'], size, termEnv({ NO_COLOR: '1' }))).out);
    assert.equal([...w[0]!].length, 60);
    const h = artRows((await inPty([tall, '-H', '10'], size, termEnv({ NO_COLOR: '1' }))).out);
    assert.equal(h.length, 10);
    const s = artRows((await inPty([wide, '--size', '50x5'], size, termEnv({ NO_COLOR: '1' }))).out);
    assert.ok(s.length <= 5 && Math.max(...s.map((l) => [...l].length)) <= 50);
  });

  test('--size takes × as well as x (the regex spells it \\u00d7 to keep the CLI bundle ASCII)', async () => {
    const x = await piped([wide, '--size', '50x5'], termEnv({ NO_COLOR: '1' }));
    const times = await piped([wide, '--size', '50×5'], termEnv({ NO_COLOR: '1' }));
    assert.equal(x.code, 0);
    assert.equal(times.code, 0);
    assert.ok(x.out.length > 0);
    assert.equal(times.out, x.out);
  });
});

describe('COLUMNS and LINES', () => {
  test('COLUMNS=50 when piped: the widest line is 50', async () => {
    const r = await piped([wide], termEnv({ COLUMNS: '50' }));
    assert.equal(r.code, 0);
    assert.equal(Math.max(...r.out.split('\n').map((l) => [...l].length)), 50);
    assert.ok(!r.out.includes('\x1b'), 'piped: no colour');
  });
  test('a file (-o) is the same whatever window it was made in: -H and --size are not bounded by COLUMNS', async () => {
    for (const args of [['-H', '10'], ['--size', 'x10']]) {
      const files = [];
      for (const columns of ['30', '']) {
        const file = join(dir, `h${columns}.txt`);
        const r = await piped([wide, ...args, '-o', file], termEnv(columns ? { COLUMNS: columns, LINES: '8' } : {}));
        assert.equal(r.code, 0, r.out);
        files.push(readFileSync(file, 'utf8'));
      }
      assert.equal(files[0], files[1], args.join(' '));
      const lines = files[0]!.trimEnd().split('\n');
      // 10 rows of the 4:1 image: about 80 columns, far past the window's 30.
      assert.equal(lines.length, 10, args.join(' '));
      assert.ok([...lines[0]!].length > 70, `${args.join(' ')}: ${[...lines[0]!].length} columns`);
    }
  });
  test('LINES bounds the rows of a tall image; piped, every row is the art\'s (no prompt follows it in a previewer\'s pane)', async () => {
    const r = await piped([tall], termEnv({ COLUMNS: '100', LINES: '21' }));
    assert.equal(r.code, 0);
    // It was 20: a row left for a prompt that piped output never has below it.
    assert.equal(r.out.trimEnd().split('\n').length, 21);
  });
  test('FZF_PREVIEW_COLUMNS and FZF_PREVIEW_LINES (fzf\'s preview window) come before COLUMNS and LINES', async () => {
    const [tallRun, wideRun] = await Promise.all([
      piped([tall], termEnv({ FZF_PREVIEW_COLUMNS: '60', FZF_PREVIEW_LINES: '12', COLUMNS: '100', LINES: '21' })),
      piped([wide], termEnv({ FZF_PREVIEW_COLUMNS: '30', COLUMNS: '100' })),
    ]);
    assert.equal(tallRun.code, 0);
    assert.equal(tallRun.out.trimEnd().split('\n').length, 12);
    assert.equal(wideRun.code, 0);
    assert.equal(Math.max(...wideRun.out.split('\n').map((l) => [...l].length)), 30);
  });
  test('FORCE_COLOR turns colour on when piped, at its level', async () => {
    const r = await piped([wide, '-w', '30'], { ...termEnv({ FORCE_COLOR: '2' }), TERM: 'dumb', COLORTERM: '' });
    const codes = sgrCodes(r.out);
    assert.ok(codes.length > 0 && codes.every((c) => c === '0' || /^38;5;\d+$/.test(c)));
  });
});

/** Frames drawn in place: each starts with one cursor move, up to the last frame's top (or home, drawn from the top). */
const frameCount = (out: string) => out.match(/\x1b\[(?:\d+A|H)/g)?.length ?? 0;

describe('video in the terminal', () => {
  if (!hasFfmpeg) {
    test('skipped: ffmpeg is not installed (apt-get install ffmpeg)', { skip: 'ffmpeg not installed' }, () => undefined);
    return;
  }
  test('v2a play clip.mp4 plays every frame in place, paced at the clip frame rate', { skip: hasScript ? false : 'no script' }, async () => {
    const t0 = performance.now();
    const r = await inPty(['play', clip, '--columns', '40'], { cols: 100, rows: 30 }, termEnv({ NO_COLOR: '1' }));
    const ms = performance.now() - t0;
    assert.equal(r.code, 0, r.out);
    const frames = frameCount(r.out);
    assert.ok(frames >= 1 && frames <= 10, `${frames} frames of 10 (late ones are dropped)`);
    assert.ok(ms >= 900, `a 1 s clip took ${ms.toFixed(0)} ms`);
    assert.ok(r.out.startsWith('\x1b[?25l'), 'cursor hidden');
    assert.ok(r.out.endsWith('\x1b[0m\x1b[?25h'), 'cursor and SGR restored');
  });
  test('Ctrl-C stops the playback, restores the terminal and exits 130', { skip: hasScript ? false : 'no script' }, async () => {
    const r = await inPty(['play', clip, '--loop', '0', '-w', '40'], { cols: 100, rows: 30 }, termEnv(), { text: '\x03', when: (out) => frameCount(out) > 2 });
    assert.equal(r.code, 130, r.out.slice(-200));
    assert.ok(frameCount(r.out) > 1, 'it was playing');
    assert.ok(r.out.endsWith('\x1b[0m\x1b[?25h'), JSON.stringify(r.out.slice(-40)));
  });
  test('piped: NDJSON of json-compact, one object per frame; render --animate alike', async () => {
    for (const args of [['play', clip, '--columns', '32'], ['render', clip, '--animate', '--columns', '32']]) {
      const r = await piped(args, termEnv());
      assert.equal(r.code, 0);
      const lines = r.out.trim().split('\n').map((l) => JSON.parse(l));
      assert.equal(lines.length, 10);
      assert.equal(lines[0].columns, 32);
    }
  });
  test('without ffmpeg on the PATH: a clear message, exit 3', async () => {
    const r = await new Promise<{ code: number | null; err: string }>((resolve) => {
      const child = spawn(process.execPath, [V2A_BIN, 'play', clip], { cwd: ROOT, env: { ...termEnv(), PATH: '/nonexistent' }, stdio: ['ignore', 'pipe', 'pipe'] });
      let err = '';
      child.stderr.on('data', (c: Buffer) => { err += c; });
      child.on('close', (code) => resolve({ code, err }));
    });
    assert.equal(r.code, 3);
    // Named by the file that needed it, as every error about an input file is.
    assert.equal(r.err.startsWith(`v2a: ${clip}: video needs ffmpeg (with ffprobe) on the PATH`), true, r.err);
    assert.match(r.err, /downloads nothing\n$/);
  });
});

describe('size and colour flags refuse what they cannot do', () => {
  const cases: [string[], RegExp][] = [
    [['--size', 'abc'], /^v2a: --size must be WxH, Wx or xH in characters, e\.g\. 80x24 \(got "abc"\)\n$/],
    [['--size', '5x10'], /^v2a: the box is 5 columns wide \(--size 5x10\); the art needs at least 8\n$/],
    [['--size', '0x10'], /^v2a: --size width must be a positive integer \(got "0"\)\n$/],
    [['-w', '20', '--columns', '30'], /^v2a: -w\/--width and --columns both set the width: give one\n$/],
    [['-H', '0'], /^v2a: -H\/--height must be an integer from 1 to 800 \(got "0"\)\n$/],
    [['-c', '88'], /^v2a: -c\/--colors must be one of truecolor, 256, 16, none \(got "88"\)\n$/],
    // A name is exact, as --charset's and --format's are.
    [['-c', 'NONE'], /^v2a: -c\/--colors must be one of truecolor, 256, 16, none \(got "NONE"\)\n$/],
    [['-c', '256', '--no-color'], /^v2a: --colors 256 and --no-color contradict each other: give one\n$/],
    [['-c', '16', '--format', 'html'], /^v2a: --colors 16 applies to ansi output, not html\n$/],
  ];
  for (const [args, message] of cases) {
    test(args.join(' '), async () => {
      const r = await new Promise<{ code: number | null; err: string; out: string }>((resolve) => {
        const child = spawn(process.execPath, [V2A_BIN, wide, ...args], { cwd: ROOT, env: termEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
        let err = '';
        let out = '';
        child.stderr.on('data', (c: Buffer) => { err += c; });
        child.stdout.on('data', (c: Buffer) => { out += c; });
        child.on('close', (code) => resolve({ code, err, out }));
      });
      assert.equal(r.code, 2);
      assert.equal(r.out, '');
      assert.match(r.err, message);
    });
  }
});
