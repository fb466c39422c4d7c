/**
 * The browser studio at `/`: the Vite build of src/studio (dist/studio, `npm run build:studio`),
 * read into memory once at start-up (a few hundred kB) and served with:
 * - `Cache-Control`: hashed assets (`/assets/*`) immutable for a year, the page `no-cache` with an
 *   ETag (so a new deploy is picked up at once), other files an hour;
 * - the studio's own Content-Security-Policy, stricter than a web page usually gets and separate
 *   from the policies of API replies (security-headers.ts): scripts, styles, workers and fetches
 *   from this origin only, images and media also from blob:/data:/mediastream: (decoded files,
 *   the webcam), no framing, no plugins, no forms;
 * - `Permissions-Policy` that allows the camera to this origin only (the API's denies it), and
 *   `Cross-Origin-Opener-Policy: same-origin-allow-popups`, so the a2v receiver the studio opens
 *   keeps its opener and the postMessage handoff works.
 * When the studio was not built, `/` says so (503) and the API is unaffected.
 * The page names its assets, workers and API calls relative to its own address (Vite base './',
 * src/studio/api-url.ts), so one build and these same paths also serve it under a path prefix
 * that a reverse proxy strips (https://tools.example.com/v2a/ -> `/`): no per-prefix page, no Vary.
 */
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { extname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../context.js';
import { etagOf, notModified } from '../etag.js';

/** dist/studio: both src/server/routes and dist/server/routes are three levels below the package. */
export const STUDIO_DIR = fileURLToPath(new URL('../../../dist/studio/', import.meta.url));

export const STUDIO_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "worker-src 'self' blob:",
  "connect-src 'self'",
  "img-src 'self' data: blob:",
  "media-src 'self' blob: mediastream:",
  "style-src 'self'",
  "font-src 'self'",
  "manifest-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

/**
 * CSP of the studio's scripts. A dedicated worker runs under the policy its own script was served
 * with (a page's scripts ignore theirs), and the renderer core in the worker compiles its
 * WebAssembly kernels: 'wasm-unsafe-eval' allows that and nothing else (no eval, no inline script).
 */
export const STUDIO_SCRIPT_CSP = "default-src 'none'; script-src 'self' 'wasm-unsafe-eval'; frame-ancestors 'none'";

export const STUDIO_PERMISSIONS = 'camera=(self), microphone=(), geolocation=(), display-capture=()';

const IMMUTABLE = 'public, max-age=31536000, immutable';
const PAGE = 'no-cache';
const OTHER = 'public, max-age=3600';

const TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.webp': 'image/webp',
  '.woff2': 'font/woff2',
  '.json': 'application/json; charset=utf-8',
  '.txt': 'text/plain; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
};

interface StaticFile {
  readonly body: Buffer;
  readonly type: string;
  readonly etag: string;
  readonly cacheControl: string;
}

function walk(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? walk(path) : [path];
  });
}

/**
 * URL path -> file, for every file of the build; null without one. A build being replaced while
 * it is read (`npm run build:studio` empties dist/studio first) counts as none: the server then
 * starts and serves the "not built" page instead of failing on a vanished file.
 */
export function loadStudio(dir = STUDIO_DIR): Map<string, StaticFile> | null {
  if (!existsSync(join(dir, 'index.html'))) return null;
  try {
    return readStudio(dir);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
}

function readStudio(dir: string): Map<string, StaticFile> {
  const files = new Map<string, StaticFile>();
  for (const path of walk(dir)) {
    const urlPath = '/' + relative(dir, path).split(sep).join('/');
    const type = TYPES[extname(path).toLowerCase()];
    if (!type) continue;
    const body = readFileSync(path);
    const etag = etagOf(body);
    const cacheControl = urlPath === '/index.html' ? PAGE : urlPath.startsWith('/assets/') ? IMMUTABLE : OTHER;
    files.set(urlPath, { body, type, etag, cacheControl });
  }
  return files;
}

const NOT_BUILT = '<!doctype html><meta charset="utf-8"><title>v2a studio</title><p>The v2a studio has not been built. Run <code>npm run build:studio</code> (or <code>npm run build</code>) and restart the server. The API is available under /api/.</p>\n';

export async function studioRoutes(app: FastifyInstance, opts: { ctx: AppContext; dir?: string }): Promise<void> {
  const files = loadStudio(opts.dir);

  // After the global security headers: the studio's own policies replace the API's.
  app.addHook('onSend', async (_request, reply, payload) => {
    const type = String(reply.getHeader('content-type') ?? '');
    if (type.startsWith('text/html')) {
      reply.header('content-security-policy', STUDIO_CSP);
      reply.header('permissions-policy', STUDIO_PERMISSIONS);
      reply.header('cross-origin-opener-policy', 'same-origin-allow-popups');
    } else if (type.startsWith('text/javascript')) {
      reply.header('content-security-policy', STUDIO_SCRIPT_CSP);
    }
    return payload;
  });

  const serve = (file: StaticFile) => async (request: FastifyRequest, reply: FastifyReply) => {
    reply.header('content-type', file.type).header('cache-control', file.cacheControl).header('etag', file.etag)
      .header('cross-origin-resource-policy', 'same-origin');
    if (notModified(request.headers['if-none-match'], file.etag)) return reply.code(304).send();
    return reply.send(file.body);
  };

  if (!files) {
    app.get('/', async (_request, reply) => reply.code(503).type('text/html; charset=utf-8').header('cache-control', 'no-store').send(NOT_BUILT));
    return;
  }
  const index = files.get('/index.html')!;
  app.get('/', serve(index));
  for (const [path, file] of files) app.get(path, serve(file));
}
