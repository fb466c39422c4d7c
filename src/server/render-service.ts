/**
 * The render operation shared by `POST /api/v1/render` and the MCP tool `render_ascii`: checks
 * that exactly one image source was given, validates the parameters of every carrier (and that no
 * parameter comes in two), fetches `imageUrl` through the safe fetcher, and runs decode + render +
 * format in the worker pool. Every failure is an HttpProblem, so both faces report the same text.
 */
import type { LookupFunction } from 'node:net';
import { parseParams } from '../core/params/validate.js';
import type { ServerConfig } from './config.js';
import { fetchImage, ImageFetchError } from './fetch-image.js';
import { HttpProblem, parameterDetail, type ProblemFieldError } from './problem.js';
import type { RenderPool } from './render-pool.js';
import type { RenderSource, RenderSuccess } from './render-task.js';

/** The image source fields, in the order messages name them. */
export const IMAGE_FIELDS = ['image', 'imageUrl', 'imageBase64'] as const;
export type ImageField = (typeof IMAGE_FIELDS)[number];

export type ImageInput =
  | { readonly field: 'image'; readonly bytes: Uint8Array }
  | { readonly field: 'imageUrl'; readonly url: string }
  | { readonly field: 'imageBase64'; readonly text: string };

/** Where parameters came from, as messages name it. */
export type CarrierName = 'query string' | 'form fields' | 'JSON body' | 'tool arguments';

export interface ParamCarrier {
  readonly name: CarrierName;
  /** `strings`: query and form values parsed from text; `json`: typed JSON values. */
  readonly kind: 'strings' | 'json';
  readonly values: Readonly<Record<string, unknown>>;
}

export const MISSING_IMAGE_DETAIL =
  'No image was supplied: send exactly one of image (a multipart/form-data file), imageUrl or imageBase64 (JSON).';

/** Exactly one image source, else 400 `missing-image` / `multiple-images`. */
export function exactlyOneImage(inputs: readonly ImageInput[]): ImageInput {
  if (inputs.length === 0) throw new HttpProblem('missing-image', MISSING_IMAGE_DETAIL);
  if (inputs.length > 1) {
    const names = inputs.map((i) => i.field);
    const detail = `Exactly one image source is allowed, but ${inputs.length} were supplied: ${names.join(', ')}.`;
    throw new HttpProblem('multiple-images', detail, { errors: [...new Set(names)].map((parameter) => ({ parameter, message: detail })) });
  }
  return inputs[0]!;
}

/**
 * Validates every carrier's parameters with the one parameter definition (unknown names, wrong
 * types, out of range: all reported together) and refuses a parameter given in two carriers.
 * Returns the JSON-typed parameters the caller set.
 */
export function validateParams(carriers: readonly ParamCarrier[]): Record<string, unknown> {
  const errors: ProblemFieldError[] = [];
  const params: Record<string, unknown> = {};
  const seen = new Map<string, CarrierName>();
  for (const carrier of carriers) {
    for (const name of Object.keys(carrier.values)) {
      if (carrier.values[name] === undefined) continue;
      const first = seen.get(name);
      if (first !== undefined) errors.push({ parameter: name, message: `${name} was given twice: in the ${first} and in the ${carrier.name}` });
      else seen.set(name, carrier.name);
    }
    const r = parseParams(carrier.values, carrier.kind);
    if (!r.ok) errors.push(...r.errors);
    else Object.assign(params, r.params);
  }
  if (errors.length) throw new HttpProblem('invalid-parameters', parameterDetail(errors), { errors });
  return params;
}

export interface RenderServiceOptions {
  config: ServerConfig;
  pool: RenderPool;
  /** TEST ONLY: DNS lookup and extra CA for imageUrl fetches (see fetchImage). */
  fetchLookup?: LookupFunction;
  fetchCa?: string | Buffer;
  log?: { error(obj: unknown, msg: string): void };
}

export interface RenderCallContext {
  signal?: AbortSignal;
  traceId?: string;
  /** Return the parsed JSON of the json formats as well (MCP structuredContent). */
  structured?: boolean;
}

export interface RenderService {
  render(image: ImageInput, params: Record<string, unknown>, ctx?: RenderCallContext): Promise<RenderSuccess>;
}

function fetchProblem(err: ImageFetchError): HttpProblem {
  const errors = [{ parameter: 'imageUrl', message: err.message }];
  if (err.status === 413) return new HttpProblem('image-too-large', err.message, { errors });
  if (err.status === 400) return new HttpProblem('image-url-not-allowed', err.message, { errors });
  return new HttpProblem('image-fetch-failed', err.message, { errors });
}

export function createRenderService(opts: RenderServiceOptions): RenderService {
  const { config, pool } = opts;
  const maxBase64Chars = Math.ceil(config.maxImageBytes / 3) * 4;

  async function source(image: ImageInput, signal: AbortSignal | undefined): Promise<RenderSource> {
    switch (image.field) {
      case 'image':
        return { kind: 'bytes', bytes: image.bytes };
      case 'imageBase64': {
        // A cheap early refusal: whitespace aside, the text can only shrink by 3/4.
        if (image.text.length > maxBase64Chars * 1.03 + 4096) {
          throw new HttpProblem('image-too-large', `imageBase64 is longer than an image of the ${config.maxImageBytes}-byte limit can be.`, {
            errors: [{ parameter: 'imageBase64', message: 'too large' }],
          });
        }
        return { kind: 'base64', text: image.text };
      }
      case 'imageUrl': {
        try {
          const bytes = await fetchImage(image.url, {
            allowlist: config.imageFetchAllowlist,
            maxBytes: config.maxImageBytes,
            timeoutMs: config.fetchTimeoutMs,
            allowLoopback: config.testAllowLoopbackFetch,
            ...(opts.fetchLookup ? { lookup: opts.fetchLookup } : {}),
            ...(opts.fetchCa !== undefined ? { ca: opts.fetchCa } : {}),
            ...(signal ? { signal } : {}),
          });
          return { kind: 'bytes', bytes };
        } catch (err) {
          if (err instanceof ImageFetchError) throw fetchProblem(err);
          throw err;
        }
      }
    }
  }

  return {
    async render(image, params, ctx = {}) {
      const src = await source(image, ctx.signal);
      const outcome = await pool.run(
        {
          source: src,
          params,
          maxBytes: config.maxImageBytes,
          maxPixels: config.maxImagePixels,
          decodeTimeoutSeconds: Math.max(1, Math.ceil(config.renderTimeoutMs / 1000)),
          structured: ctx.structured === true,
        },
        ctx.signal,
      );
      if (outcome.ok) return outcome;
      if (outcome.internal) opts.log?.error({ traceId: ctx.traceId, internal: outcome.internal }, 'render worker failed');
      const detail = outcome.slug === 'internal-error' && ctx.traceId ? `${outcome.detail} Trace id: ${ctx.traceId}.` : outcome.detail;
      throw new HttpProblem(outcome.slug, detail, outcome.errors ? { errors: outcome.errors } : {});
    },
  };
}

/** `X-Auto-Director` header value: `<status>; rubric=<rubric>; score=<score>`. */
export function autoDirectorHeader(d: RenderSuccess['director']): string {
  return `${d.status}; rubric=${d.rubric}; score=${Number(d.score.toFixed(3))}`;
}
