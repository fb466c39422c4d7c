/**
 * A `multipart/form-data` render request's form, parsed from the raw chunks of its body that the
 * event loop read (routes/render.ts, bounded): where request-body.ts says, in a render worker for
 * a large body, so that the boundary search over every byte of an upload is off the thread every
 * request shares (at 12 MP it was ~40 % of the event loop's time per request; bench/README.md).
 *
 * The form's rules, in the order they apply:
 * - busboy's part limits: more than MAX_FILES files, MAX_FIELDS fields or their sum in parts is
 *   413 `request-too-large`; a field name that is a property of Object.prototype is 400;
 * - the file field `image` at most once and no other file field, no `imageBase64` field, no text
 *   field over MAX_FIELD_BYTES: each a 400 refusal, answered once the whole form was read (a
 *   later limit or malformed part takes precedence);
 * - an upload over `maxBytes` is 413 `image-too-large` (unless refused before);
 * - a body busboy cannot read is 400 naming busboy's reason; an empty body is an empty form.
 * A text part declared `application/json` is read as JSON and used as its JSON text (so `80` and
 * `"80"` both give 80), as @fastify/multipart did before this moved here.
 */
import { Busboy, type BusboyInstance } from '@fastify/busboy';
import { uploadTooLargeDetail } from '../contract/problems.js';
import { HttpProblem } from './problem.js';
import type { ImageInput } from './render-inputs.js';

/** Longest multipart text field (a URL or a parameter value). */
export const MAX_FIELD_BYTES = 16 * 1024;
export const MAX_FIELDS = 100;
export const MAX_FILES = 4;
/**
 * What a form may carry beyond its image: every text field at its longest, and room for each
 * part's headers. routes/render.ts stops reading a body longer than the image limit plus this.
 */
export const FORM_OVERHEAD_BYTES = MAX_FIELDS * (MAX_FIELD_BYTES + 1024) + MAX_FILES * 1024;

export interface ParsedForm {
  /** The image sources found: the upload (as its chunks) and/or imageUrl fields. */
  readonly images: ImageInput[];
  /** Text fields by name; a name given more than once maps to all its values, in order. */
  readonly fields: Record<string, string | string[]>;
}

export const uploadTooLarge = (maxBytes: number): HttpProblem =>
  new HttpProblem('image-too-large', uploadTooLargeDetail(maxBytes), {
    errors: [{ parameter: 'image', message: `larger than ${maxBytes} bytes` }],
  });

const malformed = (err: unknown): HttpProblem => {
  const why = err instanceof Error ? err.message.replace(/^Multipart: /i, '') : 'unreadable';
  return new HttpProblem('invalid-request', `The multipart/form-data body is malformed: ${why}.`);
};

/** RFC 2046 (5.1.1): a boundary is 1 to 70 characters; busboy's own refusal of longer ones named its internals. */
const MAX_BOUNDARY = 70;
const BOUNDARY = /;\s*boundary=(?:"([^"]*)"|([^;\s]*))/i;

const longBoundary = (contentType: string): HttpProblem | undefined => {
  const m = BOUNDARY.exec(contentType);
  const boundary = m?.[1] ?? m?.[2];
  return boundary !== undefined && boundary.length > MAX_BOUNDARY
    ? new HttpProblem('invalid-request', `The multipart/form-data boundary is ${boundary.length} characters long; at most ${MAX_BOUNDARY} are allowed (RFC 2046, section 5.1.1).`, {
      errors: [{ parameter: 'Content-Type', message: `boundary longer than ${MAX_BOUNDARY} characters` }],
    })
    : undefined;
};

const unnamedPart = (): HttpProblem =>
  new HttpProblem('invalid-request', 'The multipart/form-data body is malformed: a part has no name (Content-Disposition: form-data; name="...").');

const PART_LIMITS = { files: MAX_FILES, fields: MAX_FIELDS, parts: MAX_FILES + MAX_FIELDS } as const;

/** The limit in words, so that a client can see how far off its form is. */
const tooMany = (what: keyof typeof PART_LIMITS): HttpProblem =>
  new HttpProblem('request-too-large', `The multipart body has too many ${what}: at most ${PART_LIMITS[what]} are allowed.`);

const fieldProblem = (parameter: string, message: string): HttpProblem =>
  new HttpProblem('invalid-request', message, { errors: [{ parameter, message }] });

/**
 * Parses the body `chunks` of a request whose Content-Type header is `contentType`. Throws an
 * HttpProblem for every refusal (see the module comment); the upload's chunks are kept as busboy
 * cut them (views into `chunks`, nothing copied).
 */
export async function parseForm(chunks: readonly Uint8Array[], contentType: string, maxBytes: number): Promise<ParsedForm> {
  // Slots in part order (an upload's is filled once its part ends), as the messages name them.
  const images: (ImageInput | undefined)[] = [];
  let sawImage = false;
  const fields: Record<string, string | string[]> = Object.create(null) as Record<string, string | string[]>;
  const boundaryProblem = longBoundary(contentType);
  if (boundaryProblem) throw boundaryProblem;
  let bb: BusboyInstance;
  try {
    bb = new Busboy({
      headers: { 'content-type': contentType },
      limits: { fileSize: maxBytes, fieldSize: MAX_FIELD_BYTES, ...PART_LIMITS },
      // The part named image is the upload also without a filename (optional in RFC 7578 §4.2:
      // `curl -F 'image=<photo.png'` sends none); busboy's own rule reads such a part as text.
      isPartAFile: (name, type, filename) => name === 'image' || type === 'application/octet-stream' || filename !== undefined,
    });
  } catch (err) {
    throw malformed(err);
  }
  if (chunks.every((c) => c.byteLength === 0)) return { images: [], fields };

  // The first limit or malformed part ends the form; a refusal waits for the rest to be read.
  // Ended means not waiting for busboy: once a limit makes it skip a part that spans a large
  // chunk, its parser waits for a drain that never comes, and neither 'finish' nor the upload's
  // end arrives (200 fields and an image in 64 KiB chunks hung the request until its socket
  // closed, a worker until the render timeout terminated it).
  let failure: HttpProblem | undefined;
  let refusal: HttpProblem | undefined;
  let ended!: () => void;
  const failed = new Promise<void>((resolve) => { ended = resolve; });
  const fail = (p: HttpProblem) => {
    failure ??= p;
    ended();
  };
  const reading: Promise<void>[] = [];

  bb.on('file', (name: string | undefined, file: NodeJS.ReadableStream & { truncated?: boolean }, _filename: string | undefined) => {
    if (!failure) {
      if (!name) fail(unnamedPart());
      else if (name in Object.prototype) fail(new HttpProblem('invalid-request', 'A multipart field name is not allowed.'));
    }
    if (!failure && !refusal && name) {
      if (name !== 'image') {
        refusal = fieldProblem(name, `unknown file field ${JSON.stringify(name)}: upload the image as the file field image`);
      } else if (sawImage) {
        refusal = new HttpProblem('multiple-images', 'Exactly one image source is allowed, but the file field image was sent more than once.', {
          errors: [{ parameter: 'image', message: 'sent more than once' }],
        });
      } else {
        sawImage = true;
        const slot = images.push(undefined) - 1;
        reading.push(readUpload(file, maxBytes).then((upload) => {
          if (upload) images[slot] = upload;
          else fail(uploadTooLarge(maxBytes));
        }, (err: unknown) => fail(malformed(err))));
        return;
      }
    }
    // Refused or failed: read to its end and dropped.
    file.resume();
  });

  bb.on('field', (name: string | undefined, raw: string, _nameTruncated: boolean, valueTruncated: boolean, _encoding: string, mime: string) => {
    if (failure) return;
    // busboy hands a part without `name` on as undefined, which read as a parameter "undefined".
    if (!name) return fail(unnamedPart());
    if (name in Object.prototype) return fail(new HttpProblem('invalid-request', 'A multipart field name is not allowed.'));
    if (refusal) return;
    let value = raw;
    if (mime.startsWith('application/json')) {
      const message = `form field ${name} is declared application/json but is not valid JSON`;
      if (valueTruncated) return fail(fieldProblem(name, message));
      try {
        const parsed: unknown = JSON.parse(raw);
        value = typeof parsed === 'string' ? parsed : JSON.stringify(parsed);
      } catch {
        return fail(fieldProblem(name, message));
      }
    }
    // imageBase64 before the size: a real image's base64 is always over it, and what to do
    // instead is the useful answer.
    if (name === 'imageBase64') {
      refusal = fieldProblem('imageBase64', 'imageBase64 is accepted in a JSON body only; in multipart/form-data upload the file as the field image');
    } else if (valueTruncated) refusal = fieldProblem(name, `form field ${name} is longer than ${MAX_FIELD_BYTES} bytes`);
    else if (name === 'imageUrl') images.push({ field: 'imageUrl', url: value });
    else {
      const prev = fields[name];
      fields[name] = prev === undefined ? value : [...(Array.isArray(prev) ? prev : [prev]), value];
    }
  });
  bb.on('partsLimit', () => fail(tooMany('parts')));
  bb.on('filesLimit', () => fail(tooMany('files')));
  bb.on('fieldsLimit', () => fail(tooMany('fields')));

  const finished = new Promise<void>((resolve, reject) => {
    bb.once('finish', resolve);
    bb.once('error', reject);
  });
  for (const c of chunks) bb.write(c);
  bb.end();
  try {
    await Promise.race([finished, failed]);
  } catch (err) {
    fail(malformed(err));
  }
  if (!failure) await Promise.race([Promise.all(reading), failed]);
  if (failure) {
    bb.destroy();
    throw failure;
  }
  if (refusal) throw refusal;
  return { images: images.filter((i): i is ImageInput => i !== undefined), fields };
}

/** An upload's chunks, or null when it passed maxBytes (busboy then drops the rest of the part). */
function readUpload(file: NodeJS.ReadableStream & { truncated?: boolean }, maxBytes: number): Promise<ImageInput | null> {
  return new Promise((resolve, reject) => {
    const parts: Uint8Array[] = [];
    let byteLength = 0;
    let over = false;
    file.on('data', (chunk: Buffer) => {
      if (over) return;
      parts.push(chunk);
      byteLength += chunk.byteLength;
    });
    file.once('limit', () => { over = true; parts.length = 0; });
    file.once('error', reject);
    file.once('end', () => resolve(over || file.truncated || byteLength > maxBytes ? null : { field: 'image', chunks: parts, byteLength }));
  });
}
