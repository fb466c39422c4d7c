/**
 * `v2a serve [--port <n>] [--host <address>]`: runs the HTTP + MCP service in the foreground until
 * SIGTERM or Ctrl-C (graceful shutdown, exit 0). Every other setting is an environment variable;
 * `v2a serve --settings` lists them with their defaults. The server modules load only when the
 * command runs.
 */
import type { Command } from 'commander';
import { V2aError } from '../core/errors.js';
import { sizeThreadPool } from '../settings/thread-pool.js';
import { importModule } from './import-module.js';
import { integerFlag, once, usageError } from './terminal.js';

interface ServeOpts {
  port?: string;
  host?: string;
  settings?: boolean;
}

/** Errors of listen() that the address given causes, as told to the user. */
async function serveAction(cmd: Command): Promise<void> {
  const opts = cmd.opts<ServeOpts>();
  // First: importing the server's modules below is the thread pool's first use (thread-pool.ts).
  // Only the built CLI, one CommonJS bundle, gets here with the pool unused; from source or from
  // tsc's ES modules it is too late, and the server then reports libuv's 4 and warns.
  if (!opts.settings && import.meta.url.endsWith('.cjs')) sizeThreadPool(process.env);
  const { ConfigError, loadConfig, settingsText } = await importModule<typeof import('../server/config.js')>('../server/config.js');
  if (opts.settings) {
    process.stdout.write(settingsText());
    return;
  }
  const env: Record<string, string | undefined> = { ...process.env };
  if (opts.port !== undefined) {
    env.PORT = String(integerFlag('--port', opts.port, 0, 65535));
  }
  if (opts.host !== undefined) {
    // An empty HOST is unset, which listens on every interface: `--host "$UNSET"` must not.
    if (opts.host.trim() === '') throw usageError('--host needs an address (default 0.0.0.0, every interface)');
    env.HOST = opts.host;
  }
  let config;
  try {
    config = loadConfig(env);
  } catch (err) {
    // A setting the user gave as a flag is named as the flag.
    const named = (problem: string) => (opts.host !== undefined ? problem.replace(/^HOST\b/, '--host') : problem);
    if (err instanceof ConfigError) throw usageError(...(err.problems.map(named) as [string, ...string[]]));
    throw err;
  }
  const { listenProblem, startServer } = await importModule<typeof import('../server/start.js')>('../server/start.js');
  let server;
  try {
    server = await startServer(config);
  } catch (err) {
    // Span export that cannot be set up (the optional OpenTelemetry packages missing, an endpoint
    // that is no URL): a setup problem, told as such (matched by name: importing the class would
    // load telemetry on every CLI start).
    if (err instanceof Error && err.name === 'TelemetrySetupError') throw usageError(err.message);
    // The address cannot be listened on: the --port / --host given (or PORT / HOST), not a bug.
    const problem = listenProblem(err, config);
    if (problem) throw usageError(problem);
    throw err;
  }
  const graceful = await server.closed;
  if (!graceful) throw new V2aError('internal-error', 'the shutdown timed out; remaining connections were closed');
}

export function registerServe(program: Command): void {
  program
    .command('serve')
    .description('Run the HTTP API (POST /api/v1/render, /api/mcp, manifests) until Ctrl-C or SIGTERM.')
    .option('-p, --port <n>', 'TCP port (overrides PORT; default 8080, 0 = any free port)', once('-p/--port'))
    .option('--host <address>', 'address to listen on (overrides HOST; default 0.0.0.0)', once('--host'))
    .option('--settings', 'list every setting (environment variable) with its default and meaning, and exit')
    .addHelpText('after', `
Settings are environment variables (V2A_MAX_IMAGE_BYTES, V2A_WORKERS, V2A_RATE_LIMIT, ...): see v2a serve --settings. Shutdown on SIGTERM or Ctrl-C is graceful: in-flight renders finish.

Examples:
  v2a serve
  v2a serve --port 3000 --host 127.0.0.1
  V2A_IMAGE_FETCH_ALLOWLIST='images.example.com,*.cdn.example.net' v2a serve
`)
    .action((_opts: unknown, command: Command) => serveAction(command));
}
