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
 * Sends a document cacheable for five minutes, with its ETag, so a cache (or a script) revalidates
 * it (304) once they are up: the discovery documents and the handoff manifest.
 */
export function sendDocument(request: FastifyRequest, reply: FastifyReply, type: string, doc: TaggedDocument, headers: Readonly<Record<string, string>> = {}): FastifyReply {
  reply.type(type).headers({ 'cache-control': 'public, max-age=300', etag: doc.etag, ...headers });
  if (notModified(request.headers['if-none-match'], doc.etag)) return reply.code(304).send();
  return reply.send(doc.text);
}
