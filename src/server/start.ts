/**
 * Starting and stopping the server, shared by `npm start` (main.ts) and `v2a serve`.
 *
 * Graceful shutdown on SIGTERM/SIGINT: new work is refused (503 `shutting-down`, health reports
 * `shutting_down`), the listener stops accepting (so new connections, probes included, are
 * refused: in Kubernetes the preStop sleep has already taken the pod out of its Service),
 * connections with no request in progress close at once (connections.ts), in-flight requests
 * (renders included) finish, then the worker pool closes and the spans still batched are exported
 * (PLATFORM_API_KEY set). V2A_SHUTDOWN_TIMEOUT_MS bounds all of it: when it runs out, renders
 * still waiting or running are answered 503 `shutting-down` (pool.stopAll) and the connections
 * left are cut. A second signal exits at once.
 *
 * V2A_SHUTDOWN_DELAY_MS (outside Kubernetes, whose preStop sleep does the same) comes first: for
 * that long only health and readiness change (503), so a load balancer probing readiness stops
 * sending work while the listener still serves it; V2A_SHUTDOWN_TIMEOUT_MS counts from its end.
 * A second signal during the delay ends it (the drain starts at once); a third exits.
 */
import type { FastifyInstance } from 'fastify';
import { buildApp, type BuildAppOptions } from './app.js';
import { effectiveConfig, platformKeyOf, strayVariablesOf, type ServerConfig } from './config.js';
import { ENDPOINTS } from '../contract/endpoints.js';
import { shuttingDown } from './problem.js';
import { releaseHeldSignal } from './signal-latch.js';

export interface RunningServer {
  readonly app: FastifyInstance;
  /** e.g. http://127.0.0.1:8080 */
  readonly url: string;
  /** Starts (or joins) the graceful shutdown, V2A_SHUTDOWN_DELAY_MS first. Resolves `true` when it finished in time. */
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
  // One handler from the first step to the end: a signal while the app starts (its workers take
  // a second or two) is kept, and the shutdown runs once it is up. Swapping an early handler for a
  // later one lost signals: Node stops watching a signal when its last listener goes. A second
  // signal exits at once. main.cts holds signals from the process's first step (signal-latch.ts).
  let early: NodeJS.Signals | undefined;
  let shutdown: ((reason?: string) => Promise<boolean>) | undefined;
  let shutting: Promise<boolean> | undefined;
  // Set while V2A_SHUTDOWN_DELAY_MS runs: ends it.
  let endDelay: (() => void) | undefined;
  const onSignal = (signal: NodeJS.Signals): void => {
    if (endDelay) {
      app.log.warn({ signal }, 'second signal: ending V2A_SHUTDOWN_DELAY_MS, draining now');
      endDelay();
      return;
    }
    if (shutting || (!shutdown && early)) {
      if (shutdown) app.log.warn({ signal }, 'second signal: exiting now');
      process.exit(1);
    }
    if (shutdown) void shutdown(signal);
    else early = signal;
  };
  if (handleSignals) {
    process.on('SIGTERM', onSignal);
    process.on('SIGINT', onSignal);
    early = releaseHeldSignal();
  }
  const offSignals = () => {
    process.off('SIGTERM', onSignal);
    process.off('SIGINT', onSignal);
  };
  let app: FastifyInstance;
  let url: string;
  try {
    app = await buildApp(config, buildOptions);
    url = await app.listen({ port: config.port, host: config.host });
  } catch (err) {
    offSignals();
    throw err;
  }
  const { telemetry, receiver } = app.v2a;
  // Every setting as it took effect, secrets only as set/unset (config.ts effectiveConfig).
  const effective = Object.fromEntries(effectiveConfig(config).map((e) => [e.name, e.secret ? (e.set ? '(set)' : '(unset)') : e.value]));
  app.log.info({ url, node: process.version, config: effective }, 'effective configuration');
  if (config.threadPoolSize <= config.workers) {
    app.log.warn({ threadPoolSize: config.threadPoolSize, workers: config.workers },
      'libuv\'s thread pool (UV_THREADPOOL_SIZE) is no larger than V2A_WORKERS: decodes wait for one another. Start the server with npm start (dist/server/main.cjs) or v2a serve, or set UV_THREADPOOL_SIZE');
  }
  const slots = config.workers + config.queueLimit;
  if (config.maxConnections <= slots) {
    app.log.warn({ maxConnections: config.maxConnections, slots },
      'V2A_MAX_CONNECTIONS (set, or from the open-file limit) is no more than the admission slots (V2A_WORKERS + V2A_QUEUE_LIMIT): some slots no client can reach, and at full load new connections, health probes included, are closed unanswered. Raise it (or the open-file limit, ulimit -n), or lower V2A_QUEUE_LIMIT');
  }
  if (config.clientSlots > slots) {
    app.log.warn({ clientSlots: config.clientSlots, slots },
      'V2A_CLIENT_SLOTS is more than the admission slots (V2A_WORKERS + V2A_QUEUE_LIMIT): one client may take them all, as with 0 (no cap of its own)');
  }
  if (config.metrics) app.log.info({ path: ENDPOINTS.metrics.path, key: platformKeyOf(config) !== undefined }, 'serving Prometheus metrics (V2A_METRICS)');
  // The configuration line names an OTLP endpoint either way: say whether spans go there.
  if (telemetry.exporting) app.log.info({ endpoint: telemetry.endpoint }, 'exporting spans over OTLP/HTTP (PLATFORM_API_KEY is set)');
  else app.log.info({ reason: telemetry.disabledReason }, 'span export off: the OTEL_* settings are not used');
  if (receiver) app.log.info({ statusUrl: receiver.url, intervalMs: receiver.intervalMs }, 'checking the handoff receiver\'s status endpoint with the platform key');
  for (const stray of strayVariablesOf(config)) app.log.warn(stray);
  if (config.testAllowLoopbackFetch) app.log.warn('V2A_TEST_ALLOW_LOOPBACK_FETCH is on: imageUrl may reach loopback addresses. This setting is for tests only.');

  let resolveClosed!: (graceful: boolean) => void;
  const closed = new Promise<boolean>((resolve) => (resolveClosed = resolve));

  const begin = (reason: string, delayMs: number): Promise<boolean> => {
    shutting ??= (async () => {
      if (delayMs > 0) {
        app.v2a.leaving = true;
        app.log.info({ reason, delayMs }, 'shutting down: readiness answers 503 for V2A_SHUTDOWN_DELAY_MS, requests are still served');
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, delayMs);
          endDelay = () => {
            clearTimeout(timer);
            resolve();
          };
        });
        endDelay = undefined;
      }
      app.v2a.closing = true;
      app.log.info({ reason, pool: app.v2a.pool.stats() }, 'shutting down: finishing in-flight requests');
      // The timeout bounds the whole exit: the drain gets all of it but a tenth (at most 1 s), kept
      // for stopping the pool and exporting the last spans once the drain is over or cut short.
      const timeoutMs = config.shutdownTimeoutMs;
      const flushMs = Math.min(1000, Math.floor(timeoutMs / 10));
      const closing = app.close().then(() => true as const, (err: unknown) => {
        app.log.error({ err }, 'closing the server failed');
        return true as const;
      });
      let graceful = (await within(closing, timeoutMs - flushMs)) ?? false;
      if (!graceful) {
        // Only cutting a request makes the shutdown forced: an idle server whose pool or span
        // export is slower to stop than a very short timeout still drained gracefully.
        const cut = app.v2a.connections.busy;
        if (cut > 0) {
          app.log.warn({ timeoutMs, requests: cut }, 'shutdown timed out: stopping the renders still waiting or running (503 shutting-down), then closing the remaining connections');
          // A cut connection gave its client nothing to retry on (and a gateway does not retry a
          // POST it sees reset): renders answer 503 with Retry-After, for half of the time kept
          // back; what is still in progress then (a body arriving, a reply being sent) is cut.
          app.v2a.pool.stopAll(shuttingDown('The server shut down before this render finished; retry on another instance.'));
          await within(app.v2a.connections.settled(), flushMs / 2);
          app.v2a.cutting = true;
          app.server.closeAllConnections();
        }
        // app.close() goes on (the pool, then the span export); the spans batched so far get what
        // is left of the timeout, and no more.
        const done = await within(Promise.allSettled([closing, app.v2a.telemetry.shutdown()]), flushMs);
        if (cut === 0) {
          graceful = true;
          if (!done) app.log.warn({ timeoutMs }, 'shut down before the worker pool and the span export had stopped (V2A_SHUTDOWN_TIMEOUT_MS)');
        }
      }
      if (graceful) app.log.info('shut down');
      offSignals();
      resolveClosed(graceful);
      return graceful;
    })();
    return shutting;
  };
  shutdown = (reason = 'shutdown') => begin(reason, config.shutdownDelayMs);

  // A server still starting was never ready: no delay.
  if (early) void begin(`${early} while starting`, 0);
  return { app, url, shutdown, closed };
}

/** `work`'s result, or undefined once `ms` have passed (the timer does not outlive `work`). */
async function within<T>(work: Promise<T>, ms: number): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([work, new Promise<undefined>((resolve) => { timer = setTimeout(() => resolve(undefined), ms); })]);
  } finally {
    clearTimeout(timer);
  }
}

/** Why an address cannot be listened on, in words, for the listen errors a setting causes. */
const LISTEN_ERRORS: Readonly<Record<string, string>> = {
  EADDRINUSE: 'the address is already in use (another server on that port?)',
  EACCES: 'permission denied (ports below 1024 need privileges)',
  EADDRNOTAVAIL: 'the address is not one of this machine\'s',
  ENOTFOUND: 'no such host',
  EAI_AGAIN: 'the host name could not be resolved now',
};

/**
 * `cannot listen on host:port: why` when `err` is a listen error of the configured address (the
 * PORT / HOST given: a setting, exit 2, not a bug); undefined for anything else.
 */
export function listenProblem(err: unknown, config: Pick<ServerConfig, 'host' | 'port'>): string | undefined {
  const why = LISTEN_ERRORS[(err as NodeJS.ErrnoException | undefined)?.code ?? ''];
  return why && `cannot listen on ${config.host}:${config.port}: ${why}`;
}
