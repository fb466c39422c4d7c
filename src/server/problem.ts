/**
 * RFC 9457 problem details: the one error shape of every HTTP reply that is not a success
 * (decisions.md, "Errors"). The problem types are the core's error codes (src/core/errors.ts),
 * named on the wire by src/contract/problems.ts; here is what only the server needs: HttpProblem
 * (headers) and the body of a reply.
 */

import { ERRORS, V2aError, fieldDetail, type ErrorCode } from '../core/errors.js';
import { problemType, type ProblemBody, type ProblemFieldError } from '../contract/problems.js';

export {
  PROBLEM_CONTENT_TYPE, PROBLEM_TYPE_BASE, PROBLEM_TYPES, problemType, type ProblemBody, type ProblemFieldError, type ProblemSlug, type ProblemTypeInfo,
} from '../contract/problems.js';

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

/** The detail text of a list of parameter errors: the one sentence both HTTP and MCP show. */
export const parameterDetail = fieldDetail;

/**
 * The abort reason when a client closes its connection before the reply: answered like any
 * problem (nobody reads it) instead of being logged as an unexpected error.
 */
export function clientClosed(): HttpProblem {
  return new HttpProblem('interrupted', 'The client closed the connection before the reply.');
}
