/**
 * The studio's render worker: the very same renderer core as the server (src/core), run off the
 * page's main thread. Still images are decoded here (createImageBitmap without colour conversion
 * or premultiplication, so a PNG's RGBA equals sharp's decode of it), video frames arrive as
 * transferred ImageBitmaps and go through FrameRenderer (the temporal filter). The art is painted
 * into the page's canvas, transferred here as an OffscreenCanvas.
 */
import {
  FrameRenderer, buildCompact, formatResult, type Format, type RenderResult, type RgbaImage,
} from '../core/index.js';
// The untyped entry: parameters arrive from the page as plain objects and are validated inside.
import { render } from '../core/render.js';
import { ArtPainter, type PaintGrid } from './draw.js';
import type { ExplicitParams, FromWorker, RemoteGrid, ResultInfo, ToWorker, ViewSettings } from './protocol.js';
import { decodeWidth } from './decode-width.js';

interface WorkerScope {
  postMessage(message: FromWorker, transfer?: Transferable[]): void;
  addEventListener(type: 'message', listener: (event: MessageEvent<ToWorker>) => void): void;
}
const scope = globalThis as unknown as WorkerScope;

let painter: ArtPainter | null = null;
let params: ExplicitParams = {};
/** The still source: decoded at full size, plus the decode-width copies the server would make. */
let still: { full: ImageBitmap; sized: Map<number, RgbaImage> } | null = null;
let remote: RemoteGrid | null = null;
let streaming = false;
let frames: FrameRenderer | null = null;
let lastFrame: RgbaImage | null = null;
let previousCells: Uint16Array | null = null;
let last: { grid: PaintGrid; color: boolean; monoColor: string } | null = null;
let lastResult: RenderResult | null = null;
let wants = { compact: false, compactLine: false };
let temporal = true;

const post = (m: FromWorker, transfer?: Transferable[]) => scope.postMessage(m, transfer);

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** RGBA of a bitmap, `width` x `height` (smaller than the bitmap: resampled by the browser). */
async function pixels(bitmap: ImageBitmap, width = bitmap.width, height = bitmap.height): Promise<RgbaImage> {
  let source: ImageBitmap = bitmap;
  if (width !== bitmap.width || height !== bitmap.height) {
    source = await createImageBitmap(bitmap, { resizeWidth: width, resizeHeight: height, resizeQuality: 'high' });
  }
  const canvas = new OffscreenCanvas(width, height);
  const ctx = canvas.getContext('2d', { willReadFrequently: true })!;
  ctx.drawImage(source, 0, 0);
  if (source !== bitmap) source.close();
  const data = ctx.getImageData(0, 0, width, height).data;
  return { width, height, data };
}

let frameCanvas: OffscreenCanvasRenderingContext2D | null = null;
function framePixels(bitmap: ImageBitmap): RgbaImage {
  const { width, height } = bitmap;
  if (!frameCanvas || frameCanvas.canvas.width !== width || frameCanvas.canvas.height !== height) {
    frameCanvas = new OffscreenCanvas(width, height).getContext('2d', { willReadFrequently: true })!;
  }
  frameCanvas.drawImage(bitmap, 0, 0);
  bitmap.close();
  return { width, height, data: frameCanvas.getImageData(0, 0, width, height).data };
}

/** The still at the width the server decodes it for these columns (see decode-width.ts). */
async function stillImage(columns: number): Promise<RgbaImage> {
  const s = still!;
  const { width, height } = decodeWidth(s.full.width, s.full.height, columns);
  let img = s.sized.get(width);
  if (!img) {
    img = await pixels(s.full, width, height);
    if (s.sized.size >= 3) s.sized.delete(s.sized.keys().next().value!);
    s.sized.set(width, img);
  }
  return img;
}

function columnsOf(p: ExplicitParams): number {
  return typeof p.columns === 'number' ? p.columns : 120;
}

function paint(): number {
  if (!painter || !last) return 0;
  const t0 = performance.now();
  painter.paint(last.grid, last.color, last.monoColor);
  return performance.now() - t0;
}

function info(result: RenderResult, kind: ResultInfo['kind'], renderMs: number, drawMs: number, flicker: number | null): ResultInfo {
  return {
    kind,
    columns: result.columns,
    rows: result.rows,
    source: result.source,
    params: result.params,
    explicit: result.explicit,
    director: result.director,
    codebook: result.codebook,
    renderMs,
    drawMs,
    flicker,
  };
}

let stillJob = 0;
async function renderStill(): Promise<void> {
  if (!still) return;
  const job = ++stillJob;
  try {
    const image = await stillImage(columnsOf(params));
    if (job !== stillJob) return;
    const t0 = performance.now();
    const result = render(image, params);
    const renderMs = performance.now() - t0;
    lastResult = result;
    last = { grid: result, color: result.params.color, monoColor: result.params.monoColor };
    const drawMs = paint();
    post({ t: 'result', result: info(result, 'still', renderMs, drawMs, null) });
  } catch (err) {
    post({ t: 'error', during: 'render', message: errorText(err) });
  }
}

function renderFrame(bitmap: ImageBitmap): void {
  try {
    const image = framePixels(bitmap);
    lastFrame = image;
    const t0 = performance.now();
    let result: RenderResult;
    if (temporal) {
      frames ??= new FrameRenderer(params);
      result = frames.render(image);
    } else {
      result = render(image, params);
    }
    const renderMs = performance.now() - t0;
    let flicker: number | null = null;
    if (previousCells && previousCells.length === result.cells.length) {
      let changed = 0;
      for (let i = 0; i < result.cells.length; i++) if (result.cells[i] !== previousCells[i]) changed++;
      flicker = changed / result.cells.length;
    }
    previousCells = result.cells;
    lastResult = result;
    last = { grid: result, color: result.params.color, monoColor: result.params.monoColor };
    const drawMs = paint();
    const out: ResultInfo = {
      ...info(result, 'frame', renderMs, drawMs, flicker),
      ...(wants.compact ? { compact: buildCompact(result) } : {}),
      ...(wants.compactLine ? { compactLine: formatResult(result, 'json-compact').body } : {}),
    };
    post({ t: 'result', result: out });
  } catch (err) {
    post({ t: 'error', during: 'frame', message: errorText(err) });
  }
}

/** A server-rendered grid as a PaintGrid (glyph table from the distinct characters). */
function remoteGrid(g: RemoteGrid): PaintGrid {
  const glyphs: string[] = [];
  const index = new Map<string, number>();
  const cells = new Uint16Array(g.columns * g.rows);
  const colors = new Uint8Array(g.columns * g.rows * 3);
  g.lines.forEach((line, y) => {
    let x = 0;
    for (const ch of line) {
      let k = index.get(ch);
      if (k === undefined) {
        k = glyphs.length;
        glyphs.push(ch);
        index.set(ch, k);
      }
      cells[y * g.columns + x] = k;
      const hex = g.colors?.[y]?.[x];
      if (hex) {
        const v = parseInt(hex.slice(1), 16);
        colors.set([(v >>> 16) & 255, (v >>> 8) & 255, v & 255], (y * g.columns + x) * 3);
      }
      x++;
    }
  });
  return { columns: g.columns, rows: g.rows, glyphs, cells, colors };
}

async function exportFormat(id: number, format: Format): Promise<void> {
  try {
    let result: RenderResult;
    // `format` last, as the studio's API equivalent (and the tests' API call) sends it.
    const { format: _, ...rest } = params;
    const withFormat = { ...rest, format };
    if (still && !streaming) result = render(await stillImage(columnsOf(params)), withFormat);
    else if (lastResult) result = { ...lastResult, params: { ...lastResult.params, format } };
    else throw new Error('nothing to export yet: open an image, the webcam or a video');
    const out = formatResult(result, format);
    post({ t: 'export', id, format, body: out.body, extension: out.extension, contentType: out.contentType });
  } catch (err) {
    post({ t: 'error', id, during: 'export', message: errorText(err) });
  }
}

function setView(view: ViewSettings): void {
  painter?.setView(view.cell, view.ground);
}

scope.addEventListener('message', (event) => {
  const m = event.data;
  switch (m.t) {
    case 'canvas':
      painter = new ArtPainter(m.canvas);
      setView(m.view);
      break;
    case 'view':
      setView(m.view);
      paint();
      break;
    case 'params':
      params = m.params;
      if (streaming) frames = null;
      else if (still) void renderStill();
      break;
    case 'image':
      void (async () => {
        try {
          const full = await createImageBitmap(m.blob, { colorSpaceConversion: 'none', premultiplyAlpha: 'none', imageOrientation: 'from-image' });
          params = m.params;
          still?.full.close();
          still = { full, sized: new Map() };
          remote = null;
          streaming = false;
          frames = null;
          post({ t: 'loaded', id: m.id, width: full.width, height: full.height });
          await renderStill();
        } catch (err) {
          post({ t: 'error', id: m.id, during: 'image', message: `This file could not be decoded as an image (${errorText(err)}).` });
        }
      })();
      break;
    case 'stream':
      streaming = m.on;
      frames = null;
      previousCells = null;
      if (m.on) remote = null;
      break;
    case 'temporal':
      temporal = m.on;
      frames = null;
      break;
    case 'frame':
      if (streaming) renderFrame(m.bitmap);
      else m.bitmap.close();
      break;
    case 'snapshot':
      if (lastFrame) {
        const f = lastFrame;
        streaming = false;
        frames = null;
        void createImageBitmap(new ImageData(new Uint8ClampedArray(f.data), f.width, f.height)).then((full) => {
          still = { full, sized: new Map() };
          return renderStill();
        });
      }
      break;
    case 'remote': {
      remote = m.grid;
      still = null;
      streaming = false;
      const g = remoteGrid(m.grid);
      last = { grid: g, color: m.grid.params.color, monoColor: m.grid.params.monoColor };
      const drawMs = paint();
      post({ t: 'result', result: { kind: 'remote', columns: g.columns, rows: g.rows, source: m.grid.source, params: m.grid.params, explicit: m.grid.explicit, director: m.grid.director, codebook: m.grid.codebook, renderMs: 0, drawMs, flicker: null } });
      break;
    }
    case 'export':
      void exportFormat(m.id, m.format);
      break;
    case 'wants':
      wants = { compact: m.compact, compactLine: m.compactLine };
      break;
  }
});
