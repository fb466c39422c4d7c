/**
 * A CommonJS file run with a V8 code cache: the built CLI (dist/cli/cli.cjs, one bundle) is
 * compiled from its cached code when the cache matches, else from source, and after a run the
 * code V8 compiled meanwhile is saved. Saved after the run, not right after the compile (as
 * v8-compile-cache does), so the cache also holds every function the command compiled lazily
 * while it ran: the next run neither parses nor compiles them. Works on Node 20,
 * which has no module compile cache, and on later versions, whose cache does not reach code
 * compiled through `vm`.
 *
 * A cache file is bytecode the process will run, so it is read only from a directory of the
 * current user that no one else may write to (checked on POSIX), and it is named by a checksum of
 * the source (V8's own check compares the source's length only), the V8 version and the
 * architecture; V8 still rejects data made under other flags, and the file is then written again.
 * V8 does not verify a cache's payload (a file with flipped bytes was run, and failed on every run
 * after), so each file starts with a crc32 of its data and one that does not match is not used.
 * Writing a file removes all but the KEEP_FILES most recently written (older versions of v2a, two
 * installs side by side keep theirs) and partial files an hour old. Every failure to read or
 * write the cache is ignored: the program runs the same without it.
 */
import { lstatSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { Script } from 'node:vm';
import { crc32 } from 'node:zlib';

/** Cache files kept in the directory: a few commands of a few installed versions. */
export const KEEP_FILES = 12;
/** A partial file (`*.tmp`) older than this was left by a run that died while writing it. */
const STALE_PARTIAL_MS = 3_600_000;

export interface CachedModule<T> {
  /** The file's `module.exports`. */
  readonly exports: T;
  /** Whether the run started from cached code (V8 accepted the cache file). */
  readonly fromCache: boolean;
  /** Writes the code compiled so far to the cache, unless it was read from there. Never throws. */
  save(): void;
}

/**
 * The directory for the cache, as Node's compile cache takes it (`NODE_COMPILE_CACHE`, else
 * `<os.tmpdir()>/node-compile-cache`), in a `v2a` folder of its own; undefined when
 * `NODE_DISABLE_COMPILE_CACHE` is set.
 */
export function codeCacheDir(env: NodeJS.ProcessEnv = process.env): string | undefined {
  if (env.NODE_DISABLE_COMPILE_CACHE) return undefined;
  return join(env.NODE_COMPILE_CACHE || join(tmpdir(), 'node-compile-cache'), 'v2a');
}

/**
 * The CLI's commands (cli.ts registers them; a test holds the two lists equal). Named here, not
 * imported: this module runs before the bundle is loaded.
 */
export const COMMAND_NAMES: readonly string[] = ['render', 'play', 'decode', 'serve', 'mcp', 'completion'];

/**
 * The cache a CLI run uses (`argv` as process.argv): one per command, since each compiles other
 * code. Help and version anywhere (and `help`): `options`; a command's name first: that command;
 * else the default command, `render` (`v2a photo.jpg`, `v2a adir`, `v2a - < x.png`, `v2a
 * --columns 80 x.png`). Any lowercase first word made a cache of its own (~600 KB each, of the 12
 * kept), pushing out render's.
 */
export function commandVariant(argv: readonly string[]): string {
  const args = argv.slice(2);
  if (args.length === 0 || args[0] === 'help' || args.some((a) => /^(-h|--help|-V|--version)$/.test(a))) return 'options';
  return COMMAND_NAMES.includes(args[0]!) ? args[0]! : 'render';
}

/** Owned by this process's user (always true where there are no user ids). */
function mine(uid: number): boolean {
  return typeof process.getuid !== 'function' || uid === process.getuid();
}

/** Only a directory of this user that others cannot write to may hold code this process runs. */
function trusted(dir: string): boolean {
  const st = lstatSync(dir);
  return st.isDirectory() && mine(st.uid) && (typeof process.getuid !== 'function' || (st.mode & 0o022) === 0);
}

/**
 * Runs the CommonJS `file` with a code cache in `dir` (none when undefined); `variant` names one
 * cache of several for the same file (the CLI keeps one per command: each compiles other code).
 * The file must not call `import()` itself (Node 20 runs a script's import() only behind a flag):
 * its caller can pass it an importer of its own. Its `require` resolves from `requireFrom` (a
 * file's path; default: `file` itself), as a bundle of another package's code needs (that
 * package's native parts are found from its own directory).
 */
export function requireWithCodeCache<T>(file: string, dir: string | undefined, variant: string, requireFrom: string = file): CachedModule<T> {
  const bytes = readFileSync(file);
  const sum = crc32(bytes).toString(16).padStart(8, '0');
  const cacheFile = dir === undefined ? undefined : join(dir, `${sum}-${process.versions.v8}-${process.arch}-${variant.replace(/[^\w-]/g, '_')}.bin`);
  let cachedData: Buffer | undefined;
  if (cacheFile !== undefined) {
    try {
      if (trusted(dir!) && mine(statSync(cacheFile).uid)) {
        const stored = readFileSync(cacheFile);
        if (stored.length > 4 && stored.readUInt32LE(0) === crc32(stored.subarray(4))) cachedData = stored.subarray(4);
      }
    } catch {
      /* no cache yet, or not ours to read */
    }
  }
  // Module.wrap's function, so that the file runs as node runs a CommonJS module.
  const source = `(function (exports, require, module, __filename, __dirname) { ${bytes.toString('utf8')}\n});`;
  const script = new Script(source, {
    filename: file,
    ...(cachedData ? { cachedData } : {}),
  });
  const fromCache = cachedData !== undefined && !script.cachedDataRejected;
  const mod = { exports: {} as T };
  (script.runInThisContext() as (e: unknown, r: NodeJS.Require, m: unknown, f: string, d: string) => void)(mod.exports, createRequire(requireFrom), mod, file, dirname(file));
  return {
    exports: mod.exports,
    fromCache,
    save() {
      if (cacheFile === undefined || fromCache) return;
      try {
        makeDirs(dir!);
        if (!trusted(dir!)) return;
        const data = script.createCachedData();
        const header = Buffer.alloc(4);
        header.writeUInt32LE(crc32(data));
        // Written aside and renamed: a concurrent run reads the old file or the new, never half of one.
        const partial = `${cacheFile}.${process.pid}.tmp`;
        writeFileSync(partial, Buffer.concat([header, data]), { mode: 0o600 });
        renameSync(partial, cacheFile);
        const files = readdirSync(dir!).map((name) => ({ name, t: statSync(join(dir!, name)).mtimeMs }));
        const caches = files.filter((f) => f.name.endsWith('.bin')).sort((a, b) => b.t - a.t);
        for (const { name } of caches.slice(KEEP_FILES)) rmSync(join(dir!, name), { force: true });
        // A run killed between write and rename leaves its partial file: gone after an hour.
        for (const { name, t } of files) if (name.endsWith('.tmp') && Date.now() - t > STALE_PARTIAL_MS) rmSync(join(dir!, name), { force: true });
      } catch {
        /* a read-only or full disk: the next run compiles from source again */
      }
    },
  };
}

/**
 * mkdir -p, each level once. Not `mkdirSync(dir, { recursive: true })`: on Node 20 it spins
 * forever under a parent that says ENOENT to mkdir but exists (NODE_COMPILE_CACHE=/proc/x).
 */
function makeDirs(dir: string): void {
  try {
    mkdirSync(dir, { mode: 0o700 });
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'EEXIST') return;
    const parent = dirname(dir);
    if (code !== 'ENOENT' || parent === dir) throw err;
    makeDirs(parent);
    mkdirSync(dir, { mode: 0o700 });
  }
}
