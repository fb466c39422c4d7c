/**
 * The `v2a` CLI against terminal habits: several files at once (`v2a *.png`), help that fits the
 * terminal, `-o /dev/stdout | head`, `decode -o` with another extension, a bare `v2a`. Runs the
 * built bin as a child process (helpers/cli-run.ts).
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import sharp from 'sharp';
import { cliEnv, ROOT, V2A, ensureCliBuilt, runCli, shellQuote } from './helpers/cli-run.js';
import { readLimits } from '../src/cli/terminal.js';

const hasBash = spawnSync('bash', ['-c', 'true']).status === 0;

/** The environment without the test runner's colour and size settings, which the CLI reads. */
function env(extra: Record<string, string> = {}): Record<string, string> {
  return cliEnv({ V2A_DEBUG: '', ...extra });
}

const v2a = (...args: string[]) => runCli(args, env());

let dir = '';
let a = '';
let b = '';
let gif = '';
let garbage = '';

before(async () => {
  await ensureCliBuilt();
  dir = mkdtempSync(join(tmpdir(), 'v2a-habits-'));
  a = join(dir, 'a.png');
  b = join(dir, 'b.png');
  gif = join(dir, 'anim.gif');
  garbage = join(dir, 'garbage.jpg');
  const gradient = (w: number, h: number, shift: number) => {
    const d = Buffer.alloc(w * h * 3);
    for (let i = 0; i < w * h; i++) [d[i * 3], d[i * 3 + 1], d[i * 3 + 2]] = [(255 * (i % w)) / w, (200 * Math.floor(i / w)) / h, shift];
    return d;
  };
  await sharp(gradient(160, 80, 0), { raw: { width: 160, height: 80, channels: 3 } }).png().toFile(a);
  await sharp(gradient(80, 80, 200), { raw: { width: 80, height: 80, channels: 3 } }).png().toFile(b);
  await sharp(Buffer.concat([0, 100, 200].map((s) => gradient(80, 40, s))), { raw: { width: 80, height: 120, channels: 3, pageHeight: 40 } })
    .gif({ delay: [50, 50, 50] })
    .toFile(gif);
  writeFileSync(garbage, 'not an image at all, just text '.repeat(10));
});

after(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('several input files', { concurrency: 4 }, () => {
  test('v2a a.png b.png renders each in turn: what v2a a.png and v2a b.png write, one after the other', async () => {
    const [both, one, two] = await Promise.all([v2a(a, b, '-w', '20'), v2a(a, '-w', '20'), v2a('render', b, '-w', '20')]);
    assert.equal(both.code, 0, both.stderr);
    assert.equal(both.stderr, '');
    assert.ok(one.stdout.length > 0 && two.stdout.length > 0);
    assert.equal(both.stdout, one.stdout + two.stdout);
  });

  test('a file that fails is reported by name and the next goes on; the exit code is the highest', async () => {
    const missing = join(dir, 'missing.png');
    const [r, one, two] = await Promise.all([v2a(a, missing, garbage, b, '-w', '20'), v2a(a, '-w', '20'), v2a(b, '-w', '20')]);
    assert.equal(r.code, 4, r.stderr);
    assert.equal(r.stdout, one.stdout + two.stdout);
    const lines = r.stderr.split('\n');
    assert.equal(lines.length, 3, r.stderr);
    assert.equal(lines[0], `v2a: ${missing}: no such file or directory`);
    assert.ok(lines[1]!.startsWith(`v2a: ${garbage}: The image format is not supported.`), lines[1]);
    const bad = await v2a(garbage, a, '-w', '20');
    assert.equal(bad.code, 3);
    assert.equal(bad.stdout, one.stdout);
  });

  test('--animate plays (or writes) each file in turn', async () => {
    const [both, one] = await Promise.all([v2a(gif, gif, '--animate', '-w', '20'), v2a(gif, '--animate', '-w', '20')]);
    assert.equal(both.code, 0, both.stderr);
    assert.equal(one.stdout.trim().split('\n').length, 3);
    assert.equal(both.stdout, one.stdout + one.stdout);
  });

  test('-o with several inputs, and - twice, are usage errors before anything is written', async () => {
    const out = join(dir, 'both.txt');
    const [o, dash] = await Promise.all([v2a(a, b, '-o', out), v2a('-', '-')]);
    assert.equal(o.code, 2);
    assert.equal(o.stderr, 'v2a: -o/--output writes one file, and 2 inputs were given: render them one at a time\n');
    assert.ok(!existsSync(out));
    assert.equal(dash.code, 2);
    assert.equal(dash.stderr, 'v2a: - (standard input) was given more than once\n');
    assert.equal(o.stdout + dash.stdout, '');
  });

  test('a URL given as the file says how to pipe it in (the CLI fetches nothing); -o x.compact.json writes json-compact, as the studio names it', async () => {
    const url = await v2a('https://example.com/photo.png', '-w', '20');
    assert.equal(url.code, 4);
    assert.equal(url.stderr, "v2a: https://example.com/photo.png: no such file (v2a reads files, not URLs: curl -sL 'https://example.com/photo.png' | v2a -)\n");
    const out = join(dir, 'art.compact.json'), plain = join(dir, 'art.json');
    const [compact, json] = await Promise.all([v2a(a, '-w', '20', '-o', out), v2a(a, '-w', '20', '-o', out.replace('art', 'forced'), '--format', 'json')]);
    assert.equal(compact.code, 0, compact.stderr);
    assert.equal(JSON.parse(readFileSync(out, 'utf8')).v, 1, 'json-compact');
    assert.equal(json.code, 0, json.stderr);
    assert.ok('version' in JSON.parse(readFileSync(out.replace('art', 'forced'), 'utf8')), '--format json still writes json');
    assert.equal((await v2a(a, '-w', '20', '-o', plain)).code, 0);
    assert.ok('version' in JSON.parse(readFileSync(plain, 'utf8')), '.json is json');
  });

  test('jp2a\'s --colors <file> habit: the file taken as the mode is named, with what to type instead (commander said only that the file was missing)', async () => {
    const r = await v2a('--colors', a);
    assert.equal(r.code, 2);
    assert.equal(r.stderr, `v2a: -c/--colors must be one of truecolor, 256, 16, none (got ${JSON.stringify(a)}) (-c/--colors takes a mode before the file: -c truecolor ${a}, or --color for colour at the terminal's depth)\n`);
  });

  test('several inputs in a one-document format (png, svg, html) on standard output are a usage error: the documents glued together made no valid file; json and text follow one another', async () => {
    const [png, svg, html, json] = await Promise.all([v2a(a, b, '--format', 'png'), v2a(a, b, '--format', 'svg'), v2a(a, b, '--format=html', '-w', '20'), v2a(a, b, '--format', 'json', '-w', '20')]);
    for (const [r, f] of [[png, 'png'], [svg, 'svg'], [html, 'html']] as const) {
      assert.equal(r.code, 2, f);
      assert.equal(r.stdout, '');
      assert.equal(r.stderr, `v2a: --format ${f} makes one whole document per image, and 2 inputs were given: several in one stream make no valid file; render them one at a time, each with -o <name>.${f}\n`);
    }
    assert.equal(json.code, 0, json.stderr);
  });
});

describe('help, usage and output habits', { concurrency: 4 }, () => {
  test('help fits 80 columns when piped: every command, the render parameters summary included', async () => {
    const commands = ['', 'render', 'play', 'decode', 'serve', 'mcp', 'completion'];
    const runs = await Promise.all(commands.map((c) => v2a(...(c ? [c] : []), '--help')));
    runs.forEach((r, i) => {
      assert.equal(r.code, 0, r.stderr);
      const wide = r.stdout.split('\n').filter((l) => [...l].length > 80);
      assert.deepEqual(wide, [], `v2a ${commands[i]} --help`);
    });
    assert.match(runs[0]!.stdout, /Render parameters/);
  });

  test('help says what an empty default means and uses no API jargon', async () => {
    const [top, render] = await Promise.all([v2a('--help'), v2a('render', '--help')]);
    for (const r of [top, render]) {
      assert.doesNotMatch(r.stdout, /beyond the contract/i);
      // The flag is the CLI's spelling: the API's parameter name means nothing here.
      assert.doesNotMatch(r.stdout, /colorDepth/);
      // It said `default ` and nothing more.
      assert.match(r.stdout, /--glyphs <glyphs>[^-]*default\s+none: the\s+charset's\s+ramp/);
    }
    assert.match(render.stdout, /--glyphs <glyphs>\s+Custom glyph ramp/);
  });

  test('habits of chafa, viu and timg get v2a\'s spelling; only close typos get a guess', async () => {
    const cases: [string[], string][] = [
      [[a, '-c', 'full'], 'v2a: -c/--colors must be one of truecolor, 256, 16, none (got "full") (Did you mean -c truecolor?)'],
      [[a, '-c', '240'], 'v2a: -c/--colors must be one of truecolor, 256, 16, none (got "240") (Did you mean -c 256?)'],
      [[a, '-c', '8'], 'v2a: -c/--colors must be one of truecolor, 256, 16, none (got "8") (Did you mean -c 16?)'],
      [[a, '-c', '2'], 'v2a: -c/--colors must be one of truecolor, 256, 16, none (got "2") (Did you mean --no-color?)'],
      [[a, '--symbols', 'block'], "v2a: unknown option '--symbols' (Did you mean --charset?) (see v2a render --help)"],
      [[a, '--fg-only'], "v2a: unknown option '--fg-only' (Did you mean --cell-colors fg?) (see v2a render --help)"],
      [[a, '-s', '80x24'], "v2a: unknown option '-s' (Did you mean --size?) (see v2a render --help)"],
      [[a, '-f', 'symbols'], "v2a: unknown option '-f' (Did you mean --format?) (see v2a render --help)"],
      [[a, '--fill', 'block'], "v2a: unknown option '--fill' (Did you mean --charset?) (see v2a render --help)"],
      [[a, '--chars= .:#'], "v2a: unknown option '--chars= .:#' (Did you mean --glyphs?) (see v2a render --help)"],
      [[a, '-i'], "v2a: unknown option '-i' (Did you mean --invert?) (see v2a render --help)"],
      [[a, '--cols', '80'], "v2a: unknown option '--cols' (Did you mean --columns?) (see v2a render --help)"],
      // viu's height: -h is help here, and printed the whole of it with exit 0.
      [[a, '-h', '20'], 'v2a: -h is --help; the height in rows is -H (-H 20) (see v2a --help)'],
      [['play', gif, '--colour'], "v2a: unknown option '--colour' (Did you mean --color?) (see v2a play --help)"],
      // Commander guessed --saturation and --dither: three edits, no typo.
      [[a, '--duration', '5'], "v2a: unknown option '--duration' (see v2a render --help)"],
      [[a, '--title', 'x'], "v2a: unknown option '--title' (see v2a render --help)"],
    ];
    const runs = await Promise.all(cases.map(([args]) => v2a(...args)));
    runs.forEach((r, i) => {
      assert.equal(r.code, 2, cases[i]![0].join(' '));
      assert.equal(r.stderr, `${cases[i]![1]}\n`);
    });
  });

  test('-w=40 is -w 40, as --width=40 is (its value was "=40")', async () => {
    const [eq, space, long] = await Promise.all([v2a(a, '-w=40'), v2a(a, '-w', '40'), v2a(a, '--width=40')]);
    assert.equal(eq.code, 0, eq.stderr);
    assert.equal(eq.stdout, space.stdout);
    assert.equal(eq.stdout, long.stdout);
    assert.equal(Math.max(...eq.stdout.split('\n').map((l) => [...l].length)), 40);
  });

  test('v2a alone: a usage line and where the help is, not the whole help', async () => {
    const r = await v2a();
    assert.equal(r.code, 2);
    assert.equal(r.stdout, '');
    const lines = r.stderr.trimEnd().split('\n');
    assert.ok(lines.length <= 2, r.stderr);
    assert.match(lines[0]!, /^Usage: v2a /);
    assert.match(r.stderr, /see v2a --help/);
  });

  test('render reads a file over the server\'s 16 MiB (a camera\'s 40-60 MP JPEG, a PNG screenshot): its own default is 256 MiB; V2A_MAX_IMAGE_BYTES still sets it; v2a mcp keeps 16 MiB', async () => {
    const big = join(dir, 'big.png');
    const w = 2600, h = 2200;
    const noise = Buffer.alloc(w * h * 3);
    for (let i = 0; i < noise.length; i++) noise[i] = (i * 2654435761) >>> 24;
    await sharp(noise, { raw: { width: w, height: h, channels: 3 } }).png({ compressionLevel: 0 }).toFile(big);
    assert.ok(statSync(big).size > 16 * 1024 * 1024);
    const [ok, capped] = await Promise.all([v2a(big, '-w', '20'), runCli([big, '-w', '20'], env({ V2A_MAX_IMAGE_BYTES: '16777216' }))]);
    assert.equal(ok.code, 0, ok.stderr);
    assert.equal(capped.code, 3);
    assert.match(capped.stderr, /too large .*the limit is 16777216 bytes \(V2A_MAX_IMAGE_BYTES\)/);
    assert.equal(readLimits({}, true).maxBytes, 256 * 1024 * 1024);
    assert.equal(readLimits({}).maxBytes, 16 * 1024 * 1024, 'v2a mcp: what agents send, as the server');
    // --help heads each limit with both defaults (it showed the server's alone).
    const help = await v2a('--help');
    assert.match(help.stdout.replace(/\s+/g, ' '), new RegExp(`V2A_MAX_IMAGE_BYTES \\(default ${256 * 1024 * 1024} for render and play, ${16 * 1024 * 1024} for decode, mcp and serve\\)`));
  });

  test('decode -o with an extension other than .png is refused (it wrote PNG bytes into y.txt); .PNG is PNG', async () => {
    const compact = await runCli([a, '-w', '8', '--format', 'json-compact', '-o', join(dir, 'cc.json')], env());
    assert.equal(compact.code, 0, compact.stderr);
    const txt = join(dir, 'y.txt');
    const upper = join(dir, 'Y.PNG');
    const [r, ok] = await Promise.all([v2a('decode', join(dir, 'cc.json'), '-o', txt), v2a('decode', join(dir, 'cc.json'), '-o', upper)]);
    assert.equal(r.code, 2);
    assert.equal(r.stderr, 'v2a: decode writes PNG: name the output file *.png, not *.txt\n');
    assert.ok(!existsSync(txt));
    assert.equal(ok.code, 0, ok.stderr);
    assert.equal((await sharp(upper).metadata()).format, 'png');
  });

  test('-o /dev/stdout into a pipe closed early (| head -c 10): quiet exit 0, as on standard output', { skip: hasBash ? false : 'no bash' }, () => {
    // Art of hundreds of kilobytes: more than a pipe holds, so the write meets the closed pipe.
    const cases = [[a, '-w', '400', '--color', '--format', 'ansi'], ['play', gif, '-w', '400']];
    for (const args of cases) {
      const line = `${[...V2A, ...args, '-o', '/dev/stdout'].map(shellQuote).join(' ')} | head -c 10 > /dev/null; echo "\${PIPESTATUS[0]}"`;
      const r = spawnSync('bash', ['-c', line], { cwd: ROOT, env: env(), encoding: 'utf8' });
      assert.equal(r.stderr, '', args.join(' '));
      assert.equal(r.stdout, '0\n', args.join(' '));
    }
  });
});
