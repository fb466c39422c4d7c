/**
 * Starting and stopping the server, shared by `npm start` (main.ts) and `v2a serve`.
 *
 * Graceful shutdown on SIGTERM/SIGINT: new work is refused (503 `shutting-down`, health reports
 * `shutting_down`), the listener stops accepting, idle keep-alive connections close, in-flight
 * requests (renders included) finish, then the worker pool closes and the spans still batched are
 * exported (PLATFORM_API_KEY set). If that takes longer than
 * V2A_SHUTDOWN_TIMEOUT_MS, remaining connections are cut. A second signal exits at once.
 */
import type { FastifyInstance } from 'fastify';
import { buildApp, type BuildAppOptions } from './app.js';
import { effectiveConfig, platformKeyOf, type ServerConfig } from './config.js';
import { ENDPOINTS } from '../contract/endpoints.js';

export interface RunningServer {
  readonly app: FastifyInstance;
  /** e.g. http://127.0.0.1:8080 */
  readonly url: string;
  /** Starts (or joins) the graceful shutdown. Resolves `true` when it finished in time. */
  shutdown(reason?: string): Promise<boolean>;
  /** Resolves when the server has shut down: `true` graceful, `false` forced. */
  readonly closed: Promise<boolean>;
}

export interface StartOptions extends BuildAppOptions {
  /** Install SIGTERM/SIGINT handlers (default true). */
  handleSignals?: boolean;
}

export async function startServer(config: ServerConfig, options: StartOptions = {}): Promise<RunningServer> {
  const { handleSignals = true, ...buildOptions } = options;
  const app = await buildApp(config, buildOptions);
  const url = await app.listen({ port: config.port, host: config.host });
  const { telemetry, receiver } = app.v2a;
  // Every setting as it took effect, secrets only as set/unset (config.ts effectiveConfig).
  const effective = Object.fromEntries(effectiveConfig(config).map((e) => [e.name, e.secret ? (e.set ? '(set)' : '(unset)') : e.value]));
  app.log.info({ url, node: process.version, config: effective }, 'effective configuration');
  if (config.threadPoolSize <= config.workers) {
    app.log.warn({ threadPoolSize: config.threadPoolSize, workers: config.workers },
      'libuv\'s thread pool (UV_THREADPOOL_SIZE) is no larger than V2A_WORKERS: decodes wait for one another. Start the server with npm start (dist/server/main.cjs) or v2a serve, or set UV_THREADPOOL_SIZE');
  }
  if (config.metrics) app.log.info({ path: ENDPOINTS.metrics.path, key: platformKeyOf(config) !== undefined }, 'serving Prometheus metrics (V2A_METRICS)');
  if (telemetry.exporting) app.log.info({ endpoint: telemetry.endpoint }, 'exporting spans over OTLP/HTTP (PLATFORM_API_KEY is set)');
  if (receiver) app.log.info({ statusUrl: receiver.url, intervalMs: receiver.intervalMs }, 'checking the handoff receiver\'s status endpoint with the platform key');
  if (config.testAllowLoopbackFetch) app.log.warn('V2A_TEST_ALLOW_LOOPBACK_FETCH is on: imageUrl may reach loopback addresses. This setting is for tests only.');

  let resolveClosed!: (graceful: boolean) => void;
  const closed = new Promise<boolean>((resolve) => (resolveClosed = resolve));
  let shutting: Promise<boolean> | undefined;

  const onSignal = (signal: NodeJS.Signals): void => {
    if (shutting) {
      app.log.warn({ signal }, 'second signal: exiting now');
      process.exit(1);
    }
    void shutdown(signal);
  };

  function shutdown(reason = 'shutdown'): Promise<boolean> {
    shutting ??= (async () => {
      app.v2a.closing = true;
      app.log.info({ reason, pool: app.v2a.pool.stats() }, 'shutting down: finishing in-flight requests');
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<false>((resolve) => {
        timer = setTimeout(() => resolve(false), config.shutdownTimeoutMs);
        timer.unref();
      });
      const graceful = await Promise.race([app.close().then(() => true as const), timeout]);
      clearTimeout(timer);
      if (!graceful) {
        app.log.warn({ timeoutMs: config.shutdownTimeoutMs }, 'shutdown timed out: closing remaining connections');
        app.server.closeAllConnections();
        await app.v2a.pool.close().catch(() => {});
        await app.v2a.telemetry.shutdown().catch(() => {});
      } else {
        app.log.info('shut down');
      }
      if (handleSignals) {
        process.off('SIGTERM', onSignal);
        process.off('SIGINT', onSignal);
      }
      resolveClosed(graceful);
      return graceful;
    })();
    return shutting;
  }

  if (handleSignals) {
    process.on('SIGTERM', onSignal);
    process.on('SIGINT', onSignal);
  }
  return { app, url, shutdown, closed };
}
