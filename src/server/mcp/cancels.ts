/**
 * `notifications/cancelled` over stateless Streamable HTTP. The cancel arrives in a POST of its
 * own while the call's POST is still open, so the calls in flight are kept by the client's
 * `Mcp-Session-Id` (a random id handed out with `initialize`, never stored otherwise) and their
 * JSON-RPC ids. Without a session id there is no safe key: ids are small integers every client
 * reuses, and one client must not cancel another's call. A cancel that reaches another instance
 * than its call (no sticky routing) finds nothing and is ignored, as MCP allows.
 *
 * One controller per request id: cancelling one call of a batch stops that call alone, and only
 * its reply is left out (the dispatcher asks for it by id: McpHandleContext.cancelOf).
 *
 * A cancel may overtake its call: the call's POST is tracked once its body has been read, and a
 * large image takes a while to upload. Such a cancel is kept (bounded in number and time) and
 * stops the call as it is tracked. MCP forbids reusing a request id within a session, so a
 * cancel kept for a call that had already finished stops no other.
 */
import { randomUUID } from 'node:crypto';
import { HttpProblem } from '../problem.js';
import type { JsonRpcId } from './protocol.js';

/** MCP: a session id is visible ASCII (0x21..0x7E). Longer ones are no id of ours. */
const SESSION_ID = /^[\x21-\x7e]{1,128}$/;

export const newSessionId = (): string => randomUUID();

/** The request's session id, when it is one that can key its calls. */
export function sessionOf(header: string | string[] | undefined): string | undefined {
  return typeof header === 'string' && SESSION_ID.test(header) ? header : undefined;
}

const keyOf = (session: string, id: JsonRpcId): string => `${session}\n${typeof id}\n${id}`;

/**
 * The longest request id an early cancel is kept for. A client picks its ids (MCP bounds neither
 * their kind nor their length), and a kept cancel holds its id for as long as a request may last:
 * without a bound, a few bodies of 20 MB ids held gigabytes. Real ids are counters or UUIDs; a
 * cancel naming a call already tracked stops it whatever its id.
 */
export const MAX_KEPT_ID_LENGTH = 256;

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

const messages = (body: unknown): readonly unknown[] => (Array.isArray(body) ? body : [body]);

/** The ids of the requests (messages with a method and an id) in a body. */
function requestIds(body: unknown): JsonRpcId[] {
  const ids: JsonRpcId[] = [];
  for (const m of messages(body)) {
    if (isObject(m) && typeof m.method === 'string' && (typeof m.id === 'string' || (typeof m.id === 'number' && Number.isFinite(m.id)))) ids.push(m.id);
  }
  return ids;
}

export interface TrackedCall {
  /**
   * The signal a `notifications/cancelled` naming `id` in the same session aborts; undefined for
   * an id the body does not hold as a request, or without a session.
   */
  cancelOf(id: JsonRpcId): AbortSignal | undefined;
  /** Forgets the body's ids; call once its reply is settled. */
  done(): void;
}

const cancelled = () => new HttpProblem('interrupted', 'The client cancelled the call (notifications/cancelled).');

export interface EarlyCancels {
  /** How long a cancel that found no call is kept for it (ms). */
  readonly keepMs: number;
  /** How many are kept at most (the oldest go first). */
  readonly most: number;
  /**
   * V2A_MCP_MAX_BATCH: a larger batch is refused whole by the dispatcher, so its cancels are not
   * acted on either (else a few bodies of thousands of cancels would push every other client's
   * kept cancel out).
   */
  readonly maxBatch: number;
  readonly now?: () => number;
}

export class InFlightCalls {
  private readonly calls = new Map<string, AbortController>();
  /** Cancels that came before their call, by key: when each was received. */
  private readonly early = new Map<string, number>();

  constructor(private readonly earlyCancels: EarlyCancels) {}

  /** Registers the requests of `body` under `session`, each with its own controller (none without a session). */
  track(session: string | undefined, body: unknown): TrackedCall {
    const own = new Map<string, AbortController>();
    if (session !== undefined) {
      for (const id of requestIds(body)) {
        const key = keyOf(session, id);
        if (own.has(key)) continue;
        const abort = new AbortController();
        own.set(key, abort);
        this.calls.set(key, abort);
      }
    }
    this.dropExpired();
    for (const [key, abort] of own) if (this.early.delete(key)) abort.abort(cancelled());
    return {
      cancelOf: (id) => (session === undefined ? undefined : own.get(keyOf(session, id))?.signal),
      done: () => {
        for (const [key, abort] of own) if (this.calls.get(key) === abort) this.calls.delete(key);
      },
    };
  }

  /** Aborts the calls named by the `notifications/cancelled` messages of `body` in `session`. */
  cancel(session: string | undefined, body: unknown): void {
    if (session === undefined || (Array.isArray(body) && body.length > this.earlyCancels.maxBatch)) return;
    for (const m of messages(body)) {
      if (!isObject(m) || m.method !== 'notifications/cancelled' || Object.hasOwn(m, 'id') || !isObject(m.params)) continue;
      const id = m.params.requestId;
      if (typeof id !== 'string' && typeof id !== 'number') continue;
      const key = keyOf(session, id);
      const call = this.calls.get(key);
      if (call) {
        call.abort(cancelled());
        continue;
      }
      if (String(id).length > MAX_KEPT_ID_LENGTH) continue;
      this.early.delete(key);
      this.early.set(key, this.clock());
      if (this.early.size > this.earlyCancels.most) this.early.delete(this.early.keys().next().value!);
    }
  }

  /** Cancels kept for calls not (yet) seen. */
  get waitingCancels(): number {
    this.dropExpired();
    return this.early.size;
  }

  private clock(): number {
    return (this.earlyCancels.now ?? Date.now)();
  }

  /** The oldest first (insertion order): stop at the first still within its time. */
  private dropExpired(): void {
    const oldest = this.clock() - this.earlyCancels.keepMs;
    for (const [key, at] of this.early) {
      if (at > oldest) break;
      this.early.delete(key);
    }
  }
}
