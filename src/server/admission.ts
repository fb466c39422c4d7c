/**
 * Render admission: the one bound on work in flight, shared by `POST /api/v1/render` and
 * `POST /api/mcp`. A request is admitted before its body is read (a body waiting for a worker
 * holds up to the body limit of memory), and holds its units until its socket is done with it:
 *
 * - capacity = V2A_WORKERS + V2A_QUEUE_LIMIT units, at most V2A_CLIENT_SLOTS of them per client
 *   address (429 over it). A render request takes one; an MCP request
 *   takes one for its body (none for a small one: initialize, ping and tools/list are never
 *   refused for renders in flight) and, once parsed, enough for one per `tools/call`.
 *   Refused: 503 `overloaded` with Retry-After (and `Connection: close`, so the body is not read).
 * - Units are released exactly once, when the reply is done with its connection (onReplyDone:
 *   the response's `close` after the reply is written, or the socket's when it closes first:
 *   client gone, timeout, request aborted, response cut short, or a request pipelined behind
 *   others whose response never closes). No other path releases, so none can be missed or doubled.
 * - `signal` aborts when the response is done before the route was: the socket closed before the
 *   reply was written, or another answered it (an upload cut at shutdown, a body timeout). A
 *   queued render leaves the pool's queue at once, a running one has its result discarded (the
 *   pool frees its worker when libvips/JS returns).
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { answeredElsewhere, clientClosed, HttpProblem } from './problem.js';
import { normalizeIP } from '@fastify/rate-limit';
import { onReplyDone } from './reply-done.js';

interface Ticket {
  units: number;
  released: boolean;
  readonly abort: AbortController;
  /**
   * The client, as the rate limit tells them apart: request.ip (the proxy-supplied one under
   * V2A_TRUST_PROXY), an IPv6 address by its /64 (one host's usual share: keyed whole, one machine
   * had 2^64 shares of the slots), an IPv4-mapped one as its IPv4 address.
   */
  readonly client: string;
}

export interface Admission {
  /**
   * Admits the request with `units` (default one) or throws 503 `overloaded`. Zero units: a
   * request too small to matter is tracked (signal, grow) without taking a slot.
   */
  admit(request: FastifyRequest, reply: FastifyReply, units?: number): void;
  /** Adds `units` to an admitted request, or throws 503 `overloaded` (nothing taken). */
  grow(request: FastifyRequest, units: number): void;
  /** Units an admitted request holds. */
  held(request: FastifyRequest): number;
  /** Aborted when the request's response is done: its socket closed first, or it was answered. */
  signalOf(request: FastifyRequest): AbortSignal;
  /** Units in use. */
  readonly inFlight: number;
  readonly capacity: number;
  /** Most units one request can ever hold: the capacity, or one client's share when smaller. */
  readonly mostPerRequest: number;
}

/**
 * `clientSlots`: most units one client address may hold (0: no cap of its own), so that one
 * client's slow uploads or unread replies cannot take every slot: over it is 429 `rate-limited`.
 */
export function createAdmission(capacity: number, retryAfterSeconds: () => number, clientSlots = 0): Admission {
  let inFlight = 0;
  const tickets = new WeakMap<FastifyRequest, Ticket>();
  /** Units held per client address (entries removed at 0: the map stays as small as the clients in flight). */
  const byClient = new Map<string, number>();

  const clientFull = (client: string, units: number): HttpProblem | undefined => {
    if (clientSlots <= 0 || (byClient.get(client) ?? 0) + units <= clientSlots) return undefined;
    return new HttpProblem('rate-limited', `One client may have at most ${clientSlots} request${clientSlots === 1 ? '' : 's'} in flight (uploading, waiting, rendering or receiving their replies), and this one has ${byClient.get(client) ?? 0}; retry when one is done.`, {
      headers: { 'retry-after': '1' },
    });
  };
  const take = (client: string, units: number): void => {
    inFlight += units;
    if (units !== 0) byClient.set(client, (byClient.get(client) ?? 0) + units);
  };
  const give = (client: string, units: number): void => {
    inFlight -= units;
    const left = (byClient.get(client) ?? 0) - units;
    if (left > 0) byClient.set(client, left);
    else byClient.delete(client);
  };

  const overloaded = (): HttpProblem => {
    const retry = String(retryAfterSeconds());
    return new HttpProblem('overloaded', `All render slots are busy: ${inFlight} of ${capacity} are taken by renders in progress, waiting or being uploaded; retry in ${retry} s.`, {
      headers: { 'retry-after': retry },
    });
  };

  return {
    get inFlight() { return inFlight; },
    capacity,
    mostPerRequest: clientSlots > 0 ? Math.min(capacity, clientSlots) : capacity,
    admit(request, reply, units = 1) {
      if (tickets.has(request)) return;
      const client = normalizeIP(request.ip);
      if (units > 0) {
        const full = clientFull(client, units);
        if (full) throw full;
        if (inFlight + units > capacity) throw overloaded();
      }
      const ticket: Ticket = { units, released: false, abort: new AbortController(), client };
      take(client, units);
      tickets.set(request, ticket);
      onReplyDone(request.raw, reply.raw, () => {
        // After the route's own reply its work is done, and the abort reaches no one.
        ticket.abort.abort(reply.raw.writableFinished ? answeredElsewhere() : clientClosed());
        if (ticket.released) return;
        ticket.released = true;
        give(client, ticket.units);
      });
    },
    grow(request, units) {
      const ticket = tickets.get(request);
      if (!ticket) throw new Error('grow: request was not admitted');
      if (units <= 0 || ticket.released) return;
      const full = clientFull(ticket.client, units);
      if (full) throw full;
      if (inFlight + units > capacity) throw overloaded();
      take(ticket.client, units);
      ticket.units += units;
    },
    held(request) {
      const ticket = tickets.get(request);
      if (!ticket) throw new Error('held: request was not admitted');
      return ticket.units;
    },
    signalOf(request) {
      const ticket = tickets.get(request);
      if (!ticket) throw new Error('signalOf: request was not admitted');
      return ticket.abort.signal;
    },
  };
}
