/**
 * Throughput of a command-line tool run once per image: `concurrency` processes at a time, a new
 * one started as soon as one exits, until `seconds` have passed (the ones running then finish and
 * count). Images per second = concurrency / mean process wall time (Little's law for a closed
 * loop that is never idle), which does not charge the tool for the ramp-down at the end; the
 * plain count / elapsed figure is kept too.
 */
import { percentiles, type Percentiles } from './load.js';
import { run } from './proc.js';

export interface ProcessLoadResult {
  readonly concurrency: number;
  readonly runs: number;
  readonly failures: number;
  readonly firstFailure: string | null;
  readonly elapsedSeconds: number;
  /** concurrency / mean wall time. */
  readonly imagesPerSecond: number;
  /** runs / elapsed (includes the ramp-down). */
  readonly imagesPerSecondElapsed: number;
  readonly latencyMs: Percentiles;
  /** Standard output of the first successful run. */
  readonly sampleOutput: string | null;
}

export async function runProcessLoad(
  cmd: string,
  args: readonly string[],
  concurrency: number,
  seconds: number,
  env: NodeJS.ProcessEnv = process.env,
): Promise<ProcessLoadResult> {
  const times: number[] = [];
  let failures = 0;
  let firstFailure: string | null = null;
  let sampleOutput: string | null = null;
  const t0 = performance.now();
  const deadline = t0 + seconds * 1000;
  const lane = async () => {
    while (performance.now() < deadline) {
      const r = await run(cmd, args, { env, timeoutMs: 120_000 });
      if (r.code === 0) {
        times.push(r.ms);
        sampleOutput ??= r.stdout.toString('utf8');
      } else {
        failures++;
        firstFailure ??= `exit ${r.code ?? r.signal}: ${r.stderr.trim().split('\n')[0] ?? ''}`;
      }
    }
  };
  await Promise.all(Array.from({ length: concurrency }, lane));
  const elapsedSeconds = (performance.now() - t0) / 1000;
  const lat = percentiles(times);
  return {
    concurrency,
    runs: times.length,
    failures,
    firstFailure,
    elapsedSeconds,
    imagesPerSecond: times.length ? concurrency / (lat.mean / 1000) : 0,
    imagesPerSecondElapsed: times.length / elapsedSeconds,
    latencyMs: lat,
    sampleOutput,
  };
}
