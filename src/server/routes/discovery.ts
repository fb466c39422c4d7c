/**
 * Discovery documents: `GET /api/v1/agent`, `/api/openapi.json`, `/llms.txt`, `/llms-full.txt`,
 * `/api/v1/interoperability`. Generated per base URL (V2A_PUBLIC_URL, else the request's own)
 * and cached per base URL.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { baseUrl, type AppContext } from '../context.js';
import { buildAgentManifest } from '../docs/agent.js';
import { ENDPOINTS } from '../../contract/endpoints.js';
import { buildInteroperability } from '../docs/interoperability.js';
import { buildLlmsFullTxt, buildLlmsTxt } from '../docs/llms.js';
import { buildOpenApi } from '../docs/openapi.js';
import { etagOf, sendDocument, type TaggedDocument } from '../etag.js';

const MAX_CACHED_BASES = 16;

function cached(ctx: AppContext, build: (base: string) => string) {
  const cache = new Map<string, TaggedDocument>();
  return (request: FastifyRequest): TaggedDocument => {
    const base = baseUrl(ctx, request);
    let doc = cache.get(base);
    if (doc === undefined) {
      const text = build(base);
      doc = { text, etag: etagOf(text) };
      if (cache.size >= MAX_CACHED_BASES) cache.delete(cache.keys().next().value!);
      cache.set(base, doc);
    }
    return doc;
  };
}

export async function discoveryRoutes(app: FastifyInstance, opts: { ctx: AppContext }): Promise<void> {
  const { ctx } = opts;
  const { config } = ctx;
  const docs: Array<[string, string, (request: FastifyRequest) => TaggedDocument]> = [
    [ENDPOINTS.agent.path, 'application/json; charset=utf-8', cached(ctx, (b) => JSON.stringify(buildAgentManifest(config, b)))],
    [ENDPOINTS.openapi.path, 'application/json; charset=utf-8', cached(ctx, (b) => JSON.stringify(buildOpenApi(config, b)))],
    [ENDPOINTS.interoperability.path, 'application/json; charset=utf-8', cached(ctx, (b) => JSON.stringify(buildInteroperability(config, b)))],
    [ENDPOINTS.llms.path, 'text/markdown; charset=utf-8', cached(ctx, (b) => buildLlmsTxt(config, b))],
    [ENDPOINTS.llmsFull.path, 'text/markdown; charset=utf-8', cached(ctx, (b) => buildLlmsFullTxt(config, b))],
  ];
  // Built from the request's own address unless V2A_PUBLIC_URL fixes it.
  const vary = config.publicUrl ? [] : ['Host', 'X-Forwarded-Host', 'X-Forwarded-Proto'];
  for (const [path, type, body] of docs) {
    app.get(path, async (request: FastifyRequest, reply: FastifyReply) => sendDocument(request, reply, type, body(request), vary));
  }
}
