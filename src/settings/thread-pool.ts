/**
 * The server's render workers and libuv's thread pool, sized together.
 *
 * sharp runs every pipeline (the header read, the decode) as libuv work, and libuv has one pool per
 * process, shared by the main thread and every worker thread: UV_THREADPOOL_SIZE threads, 4 by
 * default. With more render workers than pool threads, decodes wait for one another while cores
 * idle. Measured on a 16-core machine (bench/README.md, "Scaling on 16 cores"): at 8 and 16
 * workers 1 MP throughput stopped at 156 images/s with 6.4 of the 16 cores busy, and 12 MP at 47;
 * sized, 16 workers served 327 and 161.
 *
 * libuv reads the variable once, when the pool is first used, and Node's ES module loader is such
 * a use: an ES module entry cannot size the pool it is loaded with. So the entries that start the
 * server from CommonJS set it before anything else runs: dist/server/main.cjs (`npm start`) and
 * `v2a serve` (the CLI's bundle is CommonJS). An operator's own UV_THREADPOOL_SIZE is left alone.
 * Node-only (node:os): kept apart from src/settings/index.ts, which imports nothing.
 */
import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { isUnset, parseInteger, type IntegerRange } from './index.js';

type Env = Record<string, string | undefined>;

/** V2A_WORKERS's range. */
const WORKERS_RANGE: IntegerRange = { min: 1, max: 256 };

/** libuv's own bounds of UV_THREADPOOL_SIZE (it clamps to 1024; we refuse instead). */
export const THREAD_POOL_RANGE: IntegerRange = { min: 1, max: 1024 };

/** libuv's pool when UV_THREADPOOL_SIZE is unset. */
export const LIBUV_DEFAULT_POOL = 4;

/**
 * Pool threads beyond one per worker, for the main thread's own pool work (static files, the DNS
 * lookup of an imageUrl fetch) so that it never waits behind decodes: libuv's default size.
 */
export const POOL_HEADROOM = LIBUV_DEFAULT_POOL;

/** V2A_WORKERS when unset: the available cores, no more than a CPU quota allows. */
export const DEFAULT_WORKERS_TEXT = 'available cores (os.availableParallelism()), at most the whole CPUs of a cgroup CPU quota (a container\'s CPU limit), at least 1';

/** Where cgroups are mounted (v2; v1 has a directory per controller) and this process's own. */
const CGROUP_ROOT = '/sys/fs/cgroup';
const CGROUP_V1 = ['cpu', 'cpu,cpuacct'];
const PROC_CGROUP = '/proc/self/cgroup';

/**
 * The CPUs a cgroup quota allows this process, or undefined when there is none: the least quota
 * of its own cgroup (from /proc/self/cgroup) and of each one above it, since a parent's limit
 * binds its children; v2's `cpu.max`, else v1's quota and period. A container under a cgroup
 * namespace sees its own as the root; without one (cgroupns=host), or under systemd's
 * `CPUQuota=`, the quota sits in a sub-cgroup that reading the root alone missed. Node's
 * availableParallelism() counts the CPUs the process may run on, not the time it may use: a
 * container limited to half a CPU on a 64-core host got 64 workers.
 */
export function cgroupCpuQuota(read: (path: string) => string | undefined = readSmallFile): number | undefined {
  const own = read(PROC_CGROUP) ?? '';
  const v2 = least(/^0::(\/.*)$/m.exec(own)?.[1], (dir) => {
    const max = read(`${CGROUP_ROOT}${dir}cpu.max`)?.trim().split(/\s+/);
    return max && (max[0] === 'max' ? null : quotaOf(Number(max[0]), Number(max[1] ?? 100_000)) ?? null);
  });
  if (v2.found) return v2.quota;
  for (const controller of CGROUP_V1) {
    const path = new RegExp(`^\\d+:([^:]*,)?${controller}(,[^:]*)?:(\\/.*)$`, 'm').exec(own)?.[3];
    const v1 = least(path, (dir) => {
      const quota = read(`${CGROUP_ROOT}/${controller}${dir}cpu.cfs_quota_us`);
      return quota === undefined ? undefined : quotaOf(Number(quota), Number(read(`${CGROUP_ROOT}/${controller}${dir}cpu.cfs_period_us`) ?? 100_000)) ?? null;
    });
    if (v1.found) return v1.quota;
  }
  return undefined;
}

/**
 * The least quota `at` reads in cgroup `path` (absent: the root alone) and every one above it, as
 * directory prefixes ending in `/`; `at` gives undefined where there is no such file, null for
 * no quota there. `found`: some level had the file.
 */
function least(path: string | undefined, at: (dir: string) => number | null | undefined): { found: boolean; quota: number | undefined } {
  const parts = (path ?? '/').trim().split('/').filter(Boolean);
  let found = false;
  let quota: number | undefined;
  for (let n = parts.length; n >= 0; n--) {
    const q = at(n ? `/${parts.slice(0, n).join('/')}/` : '/');
    if (q === undefined) continue;
    found = true;
    if (q !== null && (quota === undefined || q < quota)) quota = q;
  }
  return { found, quota };
}

function quotaOf(quota: number, period: number): number | undefined {
  return quota > 0 && period > 0 ? quota / period : undefined;
}

function readSmallFile(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
}

/** V2A_WORKERS when unset: whole CPUs only, so that the workers are never throttled below their count. */
export function defaultWorkers(cores = availableParallelism(), quota = cgroupCpuQuota()): number {
  return Math.max(1, Math.min(cores, quota === undefined ? cores : Math.floor(quota)));
}

/** V2A_WORKERS's value (the default when unset); throws an Error saying what is allowed. */
export function parseWorkers(raw: string | undefined): number {
  return isUnset(raw) ? defaultWorkers() : parseInteger(raw, WORKERS_RANGE);
}

/** The pool for `workers` render workers: one thread each, plus the headroom. */
function threadPoolSizeFor(workers: number): number {
  return Math.min(THREAD_POOL_RANGE.max, workers + POOL_HEADROOM);
}

/**
 * Sets UV_THREADPOOL_SIZE in `env` for its V2A_WORKERS, unless it is set already; returns the size
 * it set, or undefined. Call before the pool's first use (see above). A V2A_WORKERS the server
 * refuses is left for it to refuse: nothing is set then.
 */
export function sizeThreadPool(env: Env = process.env): number | undefined {
  if (!isUnset(env.UV_THREADPOOL_SIZE)) return undefined;
  let workers: number;
  try {
    workers = parseWorkers(env.V2A_WORKERS);
  } catch {
    return undefined;
  }
  const size = threadPoolSizeFor(workers);
  env.UV_THREADPOOL_SIZE = String(size);
  return size;
}
