/** `GET /api/v1/a2v-handoff`: the public-safe handoff manifest (../handoff.ts). */
import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../context.js';
import { ENDPOINTS } from '../../contract/endpoints.js';
import { buildHandoffManifest } from '../../contract/handoff.js';
import { etagOf, sendDocument } from '../etag.js';

export async function handoffRoutes(app: FastifyInstance, opts: { ctx: AppContext }): Promise<void> {
  const text = JSON.stringify(buildHandoffManifest({
    receiverUrl: opts.ctx.config.receiverUrl,
    platformKeyConfigured: opts.ctx.config.platformKeyConfigured,
  }));
  const manifest = { text, etag: etagOf(text) };
  app.get(ENDPOINTS.handoff.path, async (request, reply) => sendDocument(request, reply, 'application/json; charset=utf-8', manifest));
}
