/**
 * The CLI's contact with the outside world: exit codes, errors meant for the user, reading the
 * input (a path or `-` for standard input), writing the output, the terminal size and the ANSI
 * escapes of in-place playback. Light on purpose: no sharp, no renderer.
 */
import { closeSync, fstatSync, openSync, readSync, statSync, writeFileSync } from 'node:fs';
import { EXIT, V2aError } from '../core/errors.js';
import { integerFromText } from '../core/params/validate.js';
import { ImageInputError } from '../node/errors.js';
import { CLI_MAX_DECODED_BYTES, CLI_MAX_IMAGE_BYTES, CLI_MAX_IMAGE_PIXELS, readImageLimits, type ImageLimits } from '../settings/index.js';
import { SNIFF_BYTES } from './media-type.js';

export { EXIT };

/**
 * A usage error (exit 2): an invalid flag, argument or setting, or options that conflict; several
 * `lines` are shown one per line.
 */
export const usageError = (...lines: [string, ...string[]]): V2aError =>
  new V2aError('usage', lines.join(' '), lines.length > 1 ? { errors: lines.map((message) => ({ parameter: '', message })) } : {});

/** Errors already reported, one per input file (`v2a a.png b.png`): the process exits with `exitCode`. */
export class Reported extends Error {
  constructor(readonly exitCode: number) {
    super(`exit ${exitCode}`);
  }
}

/**
 * `err` naming the input file it is about (`v2a: photo.jpg: The image could not be decoded`), so
 * that with several files the one at fault is known; `-` is named `standard input`, as the I/O
 * errors name it. An I/O error names its input already.
 */
export function aboutFile(file: string, err: unknown): unknown {
  if (!(err instanceof V2aError) || err.code === 'io-error' || err.code === 'internal-error') return err;
  const named = (message: string) => `${file === '-' ? 'standard input' : file}: ${message}`;
  return new V2aError(err.code, named(err.message), {
    errors: err.errors?.map((e) => ({ ...e, message: named(e.message) })),
    cause: err.cause,
  });
}

/**
 * A value flag's parser that refuses a second value: commander keeps the last (`--columns 40
 * --columns 50` rendered 50 columns), where the HTTP API refuses a repeated field.
 */
export function once(flag: string): (value: string, previous: unknown) => string {
  return (value, previous) => {
    if (previous !== undefined) throw usageError(`${flag} was given more than once`);
    return value;
  };
}

/**
 * An integer flag from `min` to `max`, written as render parameters are in text (`+40`, `040`);
 * else a usage error naming the flag as typed and the range (`domain` when it says more).
 */
export function integerFlag(flag: string, raw: string, min: number, max: number, domain = `an integer from ${min} to ${max}`): number {
  const n = integerFromText(raw);
  if (n === undefined || n < min || n > max) throw usageError(`${flag} must be ${domain} (got ${JSON.stringify(raw)})`);
  return n;
}

/**
 * The file of `-o, --output <file>`, read from the parsed options: `-` is standard output (as `-`
 * is standard input), as is no -o. Not a commander parser: commander stores a parser's undefined
 * as '' for an option that takes a value. An empty name (`-o "$UNSET"`) and the input file itself
 * are refused: the one printed to the terminal what was meant for a file, the other overwrote
 * the picture with its art.
 */
export function outputFile(value: string | undefined, input: string): string | undefined {
  if (value === '-' || value === undefined) return undefined;
  if (value === '') throw usageError('-o/--output needs a file name (- for standard output)');
  if (input === '-' ? isStandardInput(value) : sameFile(value, input)) {
    throw usageError(`-o/--output '${value}' is ${input === '-' ? 'the file standard input reads' : 'the input file'}: refusing to overwrite it`);
  }
  return value;
}

/** `path` is the file standard input was opened on (`v2a - -o photo.png < photo.png`). */
function isStandardInput(path: string): boolean {
  try {
    const x = statSync(path), y = fstatSync(0);
    return y.isFile() && x.dev === y.dev && x.ino === y.ino;
  } catch {
    return false;
  }
}

/** Both paths name one existing file (device and inode): links and other spellings included. */
function sameFile(a: string, b: string): boolean {
  try {
    const x = statSync(a), y = statSync(b);
    return x.dev === y.dev && x.ino === y.ino;
  } catch {
    return false;
  }
}

// ---------------------------------------------------------------------------------------------
// Environment limits: the server's settings, parsed by the same code (src/settings).

export type InputLimits = ImageLimits;

/**
 * V2A_MAX_IMAGE_BYTES, V2A_MAX_IMAGE_PIXELS and V2A_MAX_DECODED_BYTES; a bad value is a usage error
 * (exit 2). `ownFiles`: render and play, whose limits default to CLI_MAX_IMAGE_BYTES,
 * CLI_MAX_IMAGE_PIXELS and CLI_MAX_DECODED_BYTES (`v2a mcp` keeps the server's: what agents send).
 */
export function readLimits(env: Readonly<Record<string, string | undefined>> = process.env, ownFiles = false): InputLimits {
  try {
    return readImageLimits(env, ownFiles ? { maxBytes: CLI_MAX_IMAGE_BYTES, maxPixels: CLI_MAX_IMAGE_PIXELS, maxDecodedBytes: CLI_MAX_DECODED_BYTES } : {});
  } catch (err) {
    throw usageError((err as Error).message);
  }
}

// ---------------------------------------------------------------------------------------------
// I/O errors.

const IO_REASONS: Readonly<Record<string, string>> = {
  ENOENT: 'no such file or directory',
  EACCES: 'permission denied',
  EPERM: 'operation not permitted',
  EISDIR: 'is a directory',
  ENOTDIR: 'a component of the path is not a directory',
  ENOSPC: 'no space left on device',
  EROFS: 'read-only file system',
  EMFILE: 'too many open files',
  ENAMETOOLONG: 'file name too long',
  EEXIST: 'file exists',
  ESPIPE: 'not seekable',
  EIO: 'input/output error',
};

function isSystemError(err: unknown): err is NodeJS.ErrnoException {
  return err instanceof Error && typeof (err as NodeJS.ErrnoException).code === 'string';
}

/**
 * An I/O error (exit 4) from a Node system error. An input is named first, as every message about
 * an input is (`x.jpg: no such file or directory`, as cat and chafa say it); standard input and
 * the output say what failed (`cannot read standard input: ...`, `cannot write 'art.txt': ...`).
 */
export function ioError(verb: 'read' | 'write', path: string, err: unknown): V2aError {
  const code = isSystemError(err) ? err.code! : '';
  const reason = IO_REASONS[code] ?? (code ? code : err instanceof Error ? err.message : String(err));
  // A URL given as a file: say what to do instead (the CLI fetches nothing itself).
  if (verb === 'read' && code === 'ENOENT' && /^https?:\/\//i.test(path)) {
    return new V2aError('io-error', `${path}: no such file (v2a reads files, not URLs: curl -sL '${path.replace(/'/g, `'\\''`)}' | v2a -)`);
  }
  if (verb === 'read' && path !== '-') return new V2aError('io-error', `${path}: ${reason}`);
  const what = path === '-' ? (verb === 'read' ? 'standard input' : 'standard output') : `'${path}'`;
  return new V2aError('io-error', `cannot ${verb} ${what}: ${reason}`);
}

// ---------------------------------------------------------------------------------------------
// Reading input.

function tooLarge(bytes: number | string, maxBytes: number): ImageInputError {
  return new ImageInputError(
    'too_large',
    `The image is too large (${bytes} bytes); the limit is ${maxBytes} bytes (V2A_MAX_IMAGE_BYTES).`,
  );
}

function concat(chunks: readonly Buffer[], total: number): Buffer {
  return chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, total);
}

/**
 * Opens `path` for reading, runs `use` on the descriptor and closes it; a system error on the way
 * becomes the CLI's io-error naming the path (a V2aError from `use` passes through).
 */
export function withReadFd<T>(path: string, use: (fd: number) => T): T {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch (err) {
    throw ioError('read', path, err);
  }
  try {
    return use(fd);
  } catch (err) {
    if (err instanceof V2aError) throw err;
    throw ioError('read', path, err);
  } finally {
    closeSync(fd);
  }
}

/** What looks at the first SNIFF_BYTES of an input (or all of it, if shorter) before the rest is read; it throws to refuse it. */
export type HeadCheck = (head: Uint8Array) => void;

/** The first bytes of a regular file, read without moving its offset. */
export function readHead(fd: number): Uint8Array {
  const buf = new Uint8Array(SNIFF_BYTES);
  return buf.subarray(0, readSync(fd, buf, 0, buf.length, 0));
}

/** A stream's `check`, run once its chunks hold SNIFF_BYTES or no more will be read (`end`). */
function streamCheck(check: HeadCheck | undefined): (chunks: readonly Buffer[], total: number, end: boolean) => void {
  let done = check === undefined;
  return (chunks, total, end) => {
    if (done || (total < SNIFF_BYTES && !end)) return;
    done = true;
    check!(concat(chunks, total).subarray(0, SNIFF_BYTES));
  };
}

/** Reads a regular file in one pass (its head checked first, then its size from fstat), or any other fd to EOF. */
function readPath(path: string, maxBytes: number | undefined, check: HeadCheck | undefined): Buffer {
  return withReadFd(path, (fd) => {
    const st = fstatSync(fd);
    if (st.isDirectory()) throw ioError('read', path, Object.assign(new Error('EISDIR'), { code: 'EISDIR' }));
    // A size of 0 may be a file that has no size until read (/proc): read to EOF like a pipe.
    if (st.isFile() && st.size > 0) {
      // The head first: a video or a file of another kind over the limit is told what it is, not "too large".
      check?.(readHead(fd));
      if (maxBytes !== undefined && st.size > maxBytes) throw tooLarge(st.size, maxBytes);
      const buf = Buffer.allocUnsafe(st.size);
      let off = 0;
      while (off < st.size) {
        const n = readSync(fd, buf, off, st.size - off, null);
        if (n === 0) break;
        off += n;
      }
      return off === st.size ? buf : buf.subarray(0, off);
    }
    // A FIFO, character device or process substitution: read to EOF, bounded.
    const chunks: Buffer[] = [];
    let total = 0;
    const sniff = streamCheck(check);
    for (;;) {
      const chunk = Buffer.allocUnsafe(1 << 20);
      const n = readSync(fd, chunk, 0, chunk.length, null);
      if (n === 0) break;
      total += n;
      chunks.push(chunk.subarray(0, n));
      // Over the limit, what was read is looked at (as at the end) before it is called too large.
      sniff(chunks, total, maxBytes !== undefined && total > maxBytes);
      if (maxBytes !== undefined && total > maxBytes) throw tooLarge(`more than ${maxBytes}`, maxBytes);
    }
    sniff(chunks, total, true);
    return concat(chunks, total);
  });
}

async function readStdin(maxBytes: number | undefined, check: HeadCheck | undefined): Promise<Buffer> {
  if (process.stdin.isTTY) {
    throw usageError("refusing to read from a terminal: pipe the input into 'v2a' or give a file name instead of -");
  }
  // `v2a - < somedir` reads as an empty stream: say what it is, not "the image is empty".
  if (fstatSync(0).isDirectory()) throw ioError('read', '-', Object.assign(new Error('EISDIR'), { code: 'EISDIR' }));
  const chunks: Buffer[] = [];
  let total = 0;
  const sniff = streamCheck(check);
  try {
    for await (const chunk of process.stdin as AsyncIterable<Buffer>) {
      total += chunk.length;
      chunks.push(chunk);
      sniff(chunks, total, maxBytes !== undefined && total > maxBytes);
      if (maxBytes !== undefined && total > maxBytes) {
        process.stdin.destroy();
        throw tooLarge(`more than ${maxBytes}`, maxBytes);
      }
    }
    sniff(chunks, total, true);
  } catch (err) {
    if (err instanceof V2aError) {
      process.stdin.destroy();
      throw err;
    }
    throw ioError('read', '-', err);
  }
  return concat(chunks, total);
}

/**
 * The whole input, read once: `-` is standard input. More than `maxBytes` -> ImageInputError
 * `too_large` (exit 3) without reading a large regular file beyond its head. `check` sees the
 * first bytes before the size is judged or the rest is read: what it throws stops the reading.
 */
export function readInput(path: string, maxBytes?: number, check?: HeadCheck): Promise<Buffer> {
  if (path === '-') return readStdin(maxBytes, check);
  try {
    return Promise.resolve(readPath(path, maxBytes, check));
  } catch (err) {
    return Promise.reject(err);
  }
}

// ---------------------------------------------------------------------------------------------
// Writing output.

/** Writes to standard output and resolves once the data is handed to the OS (honours backpressure). */
export function writeStdout(data: string | Uint8Array): Promise<void> {
  return new Promise((resolve, reject) => {
    process.stdout.write(data, (err) => {
      if (!err) resolve();
      else if ((err as NodeJS.ErrnoException).code === 'EPIPE') process.exit(EXIT.ok); // see exitQuietlyOnEpipe
      else reject(ioError('write', '-', err));
    });
  });
}

/** Writes `data` to the file `path` (`-o /dev/stdout | head`: see writeError). */
export function writeFile(path: string, data: string | Uint8Array): void {
  try {
    writeFileSync(path, data);
  } catch (err) {
    throw writeError(path, err);
  }
}

/** A failed write to the output file `path` as an io-error; a closed pipe (EPIPE) exits 0 at once, as on standard output. */
export function writeError(path: string, err: unknown): V2aError {
  if (isSystemError(err) && err.code === 'EPIPE') process.exit(EXIT.ok);
  return ioError('write', path, err);
}

/**
 * A closed pipe on standard output (`v2a render x.jpg | head`) is the reader's choice, not an
 * error: exit quietly with 0, so that `set -o pipefail` scripts do not fail on it. Any other
 * error on standard output is an I/O error (exit 4).
 */
export function exitQuietlyOnEpipe(): void {
  process.stdout.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code === 'EPIPE') process.exit(EXIT.ok);
    process.stderr.write(`v2a: ${ioError('write', '-', err).message}\n`);
    process.exit(EXIT.io);
  });
}

// ---------------------------------------------------------------------------------------------
// Terminal.

export function stdoutIsTty(): boolean {
  return process.stdout.isTTY === true;
}

/** Width of the terminal on standard output, or undefined when it is not a terminal. */
export function terminalSize(): { columns: number; rows: number } | undefined {
  if (!stdoutIsTty()) return undefined;
  const columns = process.stdout.columns;
  const rows = process.stdout.rows;
  if (!(columns > 0)) return undefined;
  return { columns, rows: rows > 0 ? rows : 24 };
}

export const ESC = {
  hideCursor: '\x1b[?25l',
  showCursor: '\x1b[?25h',
  home: '\x1b[H',
  clearScreen: '\x1b[2J',
  /** Erase from the cursor to the end of the screen. */
  clearBelow: '\x1b[J',
  reset: '\x1b[0m',
} as const;
