/**
 * The `v2a` CLI, run as a real child process (the built bin, `node dist/cli/main.cjs ...`: cli-helpers.ts) on images
 * generated with sharp in a temporary directory.
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { createServer, type AddressInfo } from 'node:net';
import { closeSync, copyFileSync, existsSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { constants as osConstants, tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import sharp from 'sharp';
import { decodeCompact } from '../src/core/format/compact.js';
import { getGlyphSet } from '../src/core/glyphs/charsets.js';
import { PARAMS, kebabName, parseParams, type ParamDef } from '../src/core/params/index.js';
import { VERSION } from '../src/core/types.js';
import { EXIT, EXIT_MEANINGS } from '../src/core/errors.js';
import { loadConfig } from '../src/server/config.js';
import { cliEnv, V2A_BIN, ensureCliBuilt } from './helpers/cli-run.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

interface Run {
  code: number | null;
  stdout: Buffer;
  stderr: string;
  text: string;
}

function withoutTerminalSettings(env: NodeJS.ProcessEnv): Record<string, string> {
  return cliEnv({}, { from: env });
}

function v2a(args: readonly string[], opts: { input?: Buffer | string; env?: Record<string, string>; cwd?: string } = {}): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [V2A_BIN, ...args], {
      cwd: opts.cwd ?? ROOT,
      // Without the test runner's colour and size settings: the CLI reads them (view.ts).
      env: { ...withoutTerminalSettings(process.env), V2A_DEBUG: '', ...opts.env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (c: Buffer) => out.push(c));
    child.stderr.on('data', (c: Buffer) => err.push(c));
    child.on('error', reject);
    child.on('close', (code) => {
      const stdout = Buffer.concat(out);
      resolve({ code, stdout, stderr: Buffer.concat(err).toString('utf8'), text: stdout.toString('utf8') });
    });
    child.stdin.on('error', () => undefined); // the CLI may exit before reading all of stdin
    child.stdin.end(opts.input ?? '');
  });
}

const codePoints = (s: string) => [...s].length;

function lines(text: string): string[] {
  assert.ok(text.endsWith('\n'), 'output ends with a newline');
  return text.slice(0, -1).split('\n');
}

function assertGrid(text: string, columns: number, rows: number): void {
  const ls = lines(text);
  assert.equal(ls.length, rows, 'row count');
  for (const l of ls) assert.equal(codePoints(l), columns, `row width: ${JSON.stringify(l)}`);
}

let dir = '';
let png = '';
let jpeg = '';
let gif = '';
let garbage = '';

/** 320 x 160: a colour gradient with a bright disc; 40 columns -> 10 rows, 120 -> 30. */
function scene(width: number, height: number, shift = 0): Buffer {
  const data = Buffer.alloc(width * height * 3);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const i = (y * width + x) * 3;
      const d = Math.hypot(x - width * (0.3 + shift), y - height / 2);
      const disc = d < height * 0.3 ? 120 : 0;
      data[i] = Math.min(255, (255 * x) / width + disc);
      data[i + 1] = Math.min(255, (200 * y) / height + disc);
      data[i + 2] = Math.min(255, 60 + disc);
    }
  }
  return data;
}

before(async () => {
  await ensureCliBuilt();
  dir = mkdtempSync(join(tmpdir(), 'v2a-cli-'));
  png = join(dir, 'scene.png');
  jpeg = join(dir, 'scene.jpg');
  gif = join(dir, 'anim.gif');
  garbage = join(dir, 'garbage.jpg');
  const raw = { raw: { width: 320, height: 160, channels: 3 as const } };
  await sharp(scene(320, 160), raw).png().toFile(png);
  await sharp(scene(320, 160), raw).jpeg({ quality: 90 }).toFile(jpeg);
  const strip = Buffer.concat([0, 0.2, 0.4].map((s) => scene(80, 40, s)));
  await sharp(strip, { raw: { width: 80, height: 120, channels: 3, pageHeight: 40 } })
    .gif({ delay: [50, 50, 50], loop: 0 })
    .toFile(gif);
  writeFileSync(garbage, Buffer.from('this is not an image, only some bytes pretending to be one '.repeat(20)));
});

after(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('v2a render', { concurrency: 4 }, () => {
  test('renders to stdout with the default 120 columns when piped', async () => {
    const r = await v2a(['render', png]);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stderr, '');
    assertGrid(r.text, 120, 30);
  });

  test('--columns 40', async () => {
    const r = await v2a(['render', png, '--columns', '40']);
    assert.equal(r.code, 0, r.stderr);
    assertGrid(r.text, 40, 10);
  });

  test('--charset blocks uses only the blocks glyphs', async () => {
    const r = await v2a(['render', png, '--columns', '40', '--charset', 'blocks']);
    assert.equal(r.code, 0, r.stderr);
    assertGrid(r.text, 40, 10);
    const glyphs = new Set(getGlyphSet('blocks').glyphs);
    for (const ch of r.text.replace(/\n/g, '')) assert.ok(glyphs.has(ch), `unexpected glyph ${JSON.stringify(ch)}`);
    assert.ok([...r.text].some((ch) => ch.codePointAt(0)! > 0x7f), 'blocks output has non-ASCII glyphs');
  });

  test('--fine-shapes (extension) draws other glyphs on the same grid', async () => {
    const [plain, fine] = await Promise.all([v2a(['render', png, '--columns', '40']), v2a(['render', png, '--columns', '40', '--fine-shapes'])]);
    assert.equal(fine.code, 0, fine.stderr);
    assert.equal(fine.stderr, '');
    assertGrid(fine.text, 40, 10);
    assert.notEqual(fine.text, plain.text);
  });

  test('-o out.svg writes SVG and nothing to stdout', async () => {
    const out = join(dir, 'out.svg');
    const r = await v2a(['render', png, '--columns', '40', '-o', out]);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout.length, 0);
    assert.match(readFileSync(out, 'utf8'), /^(<svg|<\?xml)/);
  });

  test('-o art.png writes the png format (8 x 16 px per cell); --format png pipes the same bytes', async () => {
    const out = join(dir, 'art.png');
    const r = await v2a(['render', png, '--columns', '40', '--color', '-o', out]);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout.length, 0);
    const meta = await sharp(out).metadata();
    assert.deepEqual([meta.format, meta.width, meta.height], ['png', 40 * 8, 10 * 16]);
    const piped = await v2a(['render', png, '--columns', '40', '--color', '--format', 'png']);
    assert.equal(piped.code, 0, piped.stderr);
    assert.ok(piped.stdout.equals(readFileSync(out)), 'the same bytes, no newline added');
  });

  test('-o out.html writes HTML; .htm too', async () => {
    for (const name of ['out.html', 'out.htm']) {
      const out = join(dir, name);
      const r = await v2a(['render', png, '--columns', '40', '--color', '--output', out]);
      assert.equal(r.code, 0, r.stderr);
      assert.match(readFileSync(out, 'utf8'), /^<!doctype html>/i);
    }
  });

  test('-o out.ansi writes ansi, as .ans does', async () => {
    const out = join(dir, 'out.ansi');
    const r = await v2a(['render', png, '--columns', '40', '--color', '-o', out]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(readFileSync(out, 'utf8'), /\x1b\[38;2;\d+;\d+;\d+m/);
  });

  test('-o out.json writes the json format; --format json-compact -o x.json the compact one', async () => {
    const out = join(dir, 'out.json');
    const r = await v2a(['render', png, '--columns', '40', '-o', out]);
    assert.equal(r.code, 0, r.stderr);
    const doc = JSON.parse(readFileSync(out, 'utf8'));
    assert.equal(doc.format, 'json');
    assert.equal(doc.columns, 40);
    assert.equal(doc.rows, 10);
    assert.equal(doc.lines.length, 10);

    const compact = join(dir, 'compact.json');
    const c = await v2a(['render', png, '--columns', '40', '--format', 'json-compact', '-o', compact]);
    assert.equal(c.code, 0, c.stderr);
    const decoded = decodeCompact(readFileSync(compact, 'utf8').trim());
    assert.equal(decoded.columns, 40);
  });

  test('--format conflicting with the -o extension -> exit 2, no file', async () => {
    const out = join(dir, 'conflict.svg');
    const r = await v2a(['render', png, '--format', 'text', '-o', out]);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /^v2a: --format text conflicts with the output file extension \.svg/);
    assert.ok(!existsSync(out));
  });

  test('an unknown -o extension without --format -> exit 2', async () => {
    const r = await v2a(['render', png, '-o', join(dir, 'x.bmp')]);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /cannot tell the output format from the extension \.bmp/);
    // The suffixes it lists include the one the studio saves json-compact under.
    assert.match(r.stderr, /\.compact\.json json-compact/);
  });

  test('out-of-range --columns 500 -> exit 2 with the HTTP API message, nothing clamped', async () => {
    const r = await v2a(['render', png, '--columns', '500']);
    assert.equal(r.code, 2);
    assert.equal(r.stdout.length, 0);
    const expected = parseParams({ columns: '500' }, 'strings');
    assert.ok(!expected.ok);
    // The API's message, naming the flag the user typed.
    assert.equal(r.stderr, `v2a: --${expected.errors[0]!.message}\n`);
    assert.match(r.stderr, /^v2a: --columns must be an integer from 8 to 400/);
  });

  test('every invalid value is reported', async () => {
    const r = await v2a(['render', png, '--contrast', 'abc', '--charset', 'nope', '--mono-color', 'red']);
    assert.equal(r.code, 2);
    // Each as the flag the user typed (it said monoColor for --mono-color), one line each.
    assert.match(r.stderr, /^v2a: --charset must be one of/m);
    assert.match(r.stderr, /^v2a: --contrast must be a number from/m);
    assert.match(r.stderr, /^v2a: --mono-color must be a hex colour/m);
    assert.ok(!r.stderr.includes('    at '), 'no stack trace');
  });

  test('negative values are accepted (--brightness -20)', async () => {
    const r = await v2a(['render', png, '--columns', '20', '--brightness', '-20', '--edges', '--edge-strength', '2.5']);
    assert.equal(r.code, 0, r.stderr);
    assertGrid(r.text, 20, 5);
  });

  test('an unknown flag -> exit 2', async () => {
    const r = await v2a(['render', png, '--bogus']);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /^v2a: unknown option '--bogus'/);
  });

  test('a value flag given twice is a usage error, as a repeated field is over HTTP (commander kept the last)', async () => {
    // One process each, run side by side (a CLI start is seconds on a loaded machine).
    const cases = [['--columns', '40', '--columns', '50'], ['--charset', 'blocks', '--charset', 'dots'], ['-w', '20', '--width', '30'], ['-c', '256', '-c', '16']];
    const [serve, ...runs] = await Promise.all([v2a(['serve', '--port', '0', '--port', '1']), ...cases.map((args) => v2a(['render', png, ...args]))]);
    runs.forEach((r, i) => {
      assert.equal(r.code, 2, cases[i]!.join(' '));
      assert.match(r.stderr, /^v2a: (--columns|--charset|-w\/--width|-c\/--colors) was given more than once\n$/, cases[i]!.join(' '));
    });
    assert.equal(serve.stderr, 'v2a: -p/--port was given more than once\n');
  });

  test('v2a serve --host: an empty address is refused (it meant every interface), a bad one is named as the flag', async () => {
    const empty = await v2a(['serve', '--host', '', '--port', '0']);
    assert.equal(empty.code, 2);
    assert.equal(empty.stderr, 'v2a: --host needs an address (default 0.0.0.0, every interface)\n');
    const bad = await v2a(['serve', '--host', 'a b', '--port', '0']);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /^v2a: --host must be /);
  });

  test('integer flags take a sign and leading zeros as --columns does (+40, 040); each error on its own line', async () => {
    const [columns, ...same] = await Promise.all([
      v2a(['render', png, '--columns', '40']),
      v2a(['render', png, '-w', '+40']),
      v2a(['render', png, '-w', '040']),
      v2a(['render', png, '--size', '+40x']),
    ]);
    assert.equal(columns.code, 0, columns.stderr);
    for (const r of same) assert.equal(r.text, columns.text, r.stderr);
    const rows = await v2a(['render', png, '-H', '+10']);
    assert.equal(rows.code, 0, rows.stderr);
    const compact = await v2a(['render', png, '--columns', '8', '--format', 'json-compact']);
    const cell = await v2a(['decode', '-', '--cell-width', '+2', '-o', join(dir, 'signed.png')], { input: compact.stdout });
    assert.equal(cell.code, 0, cell.stderr);
    const bad = await v2a(['render', png, '-w', '-40']);
    assert.equal(bad.stderr, 'v2a: -w/--width must be an integer from 8 to 400 (got "-40")\n');
    // A server setting at fault per line, as typed.
    const settings = await v2a(['serve', '--port', '0'], { env: { V2A_WORKERS: 'x', V2A_QUEUE_LIMIT: 'y' } });
    assert.equal(settings.code, 2);
    assert.match(settings.stderr, /^v2a: V2A_WORKERS .*\nv2a: V2A_QUEUE_LIMIT .*\n$/);
  });

  test('a switch given a value (--color=false, --no-edges=1) means the switch it names; another value is refused', async () => {
    const runs = await Promise.all([
      ['--color'], ['--color=TRUE'], ['--no-color=0'], ['--no-color'], ['--color=false'], ['--color= 0 '],
      ['--edges'], ['--edges=1'], ['--no-edges=false'],
    ].map((flags) => v2a(['render', png, '--columns', '16', '--format', 'ansi', ...flags])));
    for (const r of runs) assert.equal(r.code, 0, r.stderr);
    const [on, ...rest] = runs.map((r) => r.text);
    assert.deepEqual(rest.slice(0, 2), [on, on]);
    assert.deepEqual(rest.slice(3, 5), [rest[2], rest[2]]);
    assert.notEqual(rest[2], on, '--no-color differs from --color');
    assert.deepEqual(rest.slice(6), [rest[5], rest[5]]);
    const bad = await v2a(['render', png, '--color=yes']);
    assert.deepEqual([bad.code, bad.stderr], [2, 'v2a: --color must be true, false, 1 or 0 (got "yes")\n']);
    // The value of a flag that takes one is left as given: -o names the file (it was written to "--no-color").
    const named = await v2a(['render', png, '--columns', '8', '-o', '--color=false'], { cwd: dir });
    assert.equal(named.code, 0, named.stderr);
    assert.ok(existsSync(join(dir, '--color=false')) && !existsSync(join(dir, '--no-color')));
  });

  test('v2a serve on an address it cannot listen on is a one-line usage error, not an internal one', async () => {
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    try {
      const port = (taken.address() as AddressInfo).port;
      const r = await v2a(['serve', '--port', String(port), '--host', '127.0.0.1']);
      assert.equal(r.code, 2, r.stderr);
      assert.equal(r.stderr, `v2a: cannot listen on 127.0.0.1:${port}: the address is already in use (another server on that port?)\n`);
    } finally {
      taken.close();
    }
  });

  test('v2a help and v2a help <command>, as --help lists them', async () => {
    const all = await v2a(['help']);
    assert.equal(all.code, 0, all.stderr);
    assert.match(all.text, /^Usage: v2a \[options\]/);
    assert.match(all.text, /help \[command\]\s+show help for a command/);
    const render = await v2a(['help', 'render']);
    assert.equal(render.code, 0, render.stderr);
    assert.match(render.text, /^Usage: v2a render \[options\] <file\.\.\.>/);
  });

  test('usage errors are one line each, the suggestion and the pointer to --help in it', async () => {
    const cases = [
      // The help of the command at fault: render's, the default command, lists its flags.
      [[png, '--bogus'], "v2a: unknown option '--bogus' (see v2a render --help)"],
      [[png, '--colour'], "v2a: unknown option '--colour' (Did you mean --color?) (see v2a render --help)"],
      [[png, '--columns'], "v2a: option '--columns <n>' argument missing (see v2a render --help)"],
      [['render'], "v2a: missing required argument 'file' (see v2a render --help)"],
      [['play'], "v2a: missing required argument 'file' (see v2a play --help)"],
      [['frobnicate'], "v2a: unknown command 'frobnicate' (and no such file) (see v2a --help)"],
      [['plya', 'clip.mp4'], "v2a: unknown command 'plya' (and no such file) (Did you mean play?) (see v2a --help)"],
      [['help', 'decdoe'], "v2a: unknown command 'decdoe' (Did you mean decode?) (see v2a --help)"],
    ] as const;
    // Side by side: a CLI start is seconds on a loaded machine.
    const runs = await Promise.all(cases.map(([args]) => v2a([...args])));
    runs.forEach((r, i) => {
      const [args, line] = cases[i]!;
      assert.equal(r.code, 2, args.join(' '));
      assert.equal(r.stderr, `${line}\n`);
    });
  });

  test('-o - is standard output (as - is standard input), not a file named -: render, --animate, play and decode write what they write without -o', async () => {
    const r = await v2a([png, '-w', '20', '-o', '-']);
    assert.equal(r.code, 0, r.stderr);
    assertGrid(r.text, 20, 5);
    assert.equal(existsSync(join(ROOT, '-')), false);
    // Sized as standard output is (COLUMNS), not as a file (120 columns).
    const env = { COLUMNS: '50' };
    const same = async (args: readonly string[], opts: { input?: Buffer; env?: Record<string, string> } = {}) => {
      const [plain, dash] = await Promise.all([v2a(args, opts), v2a([...args, '-o', '-'], opts)]);
      assert.equal(dash.code, 0, `${args.join(' ')} -o -: ${dash.stderr}`);
      assert.equal(plain.code, 0, plain.stderr);
      assert.ok(dash.stdout.length > 0 && dash.stdout.equals(plain.stdout), `${args.join(' ')} -o -`);
      return dash;
    };
    assertGrid((await same([png], { env })).text, 50, 13);
    await same(['render', gif, '--animate'], { env });
    await same(['play', gif], { env });
    const compact = await v2a([png, '-w', '20', '--format', 'json-compact']);
    await same(['decode', '-'], { input: compact.stdout });
    assert.equal(existsSync(join(ROOT, '-')), false);
  });

  test('-H, --size and the terminal\'s box are kept: an image that needs more rows even at 8 columns is drawn at 8 columns between blank margins, in the box\'s rows', async () => {
    const tall = join(dir, 'tall.png');
    await sharp({ create: { width: 50, height: 2000, channels: 3, background: '#888888' } }).png().toFile(tall);
    const boxes = [[tall, '-H', '10'], [tall, '--size', '40x10'], [tall, '-w', '40', '-H', '10']];
    // A box it fits in (at most its rows), and the terminal's height, a box as well. All side by side.
    const [fits, term, ...runs] = await Promise.all([v2a([tall, '-H', '200']), v2a([tall], { env: { COLUMNS: '80', LINES: '24' } }), ...boxes.map((args) => v2a(args))]);
    runs.forEach((r, i) => {
      assert.equal(r.code, 0, `${boxes[i]!.join(' ')}: ${r.stderr}`);
      assertGrid(r.text, 8, 10);
      assert.equal(r.text, runs[0]!.text, boxes[i]!.join(' '));
    });
    assert.equal(fits.code, 0, fits.stderr);
    assert.equal(lines(fits.text).length, 200);
    assert.equal(term.code, 0, term.stderr);
    assertGrid(term.text, 8, 24);
  });

  test('render given a video file takes a frame of it from ffmpeg (a header alone is no video); piped, it says to play it', async () => {
    // An ISO BMFF header with a video brand: sharp has no decoder for it, ffmpeg would.
    const head = Buffer.alloc(64);
    head.writeUInt32BE(24, 0);
    head.write('ftypisom', 4, 'latin1');
    const clip = join(dir, 'my clip.mp4');
    writeFileSync(clip, head);
    const r = await v2a([clip]);
    assert.equal(r.code, 3);
    assert.match(r.stderr, new RegExp(`^v2a: ${clip.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: (ffprobe cannot read the video|video needs ffmpeg)`));
    assert.equal(r.stderr.split(clip).length - 1, 1, `the file named once: ${r.stderr}`);
    const piped = await v2a(['-'], { input: head });
    assert.match(piped.stderr, /This is a video: play it with v2a play -, or render it from a file\.\n$/);
    // Anything else unsupported gets the plain message.
    assert.doesNotMatch((await v2a(['-'], { input: Buffer.from('plain text, not an image') })).stderr, /video/);
  });

  test('a file whose size is 0 until read (/proc) is read to its end; an empty file is empty', async () => {
    if (!existsSync('/proc/self/status')) return;
    assert.match((await v2a(['/proc/self/status'])).stderr, /format is not supported/);
    const empty = join(dir, 'empty.png');
    writeFileSync(empty, '');
    assert.equal((await v2a([empty])).stderr, `v2a: ${empty}: The image is empty (0 bytes).\n`);
  });

  test('a pixel limit under a tenth of a megapixel is named in pixels, not as 0 megapixels', async () => {
    const r = await v2a([png, '-w', '20'], { env: { V2A_MAX_IMAGE_PIXELS: '1000' } });
    assert.equal(r.code, 3);
    assert.match(r.stderr, /the limit is 1,000 pixels \(V2A_MAX_IMAGE_PIXELS\)\. Use a smaller image\.\n$/);
  });

  test('a missing file -> exit 4', async () => {
    const r = await v2a(['render', join(dir, 'missing.png')]);
    assert.equal(r.code, 4);
    // The input's name first, as every message about an input (it said "cannot read '...': ...").
    assert.match(r.stderr, /^v2a: \/.*missing\.png: no such file or directory\n$/);
  });

  test('-o with an empty name or naming the input file is a usage error, and the input is left alone', async () => {
    // `-o ''` printed the art to standard output; `-o same.png` overwrote the picture with its art.
    const same = join(dir, 'same.png');
    copyFileSync(png, same);
    const before = readFileSync(same);
    const cases = [['render', same], ['render', join(dir, '.', 'same.png')], ['play', same]] as const;
    const [empty, ...runs] = await Promise.all([v2a(['render', png, '--columns', '8', '-o', '']), ...cases.map(([cmd, out]) => v2a([cmd, same, '--columns', '8', '-o', out]))]);
    assert.equal(empty.code, 2);
    assert.equal(empty.stderr, 'v2a: -o/--output needs a file name (- for standard output)\n');
    assert.equal(empty.stdout.length, 0);
    runs.forEach((r, i) => {
      assert.equal(r.code, 2, cases[i]!.join(' -o '));
      assert.match(r.stderr, /^v2a: -o\/--output '.*same\.png' is the input file: refusing to overwrite it\n$/);
    });
    assert.ok(readFileSync(same).equals(before));
  });

  test('-o naming the file standard input reads (- < photo.png) is refused, and the photo is left alone', () => {
    const same = join(dir, 'stdin-same.png');
    copyFileSync(png, same);
    const before = readFileSync(same);
    for (const out of [same, '/dev/stdin']) {
      const fd = openSync(same, 'r');
      try {
        const r = spawnSync(process.execPath, [V2A_BIN, '-', '--columns', '8', '-o', out], { cwd: ROOT, env: { ...withoutTerminalSettings(process.env), V2A_DEBUG: '' }, stdio: [fd, 'pipe', 'pipe'], encoding: 'utf8' });
        assert.equal(r.status, 2, out);
        assert.match(r.stderr, /^v2a: -o\/--output '.*' is the file standard input reads: refusing to overwrite it\n$/);
      } finally {
        closeSync(fd);
      }
    }
    assert.ok(readFileSync(same).equals(before));
  });

  test('file names and values are shown with their control characters escaped: one line, no escape sequence reaches the terminal', async () => {
    const r = await v2a(['render', join(dir, 'no\npe\u001b]0;title\u0007.png')]);
    assert.equal(r.code, 4);
    assert.match(r.stderr, /^v2a: \/.*no\\u000ape\\u001b\]0;title\\u0007\.png: no such file or directory\n$/);
  });

  test('standard input that is a directory -> exit 4 naming it, not "the image is empty"', () => {
    const fd = openSync(dir, 'r');
    try {
      const r = spawnSync(process.execPath, [V2A_BIN, '-'], { cwd: ROOT, env: { ...withoutTerminalSettings(process.env), V2A_DEBUG: '' }, stdio: [fd, 'pipe', 'pipe'], encoding: 'utf8' });
      assert.equal(r.status, 4);
      assert.equal(r.stderr, 'v2a: cannot read standard input: is a directory\n');
    } finally {
      closeSync(fd);
    }
  });

  test('an unwritable output -> exit 4', async () => {
    const r = await v2a(['render', png, '--columns', '8', '-o', join(dir, 'no', 'such', 'dir.txt')]);
    assert.equal(r.code, 4);
    assert.match(r.stderr, /^v2a: cannot write /);
  });

  test('garbage bytes -> exit 3 with the decoder message, no stack trace', async () => {
    const r = await v2a(['render', garbage]);
    assert.equal(r.code, 3);
    assert.equal(r.stderr.startsWith(`v2a: ${garbage}: The image format is not supported.`), true, r.stderr);
    assert.equal(r.stderr.split('\n').length, 2);
  });

  test('V2A_MAX_IMAGE_BYTES, V2A_MAX_IMAGE_PIXELS and V2A_MAX_DECODED_BYTES apply (exit 3); a bad value is exit 2', async () => {
    // 1024 x 1024 RGBA needs 4 MiB to decode: over a 1 MiB V2A_MAX_DECODED_BYTES.
    const big = join(dir, 'decoded-4mib.png');
    writeFileSync(big, await sharp({ create: { width: 1024, height: 1024, channels: 4, background: { r: 9, g: 99, b: 199, alpha: 0.5 } } }).png().toBuffer());
    // Side by side: a CLI start is seconds on a loaded machine.
    const [bytes, pixels, decoded, unlimited, bad] = await Promise.all([
      v2a(['render', png], { env: { V2A_MAX_IMAGE_BYTES: '100' } }),
      v2a(['render', png], { env: { V2A_MAX_IMAGE_PIXELS: '1000' } }),
      v2a(['render', big, '--columns', '16'], { env: { V2A_MAX_DECODED_BYTES: '1MiB' } }),
      v2a(['render', big, '--columns', '16']),
      v2a(['render', png], { env: { V2A_MAX_IMAGE_PIXELS: 'lots' } }),
    ]);
    assert.equal(bytes.code, 3);
    assert.match(bytes.stderr, /too large/);
    assert.equal(pixels.code, 3);
    assert.match(pixels.stderr, /too many pixels/);
    assert.equal(decoded.code, 3, decoded.stderr);
    assert.match(decoded.stderr, /^v2a: .*decoded-4mib\.png: Decoding the image would take about 4 MiB .*the limit is 1 MiB \(V2A_MAX_DECODED_BYTES\)/);
    assert.equal(unlimited.code, 0);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /^v2a: V2A_MAX_IMAGE_PIXELS must be an integer from 1 to 1000000000 \(got "lots"\)\n$/);
  });

  test('the CLI reads the limits with the server\'s parser: separators and byte units', async () => {
    const values = ['16_777_216', '16MiB', '16 mib'];
    const [tiny, ...runs] = await Promise.all([v2a(['render', png], { env: { V2A_MAX_IMAGE_BYTES: '1k' } }), ...values.map((value) => v2a(['render', png, '--columns', '16'], { env: { V2A_MAX_IMAGE_BYTES: value } }))]);
    runs.forEach((r, i) => {
      assert.equal(r.code, 0, `${values[i]}: ${r.stderr}`);
      assert.deepEqual(loadConfig({ V2A_MAX_IMAGE_BYTES: values[i] }).maxImageBytes, 16 * 1024 * 1024, values[i]);
    });
    assert.equal(tiny.code, 3, tiny.stderr);
  });

  test('stdin input with -', async () => {
    const [piped, file] = await Promise.all([
      v2a(['render', '-', '--columns', '40'], { input: readFileSync(jpeg) }),
      v2a(['render', jpeg, '--columns', '40']),
    ]);
    assert.equal(piped.code, 0, piped.stderr);
    assertGrid(piped.text, 40, 10);
    assert.equal(piped.text, file.text);
  });

  test('--color gives ansi; --no-color and --color --format text do not', async () => {
    const [color, noColor, last, text] = await Promise.all([
      // Piped, --color takes the depth of the terminal it runs in (TERM, COLORTERM): truecolor here.
      v2a(['render', png, '--columns', '20', '--color'], { env: { COLORTERM: 'truecolor' } }),
      v2a(['render', png, '--columns', '20', '--no-color']),
      v2a(['render', png, '--columns', '20', '--color', '--no-color']),
      v2a(['render', png, '--columns', '20', '--color', '--format', 'text']),
    ]);
    for (const r of [color, noColor, last, text]) assert.equal(r.code, 0, r.stderr);
    assert.match(color.text, /\x1b\[38;2;\d+;\d+;\d+m/);
    assert.ok(!noColor.text.includes('\x1b'));
    assert.ok(!last.text.includes('\x1b'), 'the last of --color / --no-color wins');
    assert.ok(!text.text.includes('\x1b'));
    assertGrid(text.text, 20, 5);
  });

  test('--animate on a 3-frame GIF, piped: 3 NDJSON lines of json-compact, each with its frame\'s delayMs', async () => {
    const r = await v2a(['render', gif, '--animate', '--columns', '30']);
    assert.equal(r.code, 0, r.stderr);
    const ls = lines(r.text);
    assert.equal(ls.length, 3);
    for (const l of ls) {
      // The frame's display time is an extension member the decoder takes.
      const d = decodeCompact(l);
      assert.equal(d.delayMs, 50);
      assert.equal(d.columns, 30);
      assert.equal(d.rows, 8);
    }
    assert.notEqual(ls[0], ls[2], 'the frames differ');
  });

  test('--animate with a --format other than json-compact when piped -> exit 2', async () => {
    const r = await v2a(['render', gif, '--animate', '--format', 'svg']);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /NDJSON of json-compact/);
    // An output file named for another format, or for one v2a does not write, is refused too
    // (-o clip.gif wrote NDJSON under that name); .ndjson, .jsonl, .json and none are written.
    for (const name of ['clip.gif', 'clip.mp4', 'clip.svg']) {
      const named = await v2a(['render', gif, '--animate', '-o', join(dir, name)]);
      assert.equal(named.code, 2, name);
      assert.match(named.stderr, new RegExp(`^v2a: an animation is written as NDJSON of json-compact; the output file extension \\.${name.split('.')[1]}( \\(svg\\))? does not fit: use \\.ndjson or \\.json\\n$`), name);
      assert.ok(!existsSync(join(dir, name)), name);
    }
    for (const name of ['frames.jsonl', 'frames']) {
      const written = await v2a(['render', gif, '--animate', '-o', join(dir, name)]);
      assert.equal(written.code, 0, written.stderr);
      assert.equal(lines(readFileSync(join(dir, name), 'utf8')).length, 3, name);
    }
    const loop = await v2a(['render', png, '--loop', '2']);
    assert.equal(loop.code, 2);
  });

  test('--loop piped or with -o is refused (the frames are written once), and a bad count names --loop', async () => {
    const out = join(dir, 'looped.ndjson');
    const [piped, file, bad] = await Promise.all([
      v2a(['play', gif, '--loop', '3']),
      v2a(['render', gif, '--animate', '--loop', '0', '-o', out]),
      v2a(['play', gif, '--loop', 'x']),
    ]);
    assert.deepEqual([piped.code, piped.stdout.length], [2, 0]);
    assert.equal(piped.stderr, 'v2a: --loop applies to playing on a terminal; piped, the frames are written once as NDJSON\n');
    assert.equal(file.code, 2);
    assert.match(file.stderr, /with -o, the frames are written once/);
    assert.ok(!existsSync(out));
    assert.equal(bad.stderr, 'v2a: --loop must be an integer from 0 (forever) to 1000000 (got "x")\n');
  });
});

describe('v2a decode', { concurrency: 4 }, () => {
  test('render json-compact -> decode -> PNG of columns x 8 by rows x 16', async () => {
    const rendered = await v2a(['render', png, '--columns', '40', '--format', 'json-compact']);
    assert.equal(rendered.code, 0, rendered.stderr);
    const out = join(dir, 'round.png');
    const [piped, file] = await Promise.all([
      v2a(['decode', '-'], { input: rendered.stdout }),
      v2a(['decode', '-', '-o', out, '--cell-width', '2', '--cell-height', '4'], { input: rendered.stdout }),
    ]);
    assert.equal(piped.code, 0, piped.stderr);
    const meta = await sharp(piped.stdout).metadata();
    assert.equal(meta.format, 'png');
    assert.equal(meta.width, 320);
    assert.equal(meta.height, 160);
    assert.equal(file.code, 0, file.stderr);
    const fileMeta = await sharp(out).metadata();
    assert.deepEqual([fileMeta.width, fileMeta.height], [80, 40]);
    // The decoded colours are the cell colours of the render.
    const { rgb } = decodeCompact(rendered.text.trim());
    const { data } = await sharp(piped.stdout).raw().toBuffer({ resolveWithObject: true });
    assert.deepEqual([...data.subarray(0, 3)], [...rgb.subarray(0, 3)]);
  });

  test('NDJSON from --animate -> numbered PNG files', async () => {
    const frames = await v2a(['render', gif, '--animate', '--columns', '16']);
    assert.equal(frames.code, 0, frames.stderr);
    const ndjson = join(dir, 'frames.ndjson');
    writeFileSync(ndjson, frames.stdout);
    const r = await v2a(['decode', ndjson, '-o', join(dir, 'frame.png')]);
    assert.equal(r.code, 0, r.stderr);
    for (const n of ['0001', '0002', '0003']) {
      const meta = await sharp(join(dir, `frame-${n}.png`)).metadata();
      assert.deepEqual([meta.width, meta.height], [16 * 8, 4 * 16]);
    }
    assert.ok(!existsSync(join(dir, 'frame-0004.png')));
  });

  test('decode bounds the picture it makes by V2A_MAX_IMAGE_PIXELS: exit 3 naming the size, as for an image over it, not an internal error', async () => {
    const rendered = await v2a(['render', png, '--columns', '200', '--format', 'json-compact']);
    const rows = decodeCompact(rendered.text.trim()).rows;
    // 200 x rows cells of 256 x 256 px: an allocation of gigabytes ("Invalid typed array length").
    const huge = await v2a(['decode', '-', '--cell-width', '256', '--cell-height', '256', '-o', join(dir, 'huge.png')], { input: rendered.stdout });
    assert.equal(huge.code, 3);
    assert.equal(huge.stderr, `v2a: standard input: the PNG of 200 x ${rows} cells of 256 x 256 px would be 51200 x ${rows * 256} px, over the limit of 50,000,000 pixels (V2A_MAX_IMAGE_PIXELS): give a smaller --cell-width or --cell-height, or raise the limit\n`);
    assert.ok(!existsSync(join(dir, 'huge.png')));
    const limited = await v2a(['decode', '-'], { input: rendered.stdout, env: { V2A_MAX_IMAGE_PIXELS: '1000' } });
    assert.equal(limited.code, 3);
    assert.match(limited.stderr, /over the limit of 1,000 pixels \(V2A_MAX_IMAGE_PIXELS\)/);
  });

  test('invalid json-compact -> exit 3 with the decoder message', async () => {
    const r = await v2a(['decode', '-'], { input: '{"v":1,"columns":2}' });
    assert.equal(r.code, 3);
    assert.match(r.stderr, /^v2a: standard input: invalid json-compact: document lacks "rows"\n$/);
    const junk = await v2a(['decode', garbage]);
    assert.equal(junk.code, 3);
    assert.equal(junk.stderr, `v2a: ${garbage}: invalid json-compact: not JSON; decode reads what v2a render --format json-compact writes\n`);
    // Another of v2a's outputs is named as such, and so is a JSON document of something else.
    const json = (await v2a(['render', png, '--columns', '8', '--format', 'json'])).text;
    const wrong = await v2a(['decode', '-'], { input: json });
    assert.equal(wrong.code, 3);
    assert.equal(wrong.stderr, 'v2a: standard input: invalid json-compact: this is v2a\'s "json" output, not json-compact; decode reads what v2a render --format json-compact writes\n');
    assert.match((await v2a(['decode', '-'], { input: '{"a":1}' })).stderr, /^v2a: standard input: invalid json-compact: document lacks "v"; decode reads what v2a render --format json-compact writes\n$/);
    // NDJSON: the line of the file, blank lines counted.
    const doc = (await v2a(['render', png, '--columns', '8', '--format', 'json-compact'])).text.trim();
    const lines = await v2a(['decode', '-', '-o', join(dir, 'lines.png')], { input: `${doc}\n\n${doc}\n\n{"v":1}\n` });
    assert.equal(lines.code, 3);
    assert.match(lines.stderr, /^v2a: standard input: invalid json-compact: line 5: document lacks "columns"\n$/);
  });

  test('an invalid --cell-width -> exit 2', async () => {
    const r = await v2a(['decode', '-', '--cell-width', '0'], { input: '{}' });
    assert.equal(r.code, 2);
    assert.match(r.stderr, /--cell-width must be an integer from 1 to 256 \(got "0"\)/);
  });
});

describe('v2a help and version', { concurrency: 4 }, () => {
  test('v2a --help and v2a render --help list every parameter flag', async () => {
    const [top, render] = await Promise.all([v2a(['--help']), v2a(['render', '--help'])]);
    for (const r of [top, render]) {
      assert.equal(r.code, 0, r.stderr);
      for (const def of PARAMS as readonly ParamDef[]) {
        const flag = def.cliFlag?.split(', ').pop() ?? `--${kebabName(def.name)}`;
        assert.ok(new RegExp(`${flag}\\b`).test(r.text), `${flag} missing from help`);
        if (def.type === 'boolean') assert.ok(r.text.includes(`--no-${kebabName(def.name)}`), `--no-${kebabName(def.name)} missing`);
      }
    }
    assert.match(top.text, /render \[options\] <file\.\.\.>/);
    assert.match(top.text, /decode \[options\] <file>/);
    assert.match(top.text, /Exit codes:/);
    // Every code of the one table, with its meaning; a signal's is 128 + its number, as shells report it.
    for (const [k, code] of Object.entries(EXIT) as [keyof typeof EXIT, number][]) assert.ok(top.text.replace(/\s+/g, ' ').includes(`${code} ${EXIT_MEANINGS[k]}`), `exit ${code} in --help`);
    assert.deepEqual([EXIT.hangup, EXIT.interrupted, EXIT.quit, EXIT.terminated], ['SIGHUP', 'SIGINT', 'SIGQUIT', 'SIGTERM'].map((s) => 128 + osConstants.signals[s as 'SIGHUP']));
    assert.match(render.text, /--output <file>/);
    assert.match(render.text, /--animate/);
    assert.match(render.text, /an\s+integer\s+from\s+8\s+to\s+400;\s+default\s+120/);
  });

  test('--version prints the version', async () => {
    const r = await v2a(['--version']);
    assert.equal(r.code, 0);
    assert.equal(r.text, `${VERSION}\n`);
  });

  test('no command -> help on stderr, exit 2; unknown command -> exit 2', async () => {
    const [none, unknown] = await Promise.all([v2a([]), v2a(['paint', png])]);
    assert.equal(none.code, 2);
    assert.match(none.stderr, /Usage: v2a/);
    assert.equal(unknown.code, 2);
    assert.match(unknown.stderr, /unknown command 'paint'/);
  });
});

describe('internal errors are one line', () => {
  test("sharp's load failure (an install without its optional platform package) says what to do; other messages keep their first line", async () => {
    const { internalMessage } = await import('../src/cli/program.js');
    const sharpText = 'Could not load the "sharp" module using the linux-x64 runtime\nPossible solutions:\n- Ensure optional dependencies can be installed:\n    npm install --include=optional sharp';
    const msg = internalMessage(sharpText);
    assert.doesNotMatch(msg, /\n/);
    assert.match(msg, /^sharp's native library for this platform \(.+\) is not installed: reinstall v2a with optional dependencies \(npm install --include=optional\)/);
    assert.match(internalMessage('first\nsecond\nthird'), /^internal error: first( \(set V2A_DEBUG=1 for details\))?$/);
  });
});
