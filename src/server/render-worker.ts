/**
 * A render worker (a piscina worker thread): bytes or base64 in, formatted character art out.
 * Decoding (sharp/libvips), rendering and formatting all run here, off the server's event loop.
 * libvips gets one thread per worker (`configureSharp({ concurrency: 1 })`): the pool's size is
 * the parallelism. Expected failures come back as RenderFailure values (classes do not survive
 * the thread boundary); only bugs throw.
 */
import { Base64Error, decodeBase64Input } from '../core/format/base64.js';
import { formatResult } from '../core/format/index.js';
import { DEFAULTS } from '../core/params/definitions.js';
import { ParamValidationError } from '../core/params/validate.js';
import { GeometryError } from '../core/pipeline/geometry.js';
import { render } from '../core/render.js';
import { configureSharp, decodeImage, ImageInputError } from '../node/index.js';
import type { RenderFailure, RenderJob, RenderOutcome } from './render-task.js';

configureSharp({ concurrency: 1 });

/** Decode width per column: enough sub-samples for the renderer, far less than a full decode. */
const PIXELS_PER_COLUMN = 8;

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

export async function runRenderJob(job: RenderJob): Promise<RenderOutcome> {
  try {
    const bytes = job.source.kind === 'bytes' ? job.source.bytes : decodeBase64Input(job.source.text);
    const columns = typeof job.params.columns === 'number' ? job.params.columns : DEFAULTS.columns;
    const image = await decodeImage(bytes, {
      maxPixels: job.maxPixels,
      maxBytes: job.maxBytes,
      targetWidth: columns * PIXELS_PER_COLUMN,
      timeoutSeconds: job.decodeTimeoutSeconds,
    });
    const result = render(image, job.params);
    const out = formatResult(result);
    const json = result.params.format === 'json' || result.params.format === 'json-compact';
    return {
      ok: true,
      format: result.params.format,
      body: out.body,
      contentType: out.contentType,
      extension: out.extension,
      director: { status: result.director.status, rubric: result.director.rubric, score: result.director.score },
      ...(job.structured && json ? { structured: JSON.parse(out.body) as Record<string, unknown> } : {}),
      columns: result.columns,
      rows: result.rows,
    };
  } catch (err) {
    return failure(err);
  }
}

export default runRenderJob;
