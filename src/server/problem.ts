/**
 * RFC 9457 problem details: the one error shape of every HTTP reply that is not a success
 * (decisions.md, "Errors"). The problem types are the core's error codes (src/core/errors.ts),
 * named on the wire by src/contract/problems.ts; here is what only the server needs: HttpProblem
 * (headers) and the body of a reply.
 */

import { ERRORS, V2aError, fieldDetail, type ErrorCode } from '../core/errors.js';
import { PROBLEM_TYPE_BASE, PROBLEM_TYPES, problemType, type ProblemBody, type ProblemFieldError } from '../contract/problems.js';

export {
  PROBLEM_CONTENT_TYPE, PROBLEM_TYPE_BASE, PROBLEM_TYPES, problemType, type ProblemBody, type ProblemFieldError, type ProblemSlug, type ProblemTypeInfo,
} from '../contract/problems.js';
import type { JsonSchema } from '../core/format/jsonSchemas.js';
import { TRACE_ID_SCHEMA } from './trace-context.js';

/**
 * A V2aError with what only HTTP needs: response headers (Retry-After, Allow) and, for errors of
 * other libraries without a code of their own, a status/title override. Any V2aError is answered
 * through `HttpProblem.from`.
 */
export class HttpProblem extends V2aError {
  override name = 'HttpProblem';
  readonly status: number;
  readonly title: string;
  constructor(
    slug: ErrorCode,
    detail: string,
    readonly extra: {
      readonly errors?: readonly ProblemFieldError[];
      readonly headers?: Readonly<Record<string, string>>;
      /** Overrides the table's status/title (e.g. 400 for a 4xx Fastify error without its own type). */
      readonly status?: number;
      readonly title?: string;
      readonly cause?: unknown;
    } = {},
  ) {
    super(slug, detail, { ...(extra.errors ? { errors: extra.errors } : {}), ...(extra.cause !== undefined ? { cause: extra.cause } : {}) });
    this.status = extra.status ?? ERRORS[slug].status;
    this.title = extra.title ?? ERRORS[slug].title;
  }

  get slug(): ErrorCode {
    return this.code;
  }

  /** The problem a V2aError is answered with. */
  static from(err: V2aError): HttpProblem {
    if (err instanceof HttpProblem) return err;
    return new HttpProblem(err.code, err.message, { ...(err.errors ? { errors: err.errors } : {}), cause: err });
  }
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
  if (p.errors) body.errors = p.errors.map((e) => ({ parameter: e.parameter, message: e.message }));
  return body;
}

/** Schema of problemBody's reply (the OpenAPI `Problem`). */
export const PROBLEM_SCHEMA: JsonSchema = {
  type: 'object',
  description: `RFC 9457 problem details. \`type\` is ${PROBLEM_TYPE_BASE}<slug>, one of: ` +
    Object.entries(PROBLEM_TYPES).map(([slug, p]) => `${slug} (${p.status})`).join(', ') + '.',
  required: ['type', 'title', 'status', 'detail', 'instance', 'traceId'],
  additionalProperties: false,
  properties: {
    type: { type: 'string', format: 'uri', enum: Object.keys(PROBLEM_TYPES).map((s) => PROBLEM_TYPE_BASE + s) },
    title: { type: 'string' },
    status: { type: 'integer', minimum: 400, maximum: 599 },
    detail: { type: 'string', description: 'What went wrong, for the caller; never a stack trace.' },
    instance: { type: 'string', format: 'uri-reference', description: 'The request path (/ for a request refused before its path was read).' },
    traceId: TRACE_ID_SCHEMA,
    errors: {
      type: 'array',
      description: 'Validation errors, one per parameter or field at fault.',
      items: {
        type: 'object',
        required: ['parameter', 'message'],
        additionalProperties: false,
        properties: { parameter: { type: 'string' }, message: { type: 'string' } },
      },
    },
  },
};

/** The detail text of a list of parameter errors: the one sentence both HTTP and MCP show. */
export const parameterDetail = fieldDetail;

/**
 * The abort reason when a client closes its connection before the reply: answered like any
 * problem (nobody reads it) instead of being logged as an unexpected error.
 */
export function clientClosed(): HttpProblem {
  return new HttpProblem('interrupted', 'The client closed the connection before the reply.');
}

/** The request was answered before its route was done (an upload cut at shutdown, a timeout). */
export function answeredElsewhere(): HttpProblem {
  return new HttpProblem('interrupted', 'The request was answered before its render was done.');
}

/** Retry-After (seconds) of every 503 a shutdown answers, the health probes' included. */
export const SHUTDOWN_RETRY_AFTER = '5';

/**
 * 503 `shutting-down`: work refused, cut or stopped because the server is shutting down; the
 * client retries on another instance (Retry-After 5 s, the same everywhere).
 */
export function shuttingDown(detail = 'The server is shutting down; retry on another instance.'): HttpProblem {
  return new HttpProblem('shutting-down', detail, { headers: { 'retry-after': SHUTDOWN_RETRY_AFTER } });
}
