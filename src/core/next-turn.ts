/** One turn of the event loop, for work that must let pending events in (a cancel, say). */
type Schedule = (callback: () => void, ms?: number) => unknown;
const timers = globalThis as { setImmediate?: Schedule; setTimeout?: Schedule };

/** After the I/O now pending has been handled: Node's setImmediate, a browser's setTimeout (core runs in both). */
export function nextTurn(): Promise<void> {
  return new Promise((resolve) => {
    if (timers.setImmediate) timers.setImmediate(resolve);
    else timers.setTimeout!(resolve, 0);
  });
}
