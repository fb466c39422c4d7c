/**
 * The server's connections as shutdown sees them: busy from a request's headers until its reply
 * closes, idle otherwise (before the first request, between keep-alive requests, or while a
 * request line or headers trickle in).
 *
 * Node's server.close() calls closeIdleConnections(), which closed keep-alive connections between
 * requests, and also those whose reply was ended but not yet written out (cut short, unreported).
 * One that has sent no request yet, or part of its headers, counted as active from its accept (the
 * headers timeout covers it), and close() also stops the checks of that timeout: such a connection
 * held the drain for the whole V2A_SHUTDOWN_TIMEOUT_MS and made it a forced exit. Here
 * closeIdleConnections() and `drain()` close every idle connection (as above) at once, and
 * drain() any accepted after it.
 *
 * Bounds on what clients hold: open connections (V2A_MAX_CONNECTIONS) and the pace at which a
 * reply is taken (V2A_SEND_TIMEOUT_MS, MIN_SEND_RATE): the request timeouts end when the request
 * has arrived.
 */
import type { Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { onReplyDone } from './reply-done.js';

/**
 * Least a client must take of a reply, in bytes per second over each V2A_SEND_TIMEOUT_MS period
 * after the first, to keep its connection: 16 KiB/s is below any link a person still uses (2G
 * EDGE is ~25 KiB/s), and far above a client that holds a slot by reading a byte at a time.
 */
export const MIN_SEND_RATE = 16 * 1024;

/**
 * Bytes of a socket's output the kernel has taken: those handed to libuv less those still in its
 * queue. Node's public `bytesWritten` counts a reply's bytes as soon as it is ended, and its
 * `writableLength` a large write whole until it completes, so neither shows a reply of one
 * buffer being taken; libuv's queue does. Both fields are Node's own (net.js, stream_base).
 */
function taken(socket: Socket): number {
  const s = socket as Socket & { _bytesDispatched?: number; _handle?: { writeQueueSize?: number } | null };
  return (s._bytesDispatched ?? s.bytesWritten) - (s._handle?.writeQueueSize ?? 0);
}

export interface Connections {
  /** Requests whose reply has not closed yet. */
  readonly busy: number;
  /**
   * The reply is being sent: it must be taken within the send timeout, or at MIN_SEND_RATE or
   * more in each such period, or its connection is closed (a client that stops reading would
   * hold its admission slot and the reply's memory).
   */
  sending(res: ServerResponse): void;
  /** Closes every connection with no request in progress, now and from now on (shutdown). */
  drain(): void;
  /** Resolves once no request is in progress (at once when none is). */
  settled(): Promise<void>;
}

/**
 * `maxConnections`: past it, a new connection closes the one idle longest between requests, else
 * the oldest that has not sent a request's headers yet, or is closed itself when every one has a
 * request in progress (emitting the server's 'drop', as Node's maxConnections does), so idle or
 * silent connections cannot take every file descriptor nor keep new clients out.
 * `sendTimeoutMs`: see `sending`; 0: none.
 */
export function trackConnections(server: Server, opts: { maxConnections?: number; sendTimeoutMs?: number } = {}): Connections {
  const maxConnections = opts.maxConnections ?? Infinity;
  const sendTimeoutMs = opts.sendTimeoutMs ?? 0;
  const open = new Set<Socket>();
  /** Requests in progress per socket (pipelined requests wait on their socket for their turn). */
  const inProgress = new WeakMap<Socket, number>();
  /** Keep-alive connections between requests, longest idle first. */
  const idle = new Map<Socket, true>();
  /** Connections whose first request's headers have not arrived yet, oldest first. */
  const silent = new Map<Socket, true>();
  let busy = 0;
  let draining = false;
  let onSettled: Array<() => void> = [];

  server.on('connection', (socket: Socket) => {
    // Accepted after drain() but before the listener closed: nothing can be served on it.
    if (draining) return void socket.destroy();
    if (open.size >= maxConnections) {
      // At the cap, the connection idle longest between requests makes room (as nginx reuses
      // keep-alive connections), so that idle clients cannot keep out new ones (a health probe,
      // say) for their whole keep-alive timeout; its client opens a new one when it needs one.
      // Without one, the oldest connection that has sent no request's headers yet: connections
      // that send nothing kept every new one out for the whole headers timeout, and losing one
      // costs its client no work (nothing was read or answered on it). A connection with a
      // request in progress (headers read, its body or reply under way) is never closed here.
      // Without either, the new connection is closed unanswered, as Node's maxConnections did.
      const victim = idle.keys().next().value ?? silent.keys().next().value;
      if (victim === undefined) {
        server.emit('drop');
        return void socket.destroy();
      }
      forget(victim);
      victim.destroy();
    }
    open.add(socket);
    silent.set(socket, true);
    socket.once('close', () => forget(socket));
  });
  // The checkContinue / checkExpectation requests come here too (plugins/body-guard.ts re-emits them).
  server.on('request', (req, res) => {
    const socket = req.socket;
    busy++;
    inProgress.set(socket, (inProgress.get(socket) ?? 0) + 1);
    idle.delete(socket);
    silent.delete(socket);
    onReplyDone(req, res, () => {
      if (--busy === 0) {
        for (const resolve of onSettled) resolve();
        onSettled = [];
      }
      const left = (inProgress.get(socket) ?? 1) - 1;
      inProgress.set(socket, left);
      if (left === 0 && !socket.destroyed) idle.set(socket, true);
      // While draining, a connection whose last reply is done has nothing more to wait for (a
      // reply begun before shutdown did not say Connection: close): ended as Node ends one that did.
      if (draining && left === 0) socket.destroySoon();
    });
  });

  function forget(socket: Socket): void {
    open.delete(socket);
    idle.delete(socket);
    silent.delete(socket);
  }

  // Node's server.close() first calls closeIdleConnections(), which destroys every connection
  // whose request has arrived and whose reply has been ended (`res.finished`), even while most of
  // that reply still waits in the socket for a slow reader: a large reply was cut at shutdown,
  // the drain ended at once, and nothing counted or logged the cut. Here a connection is idle only
  // with no request in progress, and a request is in progress until its reply's 'close', which
  // comes once its last byte has been written out (or its socket closed). The send timeout still
  // bounds a client that stops reading, and the shutdown timeout the rest.
  server.closeIdleConnections = closeIdle;
  function closeIdle(): void {
    for (const socket of open) if (!inProgress.get(socket)) socket.destroy();
  }

  return {
    get busy() { return busy; },
    sending(res) {
      if (sendTimeoutMs <= 0 || res.writableFinished) return;
      // Checked once per period: the reply is done, or the client took at least MIN_SEND_RATE of
      // it in that period (a slow link, a large reply), or it is cut. A bound on the whole reply
      // cut a 5.7 MB svg on a 64 KiB/s link at 60 s while its client was still reading. (A reply
      // pipelined behind another has no socket yet: the one ahead of it is the one checked.)
      let before = res.socket ? taken(res.socket) : 0;
      let timer: NodeJS.Timeout;
      const check = () => {
        if (res.writableFinished) return;
        const socket = res.socket;
        if (socket) {
          const now = taken(socket);
          if (now - before < (MIN_SEND_RATE * sendTimeoutMs) / 1000) return void socket.destroy();
          before = now;
        }
        timer = setTimeout(check, sendTimeoutMs);
        timer.unref();
      };
      timer = setTimeout(check, sendTimeoutMs);
      timer.unref();
      res.once('close', () => clearTimeout(timer));
    },
    drain() {
      draining = true;
      closeIdle();
    },
    settled() {
      return busy === 0 ? Promise.resolve() : new Promise((resolve) => onSettled.push(resolve));
    },
  };
}
