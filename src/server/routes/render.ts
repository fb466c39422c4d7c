/**
 * `POST /api/v1/render`: one image in, character art out (interface.md §4.2).
 *
 * Carriers: `multipart/form-data` (file field `image`, render parameters and optionally `imageUrl`
 * as text fields) or `application/json` (`imageUrl` xor `imageBase64` plus render parameters);
 * render parameters also in the query string. Every other content type is 415.
 *
 * Limits hold while the body streams in, so no request ever holds more than the limit in memory:
 * the upload stops at V2A_MAX_IMAGE_BYTES (413, connection closed, the rest of the body unread),
 * the JSON body at the size of base64 of that many bytes (413), and a fetched imageUrl body at
 * V2A_MAX_IMAGE_BYTES (413). A request is admitted before its body is read (admission.ts: 503
 * when every slot is taken), and a JSON body's keys, nesting and duplicate keys are checked while
 * it is parsed (json-body.ts).
 */
import multipart from '@fastify/multipart';
import type { MultipartFile, MultipartValue } from '@fastify/multipart';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { jsonBodyLimit } from '../config.js';
import type { AppContext } from '../context.js';
import { limitedRoute } from '../plugins/rate-limit.js';
import { ENDPOINTS } from '../../contract/endpoints.js';
import { HttpProblem } from '../problem.js';
import { parseJsonBounded } from '../json-body.js';
import { nowMs } from '../telemetry/tracing.js';
import {
  autoDirectorHeader, exactlyOneImage, invalidImageField, jsonImageInputs, validateParams, type ImageInput, type ParamCarrier,
} from '../render-service.js';

/** Longest multipart text field (a URL or a parameter value). */
export const MAX_FIELD_BYTES = 16 * 1024;
const MAX_FIELDS = 100;
const MAX_FILES = 4;

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

const tooLarge = (maxBytes: number) =>
  new HttpProblem('image-too-large', `The uploaded image is larger than the ${maxBytes}-byte limit.`, {
    errors: [{ parameter: 'image', message: `larger than ${maxBytes} bytes` }],
  });

/**
 * Reads one uploaded file, refusing the moment it passes `maxBytes`: busboy would otherwise keep
 * reading (and discarding) the rest of the upload before the part ends. Stops the request stream.
 * The chunks are kept as they came, not joined: the render worker joins them (render-pool.ts
 * transfers each one that owns its memory), off the event loop.
 */
function readFile(request: FastifyRequest, part: MultipartFile, maxBytes: number): Promise<{ chunks: Buffer[]; byteLength: number }> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let total = 0;
    const stop = (err: unknown) => {
      part.file.removeAllListeners('data');
      request.raw.unpipe();
      request.raw.pause();
      reject(err);
    };
    part.file.on('data', (chunk: Buffer) => {
      total += chunk.length;
      chunks.push(chunk);
    });
    part.file.once('limit', () => stop(tooLarge(maxBytes)));
    part.file.once('error', (err) => stop(err));
    part.file.once('end', () => {
      if (part.file.truncated) stop(tooLarge(maxBytes));
      else resolve({ chunks, byteLength: total });
    });
  });
}

interface Collected {
  images: ImageInput[];
  fields: Record<string, string | string[]>;
}

async function readMultipart(request: FastifyRequest, maxBytes: number): Promise<Collected> {
  const images: ImageInput[] = [];
  const fields: Record<string, string | string[]> = Object.create(null) as Record<string, string | string[]>;

  const collect = async (part: MultipartFile | MultipartValue): Promise<void> => {
    if (part.type === 'file') {
      if (part.fieldname !== 'image') {
        const message = `unknown file field ${JSON.stringify(part.fieldname)}: upload the image as the file field image`;
        throw new HttpProblem('invalid-request', message, { errors: [{ parameter: part.fieldname, message }] });
      }
      if (images.some((i) => i.field === 'image')) {
        throw new HttpProblem('multiple-images', 'Exactly one image source is allowed, but the file field image was sent more than once.', {
          errors: [{ parameter: 'image', message: 'sent more than once' }],
        });
      }
      images.push({ field: 'image', ...(await readFile(request, part, maxBytes)) });
      return;
    }
    const value = typeof part.value === 'string' ? part.value : JSON.stringify(part.value);
    if (part.valueTruncated) {
      const message = `form field ${part.fieldname} is longer than ${MAX_FIELD_BYTES} bytes`;
      throw new HttpProblem('invalid-request', message, { errors: [{ parameter: part.fieldname, message }] });
    }
    if (part.fieldname === 'imageUrl') images.push({ field: 'imageUrl', url: value });
    else if (part.fieldname === 'imageBase64') {
      const message = 'imageBase64 is accepted in a JSON body only; in multipart/form-data upload the file as the field image';
      throw new HttpProblem('invalid-request', message, { errors: [{ parameter: 'imageBase64', message }] });
    } else {
      const prev = fields[part.fieldname];
      fields[part.fieldname] = prev === undefined ? value : [...(Array.isArray(prev) ? prev : [prev]), value];
    }
  };

  // A refusal found mid-body (a second image, an unknown file field, ...) is answered after the
  // rest of the body was read and dropped: replying early makes a client that is still sending
  // fail with EPIPE instead of reading its 400. The parts limits bound what is read.
  let refusal: HttpProblem | undefined;
  try {
    for await (const part of request.parts({ limits: { fileSize: maxBytes, files: MAX_FILES, fields: MAX_FIELDS, fieldSize: MAX_FIELD_BYTES, parts: MAX_FILES + MAX_FIELDS } })) {
      if (!refusal) {
        try {
          await collect(part);
          continue;
        } catch (err) {
          if (!(err instanceof HttpProblem) || err.status === 413) throw err;
          refusal = err;
        }
      }
      if (part.type === 'file' && !part.file.readableEnded) await drain(part.file);
    }
  } catch (err) {
    if (err instanceof HttpProblem || typeof (err as { statusCode?: unknown }).statusCode === 'number') throw err;
    const why = err instanceof Error ? err.message.replace(/^Multipart: /i, '') : 'unreadable';
    throw new HttpProblem('invalid-request', `The multipart/form-data body is malformed: ${why}.`);
  }
  if (refusal) throw refusal;
  return { images, fields };
}

/** Reads a file part to its end and drops it. */
async function drain(stream: AsyncIterable<unknown>): Promise<void> {
  for await (const _ of stream) { /* dropped */ }
}

function readJson(body: unknown): Collected & { params: Record<string, unknown> } {
  if (!isPlainObject(body)) {
    throw new HttpProblem('invalid-request', 'The JSON body must be an object: {"imageUrl": "https://..."} or {"imageBase64": "..."} plus render parameters.');
  }
  const { imageUrl, imageBase64, image, ...params } = body;
  if (image !== undefined) throw invalidImageField('image', 'image is the multipart/form-data file field; in a JSON body send imageUrl or imageBase64');
  return { images: jsonImageInputs({ imageUrl, imageBase64 }), fields: {}, params };
}

function queryParams(request: FastifyRequest): Record<string, unknown> {
  const query = (isPlainObject(request.query) ? request.query : {}) as Record<string, unknown>;
  for (const name of ['image', 'imageUrl', 'imageBase64']) {
    if (query[name] !== undefined) {
      const message = `${name} is not accepted in the query string; send the image in the request body`;
      throw new HttpProblem('invalid-request', message, { errors: [{ parameter: name, message }] });
    }
  }
  return query;
}

export async function renderRoutes(app: FastifyInstance, opts: { ctx: AppContext }): Promise<void> {
  const { ctx } = opts;
  const { config } = ctx;

  // Only JSON and multipart here: Fastify answers every other content type with 415.
  app.removeAllContentTypeParsers();
  // Keys, nesting and duplicate keys are bounded while parsing (json-body.ts).
  app.addContentTypeParser('application/json', { parseAs: 'string', bodyLimit: jsonBodyLimit(config.maxImageBytes) }, (_req, body, done) => {
    try {
      done(null, parseJsonBounded(body as string));
    } catch (err) {
      done(err instanceof SyntaxError ? new HttpProblem('invalid-request', `The body is not valid JSON: ${err.message.slice(0, 200)}`) : (err as Error), undefined);
    }
  });
  await app.register(multipart, { limits: { fileSize: config.maxImageBytes } });

  // Admission before the body is read (after the rate limit): a body waiting for a worker holds
  // up to maxImageBytes of memory, so at most workers + queueLimit render and MCP requests may be
  // in flight (reading, queued or running); the slot lives as long as the socket (admission.ts).
  const admit = async (request: FastifyRequest, reply: FastifyReply) => { ctx.admission.admit(request, reply); };

  app.route({
    method: 'POST',
    url: ENDPOINTS.render.path,
    bodyLimit: jsonBodyLimit(config.maxImageBytes),
    ...limitedRoute(ctx.limiter, admit),
    handler: async (request: FastifyRequest, reply: FastifyReply) => {
      const query = queryParams(request);
      let collected: Collected;
      const carriers: ParamCarrier[] = [{ name: 'query string', kind: 'strings', values: query }];
      let inputTiming: { start: number; end: number } | undefined;
      if (request.isMultipart()) {
        const start = nowMs();
        collected = await readMultipart(request, config.maxImageBytes);
        inputTiming = { start, end: nowMs() };
        carriers.push({ name: 'form fields', kind: 'strings', values: collected.fields });
      } else if (request.body !== undefined && request.body !== null) {
        const json = readJson(request.body);
        collected = json;
        carriers.push({ name: 'JSON body', kind: 'json', values: json.params });
      } else {
        throw new HttpProblem('invalid-request', 'A request body is required: multipart/form-data with the file field image, or JSON with imageUrl or imageBase64.');
      }
      const params = validateParams(carriers);
      const image = exactlyOneImage(collected.images);

      const out = await ctx.renderer.render(image, params, {
        signal: ctx.admission.signalOf(request),
        traceId: request.traceId,
        face: 'http',
        ...(request.span ? { span: request.span } : {}),
        ...(inputTiming ? { inputTiming } : {}),
      });
      return reply
        .code(200)
        .header('content-type', out.contentType)
        .header('content-disposition', `inline; filename="ascii.${out.extension}"`)
        .header('x-auto-director', autoDirectorHeader(out.director))
        .header('cache-control', 'no-store')
        .send(out.body);
    },
  });
}
