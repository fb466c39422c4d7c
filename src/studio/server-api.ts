/**
 * The studio's calls to its own server: renders it does in the browser's stead (an image URL, or
 * a file the browser cannot decode) and what the server allows (image hosts, image sizes). A failure is an
 * Error carrying the API's own problem+json detail, word for word.
 */
import type { Format } from '../core/index.js';
import { apiUrl } from './api-url.js';
import type { ExplicitParams } from './protocol.js';
import type { ServerSource } from './state.js';

async function problemDetail(res: Response): Promise<string> {
  try {
    const p = (await res.json()) as { detail?: string; title?: string };
    return p.detail ?? p.title ?? `The server answered ${res.status}.`;
  } catch {
    return `The server answered ${res.status}.`;
  }
}

/** POST /api/v1/render for a server source: JSON with imageUrl, or multipart with the file. */
export async function serverRender(src: ServerSource, params: ExplicitParams, format: Format, signal?: AbortSignal): Promise<Response> {
  const { format: _f, ...rest } = params;
  let init: RequestInit;
  if ('url' in src) {
    init = { headers: { 'content-type': 'application/json' }, body: JSON.stringify({ imageUrl: src.url, ...rest, format }) };
  } else {
    const form = new FormData();
    form.append('image', src.file, src.fileName);
    for (const [k, v] of Object.entries({ ...rest, format })) form.append(k, String(v));
    init = { body: form };
  }
  let res: Response;
  try {
    res = await fetch(apiUrl('render'), { method: 'POST', ...init, headers: { ...(init.headers as Record<string, string> | undefined), accept: 'application/json, text/plain, */*' }, ...(signal ? { signal } : {}) });
  } catch (err) {
    // fetch's own words for a server that is gone ("Failed to fetch") say nothing to a user.
    if ((err as Error).name === 'AbortError') throw err;
    throw new Error('the v2a server could not be reached (stopped, or the network is down); try again when it is back.');
  }
  if (!res.ok) throw new Error(await problemDetail(res));
  return res;
}

/** What the server allows, from its agent manifest's `limits`. */
export interface ServerLimits {
  /** Hosts it fetches `imageUrl` from (empty: none; the URL box is hidden). */
  readonly imageUrlHosts: readonly string[];
  /** Largest image it accepts, in bytes and in pixels (null: not stated). */
  readonly maxImageBytes: number | null;
  readonly maxImagePixels: number | null;
}

/** The server's limits; no hosts and no size limits when the manifest cannot be read. */
export async function serverLimits(): Promise<ServerLimits> {
  const none: ServerLimits = { imageUrlHosts: [], maxImageBytes: null, maxImagePixels: null };
  try {
    const res = await fetch(apiUrl('agent'), { headers: { accept: 'application/json' } });
    if (!res.ok) return none;
    const m = (await res.json()) as { limits?: { imageUrlHosts?: unknown; maxImageBytes?: unknown; maxImagePixels?: unknown } };
    const hosts = m.limits?.imageUrlHosts;
    const count = (v: unknown) => (typeof v === 'number' && Number.isSafeInteger(v) && v > 0 ? v : null);
    return {
      imageUrlHosts: Array.isArray(hosts) ? hosts.filter((x): x is string => typeof x === 'string') : [],
      maxImageBytes: count(m.limits?.maxImageBytes),
      maxImagePixels: count(m.limits?.maxImagePixels),
    };
  } catch {
    return none;
  }
}
