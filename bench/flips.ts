/**
 * `npm run bench:flips`: glyph flips on real motion, v2a's FrameRenderer against chafa (issue 11).
 *
 * An animated GIF made here (40 frames, 320x240: a lit ball crossing a soft photo-like scene,
 * plus fresh sensor noise, sigma 3/255, on every frame; GIF palette dithering adds its own
 * frame-to-frame noise) is decoded by v2a's own frame decoder. Each frame goes through:
 * - v2a FrameRenderer (the temporal filter and glyph hysteresis, as the studio and the animated
 *   CLI render video), charset `detailed` (the 95 printable ASCII glyphs);
 * - v2a `render` of each frame alone (no filter: what the filter saves);
 * - chafa `--symbols ascii` (also all of ASCII) and chafa with `--fill ascii`, on a PNG of the
 *   same decoded frame, at the same columns x rows (bench/lib/peers.ts);
 * - in colour: v2a FrameRenderer with `charset: 'blocks', color: true` (two colours per cell)
 *   against chafa `--colors full` with its default symbols (block elements and more), the
 *   glyphs compared as above (a cell whose colours change but whose glyph stays is no flip).
 * "Flips per frame" is the share of cells whose character differs from the previous frame's,
 * averaged over the animation, also split into cells on the moving ball (in this frame or the
 * last) and elsewhere. Fewer flips must come from the still parts, not from freezing: on the
 * ball the art must keep changing.
 *
 * Target: FrameRenderer's flips per frame <= chafa's on the same frames (ASCII, and blocks+colour
 * against chafa's colour output). Writes bench/out/flips.json.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sharp from 'sharp';
import { FrameRenderer, render } from '../src/core/index.js';
import type { RenderResult } from '../src/core/types.js';
import { decodeFrames } from '../src/node/decode.js';
import { scene } from '../test/helpers/images.js';
import { parseAnsi } from './lib/color-metrics.js';
import { ensurePeers, parseGrid, peerCommand, peerVersion, type PeerName } from './lib/peers.js';
import { run } from './lib/proc.js';
import { writeJson } from './lib/report.js';

const W = 320, H = 240, FRAMES = 40, COLUMNS = 80, SIGMA = 3;

/** Frame f: the scene, a ball moving left to right, and fresh Gaussian noise. */
function frame(f: number, base: ReturnType<typeof scene>): Buffer {
  const out = Buffer.alloc(W * H * 3);
  let s = 0x9e3779b9 ^ (f * 7919);
  const uniform = () => {
    s ^= s << 13; s ^= s >>> 17; s ^= s << 5;
    return ((s >>> 0) + 0.5) / 4294967296;
  };
  const cx = ballX(f), cy = H * 0.55, r = 34;
  for (let y = 0; y < H; y++) {
    for (let x = 0; x < W; x++) {
      const i = (y * W + x) * 4;
      let rgb = [base.data[i]!, base.data[i + 1]!, base.data[i + 2]!];
      const dx = (x - cx) / r, dy = (y - cy) / r, d2 = dx * dx + dy * dy;
      if (d2 < 1) {
        const lit = 60 + 190 * Math.max(0, -0.4 * dx - 0.5 * dy + 0.75 * Math.sqrt(1 - d2));
        rgb = [lit, lit * 0.8, lit * 0.5];
      }
      const n = Math.sqrt(-2 * Math.log(uniform())) * Math.cos(2 * Math.PI * uniform()) * SIGMA;
      for (let c = 0; c < 3; c++) out[(y * W + x) * 3 + c] = Math.max(0, Math.min(255, Math.round(rgb[c]! + n)));
    }
  }
  return out;
}

const ballX = (f: number) => 40 + (f * (W - 80)) / (FRAMES - 1);

/** Cells the ball covers (or touches) in frame f or f - 1: where the picture really changed. */
function moving(f: number, x: number, y: number, rows: number): boolean {
  const px = ((x + 0.5) * W) / COLUMNS, py = ((y + 0.5) * H) / rows;
  const near = (g: number) => Math.hypot(px - ballX(g), py - H * 0.55) < 34 + 8;
  return near(f) || near(f - 1);
}

/** Share of cells that changed from a to b (frame f): all, on the moving ball, elsewhere. */
function flipSplit(a: readonly string[], b: readonly string[], f: number): { all: number; moving: number; still: number } {
  let n = 0, total = 0, nm = 0, tm = 0;
  for (let y = 0; y < a.length; y++) {
    const ra = [...a[y]!], rb = [...b[y]!];
    for (let x = 0; x < ra.length; x++) {
      const changed = ra[x] !== rb[x] ? 1 : 0;
      total++;
      n += changed;
      if (f > 0 && moving(f, x, y, a.length)) { tm++; nm += changed; }
    }
  }
  return { all: n / total, moving: tm ? nm / tm : 0, still: total - tm ? (n - nm) / (total - tm) : 0 };
}

function lines(r: RenderResult): string[] {
  const out: string[] = [];
  for (let y = 0; y < r.rows; y++) {
    let s = '';
    for (let x = 0; x < r.columns; x++) s += r.glyphs[r.cells[y * r.columns + x]!]!;
    out.push(s);
  }
  return out;
}

function meanFlips(seq: readonly string[][]): { all: number; moving: number; still: number } {
  const sum = { all: 0, moving: 0, still: 0 };
  for (let i = 1; i < seq.length; i++) {
    const s = flipSplit(seq[i - 1]!, seq[i]!, i);
    sum.all += s.all; sum.moving += s.moving; sum.still += s.still;
  }
  const n = seq.length - 1;
  return { all: sum.all / n, moving: sum.moving / n, still: sum.still / n };
}

const base = scene(W, H, 11);
const pngs = await Promise.all(Array.from({ length: FRAMES }, (_, f) => sharp(frame(f, base), { raw: { width: W, height: H, channels: 3 } }).png().toBuffer()));
const gif = await sharp(pngs, { join: { animated: true } }).gif({ delay: 40, loop: 0 }).toBuffer();

const tmp = mkdtempSync(join(tmpdir(), 'v2a-flips-'));
try {
  const video = new FrameRenderer({ columns: COLUMNS });
  const videoBlocks = new FrameRenderer({ columns: COLUMNS, charset: 'blocks', color: true });
  const blocks: string[][] = [];
  const filtered: string[][] = [];
  const alone: string[][] = [];
  const files: string[] = [];
  for await (const f of decodeFrames(gif, { maxPixels: 1e8 })) {
    const img = { width: f.width, height: f.height, data: f.data };
    const v = lines(video.render(img));
    const a = lines(render(img, { columns: COLUMNS }));
    filtered.push(v);
    alone.push(a);
    blocks.push(lines(videoBlocks.render(img)));
    const file = join(tmp, `f${String(f.index).padStart(3, '0')}.png`);
    writeFileSync(file, await sharp(Buffer.from(f.data), { raw: { width: f.width, height: f.height, channels: 4 } }).removeAlpha().png().toBuffer());
    files.push(file);
  }
  const rows = filtered[0]!.length;
  console.log(`bench:flips: ${filtered.length}-frame animated GIF, ${W}x${H}, a moving ball + noise sigma ${SIGMA}/255, ${COLUMNS}x${rows} cells`);
  console.log('renderer                          flips per frame   on the moving ball   elsewhere');
  const report: [string, { all: number; moving: number; still: number }][] = [['v2a FrameRenderer (detailed)', meanFlips(filtered)], ['v2a each frame alone (detailed)', meanFlips(alone)]];
  const peers = await ensurePeers((s) => console.log(s));
  if (peers.has('chafa')) {
    for (const peer of ['chafa', 'chafa-fill'] as PeerName[]) {
      const seq: string[][] = [];
      for (const file of files) {
        const { cmd, args } = peerCommand(peer, file, COLUMNS, rows);
        const r = await run(cmd, args);
        const g = parseGrid(r.stdout.toString('utf8'), COLUMNS, rows);
        if (g.problem) throw new Error(`${peer}: ${g.problem}`);
        seq.push(g.lines);
      }
      report.push([`${peer} (${peerVersion('chafa')})`, meanFlips(seq)]);
    }
  }
  report.push(['v2a FrameRenderer (blocks+colour)', meanFlips(blocks)]);
  if (peers.has('chafa')) {
    const seq: string[][] = [];
    for (const file of files) {
      const r = await run('chafa', ['--format', 'symbols', '--colors', 'full', '--size', `${COLUMNS}x${rows}`, '--stretch', '--animate', 'off', '--polite', 'on', file],
        { env: { ...process.env, TERM: 'xterm-256color', COLORTERM: 'truecolor' } });
      const g = parseAnsi(r.stdout.toString('utf8'), COLUMNS, rows);
      if (g.problem) throw new Error(`chafa -c full: ${g.problem}`);
      seq.push(g.lines);
    }
    report.push(['chafa -c full (default symbols)', meanFlips(seq)]);
  }
  const pct = (v: number) => `${(v * 100).toFixed(2)} %`;
  for (const [name, v] of report) console.log(`${name.padEnd(32)}  ${pct(v.all).padStart(15)}  ${pct(v.moving).padStart(19)}  ${pct(v.still).padStart(10)}`);
  const chafa = report.find(([n]) => n.startsWith('chafa ('));
  if (chafa) {
    const ok = report[0]![1].all <= chafa[1].all;
    console.log(`target: FrameRenderer flips <= chafa's: ${ok ? 'MET' : 'MISSED'} (${pct(report[0]![1].all)} vs ${pct(chafa[1].all)})`);
  }
  const v2aBlocks = report.find(([n]) => n.includes('blocks+colour'))!;
  const chafaColour = report.find(([n]) => n.startsWith('chafa -c full'));
  if (chafaColour) {
    const ok = v2aBlocks[1].all <= chafaColour[1].all;
    console.log(`target: FrameRenderer blocks+colour flips <= chafa -c full's: ${ok ? 'MET' : 'MISSED'} (${pct(v2aBlocks[1].all)} vs ${pct(chafaColour[1].all)})`);
  }
  const file = writeJson('flips.json', {
    bench: 'flips',
    date: new Date().toISOString(),
    frames: filtered.length, width: W, height: H, noiseSigma: SIGMA, columns: COLUMNS, rows,
    // Shares of the cells whose glyph changes from one frame to the next: all, on the ball, elsewhere.
    results: report.map(([renderer, v]) => ({ renderer, flipsPerFrame: v.all, onTheMovingBall: v.moving, elsewhere: v.still })),
    targets: {
      frameRendererVsChafa: chafa ? { met: report[0]![1].all <= chafa[1].all } : null,
      blocksColourVsChafaFull: chafaColour ? { met: v2aBlocks[1].all <= chafaColour[1].all } : null,
    },
  });
  console.log(`wrote ${file}`);
} finally {
  rmSync(tmp, { recursive: true, force: true });
}
