#!/usr/bin/env node
/**
 * The server's entry module (`npm start` runs it through main.cjs, which sizes libuv's thread pool
 * first; `node dist/server/main.js` also works, with libuv's 4): reads the settings from the
 * environment (see config.ts; a bad value, or PLATFORM_API_KEY without the optional OpenTelemetry
 * packages, exits 2 naming it), serves until SIGTERM/SIGINT, shuts down gracefully and exits 0
 * (1 when the shutdown had to be forced).
 */
import { ConfigError, loadConfig, type ServerConfig } from './config.js';
import { startServer } from './start.js';

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
  process.stderr.write(`v2a: could not start the server: ${err instanceof Error ? err.message : String(err)}\n`);
  // A missing optional package for the configured span export is a setup error, like a bad setting.
  process.exit(err instanceof Error && err.name === 'MissingExporterError' ? 2 : 1);
}
