/**
 * Problem details (RFC 9457) as both sides of the wire see them: the type URIs, the content type
 * and the body shape. The codes and their meaning are the core's one error table
 * (src/core/errors.ts); only its codes that can be answered over HTTP are problem types.
 */
import { ERRORS, type ErrorCode, type ErrorInfo, type FieldError } from '../core/errors.js';

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

/** The detail of a 413 for an upload over the byte limit (the studio says it of files it would refuse). */
export const uploadTooLargeDetail = (maxBytes: number): string => `The uploaded image is larger than the ${maxBytes}-byte limit.`;

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

export function problemType(slug: ErrorCode): string {
  return PROBLEM_TYPE_BASE + slug;
}
