#!/usr/bin/env node
/**
 * The server's entry module (`npm start` runs it through main.cjs, which sizes libuv's thread pool
 * first; `node dist/server/main.js` also works, with libuv's 4): reads the settings from the
 * environment (see config.ts; a bad value, or PLATFORM_API_KEY without the optional OpenTelemetry
 * packages, exits 2 naming it, as does a PORT / HOST that cannot be listened on), serves until SIGTERM/SIGINT, shuts down gracefully and exits 0
 * (1 when the shutdown had to be forced). `--settings` lists the settings and `--help` the usage;
 * any other argument exits 2.
 */
import { ConfigError, loadConfig, settingsText, type ServerConfig } from './config.js';
import { listenProblem, startServer } from './start.js';

const USAGE = `Usage: node dist/server/main.cjs [--settings | --help]

Runs the v2a HTTP server (npm start) until SIGTERM or Ctrl-C; the shutdown is graceful.
Settings are environment variables: --settings lists them with their defaults and meanings.
`;

// Before anything listens: an argument meant for v2a serve (--port) must not start a server on
// the default address instead.
const args = process.argv.slice(2);
if (args.length > 0) {
  const answers: Readonly<Record<string, () => string>> = { '--settings': settingsText, '--help': () => USAGE, '-h': () => USAGE };
  const answer = args.length === 1 ? answers[args[0]!] : undefined;
  if (!answer) {
    const unknown = args.find((a) => !Object.hasOwn(answers, a));
    process.stderr.write(`v2a: ${unknown === undefined ? 'one argument at most' : `unknown argument ${JSON.stringify(unknown)}`}: the server takes only --settings or --help (settings are environment variables, PORT and HOST among them)\n`);
    process.exit(2);
  }
  // Written out before the exit, whatever stdout is.
  await new Promise((resolve) => process.stdout.write(answer(), resolve));
  process.exit(0);
}

let config: ServerConfig;
try {
  config = loadConfig();
} catch (err) {
  if (!(err instanceof ConfigError)) throw err;
  process.stderr.write(`v2a: ${err.message}\n`);
  process.exit(2);
}

try {
  const server = await startServer(config);
  const graceful = await server.closed;
  process.exit(graceful ? 0 : 1);
} catch (err) {
  // PORT / HOST that cannot be listened on, and span export that cannot be set up (a missing
  // optional package, an endpoint that is no URL), are setup errors, exit 2 like a bad setting.
  const listen = listenProblem(err, config);
  process.stderr.write(`v2a: ${listen ?? `could not start the server: ${err instanceof Error ? err.message : String(err)}`}\n`);
  process.exit(listen || (err instanceof Error && err.name === 'TelemetrySetupError') ? 2 : 1);
}
