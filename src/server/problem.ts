/**
 * RFC 9457 problem details: the one error shape of every HTTP reply that is not a success
 * (decisions.md, "Errors"). The catalogue of problem types is defined here once; the error
 * plugin, the routes, the OpenAPI document and llms-full.txt all read it.
 */

import { ERRORS, V2aError, fieldDetail, type ErrorCode, type ErrorInfo, type FieldError } from '../core/errors.js';

export const PROBLEM_CONTENT_TYPE = 'application/problem+json; charset=utf-8';
export const PROBLEM_TYPE_BASE = 'https://v2a.dev/problems/';

export type ProblemTypeInfo = ErrorInfo;

/** A code of the core's error table, as problem types name it. */
export type ProblemSlug = ErrorCode;

/**
 * The problem types documented for HTTP, by slug: the core's error table less its local codes (the
 * CLI's own); `type` is PROBLEM_TYPE_BASE + slug.
 */
export const PROBLEM_TYPES: Readonly<Partial<Record<ErrorCode, ErrorInfo>>> = Object.fromEntries(
  Object.entries(ERRORS).filter(([, info]) => !('local' in info)),
);

export type ProblemFieldError = FieldError;

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

export function problemType(slug: ErrorCode): string {
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
