/** Entity tags for the documents served from memory (the studio's files, the discovery documents). */
import { createHash } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';

/** A strong ETag of `body`: its SHA-256, 27 base64url characters (160 bits). */
export function etagOf(body: string | Uint8Array): string {
  return `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`;
}

/**
 * If-None-Match against a strong ETag, by weak comparison (RFC 9110 §13.1.2: a cache or a proxy
 * that compresses, nginx's gzip, makes the tag weak, `W/"..."`); `*` matches any current document.
 */
export function notModified(header: string | undefined, etag: string): boolean {
  if (!header) return false;
  return header.split(',').some((t) => {
    const tag = t.trim();
    return tag === '*' || (tag.startsWith('W/') ? tag.slice(2) : tag) === etag;
  });
}

/** A document held in memory, with its tag. */
export interface TaggedDocument {
  readonly text: string;
  readonly etag: string;
}

/**
 * Adds `names` to the reply's Vary, keeping what is there (the CORS plugin's Origin, with a
 * V2A_CORS_ORIGINS list) and naming each field once, spelt as `names` spell it (@fastify/compress
 * appends a lower-case `accept-encoding`): a cache keyed on a Vary that lost Origin serves one
 * origin's Access-Control-Allow-Origin to another.
 */
export function addVary(reply: FastifyReply, names: readonly string[]): void {
  const current = reply.getHeader('vary');
  const fields = (Array.isArray(current) ? current.join(',') : String(current ?? '')).split(',').map((f) => f.trim()).filter(Boolean);
  if (fields.includes('*')) return;
  for (const name of names) {
    const at = fields.findIndex((f) => f.toLowerCase() === name.toLowerCase());
    if (at < 0) fields.push(name);
    else fields[at] = name;
  }
  if (fields.length) reply.header('vary', fields.join(', '));
}

/**
 * Sends a document cacheable for five minutes, with its ETag, so a cache (or a script) revalidates
 * it (304) once they are up: the discovery documents and the handoff manifest. `vary`: the request
 * headers the document is built from, added to the reply's Vary.
 */
export function sendDocument(request: FastifyRequest, reply: FastifyReply, type: string, doc: TaggedDocument, vary: readonly string[] = []): FastifyReply {
  reply.type(type).headers({ 'cache-control': 'public, max-age=300', etag: doc.etag });
  addVary(reply, vary);
  if (notModified(request.headers['if-none-match'], doc.etag)) return reply.code(304).send();
  return reply.send(doc.text);
}
