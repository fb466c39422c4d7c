/**
 * SIGTERM and SIGINT from the entry's first step (main.cts) until startServer's own handler takes
 * over: held, not lost. With no listener, Node's default killed a server that was still loading
 * with 143 and no word, and as PID 1 in a container with no init the kernel ignores the signal,
 * so `docker stop` on a fresh container waited out its timeout and then sent SIGKILL.
 */
const SIGNALS = ['SIGTERM', 'SIGINT'] as const;
let held: NodeJS.Signals | undefined;
let holding = false;

function hold(signal: NodeJS.Signals): void {
  // A second signal exits at once, as it does once the server runs.
  if (held) process.exit(1);
  held = signal;
}

/** Keeps the first SIGTERM / SIGINT until releaseHeldSignal(). */
export function holdSignals(): void {
  if (holding) return;
  holding = true;
  for (const s of SIGNALS) process.on(s, hold);
}

/**
 * Ends the hold and returns the signal held, if any. Call it after adding the lasting handler:
 * Node stops watching a signal when its last listener goes, and one arriving then is dropped.
 */
export function releaseHeldSignal(): NodeJS.Signals | undefined {
  if (!holding) return undefined;
  holding = false;
  for (const s of SIGNALS) process.off(s, hold);
  const signal = held;
  held = undefined;
  return signal;
}
