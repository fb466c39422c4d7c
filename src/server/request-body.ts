/**
 * A render request's body (`POST /api/v1/render`), from the raw chunks the event loop read
 * (routes/render.ts) to the image source and parameters it asks for. A body over
 * INLINE_BODY_BYTES is read here in a render worker, so that neither a multipart form's boundary
 * search nor a JSON body's decoding, parsing and base64 text (a 12 MP image is ~4 MB of it: ~7 ms
 * of the event loop's time per request, and a copy across the thread boundary) runs on the thread
 * every request shares (bench/README.md); a smaller one (a URL, a refusal, a small image) on the
 * event loop, where it costs less than a trip through the pool. A JSON body's long imageBase64
 * value is kept out of its parse as the MCP endpoint's is (json-lift.ts).
 */
import { isRecord } from '../core/args.js';
import { parseForm } from './form-body.js';
import { parseLifted } from './json-lift.js';
import { HttpProblem } from './problem.js';
import {
  base64Source, CARRIER_IMAGE_FIELDS, checkBase64Length, exactlyOneImage, invalidImageField, jsonImageInputs, queryCarrier, validateParams, type ImageInput, type JsonImageInput, type ParamCarrier,
} from './render-inputs.js';
import type { BodyJob, RenderSource } from './render-task.js';

/** Bodies up to this size are read on the event loop (see above); larger ones in a worker. */
export const INLINE_BODY_BYTES = 64 * 1024;

/** What a body asks for: an image to render with its parameters, or a URL to fetch first. */
export type BodyRequest =
  | { readonly params: Record<string, unknown>; readonly url: string }
  | { readonly params: Record<string, unknown>; readonly source: RenderSource; readonly field: 'image' | 'imageBase64' };

/**
 * The body's one image source and its validated parameters (the query string's and the body's,
 * with the checks every carrier gets: render-inputs.ts). Throws an HttpProblem for a refusal.
 */
export async function bodyRequest(body: BodyJob['body'], maxImageBytes: number): Promise<BodyRequest> {
  const inputs = await requestInputs(body, maxImageBytes);
  const params = validateParams(inputs.carriers);
  const image = exactlyOneImage(inputs.images, CARRIER_IMAGE_FIELDS[body.type]);
  switch (image.field) {
    case 'imageUrl':
      return { params, url: image.url };
    case 'imageBase64':
      checkBase64Length(image.text, maxImageBytes);
      return { params, source: base64Source(image.text), field: 'imageBase64' };
    case 'image': {
      const bytes = joined(image.chunks);
      // Its chunks were views into the body's, which the image no longer needs (see above).
      letGo(body.chunks);
      return { params, source: { kind: 'bytes', bytes }, field: 'image' };
    }
  }
}

/** An upload's chunks as one array (the one chunk itself when there is one). */
function joined(chunks: readonly Uint8Array[]): Uint8Array {
  return chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
}

export interface RequestInputs {
  readonly images: readonly ImageInput[];
  /** The query string's parameters, then the body's. */
  readonly carriers: readonly ParamCarrier[];
}

/** The body's image sources and parameter carriers; an HttpProblem for a body that is refused. */
export async function requestInputs(body: BodyJob['body'], maxImageBytes: number): Promise<RequestInputs> {
  const query = queryCarrier(body.query);
  if (body.type === 'form') {
    const form = await parseForm(body.chunks, body.contentType, maxImageBytes);
    return { images: form.images, carriers: [query, { name: 'form fields', kind: 'strings', values: form.fields }] };
  }
  // As the MCP endpoint reads its bodies: a long imageBase64 value stays bytes (views of the
  // chunks), out of the parse, and is decoded from them (json-lift.ts). The job that carries the
  // chunk list lives until the render ends; the parse and the lifted views are all it needs now.
  const json = jsonRequest(parseJsonBody(body.chunks));
  letGo(body.chunks);
  return { images: json.images, carriers: [query, { name: 'JSON body', kind: 'json', values: json.params }] };
}

/** Empties a body's chunk list (a job's own copy in a worker, the route's own array inline). */
function letGo(chunks: readonly Uint8Array[]): void {
  (chunks as Uint8Array[]).length = 0;
}

/** A JSON body, parsed with its bounds checked and its long imageBase64 lifted (json-lift.ts); a syntax error as a 400. */
function parseJsonBody(chunks: readonly Uint8Array[]): unknown {
  try {
    return parseLifted(chunks, 'imageBase64');
  } catch (err) {
    if (err instanceof SyntaxError) throw new HttpProblem('invalid-request', `The body is not valid JSON: ${err.message.slice(0, 200)}`);
    throw err;
  }
}

/** A JSON render request: an object of imageUrl or imageBase64 and render parameters. */
function jsonRequest(body: unknown): { images: JsonImageInput[]; params: Record<string, unknown> } {
  if (!isRecord(body)) {
    throw new HttpProblem('invalid-request', 'The JSON body must be an object: {"imageUrl": "https://..."} or {"imageBase64": "..."} plus render parameters.');
  }
  const { imageUrl, imageBase64, image, ...params } = body;
  if (image !== undefined) throw invalidImageField('image', 'image is the multipart/form-data file field; in a JSON body send imageUrl or imageBase64');
  return { images: jsonImageInputs({ imageUrl, imageBase64 }), params };
}
