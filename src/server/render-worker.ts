/**
 * A render worker (a piscina worker thread): bytes or base64 in, formatted character art out.
 * Decoding (sharp/libvips), rendering and formatting all run here, off the server's event loop.
 * libvips gets one thread per worker (`configureSharp({ concurrency: 1 })`): the pool's size is
 * the parallelism. Expected failures come back as RenderFailure values (classes do not survive
 * the thread boundary); only bugs throw.
 *
 * Every outcome carries the start and end of each stage (base64 decode, decode, director, render,
 * format) so that the main thread can record them as spans and metrics: spans are never created
 * in a worker. The stages split `render()` of the core the way it runs: `prepare` (resample) and
 * the Auto Director's `direct` form the director stage, `renderPrepared` with the tuned
 * parameters the render stage; the result is the same as `render()` (tested).
 */
import { Base64Error, decodeBase64Input } from '../core/format/base64.js';
import { formatResult } from '../core/format/index.js';
import { direct } from '../core/director/director.js';
import { getGlyphSet } from '../core/glyphs/charsets.js';
import { DEFAULTS, type Charset } from '../core/params/definitions.js';
import { ParamValidationError, parseParamsOrThrow, withDefaults } from '../core/params/validate.js';
import { DECODE_PIXELS_PER_COLUMN, GeometryError } from '../core/pipeline/geometry.js';
import { prepare, renderPrepared } from '../core/render.js';
import { configureSharp, decodeImage, ImageInputError } from '../node/index.js';
import type { ImageFacts, RenderFailure, RenderJob, RenderOutcome, StageTimes, WorkerStage } from './render-task.js';

configureSharp({ concurrency: 1 });


function failure(err: unknown): RenderFailure {
  if (err instanceof ImageInputError) {
    const slug = err.code === 'unsupported_format' ? 'unsupported-image'
      : err.code === 'too_large' || err.code === 'too_many_pixels' ? 'image-too-large'
      : 'undecodable-image';
    return { ok: false, slug, detail: err.message };
  }
  if (err instanceof Base64Error) {
    const message = `imageBase64 is not valid base64: ${err.message.replace(/^invalid base64: /, '')}`;
    return { ok: false, slug: 'invalid-base64', detail: message, errors: [{ parameter: 'imageBase64', message }] };
  }
  if (err instanceof ParamValidationError) {
    return { ok: false, slug: 'invalid-parameters', detail: err.message, errors: err.errors };
  }
  if (err instanceof GeometryError) {
    const message = `The ${err.message}.`.replace(/^The the /, 'The ');
    return { ok: false, slug: 'image-too-tall', detail: message, errors: [{ parameter: 'columns', message }] };
  }
  return { ok: false, slug: 'internal-error', detail: 'The render failed unexpectedly.', internal: err instanceof Error ? (err.stack ?? err.message) : String(err) };
}

/** Milliseconds since the Unix epoch, sub-millisecond, comparable across threads. */
const now = () => performance.timeOrigin + performance.now();

/** What the Auto Director needs of a ramp: as render() derives it from the glyph set. */
const ramps = new Map<Charset, { coverage: Float32Array; scale: number; order: Int32Array }>();
function rampOf(charset: Charset) {
  let ramp = ramps.get(charset);
  if (!ramp) {
    const set = getGlyphSet(charset);
    let scale = 0;
    for (let i = 0; i < set.coverage.length; i++) scale = Math.max(scale, set.coverage[i]!);
    const order = Int32Array.from(set.glyphs.map((_, i) => i)).sort((a, b) => set.coverage[a]! - set.coverage[b]! || a - b);
    ramp = { coverage: set.coverage, scale, order };
    ramps.set(charset, ramp);
  }
  return ramp;
}

export async function runRenderJob(job: RenderJob): Promise<RenderOutcome> {
  const startedAt = now();
  const stages: { -readonly [K in WorkerStage]?: readonly [number, number] } = {};
  let stage: WorkerStage = job.source.kind === 'base64' ? 'input' : 'decode';
  let stageStart = startedAt;
  const next = (name: WorkerStage) => {
    const t = now();
    stages[stage] = [stageStart, t];
    stage = name;
    stageStart = t;
  };
  let image: ImageFacts | undefined = job.source.kind === 'bytes' ? { bytes: job.source.bytes.byteLength } : undefined;
  try {
    let bytes: Uint8Array;
    if (job.source.kind === 'base64') {
      bytes = decodeBase64Input(job.source.text);
      image = { bytes: bytes.byteLength };
      next('decode');
    } else {
      bytes = job.source.bytes;
    }
    const columns = typeof job.params.columns === 'number' ? job.params.columns : DEFAULTS.columns;
    const decoded = await decodeImage(bytes, {
      maxPixels: job.maxPixels,
      maxBytes: job.maxBytes,
      targetWidth: columns * DECODE_PIXELS_PER_COLUMN,
      timeoutSeconds: job.decodeTimeoutSeconds,
    });
    image = { bytes: bytes.byteLength, format: decoded.format, width: decoded.sourceWidth, height: decoded.sourceHeight };
    next('director');
    // render() of the core, in its stages.
    const explicit = parseParamsOrThrow(job.params, 'json');
    const requested = withDefaults(explicit);
    const names = Object.keys(explicit);
    const prep = prepare(decoded, requested.columns, requested.invert);
    const tuned = direct(prep, requested, names, rampOf(requested.charset));
    next('render');
    const result = renderPrepared(prep, requested, names, decoded, { tuned });
    next('format');
    const out = formatResult(result);
    const json = result.params.format === 'json' || result.params.format === 'json-compact';
    const structured = job.structured && json ? { structured: JSON.parse(out.body) as Record<string, unknown> } : {};
    stages.format = [stageStart, now()];
    return {
      ok: true,
      format: result.params.format,
      body: out.body,
      contentType: out.contentType,
      extension: out.extension,
      director: { status: result.director.status, rubric: result.director.rubric, score: result.director.score },
      ...structured,
      columns: result.columns,
      rows: result.rows,
      charset: result.charset,
      adjusted: Object.keys(result.director.adjustments),
      codebook: { size: result.codebook.size, rmse: result.codebook.rmse },
      startedAt,
      stages: stages as StageTimes,
      ...(image ? { image } : {}),
    };
  } catch (err) {
    stages[stage] = [stageStart, now()];
    const f: RenderFailure = failure(err);
    return { ...f, startedAt, stages: stages as StageTimes, failedStage: stage, ...(image ? { image } : {}) };
  }
}

export default runRenderJob;
