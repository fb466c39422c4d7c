/**
 * One build at a time across the test files' processes (they run in parallel): a lock directory
 * (mkdir is atomic) lets one of them build while the others wait and then find the build fresh,
 * instead of two builds writing the same files at once.
 */
import { mkdirSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const LOCK = join(ROOT, 'dist/.build.lock');
/** A lock older than this is left over from a killed run. */
const STALE_LOCK_MS = 5 * 60_000;

export async function buildOnce(fresh: () => boolean, build: () => Promise<void> | void): Promise<void> {
  if (fresh()) return;
  mkdirSync(join(ROOT, 'dist'), { recursive: true });
  const deadline = Date.now() + STALE_LOCK_MS;
  for (;;) {
    try {
      mkdirSync(LOCK);
      break;
    } catch {
      const lock = statSync(LOCK, { throwIfNoEntry: false });
      if (Date.now() > deadline || (lock && Date.now() - lock.mtimeMs > STALE_LOCK_MS)) rmSync(LOCK, { recursive: true, force: true });
      await new Promise((r) => setTimeout(r, 200));
    }
  }
  try {
    if (!fresh()) await build();
  } finally {
    rmSync(LOCK, { recursive: true, force: true });
  }
}
