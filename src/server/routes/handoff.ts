/** `GET /api/v1/a2v-handoff`: the public-safe handoff manifest (../handoff.ts). */
import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../context.js';
import { ENDPOINTS } from '../../contract/endpoints.js';
import { buildHandoffManifest } from '../../contract/handoff.js';

export async function handoffRoutes(app: FastifyInstance, opts: { ctx: AppContext }): Promise<void> {
  const manifest = JSON.stringify(buildHandoffManifest({
    receiverUrl: opts.ctx.config.receiverUrl,
    platformKeyConfigured: opts.ctx.config.platformKeyConfigured,
  }));
  app.get(ENDPOINTS.handoff.path, async (_request, reply) =>
    reply.type('application/json; charset=utf-8').header('cache-control', 'public, max-age=300').send(manifest));
}
