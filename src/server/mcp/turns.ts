/**
 * One piece of work at a time, first come, first served, with a bounded line: the stdio face
 * renders in its own process, where a second render at once only shares the same cores and holds
 * another decoded image (48 calls at once held 1.4 GB). A cancelled wait leaves the line at once.
 */
import { V2aError } from '../../core/errors.js';

export class Turns {
  private tail: Promise<void> = Promise.resolve();
  private inLine = 0;

  /** `mostInLine`: calls in line, the running one included; more are refused (`overloaded`). */
  constructor(private readonly mostInLine: number) {}

  /** Calls in line, the running one included. */
  get size(): number {
    return this.inLine;
  }

  /** `work` once every earlier turn is over; rejects with the signal's reason if it aborts first. */
  async run<T>(signal: AbortSignal, work: () => Promise<T>): Promise<T> {
    signal.throwIfAborted();
    if (this.inLine >= this.mostInLine) {
      throw new V2aError('overloaded', `${this.inLine} calls are already in line (this server renders one at a time); retry once one has been answered.`);
    }
    const before = this.tail;
    let release!: () => void;
    this.tail = new Promise<void>((resolve) => { release = resolve; });
    this.inLine++;
    let started = false;
    try {
      await untilOrAborted(before, signal);
      started = true;
      return await work();
    } finally {
      this.inLine--;
      // Left the line early: the turn behind this one still waits for the one before it.
      if (started) release();
      else void before.then(release);
    }
  }
}

function untilOrAborted(p: Promise<void>, signal: AbortSignal): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    void p.then(() => {
      signal.removeEventListener('abort', onAbort);
      if (signal.aborted) reject(signal.reason);
      else resolve();
    });
  });
}
