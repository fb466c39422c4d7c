#!/usr/bin/env node
/**
 * `npm start`'s entry (node dist/server/main.cjs): checks the Node version (node-version.cts),
 * sizes libuv's thread pool for the render workers (src/settings/thread-pool.ts), then runs the
 * server (main.js), holding SIGTERM / SIGINT meanwhile (signal-latch.ts: start.ts takes a signal
 * held while the modules load). CommonJS, and nothing before the sizing: libuv reads
 * UV_THREADPOOL_SIZE at the pool's first use, which loading an ES module is.
 */
import nodeVersion = require('../settings/node-version.cjs');

const tooOld = nodeVersion.nodeTooOld(process.versions.node);
if (tooOld) {
  process.stderr.write(`v2a: ${tooOld}\n`);
  process.exit(1);
}
// An ES module: required only on a Node that can (require(esm), Node >= 20.19).
import threadPool = require('../settings/thread-pool.js');
threadPool.sizeThreadPool(process.env);
import signalLatch = require('./signal-latch.js');
signalLatch.holdSignals();
void import('./main.js');
