/**
 * `v2a play` (and `render --animate`): input from pipes and FIFOs, the byte limit on video files,
 * -o written only once the input is known good, and playing on a real pseudo-terminal driven by
 * python3's pty module (sized, resized, typed into, signalled; skipped, saying so, without it):
 * raw mode and q, Ctrl-C, SIGHUP, Ctrl-Z and fg under a job-control shell, refitting on a resize,
 * and TERM=dumb refused.
 */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { execFile, execFileSync, spawn, spawnSync } from 'node:child_process';
import { copyFileSync, createWriteStream, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import sharp from 'sharp';
import { cliEnv, ROOT, V2A, ensureCliBuilt, runCli, shellQuote } from './helpers/cli-run.js';

const hasPython = spawnSync('python3', ['-c', 'import pty, termios']).status === 0;
const hasBash = spawnSync('bash', ['-c', 'true']).status === 0;
const hasMkfifo = spawnSync('mkfifo', ['--version']).status === 0;
const hasFfmpeg = spawnSync('ffmpeg', ['-version']).status === 0 && spawnSync('ffprobe', ['-version']).status === 0;

/** The environment of a plain terminal without colour, without what the test runner's may carry. */
function env(extra: Record<string, string> = {}): Record<string, string> {
  return cliEnv({ TERM: 'xterm-256color', NO_COLOR: '1', V2A_DEBUG: '', ...extra }, { terminal: true });
}

const piped = (args: readonly string[], extra: Record<string, string> = {}) => runCli(args, env(extra));

/**
 * Runs argv on a pseudo-terminal of cols x rows (set before exec). Each step waits (for `frames`
 * frames in all the output, each starting with one cursor move (FRAME), for `text` in the output
 * since the previous step, or `sleep` seconds), records the terminal's modes, then acts: types `write`, resizes to `resize`,
 * sends `signal` to the child, or closes the terminal (`hangUp`). Then waits for the exit; the
 * code is a shell's (128 + n when killed by signal n).
 */
interface Step { frames?: number; text?: string; sleep?: number; write?: string; resize?: [number, number]; signal?: string; hangUp?: boolean }
interface Modes { icanon: boolean; echo: boolean }
/** `parts[i]`: the output up to step i's mark (each step's after the previous one's), the last what came after; `raw`: all of it, \r kept. */
interface PtyRun { code: number; out: string; parts: string[]; modes: Modes[]; after: Modes; raw: string }

const DRIVER = String.raw`
import json, os, pty, re, sys, struct, fcntl, termios, select, time, signal
spec = json.loads(sys.argv[1])
cols, rows = spec['size']
pid, fd = pty.fork()
if pid == 0:
    fcntl.ioctl(0, termios.TIOCSWINSZ, struct.pack('HHHH', rows, cols, 0, 0))
    os.execvpe(spec['argv'][0], spec['argv'], spec['env'])
out = bytearray()
def pump(t):
    end = time.time() + t
    while time.time() < end:
        try:
            if not select.select([fd], [], [], 0.02)[0]: continue
            d = os.read(fd, 65536)
        except (OSError, ValueError): return False
        if not d: return False
        out.extend(d)
    return True
def modes():
    try: a = termios.tcgetattr(fd)
    except (termios.error, OSError): return None
    return {'icanon': bool(a[3] & termios.ICANON), 'echo': bool(a[3] & termios.ECHO)}
# Each frame starts with one cursor move: up to the last frame's top, or home (drawn from the top).
FRAME = rb'\x1b\[(?:\d+A|H)'
marks = []
last = 0
for step in spec['steps']:
    deadline = time.time() + 20
    while time.time() < deadline:
        if 'frames' in step and len(re.findall(FRAME, bytes(out))) >= step['frames']: break
        if 'text' in step and step['text'].encode() in out[last:]: break
        if 'sleep' in step:
            pump(step['sleep']); break
        if not pump(0.05): break
    last = len(out)
    marks.append({'at': len(out), 'modes': modes()})
    if 'write' in step: os.write(fd, step['write'].encode())
    if 'resize' in step: fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack('HHHH', step['resize'][1], step['resize'][0], 0, 0))
    if 'signal' in step: os.kill(pid, getattr(signal, step['signal']))
    if step.get('hangUp'): os.close(fd)
deadline = time.time() + 20
status = None
while status is None:
    p, st = os.waitpid(pid, os.WNOHANG)
    if p: status = st
    elif time.time() > deadline: os.kill(pid, signal.SIGKILL)
    elif not pump(0.05): time.sleep(0.05)
pump(0.2)
code = os.waitstatus_to_exitcode(status)
# As a shell reports it: killed by signal n is 128 + n.
print(json.dumps({'code': code if code >= 0 else 128 - code, 'out': out.decode('latin1'), 'marks': marks, 'after': modes()}))
`;

async function inPty(argv: readonly string[], size: [number, number], steps: Step[], extra: Record<string, string> = {}): Promise<PtyRun> {
  const spec = JSON.stringify({ argv, size, steps, env: env(extra) });
  const r = await new Promise<{ status: number | null; stdout: string; stderr: string }>((resolve, reject) => {
    execFile('python3', ['-c', DRIVER, spec], { cwd: ROOT, encoding: 'utf8', maxBuffer: 64 << 20 }, (err, stdout, stderr) => {
      if (err && typeof err.code !== 'number') reject(err);
      else resolve({ status: err ? Number(err.code) : 0, stdout, stderr });
    });
  });
  assert.equal(r.status, 0, r.stderr);
  const run = JSON.parse(r.stdout) as { code: number; out: string; marks: { at: number; modes: Modes }[]; after: Modes };
  const cuts = [0, ...run.marks.map((m) => m.at), run.out.length];
  const parts = cuts.slice(1).map((end, i) => Buffer.from(run.out.slice(cuts[i], end), 'latin1').toString('utf8').replace(/\r/g, ''));
  return { code: run.code, out: parts.join(''), parts, modes: run.marks.map((m) => m.modes), after: run.after, raw: Buffer.from(run.out, 'latin1').toString('utf8') };
}

const RESTORED = '\x1b[0m\x1b[?25h';
/** The frames drawn in `out` (each starts with a cursor move: up to the last frame's top, or home), escapes removed, as rows. */
const frames = (out: string) => out.split(/\x1b\[(?:\d+A|H)/).slice(1).map((f) => f.replace(/\x1b\[[0-9;?]*[A-Za-z]/g, '').split('\n').filter((l) => l.length > 0));

/**
 * What a terminal of `cols` x `rows` shows after `out`, scrollback included: the text of every row
 * from the first, trailing spaces and blank rows at the end dropped. Enough of a terminal for
 * what playback writes: \r, \n, CSI n A, CSI H, CSI 2J, CSI J, autowrap; other escapes ignored.
 */
function screen(out: string, cols: number, rows: number): string[] {
  const lines: string[][] = [[]];
  let top = 0, y = 0, x = 0;
  const down = () => {
    y++;
    while (lines.length <= y) lines.push([]);
    if (y - top >= rows) top = y - rows + 1;
  };
  for (const [token, params = '', final] of out.matchAll(/\x1b\[([0-9;?]*)([A-Za-z])|\r|\n|[^\x1b\r\n]/gu)) {
    if (final === 'A') y = Math.max(top, y - Math.max(1, Number(params) || 1));
    else if (final === 'H') [y, x] = [top, 0];
    else if (final === 'J' && params === '2') for (let i = top; i < lines.length; i++) lines[i] = [];
    else if (final === 'J') {
      lines[y]!.length = Math.min(lines[y]!.length, x);
      for (let i = y + 1; i < lines.length; i++) lines[i] = [];
    } else if (final !== undefined) continue;
    else if (token === '\r') x = 0;
    else if (token === '\n') down();
    else {
      if (x >= cols) {
        x = 0;
        down();
      }
      const line = lines[y]!;
      while (line.length < x) line.push(' ');
      line[x++] = token;
    }
  }
  const text = lines.map((l) => l.join('').trimEnd());
  while (text.length && text.at(-1) === '') text.pop();
  return text;
}

let dir = '';
let gif = '';
let still = '';
let clip = '';
let json = '';

before(async () => {
  await ensureCliBuilt();
  dir = mkdtempSync(join(tmpdir(), 'v2a-play-'));
  gif = join(dir, 'anim.gif');
  json = join(dir, 'not-an-image.json');
  writeFileSync(json, '{"not": "an image"}\n');
  // 4 frames of a wide gradient with a moving disc, 0.2 s each.
  const w = 160;
  const h = 80;
  const page = (shift: number) => {
    const d = Buffer.alloc(w * h * 3);
    for (let y = 0; y < h; y++) for (let x = 0; x < w; x++) {
      const i = (y * w + x) * 3;
      const disc = Math.hypot(x - w * (0.2 + shift), y - h / 2) < h * 0.3 ? 150 : 0;
      d[i] = Math.min(255, (255 * x) / w + disc); d[i + 1] = Math.min(255, (200 * y) / h + disc); d[i + 2] = 60 + disc;
    }
    return d;
  };
  await sharp(Buffer.concat([0, 0.2, 0.4, 0.6].map(page)), { raw: { width: w, height: h * 4, channels: 3, pageHeight: h } })
    .gif({ delay: [200, 200, 200, 200], loop: 0 })
    .toFile(gif);
  still = join(dir, 'still.png');
  await sharp(page(0.3), { raw: { width: w, height: h, channels: 3 } }).png().toFile(still);
  if (hasFfmpeg) {
    clip = join(dir, 'clip.mp4');
    const r = spawnSync('ffmpeg', ['-v', 'error', '-f', 'lavfi', '-i', 'testsrc=size=160x120:rate=10', '-t', '3', '-pix_fmt', 'yuv420p', '-y', clip]);
    assert.equal(r.status, 0, String(r.stderr));
  }
});

after(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('v2a render of a video file: one frame, as a previewer shows it', () => {
  test('a frame a tenth of the way in, fitted to the box like an image; the file is not read into memory', { skip: hasFfmpeg ? false : 'ffmpeg is not installed' }, async () => {
    const r = await piped(['render', clip, '--columns', '20']);
    assert.equal(r.code, 0, r.stderr);
    const rows = r.stdout.trimEnd().split('\n');
    // 160 x 120 at 20 columns: 8 rows of 20.
    assert.deepEqual([rows.length, rows[0]!.length], [8, 20]);
    assert.ok(new Set(r.stdout.replace(/\s/g, '')).size > 3, 'a picture, not a blank grid');
    const boxed = await piped(['render', clip, '--size', '12x4']);
    assert.equal(boxed.code, 0, boxed.stderr);
    assert.ok(boxed.stdout.trimEnd().split('\n').length <= 4);
    // Over the byte limit it is still drawn: ffmpeg reads the file, v2a does not.
    const small = await piped(['render', clip, '--columns', '20'], { V2A_MAX_IMAGE_BYTES: '100' });
    assert.equal(small.code, 0, small.stderr);
    // A phone's portrait clip, stored landscape with a rotation: drawn upright, 120 x 160 (it was
    // drawn squashed into 160 x 120).
    const turned = join(dir, 'turned.mp4');
    const made = spawnSync('ffmpeg', ['-v', 'error', '-i', clip, '-c', 'copy', '-metadata:s:v:0', 'rotate=90', '-y', turned]);
    assert.equal(made.status, 0, String(made.stderr));
    const upright = await piped(['render', turned, '--columns', '20', '--format', 'json']);
    assert.equal(upright.code, 0, upright.stderr);
    const doc = JSON.parse(upright.stdout) as { rows: number; source: { width: number; height: number } };
    assert.deepEqual([doc.rows, doc.source], [13, { width: 120, height: 160 }]);
  });
});

describe('v2a render of BMP, ICO and PNM: the still formats sharp does not read, through ffmpeg, as chafa shows them', () => {
  test('each is drawn from a file like the image it holds; piped in, the message says to give the file', { skip: hasFfmpeg ? false : 'ffmpeg is not installed' }, async () => {
    const png = join(dir, 'source.png');
    writeFileSync(png, await sharp({ create: { width: 160, height: 120, channels: 3, background: '#204060' } }).composite([{ input: await sharp({ create: { width: 60, height: 60, channels: 3, background: '#f0e0c0' } }).png().toBuffer(), left: 50, top: 30 }]).png().toBuffer());
    const want = await piped(['render', png, '--columns', '20']);
    for (const [ext, args] of [['bmp', []], ['ppm', []], ['ico', ['-vf', 'scale=64:48']]] as const) {
      const file = join(dir, `source.${ext}`);
      const made = spawnSync('ffmpeg', ['-v', 'error', '-i', png, ...args, '-y', file]);
      assert.equal(made.status, 0, String(made.stderr));
      const r = await piped(['render', file, '--columns', '20']);
      assert.equal(r.code, 0, `${ext}: ${r.stderr}`);
      // The same picture: the rows of the PNG's art, the block in the middle drawn.
      assert.equal(r.stdout.trimEnd().split('\n').length, want.stdout.trimEnd().split('\n').length, ext);
      assert.ok(new Set(r.stdout.replace(/\s/g, '')).size > 1, `${ext}: a picture, not a blank grid`);
    }
    // An icon of several pictures shows its largest (ffmpeg writes one-picture icons: built here,
    // a 16 x 16 red one before a 64 x 48 copy of the source); a name ffmpeg would read as a
    // numbered sequence (`%d`) or as an option (`-`) is the file it names.
    const small = await sharp({ create: { width: 16, height: 16, channels: 3, background: '#ff0000' } }).png().toBuffer();
    const large = await sharp(png).resize(64, 48).png().toBuffer();
    const entry = (w: number, h: number, size: number, at: number) => { const e = Buffer.alloc(16); e.writeUInt8(w, 0); e.writeUInt8(h, 1); e.writeUInt16LE(1, 4); e.writeUInt16LE(32, 6); e.writeUInt32LE(size, 8); e.writeUInt32LE(at, 12); return e; };
    const header = Buffer.from([0, 0, 1, 0, 2, 0]);
    writeFileSync(join(dir, 'multi.ico'), Buffer.concat([header, entry(16, 16, small.length, 38), entry(64, 48, large.length, 38 + small.length), small, large]));
    const icon = await piped(['render', join(dir, 'multi.ico'), '--columns', '20']);
    assert.equal(icon.code, 0, icon.stderr);
    assert.equal(icon.stdout.trimEnd().split('\n').length, want.stdout.trimEnd().split('\n').length, 'the 64 x 48 picture (8 rows), not the 16 x 16 one (10)');
    for (const name of ['x%d.ppm', '-dash.bmp']) {
      copyFileSync(join(dir, `source.${name.slice(-3)}`), join(dir, name));
      const r = spawnSync(V2A[0]!, [...V2A.slice(1), 'render', '--columns', '20', '--', name], { cwd: dir, encoding: 'utf8', env: env({}) });
      assert.equal(r.status, 0, `${name}: ${r.stderr}`);
    }
    const bmp = readFileSync(join(dir, 'source.bmp'));
    const r = spawnSync(V2A[0]!, [...V2A.slice(1), 'render', '-', '--columns', '20'], { input: bmp, encoding: 'utf8', env: env({}) });
    assert.equal(r.status, 3);
    assert.match(r.stderr, /BMP, ICO or PNM images are read through ffmpeg from a file: give its name instead of a pipe\.\n$/);
  });
});

describe('a file whose name reads as an ffmpeg protocol', () => {
  test('is opened as the file it is: http://127.0.0.1:9/clip.mp4, a path under a folder named http:, fetched nothing', { skip: hasFfmpeg ? false : 'ffmpeg is not installed' }, async () => {
    const under = join(dir, 'proto');
    mkdirSync(join(under, 'http:', '127.0.0.1:9'), { recursive: true });
    copyFileSync(clip, join(under, 'http:', '127.0.0.1:9', 'clip.mp4'));
    const r = spawnSync(V2A[0]!, [...V2A.slice(1), 'render', 'http://127.0.0.1:9/clip.mp4', '--columns', '20'], { cwd: under, encoding: 'utf8', env: env({}) });
    assert.equal(r.status, 0, r.stderr);
    assert.equal(r.stdout.trimEnd().split('\n').length, 8);
  });
});

/** A new FIFO that `file`'s bytes are written into once a reader opens it (as `<(cat file)`). */
function fifoOf(file: string): string {
  const fifo = join(dir, `fifo-${Math.random().toString(36).slice(2)}`);
  assert.equal(spawnSync('mkfifo', [fifo]).status, 0);
  const writer = createWriteStream(fifo);
  writer.on('error', () => undefined);
  writer.end(readFileSync(file));
  return fifo;
}

describe('v2a render of a FIFO (<(...))', () => {
  test('an image is drawn, a video is told to use play: the input is not read at an offset', { skip: hasMkfifo ? false : 'no mkfifo' }, async () => {
    for (const file of [still, ...(clip ? [clip] : [])]) {
      const fifo = fifoOf(file);
      const r = await piped(['render', fifo, '--columns', '20']);
      if (file === still) assert.deepEqual([r.code, r.stderr], [0, '']);
      else assert.match(r.stderr, /This is a video: play it with v2a play -, or render it from a file\.\n$/);
    }
  });
});

// Side by side: each test's files are its own (ffmpeg's encodes, spawned synchronously, still take turns).
describe('v2a play: input and output', { concurrency: 4 }, () => {
  test('a FIFO (or <(...)) is read like standard input: a GIF, and a video fed to ffmpeg', { skip: hasMkfifo ? false : 'no mkfifo' }, async () => {
    for (const file of [gif, ...(clip ? [clip] : [])]) {
      const fifo = fifoOf(file);
      const r = await piped(['play', fifo, '--columns', '20']);
      assert.equal(r.code, 0, r.stderr);
      assert.equal(r.stdout.trim().split('\n').length, file === gif ? 4 : 30);
    }
  });

  test('an MP4 with its index at the end (ffmpeg\'s default), piped in: played from a private temporary file, removed at exit', { skip: hasFfmpeg ? false : 'ffmpeg is not installed' }, () => {
    // Over ffmpeg's probe buffer (~64 KB): from a pipe it cannot seek back to the moov atom.
    const late = join(dir, 'late-moov.mp4');
    const made = spawnSync('ffmpeg', ['-v', 'error', '-f', 'lavfi', '-i', 'testsrc2=size=320x240:rate=10', '-t', '4', '-pix_fmt', 'yuv420p', '-y', late]);
    assert.equal(made.status, 0, String(made.stderr));
    assert.ok(statSync(late).size > 70_000);
    const tmp = mkdtempSync(join(dir, 'tmp-'));
    const r = spawnSync(V2A[0]!, [...V2A.slice(1), 'play', '-', '--columns', '20'], { cwd: ROOT, env: env({ TMPDIR: tmp }), input: readFileSync(late), encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    assert.equal(r.stdout.trim().split('\n').length, 40);
    assert.deepEqual(readdirSync(tmp).filter((f) => f.startsWith('v2a-')), [], 'the temporary copy is removed');
  });

  test('Ctrl-C while a piped video is written as NDJSON: the temporary copy is removed, then the signal ends the process', { skip: hasFfmpeg ? false : 'ffmpeg is not installed' }, async () => {
    const long = join(dir, 'long-late-moov.mp4');
    const made = spawnSync('ffmpeg', ['-v', 'error', '-f', 'lavfi', '-i', 'testsrc2=size=320x240:rate=25', '-t', '30', '-pix_fmt', 'yuv420p', '-y', long]);
    assert.equal(made.status, 0, String(made.stderr));
    const tmp = mkdtempSync(join(dir, 'tmp-'));
    const out = join(dir, 'interrupted.ndjson');
    const child = spawn(V2A[0]!, [...V2A.slice(1), 'play', '-', '--columns', '20', '-o', out], { cwd: ROOT, env: env({ TMPDIR: tmp }), stdio: ['pipe', 'ignore', 'ignore'] });
    child.stdin!.end(readFileSync(long));
    // Once frames are being written, the copy exists; then Ctrl-C.
    for (let i = 0; i < 600 && !(existsSync(out) && statSync(out).size > 0); i++) await new Promise((r) => setTimeout(r, 50));
    assert.ok(readdirSync(tmp).some((f) => f.startsWith('v2a-video-')), 'the copy exists while it plays');
    child.kill('SIGINT');
    const [code, signal] = await once(child, 'exit');
    assert.deepEqual([code, signal], [null, 'SIGINT'], 'ended by the signal, as before');
    assert.deepEqual(readdirSync(tmp).filter((f) => f.startsWith('v2a-')), [], 'the temporary copy is removed');
  });

  test('<(cat anim.gif): process substitution', { skip: hasBash ? false : 'no bash' }, () => {
    const r = spawnSync('bash', ['-c', `${V2A.map(shellQuote).join(' ')} play <(cat ${shellQuote(gif)}) --columns 20`], { cwd: ROOT, env: env(), encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    assert.equal(r.stdout.trim().split('\n').length, 4);
  });

  test('-o: an input that fails leaves the existing file as it was (exit 3)', async () => {
    const out = join(dir, 'keep.ndjson');
    writeFileSync(out, 'keep\n');
    const r = await piped(['play', json, '-o', out]);
    assert.equal(r.code, 3, r.stderr);
    // play takes videos too: its message says so (it named only the image formats).
    assert.match(r.stderr, /^v2a: .*not-an-image\.json: The image format is not supported\. .* Or a video ffmpeg reads: MP4, MOV, WebM, MKV, AVI, Ogg or MPEG\.\n$/);
    assert.equal(readFileSync(out, 'utf8'), 'keep\n');
    const ok = await piped(['play', gif, '-o', out, '--columns', '20']);
    assert.equal(ok.code, 0, ok.stderr);
    assert.equal(readFileSync(out, 'utf8').trim().split('\n').length, 4);
  });

  test('a variable-rate MP4 plays at its own speed: frames at a constant rate, their delays summing to its duration', { skip: hasFfmpeg ? false : 'ffmpeg is not installed' }, async () => {
    // 50 frames at 25 fps, then 50 at 5 fps: 11.84 s, r_frame_rate 25, avg_frame_rate 8.68. Its
    // frames came out at 25 fps timed at 8.68: it played in 34.4 s.
    const vfr = join(dir, 'vfr.mp4');
    const made = spawnSync('ffmpeg', ['-v', 'error', '-f', 'lavfi', '-i', 'testsrc=size=160x120:rate=25:duration=4', '-vf', "setpts='if(lt(N,50),N/25,2+(N-50)/5)/TB'", '-fps_mode', 'vfr', '-pix_fmt', 'yuv420p', '-y', vfr]);
    assert.equal(made.status, 0, String(made.stderr));
    const r = await piped(['play', vfr, '--columns', '20']);
    assert.equal(r.code, 0, r.stderr);
    const delays = r.stdout.trim().split('\n').map((line) => (JSON.parse(line) as { delayMs: number }).delayMs);
    const total = delays.reduce((a, b) => a + b, 0);
    assert.ok(Math.abs(total - 11_840) < 300, `${delays.length} frames, ${Math.round(total)} ms`);
  });

  test('a video cut short (its index at the front, its data half there) plays what it holds, with the warning: ffmpeg ends well, short of its duration', { skip: hasFfmpeg ? false : 'ffmpeg is not installed' }, async () => {
    const whole = join(dir, 'whole.mp4');
    const made = spawnSync('ffmpeg', ['-v', 'error', '-f', 'lavfi', '-i', 'testsrc=size=160x120:rate=25:duration=10', '-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p', '-movflags', '+faststart', '-y', whole]);
    assert.equal(made.status, 0, String(made.stderr));
    const cut = join(dir, 'cut.mp4');
    const bytes = readFileSync(whole);
    writeFileSync(cut, bytes.subarray(0, Math.floor(bytes.length * 0.5)));
    const r = await piped(['play', cut, '--columns', '20']);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stderr, `v2a: ${cut}: the video is truncated or damaged: showing the part that could be decoded\n`);
    const frames = r.stdout.trim().split('\n').length;
    assert.ok(frames > 10 && frames < 240, `${frames} frames of 250`);
    const ok = await piped(['play', whole, '--columns', '20']);
    assert.deepEqual([ok.code, ok.stderr, ok.stdout.trim().split('\n').length], [0, '', 250]);
    // Whole, with a sound track a second longer than the picture: the container's duration is the
    // sound's, and the video is not short of it.
    const sound = join(dir, 'sound.mp4');
    const withSound = spawnSync('ffmpeg', ['-v', 'error', '-f', 'lavfi', '-i', 'testsrc=size=160x120:rate=25:duration=4', '-f', 'lavfi', '-i', 'sine=duration=5', '-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p', '-c:a', 'aac', '-y', sound]);
    assert.equal(withSound.status, 0, String(withSound.stderr));
    const heard = await piped(['play', sound, '--columns', '20']);
    assert.deepEqual([heard.code, heard.stderr, heard.stdout.trim().split('\n').length], [0, '', 100]);
  });

  test('-c 256 or -c 16 with NDJSON output is refused as render refuses it with a format that has no palette (it was ignored); truecolor and a detected depth are not', async () => {
    for (const args of [['play', gif, '-c', '256'], ['render', gif, '--animate', '-c', '16', '-o', join(dir, 'depth.ndjson')]]) {
      const r = await piped(args);
      assert.deepEqual([r.code, r.stderr], [2, `v2a: --colors ${args.includes('256') ? '256' : '16'} applies to ansi output, not NDJSON of json-compact\n`], args.join(' '));
    }
    const ok = await piped(['play', gif, '-c', 'truecolor', '--columns', '20']);
    assert.equal(ok.code, 0, ok.stderr);
    const detected = await piped(['play', gif, '--color', '--columns', '20'], { TERM: 'xterm-256color' });
    assert.equal(detected.code, 0, detected.stderr);
  });

  test('a file cut short (still downloading) plays what it holds, as render shows it, with the same warning; exit 0', async () => {
    const jpeg = await sharp({ create: { width: 128, height: 96, channels: 3, background: '#000', noise: { type: 'gaussian', mean: 200, sigma: 30 } } }).jpeg().toBuffer();
    const still = join(dir, 'cut.jpg');
    writeFileSync(still, jpeg.subarray(0, Math.floor(jpeg.length / 2)));
    const animated = join(dir, 'cut.gif');
    const whole = readFileSync(gif);
    writeFileSync(animated, whole.subarray(0, Math.floor(whole.length * 0.7)));
    for (const [file, most] of [[still, 1], [animated, 3]] as const) {
      const r = await piped(['play', file, '--columns', '20']);
      assert.equal(r.code, 0, r.stderr);
      assert.equal(r.stderr, `v2a: ${file}: the image is truncated or damaged: showing the part that could be decoded\n`);
      const frames = r.stdout.trim().split('\n').map((line) => JSON.parse(line) as { text: string });
      assert.ok(frames.length >= 1 && frames.length <= most, `${file}: ${frames.length} frames`);
      assert.ok(frames[0]!.text.trim().length > 0, 'the part it holds is drawn');
    }
    // An intact file says nothing.
    const ok = await piped(['play', gif, '--columns', '20']);
    assert.deepEqual([ok.code, ok.stderr], [0, '']);
  });

  test('V2A_MAX_IMAGE_BYTES bounds what is read into memory: a video piped in, not a video file ffmpeg streams from disk', async () => {
    const video = join(dir, 'big.mp4');
    // An ISO BMFF header (isom brand): a video by its signature, 400 bytes.
    const bytes = Buffer.concat([Buffer.from([0, 0, 0, 0x20]), Buffer.from('ftypisom'), Buffer.alloc(388)]);
    writeFileSync(video, bytes);
    // The file goes on to ffmpeg (absent here), whatever its size.
    const file = await piped(['play', video], { V2A_MAX_IMAGE_BYTES: '100', PATH: '/nonexistent' });
    assert.equal(file.code, 3);
    assert.match(file.stderr, /ffmpeg/);
    assert.doesNotMatch(file.stderr, /too large/);
    // Piped in, it is read whole: the limit holds.
    const fifo = join(dir, 'big.fifo');
    execFileSync('mkfifo', [fifo]);
    const writer = spawn('sh', ['-c', `cat '${video}' > '${fifo}'`], { stdio: 'ignore' });
    const piped400 = await piped(['play', fifo], { V2A_MAX_IMAGE_BYTES: '100', PATH: '/nonexistent' });
    writer.kill();
    assert.equal(piped400.code, 3);
    assert.match(piped400.stderr, /too large .*the limit is 100 bytes \(V2A_MAX_IMAGE_BYTES\)/);
  });
});

// Side by side: each test is a terminal of its own that mostly waits for frames drawn at the
// animation's pace (one after another, 18 s of this file's 30).
describe('v2a play on a terminal', { skip: hasPython ? false : 'python3 (pty, termios) is not installed', concurrency: 4 }, () => {
  const play = (...args: string[]) => [...V2A, 'play', gif, '--loop', '0', ...args];

  test('raw mode while playing: q stops (exit 0), nothing echoed, the terminal restored', async () => {
    const r = await inPty(play(), [80, 24], [{ frames: 3, write: 'xq' }]);
    assert.equal(r.code, 0, r.out.slice(-200));
    assert.deepEqual(r.modes[0], { icanon: false, echo: false }, 'raw while playing: keys neither echoed nor left for the shell');
    assert.deepEqual(r.after, { icanon: true, echo: true }, 'cooked again');
    assert.ok(r.out.endsWith(RESTORED), JSON.stringify(r.out.slice(-40)));
  });

  test('a clip piped in: the keys come from the terminal itself (/dev/tty), so q still stops it', async () => {
    const r = await inPty(['sh', '-c', `exec ${V2A.map(shellQuote).join(' ')} play - --loop 0 < ${shellQuote(gif)}`], [80, 24], [{ frames: 3, write: 'xq' }]);
    assert.equal(r.code, 0, r.out.slice(-200));
    assert.deepEqual(r.modes[0], { icanon: false, echo: false }, 'raw while playing: keys neither echoed nor left for the shell');
    assert.deepEqual(r.after, { icanon: true, echo: true }, 'cooked again');
    assert.ok(r.out.endsWith(RESTORED), JSON.stringify(r.out.slice(-40)));
  });

  test('q while a piped clip is still coming ends the wait for it: exit 0, cooked again (q was seen only once the pipe closed)', async () => {
    // The pipe never closes while v2a reads it: after the GIF, a byte every 0.2 s until the reader is gone.
    const feed = `{ cat ${shellQuote(gif)}; while printf x; do sleep 0.2; done; } 2>/dev/null`;
    const r = await inPty(['sh', '-c', `${feed} | ${V2A.map(shellQuote).join(' ')} play -`], [80, 24], [{ sleep: 1.5, write: 'q' }]);
    assert.equal(r.code, 0, r.out.slice(-200));
    assert.deepEqual(r.after, { icanon: true, echo: true }, 'cooked again');
  });

  test('Ctrl-C in raw mode is SIGINT: exit 130, restored, cooked again', async () => {
    const r = await inPty(play(), [80, 24], [{ frames: 3, write: '\x03' }]);
    assert.equal(r.code, 130);
    assert.deepEqual(r.modes[0], { icanon: false, echo: false });
    assert.deepEqual(r.after, { icanon: true, echo: true });
    assert.ok(r.out.endsWith(RESTORED), JSON.stringify(r.out.slice(-40)));
  });

  test('SIGHUP: the cursor restored, exit 129', async () => {
    const r = await inPty(play(), [80, 24], [{ frames: 3, signal: 'SIGHUP' }]);
    assert.equal(r.code, 129);
    assert.ok(r.out.endsWith(RESTORED), JSON.stringify(r.out.slice(-40)));
  });

  test('the terminal closed while playing: 129 (killed by SIGHUP), never an abort', async () => {
    for (const file of [gif, ...(clip ? [clip] : [])]) {
      const r = await inPty([...V2A, 'play', file, '--loop', '0'], [80, 24], [{ frames: 3, hangUp: true }]);
      assert.equal(r.code, 129);
    }
  });

  test('the terminal closed while a piped video plays: its temporary copy is removed too', { skip: hasFfmpeg ? false : 'ffmpeg is not installed' }, async () => {
    const tmp = mkdtempSync(join(dir, 'tmp-'));
    const r = await inPty(['sh', '-c', `exec ${V2A.map(shellQuote).join(' ')} play - --loop 0 < ${shellQuote(clip)}`], [80, 24], [{ frames: 3, hangUp: true }], { TMPDIR: tmp });
    assert.equal(r.code, 129);
    assert.deepEqual(readdirSync(tmp).filter((f) => f.startsWith('v2a-')), [], 'the temporary copy is removed');
  });

  test('a resize refits the next frames to the new size (the screen cleared)', async () => {
    const r = await inPty(play(), [80, 24], [{ frames: 3, resize: [40, 12] }, { frames: 8, signal: 'SIGTERM' }]);
    assert.equal(r.code, 143);
    const before = frames(r.parts[0]!).slice(0, -1); // the last one may be cut short
    const afterResize = r.parts.slice(1).join('');
    assert.ok(before.length > 0 && before.every((f) => Math.max(...f.map((l) => l.length)) === 80), 'the first frames are 80 wide');
    assert.ok(afterResize.includes('\x1b[2J'), 'cleared');
    const later = frames(afterResize).slice(-3);
    for (const f of later) {
      assert.ok(Math.max(...f.map((l) => l.length)) <= 40 && f.length <= 11, `a ${Math.max(...f.map((l) => l.length))}x${f.length} frame in 40x12`);
    }
  });

  test('COLUMNS and LINES exported (tmux, a shell\'s checkwinsize): a resize refits to the terminal\'s own size, not the stale variables', async () => {
    const r = await inPty(play(), [80, 24], [{ frames: 3, resize: [40, 12] }, { frames: 8, signal: 'SIGTERM' }], { COLUMNS: '80', LINES: '24' });
    assert.equal(r.code, 143);
    const before = frames(r.parts[0]!).slice(0, -1);
    assert.ok(before.length > 0 && before.every((f) => Math.max(...f.map((l) => l.length)) === 80), 'the first frames are 80 wide, as COLUMNS says');
    // They stayed 80 wide, and wrapped in the 40-column terminal.
    for (const f of frames(r.parts.slice(1).join('')).slice(-3)) {
      assert.ok(Math.max(...f.map((l) => l.length)) <= 40 && f.length <= 11, `a ${Math.max(...f.map((l) => l.length))}x${f.length} frame in 40x12`);
    }
  });

  test('explicit --columns: a resize does not refit', async () => {
    const r = await inPty(play('--columns', '30'), [80, 24], [{ frames: 2, resize: [60, 20] }, { frames: 6, signal: 'SIGTERM' }]);
    assert.equal(r.code, 143);
    for (const f of frames(r.out)) assert.equal(Math.max(...f.map((l) => l.length)), 30);
  });

  test('drawn in place below the prompt, the last frame left there and the prompt after it: no screen cleared', { skip: hasBash ? false : 'no bash' }, async () => {
    // A 4-frame GIF and a still image (one frame), each 80 x 20 in an 80 x 24 terminal, the screen already half full.
    for (const [file, count] of [[gif, 4], [still, 1]] as const) {
      const line = `seq 10; ${[...V2A, 'play', file].map(shellQuote).join(' ')}; echo "AFTER $?"`;
      const r = await inPty(['bash', '-c', line], [80, 24], []);
      assert.equal(r.code, 0, r.out.slice(-300));
      assert.ok(!r.out.includes('\x1b[2J') && !r.out.includes('\x1b[H'), 'no clear, no home');
      assert.equal(frames(r.out).length, count);
      const shown = screen(r.raw, 80, 24);
      assert.deepEqual(shown.slice(0, 10), ['1', '2', '3', '4', '5', '6', '7', '8', '9', '10'], 'what was on the screen stays');
      const art = shown.slice(10, -1);
      assert.equal(art.length, 20, shown.join('\n'));
      assert.deepEqual(art, frames(r.out).at(-1)!.slice(0, -1).map((l) => l.trimEnd()), 'the last frame, where the first was drawn');
      assert.equal(shown.at(-1), 'AFTER 0', 'the prompt goes below the art');
      assert.ok(r.out.endsWith(`${RESTORED}AFTER 0\n`), JSON.stringify(r.out.slice(-40)));
    }
  });

  test('art taller than the terminal is drawn from the top left corner, the screen cleared once', async () => {
    const r = await inPty(play('--columns', '80'), [80, 12], [{ frames: 5, signal: 'SIGTERM' }]);
    assert.equal(r.code, 143);
    assert.equal(r.out.split('\x1b[2J').length, 2, 'cleared once');
    assert.ok(frames(r.out).length >= 5);
    assert.ok(!/\x1b\[\d+A/.test(r.out), 'no cursor up');
  });

  test('help is wrapped to the terminal\'s width', async () => {
    for (const args of [['--help'], ['render', '--help'], ['play', '--help']]) {
      const r = await inPty([...V2A, ...args], [60, 24], []);
      assert.equal(r.code, 0);
      assert.match(r.out, /Usage: v2a/);
      assert.deepEqual(r.out.split('\n').filter((l) => [...l].length > 60), [], args.join(' '));
    }
  });

  test('TERM=dumb: refused with a usage error, no escapes', async () => {
    const r = await inPty(play(), [80, 24], [], { TERM: 'dumb' });
    assert.equal(r.code, 2);
    assert.ok(!r.out.includes('\x1b'), JSON.stringify(r.out));
    assert.match(r.out, /^v2a: this terminal \(TERM=dumb\) cannot play an animation in place: write the frames with -o frames\.ndjson/);
  });

  test('in the background (&, or bg after Ctrl-Z) it plays on without stopping for the terminal; fg gives it the keys', { skip: hasBash ? false : 'no bash' }, async () => {
    const r = await inPty(['bash', '--norc', '--noprofile', '--noediting', '-i'], [80, 24], [
      { text: 'PROMPT$ ', write: `${play().map(shellQuote).join(' ')} &\n` },
      { frames: 3, sleep: 0.5, write: 'jobs\n' },
      { sleep: 0.5, write: 'fg\n' },
      { sleep: 0.5, write: '\x1a' },
      { text: 'Stopped', write: 'bg\n' },
      { sleep: 0.8, write: 'jobs\n' },
      { sleep: 0.5, write: 'fg\n' },
      { sleep: 0.5, write: 'q' },
      { text: 'PROMPT$ ', write: 'echo STATUS=$?; exit\n' },
    ], { PS1: 'PROMPT$ ' });
    const plain = (i: number) => r.parts[i]!.replace(/\x1b\[[0-9;?]*[A-Za-z]/g, '');
    // Started with &: running, not "Stopped (tty output)" / "(tty input)".
    assert.match(plain(2), /Running/, plain(2).slice(-300));
    assert.doesNotMatch(plain(1) + plain(2), /Stopped/);
    // bg after Ctrl-Z: running again in the background, drawing frames.
    assert.match(plain(6), /Running/, plain(6).slice(-300));
    assert.ok(frames(r.parts[5]! + r.parts[6]!).length >= 2, 'frames drawn in the background');
    assert.match(plain(9), /STATUS=0/, 'fg gave it the keys: q stopped it');
  });

  test('Ctrl-Z under a job-control shell: restored before the stop; fg: hidden and raw again, q works', { skip: hasBash ? false : 'no bash' }, async () => {
    const r = await inPty(['bash', '--norc', '--noprofile', '--noediting', '-i'], [80, 24], [
      { text: 'PROMPT$ ', write: `${play().map(shellQuote).join(' ')}\n` },
      { frames: 3, write: '\x1a' },
      { text: 'Stopped', write: 'fg\n' },
      { text: '\x1b[?25l' },
      { sleep: 0.5, write: 'q' },
      { text: 'PROMPT$ ', write: 'echo STATUS=$?; exit\n' },
    ], { PS1: 'PROMPT$ ' });
    const stop = r.parts[2]!;
    assert.ok(stop.includes(RESTORED) && stop.indexOf(RESTORED) < stop.indexOf('Stopped'), JSON.stringify(stop.slice(-200)));
    assert.match(r.parts[3]!, /\x1b\[\?25l\n+\x1b\[\d+A/, 'fg draws the frame again at once, below the shell\'s lines');
    assert.match(r.parts[6]!, /STATUS=0/, 'q stopped it: raw mode was back');
  });
});
