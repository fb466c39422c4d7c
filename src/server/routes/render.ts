/**
 * `POST /api/v1/render`: one image in, character art out (interface.md §4.2).
 *
 * Carriers: `multipart/form-data` (file field `image`, render parameters and optionally `imageUrl`
 * as text fields) or `application/json` (`imageUrl` xor `imageBase64` plus render parameters);
 * render parameters also in the query string. Every other content type is 415.
 *
 * A form is read here as its raw chunks and parsed in a render worker with its parameters
 * (form-body.ts), so the multipart boundary search over the upload's bytes never runs on the
 * event loop; a form whose image is a URL comes back here to be fetched.
 *
 * Limits hold while the body streams in, so no request ever holds much more than the limit in
 * memory: a form stops at V2A_MAX_IMAGE_BYTES plus FORM_OVERHEAD_BYTES for its text fields (413,
 * connection closed, the rest of the body unread; an upload over V2A_MAX_IMAGE_BYTES in a shorter
 * form is 413 once the worker reads it), the JSON body at the size of base64 of that many bytes
 * (413), and a fetched imageUrl body at V2A_MAX_IMAGE_BYTES (413). A request is admitted before
 * its body is read (admission.ts: 503 when every slot is taken), and a JSON body's keys, nesting
 * and duplicate keys are checked while it is parsed (json-body.ts).
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { jsonBodyLimit } from '../config.js';
import type { AppContext } from '../context.js';
import { FORM_OVERHEAD_BYTES } from '../form-body.js';
import { limitedRoute } from '../plugins/rate-limit.js';
import { ENDPOINTS } from '../../contract/endpoints.js';
import { HttpProblem } from '../problem.js';
import { parseJsonBounded } from '../json-body.js';
import { nowMs } from '../telemetry/tracing.js';
import {
  autoDirectorHeader, exactlyOneImage, invalidImageField, jsonImageInputs, validateParams, type JsonImageInput, type ParamCarrier,
} from '../render-service.js';

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Requests whose Content-Type Fastify matched as multipart/form-data (its own media-type parsing). */
const forms = new WeakSet<FastifyRequest>();

/**
 * A multipart body's raw chunks, as they came off the socket (not joined, not parsed: a render
 * worker parses the form, form-body.ts). Stops reading the moment the body passes `maxBytes`,
 * the image limit plus the form's room for its other fields (FORM_OVERHEAD_BYTES): 413, the
 * connection closed after the reply, the rest of the body never read.
 */
function readBody(request: FastifyRequest, maxImageBytes: number): Promise<{ chunks: Buffer[]; byteLength: number }> {
  const maxBytes = maxImageBytes + FORM_OVERHEAD_BYTES;
  const raw = request.raw;
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let total = 0;
    const done = (err?: unknown) => {
      raw.off('data', onData);
      raw.off('end', onEnd);
      raw.off('error', onError);
      raw.off('close', onClose);
      if (err === undefined) resolve({ chunks, byteLength: total });
      else reject(err);
    };
    const onData = (chunk: Buffer) => {
      total += chunk.length;
      if (total <= maxBytes) return void chunks.push(chunk);
      raw.pause();
      chunks.length = 0;
      done(new HttpProblem('image-too-large', `The upload is larger than the ${maxImageBytes}-byte image limit (with ${FORM_OVERHEAD_BYTES} bytes more for the form's other fields).`, {
        errors: [{ parameter: 'image', message: `larger than ${maxImageBytes} bytes` }],
      }));
    };
    const onEnd = () => done();
    const onError = (err: Error) => done(err);
    // The client went away mid-body: nothing to answer (admission.ts frees the slot).
    const onClose = () => { if (!raw.complete) done(new HttpProblem('invalid-request', 'The request body ended early.')); };
    raw.on('data', onData);
    raw.once('end', onEnd);
    raw.once('error', onError);
    raw.once('close', onClose);
  });
}

function readJson(body: unknown): { images: JsonImageInput[]; params: Record<string, unknown> } {
  if (!isPlainObject(body)) {
    throw new HttpProblem('invalid-request', 'The JSON body must be an object: {"imageUrl": "https://..."} or {"imageBase64": "..."} plus render parameters.');
  }
  const { imageUrl, imageBase64, image, ...params } = body;
  if (image !== undefined) throw invalidImageField('image', 'image is the multipart/form-data file field; in a JSON body send imageUrl or imageBase64');
  return { images: jsonImageInputs({ imageUrl, imageBase64 }), params };
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
  // A form is read raw in the handler (readBody) and parsed in a render worker.
  app.addContentTypeParser('multipart/form-data', (request, _payload, done) => {
    forms.add(request);
    done(null);
  });

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
      const signal = ctx.admission.signalOf(request);
      const call = {
        signal,
        traceId: request.traceId,
        face: 'http' as const,
        ...(request.span ? { span: request.span } : {}),
      };
      let out;
      if (forms.has(request)) {
        const start = nowMs();
        const body = await readBody(request, config.maxImageBytes);
        out = await ctx.renderer.renderForm(
          { chunks: body.chunks, byteLength: body.byteLength, contentType: request.headers['content-type']!, query },
          { ...call, inputTiming: { start, end: nowMs() } },
        );
      } else if (request.body !== undefined && request.body !== null) {
        const json = readJson(request.body);
        const carriers: ParamCarrier[] = [{ name: 'query string', kind: 'strings', values: query }, { name: 'JSON body', kind: 'json', values: json.params }];
        const params = validateParams(carriers);
        out = await ctx.renderer.render(exactlyOneImage(json.images), params, call);
      } else {
        throw new HttpProblem('invalid-request', 'A request body is required: multipart/form-data with the file field image, or JSON with imageUrl or imageBase64.');
      }
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
