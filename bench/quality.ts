/**
 * `npm run bench:quality [-- --quick] [--images camera,coffee] [--columns 80,160] [--mono|--colour] [--params JSON] [--strict]`
 *
 * How close the art looks to the image, for v2a and its peers at the same grid (columns x rows,
 * rows = round(columns * h / w * 0.5)). Every text output is rasterised with the reference font
 * (DejaVu Sans Mono) at 10x20 px cells, light ink on a dark ground, and compared with the source.
 *
 * Mono (v2a at defaults; chafa --symbols ascii --colors none; jp2a; chafa --fill ascii):
 * - contour r / tone r: Pearson correlation of the blurred source luminance and the blurred ink, at
 *   blur sigma 0.08 cell heights (glyph scale: contours up close) and 0.2 cell heights (tone from
 *   afar). A blank grid scores 0 on both: these cannot be won by drawing nothing.
 * - SSIM after a global tone fit (near: sigma 0.5 cell heights, far: 1.5) beside the SSIM of an
 *   all-blank grid, which is high (SSIM of blurred images has a high floor).
 * - cell r: per-cell tone correlation (mean ink vs mean source luminance of each cell).
 * Colour (v2a blocks+colour at defaults and ascii+colour with cellColors fg-bg; chafa -c full with its default symbols, with
 * --fg-only, and with --symbols ascii): each cell's glyph mask blends its foreground over its
 * background in linear light (bench/lib/color-metrics.ts); per-cell ΔE (CIELAB 1976 and OKLab x 100),
 * chroma error, and SSIM / correlation of the blurred OKLab L at the two blur scales (no tone fit;
 * the blank (black) grid's SSIM beside them).
 *
 * Side-by-side sheets per image and width: bench/out/<image>-<columns>-mono.png (source | v2a |
 * chafa) and bench/out/<image>-<columns>-colour.png (source | v2a blocks | chafa | v2a ascii | chafa ascii).
 * --quick: 4 images at 80 columns. Tables to stdout, everything to bench/out/quality.json.
 * --strict: exit 1 unless every target below is met.
 * --params JSON: render parameters merged into v2a's renders (given, so not tuned by the Director).
 */
// Must come first: it points fontconfig at the reference fonts before anything renders text.
import { rasterizeText, referenceFont, type InkImage } from '../scripts/lib/glyph-raster.js';
import { join } from 'node:path';
import { cpus } from 'node:os';
import sharp from 'sharp';
import { mkdirSync } from 'node:fs';
import { formatResult } from '../src/core/format/index.js';
import { render } from '../src/core/render.js';
import { VERSION, CELL_ASPECT, type RenderResult } from '../src/core/types.js';
import { OUT_DIR, loadBenchImages, squarePattern, decodeRgba, type BenchImage } from './lib/images.js';
import { SCALES, areaResize, cellMeans, gaussianBlur, inkPlane, lumaPlane, pearson, plane, prepareReference, scoreInk, type Plane } from './lib/metrics.js';
import {
  compositeColour, linearPlanes, parseAnsi, prepareColourReference, scoreColour, type CellColours, type ColourScores, type RgbPlanes,
} from './lib/color-metrics.js';
import { ensurePeers, parseGrid, peerCommand, peerVersion, runPeer, type PeerName } from './lib/peers.js';
import { run } from './lib/proc.js';
import { fix, table, writeJson } from './lib/report.js';

const CELL_HEIGHT = 20;
/** Blur sigmas in cell heights: glyph scale (contours) and tone scale. */
const SIGMA_FINE = 0.08;
const SIGMA_COARSE = 0.2;
const QUICK_IMAGES = ['camera', 'astronaut', 'coffee', 'chelsea'];

type MonoTool = 'v2a' | PeerName;
const MONO_TOOLS: readonly MonoTool[] = ['v2a', 'chafa', 'jp2a', 'chafa-fill'];
type ColourTool = 'v2a-blocks' | 'v2a-ascii' | 'chafa' | 'chafa-fg-only' | 'chafa-ascii';
const COLOUR_TOOLS: readonly ColourTool[] = ['v2a-blocks', 'chafa', 'chafa-fg-only', 'v2a-ascii', 'chafa-ascii'];
/** Colour targets: v2a configuration -> the chafa configuration it must match or beat. */
const COLOUR_PAIRS: readonly (readonly [ColourTool, ColourTool])[] = [['v2a-blocks', 'chafa'], ['v2a-ascii', 'chafa-ascii']];

interface Args { images?: string[]; columns: number[]; strict: boolean; mono: boolean; colour: boolean; quick: boolean; params: Record<string, unknown> }

function parseArgs(argv: readonly string[]): Args {
  const a: Args = { columns: [80, 160], strict: false, mono: true, colour: true, quick: false, params: {} };
  for (let i = 0; i < argv.length; i++) {
    const s = argv[i]!;
    const [flag, inline] = s.includes('=') ? [s.slice(0, s.indexOf('=')), s.slice(s.indexOf('=') + 1)] : [s, undefined];
    const value = () => {
      const v = inline ?? argv[++i];
      if (v === undefined) throw new Error(`${flag} needs a value`);
      return v;
    };
    if (flag === '--images') a.images = value().split(',').map((x) => x.trim()).filter(Boolean);
    else if (flag === '--columns') {
      a.columns = value().split(',').map((x) => Number(x.trim()));
      if (a.columns.some((c) => !Number.isInteger(c) || c < 8 || c > 400)) throw new Error('--columns: integers from 8 to 400');
    } else if (flag === '--strict') a.strict = true;
    else if (flag === '--quick') a.quick = true;
    else if (flag === '--mono') a.colour = false;
    else if (flag === '--colour' || flag === '--color') a.mono = false;
    else if (flag === '--params') {
      const v = JSON.parse(value()) as unknown;
      if (typeof v !== 'object' || v === null || Array.isArray(v)) throw new Error('--params: a JSON object of render parameters');
      a.params = v as Record<string, unknown>;
    } else if (flag === '--help' || flag === '-h') {
      console.log('usage: npm run bench:quality -- [--quick] [--images camera,coffee] [--columns 80,160] [--mono|--colour] [--params JSON] [--strict]');
      process.exit(0);
    } else throw new Error(`unknown argument ${s}`);
  }
  if (!a.mono && !a.colour) throw new Error('--mono and --colour each run one half; given both, nothing would run (without either, both run)');
  if (a.quick) {
    a.images ??= QUICK_IMAGES;
    if (!argv.some((x) => x.startsWith('--columns'))) a.columns = [80];
  }
  return a;
}

const splitLines = (body: string) => {
  const lines = body.split('\n');
  if (lines.length && lines[lines.length - 1] === '') lines.pop();
  return lines;
};

// ---------------------------------------------------------------------------------------------
// Mono.

interface MonoScores {
  readonly contourR: number;
  readonly toneR: number;
  readonly ssimNear: number;
  readonly ssimFar: number;
  readonly cellR: number;
}

interface MonoRef {
  readonly prepared: ReturnType<typeof prepareReference>;
  readonly fine: Plane;
  readonly coarse: Plane;
}

function scoreMono(ink: Plane, ref: MonoRef): MonoScores {
  const s = scoreInk(ink, ref.prepared);
  const ch = ref.prepared.cellHeight;
  return {
    contourR: pearson(gaussianBlur(ink, SIGMA_FINE * ch).data, ref.fine.data),
    toneR: pearson(gaussianBlur(ink, SIGMA_COARSE * ch).data, ref.coarse.data),
    ssimNear: s.ssim.near,
    ssimFar: s.ssim.far,
    cellR: s.toneR,
  };
}

async function monoLines(tool: MonoTool, image: BenchImage, columns: number, rows: number): Promise<{ lines: string[] | null; problem: string | null; ms: number; result?: RenderResult }> {
  if (tool === 'v2a') {
    const t0 = performance.now();
    const result = render(image.rgba, { ...V2A_PARAMS, columns });
    const ms = performance.now() - t0;
    const lines = splitLines(formatResult(result, 'text').body);
    return { lines, problem: result.rows === rows ? null : `rows ${result.rows} instead of ${rows}`, ms, result };
  }
  const r = await runPeer(tool, image.file, columns, rows);
  return { lines: r.problem ? null : r.lines, problem: r.problem, ms: r.ms };
}

async function checkOrientation(tool: MonoTool): Promise<string | null> {
  const cols = 40, rows = 10;
  for (const [fg, bg] of [[255, 0], [0, 255]] as const) {
    const file = await squarePattern(fg, bg);
    let lines: string[] | null;
    if (tool === 'v2a') lines = splitLines(formatResult(render(await decodeRgba(file), { columns: cols }), 'text').body);
    else {
      const r = await runPeer(tool, file, cols, rows);
      if (r.problem) return r.problem;
      lines = r.lines;
    }
    const ink = await rasterizeText(lines, CELL_HEIGHT);
    const cells = cellMeans(inkPlane(ink), ink.cellWidth, ink.cellHeight, cols, rows);
    let inS = 0, inN = 0, outS = 0, outN = 0;
    for (let r = 0; r < rows; r++) {
      for (let c = 0; c < cols; c++) {
        const v = cells[r * cols + c]!;
        if (r >= 3 && r < 7 && c >= 12 && c < 28) { inS += v; inN++; }
        else if (r < 2 || r >= 8 || c < 8 || c >= 32) { outS += v; outN++; }
      }
    }
    const inside = inS / inN, outside = outS / outN;
    if (!(fg > bg ? inside > outside + 0.1 : outside > inside + 0.1)) return `${fg ? 'white on black' : 'black on white'}: ink inside ${inside.toFixed(2)}, outside ${outside.toFixed(2)}`;
  }
  return null;
}

// ---------------------------------------------------------------------------------------------
// Colour.

function chafaColourArgs(tool: Exclude<ColourTool, 'v2a-blocks' | 'v2a-ascii'>, file: string, columns: number | string, rows: number | string): string[] {
  const extra = tool === 'chafa-fg-only' ? ['--fg-only'] : tool === 'chafa-ascii' ? ['--symbols', 'ascii'] : [];
  return ['--format', 'symbols', '--colors', 'full', ...extra, '--size', `${columns}x${rows}`, '--stretch', '--animate', 'off', '--polite', 'on', file];
}

async function colourRun(tool: ColourTool, image: BenchImage, columns: number, rows: number): Promise<{ lines: string[] | null; colours: CellColours | null; problem: string | null; ms: number }> {
  if (tool === 'v2a-blocks' || tool === 'v2a-ascii') {
    const t0 = performance.now();
    const result = render(image.rgba, { ...V2A_PARAMS, columns, color: true, ...(tool === 'v2a-blocks' ? { charset: 'blocks' } : { cellColors: 'fg-bg' }) });
    const ms = performance.now() - t0;
    const lines = splitLines(formatResult(result, 'text').body);
    const bg = (result as { background?: Uint8Array }).background ?? null;
    return { lines, colours: { columns, rows: result.rows, fg: result.colors, bg }, problem: result.rows === rows ? null : `rows ${result.rows} instead of ${rows}`, ms };
  }
  const args = chafaColourArgs(tool, image.file, columns, rows);
  const r = await run('chafa', args, { env: { ...process.env, TERM: 'xterm-256color', COLORTERM: 'truecolor' }, timeoutMs: 120_000 });
  if (r.code !== 0) return { lines: null, colours: null, problem: `chafa exited ${r.code ?? r.signal}`, ms: r.ms };
  const p = parseAnsi(r.stdout.toString('utf8'), columns, rows);
  return { lines: p.problem ? null : p.lines, colours: p.colours, problem: p.problem, ms: r.ms };
}

// ---------------------------------------------------------------------------------------------
// Sheets.

interface Sheet { readonly label: string; readonly width: number; readonly height: number; readonly rgb: Uint8Array | null }

const LIN_TO_SRGB8 = (v: number) => Math.round(255 * (v <= 0.0031308 ? 12.92 * Math.max(0, v) : 1.055 * Math.min(1, v) ** (1 / 2.4) - 0.055));

function rgbOfPlanes(p: RgbPlanes): Uint8Array {
  const n = p.r.data.length;
  const out = new Uint8Array(n * 3);
  for (let i = 0; i < n; i++) {
    out[i * 3] = LIN_TO_SRGB8(p.r.data[i]!);
    out[i * 3 + 1] = LIN_TO_SRGB8(p.g.data[i]!);
    out[i * 3 + 2] = LIN_TO_SRGB8(p.b.data[i]!);
  }
  return out;
}

function rgbOfGrey(p: { data: Float32Array | Uint8Array }, scale: number): Uint8Array {
  const out = new Uint8Array(p.data.length * 3);
  for (let i = 0; i < p.data.length; i++) out[i * 3] = out[i * 3 + 1] = out[i * 3 + 2] = Math.max(0, Math.min(255, Math.round(p.data[i]! * scale)));
  return out;
}

async function writeSheet(file: string, panels: readonly Sheet[]): Promise<void> {
  const gap = 8;
  const label = await Promise.all(panels.map((p) => rasterizeText([' ' + p.label], CELL_HEIGHT)));
  const labelH = CELL_HEIGHT + 4;
  const H = labelH + Math.max(...panels.map((p) => p.height));
  const W = panels.reduce((s, p) => s + p.width, 0) + gap * (panels.length - 1);
  const img = new Uint8Array(W * H * 3).fill(96);
  let x0 = 0;
  panels.forEach((p, k) => {
    const li = label[k]!;
    for (let y = 0; y < labelH; y++) {
      for (let x = 0; x < p.width; x++) {
        const v = y >= 2 && y - 2 < li.height && x < li.width ? li.data[(y - 2) * li.width + x]! : 0;
        img.fill(v, (y * W + x0 + x) * 3, (y * W + x0 + x) * 3 + 3);
      }
    }
    for (let y = 0; y < p.height; y++) {
      const o = ((labelH + y) * W + x0) * 3;
      if (p.rgb) img.set(p.rgb.subarray(y * p.width * 3, (y + 1) * p.width * 3), o);
      else img.fill(40, o, o + p.width * 3);
    }
    x0 += p.width + gap;
  });
  mkdirSync(OUT_DIR, { recursive: true });
  await sharp(Buffer.from(img.buffer, img.byteOffset, img.length), { raw: { width: W, height: H, channels: 3 } }).png().toFile(file);
}

// ---------------------------------------------------------------------------------------------

interface MonoCase {
  readonly image: string;
  readonly columns: number;
  readonly rows: number;
  readonly scores: Partial<Record<MonoTool, MonoScores>>;
  readonly problems: Partial<Record<MonoTool, string>>;
  readonly ms: Partial<Record<MonoTool, number>>;
  readonly blank: { ssimNear: number; ssimFar: number };
  readonly v2a?: { codebook: string; adjustments: unknown };
}
interface ColourCase {
  readonly image: string;
  readonly columns: number;
  readonly rows: number;
  readonly scores: Partial<Record<ColourTool, ColourScores>>;
  readonly problems: Partial<Record<ColourTool, string>>;
  readonly blank: { ssimFine: number; ssimCoarse: number };
}

/** `--params`: render parameters v2a's renders get besides the bench's own (columns, colour mode). */
let V2A_PARAMS: Readonly<Record<string, unknown>> = {};

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  V2A_PARAMS = args.params;
  if (Object.keys(V2A_PARAMS).length) console.log(`v2a renders with ${JSON.stringify(V2A_PARAMS)}`);
  const t0 = performance.now();
  const log = (s: string) => console.log(s);
  const progress = (s: string) => process.stderr.write(s + '\n');
  const programs = await ensurePeers(log);
  let images = await loadBenchImages(args.images, log);
  // --quick names photos; where they cannot be had (no apt-get download), the generated images
  // stand in, as a full run does without the photos, and the output says so.
  if (!images.length && args.quick) {
    log('--quick: none of its photos is available; running on the generated images instead');
    images = await loadBenchImages(undefined, log);
  }
  if (!images.length) throw new Error('no images to run on');
  const hasChafa = programs.has('chafa');
  const monoTools = MONO_TOOLS.filter((t) => t === 'v2a' || programs.has(t === 'jp2a' ? 'jp2a' : 'chafa'));
  const colourTools = COLOUR_TOOLS.filter((t) => t.startsWith('v2a') || hasChafa);

  const orientation: Partial<Record<MonoTool, string>> = {};
  if (args.mono) {
    for (const t of monoTools) {
      const wrong = await checkOrientation(t);
      if (wrong) {
        orientation[t] = wrong;
        log(`orientation ${t}: WRONG (${wrong})`);
      }
    }
  }

  const monoCases: MonoCase[] = [];
  const colourCases: ColourCase[] = [];
  let cell = { width: 0, height: 0 };
  for (const image of images) {
    const { width: w, height: h } = image.rgba;
    const luma = lumaPlane(image.rgba);
    const lin = args.colour ? linearPlanes(image.rgba) : null;
    for (const columns of args.columns) {
      const rows = Math.max(1, Math.round((columns * h * CELL_ASPECT) / w));
      const tag = `${image.name}-${columns}`;
      // --- mono
      if (args.mono) {
        const runs = new Map<MonoTool, Awaited<ReturnType<typeof monoLines>>>();
        for (const t of monoTools) runs.set(t, await monoLines(t, image, columns, rows));
        const inks = new Map<MonoTool, InkImage>();
        for (const [t, r] of runs) if (r.lines && !r.problem) inks.set(t, await rasterizeText(r.lines, CELL_HEIGHT));
        const any = inks.get('v2a') ?? inks.values().next().value!;
        cell = { width: any.cellWidth, height: any.cellHeight };
        const prepared = prepareReference(luma, columns, rows, cell.width, cell.height);
        const ref: MonoRef = { prepared, fine: gaussianBlur(prepared.plane, SIGMA_FINE * cell.height), coarse: gaussianBlur(prepared.plane, SIGMA_COARSE * cell.height) };
        const blank = scoreInk(plane(prepared.plane.width, prepared.plane.height), prepared);
        const mc: MonoCase = {
          image: image.name, columns, rows, scores: {}, problems: {}, ms: {}, blank: { ssimNear: blank.ssim.near, ssimFar: blank.ssim.far },
          v2a: runs.get('v2a')?.result && { codebook: runs.get('v2a')!.result!.codebook.glyphs, adjustments: runs.get('v2a')!.result!.director.adjustments },
        };
        for (const [t, r] of runs) {
          (mc.ms as Record<string, number>)[t] = Math.round(r.ms);
          const ink = inks.get(t);
          if (r.problem || !ink) (mc.problems as Record<string, string>)[t] = r.problem ?? 'no output';
          else if (ink.width !== prepared.plane.width || ink.height !== prepared.plane.height) (mc.problems as Record<string, string>)[t] = `ink ${ink.width}x${ink.height}`;
          else (mc.scores as Record<string, MonoScores>)[t] = scoreMono(inkPlane(ink), ref);
        }
        monoCases.push(mc);
        const panels: Sheet[] = [{ label: 'source', width: prepared.plane.width, height: prepared.plane.height, rgb: rgbOfGrey(prepared.plane, 255) }];
        for (const t of ['v2a', 'chafa'] as const) {
          const ink = inks.get(t);
          panels.push({ label: t, width: prepared.plane.width, height: prepared.plane.height, rgb: ink && !mc.problems[t] ? rgbOfGrey(ink, 1) : null });
        }
        await writeSheet(join(OUT_DIR, `${tag}-mono.png`), panels);
        progress(`${tag} mono: ` + monoTools.map((t) => `${t} ${mc.ms[t]} ms${mc.problems[t] ? ` (${mc.problems[t]})` : ''}`).join(', '));
      }
      // --- colour
      if (args.colour && lin) {
        const runs = new Map<ColourTool, Awaited<ReturnType<typeof colourRun>>>();
        for (const t of colourTools) runs.set(t, await colourRun(t, image, columns, rows));
        const arts = new Map<ColourTool, RgbPlanes>();
        let W = 0, H = 0, cw = 0, chh = 0;
        for (const [t, r] of runs) {
          if (!r.lines || !r.colours || r.problem) continue;
          try {
            const ink = await rasterizeText(r.lines, CELL_HEIGHT);
            W = ink.width; H = ink.height; cw = ink.cellWidth; chh = ink.cellHeight;
            arts.set(t, compositeColour(ink, r.colours));
          } catch (e) {
            r.problem = `rasterising: ${(e as Error).message.split('\n')[0]}`;
          }
        }
        if (!arts.size) continue;
        const src = { r: areaResize(lin.r, W, H), g: areaResize(lin.g, W, H), b: areaResize(lin.b, W, H) };
        const ref = prepareColourReference(src, cw, chh, columns, rows, [SIGMA_FINE * chh, SIGMA_COARSE * chh]);
        const black = plane(W, H);
        const blank = scoreColour({ r: black, g: black, b: black }, ref, pearson);
        const cc: ColourCase = { image: image.name, columns, rows, scores: {}, problems: {}, blank: { ssimFine: blank.ssimFine, ssimCoarse: blank.ssimCoarse } };
        for (const [t, r] of runs) {
          const art = arts.get(t);
          if (art) (cc.scores as Record<string, ColourScores>)[t] = scoreColour(art, ref, pearson);
          else (cc.problems as Record<string, string>)[t] = r.problem ?? 'no output';
        }
        colourCases.push(cc);
        const panels: Sheet[] = [{ label: 'source', width: W, height: H, rgb: rgbOfPlanes(src) }];
        for (const t of ['v2a-blocks', 'chafa', 'v2a-ascii', 'chafa-ascii'] as const) {
          const art = arts.get(t);
          panels.push({ label: t, width: W, height: H, rgb: art ? rgbOfPlanes(art) : null });
        }
        await writeSheet(join(OUT_DIR, `${tag}-colour.png`), panels);
        progress(`${tag} colour: ` + colourTools.map((t) => `${t}${cc.problems[t] ? ` (${cc.problems[t]})` : ''}`).join(', '));
      }
    }
  }

  // -------------------------------------------------------------------------------------------
  // Tables and targets.
  const targets: { name: string; met: boolean; misses: string[] }[] = [];
  if (args.mono && monoCases.length) {
    console.log('');
    console.log(`Mono (${referenceFont.family} at ${cell.width}x${cell.height} px cells, light ink on dark). Higher is better.`);
    console.log(`contour r / tone r: correlation of source and art blurred at sigma ${SIGMA_FINE} / ${SIGMA_COARSE} cell heights (a blank grid scores 0).`);
    console.log('SSIM near / far: after a global tone fit, blur 0.5 / 1.5 cell heights, beside the blank grid\'s. cell r: per-cell tone correlation. * = v2a >= chafa.');
    const head = ['image', 'cols', 'tool', 'contour r', 'tone r', 'SSIM near', 'SSIM far', 'cell r'];
    const rowsOut: string[][] = [head];
    for (const c of monoCases) {
      for (const t of monoTools) {
        const s = c.scores[t];
        if (!s) { rowsOut.push([c.image, String(c.columns), t, c.problems[t] ?? '-']); continue; }
        const ch = c.scores.chafa;
        const m = (v: number, p: number | undefined) => fix(v) + (t === 'v2a' && p !== undefined && v >= p ? '*' : ' ');
        rowsOut.push([c.image, String(c.columns), t, m(s.contourR, ch?.contourR), m(s.toneR, ch?.toneR), m(s.ssimNear, ch?.ssimNear), m(s.ssimFar, ch?.ssimFar), m(s.cellR, ch?.cellR)]);
      }
      rowsOut.push([c.image, String(c.columns), '(blank grid)', '0.000 ', '0.000 ', fix(c.blank.ssimNear) + ' ', fix(c.blank.ssimFar) + ' ', '-']);
    }
    console.log(table(rowsOut, { leftAlign: [2] }));
    const misses: string[] = [];
    for (const c of monoCases) {
      const v = c.scores.v2a, p = c.scores.chafa;
      if (!v || !p) { misses.push(`${c.image} ${c.columns}: not measured`); continue; }
      if (v.contourR < p.contourR) misses.push(`${c.image} ${c.columns} contour r ${fix(v.contourR)} < ${fix(p.contourR)}`);
      if (v.toneR < p.toneR) misses.push(`${c.image} ${c.columns} tone r ${fix(v.toneR)} < ${fix(p.toneR)}`);
      if (v.cellR < 0.93) misses.push(`${c.image} ${c.columns} cell r ${fix(v.cellR)} < 0.93`);
    }
    targets.push({ name: 'mono: v2a >= chafa on contour r and tone r, cell r >= 0.93, every case', met: !misses.length, misses });
    const meanOf = (t: MonoTool, k: keyof MonoScores) => {
      const xs = monoCases.map((c) => c.scores[t]?.[k]).filter((x): x is number => x !== undefined);
      return xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : null;
    };
    const sum: string[][] = [['mean', 'contour r', 'tone r', 'SSIM near', 'SSIM far', 'cell r']];
    for (const t of monoTools) sum.push([t, ...(['contourR', 'toneR', 'ssimNear', 'ssimFar', 'cellR'] as const).map((k) => fix(meanOf(t, k)))]);
    console.log('');
    console.log(table(sum));
  }
  if (args.colour && colourCases.length) {
    console.log('');
    console.log('Colour: per-cell ΔE (CIELAB 76; OKLab x100) and chroma error (OKLab C x100: |abs| / signed) lower is better;');
    console.log(`SSIM / r of blurred OKLab L at sigma ${SIGMA_FINE} (fine) and ${SIGMA_COARSE} (coarse) cell heights, higher is better. * = v2a at least as good as its chafa pair.`);
    const rowsOut: string[][] = [['image', 'cols', 'tool', 'ΔE', 'ΔE ok', 'chroma |e|', 'chroma ±', 'SSIM fine', 'SSIM coarse', 'r fine', 'r coarse']];
    for (const c of colourCases) {
      for (const t of colourTools) {
        const s = c.scores[t];
        if (!s) { rowsOut.push([c.image, String(c.columns), t, c.problems[t] ?? '-']); continue; }
        const peer = COLOUR_PAIRS.find(([v]) => v === t)?.[1];
        const p = peer ? c.scores[peer] : undefined;
        const lo = (v: number, q: number | undefined) => fix(v, 2) + (p && q !== undefined && v <= q ? '*' : ' ');
        const hi = (v: number, q: number | undefined) => fix(v) + (p && q !== undefined && v >= q ? '*' : ' ');
        rowsOut.push([c.image, String(c.columns), t, lo(s.deltaE, p?.deltaE), lo(s.deltaEok, p?.deltaEok), lo(s.chromaAbs, p?.chromaAbs), fix(s.chromaSigned, 2) + ' ',
          hi(s.ssimFine, p?.ssimFine), hi(s.ssimCoarse, p?.ssimCoarse), hi(s.corrFine, p?.corrFine), hi(s.corrCoarse, p?.corrCoarse)]);
      }
      rowsOut.push([c.image, String(c.columns), '(blank grid)', '', '', '', '', fix(c.blank.ssimFine) + ' ', fix(c.blank.ssimCoarse) + ' ', '0.000 ', '0.000 ']);
    }
    console.log(table(rowsOut, { leftAlign: [2] }));
    for (const [v2a, peer] of COLOUR_PAIRS) {
      const misses: string[] = [];
      for (const c of colourCases) {
        const v = c.scores[v2a], p = c.scores[peer];
        if (!v || !p) { misses.push(`${c.image} ${c.columns}: not measured`); continue; }
        if (v.deltaE > p.deltaE) misses.push(`${c.image} ${c.columns} ΔE ${fix(v.deltaE, 2)} > ${fix(p.deltaE, 2)}`);
        if (v.ssimFine < p.ssimFine) misses.push(`${c.image} ${c.columns} SSIM fine ${fix(v.ssimFine)} < ${fix(p.ssimFine)}`);
        if (v.ssimCoarse < p.ssimCoarse) misses.push(`${c.image} ${c.columns} SSIM coarse ${fix(v.ssimCoarse)} < ${fix(p.ssimCoarse)}`);
      }
      targets.push({ name: `colour: ${v2a} vs ${peer}: ΔE <= and SSIM >= at both scales, every case`, met: !misses.length, misses });
    }
    const meanOf = (t: ColourTool, k: keyof ColourScores) => {
      const xs = colourCases.map((c) => c.scores[t]?.[k]).filter((x): x is number => x !== undefined);
      return xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : null;
    };
    const keys = ['deltaE', 'deltaEok', 'chromaAbs', 'chromaSigned', 'ssimFine', 'ssimCoarse', 'corrFine', 'corrCoarse'] as const;
    const sum: string[][] = [['mean', 'ΔE', 'ΔE ok', 'chroma |e|', 'chroma ±', 'SSIM fine', 'SSIM coarse', 'r fine', 'r coarse']];
    for (const t of colourTools) sum.push([t, ...keys.map((k) => fix(meanOf(t, k), k.startsWith('delta') || k.startsWith('chroma') ? 2 : 3))]);
    console.log('');
    console.log(table(sum));
  }
  console.log('');
  for (const t of targets) {
    console.log(`target ${t.met ? 'MET   ' : 'MISSED'} ${t.name}${args.images || args.columns.length < 2 ? ' (filtered run)' : ''}`);
    for (const m of t.misses.slice(0, 12)) console.log(`    ${m}`);
    if (t.misses.length > 12) console.log(`    ... ${t.misses.length - 12} more`);
  }
  const seconds = (performance.now() - t0) / 1000;
  console.log(`(${images.length} images x ${args.columns.length} widths in ${seconds.toFixed(1)} s; sheets: bench/out/<image>-<columns>-{mono,colour}.png)`);
  const file = writeJson('quality.json', {
    bench: 'quality', date: new Date().toISOString(), v2aVersion: VERSION, node: process.version, cpus: cpus().length, args,
    peers: Object.fromEntries([...programs].map((p) => [p, peerVersion(p)])),
    commands: {
      mono: Object.fromEntries(monoTools.filter((t) => t !== 'v2a').map((t) => { const c = peerCommand(t as PeerName, '{file}', '{columns}', '{rows}'); return [t, [c.cmd, ...c.args].join(' ')]; })),
      colour: Object.fromEntries((['chafa', 'chafa-fg-only', 'chafa-ascii'] as const).map((t) => [t, ['chafa', ...chafaColourArgs(t, '{file}', '{columns}', '{rows}')].join(' ')])),
    },
    font: { family: referenceFont.family, package: referenceFont.packageId, cellWidth: cell.width, cellHeight: cell.height },
    scales: { fineSigmaCells: SIGMA_FINE, coarseSigmaCells: SIGMA_COARSE, ssim: SCALES },
    orientation, monoCases, colourCases, targets, seconds,
  });
  progress(`wrote ${file}`);
  if (args.strict && targets.some((t) => !t.met)) {
    console.log('--strict: a target was missed, exit 1');
    process.exitCode = 1;
  }
}

main().catch((e: unknown) => {
  console.error(e instanceof Error ? e.stack ?? e.message : e);
  process.exit(2);
});
