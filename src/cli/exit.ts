/**
 * Ending the process when its terminal has gone. Node before nodejs/node#58200 (20 and 22 here)
 * restores each terminal's settings on exit and aborts (134) when that terminal has hung up:
 * playback whose terminal closed ended on a failed write and exited so about once in a dozen
 * runs. A process whose terminal is gone dies of SIGHUP instead, which is what the terminal's
 * closing asks for and what the shell reports as 129 either way.
 */
import { isatty } from 'node:tty';
import { EXIT } from '../core/errors.js';

/** Which of standard input, output and error were terminals when the process started. */
const TERMINALS = [0, 1, 2].filter((fd) => isatty(fd));

/** Whether a terminal the process started on has hung up (a hung-up terminal is no tty any more). */
export function terminalGone(): boolean {
  return TERMINALS.some((fd) => !isatty(fd));
}

/**
 * Dies of SIGHUP, its default action, once what listens for it has run (a piped video's temporary
 * copy is removed), each taken off first: none waits for the signal's event, in which an exit on
 * the way (an output error's handler) would abort.
 */
export function hangUp(): never {
  for (const listener of process.listeners('SIGHUP')) {
    process.removeListener('SIGHUP', listener);
    try {
      listener('SIGHUP');
    } catch {
      // the terminal is gone: what a listener could not restore stays as it is
    }
  }
  process.kill(process.pid, 'SIGHUP');
  // Delivered before kill() returns (nothing blocks it); a fallback only.
  process.exit(EXIT.hangup);
}

/**
 * From now on, however the process ends (process.exit, the event loop running dry, an uncaught
 * error), it dies of SIGHUP where a terminal has hung up: 'exit' listeners run before Node
 * restores the terminals.
 */
export function hangUpOnExit(): void {
  process.on('exit', () => {
    if (terminalGone()) hangUp();
  });
}
