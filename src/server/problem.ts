/**
 * RFC 9457 problem details: the one error shape of every HTTP reply that is not a success
 * (decisions.md, "Errors"). The catalogue of problem types is defined here once; the error
 * plugin, the routes, the OpenAPI document and llms-full.txt all read it.
 */

export const PROBLEM_CONTENT_TYPE = 'application/problem+json; charset=utf-8';
export const PROBLEM_TYPE_BASE = 'https://v2a.dev/problems/';

export interface ProblemTypeInfo {
  readonly status: number;
  readonly title: string;
  readonly description: string;
}

/** Problem types by slug; `type` is PROBLEM_TYPE_BASE + slug (an identifier, not necessarily dereferenceable). */
export const PROBLEM_TYPES = {
  'invalid-parameters': { status: 400, title: 'Invalid parameters', description: 'A render parameter is unknown, has the wrong type, is out of range, or was given twice; `errors` names each one.' },
  'invalid-request': { status: 400, title: 'Invalid request', description: 'The request body is malformed (bad JSON, bad multipart, wrong field types, unknown fields) or missing.' },
  'missing-image': { status: 400, title: 'No image', description: 'No image was supplied: send exactly one of the file field `image`, `imageUrl` or `imageBase64`.' },
  'multiple-images': { status: 400, title: 'More than one image', description: 'More than one image source was supplied; exactly one is allowed.' },
  'invalid-base64': { status: 400, title: 'Invalid base64', description: '`imageBase64` is not valid base64 (RFC 4648, standard alphabet; a data: URL prefix and line breaks are accepted).' },
  'unsupported-image': { status: 400, title: 'Unsupported image format', description: 'The image is not JPEG, PNG, WebP, GIF, AVIF or TIFF (SVG and PDF are refused).' },
  'undecodable-image': { status: 400, title: 'Undecodable image', description: 'The image is damaged, truncated, empty or not an image.' },
  'image-too-tall': { status: 400, title: 'Image too tall for the grid', description: 'The image aspect would need more rows than the renderer allows at this column count.' },
  'image-url-not-allowed': { status: 400, title: 'Image URL not allowed', description: '`imageUrl` is not https, names an IP address, a host outside the allowlist, or a host resolving to a non-public address.' },
  'unauthorized': { status: 401, title: 'Unauthorized', description: 'A protected platform action (GET /api/v1/metrics, GET /api/v1/status) was called without the platform key or with a wrong one: send Authorization: Bearer <key> or X-Platform-API-Key: <key>. WWW-Authenticate says which.' },
  'forbidden-origin': { status: 403, title: 'Origin not allowed', description: 'The browser Origin of this MCP request is not in V2A_CORS_ORIGINS.' },
  'not-found': { status: 404, title: 'Not found', description: 'No resource at this path.' },
  'method-not-allowed': { status: 405, title: 'Method not allowed', description: 'The path exists but not for this method; `Allow` lists the methods.' },
  'image-too-large': { status: 413, title: 'Image too large', description: 'The image (upload, base64 or fetched body) exceeds V2A_MAX_IMAGE_BYTES, or its pixel count exceeds V2A_MAX_IMAGE_PIXELS.' },
  'request-too-large': { status: 413, title: 'Request too large', description: 'The request body exceeds its size limit.' },
  'unsupported-media-type': { status: 415, title: 'Unsupported media type', description: 'The request Content-Type is not one this endpoint accepts.' },
  'rate-limited': { status: 429, title: 'Too many requests', description: 'The per-client rate limit (V2A_RATE_LIMIT per minute) was reached; see Retry-After and RateLimit-* headers.' },
  'internal-error': { status: 500, title: 'Internal server error', description: 'An unexpected error; the traceId identifies it in the server logs.' },
  'image-fetch-failed': { status: 502, title: 'Image could not be fetched', description: 'The host of `imageUrl` was unreachable, answered an error status, redirected too often, or timed out.' },
  'overloaded': { status: 503, title: 'Service overloaded', description: 'Every render worker is busy and the queue is full; retry after Retry-After seconds.' },
  'render-timeout': { status: 503, title: 'Render timed out', description: 'The render did not finish within V2A_RENDER_TIMEOUT_MS.' },
  'shutting-down': { status: 503, title: 'Shutting down', description: 'The server is shutting down and accepts no new work; retry on another instance.' },
} as const satisfies Record<string, ProblemTypeInfo>;

export type ProblemSlug = keyof typeof PROBLEM_TYPES;

export interface ProblemFieldError {
  /** The parameter or field at fault, as the caller spelled it. */
  readonly parameter: string;
  readonly message: string;
}

/** The JSON body of a problem reply. */
export interface ProblemBody {
  type: string;
  title: string;
  status: number;
  detail: string;
  instance: string;
  traceId: string;
  errors?: ProblemFieldError[];
}

/** An error that is answered as the given problem. `detail` is shown to the client verbatim. */
export class HttpProblem extends Error {
  override readonly name = 'HttpProblem';
  readonly status: number;
  readonly title: string;
  constructor(
    readonly slug: ProblemSlug,
    readonly detail: string,
    readonly extra: {
      readonly errors?: readonly ProblemFieldError[];
      readonly headers?: Readonly<Record<string, string>>;
      /** Overrides the catalogue status/title (e.g. 400 for a 4xx Fastify error without its own type). */
      readonly status?: number;
      readonly title?: string;
    } = {},
  ) {
    super(detail);
    this.status = extra.status ?? PROBLEM_TYPES[slug].status;
    this.title = extra.title ?? PROBLEM_TYPES[slug].title;
  }
}

export function problemType(slug: ProblemSlug): string {
  return PROBLEM_TYPE_BASE + slug;
}

export function problemBody(p: HttpProblem, instance: string, traceId: string): ProblemBody {
  const body: ProblemBody = {
    type: problemType(p.slug),
    title: p.title,
    status: p.status,
    detail: p.detail,
    instance,
    traceId,
  };
  if (p.extra.errors && p.extra.errors.length) body.errors = p.extra.errors.map((e) => ({ parameter: e.parameter, message: e.message }));
  return body;
}

/** The detail text of a list of parameter errors: the one sentence both HTTP and MCP show. */
export function parameterDetail(errors: readonly ProblemFieldError[]): string {
  return errors.map((e) => e.message).join('; ');
}

/**
 * The abort reason when a client closes its connection before the reply: answered like any
 * problem (nobody reads it) instead of being logged as an unexpected error.
 */
export function clientClosed(): HttpProblem {
  return new HttpProblem('invalid-request', 'The client closed the connection before the reply.');
}
