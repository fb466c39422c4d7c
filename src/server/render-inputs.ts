/**
 * The inputs of a render request, checked the same way on every face that takes JSON-typed tool
 * arguments or HTTP carriers: exactly one image source, and the parameters of every carrier
 * validated with the one parameter definition. Light on purpose (no fetcher, no telemetry): the
 * stdio MCP face (`v2a mcp`) loads it without the server.
 */
import { parseParams } from '../core/params/validate.js';
import { HttpProblem, parameterDetail, type ProblemFieldError } from './problem.js';
import type { RenderSource } from './render-task.js';

/** Most parameter errors one reply lists. */
export const MAX_LISTED_ERRORS = 50;

/** The image source fields, in the order messages name them. */
export const IMAGE_FIELDS = ['image', 'imageUrl', 'imageBase64'] as const;
export type ImageField = (typeof IMAGE_FIELDS)[number];

/**
 * A long imageBase64 value kept as the bytes of its text, lifted out of a JSON body before the
 * parse (json-lift.ts); in the parsed body where the string would be.
 */
export class LiftedText {
  readonly byteLength: number;
  /**
   * `parts`: views into the body's chunks, in order; `movable`: no other lifted value shares
   * those chunks, so their buffers may move to the worker whole instead of being copied (the
   * parsed body no longer needs them).
   */
  constructor(readonly parts: readonly Uint8Array[], readonly movable = false) {
    let n = 0;
    for (const p of parts) n += p.byteLength;
    this.byteLength = n;
  }

  /** What a log or an echo of the arguments shows: never the bytes. */
  toJSON(): string {
    return `(${this.byteLength} characters of base64)`;
  }
}

/** An image source of a JSON carrier (a request body, MCP tool arguments). */
export type JsonImageInput =
  | { readonly field: 'imageUrl'; readonly url: string }
  | { readonly field: 'imageBase64'; readonly text: string | LiftedText };

export type ImageInput =
  /**
   * An upload, as the form parser cut it from the body's chunks (form-body.ts; for a large body
   * in a render worker, which joins them: the event loop never copies a large image).
   */
  | { readonly field: 'image'; readonly chunks: readonly Uint8Array[]; readonly byteLength: number }
  | JsonImageInput;

/** Where parameters came from, as messages name it. */
export type CarrierName = 'query string' | 'form fields' | 'JSON body' | 'tool arguments';

export interface ParamCarrier {
  readonly name: CarrierName;
  /** `strings`: query and form values parsed from text; `json`: typed JSON values. */
  readonly kind: 'strings' | 'json';
  readonly values: Readonly<Record<string, unknown>>;
}

/** A request's query string as a carrier of parameters. */
export const queryCarrier = (values: Readonly<Record<string, unknown>>): ParamCarrier => ({ name: 'query string', kind: 'strings', values });

export const MISSING_IMAGE_DETAIL =
  'No image was supplied: send exactly one of imageUrl or imageBase64 (JSON keys, or MCP tool arguments), or image (a multipart/form-data file upload).';

/**
 * The image sources of a JSON carrier (request body or MCP tool arguments): imageUrl and
 * imageBase64, each a non-empty string when present. exactlyOneImage() then insists on one.
 */
export function jsonImageInputs(values: { readonly imageUrl?: unknown; readonly imageBase64?: unknown }): JsonImageInput[] {
  const images: JsonImageInput[] = [];
  const { imageUrl, imageBase64 } = values;
  if (imageUrl !== undefined) {
    if (typeof imageUrl !== 'string' || imageUrl.trim() === '') throw invalidImageField('imageUrl', 'imageUrl must be a non-empty string (an https URL)');
    images.push({ field: 'imageUrl', url: imageUrl.trim() });
  }
  if (imageBase64 !== undefined) {
    if (!(imageBase64 instanceof LiftedText) && (typeof imageBase64 !== 'string' || imageBase64.trim() === '')) {
      throw invalidImageField('imageBase64', 'imageBase64 must be a non-empty string of base64');
    }
    images.push({ field: 'imageBase64', text: imageBase64 });
  }
  return images;
}

/** A render source for imageBase64: its text, or a lifted value's bytes (moved, not copied). */
export function base64Source(text: string | LiftedText): RenderSource {
  return typeof text === 'string' ? { kind: 'base64', text } : { kind: 'base64', text: text.parts, movable: text.movable };
}

/**
 * imageBase64 text longer than base64 of an image of `maxBytes` can be (whitespace aside, the
 * text only shrinks by 3/4 when decoded): a cheap refusal before any decoding, 413.
 */
export function checkBase64Length(text: string | LiftedText, maxBytes: number): void {
  const length = typeof text === 'string' ? text.length : text.byteLength;
  if (length > Math.ceil(maxBytes / 3) * 4 * 1.03 + 4096) {
    throw new HttpProblem('image-too-large', `imageBase64 is longer than an image of the ${maxBytes}-byte limit can be.`, {
      errors: [{ parameter: 'imageBase64', message: 'too large' }],
    });
  }
}

/** A 400 naming the image field at fault. */
export function invalidImageField(parameter: string, message: string): HttpProblem {
  return new HttpProblem('invalid-request', message, { errors: [{ parameter, message }] });
}

/** The image fields each carrier takes: a missing-image reply names them in `errors`. */
export const CARRIER_IMAGE_FIELDS: Readonly<Record<'form' | 'json', readonly ImageField[]>> = {
  form: ['image', 'imageUrl'],
  json: ['imageUrl', 'imageBase64'],
};

/** Exactly one image source, else 400 `missing-image` (naming the `accepted` fields) / `multiple-images`. */
export function exactlyOneImage<T extends ImageInput>(inputs: readonly T[], accepted: readonly ImageField[], missing = MISSING_IMAGE_DETAIL): T {
  if (inputs.length === 0) {
    const message = `not given: send exactly one of ${accepted.join(', ')}`;
    throw new HttpProblem('missing-image', missing, { errors: accepted.map((parameter) => ({ parameter, message })) });
  }
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
  if (errors.length > MAX_LISTED_ERRORS) {
    // A body of many bad names (bounded by the JSON key limit) gets a short reply all the same.
    const shown = errors.slice(0, MAX_LISTED_ERRORS);
    throw new HttpProblem('invalid-parameters', `${parameterDetail(shown)}; and ${errors.length - shown.length} more`, { errors: shown });
  }
  if (errors.length) throw new HttpProblem('invalid-parameters', parameterDetail(errors), { errors });
  return params;
}
