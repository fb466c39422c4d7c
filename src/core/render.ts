import { DIRECTIONAL_CHARS, glyphSetOf, glyphShape, glyphTextures } from './glyphs/charsets.js';
import { SAMPLES, SUB_X, SUB_Y, type GlyphSet } from './glyphs/types.js';
import type { RenderParams } from './params/definitions.js';
import { FORMAT_INFO } from './format/info.js';
import { isBlankGlyph } from './format/grid.js';
import { parseParamsOrThrow, withDefaults } from './params/validate.js';
import { matchBraille } from './pipeline/braille.js';
import { chooseCodebook, entropyBits } from './pipeline/codebook.js';
import { cellColors, colorTransform } from './pipeline/colors.js';
import { complements, matchBrailleTwoColor, matchTwoColor, usesTwoColors, type TwoColorGlyphs } from './pipeline/two-color.js';
import { alphaCells, CLEAR, OPAQUE, opaqueShape } from './pipeline/clear-cells.js';
import { detailInFrame } from './pipeline/detail.js';
import { gridRows, sourceSize } from './pipeline/geometry.js';
import { encLut } from './pipeline/linear.js';
import { matchInFrame, type GlyphTable } from './pipeline/match.js';
import { cellMeansInFrame, invertInFrame } from './pipeline/raster.js';
import { sobelInFrame } from './pipeline/edges.js';
import type { Raster } from './pipeline/raster.js';
import { FINE_MIN_SPREAD, FINE_SHAPE_SPAN, fineTable, type FineTable } from './pipeline/refine.js';
import { resampleImage, type Resampled } from './pipeline/resample.js';
import { scratch } from './pipeline/scratch.js';
import { warmUpScene } from './warm-up-scene.js';
import { viewBlurTemplates } from './pipeline/view-blur.js';
import { stretch, toneLut, type ToneSettings } from './pipeline/tone.js';
import { direct, readsColors, scoreResult } from './director/director.js';
import type { TemporalFilter } from './temporal/filter.js';
import { checkObject, checkOptions, describeType } from './args.js';
import { lazyProperty } from './lazy.js';
import { frame } from './wasm/kernels.js';
import { VERSION, type DirectorReport, type RenderResult, type RgbaImage } from './types.js';

/** RenderOptions' names: a misspelt one (`temporall`) is refused, not ignored. */
const RENDER_OPTIONS: ReadonlySet<string> = new Set<keyof RenderOptions>(['temporal', 'previous', 'codebook', 'tuned']);

export interface RenderOptions {
  /** Video: the filter that carries state between frames (see FrameRenderer). */
  readonly temporal?: TemporalFilter;
  /** Video: the previous frame's cells, for glyph hysteresis. */
  readonly previous?: Uint16Array;
  /** Video: reuse this codebook (glyph indices) instead of choosing one per frame. */
  readonly codebook?: Int32Array;
  /** Video: parameters already tuned by the Director on an earlier frame. */
  readonly tuned?: { readonly params: RenderParams; readonly report: DirectorReport };
}

/** A glyph set plus the directional glyphs the ASCII ramps gain for `structure` and `edges`. */
interface Table extends GlyphTable {
  readonly set: GlyphSet;
  readonly glyphs: readonly string[];
  readonly directional: Int32Array | null;
  /** Ink of the densest glyph of the ramp: a fully on target. */
  readonly scale: number;
  /** Ramp glyph indices sorted by coverage (the directional extras are not part of the ramp). */
  readonly order: Int32Array;
  /** The glyphs' fine shapes (pipeline/refine.ts), made on first use. */
  fine?: FineTable;
  /** The glyphs' texture up close (charsets.ts glyphTextures), looked up on first use. */
  texture?: Float32Array;
}

/** Keyed by GlyphSet.key; bounded, since custom ramps (`glyphs`) are arbitrary. */
const tables = new Map<string, Table>();
const MAX_TABLES = 48;

function glyphTable(set: GlyphSet): Table {
  const hit = tables.get(set.key);
  if (hit) return hit;
  const glyphs = [...set.glyphs];
  let templates = set.templates;
  let coverage = set.coverage;
  let directional: Int32Array | null = null;
  // A custom ramp keeps to its own glyphs: the directional ones only when it has all four.
  const custom = set.key !== set.name;
  const allDirectional = Object.values(DIRECTIONAL_CHARS).every((ch) => glyphs.includes(ch));
  if (set.kind === 'ramp' && (!custom || allDirectional)) {
    const extra: string[] = [];
    directional = new Int32Array(4);
    // DIR_* order of pipeline/structure.ts: - / | \
    [DIRECTIONAL_CHARS.horizontal, DIRECTIONAL_CHARS.diagonalUp, DIRECTIONAL_CHARS.vertical, DIRECTIONAL_CHARS.diagonalDown].forEach((ch, d) => {
      let i = glyphs.indexOf(ch);
      if (i < 0) {
        i = glyphs.length + extra.length;
        extra.push(ch);
      }
      directional![d] = i;
    });
    if (extra.length) {
      templates = new Float32Array((glyphs.length + extra.length) * SAMPLES);
      templates.set(set.templates);
      coverage = new Float32Array(glyphs.length + extra.length);
      coverage.set(set.coverage);
      extra.forEach((ch, k) => {
        const shape = glyphShape(ch);
        if (!shape) throw new Error(`no measured shape for ${ch}`);
        templates.set(shape.template, (glyphs.length + k) * SAMPLES);
        coverage[glyphs.length + k] = shape.coverage;
      });
      glyphs.push(...extra);
    }
  }
  const order = Int32Array.from(set.glyphs.map((_, i) => i)).sort((a, b) => set.coverage[a]! - set.coverage[b]! || a - b);
  let scale = 0;
  for (let i = 0; i < set.coverage.length; i++) scale = Math.max(scale, set.coverage[i]!);
  const table: Table = { set, glyphs, templates: viewBlurTemplates(templates), coverage, directional, scale, order };
  if (tables.size >= MAX_TABLES) tables.delete(tables.keys().next().value!);
  tables.set(set.key, table);
  return table;
}

/** Per table (a custom ramp under a charset's name is a table of its own): freed with it. */
const twoColorSets = new WeakMap<Table, TwoColorGlyphs>();

/** The glyphs a two-colour cell may take: every shaped glyph of the set, with complements. */
function twoColorGlyphs(table: Table): TwoColorGlyphs {
  const hit = twoColorSets.get(table);
  if (hit) return hit;
  const { glyphs, templates } = table.set;
  const blank = glyphs.indexOf(' ');
  const fullAt = glyphs.indexOf('\u2588');
  const candidates = Int32Array.from(glyphs.map((_, i) => i).filter((i) => i !== blank && i !== fullAt));
  const set: TwoColorGlyphs = {
    templates, candidates, complement: complements(templates, candidates, glyphs.length),
    blank: Math.max(0, blank), full: fullAt >= 0 ? fullAt : Math.max(0, blank),
  };
  twoColorSets.set(table, set);
  return set;
}

/** Everything the pipeline derives from the source before any tunable parameter applies. */
export interface Prepared {
  /** The source pixels (colour below cell resolution is read from them only when needed). */
  readonly image: RgbaImage;
  readonly columns: number;
  readonly rows: number;
  readonly resampled: Resampled;
  /** Mean perceptual luminance of each cell (of `resampled.luma`). */
  readonly cellLuma: Float32Array;
}

/**
 * A library caller's image must be what it says: whole pixels, 4 bytes each. The kernels read
 * width x height x 4 bytes whatever `data` holds, so a short buffer rendered garbage.
 */
export function checkPixels(image: RgbaImage): void {
  checkObject(image, 'render: image');
  const { width, height, data } = image;
  if (!(data instanceof Uint8Array || data instanceof Uint8ClampedArray)) {
    throw new TypeError('render: image.data must be a Uint8Array or Uint8ClampedArray of RGBA bytes');
  }
  for (const [name, v] of [['width', width], ['height', height]] as const) {
    if (typeof v !== 'number') throw new TypeError(`render: image.${name} must be a number (got ${describeType(v)})`);
    // 0 x 10 with no bytes, or -1 x -4 with 16, passed the length check below.
    if (!Number.isSafeInteger(v) || v < 1) throw new RangeError(`render: image.${name} must be a positive integer (got ${v})`);
  }
  if (data.length !== width * height * 4) {
    throw new RangeError(`render: image.data has ${data.length} bytes; a ${width} x ${height} RGBA image has ${width * height * 4}`);
  }
  const { sourceWidth: sw, sourceHeight: sh } = image;
  if ((sw !== undefined || sh !== undefined) && !(Number.isSafeInteger(sw) && Number.isSafeInteger(sh) && sw! > 0 && sh! > 0)) {
    const show = (v: unknown) => (typeof v === 'number' ? String(v) : describeType(v));
    throw new RangeError(`render: image sourceWidth and sourceHeight must be positive integers, both or neither (got ${show(sw)} x ${show(sh)})`);
  }
  if (image.opaque !== undefined && typeof image.opaque !== 'boolean') throw new TypeError(`render: image.opaque must be a boolean (got ${describeType(image.opaque)})`);
}

/**
 * Resamples the source. Its luminance stays in kernel memory until the next prepare() on this
 * thread: `resampled.luma.data` is copied out on first read, which must come before that
 * (`luma: 'copied'`: at once, into scratch memory valid until the next prepare()).
 * `colors: 'later'`: the cells' RGB is resampled from `image` only if something reads it (the
 * Director's colourfulness or round-trip metric, colour art, json's chroma), so `image`'s pixels
 * must not change until then (a read that finds them changed throws: resample.ts).
 */
export function prepare(image: RgbaImage, columns: number, invert: boolean, cellAspect?: number, colors: 'now' | 'later' = 'now', luma: 'kept' | 'copied' = 'kept'): Prepared {
  checkPixels(image);
  const source = sourceSize(image);
  const rows = gridRows(source.width, source.height, columns, cellAspect);
  const cellLuma = new Float32Array(columns * rows);
  return { image, columns, rows, resampled: resampleImage(image, columns, rows, SUB_X, SUB_Y, invert ? 1 : 0, cellLuma, colors, luma), cellLuma };
}

/**
 * When a render resamples its cells' RGB (prepare()'s `colors`): at once, with the luminance,
 * where the Director reads it (colour art, the round-trip rubric: director.ts readsColors()) or
 * the format carries it (json, json-compact); other mono art only if something asks for its
 * colours (the report's colourfulness, `colors`), so it is left until then. Skipping it saves
 * about 8 % of a mono render (640 x 480 at 160 columns, warm: 5.21-5.33 -> 4.81-4.86 ms);
 * resampled apart later it costs a second pass over the image, so a caller that will read the
 * whole report (`readsReport`: the MCP reply's structured content) has them resampled at once too.
 */
export function colorsWhen(p: RenderParams, readsReport = false): 'now' | 'later' {
  return readsColors(p) || FORMAT_INFO[p.format].colors || readsReport ? 'now' : 'later';
}

/** The render's tone settings, from the auto-levels percentiles of the detail stage's histogram. */
function toneSettings(p: RenderParams, pLo: number, pHi: number): ToneSettings {
  const { lo, hi } = stretch(pLo, pHi, p.autoLevels);
  return { lo, hi, contrast: p.contrast, brightness: p.brightness, gamma: p.gamma, invert: false };
}

/**
 * Renders an image into a cell grid. `params` are validated (JSON types; unknown names and
 * out-of-range values throw ParamValidationError — nothing is clamped). Parameters the caller did
 * not set may be tuned by the Auto Director (autoOptimize > 0).
 * Mono art's colours (`colors`, json's chroma, the report's colourfulness and round-trip metric)
 * are computed from the image's pixels when first read unless its format carries them or its
 * rubric reads them (colorsWhen()): keep the pixels as they are until then, or read those first.
 * A read that finds them changed throws V2aError `image-changed`. Until that read the result
 * holds the image's whole pixel buffer (reading `colors` once lets it go).
 */
export function render(image: RgbaImage, params: Readonly<Record<string, unknown>> = {}, options: RenderOptions = {}): RenderResult {
  checkOptions(options, RENDER_OPTIONS, 'render');
  // The video options are the library's own objects (a TemporalFilter, a tune() result): another
  // value would fail deep inside ("t.step is not a function").
  if (options.temporal !== undefined && typeof (options.temporal as { step?: unknown } | null)?.step !== 'function') {
    throw new TypeError('render: options.temporal must be a TemporalFilter');
  }
  const tuned = options.tuned === undefined ? undefined : checkTuning(options.tuned);
  const explicit = parseParamsOrThrow(params, 'json');
  const requested = requestedParams(explicit);
  const prep = prepare(image, requested.columns, requested.invert, requested.cellAspect, colorsWhen(requested));
  return renderPrepared(prep, requested, Object.keys(explicit), image, tuned ? { ...options, tuned } : options);
}

/**
 * A caller's `options.tuned` (an earlier result's `params` and `director`), checked as a caller's
 * parameters are: NaN reached the kernels (a memory fault), -100 was used as the contrast, and a
 * report without its parts failed deep inside. Parameters it leaves out take their defaults.
 */
function checkTuning(tuned: unknown): { params: RenderParams; report: DirectorReport } {
  const what = 'render: options.tuned';
  checkObject(tuned, `${what} (a tuning result: an earlier result's { params, report: director })`);
  checkObject(tuned.params, `${what}.params`);
  const report = tuned.report;
  checkObject(report, `${what}.report`);
  for (const part of ['metrics', 'source', 'adjustments'] as const) checkObject(report[part], `${what}.report.${part}`);
  for (const n of ['score', 'threshold', 'strength'] as const) {
    if (typeof report[n] !== 'number') throw new TypeError(`${what}.report.${n} must be a number (got ${describeType(report[n])})`);
  }
  return { params: withDefaults(parseParamsOrThrow(tuned.params, 'json')), report: report as unknown as DirectorReport };
}

/**
 * The parameters a render uses: the caller's, defaults for the rest, and for art whose output is
 * plain text, which shows no colour (interface.md: `color` is ignored by plain text), the glyphs
 * one-colour art chooses (cellColors fg: the text of color=false). Chosen for an ink and a
 * background colour (fg-bg, auto's choice for blocks and dots), they read as noise without them:
 * a clean ░▒▓█ ramp became a mush of eighth blocks. The colours are still computed (a face may
 * show them: the MCP reply's image), and the result's params report what was used.
 * `formatIsOutput`: whether the format is known to be the output's. By default only a format the
 * caller named: render()'s result may be formatted in any (the README's ansi example). The
 * render job's always is.
 */
export function requestedParams(explicit: Partial<RenderParams>, formatIsOutput = explicit.format !== undefined): RenderParams {
  const p = withDefaults(explicit);
  return formatIsOutput && p.format === 'text' && p.color && p.cellColors !== 'fg' ? { ...p, cellColors: 'fg' } : p;
}

/**
 * Readies a cold process (a CLI call, a fresh worker) for a render with these parameters, in time
 * it would spend waiting: a job calls this while its image decodes on another thread
 * (DecodeRequest.whileDecoding).
 * - The first time in a process: a render of a tiny built-in image with these parameters. It
 *   builds the tables every render needs (the WebAssembly kernels, the sRGB encoding table, the
 *   charset's glyph table and its fine shapes) and compiles the JavaScript of every stage and the
 *   kernels, which are compiled lazily, on first use: a first 640x480 render then takes ~30 ms
 *   instead of ~40, for 8-12 ms here.
 * - Later: the tables of these parameters (another charset's glyph table and fine shapes).
 * Measured in Node 20 on 2 cores, CLI medians of 25 interleaved runs: 0.3 MP JPEG at 80 columns
 * 194 -> 185 ms; 12 MP at 120 columns 240 -> 226 ms (21 runs, with the priming render as a second
 * step after the tables; one call measured the same, 232 vs 233 ms). A render's output does not
 * depend on any of it (caches are keyed by their inputs). Never throws: what fails here fails
 * again, and is reported, in the render.
 */
export function warmUp(params: RenderParams): void {
  try {
    if (primed) {
      encLut();
      const table = glyphTable(glyphSetOf(params));
      if (table.set.kind === 'ramp') table.fine ??= fineTable(table.glyphs);
      return;
    }
    primed = true;
    const p = { ...params, columns: PRIMER_COLUMNS };
    const image = warmUpScene(32, 24);
    renderPrepared(prepare(image, PRIMER_COLUMNS, p.invert, p.cellAspect, colorsWhen(p)), p, [], image);
  } catch {
    /* reported by the render */
  }
}

let primed = false;
const PRIMER_COLUMNS = 8;

/** The Auto Director's tuning of the parameters the caller did not set (`explicit`), for this source. */
export function tune(prep: Prepared, requested: RenderParams, explicit: readonly string[]): { params: RenderParams; report: DirectorReport } {
  const table = glyphTable(glyphSetOf(requested));
  return direct(prep, requested, explicit, { coverage: table.set.coverage, texture: table.texture ??= glyphTextures(table.glyphs), scale: table.scale, order: table.order });
}

export function renderPrepared(prep: Prepared, requested: RenderParams, explicit: readonly string[], image: { width: number; height: number }, options: RenderOptions = {}): RenderResult {
  const source = sourceStage(prep, requested, explicit, options);
  return glyphStage(prep, source, explicit, image, {
    previous: options.previous,
    codebook: options.codebook,
    keptTuning: options.tuned !== undefined,
  });
}

/**
 * What the source stage of a render hands to the glyph stage: the tuning and the luminance to
 * draw (temporally filtered for video). Typed arrays and plain objects only, so a video frame's
 * stages can run on two threads (FrameFront, FrameBack in video.ts); the arrays are the
 * resampler's scratch or the filter's own (copy them before handing them to another thread).
 */
export interface TunedSource {
  /** The parameters after the Auto Director, and its report. */
  readonly params: RenderParams;
  readonly report: DirectorReport;
  /** Perceptual luminance, width x height samples (SUB_X x SUB_Y per cell). */
  readonly luma: Float32Array;
  /**
   * A still: the resampled raster `luma` is (its data copied out of kernel memory only when read:
   * the detail stage reads it there, pipeline/resample.ts); null for video.
   */
  readonly source: Raster | null;
  readonly width: number;
  readonly height: number;
  /** A video frame: `luma` is the temporal filter's estimate. */
  readonly video: boolean;
  /** Video: the filter's per-cell stability (glyph hysteresis is allowed on 1), else null. */
  readonly stable: Uint8Array | null;
}

/** The first stage of renderPrepared(): the Auto Director (unless `options.tuned`), then for video the temporal filter. */
export function sourceStage(prep: Prepared, requested: RenderParams, explicit: readonly string[], options: Pick<RenderOptions, 'temporal' | 'tuned'> = {}): TunedSource {
  const tuned = options.tuned ?? tune(prep, requested, explicit);
  const p = tuned.params;
  const luma = prep.resampled.luma;
  // Video: the temporal filter sees the resampled luminance, where sensor noise is the same
  // everywhere; after the tone curve (gamma, levels) it would be stretched unevenly across
  // tones, which the filter's single noise estimate cannot follow. Levels then see a steady frame.
  const t = options.temporal;
  if (t) {
    return {
      params: p, report: tuned.report,
      luma: t.step(luma.data, p.motionSensitivity, prep.columns),
      width: luma.width, height: luma.height,
      video: true, stable: t.cellStable, source: null,
    };
  }
  // A still's luminance is read where the resampler keeps it (glyphStage, through `source`): not
  // copied out unless something reads `luma`.
  return {
    params: p, report: tuned.report,
    get luma() { return luma.data; },
    width: luma.width, height: luma.height,
    video: false, stable: null, source: luma,
  };
}

/** What the glyph stage reads of the prepared source (a Prepared has it all). */
export interface GlyphSource {
  /** The source pixels: two-colour art resamples its colours below cell resolution from them. */
  readonly image: RgbaImage;
  readonly columns: number;
  readonly rows: number;
  readonly cellLuma: Float32Array;
  readonly resampled: { readonly cellLinearRgb: Float32Array };
}

export interface GlyphStageOptions {
  /** Video: the previous frame's cells, for glyph hysteresis. */
  readonly previous?: Uint16Array;
  /** Video: reuse this codebook (glyph indices) instead of choosing one. */
  readonly codebook?: Int32Array;
  /** The tuning was kept from an earlier frame (a video frame then scores its report when read). */
  readonly keptTuning?: boolean;
}

/**
 * The second stage of renderPrepared(): denoise, tone and sharpening of `tuned`'s luminance, the
 * glyphs (and colours) of the cells, and the result.
 */
export function glyphStage(prep: GlyphSource, tuned: TunedSource, explicit: readonly string[], image: { width: number; height: number }, options: GlyphStageOptions = {}): RenderResult {
  const p = tuned.params;
  const table = glyphTable(glyphSetOf(p));
  const { columns: cols, rows } = prep;
  const { width: W, height: H } = tuned;
  const n = W * H;
  const twoColor = usesTwoColors(p);
  // The fine stage (pipeline/refine.ts): a still image's ramp glyphs are chosen again on the
  // 8 x 16 raster (the ASCII ramps, which bench:quality measured it on; not dithering or video,
  // whose error diffusion and hysteresis work on the 4 x 8 choice: see MatchOptions.refine), the
  // cells with structure (FINE_MIN_SPREAD) or, with fineShapes, every cell, from a codebook whose
  // levels each bring the glyphs up to FINE_SHAPE_SPAN above them.
  const fine = table.set.kind === 'ramp' && !p.dither && !tuned.video && !options.previous && !twoColor;
  // The detail stage, the target ink, its cell means and the match in one kernel frame: the
  // rasters never copied out (about 0.1 ms of copies a warm render, and 2.4 MB of memory a first
  // render touched). The tables whose first computation opens a frame of its own are made before
  // it; Braille and two-colour matching open their own frames once the codebook is chosen.
  if (fine) table.fine ??= fineTable(table.glyphs);
  const f = frame();
  // Detail: denoise first (noise must not be sharpened), then recover detail.
  // The denoise, histogram(), the tone table from it, the unsharp mask (pipeline/detail.ts).
  let tone!: ToneSettings;
  let { result: pt, spare: pfree } = detailInFrame(f, tuned.source ?? { width: W, height: H, data: tuned.luma }, p.denoise, p.sharpen, (pLo, pHi) => toneLut((tone = toneSettings(p, pLo, pHi))));
  // Target ink per sample: tone, or Sobel line art; `invert` flips which end is ink (in place:
  // the structure tensor below is the same for v and 1 - v).
  if (p.edges) {
    sobelInFrame(f, pt, W, H, p.edgeStrength, pfree);
    [pt, pfree] = [pfree, pt];
  }
  if (p.invert) invertInFrame(f, pt, n);
  const targetMeans = cellMeansInFrame(f, pt, W, cols, rows, SUB_X, SUB_Y, new Float32Array(cols * rows));

  const cells = new Uint16Array(cols * rows);
  const levelsOf = new Float32Array(table.set.coverage.length);
  for (let g = 0; g < levelsOf.length; g++) levelsOf[g] = table.set.coverage[g]! / table.scale;
  checkVideoOptions(options, levelsOf.length, cols * rows);
  // Two colours per cell draw shape, not tone: every glyph of the set stays available.
  const book = options.codebook
    ? { indices: options.codebook, rmse: chooseCodebook(levelsOf, options.codebook, targetMeans, 'fixed', 1).rmse }
    : chooseCodebook(levelsOf, table.order, targetMeans, table.set.kind === 'braille' || twoColor ? 'fixed' : p.glyphStrategy, p.maxGlyphRmse, fine ? FINE_SHAPE_SPAN : 0);
  const stable = tuned.stable;

  let colors: Uint8Array | null = null;
  /** Set instead of `colors` where they are computed on first read. */
  let deferredColors: (() => Uint8Array) | null = null;
  let background: Uint8Array | undefined;
  let clear: Uint8Array | null = null;
  if (twoColor) {
    const nc = cols * rows;
    const rgb = { image: prep.image, ground: p.invert ? 1 : 0 };
    const fgLin = new Float32Array(nc * 3), bgLin = new Float32Array(nc * 3);
    // Video: glyph hysteresis on still cells (Braille's 8-value split is the touchier one: a
    // wider margin, and dots split on the temporally filtered luminance).
    const prev = options.previous ?? null;
    if (table.set.kind === 'braille') {
      matchBrailleTwoColor(rgb, cols * SUB_X, cols, rows, table.set.templates, !p.invert, cells, fgLin, bgLin, prev, stable, prev ? 0.6 : 0, tuned.video ? tuned.luma : null);
    } else {
      matchTwoColor(rgb, cols * SUB_X, cols, rows, twoColorGlyphs(table), !p.invert, cells, fgLin, bgLin, prev, stable, prev ? 0.35 : 0);
    }
    // Where the source is transparent the cell shows the viewer's ground, not the one alpha was
    // composited over (a black box around a logo on a light terminal): marked clear, a cell
    // transparent throughout blank, one partly so the glyph of its opaque part's shape and colour.
    // The background plane of a clear cell holds that ground: json-compact, which carries no
    // clear flags, then decodes its glyph and ink over what the source was composited on.
    const alpha = alphaCells(prep.image, cols, rows);
    const blankAt = table.glyphs.findIndex(isBlankGlyph);
    if (alpha && blankAt >= 0) {
      const sums = new Float64Array(4 * SAMPLES);
      clear = new Uint8Array(nc);
      for (let i = 0; i < nc; i++) {
        if (alpha[i] === OPAQUE) continue;
        const g = alpha[i] === CLEAR ? blankAt : opaqueShape(prep.image, cols, rows, i, table.set.templates, table.set.kind === 'braille', fgLin, sums);
        if (g < 0) continue;
        cells[i] = g;
        clear[i] = 1;
      }
      if (!clear.includes(1)) clear = null;
    }
    const t = colorTransform(p.saturation, tone);
    colors = cellColors(fgLin, t, new Uint8Array(nc * 3));
    background = cellColors(bgLin, t, new Uint8Array(nc * 3));
    if (clear) {
      const ground = p.invert ? 255 : 0;
      for (let i = 0; i < nc; i++) if (clear[i]) background.fill(ground, i * 3, i * 3 + 3);
    }
  } else {
    if (table.set.kind === 'braille') {
      // Its own frame: the target copied out of this one first.
      const target = scratch('render.target', n);
      target.set(f.viewF32(pt, n));
      matchBraille(target, W, cols, rows, p.dither, cells, options.previous, stable, options.previous ? 1 : 0);
    } else {
      // binary is two levels, blank and the densest glyph (decisions.md): structure draws no strokes
      // into it (a custom ramp, `glyphs`, is the caller's own). edges' line art is a look of its
      // own, drawn with them in every ramp.
      const structureAmount = p.edges ? Math.max(p.structure, 0.5) : p.charset === 'binary' && !p.glyphs ? 0 : p.structure;
      // The matcher substitutes a directional glyph only where strength x amount > 0.05, and the
      // tensor's strength (coherence x energy / (energy + half)) stays below 1 + rounding: at a
      // smaller amount no glyph can change, so the tensor is not computed.
      const useStructure = table.directional !== null && structureAmount * 1.001 > 0.05;
      // Glyphs are matched as they are seen: target and templates through the same small blur.
      // The 4 x 8 match chooses from the chosen levels' own glyphs (book.base): the cells the fine
      // stage leaves (flat ones, FINE_MIN_SPREAD) keep that choice, since the 4 x 8 matcher cannot
      // see the strokes of the shapes added at each level; for the others it is only a start,
      // since the fine search is exact. With fineShapes, which chooses every cell again, from the
      // whole codebook where a directional glyph outside it may be substituted (the fine stage
      // keeps those cells): a smaller 4 x 8 choice would let more of them through.
      const refine = fine
        ? { table: table.fine!, candidates: book.indices, minSpread: p.fineShapes ? 0 : FINE_MIN_SPREAD, keep: useStructure ? table.directional : null }
        : null;
      const starts = fine && (!p.fineShapes || !useStructure || table.directional!.every((g) => book.indices.includes(g)))
        ? book.base ?? book.indices
        : book.indices;
      // The target where the detail stage left it; its viewing blur in the free raster.
      matchInFrame(f, pt, pfree, W, cols, rows, table, {
        refine,
        blur: true,
        scale: table.scale,
        candidates: starts,
        directional: table.directional,
        // The tensor of `target` (toned is target when there are no edges), in the matcher's frame.
        structure: useStructure ? 'target' : null,
        structureAmount,
        dither: p.dither,
        previous: options.previous ?? null,
        stable,
        hysteresis: options.previous ? 0.35 : 0,
      }, cells);
    }
    // Ink drawn in colour on the dark ground carries tone once: coverage x ink = the cell's colour.
    // Not for edges (line art), invert (dark ink on light) or the round-trip rubric (its chroma
    // must decode to the source's colours).
    const inkOnly = p.color && !p.edges && !p.invert && p.qualityTarget !== 'round-trip';
    const resampled = prep.resampled, toneOfColors = tone;
    const computeColors = () => cellColors(resampled.cellLinearRgb, colorTransform(p.saturation, toneOfColors), new Uint8Array(cols * rows * 3), inkOnly ? { coverage: table.coverage, cells } : undefined);
    // Mono art shows no colour: its colours (a tone table, then OKLab with a gamut search per
    // cell: about a tenth of a warm render) wait until something reads them (json's chroma, the
    // report's round-trip metric). The cells' linear RGB is the resampler's own copy, never
    // reused (or, for a video frame, resampled from the frame when first read: prepare()).
    if (p.color) colors = computeColors(); else deferredColors = computeColors;
  }

  let codebookGlyphs = '';
  for (const i of book.indices) codebookGlyphs += table.glyphs[i]!;
  const result: RenderResult = {
    version: VERSION,
    charset: p.charset,
    columns: cols,
    rows,
    glyphs: table.glyphs,
    cells,
    // A placeholder where deferred, replaced below in the same place of the key order.
    colors: colors!,
    ...(background ? { background } : {}),
    ...(clear ? { clear } : {}),
    params: p,
    explicit,
    codebook: {
      strategy: p.glyphStrategy,
      glyphs: codebookGlyphs,
      size: book.indices.length,
      rampSize: table.set.glyphs.length,
      rmse: round(book.rmse, 5),
      maxRmse: p.maxGlyphRmse,
      bitsPerCell: round(entropyBits(cells, table.glyphs.length), 4),
    },
    director: tuned.report,
    source: sourceSize(image),
    cellAspect: p.cellAspect,
  };
  if (deferredColors) lazyProperty(result, 'colors', deferredColors);
  // Not a spread: that would read (and compute) deferred colours.
  const scored = () => scoreResult(result, prep, table.coverage, table.scale, tuned.report);
  // A video frame on a kept tuning re-scores its report when something reads it (a viewer shows
  // it a few times a second; about 2 % of a 200-column frame). Its inputs are the frame's own:
  // cells, cell tones and colours (read later from the frame's pixels, as above).
  if (tuned.video && options.keptTuning) lazyProperty(result, 'director', scored);
  else (result as { director: DirectorReport }).director = scored();
  return result;
}

function round(v: number, digits: number): number {
  const k = 10 ** digits;
  return Math.round(v * k) / k;
}

/**
 * `codebook` and `previous` come from a caller of the public render() too: codebook indices the
 * kernels would read past their tables with (a WebAssembly out-of-bounds trap), and a previous
 * frame of another grid, are a RangeError naming the option. Once per frame: no per-pixel cost.
 */
function checkVideoOptions(options: GlyphStageOptions, glyphs: number, cells: number): void {
  const book = options.codebook;
  if (book !== undefined) {
    if (!(book instanceof Int32Array) || book.length === 0) throw new RangeError('render options: codebook must be a non-empty Int32Array of glyph indices');
    for (let i = 0; i < book.length; i++) {
      const g = book[i]!;
      if (g < 0 || g >= glyphs) throw new RangeError(`render options: codebook[${i}] is ${g}, not a glyph index of this charset (0 to ${glyphs - 1})`);
    }
  }
  const previous = options.previous;
  if (previous !== undefined) {
    if (!(previous instanceof Uint16Array) || previous.length !== cells) {
      throw new RangeError(`render options: previous must be a Uint16Array of the grid's ${cells} cells (the previous frame's cells)`);
    }
  }
}
