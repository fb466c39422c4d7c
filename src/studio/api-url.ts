/**
 * The server's endpoints as this page reaches them. A reverse proxy may publish the studio under a
 * path prefix it strips (https://tools.example.com/v2a/ -> http://v2a:8080/): an absolute path such
 * as /api/v1/render would then go to the proxy's root, outside the prefix. So every call resolves
 * the endpoint's path against the page's own address instead; at `/` that is the same URL as before.
 */
import { ENDPOINTS, type EndpointName } from '../contract/endpoints.js';

/** The absolute URL of endpoint `name` under this page's base (`<page dir>/api/v1/render`). */
export function apiUrl(name: EndpointName): string {
  return new URL(ENDPOINTS[name].path.replace(/^\/+/, ''), document.baseURI).href;
}
