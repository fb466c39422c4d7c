/**
 * The messages between the server and its render workers (render-worker.ts). Plain data only:
 * they cross a thread boundary by structured clone (the image bytes by transfer).
 */
import type { JobInput } from '../core/job.js';
import type { Format } from '../core/params/definitions.js';
import type { DirectorStatus } from '../core/types.js';
import type { ToolReply } from './mcp/reply.js';
import type { ProblemFieldError, ProblemSlug } from './problem.js';

/**
 * The core's job input (core/job.ts) minus a decoded image: bytes, or imageBase64 as a string or
 * as its character codes in parts (a value json-lift.ts kept out of the parse, as views into the
 * body's chunks), decoded in the worker. `movable` (parts only): the chunks' whole buffers may
 * move with them, else the views are copied into one array.
 */
export type RenderSource =
  | Extract<JobInput, { kind: 'bytes' }>
  | (Extract<JobInput, { kind: 'base64' }> & { readonly movable?: boolean });

export interface RenderJob {
  readonly source: RenderSource;
  /** Validated, JSON-typed render parameters the caller set (the Auto Director tunes the rest). */
  readonly params: Readonly<Record<string, unknown>>;
  readonly maxBytes: number;
  readonly maxPixels: number;
  /** Largest decoder memory estimated from the image header (V2A_MAX_DECODED_BYTES). */
  readonly maxDecodedBytes?: number;
  /** Decoder timeout (libvips), in whole seconds. */
  readonly decodeTimeoutSeconds: number;
  /** Also build the MCP tool reply (text, image block, summary) under this character budget (0: none). */
  readonly mcp?: { readonly maxChars: number };
  /**
   * One Int32 the pool sets when the render should stop (STOP codes): the worker's job reads it
   * before each stage. Shared memory: the worker is busy in its render, deaf to messages.
   */
  readonly stop?: SharedArrayBuffer;
}

/** Values of a job's `stop` word: go on, the timeout passed, the caller went away. */
export const STOP = { none: 0, timeout: 1, gone: 2 } as const;
/**
 * How long a render told to stop may take to reach its next stage before its thread is
 * terminated. A stage of the largest render the limits allow (12 MP at 400 columns, fineShapes,
 * png) takes about 2 s here; an MCP reply over its budget renders again, a stage at a time.
 */
export const STOP_GRACE_MS = 10_000;

/**
 * A render request's body for a worker to parse and render (request-body.ts): a
 * multipart/form-data form or a JSON object, as the chunks it arrived in (the main thread neither
 * joins, decodes nor parses them; the pool transfers every chunk that is the whole of its
 * ArrayBuffer and copies the rest), with the request's Content-Type and its query-string
 * parameters, which the worker validates with the body's; the limits as a RenderJob's.
 */
export interface BodyJob extends Omit<RenderJob, 'source' | 'params'> {
  readonly body: {
    readonly type: 'form' | 'json';
    readonly chunks: readonly Uint8Array[];
    readonly contentType: string;
    readonly query: Readonly<Record<string, unknown>>;
  };
}

/** Stages a worker times (the main thread adds `queue` and, for uploads and URLs, `input`). */
export type WorkerStage = 'input' | 'decode' | 'director' | 'render' | 'format';

/**
 * Start and end of each stage the worker ran, in milliseconds since the Unix epoch
 * (performance.timeOrigin + performance.now(): comparable across threads). `input` is the base64
 * decode, present for base64 sources only.
 */
export type StageTimes = Partial<Record<WorkerStage, readonly [start: number, end: number]>>;

/** What the worker learnt about the image (for spans: sizes, never content). */
export interface ImageFacts {
  /** Bytes of the encoded image (after base64 decoding). */
  readonly bytes: number;
  readonly format?: string;
  /** Size after EXIF orientation, before shrink-on-load. */
  readonly width?: number;
  readonly height?: number;
}

/** Timing and facts every outcome carries back from the worker. */
export interface RenderTrace {
  /** When the worker picked the job up (epoch ms). */
  readonly startedAt: number;
  readonly stages: StageTimes;
  readonly image?: ImageFacts;
  /** A BodyJob's image source, once its body was read (spans name the carrier by it). */
  readonly field?: 'image' | 'imageBase64';
}

export interface RenderSuccess extends RenderTrace {
  readonly ok: true;
  readonly format: Format;
  /** The output's bytes: a text format's UTF-8, or png. */
  readonly body: Uint8Array;
  /** Full Content-Type header value. */
  readonly contentType: string;
  readonly extension: string;
  readonly director: { readonly status: DirectorStatus; readonly rubric: string; readonly score: number };
  /** The MCP tool reply, when `mcp` was asked for. */
  readonly mcp?: ToolReply;
  readonly columns: number;
  readonly rows: number;
  readonly charset: string;
  /** Names of the parameters the Auto Director changed. */
  readonly adjusted: readonly string[];
  readonly codebook: { readonly size: number; readonly rmse: number };
}

/**
 * A BodyJob whose image is a URL: the worker parsed the body and validated its parameters; the
 * server fetches the URL and renders its bytes as a RenderJob.
 */
export interface RenderFetch extends Partial<RenderTrace> {
  readonly ok: 'fetch';
  readonly url: string;
  readonly params: Readonly<Record<string, unknown>>;
}

export interface RenderFailure extends Partial<RenderTrace> {
  readonly ok: false;
  /** The stage that failed. */
  readonly failedStage?: WorkerStage;
  readonly slug: ProblemSlug;
  /** Safe to show to the client. */
  readonly detail: string;
  readonly errors?: readonly ProblemFieldError[];
  /** For logs only (internal errors): never sent to a client. */
  readonly internal?: string;
}

export type RenderOutcome = RenderSuccess | RenderFailure;

/** What a BodyJob comes back as. */
export type BodyOutcome = RenderOutcome | RenderFetch;
