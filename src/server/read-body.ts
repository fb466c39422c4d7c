/**
 * A request body as the raw chunks that came off the socket: not joined, decoded nor parsed (the
 * render route's bodies are parsed by request-body.ts, the MCP endpoint's by json-lift.ts and
 * json-body.ts), each chunk the whole of its ArrayBuffer, so a render worker can be handed them
 * without a copy.
 */
import type { IncomingMessage } from 'node:http';
import { jsonBodyLimit } from './config.js';
import { FORM_OVERHEAD_BYTES } from './form-body.js';
import { HttpProblem } from './problem.js';

export type BodyType = 'form' | 'json';

/** The problem of a body over its cap (the reply closes the connection; the rest is never read). */
function overCap(type: BodyType, maxImageBytes: number, cap: number): HttpProblem {
  if (type === 'json') {
    return new HttpProblem('request-too-large', `The JSON body is larger than its ${cap}-byte limit: one image of at most ${maxImageBytes} bytes (V2A_MAX_IMAGE_BYTES) as base64, with room for the other fields. The images of an MCP batch share the limit: send large ones in calls of their own.`, {
      // The field that makes a body this large (the form's refusal names its image too).
      errors: [{ parameter: 'imageBase64', message: `with the other fields, larger than the ${cap}-byte JSON body limit` }],
    });
  }
  return new HttpProblem('image-too-large', `The upload is larger than the ${maxImageBytes}-byte image limit (with ${FORM_OVERHEAD_BYTES} bytes more for the form's other fields).`, {
    errors: [{ parameter: 'image', message: `larger than ${maxImageBytes} bytes` }],
  });
}

/**
 * A compressed body is refused, not read as if it were plain (its bytes would be reported as bad
 * JSON or a bad form): bodies here are mostly an image already compressed, and inflating one would
 * need a bound of its own (RFC 9110 §8.4: 415 for a content coding the server does not accept).
 * The same holds for a transfer coding before `chunked` (`gzip, chunked`): Node's parser undoes
 * the chunking and hands on the gzip bytes as if they were the body.
 */
function unsupportedEncoding(header: string | undefined, name: 'Content-Encoding' | 'Transfer-Encoding'): HttpProblem | undefined {
  if (header === undefined) return undefined;
  const plain = name === 'Content-Encoding' ? 'identity' : 'chunked';
  const codings = header.split(',').map((c) => c.trim().toLowerCase()).filter((c) => c && c !== plain);
  if (!codings.length) return undefined;
  return new HttpProblem('unsupported-media-type', `${name} ${JSON.stringify(codings.join(', ').slice(0, 60))} is not accepted: send the body uncompressed.`, {
    errors: [{ parameter: name, message: `only ${plain} is accepted` }],
    ...(name === 'Content-Encoding' ? { headers: { 'accept-encoding': 'identity' } } : {}),
  });
}

/**
 * A JSON body declared in another charset than UTF-8 is refused, not read as UTF-8 (its text would
 * be mojibake, or a syntax error that blames the JSON): RFC 8259 §8.1 makes JSON between systems
 * UTF-8, and US-ASCII is a subset of it.
 */
function unsupportedCharset(contentType: string | undefined): HttpProblem | undefined {
  const charset = /;\s*charset\s*=\s*"?([^";\s]*)/i.exec(contentType ?? '')?.[1]?.toLowerCase();
  if (charset === undefined || charset === 'utf-8' || charset === 'utf8' || charset === 'us-ascii') return undefined;
  return new HttpProblem('unsupported-media-type', `Content-Type charset ${JSON.stringify(charset.slice(0, 40))} is not accepted: a JSON body is UTF-8.`, {
    errors: [{ parameter: 'Content-Type', message: 'charset must be utf-8' }],
  });
}

/**
 * The body's chunks, refused (overCap) as soon as it is known to pass its cap: from a
 * Content-Length header before reading, else the moment the bytes read pass it. The cap: for a
 * form, the image limit plus the room for its other fields; for JSON, base64 of the limit.
 */
export function readBody(raw: IncomingMessage, type: BodyType, maxImageBytes: number): Promise<{ chunks: Buffer[]; byteLength: number }> {
  const encoding = unsupportedEncoding(raw.headers['content-encoding'], 'Content-Encoding') ?? unsupportedEncoding(raw.headers['transfer-encoding'], 'Transfer-Encoding');
  if (encoding !== undefined) return Promise.reject(encoding);
  const charset = type === 'json' ? unsupportedCharset(raw.headers['content-type']) : undefined;
  if (charset !== undefined) return Promise.reject(charset);
  const cap = type === 'form' ? maxImageBytes + FORM_OVERHEAD_BYTES : jsonBodyLimit(maxImageBytes);
  const declared = Number(raw.headers['content-length']);
  if (declared > cap) return Promise.reject(overCap(type, maxImageBytes, cap));
  // Already read to its end (a request without a body that something drained): nothing to wait for.
  if (raw.readableEnded) return Promise.resolve({ chunks: [], byteLength: 0 });
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
      if (total <= cap) return void chunks.push(chunk);
      raw.pause();
      chunks.length = 0;
      done(overCap(type, maxImageBytes, cap));
    };
    const onEnd = () => done();
    // The client went away mid-body (Node's 'aborted', ECONNRESET): nothing to answer (admission.ts
    // frees the slot), and not a server fault to log as one.
    const endedEarly = (cause?: unknown) => new HttpProblem('invalid-request', 'The request body ended early.', cause === undefined ? {} : { cause });
    const onError = (err: Error) => done(endedEarly(err));
    const onClose = () => { if (!raw.complete) done(endedEarly()); };
    raw.on('data', onData);
    raw.once('end', onEnd);
    raw.once('error', onError);
    raw.once('close', onClose);
  });
}
