/**
 * `POST /api/v1/render`: one image in, character art out (interface.md §4.2).
 *
 * Carriers: `multipart/form-data` (file field `image`, render parameters and optionally `imageUrl`
 * as text fields) or `application/json` (`imageUrl` xor `imageBase64` plus render parameters);
 * render parameters also in the query string. Every other content type is 415.
 *
 * The body is read here as its raw chunks and parsed in a render worker with its parameters
 * (request-body.ts): neither a form's boundary search nor a JSON body's decoding, parsing and
 * base64 text runs on the event loop. A body whose image is a URL comes back here to be fetched.
 *
 * Limits hold while the body streams in, so no request ever holds much more than the limit in
 * memory: a form stops at V2A_MAX_IMAGE_BYTES plus FORM_OVERHEAD_BYTES for its text fields (413,
 * connection closed, the rest of the body unread; an upload over V2A_MAX_IMAGE_BYTES in a shorter
 * form is 413 once the worker reads it), the JSON body at the size of base64 of that many bytes
 * (413), and a fetched imageUrl body at V2A_MAX_IMAGE_BYTES (413); a Content-Length over the cap
 * is refused before reading. A request is admitted before its body is read (admission.ts: 503
 * when every slot is taken), and a JSON body's keys, nesting and duplicate keys are checked while
 * it is parsed (json-body.ts).
 *
 * What the headers decide is refused before any of the body is read (no 100 Continue, the
 * connection closed), in this order: the Content-Type (415), the query string (400), a missing
 * body (400), a Content-Encoding or a JSON charset (415), a declared length over the cap (413).
 * So a bad query wins over a body over its cap, whether its length was declared or is found
 * while it streams; the query is checked again with the body's parameters (given twice: 400).
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../context.js';
import { limitedRoute } from '../plugins/rate-limit.js';
import { untilAnswered } from '../plugins/errors.js';
import { readBody } from '../read-body.js';
import { ENDPOINTS } from '../../contract/endpoints.js';
import { HttpProblem } from '../problem.js';
import { queryCarrier, validateParams } from '../render-inputs.js';
import { nowMs } from '../telemetry/tracing.js';
import { autoDirectorHeader } from '../render-service.js';
import { isRecord } from '../../core/args.js';

/**
 * The body type of each request whose Content-Type Fastify matched (its own media-type parsing:
 * any case, parameters and spaces) as one this route reads.
 */
const bodyTypes = new WeakMap<FastifyRequest, 'form' | 'json'>();

function queryParams(request: FastifyRequest): Record<string, unknown> {
  const query = (isRecord(request.query) ? request.query : {}) as Record<string, unknown>;
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

  // Only JSON and multipart here: Fastify answers every other content type with 415. Both are
  // read raw in the handler (readBody), then parsed (request-body.ts) in a render worker when
  // they are large.
  app.removeAllContentTypeParsers();
  for (const [mediaType, type] of [['application/json', 'json'], ['multipart/form-data', 'form']] as const) {
    app.addContentTypeParser(mediaType, (request, _payload, done) => {
      bodyTypes.set(request, type);
      done(null);
    });
  }

  // Admission before the body is read (and before the rate limit: a refusal spends no token): a body waiting for a worker holds
  // up to maxImageBytes of memory, so at most workers + queueLimit render and MCP requests may be
  // in flight (reading, queued or running); the slot lives as long as the socket (admission.ts).
  const admit = async (request: FastifyRequest, reply: FastifyReply) => { ctx.admission.admit(request, reply); };

  app.route({
    method: 'POST',
    url: ENDPOINTS.render.path,
    ...limitedRoute(ctx.limiter, admit),
    handler: untilAnswered(async (request: FastifyRequest, reply: FastifyReply) => {
      const query = queryParams(request);
      // The query came with the headers: a bad one is refused before any of the body is read
      // (so before 100 Continue, and ahead of a body over its cap, however it is framed).
      validateParams([queryCarrier(query)]);
      const type = bodyTypes.get(request);
      if (!type) {
        const message = 'no request body: send multipart/form-data with the file field image, or JSON with imageUrl or imageBase64';
        throw new HttpProblem('invalid-request', 'A request body is required: multipart/form-data with the file field image, or JSON with imageUrl or imageBase64.', {
          errors: (['image', 'imageUrl', 'imageBase64'] as const).map((parameter) => ({ parameter, message })),
        });
      }
      const start = nowMs();
      const body = await readBody(request.raw, type, config.maxImageBytes);
      if (type === 'json' && body.byteLength === 0) throw new HttpProblem('invalid-request', 'The JSON body is empty.');
      const out = await ctx.renderer.renderBody(
        { type, chunks: body.chunks, byteLength: body.byteLength, contentType: request.headers['content-type'] ?? '', query },
        {
          signal: ctx.admission.signalOf(request),
          traceId: request.traceId,
          face: 'http',
          ...(request.span ? { span: request.span } : {}),
          inputTiming: { start, end: nowMs() },
        },
      );
      if (reply.sent) return undefined;
      return reply
        .code(200)
        .header('content-type', out.contentType)
        .header('content-disposition', `inline; filename="ascii.${out.extension}"`)
        .header('x-auto-director', autoDirectorHeader(out.director))
        .header('cache-control', 'no-store')
        .send(Buffer.from(out.body.buffer, out.body.byteOffset, out.body.byteLength));
    }),
  });
}
