#!/usr/bin/env node
/**
 * `npm start`'s entry (node dist/server/main.cjs): sizes libuv's thread pool for the render workers
 * (src/settings/thread-pool.ts), then runs the server (main.js). CommonJS, and nothing before the
 * sizing: libuv reads UV_THREADPOOL_SIZE at the pool's first use, which loading an ES module is.
 */
import threadPool = require('../settings/thread-pool.js');

threadPool.sizeThreadPool(process.env);
void import('./main.js');
