/**
 * Render admission: the one bound on work in flight, shared by `POST /api/v1/render` and
 * `POST /api/mcp`. A request is admitted before its body is read (a body waiting for a worker
 * holds up to the body limit of memory), and holds its units until its socket is done with it:
 *
 * - capacity = V2A_WORKERS + V2A_QUEUE_LIMIT units. A render request takes one; an MCP request
 *   takes one for its body (none for a small one: initialize, ping and tools/list are never
 *   refused for renders in flight) and, once parsed, enough for one per `tools/call`.
 *   Refused: 503 `overloaded` with Retry-After (and `Connection: close`, so the body is not read).
 * - Units are released exactly once, when the response emits `close`: Node emits it after the
 *   reply is written, and when the socket closes first (client gone, timeout, request aborted,
 *   response cut short). No other path releases, so none can be missed or doubled.
 * - `signal` aborts when the socket closes before the reply was written: a queued render leaves
 *   the pool's queue at once, a running one has its result discarded (the pool frees its worker
 *   when libvips/JS returns).
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { clientClosed, HttpProblem } from './problem.js';

interface Ticket {
  units: number;
  released: boolean;
  readonly abort: AbortController;
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
  /** Aborted when the request's socket closed before its reply was written. */
  signalOf(request: FastifyRequest): AbortSignal;
  /** Units in use. */
  readonly inFlight: number;
  readonly capacity: number;
}

export function createAdmission(capacity: number, retryAfterSeconds: () => number): Admission {
  let inFlight = 0;
  const tickets = new WeakMap<FastifyRequest, Ticket>();

  const overloaded = (): HttpProblem => {
    const retry = String(retryAfterSeconds());
    return new HttpProblem('overloaded', `All render slots are busy: ${inFlight} of ${capacity} are taken by renders in progress, waiting or being uploaded; retry in ${retry} s.`, {
      headers: { 'retry-after': retry },
    });
  };

  return {
    get inFlight() { return inFlight; },
    capacity,
    admit(request, reply, units = 1) {
      if (tickets.has(request)) return;
      if (units > 0 && inFlight + units > capacity) throw overloaded();
      const ticket: Ticket = { units, released: false, abort: new AbortController() };
      inFlight += units;
      tickets.set(request, ticket);
      reply.raw.once('close', () => {
        if (!reply.raw.writableFinished) ticket.abort.abort(clientClosed());
        if (ticket.released) return;
        ticket.released = true;
        inFlight -= ticket.units;
      });
    },
    grow(request, units) {
      const ticket = tickets.get(request);
      if (!ticket) throw new Error('grow: request was not admitted');
      if (units <= 0 || ticket.released) return;
      if (inFlight + units > capacity) throw overloaded();
      inFlight += units;
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
