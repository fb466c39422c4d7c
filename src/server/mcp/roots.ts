/**
 * The folders `v2a mcp` may read images from, and the one way it opens an `imagePath`.
 *
 * Roots are the `--root` folders (default: the working directory) plus the roots the MCP client
 * lists (`roots/list`, file: URIs), each taken by its real path. An `imagePath` is read only when:
 * 1. the path as written (relative paths against the first root) lies inside a root, checked
 *    before the file system is touched, so nothing is learnt about files elsewhere;
 * 2. its real path (every symlink resolved) still lies inside a root: a symlink leading out is refused;
 * 3. it is a regular file (not a directory, device or fifo), no larger than the byte limit.
 * The file is opened by its real path with O_NOFOLLOW and checked again on the open descriptor.
 * Every refusal is a V2aError `image-path-refused` (an MCP isError) naming the path and the roots.
 */
import { constants, promises as fs } from 'node:fs';
import { isAbsolute, relative, resolve, sep } from 'node:path';
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

/** A folder given as a root, with its real path; throws Error with a one-line reason when it is not one. */
export async function realFolder(dir: string): Promise<Root> {
  const given = resolve(dir);
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

export class Roots {
  /** The client's roots, replaced on every roots/list answer. */
  private client: readonly Root[] = [];

  /** `configured`: the --root folders (or the working directory). */
  constructor(private readonly configured: readonly Root[]) {
    if (configured.length === 0) throw new RangeError('Roots: at least one configured root');
  }

  /** Every root in force, configured first. */
  all(): readonly Root[] {
    const seen = new Set<string>();
    return [...this.configured, ...this.client].filter((r) => !seen.has(r.real) && seen.add(r.real));
  }

  /**
   * Takes the client's `roots/list` answer: file: URIs become real paths; other schemes, and
   * folders that do not exist here, are left out (nothing can be read through them).
   */
  async setClientRoots(roots: unknown): Promise<void> {
    const out: Root[] = [];
    if (Array.isArray(roots)) {
      for (const r of roots) {
        const uri = typeof r === 'object' && r !== null ? (r as { uri?: unknown }).uri : undefined;
        if (typeof uri !== 'string' || !uri.startsWith('file:')) continue;
        try {
          out.push(await realFolder(fileURLToPath(uri)));
        } catch {
          // not a folder on this machine
        }
      }
    }
    this.client = out;
  }

  private list(): string {
    return this.all().map((r) => r.given).join(', ');
  }

  /** Checks `imagePath` and reads the file (at most `maxBytes`). */
  async read(imagePath: string, maxBytes: number): Promise<Uint8Array> {
    const roots = this.all();
    if (imagePath.includes('\0')) throw refused(imagePath, 'contains a NUL character.');
    const asWritten = isAbsolute(imagePath) ? resolve(imagePath) : resolve(roots[0]!.given, imagePath);
    // As written, a path may name a root by the folder given or by its real path (/tmp or /private/tmp).
    if (!roots.some((root) => isInside(root.given, asWritten) || isInside(root.real, asWritten))) {
      throw refused(imagePath, `is outside the allowed roots (${this.list()}). v2a mcp reads files only inside its --root folders and the client's roots.`);
    }
    let real: string;
    try {
      real = await fs.realpath(asWritten);
    } catch {
      throw refused(imagePath, 'does not exist (or cannot be reached).');
    }
    if (!roots.some((root) => isInside(root.real, real))) {
      throw refused(imagePath, `leads outside the allowed roots (${this.list()}) through a symbolic link.`);
    }
    let handle: fs.FileHandle;
    try {
      handle = await fs.open(real, constants.O_RDONLY | constants.O_NOFOLLOW | (constants.O_NONBLOCK ?? 0));
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      throw refused(imagePath, code === 'EACCES' || code === 'EPERM' ? 'cannot be read: permission denied.' : 'cannot be opened.');
    }
    try {
      const st = await handle.stat();
      if (st.isDirectory()) throw refused(imagePath, 'is a directory, not an image file.');
      if (!st.isFile()) throw refused(imagePath, 'is not a regular file.');
      if (st.size > maxBytes) {
        throw new V2aError('image-too-large', `imagePath ${JSON.stringify(imagePath)} is ${st.size} bytes, over the limit of ${maxBytes} bytes (V2A_MAX_IMAGE_BYTES).`, {
          errors: [{ parameter: 'imagePath', message: 'too large' }],
        });
      }
      const bytes = new Uint8Array(st.size);
      let at = 0;
      while (at < bytes.length) {
        const { bytesRead } = await handle.read(bytes, at, bytes.length - at, at);
        if (bytesRead === 0) break;
        at += bytesRead;
      }
      return at === bytes.length ? bytes : bytes.subarray(0, at);
    } catch (err) {
      if (err instanceof V2aError) throw err;
      throw refused(imagePath, 'could not be read.');
    } finally {
      await handle.close();
    }
  }
}
