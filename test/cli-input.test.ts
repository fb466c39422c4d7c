/**
 * What the CLI does with its input before it renders: an input that is neither an image nor a
 * video refused from its first bytes (without reading the rest or loading sharp), the CLI's own
 * limits for a user's files (a 60 MP camera JPEG), messages about an input naming it first, and
 * the one list of video containers. Runs the built bin as a child process (helpers/cli-run.ts).
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, mkdtempSync, openSync, rmSync, writeFileSync, ftruncateSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import sharp from 'sharp';
import { cliEnv, ROOT, V2A, ensureCliBuilt, runCli } from './helpers/cli-run.js';
import { readLimits } from '../src/cli/terminal.js';
import { VIDEO_FORMATS_IN_WORDS, isImage, isVideo } from '../src/cli/media-type.js';

const hasPython = spawnSync('python3', ['-c', 'import resource']).status === 0;

function env(extra: Record<string, string> = {}): Record<string, string> {
  return cliEnv({ NO_COLOR: '1', ...extra }, { settings: true });
}
const v2a = (...args: string[]) => runCli(args, env());

const UNSUPPORTED = 'The image format is not supported. Use a JPEG, PNG, WebP, GIF, AVIF or TIFF image.';

let dir = '';
let text = '';
let big = '';

before(async () => {
  await ensureCliBuilt();
  dir = mkdtempSync(join(tmpdir(), 'v2a-input-'));
  text = join(dir, 'notes.txt');
  writeFileSync(text, 'not an image at all\n'.repeat(20));
  // 200 MB of nothing (sparse): as `truncate -s 200M big.png`.
  big = join(dir, 'big.png');
  const fd = openSync(big, 'w');
  ftruncateSync(fd, 200 * 1024 * 1024);
  closeSync(fd);
});

after(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** `v2a args` run by python3, which reports the peak resident memory of its child (KiB). */
function peakRss(args: readonly string[]): { code: number; stderr: string; kib: number } {
  const script = `import resource, subprocess, sys, json
r = subprocess.run(sys.argv[1:], capture_output=True, text=True)
print(json.dumps({'code': r.returncode, 'stderr': r.stderr, 'kib': resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss}))`;
  const r = spawnSync('python3', ['-c', script, ...V2A, ...args], { cwd: ROOT, env: env(), encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  return JSON.parse(r.stdout) as { code: number; stderr: string; kib: number };
}

describe('neither an image nor a video: refused from its first bytes', { concurrency: 4 }, () => {
  test('a 200 MB non-image is refused without being read: same exit code and message, a fraction of the memory', { skip: hasPython ? false : 'python3 is not installed' }, () => {
    for (const args of [[big], ['play', big]]) {
      const r = peakRss(args);
      assert.equal(r.code, 3, r.stderr);
      assert.ok(r.stderr.startsWith(`v2a: ${big}: ${UNSUPPORTED}`), r.stderr);
      // Read whole (and sharp loaded), it peaked at 267 MB; sniffed, about 50.
      assert.ok(r.kib < 150 * 1024, `${args.join(' ')}: peak RSS ${Math.round(r.kib / 1024)} MB`);
    }
  });

  test('a device read to its end (/dev/zero) is refused at its first bytes, not read up to the byte limit', { skip: existsSync('/dev/zero') ? false : 'no /dev/zero' }, async () => {
    const r = await v2a('/dev/zero');
    assert.equal(r.code, 3);
    assert.equal(r.stderr, `v2a: /dev/zero: ${UNSUPPORTED}\n`);
  });

  test('standard input is sniffed as it is read; images and videos still pass, with the messages they had', async () => {
    const png = await sharp({ create: { width: 32, height: 16, channels: 3, background: '#406080' } }).png().toBuffer();
    const mp4 = Buffer.alloc(64);
    mp4.writeUInt32BE(24, 0);
    mp4.write('ftypisom', 4, 'latin1');
    const stdin = (input: Buffer | string, ...args: string[]) => spawnSync(V2A[0]!, [...V2A.slice(1), ...args], { cwd: ROOT, env: env(), input, encoding: 'utf8' });
    // Named as a file is (`v2a: notes.txt: ...`): standard input, as its I/O errors say.
    const txt = stdin('plain text', '-');
    assert.equal(txt.status, 3);
    assert.equal(txt.stderr, `v2a: standard input: ${UNSUPPORTED}\n`);
    const ok = stdin(png, '-', '-w', '8');
    assert.equal(ok.status, 0, ok.stderr);
    assert.ok(ok.stdout.length > 0);
    assert.match(stdin(mp4, '-').stderr, /This is a video: play it with v2a play -, or render it from a file\.\n$/);
    assert.equal(stdin('', '-').stderr, 'v2a: standard input: The image is empty (0 bytes).\n');
    const play = stdin('plain text', 'play', '-');
    assert.equal(play.status, 3);
    assert.equal(play.stderr, `v2a: standard input: ${UNSUPPORTED} Or a video ffmpeg reads: ${VIDEO_FORMATS_IN_WORDS}.\n`);
    assert.equal(stdin('plain text', 'decode', '-').stderr.startsWith('v2a: standard input: '), true);
  });

  test('over V2A_MAX_IMAGE_BYTES, what the input is comes first: a video goes to ffmpeg, a non-image is unsupported; only an image is too large', async () => {
    // 257 MiB, sparse (nothing written but the head), past the CLI's 256 MiB: as `truncate -s 257M`.
    const sparse = async (name: string, head: Buffer) => {
      const path = join(dir, name);
      writeFileSync(path, head);
      const fd = openSync(path, 'r+');
      ftruncateSync(fd, 257 * 1024 * 1024);
      closeSync(fd);
      return path;
    };
    const mp4 = Buffer.alloc(64);
    mp4.writeUInt32BE(24, 0);
    mp4.write('ftypisom', 4, 'latin1');
    const png = await sharp({ create: { width: 8, height: 8, channels: 3, background: '#808080' } }).png().toBuffer();
    const [video, notes, image] = await Promise.all([sparse('big.mp4', mp4), sparse('big-notes.txt', Buffer.from('plain text\n')), sparse('huge.png', png)]);
    const [v, n, i] = await Promise.all([v2a(video), v2a(notes), v2a(image)]);
    assert.deepEqual([v.code, n.code, i.code], [3, 3, 3]);
    // A video file is never read here, whatever its size: ffmpeg reads it (this one is a header alone).
    assert.match(v.stderr, /: (ffprobe cannot read the video|video needs ffmpeg)/);
    assert.equal(n.stderr, `v2a: ${notes}: ${UNSUPPORTED}\n`);
    assert.equal(i.stderr, `v2a: ${image}: The image is too large (${257 * 1024 * 1024} bytes); the limit is ${256 * 1024 * 1024} bytes (V2A_MAX_IMAGE_BYTES).\n`);
    // Read from a stream, the same: the first bytes are looked at before the limit.
    const piped = spawnSync(V2A[0]!, [...V2A.slice(1), '-'], { cwd: ROOT, env: env({ V2A_MAX_IMAGE_BYTES: '100' }), input: 'plain text, '.repeat(50), encoding: 'utf8' });
    assert.equal(piped.stderr, `v2a: standard input: ${UNSUPPORTED}\n`);
  });

  test('a size setting out of range written with a unit says what it meant: 1M is 1,000,000 bytes; 1MiB is what fits', async () => {
    const r = await runCli([text], env({ V2A_MAX_DECODED_BYTES: '1M' }));
    assert.equal(r.code, 2);
    assert.equal(r.stderr, 'v2a: V2A_MAX_DECODED_BYTES must be an integer from 1048576 to 68719476736 (bytes; k, M, G, KiB, MiB, GiB allowed): 1M is 1,000,000 bytes (1MiB is 1,048,576) (got "1M")\n');
  });

  test('a text file loads neither sharp nor the renderer', () => {
    const trace = join(dir, 'trace.txt');
    const hooks = join(dir, 'hooks.mjs');
    const register = join(dir, 'register.mjs');
    writeFileSync(hooks, `import { appendFileSync } from 'node:fs';\nexport async function load(url, context, next) { appendFileSync(process.env.V2A_TRACE_FILE, url + '\\n'); return next(url, context); }`);
    writeFileSync(register, `import { register } from 'node:module';\nregister(${JSON.stringify(new URL(`file://${hooks}`).href)});\n`);
    for (const args of [[text], ['play', text]]) {
      writeFileSync(trace, '');
      const r = spawnSync(process.execPath, ['--import', 'tsx', '--import', register, join(ROOT, 'src/cli/main.ts'), ...args], { cwd: ROOT, env: env({ V2A_TRACE_FILE: trace }), encoding: 'utf8' });
      assert.equal(r.status, 3, r.stderr);
      assert.ok(r.stderr.startsWith(`v2a: ${text}: ${UNSUPPORTED}`), r.stderr);
      const urls = spawnSync('cat', [trace], { encoding: 'utf8' }).stdout.split('\n');
      assert.ok(urls.some((u) => u.includes('/src/cli/media-type.ts')), 'the trace sees the CLI');
      assert.deepEqual(urls.filter((u) => /node_modules\/sharp\/|\/src\/core\/job\.ts|\/src\/node\/decode\.ts/.test(u)), [], args.join(' '));
    }
  });

  test('signatures: the accepted images, the formats refused by name, the video containers', () => {
    const b = (...parts: (string | number[])[]) => Buffer.concat(parts.map((p) => (typeof p === 'string' ? Buffer.from(p, 'latin1') : Buffer.from(p))));
    for (const head of [b([0xff, 0xd8, 0xff, 0xe0]), b([0x89], 'PNG\r\n\x1a\n'), b('GIF89a'), b('RIFF\0\0\0\0WEBPVP8 '), b('II*\0'), b('MM\0*'), b([0, 0, 0, 28], 'ftypavif'), b([0, 0, 0, 28], 'ftypheic'), b('<svg xmlns="http://www.w3.org/2000/svg"/>'), b('%PDF-1.7')]) {
      assert.ok(isImage(head) && !isVideo(head), JSON.stringify(head.toString('latin1')));
    }
    for (const head of [b([0, 0, 0, 24], 'ftypisom'), b([0, 0, 0, 20], 'ftypqt  '), b([0x1a, 0x45, 0xdf, 0xa3]), b('RIFF\0\0\0\0AVI LIST'), b('OggS\0'), b([0, 0, 1, 0xba])]) {
      assert.ok(isVideo(head) && !isImage(head), JSON.stringify(head.toString('latin1')));
    }
    for (const head of [b('hello'), b('BM6\0'), b([0, 0, 0, 0])]) assert.ok(!isImage(head) && !isVideo(head));
  });
});

describe('the CLI\'s own limits for a user\'s files', () => {
  test('a 60 MP camera JPEG (9504 x 6336) renders: render and play default to 200 megapixels; V2A_MAX_IMAGE_PIXELS still sets it; v2a mcp keeps 50', async () => {
    const photo = join(dir, 'camera.jpg');
    await sharp({ create: { width: 9504, height: 6336, channels: 3, background: '#806040' } }).jpeg().toFile(photo);
    const [ok, capped] = await Promise.all([v2a(photo, '-w', '20'), runCli([photo, '-w', '20'], env({ V2A_MAX_IMAGE_PIXELS: '50000000' }))]);
    assert.equal(ok.code, 0, ok.stderr);
    assert.equal(capped.code, 3);
    assert.match(capped.stderr, /60 megapixels\); the limit is 50 megapixels \(V2A_MAX_IMAGE_PIXELS\)/);
    assert.equal(readLimits({}, true).maxPixels, 200_000_000);
    assert.equal(readLimits({}).maxPixels, 50_000_000, 'v2a mcp: what agents send, as the server');
    const help = await v2a('--help');
    assert.match(help.stdout.replace(/\s+/g, ' '), /50 megapixels; for the CLI's render and play, 200 megapixels/);
  });
  test('decoder memory: render and play default to 1 GiB, so a 200 MP image is not refused at 89 MP (an RGB PNG at 256 MiB); v2a mcp keeps 256 MiB', () => {
    assert.equal(readLimits({}, true).maxDecodedBytes, 1024 ** 3);
    assert.equal(readLimits({}).maxDecodedBytes, 256 * 1024 ** 2, 'v2a mcp: what agents send, as the server');
    assert.equal(readLimits({ V2A_MAX_DECODED_BYTES: '300MiB' }, true).maxDecodedBytes, 300 * 1024 ** 2);
  });
});

describe('messages about an input start with its name', { concurrency: 4 }, () => {
  test('a directory and a missing file: `v2a: <name>: <reason>`, exit 4, for render and play', async () => {
    const sub = join(dir, 'photos');
    mkdirSync(sub, { recursive: true });
    const missing = join(dir, 'nonexist.png');
    const runs = await Promise.all([v2a(sub), v2a(missing), v2a('play', sub), v2a('play', missing)]);
    assert.deepEqual(runs.map((r) => [r.code, r.stderr]), [
      [4, `v2a: ${sub}: is a directory\n`],
      [4, `v2a: ${missing}: no such file or directory\n`],
      [4, `v2a: ${sub}: is a directory\n`],
      [4, `v2a: ${missing}: no such file or directory\n`],
    ]);
  });
});

describe('the video containers: one list', () => {
  test('play --help and the messages name the same containers, Ogg and MPEG included', async () => {
    assert.equal(VIDEO_FORMATS_IN_WORDS, 'MP4, MOV, WebM, MKV, AVI, Ogg or MPEG');
    const [help, refused] = await Promise.all([v2a('play', '--help'), v2a('play', text)]);
    assert.ok(help.stdout.replace(/\s+/g, ' ').includes(`Play a video (${VIDEO_FORMATS_IN_WORDS}; needs ffmpeg`), help.stdout.slice(0, 300));
    assert.ok(refused.stderr.endsWith(`Or a video ffmpeg reads: ${VIDEO_FORMATS_IN_WORDS}.\n`), refused.stderr);
  });
});
