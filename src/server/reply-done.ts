/**
 * When a reply is done with its connection: its `close`, or its socket's, whichever comes first.
 *
 * A response's own `close` is not enough: of the requests pipelined on one connection, only the
 * one being answered has the socket; those waiting their turn never emit `close` when the client
 * goes away (Node 20: 8 pipelined, 1 response close, 8 request closes). Whatever they held (an
 * admission slot, a busy count) was held for good: a few pipelined bursts, each cut off, took
 * every render slot until the server restarted. A request's own `close` comes when its body has
 * been read, long before its reply, so it cannot stand in either.
 *
 * One `close` listener per socket serves every request pipelined on it (no listener per request
 * on a shared emitter).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

const waiting = new WeakMap<Socket, Set<() => void>>();

/** Calls `done` exactly once, when `res` closes or the socket `req` came on closes. */
export function onReplyDone(req: IncomingMessage, res: ServerResponse, done: () => void): void {
  const socket = req.socket;
  let called = false;
  const once = (): void => {
    if (called) return;
    called = true;
    waiting.get(socket)?.delete(once);
    done();
  };
  res.once('close', once);
  if (socket.destroyed) return void queueMicrotask(once);
  let set = waiting.get(socket);
  if (!set) {
    const pending = new Set<() => void>();
    set = pending;
    waiting.set(socket, pending);
    socket.once('close', () => {
      waiting.delete(socket);
      for (const fn of pending) fn();
    });
  }
  set.add(once);
}
