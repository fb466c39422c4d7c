/**
 * The folders `v2a mcp` may read images from, and the one way it opens an `imagePath`.
 *
 * Roots are the `--root` folders plus the roots the MCP client lists (`roots/list`, file: URIs),
 * each taken by its real path. Without `--root` the working directory is the root until the
 * client lists roots of its own, which then replace it (a client starts its servers in a folder of
 * its choosing, often / or the home folder); a working directory of / is never a root.
 * An `imagePath` is read only when:
 * 1. the path as written (relative paths against the first root) lies inside a root, checked
 *    before the file system is touched, so nothing is learnt about files elsewhere;
 * 2. walked one component at a time from that root, every symlink on the way leads inside a root,
 *    checked before its target is looked up (so a link out tells nothing of what lies there);
 * 3. it is a regular file (not a directory, device or fifo), no larger than the byte limit.
 * The file is opened with O_NOFOLLOW, and where it really is is read back from the open descriptor
 * (/proc/self/fd) and checked once more: a folder swapped for a symlink meanwhile is refused.
 * Every refusal is a V2aError `image-path-refused` (an MCP isError) naming the path and the roots.
 */
import { constants, promises as fs } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, isAbsolute, join, parse as parsePath, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { V2aError } from '../../core/errors.js';

/** True when `path` is `root` or inside it (both absolute and normalised). */
export function isInside(root: string, path: string): boolean {
  const rel = relative(root, path);
  return rel === '' || (!rel.startsWith('..' + sep) && rel !== '..' && !isAbsolute(rel));
}

function refused(path: string, why: string): V2aError {
  const message = `imagePath ${JSON.stringify(path)} ${why}`;
  return new V2aError('image-path-refused', message, { errors: [{ parameter: 'imagePath', message }] });
}

/** A root: the folder as given (absolute) and its real path. */
export interface Root {
  readonly given: string;
  readonly real: string;
}

/**
 * A folder given as a root, with its real path; throws Error with a one-line reason when it is not
 * one. Spelled as imagePath may be (~/, a file: URI): clients start `v2a mcp --root ~/Pictures`
 * from JSON arguments, where no shell expands the ~.
 */
export async function realFolder(dir: string): Promise<Root> {
  const given = resolve(spelled(dir) ?? dir);
  let real: string;
  try {
    real = await fs.realpath(given);
  } catch {
    throw new Error(`root ${JSON.stringify(dir)} does not exist`);
  }
  const st = await fs.stat(real);
  if (!st.isDirectory()) throw new Error(`root ${JSON.stringify(dir)} is not a folder`);
  return { given, real };
}

/**
 * A path as an agent may spell it: a file: URI (as roots are given) or ~/ for the home folder, as
 * a shell would read it; undefined for a URI of another scheme or host. Anything else as it is.
 */
function spelled(imagePath: string): string | undefined {
  if (/^file:/i.test(imagePath)) {
    try {
      return fileURLToPath(imagePath);
    } catch {
      return undefined;
    }
  }
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(imagePath)) return undefined;
  if (imagePath === '~' || imagePath.startsWith('~/')) return join(homedir(), imagePath.slice(1));
  return imagePath;
}

/** A client's entry as logged: quoted (no control character reaches the log), at most 200 characters. */
function shown(entry: unknown): string {
  const text = JSON.stringify(entry) ?? String(entry);
  return text.length > 200 ? `${text.slice(0, 197)}...` : text;
}

/** Symlinks followed in one path at most (as the kernel's ELOOP bound). */
const MAX_LINKS = 40;

export class Roots {
  /** The client's roots, replaced on every roots/list answer. */
  private client: readonly Root[] = [];
  /** Whether the client has answered roots/list: its list, even an empty one, then replaces the implicit root. */
  private listed = false;
  private readonly configured: readonly Root[];

  /**
   * `configured`: the --root folders, or with `implicit` the working directory, which the client's
   * roots replace and which is no root at all when it is the file system's root.
   */
  constructor(configured: readonly Root[], private readonly implicit = false) {
    this.configured = implicit ? configured.filter((r) => parsePath(r.real).root !== r.real) : configured;
    if (!implicit && configured.length === 0) throw new RangeError('Roots: at least one configured root');
  }

  /** Every root in force, configured first. */
  all(): readonly Root[] {
    const seen = new Set<string>();
    const configured = this.implicit && this.listed ? [] : this.configured;
    return [...configured, ...this.client].filter((r) => !seen.has(r.real) && seen.add(r.real));
  }

  /**
   * Takes the client's `roots/list` answer: file: URIs become real paths; other schemes, and
   * folders that do not exist here, are left out (nothing can be read through them). A list, even
   * an empty one or one of such entries alone, replaces the working directory as the implicit
   * root: a client that narrows its roots to nothing means no folder (a client that lists none
   * never answers, or has no roots capability). An answer without a list changes nothing.
   * Returns the entries left out, for the log.
   */
  async setClientRoots(roots: unknown): Promise<string[]> {
    if (!Array.isArray(roots)) return [];
    const out: Root[] = [];
    const dropped: string[] = [];
    for (const r of roots) {
      const uri = typeof r === 'object' && r !== null ? (r as { uri?: unknown }).uri : undefined;
      if (typeof uri !== 'string' || !uri.startsWith('file:')) {
        dropped.push(`${shown(uri ?? r)} is left out: not a file: URI`);
        continue;
      }
      try {
        out.push(await realFolder(fileURLToPath(uri)));
      } catch {
        dropped.push(`${shown(uri)} is left out: not a folder on this machine`);
      }
    }
    this.client = out;
    this.listed = true;
    return dropped;
  }

  private list(): string {
    const all = this.all().map((r) => r.given).join(', ');
    if (all) return all;
    return this.listed && this.implicit
      ? 'none: the client lists no folder of this machine; start v2a mcp with --root DIR'
      : 'none: start v2a mcp with --root DIR, or use a client that lists roots';
  }

  /**
   * The real path of `path` (absolute, inside `root` as written), walked from the root one
   * component at a time: a symlink is read, and followed only when its target lies inside a root;
   * nothing outside the roots is looked up. Throws `refused` for a link out, ENOENT-like for a
   * missing component.
   */
  private async walk(imagePath: string, path: string, root: Root, roots: readonly Root[]): Promise<string> {
    let current = root.real;
    const rest = relative(isInside(root.given, path) ? root.given : root.real, path).split(sep).filter(Boolean);
    for (let links = 0; rest.length > 0;) {
      const next = join(current, rest.shift()!);
      if (!(await fs.lstat(next)).isSymbolicLink()) {
        current = next;
        continue;
      }
      if (++links > MAX_LINKS) throw refused(imagePath, 'passes through too many symbolic links.');
      const target = resolve(dirname(next), await fs.readlink(next));
      const inside = roots.find((r) => isInside(r.real, target)) ?? roots.find((r) => isInside(r.given, target));
      if (!inside) throw refused(imagePath, `leads outside the allowed roots (${this.list()}) through a symbolic link.`);
      current = inside.real;
      rest.unshift(...relative(isInside(inside.real, target) ? inside.real : inside.given, target).split(sep).filter(Boolean));
    }
    return current;
  }

  /** Where the open file really is (Linux: /proc/self/fd), or undefined where that cannot be read. */
  private static async openedAt(handle: fs.FileHandle): Promise<string | undefined> {
    try {
      return await fs.readlink(`/proc/self/fd/${handle.fd}`);
    } catch {
      return undefined;
    }
  }

  /** Checks `imagePath` and reads the file (at most `maxBytes`). */
  async read(imagePath: string, maxBytes: number): Promise<Uint8Array> {
    const roots = this.all();
    if (imagePath.includes('\0')) throw refused(imagePath, 'contains a NUL character.');
    const path = spelled(imagePath);
    if (path === undefined) throw refused(imagePath, 'is a URI of another scheme or host: give a file path or a file: URI of this machine.');
    if (roots.length === 0 && !isAbsolute(path)) throw refused(imagePath, `cannot be read: there are no allowed roots (${this.list()}).`);
    const asWritten = isAbsolute(path) ? resolve(path) : resolve(roots[0]!.given, path);
    // A relative, ~/ or file: path is named as read too: the agent cannot see the first root.
    const readAs = asWritten === imagePath ? '' : `(read as ${JSON.stringify(asWritten)}) `;
    // As written, a path may name a root by the folder given or by its real path (/tmp or /private/tmp).
    const root = roots.find((r) => isInside(r.given, asWritten)) ?? roots.find((r) => isInside(r.real, asWritten));
    if (!root) {
      throw refused(imagePath, `${readAs}is outside the allowed roots (${this.list()}). v2a mcp reads files only inside its --root folders and the client's roots.`);
    }
    let real: string;
    try {
      real = await this.walk(imagePath, asWritten, root, roots);
    } catch (err) {
      if (err instanceof V2aError) throw err;
      throw refused(imagePath, `${readAs}does not exist (or cannot be reached) inside the allowed roots (${this.list()}).`);
    }
    let handle: fs.FileHandle;
    try {
      handle = await fs.open(real, constants.O_RDONLY | constants.O_NOFOLLOW | (constants.O_NONBLOCK ?? 0));
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      throw refused(imagePath, code === 'EACCES' || code === 'EPERM' ? 'cannot be read: permission denied.' : 'cannot be opened.');
    }
    try {
      // The file opened must be the one walked to: a folder on the way swapped for a symlink since
      // would have led the open elsewhere.
      const opened = await Roots.openedAt(handle);
      if (opened !== undefined && !roots.some((r) => isInside(r.real, opened))) {
        throw refused(imagePath, `leads outside the allowed roots (${this.list()}) through a symbolic link.`);
      }
      const st = await handle.stat();
      if (st.isDirectory()) throw refused(imagePath, 'is a directory, not an image file.');
      if (!st.isFile()) throw refused(imagePath, 'is not a regular file.');
      if (st.size > maxBytes) {
        throw new V2aError('image-too-large', `imagePath ${JSON.stringify(imagePath)} is ${st.size} bytes, over the limit of ${maxBytes} bytes (V2A_MAX_IMAGE_BYTES).`, {
          errors: [{ parameter: 'imagePath', message: 'too large' }],
        });
      }
      return st.size > 0 ? await readSized(handle, st.size) : await readToEnd(handle, imagePath, maxBytes);
    } catch (err) {
      if (err instanceof V2aError) throw err;
      throw refused(imagePath, 'could not be read.');
    } finally {
      await handle.close();
    }
  }
}

async function readSized(handle: fs.FileHandle, size: number): Promise<Uint8Array> {
  const bytes = new Uint8Array(size);
  let at = 0;
  while (at < bytes.length) {
    const { bytesRead } = await handle.read(bytes, at, bytes.length - at, at);
    if (bytesRead === 0) break;
    at += bytesRead;
  }
  return at === bytes.length ? bytes : bytes.subarray(0, at);
}

/** A file that reports size 0 until read (/proc, some FUSE mounts): read to EOF, bounded. */
async function readToEnd(handle: fs.FileHandle, imagePath: string, maxBytes: number): Promise<Uint8Array> {
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const chunk = new Uint8Array(64 * 1024);
    const { bytesRead } = await handle.read(chunk, 0, chunk.length, total);
    if (bytesRead === 0) break;
    total += bytesRead;
    if (total > maxBytes) {
      throw new V2aError('image-too-large', `imagePath ${JSON.stringify(imagePath)} is more than ${maxBytes} bytes, over the limit (V2A_MAX_IMAGE_BYTES).`, {
        errors: [{ parameter: 'imagePath', message: 'too large' }],
      });
    }
    chunks.push(chunk.subarray(0, bytesRead));
  }
  return Buffer.concat(chunks, total);
}
