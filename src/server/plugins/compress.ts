/**
 * Compressed replies (@fastify/compress). A reply of a text-like type (text, ANSI, HTML, JSON,
 * SVG, Markdown, JavaScript, CSS, problem details, metrics) of 1 KiB or more is sent br, gzip or
 * deflate when the client's Accept-Encoding asks: a colour html render of 160 columns is a few
 * hundred KB, and a tenth of that coded. Never coded: image/png and the other types that are
 * compressed already, text/event-stream (each event must reach the client as it is written), and
 * a reply that carries a Content-Encoding already. V2A_COMPRESS=off (a proxy in front compresses)
 * leaves every reply as it is.
 *
 * - br at quality 4: on a 468 KB colour html render it takes 2.4 ms for 9.7% of the size, where
 *   brotli's own default, 11, takes 730 ms for 7.2% (gzip at its default level 6: 3.8 ms, 9.4%);
 *   quality 5 doubles the time for one point less.
 * - Up to the library's syncThreshold (4 KiB on a host with 3 or more cores) a body is coded in
 *   one call on the event loop; a larger one goes the library's stream way, with oneShot() below
 *   as its coder: one call on libuv's thread pool, off the event loop. The library's own coder, a
 *   zlib stream, is ended only once all its input has arrived, so a client that left before that
 *   (a few ms for a large render) left a zlib context open (about 1.4 MB for br) until a garbage
 *   collection. Here no zlib context outlives its call, none is held while a slow client reads,
 *   the send timeout (connections.ts, measured on the socket) bounds the reply as any other, and
 *   a connection that closes destroys its streams (Fastify the body, the library's pipeline the
 *   rest).
 * - Vary: Accept-Encoding on every reply of such a type, coded or not (a shared cache must not
 *   hand the coded copy to a client that accepts no coding), beside the Origin of CORS and the
 *   Host fields of the discovery documents.
 * - ETag: a coded body is not the identity one byte for byte, so it may not share its strong tag
 *   (RFC 9110 §8.8.3). To a client that accepts a coding the tag is weak, W/"...", whatever the
 *   reply (a 304, a HEAD, a body under the threshold): a 304 then carries the tag its 200 would
 *   (RFC 9110 §15.4.5). If-None-Match compares weakly (etag.ts), so either form gets the 304; a
 *   client that accepts no coding keeps the strong tag.
 * - Request bodies are not inflated: render and MCP refuse a Content-Encoding (read-body.ts).
 */
import { Transform } from 'node:stream';
import zlib from 'node:zlib';
import negotiate from '@fastify/accept-negotiator';
import compress from '@fastify/compress';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ServerConfig } from '../config.js';
import { addVary } from '../etag.js';

/**
 * The codings sent, preferred first when the client ranks them equally. zstd, which Node 22.15
 * adds, is left out: the same set on every Node.
 */
export const ENCODINGS = ['br', 'gzip', 'deflate'] as const;

/** Smallest body coded: below it the coding's framing and the work outweigh the bytes saved. */
export const COMPRESS_THRESHOLD = 1024;

/** brotli's quality (0 to 11); see above for the measurement. */
export const BROTLI_QUALITY = 4;

/**
 * Whether a reply of this Content-Type is worth coding: text (not text/event-stream), JSON and
 * XML (+json, +xml: problem details, SVG), JavaScript, icons. The library also codes what mime-db
 * calls compressible; of the types served here that adds none.
 */
export function compressible(contentType: string): boolean {
  const media = contentType.split(';', 1)[0]!.trim().toLowerCase();
  if (media === 'text/event-stream') return false;
  return media.startsWith('text/') || /[/+](?:json|xml)$/.test(media) || media === 'application/javascript' || media === 'image/x-icon';
}

/**
 * Whether an Accept-Encoding accepts a coding sent here: decided as the library decides what to
 * send (its own negotiator, `*` and x-gzip read as gzip), so a weak tag goes exactly to the
 * clients that would get a coded body were the reply large enough.
 */
export function acceptsCoding(header: string | undefined): boolean {
  if (!header) return false;
  return negotiate(header.toLowerCase().replace(/\*|x-gzip/g, 'gzip'), [...ENCODINGS]) !== null;
}

export async function registerCompress(app: FastifyInstance, config: ServerConfig): Promise<void> {
  if (!config.compress) return;
  await app.register(compress, {
    encodings: [...ENCODINGS],
    threshold: COMPRESS_THRESHOLD,
    customTypes: compressible,
    brotliOptions: { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: BROTLI_QUALITY } },
    // The library calls these with its brotliOptions or zlibOptions; the *Sync ones keep its
    // one-call way for small bodies (without them it would stream those too).
    zlib: {
      createBrotliCompress: oneShot((body, options, done) => zlib.brotliCompress(body, options, done)),
      createGzip: oneShot((body, options, done) => zlib.gzip(body, options, done)),
      createDeflate: oneShot((body, options, done) => zlib.deflate(body, options, done)),
      brotliCompressSync: zlib.brotliCompressSync,
      gzipSync: zlib.gzipSync,
      deflateSync: zlib.deflateSync,
    },
    globalDecompression: false,
  });
  // The library adds its onSend to each route; this one comes after it (a route's hooks run in
  // the order added), once the reply is coded or not. The HEAD route Fastify makes for a GET sets
  // the body's length and drops the body in an onSend hook of its own, which came before the
  // library's: a HEAD carried the identity length and no coding, where the GET it stands for is
  // coded (RFC 9110 section 9.3.2: the same fields; a cache may update a stored reply's from it).
  // That hook goes last, so a HEAD is coded as its GET (its length where the GET's is known).
  app.addHook('onRoute', (route) => {
    const hooks = route.onSend === undefined ? [] : Array.isArray(route.onSend) ? route.onSend : [route.onSend];
    const head = hooks.filter((hook) => hook.name === 'headRouteOnSendHandler');
    route.onSend = [...hooks.filter((hook) => !head.includes(hook)), varyAndTag, ...head];
  });
}

type Code = (body: Buffer, options: object, done: (err: Error | null, coded: Buffer) => void) => void;

/**
 * A coder for the library's stream way: keeps what is written and codes it in one call, on the
 * thread pool, when it ends. One that never ends (its reply gone first) holds no zlib context,
 * only the chunks, for the garbage collector.
 */
function oneShot(code: Code): (options?: object) => Transform {
  return (options = {}) => {
    const chunks: Buffer[] = [];
    return new Transform({
      transform(chunk: Buffer, _encoding, done) {
        chunks.push(chunk);
        done();
      },
      flush(done) {
        code(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks), options, done);
        chunks.length = 0;
      },
    });
  };
}

async function varyAndTag(request: FastifyRequest, reply: FastifyReply, payload: unknown): Promise<unknown> {
  const coding = reply.getHeader('content-encoding');
  const coded = coding !== undefined && coding !== 'identity';
  if (!coded && !compressible(String(reply.getHeader('content-type') ?? ''))) return payload;
  addVary(reply, ['Accept-Encoding']);
  const etag = reply.getHeader('etag');
  if (typeof etag === 'string' && !etag.startsWith('W/') && (coded || acceptsCoding(request.headers['accept-encoding']))) {
    reply.header('etag', `W/${etag}`);
  }
  return payload;
}
