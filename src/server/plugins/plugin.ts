/**
 * Plugins of this server that must apply to the whole application (hooks, error handlers,
 * decorators) opt out of Fastify's encapsulation the way `fastify-plugin` does it: with the
 * `skip-override` symbol. Route plugins stay encapsulated (their own content-type parsers and
 * limits).
 */
import type { FastifyInstance, FastifyPluginAsync } from 'fastify';

export function globalPlugin<Options extends object>(
  name: string,
  fn: (app: FastifyInstance, opts: Options) => Promise<void>,
): FastifyPluginAsync<Options> {
  const plugin = fn as FastifyPluginAsync<Options> & Record<symbol, unknown>;
  plugin[Symbol.for('skip-override')] = true;
  plugin[Symbol.for('fastify.display-name')] = name;
  return plugin;
}
