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
 * stops the call as it is tracked. A cancel may also come late, crossing its call's reply: the
 * ids recently answered in each session are remembered (bounded alike), and a cancel naming one
 * is ignored, so that it is not kept as an early cancel that would silently stop the next call
 * reusing the id (MCP forbids the reuse, yet clients with per-connection counters do it).
 */
import { randomUUID } from 'node:crypto';
import { HttpProblem } from '../problem.js';
import { isValidId, type JsonRpcId } from './protocol.js';
import { isRecord } from '../../core/args.js';
import { VISIBLE_TOKEN } from '../request-id.js';

/** MCP: a session id is visible ASCII (0x21..0x7E). Longer ones are no id of ours. */
const SESSION_ID = VISIBLE_TOKEN;

export const newSessionId = (): string => randomUUID();

/**
 * The key of the request's session, when its id is one that can key its calls: the id with the
 * client's address (as the rate limit tells clients apart), so that a session id a client made up
 * (`1`, which nothing stops it sending) cannot be used from another address to cancel its calls.
 */
export function sessionOf(header: string | string[] | undefined, client: string): string | undefined {
  return typeof header === 'string' && SESSION_ID.test(header) ? `${client} ${header}` : undefined;
}

const keyOf = (session: string, id: JsonRpcId): string => `${session}\n${typeof id}\n${id}`;

/**
 * The longest request id an early cancel, or an answered call, is kept for. A client picks its ids (MCP bounds neither
 * their kind nor their length), and a kept cancel holds its id for as long as a request may last:
 * without a bound, a few bodies of 20 MB ids held gigabytes. Real ids are counters or UUIDs; a
 * cancel naming a call already tracked stops it whatever its id.
 */
export const MAX_KEPT_ID_LENGTH = 256;

const messages = (body: unknown): readonly unknown[] => (Array.isArray(body) ? body : [body]);

/** The ids of the requests (messages with a method and an id) in a body. */
function requestIds(body: unknown): JsonRpcId[] {
  const ids: JsonRpcId[] = [];
  for (const m of messages(body)) {
    if (isRecord(m) && typeof m.method === 'string' && isValidId(m.id)) ids.push(m.id);
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
  /** How long a cancel that found no call is kept for it, and an answered call's id remembered (ms). */
  readonly keepMs: number;
  /** How many of each are kept at most (the oldest go first). */
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
  /** Calls answered (or cancelled) lately, by key: when each ended. A cancel naming one came late. */
  private readonly answered = new Map<string, number>();

  constructor(private readonly earlyCancels: EarlyCancels) {}

  /** Registers the requests of `body` under `session`, each with its own controller (none without a session). */
  track(session: string | undefined, body: unknown): TrackedCall {
    const own = new Map<string, AbortController>();
    /** Keys of ids short enough to remember once answered. */
    const short = new Set<string>();
    if (session !== undefined) {
      for (const id of requestIds(body)) {
        const key = keyOf(session, id);
        if (own.has(key)) continue;
        const abort = new AbortController();
        own.set(key, abort);
        if (String(id).length <= MAX_KEPT_ID_LENGTH) short.add(key);
        this.calls.set(key, abort);
        // Running again under a reused id: a cancel now names this call.
        this.answered.delete(key);
      }
    }
    this.dropExpired();
    for (const [key, abort] of own) if (this.early.delete(key)) abort.abort(cancelled());
    return {
      cancelOf: (id) => (session === undefined ? undefined : own.get(keyOf(session, id))?.signal),
      done: () => {
        const now = this.clock();
        for (const [key, abort] of own) {
          if (this.calls.get(key) !== abort) continue;
          this.calls.delete(key);
          if (short.has(key)) remember(this.answered, key, now, this.earlyCancels.most);
        }
      },
    };
  }

  /** Aborts the calls named by the `notifications/cancelled` messages of `body` in `session`. */
  cancel(session: string | undefined, body: unknown): void {
    if (session === undefined || (Array.isArray(body) && body.length > this.earlyCancels.maxBatch)) return;
    for (const m of messages(body)) {
      if (!isRecord(m) || m.method !== 'notifications/cancelled' || Object.hasOwn(m, 'id') || !isRecord(m.params)) continue;
      const id = m.params.requestId;
      if (!isValidId(id)) continue;
      const key = keyOf(session, id);
      const call = this.calls.get(key);
      if (call) {
        call.abort(cancelled());
        continue;
      }
      // Too long to keep, or late: its call was answered already.
      if (String(id).length > MAX_KEPT_ID_LENGTH) continue;
      this.dropExpired();
      if (this.answered.has(key)) continue;
      remember(this.early, key, this.clock(), this.earlyCancels.most);
    }
  }

  /** Cancels kept for calls not (yet) seen. */
  get waitingCancels(): number {
    this.dropExpired();
    return this.early.size;
  }

  /** Answered calls remembered, for late cancels. */
  get answeredCalls(): number {
    this.dropExpired();
    return this.answered.size;
  }

  private clock(): number {
    return (this.earlyCancels.now ?? Date.now)();
  }

  /** The oldest first (insertion order): stop at the first still within its time. */
  private dropExpired(): void {
    const oldest = this.clock() - this.earlyCancels.keepMs;
    for (const map of [this.early, this.answered]) {
      for (const [key, at] of map) {
        if (at > oldest) break;
        map.delete(key);
      }
    }
  }
}

/** Sets `key` as the newest entry of `map` (insertion order is age order), the oldest going past `most`. */
function remember(map: Map<string, number>, key: string, at: number, most: number): void {
  map.delete(key);
  map.set(key, at);
  if (map.size > most) map.delete(map.keys().next().value!);
}
