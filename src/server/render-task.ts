/**
 * The messages between the server and its render workers (render-worker.ts). Plain data only:
 * they cross a thread boundary by structured clone (the image bytes by transfer).
 */
import type { Format } from '../core/params/definitions.js';
import type { DirectorStatus } from '../core/types.js';
import type { ProblemFieldError, ProblemSlug } from './problem.js';

export type RenderSource =
  | { readonly kind: 'bytes'; readonly bytes: Uint8Array }
  /** Decoded in the worker (strict base64; a data: URL prefix and whitespace are accepted). */
  | { readonly kind: 'base64'; readonly text: string };

export interface RenderJob {
  readonly source: RenderSource;
  /** Validated, JSON-typed render parameters the caller set (the Auto Director tunes the rest). */
  readonly params: Readonly<Record<string, unknown>>;
  readonly maxBytes: number;
  readonly maxPixels: number;
  /** Decoder timeout (libvips), in whole seconds. */
  readonly decodeTimeoutSeconds: number;
  /** Also return the parsed JSON of json/json-compact output (MCP structuredContent). */
  readonly structured: boolean;
}

export interface RenderSuccess {
  readonly ok: true;
  readonly format: Format;
  readonly body: string;
  /** Full Content-Type header value. */
  readonly contentType: string;
  readonly extension: string;
  readonly director: { readonly status: DirectorStatus; readonly rubric: string; readonly score: number };
  /** Parsed body of the json formats, when `structured` was asked for. */
  readonly structured?: Record<string, unknown>;
  readonly columns: number;
  readonly rows: number;
}

export interface RenderFailure {
  readonly ok: false;
  readonly slug: ProblemSlug;
  /** Safe to show to the client. */
  readonly detail: string;
  readonly errors?: readonly ProblemFieldError[];
  /** For logs only (internal errors): never sent to a client. */
  readonly internal?: string;
}

export type RenderOutcome = RenderSuccess | RenderFailure;
