/**
 * The server's connections as shutdown sees them: busy from a request's headers until its reply
 * closes, idle otherwise (before the first request, between keep-alive requests, or while a
 * request line or headers trickle in).
 *
 * Node's server.close() (with Fastify's forceCloseConnections: 'idle') closes only keep-alive
 * connections between requests. One that has sent no request yet, or part of its headers, counts
 * as active from its accept (the headers timeout covers it), and close() also stops the checks of
 * that timeout: such a connection held the drain for the whole V2A_SHUTDOWN_TIMEOUT_MS and made it
 * a forced exit. `drain()` closes every idle connection at once, and any accepted after it.
 *
 * Bounds on what clients hold: open connections (V2A_MAX_CONNECTIONS) and the time to take a
 * reply (V2A_SEND_TIMEOUT_MS): the request timeouts end when the request has arrived.
 */
import type { Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { onReplyDone } from './reply-done.js';

export interface Connections {
  /** Requests whose reply has not closed yet. */
  readonly busy: number;
  /**
   * The reply is being sent: it must be taken within the send timeout, or its connection is
   * closed (a client that stops reading would hold its admission slot and the reply's memory).
   */
  sending(res: ServerResponse): void;
  /** Closes every connection with no request in progress, now and from now on (shutdown). */
  drain(): void;
}

/**
 * `maxConnections`: more are closed as they arrive (Node's server.maxConnections), so idle
 * keep-alive connections cannot take every file descriptor. `sendTimeoutMs`: see `sending`; 0: none.
 */
export function trackConnections(server: Server, opts: { maxConnections?: number; sendTimeoutMs?: number } = {}): Connections {
  if (opts.maxConnections !== undefined) server.maxConnections = opts.maxConnections;
  const sendTimeoutMs = opts.sendTimeoutMs ?? 0;
  const open = new Set<Socket>();
  /** Requests in progress per socket (pipelined requests wait on their socket for their turn). */
  const inProgress = new WeakMap<Socket, number>();
  let busy = 0;
  let draining = false;

  server.on('connection', (socket: Socket) => {
    // Accepted after drain() but before the listener closed: nothing can be served on it.
    if (draining) return void socket.destroy();
    open.add(socket);
    socket.once('close', () => open.delete(socket));
  });
  // The checkContinue / checkExpectation requests come here too (plugins/body-guard.ts re-emits them).
  server.on('request', (req, res) => {
    const socket = req.socket;
    busy++;
    inProgress.set(socket, (inProgress.get(socket) ?? 0) + 1);
    onReplyDone(req, res, () => {
      busy--;
      const left = (inProgress.get(socket) ?? 1) - 1;
      inProgress.set(socket, left);
      // While draining, a connection whose last reply is done has nothing more to wait for (a
      // reply begun before shutdown did not say Connection: close): ended as Node ends one that did.
      if (draining && left === 0) socket.destroySoon();
    });
  });

  return {
    get busy() { return busy; },
    sending(res) {
      if (sendTimeoutMs <= 0 || res.writableFinished) return;
      const timer = setTimeout(() => {
        if (!res.writableFinished) res.socket?.destroy();
      }, sendTimeoutMs);
      timer.unref();
      res.once('close', () => clearTimeout(timer));
    },
    drain() {
      draining = true;
      for (const socket of open) if (!inProgress.get(socket)) socket.destroy();
    },
  };
}
