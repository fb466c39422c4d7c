/**
 * `v2a mcp`: the MCP server over stdio, where local agents (Claude Desktop, Claude Code, Cursor,
 * VS Code) run their servers. Lines are framed and parsed here (serveStdio); the
 * dispatcher (dispatcher.ts) and the tool (render-tool.ts, reply.ts) are the ones /api/mcp serves.
 * What only this face adds:
 * - `imagePath`: a local file, read only inside the roots (roots.ts);
 * - the client's roots: when the client declares the `roots` capability, `roots/list` is asked
 *   after `notifications/initialized` and again on `notifications/roots/list_changed`; a call
 *   waits (at most ROOTS_WAIT_MS) for the pending answer;
 * - renders run in this process through the core job (sharp decodes), one at a time (turns.ts),
 *   first come, first served; `notifications/cancelled` stops a call waiting for its turn, or
 *   between stages of its render.
 * Nothing but protocol goes to stdout; diagnostics go to stderr.
 */
import process from 'node:process';
import { EXIT, V2aError } from '../../core/errors.js';
import { nextTurn } from '../../core/next-turn.js';
import type { JobInput, JobLimits } from '../../core/job.js';
import { VERSION } from '../../core/types.js';
import { MCP_MAX_BATCH } from '../../settings/index.js';
import { jsonImageInputs, validateParams } from '../render-inputs.js';
import { createMcpDispatcher, isValidId, refuseKeys, type JsonRpcResponse, type McpDispatcher } from './dispatcher.js';
import { parseJsonBounded, type KeyProblem } from '../json-body.js';
import { HttpProblem } from '../problem.js';
import { readLines, TOO_LONG_PREFIX_BYTES } from './stdio-lines.js';
import { createRenderTool, mcpInstructions, missingImageDetail } from './render-tool.js';
import { buildToolReply } from './reply.js';
import { zlibDeflate } from '../../node/deflate.js';
import { Roots } from './roots.js';
import { Turns } from './turns.js';
import { InFlightCalls } from './cancels.js';
import { imageUrlHosts } from '../net/image-hosts.js';
import type { FetchSettings } from '../config.js';
import { isRecord } from '../../core/args.js';

/** Most messages in one batch on the pipe (the HTTP face's V2A_MCP_MAX_BATCH default). */
const MAX_BATCH = MCP_MAX_BATCH.default;

/** Calls in line for a render, the running one included: two full batches. */
export const MOST_IN_LINE = 2 * MAX_BATCH;

/** Longest a call waits for the client's answer to roots/list. */
const ROOTS_WAIT_MS = 5_000;

export interface StdioOptions {
  readonly roots: Roots;
  /** Character budget of one reply (0: none). */
  readonly maxChars: number;
  readonly limits: JobLimits;
  /** imageUrl's V2A_IMAGE_FETCH_ALLOWLIST and V2A_FETCH_TIMEOUT_MS, as loadFetchSettings (config.ts) reads them. */
  readonly fetch: FetchSettings;
  readonly stdin?: NodeJS.ReadableStream & { pause(): unknown };
  readonly stdout?: NodeJS.WritableStream;
}

/** Calls waiting for the answer to a roots/list request: `done` lets them go. */
interface Waiter { readonly id: string; readonly done: () => void; readonly promise: Promise<void> }

function waiter(id: string): Waiter {
  let done!: () => void;
  const promise = new Promise<void>((r) => { done = r; });
  return { id, done, promise };
}

type Source = { field: 'imagePath'; path: string } | { field: 'imageUrl'; url: string } | { field: 'imageBase64'; text: string };

/**
 * Exactly one of the three sources, else the HTTP API's codes with this face's names (imagePath
 * only where `withPath`: roots to read from).
 */
function oneSource(args: Record<string, unknown>, withPath: boolean): Source {
  const sources: Source[] = jsonImageInputs({ imageUrl: args.imageUrl, imageBase64: args.imageBase64 }).map((i) =>
    i.field === 'imageUrl' ? { field: 'imageUrl', url: i.url } : { field: 'imageBase64', text: (i as { text: string }).text });
  if (args.imagePath !== undefined) {
    if (typeof args.imagePath !== 'string' || args.imagePath.trim() === '') {
      const message = 'imagePath must be a non-empty string (a file path)';
      throw new V2aError('invalid-request', message, { errors: [{ parameter: 'imagePath', message }] });
    }
    sources.unshift({ field: 'imagePath', path: args.imagePath });
  }
  if (sources.length === 0) throw new V2aError('missing-image', missingImageDetail(withPath));
  if (sources.length > 1) {
    const names = sources.map((s) => s.field);
    const detail = `Exactly one image source is allowed, but ${sources.length} were supplied: ${names.join(', ')}.`;
    throw new V2aError('multiple-images', detail, { errors: names.map((parameter) => ({ parameter, message: detail })) });
  }
  return sources[0]!;
}

/** imageUrl through the server's fetcher and its rules (https, allowlisted hosts, public addresses). */
async function fetchUrl(url: string, opts: StdioOptions, signal: AbortSignal): Promise<Uint8Array> {
  const { fetchFailure, fetchImage, ImageFetchError } = await import('../fetch-image.js');
  try {
    return await fetchImage(url, { allowlist: opts.fetch.imageFetchAllowlist, timeoutMs: opts.fetch.fetchTimeoutMs, maxBytes: opts.limits.maxBytes, signal });
  } catch (err) {
    if (!(err instanceof ImageFetchError)) throw err;
    throw fetchFailure(err);
  }
}

/** The renderer and sharp load on the first call, so that initialize is answered at once. */
let modules: Promise<[typeof import('../../core/job.js'), typeof import('../../node/index.js')]> | undefined;
const renderModules = () => (modules ??= Promise.all([
  import('../../core/job.js'),
  // One-shot decodes: libvips' operation cache would only hold memory.
  import('../../node/index.js').then((node) => (node.configureSharp(), node)),
]));

/**
 * The dispatcher of the stdio face: the shared tool with imagePath, rendering in this process.
 * `clientHasRoots`: the client being initialized declares roots (imagePath may work without ours).
 */
export function createStdioDispatcher(opts: StdioOptions, rootsReady: () => Promise<void>, clientHasRoots: () => boolean = () => false): McpDispatcher {
  const turns = new Turns(MOST_IN_LINE);
  // imagePath can work: roots of ours, or a client that lists its own.
  const pathAllowed = () => clientHasRoots() || opts.roots.all().length > 0;
  const tool = createRenderTool({
    imagePath: true,
    maxChars: opts.maxChars,
    async run(args, ctx) {
      const { imagePath: _p, imageUrl: _u, imageBase64: _b, ...rest } = args;
      const params = validateParams([{ name: 'tool arguments', kind: 'json', values: rest }]);
      const source = oneSource(args, pathAllowed());
      // The file is read, or fetched, on the call's turn: a waiting call holds no image.
      return turns.run(ctx.signal, async () => {
        let input: JobInput;
        if (source.field === 'imagePath') {
          await rootsReady();
          input = { kind: 'bytes', bytes: await opts.roots.read(source.path, opts.limits.maxBytes) };
        } else if (source.field === 'imageUrl') {
          input = { kind: 'bytes', bytes: await fetchUrl(source.url, opts, ctx.signal) };
        } else {
          input = { kind: 'base64', text: source.text };
        }
        const [{ runJob }, { decodeImage }] = await renderModules();
        const options = { decoder: decodeImage, limits: opts.limits, readsReport: true, signal: ctx.signal };
        const { result, output } = await runJob(input, params, options).catch((err: unknown) => {
          // What is wrong with a file's image names the file, as the path's own refusals do.
          if (source.field !== 'imagePath' || !(err instanceof V2aError) || err.info.exit !== EXIT.input) throw err;
          throw new V2aError(err.code, `${source.path}: ${err.detail}`, { cause: err, ...(err.errors ? { errors: err.errors } : {}) });
        });
        // Over the budget, the refusal checks the columns it names by rendering the source at them.
        return buildToolReply(result, output, opts.maxChars, zlibDeflate, (columns) => runJob(input, { ...params, columns }, options));
      });
    },
  });
  return createMcpDispatcher({
    serverInfo: { name: 'v2a', version: VERSION, title: 'v2a image to character art' },
    // Asked at initialize, once the client's capabilities are read (observe, serveStdio).
    instructions: () => mcpInstructions(imageUrlHosts(opts.fetch.imageFetchAllowlist), { imagePath: pathAllowed() ? true : 'no roots', limits: opts.limits }),
    tools: [tool],
    maxBatch: MAX_BATCH,
    messageCarrier: 'line',
    // A call its client cancelled is no error to report (notifications/cancelled).
    onError: (err) => {
      if (err instanceof V2aError && err.code === 'interrupted') return;
      process.stderr.write(`v2a mcp: ${err instanceof Error ? err.message : String(err)}\n`);
    },
  });
}

/** The signal of a pipe's requests as a whole: nothing aborts them but their own cancel (cancelOf). */
const NEVER = new AbortController().signal;

/** The key of this pipe's calls in InFlightCalls: one client, one session. */
const STDIO_SESSION = 'stdio';

const ID_VALUE = String.raw`("(?:[^"\\]|\\.){0,200}"|-?\d{1,16}(?:\.\d+)?)`;
/** A top-level `"id"` as a message's first key (none of its values opened before it)… */
const LEADING_ID = new RegExp(String.raw`^\s*\{[^{[]*?"id"\s*:\s*` + ID_VALUE + String.raw`\s*[,}]`);
/** …or as its last: JSON.stringify of an MCP SDK request writes `..."jsonrpc":"2.0","id":7}`. */
const TRAILING_ID = new RegExp(String.raw`[{,]\s*"id"\s*:\s*` + ID_VALUE + String.raw`\s*\}\s*$`);

/**
 * The id of a message known only by its first and last bytes (a too-long line, one too complex
 * to parse), else null: so that the client's call ends with the reason instead of its timeout.
 */
function messageId(prefix: string, suffix: string): string | number | null {
  const m = LEADING_ID.exec(prefix) ?? TRAILING_ID.exec(suffix);
  if (!m) return null;
  try {
    const id = JSON.parse(m[1]!) as unknown;
    return isValidId(id) ? id : null;
  } catch {
    return null;
  }
}

/**
 * Serves MCP on stdin/stdout until stdin ends; resolves then. Lines are framed here (stdio-lines.ts)
 * and parsed as /api/mcp parses a body (json-body.ts bounds, refused keys), not by the SDK's
 * StdioServerTransport, which drops to its onerror what fails its schema (malformed JSON, batches,
 * bad ids), leaving the client waiting, and ends the session on one line past its buffer bound.
 * Here every line is answered: -32700, -32600 (a too-long line too, with its id when its first
 * bytes name one), or the dispatcher's reply.
 */
export async function serveStdio(opts: StdioOptions): Promise<void> {
  const stdin = opts.stdin ?? process.stdin;
  const out = opts.stdout ?? process.stdout;
  // A line holds at most one image as base64 plus its arguments.
  const maxLineBytes = Math.ceil(opts.limits.maxBytes / 3) * 4 + 1024 * 1024;

  // One JSON text a line; write() queues in order. A reply waits for 'drain' when the pipe is
  // full, and gives up once stdout is gone ('drain' never comes then).
  const send = (message: unknown) => new Promise<void>((resolve) => {
    if (out.write(`${JSON.stringify(message)}\n`)) return resolve();
    const done = () => {
      out.off('drain', done);
      out.off('error', done);
      out.off('close', done);
      resolve();
    };
    out.once('drain', done);
    out.once('error', done);
    out.once('close', done);
  });

  let clientHasRoots = false;
  let rootsRequest = 0;
  /** The latest roots/list asked: its answer is taken whenever it comes (an earlier one's is not). */
  let asked: string | undefined;
  /** That request while calls wait for its answer (at most ROOTS_WAIT_MS each, once). */
  let pending: Waiter | undefined;
  // As over HTTP (cancels.ts), in the one session of this pipe. Lines keep their order, so a
  // cancel never comes before its call: none is kept for later.
  const calls = new InFlightCalls({ keepMs: 0, most: 1, maxBatch: MAX_BATCH });

  // Settled once the latest initialize line is answered: a client may write initialize,
  // initialized and a call at once, and no request of ours may go out before its initialize result.
  let initializeAnswered = Promise.resolve();

  const askRoots = () => {
    if (!clientHasRoots) return;
    pending?.done();
    const id = `v2a-roots-${++rootsRequest}`;
    pending = waiter(id);
    asked = id;
    // Calls wait on `pending` from now; the request goes out once initialize is answered (unless asked again meanwhile).
    void initializeAnswered.then(() => (pending?.id === id ? send({ jsonrpc: '2.0', id, method: 'roots/list' }) : undefined));
  };
  const rootsReady = async () => {
    const p = pending;
    if (!p) return;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([p.promise, new Promise<void>((r) => { timer = setTimeout(r, ROOTS_WAIT_MS); })]);
    clearTimeout(timer);
    // Unanswered: the roots stay as they were until the answer comes, and later calls do not wait
    // for it again.
    if (pending === p) pending = undefined;
  };

  const dispatcher = createStdioDispatcher(opts, rootsReady, () => clientHasRoots);

  /** What this face does with a message before the dispatcher: roots, cancellation. True: consumed. */
  const observe = async (msg: Record<string, unknown>): Promise<boolean> => {
    const method = typeof msg.method === 'string' ? msg.method : undefined;
    // The client's answer to our latest roots/list, also after the calls stopped waiting for it
    // (a client slow to answer has its roots in force from then on).
    if (method === undefined && asked !== undefined && msg.id === asked) {
      // A late answer: the calls read meanwhile wait for its roots too.
      const p = pending ?? (pending = waiter(asked));
      asked = undefined;
      // Calls wait on `pending` until the new roots are in force (setClientRoots looks each up).
      if (isRecord(msg.result)) {
        for (const left of await opts.roots.setClientRoots(msg.result.roots)) process.stderr.write(`v2a mcp: the client's root ${left}\n`);
      }
      if (pending === p) pending = undefined;
      p.done();
      return true;
    }
    if (method === 'initialize' && isRecord(msg.params) && isRecord(msg.params.capabilities)) {
      clientHasRoots = msg.params.capabilities.roots !== undefined;
    }
    if (method === 'notifications/initialized' || method === 'notifications/roots/list_changed') askRoots();
    calls.cancel(STDIO_SESSION, msg);
    return false;
  };

  const onLine = async (line: string) => {
    const refused: KeyProblem[] = [];
    let body: unknown;
    try {
      body = refuseKeys(parseJsonBounded(line, undefined, undefined, refused), refused);
    } catch (err) {
      if (err instanceof SyntaxError) return send(dispatcher.parseError());
      // Past the JSON bounds: the id, where the line's first or last bytes hold it (the same ends a
      // too-long line is known by: the patterns need not walk megabytes), so the client's call ends.
      if (err instanceof HttpProblem) return send(dispatcher.invalidRequest(messageId(line.slice(0, TOO_LONG_PREFIX_BYTES), line.slice(-TOO_LONG_PREFIX_BYTES)), err.detail));
      throw err;
    }
    const messages = (Array.isArray(body) ? body : [body]).filter(isRecord);
    let answered: (() => void) | undefined;
    if (messages.some((m) => m.method === 'initialize')) initializeAnswered = new Promise<void>((r) => { answered = r; });
    // Tracked before anything is awaited: a cancel on the next line, read in the same chunk, is
    // observed before this line goes on. notifications/cancelled of an id stops that call alone.
    const tracked = calls.track(STDIO_SESSION, body);
    try {
      const consumed = await Promise.all(messages.map(observe));
      if (!Array.isArray(body) && consumed[0]) return;
      const reply = await dispatcher.handle(body, { signal: NEVER, cancelOf: tracked.cancelOf });
      // A cancel that came while the reply was made (the preview's encoding) is read first: the
      // replies to cancelled requests are left out.
      await nextTurn();
      if (reply.status !== 200 || reply.body === undefined) return;
      const live = (r: JsonRpcResponse) => r.id === null || !tracked.cancelOf(r.id)?.aborted;
      const left = Array.isArray(reply.body) ? reply.body.filter(live) : [reply.body].filter(live);
      if (left.length) await send(Array.isArray(reply.body) ? left : left[0]);
    } finally {
      tracked.done();
      answered?.();
    }
  };

  // Messages being handled: when the input ends, their answers are still written before we return.
  const inflight = new Set<Promise<void>>();
  const track = (work: Promise<void>) => {
    const done = work.catch((err: unknown) => {
      process.stderr.write(`v2a mcp: ${err instanceof Error ? err.message : String(err)}\n`);
    });
    inflight.add(done);
    void done.finally(() => inflight.delete(done));
  };
  try {
    await readLines(stdin, maxLineBytes, {
      line: (text) => track(onLine(text)),
      tooLong: (prefix, bytes, suffix) => track(send(dispatcher.invalidRequest(messageId(prefix, suffix),
        `the message is ${bytes} bytes, over the ${maxLineBytes}-byte bound of one line (an image of at most ${opts.limits.maxBytes} bytes as base64, with its arguments); it was not read.`))),
    });
  } catch (err) {
    process.stderr.write(`v2a mcp: ${err instanceof Error ? err.message : String(err)}\n`);
  }
  pending?.done();
  await Promise.allSettled([...inflight]);
}
