/**
 * `npm run bench:quality [-- --images camera,coffee] [--columns 80] [--strict]`
 *
 * Renders each benchmark image with v2a (in process, at DEFAULTS: only `columns` is set), chafa
 * and jp2a at the same grid (columns x rows, rows = round(columns * h / w * 0.5)), rasterizes every
 * text output with the reference font (DejaVu Sans Mono, 16 px cells) into an ink image, and scores
 * it against the source luminance (bench/lib/metrics.ts): SSIM after a global tone fit at two
 * viewing distances (near, far) and the per-cell tone correlation. Tables go to stdout, everything
 * to bench/out/quality.json, and a side-by-side PNG per image at 80 columns to
 * bench/out/<image>-80.png (reference | v2a | chafa | jp2a | chafa-fill).
 *
 * Exit 0; with --strict, exit 1 unless v2a beats chafa on every (image, columns, scale) case run.
 */
// Must come first: it points fontconfig at the reference fonts before anything renders text.
import { rasterizeText, referenceFont, type InkImage } from '../scripts/lib/glyph-raster.js';
import { join } from 'node:path';
import { cpus } from 'node:os';
import { formatResult } from '../src/core/format/index.js';
import { render } from '../src/core/render.js';
import { VERSION, CELL_ASPECT } from '../src/core/types.js';
import { OUT_DIR, loadBenchImages, squarePattern, decodeRgba, type BenchImage } from './lib/images.js';
import {
  SCALES, SSIM_C1, plane, SSIM_C2, SSIM_WINDOW_RADIUS, SSIM_WINDOW_SIGMA, cellMeans, inkPlane, lumaPlane, prepareReference,
  scoreInk, type Scale, type Scores,
} from './lib/metrics.js';
import { ensurePeers, parseGrid, peerCommand, peerVersion, programOf, runPeer, type PeerName } from './lib/peers.js';
import { fix, sideBySide, table, writeJson, type Panel } from './lib/report.js';

const CELL_HEIGHT = 16;
type Tool = 'v2a' | PeerName;
/** Table order. chafa-fill (chafa with --fill ascii) is an extra, stronger chafa configuration. */
const TOOLS: readonly Tool[] = ['v2a', 'chafa', 'jp2a', 'chafa-fill'];
/** Side-by-side PNG order. */
const PANEL_TOOLS: readonly Tool[] = ['v2a', 'chafa', 'jp2a', 'chafa-fill'];

// ---------------------------------------------------------------------------------------------
// Arguments.

function parseArgs(argv: readonly string[]): { images?: string[]; columns: number[]; strict: boolean } {
  let images: string[] | undefined;
  let columns = [80, 160];
  let strict = false;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    const [flag, inline] = a.includes('=') ? [a.slice(0, a.indexOf('=')), a.slice(a.indexOf('=') + 1)] : [a, undefined];
    const value = () => {
      const v = inline ?? argv[++i];
      if (v === undefined) throw new Error(`${flag} needs a value`);
      return v;
    };
    if (flag === '--images') images = value().split(',').map((s) => s.trim()).filter(Boolean);
    else if (flag === '--columns') {
      columns = value().split(',').map((s) => Number(s.trim()));
      if (columns.some((c) => !Number.isInteger(c) || c < 8 || c > 400)) throw new Error('--columns: integers from 8 to 400');
    } else if (flag === '--strict') strict = true;
    else if (flag === '--help' || flag === '-h') {
      console.log('usage: npm run bench:quality -- [--images camera,coffee] [--columns 80,160] [--strict]');
      process.exit(0);
    } else throw new Error(`unknown argument ${a}`);
  }
  return { images, columns, strict };
}

// ---------------------------------------------------------------------------------------------
// Rendering with each tool.

interface ToolRun {
  readonly lines: string[] | null;
  readonly problem: string | null;
  readonly ms: number;
  readonly command: string;
  readonly extra?: Record<string, unknown>;
}

const splitLines = (body: string) => {
  const lines = body.split('\n');
  if (lines.length && lines[lines.length - 1] === '') lines.pop();
  return lines;
};

function runV2a(img: BenchImage['rgba'], columns: number, rows: number): ToolRun {
  const t0 = performance.now();
  const result = render(img, { columns });
  const ms = performance.now() - t0;
  const body = formatResult(result, 'text').body;
  const problems: string[] = [];
  if (result.rows !== rows) problems.push(`render gave ${result.rows} rows, expected ${rows}`);
  const g = parseGrid(body, columns, result.rows);
  if (g.problem) problems.push(g.problem);
  return {
    lines: splitLines(body),
    problem: problems.length ? problems.join('; ') : null,
    ms,
    command: `render(rgba, { columns: ${columns} })`,
    extra: {
      codebook: result.codebook.glyphs,
      director: { status: result.director.status, score: result.director.score, adjustments: result.director.adjustments },
    },
  };
}

async function runTool(tool: Tool, image: BenchImage, columns: number, rows: number): Promise<ToolRun> {
  if (tool === 'v2a') return runV2a(image.rgba, columns, rows);
  const r = await runPeer(tool, image.file, columns, rows);
  return { lines: r.problem ? null : r.lines, problem: r.problem, ms: r.ms, command: r.command, extra: { escapesStripped: r.escapesStripped } };
}

// ---------------------------------------------------------------------------------------------
// Orientation check: a white square on black must come out as ink inside, blank outside.

interface Orientation { readonly ok: boolean; readonly detail: string }

async function checkOrientation(tool: Tool): Promise<Orientation> {
  const cols = 40, rows = 10; // the 320x160 pattern at 1:2 cells
  const parts: string[] = [];
  let ok = true;
  for (const [fg, bg] of [[255, 0], [0, 255]] as const) {
    const file = await squarePattern(fg, bg);
    let lines: string[] | null;
    if (tool === 'v2a') lines = splitLines(formatResult(render(await decodeRgba(file), { columns: cols }), 'text').body);
    else {
      const r = await runPeer(tool, file, cols, rows);
      lines = r.problem ? null : r.lines;
      if (r.problem) parts.push(`${fg ? 'white' : 'black'} square: ${r.problem}`);
    }
    if (!lines) {
      ok = false;
      continue;
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
    const right = fg > bg ? inside > outside + 0.1 : outside > inside + 0.1;
    ok &&= right;
    parts.push(`${fg ? 'white on black' : 'black on white'}: ink inside ${inside.toFixed(2)}, outside ${outside.toFixed(2)}`);
  }
  return { ok, detail: parts.join('; ') };
}

// ---------------------------------------------------------------------------------------------

interface ToolResult {
  readonly command: string;
  readonly ms: number;
  readonly problem: string | null;
  readonly scores: Scores | null;
  readonly extra?: Record<string, unknown>;
}
interface CaseResult {
  readonly image: string;
  readonly columns: number;
  readonly rows: number;
  readonly tools: Partial<Record<Tool, ToolResult>>;
  /** The SSIM floor: what a flat grey image (no information) scores on this case. */
  readonly flat: Readonly<Record<Scale['name'], number>>;
}

const toGrey8 = (data: Float32Array) => {
  const out = new Uint8Array(data.length);
  for (let i = 0; i < data.length; i++) out[i] = Math.max(0, Math.min(255, Math.round(data[i]! * 255)));
  return out;
};

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  const tStart = performance.now();
  const log = (s: string) => console.log(s);
  const progress = (s: string) => process.stderr.write(s + '\n');

  const programs = await ensurePeers(log);
  const tools = TOOLS.filter((t) => t === 'v2a' || programs.has(programOf(t)));
  const images = await loadBenchImages(args.images, log);
  if (!images.length) throw new Error('no images to run on');

  const orientation: Partial<Record<Tool, Orientation>> = {};
  for (const t of tools) {
    orientation[t] = await checkOrientation(t);
    log(`orientation ${t.padEnd(10)} ${orientation[t]!.ok ? 'ok   ' : 'WRONG'} (${orientation[t]!.detail})`);
  }

  let cell: { width: number; height: number } | null = null;
  const cases: CaseResult[] = [];
  for (const image of images) {
    const { width: w, height: h } = image.rgba;
    const luma = lumaPlane(image.rgba);
    for (const columns of args.columns) {
      const rows = Math.max(1, Math.round((columns * h * CELL_ASPECT) / w));
      const runs = new Map<Tool, ToolRun>();
      // v2a first (synchronous, in process), then the peers in parallel.
      runs.set('v2a', await runTool('v2a', image, columns, rows));
      const peerRuns = await Promise.all(tools.filter((t) => t !== 'v2a').map(async (t) => [t, await runTool(t, image, columns, rows)] as const));
      for (const [t, r] of peerRuns) runs.set(t, r);

      const inks = new Map<Tool, InkImage>();
      for (const [t, r] of runs) if (r.lines && !r.problem) inks.set(t, await rasterizeText(r.lines, CELL_HEIGHT));
      const any = inks.values().next().value as InkImage | undefined;
      if (!any) throw new Error(`${image.name} ${columns}: no tool produced a valid grid`);
      if (!cell) cell = { width: any.cellWidth, height: any.cellHeight };
      const ref = prepareReference(luma, columns, rows, cell.width, cell.height);

      const flatScores = scoreInk(plane(ref.plane.width, ref.plane.height, new Float32Array(ref.plane.data.length).fill(0.5)), ref);
      const result: CaseResult = { image: image.name, columns, rows, tools: {}, flat: flatScores.ssim };
      for (const [t, r] of runs) {
        const ink = inks.get(t);
        let scores: Scores | null = null;
        let problem = r.problem;
        if (ink) {
          if (ink.width !== ref.plane.width || ink.height !== ref.plane.height) problem = `ink image ${ink.width}x${ink.height}, expected ${ref.plane.width}x${ref.plane.height}`;
          else scores = scoreInk(inkPlane(ink), ref);
        }
        (result.tools as Record<Tool, ToolResult>)[t] = { command: r.command, ms: Math.round(r.ms * 10) / 10, problem, scores, extra: r.extra };
      }
      cases.push(result);
      progress(`${image.name} ${columns}x${rows}: ` + [...runs].map(([t, r]) => `${t} ${r.ms.toFixed(0)} ms${r.problem ? ` (${r.problem})` : ''}`).join(', '));

      if (columns === 80) {
        const panels: Panel[] = [{ label: 'reference', width: ref.plane.width, height: ref.plane.height, data: toGrey8(ref.plane.data) }];
        for (const t of PANEL_TOOLS) {
          const ink = inks.get(t);
          panels.push({ label: t, width: ref.plane.width, height: ref.plane.height, data: ink && ink.width === ref.plane.width && ink.height === ref.plane.height ? ink.data : null });
        }
        for (const p of panels as { label: string; labelInk?: InkImage }[]) p.labelInk = await rasterizeText([' ' + p.label], CELL_HEIGHT);
        await sideBySide(join(OUT_DIR, `${image.name}-80.png`), panels);
      }
    }
  }

  // -------------------------------------------------------------------------------------------
  // Tables.
  const ssimOf = (c: CaseResult, t: Tool, s: Scale['name']) => c.tools[t]?.scores?.ssim[s] ?? null;
  const toneOf = (c: CaseResult, t: Tool) => c.tools[t]?.scores?.toneR ?? null;
  const beats = (c: CaseResult, s: Scale['name'], peer: Tool) => {
    const v = ssimOf(c, 'v2a', s), p = ssimOf(c, peer, s);
    return v !== null && p !== null ? v > p : null;
  };

  console.log('');
  console.log(`Quality: SSIM after a global tone fit (near: blur sigma 0.5 cell height, far: 1.5 cell heights) and per-cell tone r; higher is better.`);
  console.log(`(flat grey) = the SSIM a flat image with no information scores: the floor of the scale.`);
  console.log(`Ink rasterized with ${referenceFont.family} (${referenceFont.packageId}) at ${cell!.width}x${cell!.height} px cells. * = v2a beats chafa.`);
  for (const image of images) {
    const cs = cases.filter((c) => c.image === image.name);
    const head = ['tool'];
    for (const c of cs) head.push(`${c.columns} near`, `${c.columns} far`, `${c.columns} tone r`);
    const rowsOut: string[][] = [head];
    for (const t of tools) {
      const row: string[] = [t];
      for (const c of cs) {
        const tr = c.tools[t];
        if (!tr?.scores) {
          row.push(tr?.problem ? 'FAIL' : '-', '-', '-');
          continue;
        }
        const mark = (ok: boolean | null) => (t === 'v2a' && ok ? '*' : ' ');
        const toneBeats = t === 'v2a' && toneOf(c, 'chafa') !== null ? tr.scores.toneR > toneOf(c, 'chafa')! : null;
        row.push(fix(tr.scores.ssim.near) + mark(beats(c, 'near', 'chafa')), fix(tr.scores.ssim.far) + mark(beats(c, 'far', 'chafa')), fix(tr.scores.toneR) + mark(toneBeats));
      }
      rowsOut.push(row);
    }
    rowsOut.push(['(flat grey)', ...cs.flatMap((c) => [fix(c.flat.near) + ' ', fix(c.flat.far) + ' ', '-'])]);
    console.log('');
    console.log(`${image.name} (${image.rgba.width}x${image.rgba.height}, ${image.origin}; rows: ${cs.map((c) => `${c.columns}x${c.rows}`).join(', ')})`);
    console.log(table(rowsOut));
    for (const c of cs) for (const t of tools) if (c.tools[t]?.problem) console.log(`  ${t} at ${c.columns} columns: ${c.tools[t]!.problem}`);
  }

  // -------------------------------------------------------------------------------------------
  // Summary.
  const comparisons: Record<string, { beats: number; of: number; losses: string[] }> = {};
  for (const peer of tools.filter((t) => t !== 'v2a')) {
    const cmp = { beats: 0, of: 0, losses: [] as string[] };
    for (const c of cases) {
      for (const s of SCALES) {
        const b = beats(c, s.name, peer);
        if (b === null) continue;
        cmp.of++;
        if (b) cmp.beats++;
        else cmp.losses.push(`${c.image} ${c.columns} ${s.name}: v2a ${fix(ssimOf(c, 'v2a', s.name))} vs ${peer} ${fix(ssimOf(c, peer, s.name))}`);
      }
    }
    comparisons[peer] = cmp;
  }
  const averages: Record<string, Record<string, number | null>> = {};
  const avgRows: string[][] = [['tool', ...args.columns.flatMap((c) => [`${c} near`, `${c} far`, `${c} tone r`]), 'all near', 'all far', 'all tone r']];
  const mean = (xs: (number | null)[]) => {
    const v = xs.filter((x): x is number => x !== null);
    return v.length ? v.reduce((a, b) => a + b, 0) / v.length : null;
  };
  for (const t of tools) {
    const avg: Record<string, number | null> = {};
    for (const col of [...args.columns.map(String), 'all']) {
      const cs = cases.filter((c) => col === 'all' || c.columns === Number(col));
      avg[`${col} near`] = mean(cs.map((c) => ssimOf(c, t, 'near')));
      avg[`${col} far`] = mean(cs.map((c) => ssimOf(c, t, 'far')));
      avg[`${col} tone r`] = mean(cs.map((c) => toneOf(c, t)));
    }
    averages[t] = avg;
    avgRows.push([t, ...avgRows[0]!.slice(1).map((k) => fix(avg[k]))]);
  }
  {
    const avg: Record<string, number | null> = {};
    for (const col of [...args.columns.map(String), 'all']) {
      const cs = cases.filter((c) => col === 'all' || c.columns === Number(col));
      avg[`${col} near`] = mean(cs.map((c) => c.flat.near));
      avg[`${col} far`] = mean(cs.map((c) => c.flat.far));
      avg[`${col} tone r`] = null;
    }
    averages['(flat grey)'] = avg;
    avgRows.push(['(flat grey)', ...avgRows[0]!.slice(1).map((k) => fix(avg[k]))]);
  }

  console.log('');
  console.log('Summary');
  console.log(table(avgRows));
  console.log('');
  const chafa = comparisons['chafa'];
  let targetMet = false;
  if (chafa) {
    console.log(`v2a beats chafa on ${chafa.beats} of ${chafa.of} (image, columns, scale) cases`);
    if (chafa.losses.length) console.log(`  loses on:\n    ${chafa.losses.join('\n    ')}`);
    const expected = cases.length * SCALES.length;
    targetMet = chafa.of === expected && chafa.beats === chafa.of;
  } else {
    console.log('v2a vs chafa: not measured (chafa unavailable)');
  }
  for (const [peer, cmp] of Object.entries(comparisons)) {
    if (peer === 'chafa') continue;
    console.log(`(for reference) v2a beats ${peer} on ${cmp.beats} of ${cmp.of} cases`);
  }
  const floorHits: Record<string, Record<Scale['name'], { below: number; of: number }>> = {};
  for (const t of tools) {
    const hits = { near: { below: 0, of: 0 }, far: { below: 0, of: 0 } };
    for (const c of cases) {
      for (const s of SCALES) {
        const v = ssimOf(c, t, s.name);
        if (v === null) continue;
        hits[s.name].of++;
        if (v <= c.flat[s.name]) hits[s.name].below++;
      }
    }
    floorHits[t] = hits;
  }
  console.log('at or below the flat-grey floor (cases): ' + tools.map((t) => `${t} near ${floorHits[t]!.near.below}/${floorHits[t]!.near.of}, far ${floorHits[t]!.far.below}/${floorHits[t]!.far.of}`).join('; '));
  const full = args.columns.includes(80) && args.columns.includes(160) && !args.images;
  console.log(`target (v2a beats chafa on every image at 80 and 160 columns, near and far): ${chafa ? (targetMet ? 'MET' : 'MISSED') : 'NOT MEASURED'}${full ? '' : ' (on the filtered run only)'}`);
  const seconds = (performance.now() - tStart) / 1000;
  console.log(`(${images.length} images x ${args.columns.length} column counts in ${seconds.toFixed(1)} s; JSON: bench/out/quality.json; side-by-side PNGs: bench/out/<image>-80.png)`);

  const file = writeJson('quality.json', {
    bench: 'quality',
    date: new Date().toISOString(),
    v2aVersion: VERSION,
    node: process.version,
    cpus: cpus().length,
    args,
    peers: Object.fromEntries([...programs].map((p) => [p, peerVersion(p)])),
    commands: Object.fromEntries(tools.filter((t) => t !== 'v2a').map((t) => {
      const c = peerCommand(t as PeerName, '{file}', '{columns}', '{rows}');
      return [t, [c.cmd, ...c.args].join(' ')];
    })),
    font: { family: referenceFont.family, package: referenceFont.packageId, cellWidth: cell!.width, cellHeight: cell!.height },
    metrics: {
      reference: 'sRGB-encoded Rec.709 luma (0..1), area-resized to the ink image size',
      scales: SCALES,
      ssim: { window: `${2 * SSIM_WINDOW_RADIUS + 1}x${2 * SSIM_WINDOW_RADIUS + 1} Gaussian, sigma ${SSIM_WINDOW_SIGMA}`, C1: SSIM_C1, C2: SSIM_C2, average: 'valid window positions', toneFit: 'global least squares a*R+b per image and scale' },
      toneR: 'Pearson r of per-cell mean ink vs per-cell mean reference luminance',
    },
    orientation,
    images: images.map((i) => ({ name: i.name, origin: i.origin, width: i.rgba.width, height: i.rgba.height })),
    cases,
    summary: { comparisons, averages, atOrBelowFlatFloor: floorHits, target: { description: 'v2a beats chafa on every image at 80 and 160 columns on both blur scales', met: targetMet, fullRun: full }, seconds },
  });
  progress(`wrote ${file}`);
  if (args.strict && !targetMet) {
    console.log('--strict: target missed, exit 1');
    process.exitCode = 1;
  }
}

main().catch((e: unknown) => {
  console.error(e instanceof Error ? e.stack ?? e.message : e);
  process.exit(2);
});
