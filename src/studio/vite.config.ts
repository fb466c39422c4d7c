/**
 * Vite build of the browser studio (src/studio) into dist/studio, served by the server at `/`
 * (src/server/routes/studio.ts) and, behind a proxy, under any path prefix the proxy strips.
 * `npm run build:studio`; `npx vite --config src/studio/vite.config.ts`
 * serves it for development with the API proxied to a local `npm run serve` on port 8080.
 * It lives in src/studio so that a build from `src/` alone (the Dockerfile) has it.
 */
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

const root = fileURLToPath(new URL('./', import.meta.url));
const outDir = fileURLToPath(new URL('../../dist/studio/', import.meta.url));

export default defineConfig({
  root,
  // Relative asset, favicon and worker URLs: the page works at `/` and under a path prefix that a
  // reverse proxy strips (https://tools.example.com/v2a/), which the server never sees. Vite writes
  // index.html's public `/favicon.svg` as `./favicon.svg`; API calls go through api-url.ts.
  base: './',
  publicDir: 'public',
  logLevel: 'warn',
  clearScreen: false,
  build: {
    outDir,
    emptyOutDir: true,
    target: 'es2022',
    assetsDir: 'assets',
    sourcemap: false,
    // No inlined assets: the page's CSP allows no data: scripts or styles.
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
    reportCompressedSize: false,
  },
  worker: { format: 'es' },
  server: {
    proxy: { '/api': 'http://127.0.0.1:8080' },
  },
});
