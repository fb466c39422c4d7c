/**
 * Newline-delimited messages read from a stream, each line bounded. A line past the bound is
 * skipped to its newline (never held whole) and reported with its first and last bytes (where a
 * message's id is: JSON.stringify, as the MCP SDK sends, writes it last), so the reader goes on
 * with the next line: one over-long message must not end the session.
 */
import { StringDecoder } from 'node:string_decoder';

/** What a too-long line is reported with: at most this many of its first bytes, and of its last. */
export const TOO_LONG_PREFIX_BYTES = 1024;

export interface LineHandlers {
  /** A complete line (its `\r\n` or `\n` taken off); blank lines are not reported. */
  line(text: string): void;
  /** A line longer than the bound: its first bytes as text, its length in bytes, its last bytes. */
  tooLong(prefix: string, bytes: number, suffix: string): void;
}

/**
 * Reads `input` to its end, calling `on` for each line of at most `maxLineBytes` bytes (a last
 * line without a newline counts). Resolves when the input ends or closes; rejects on its error.
 */
export function readLines(input: NodeJS.ReadableStream, maxLineBytes: number, on: LineHandlers): Promise<void> {
  let parts: Buffer[] = [];
  let size = 0;
  // Set while skipping the rest of a too-long line: its first bytes, and its last ones so far.
  let skipped: string | undefined;
  let last: Buffer = Buffer.alloc(0);
  const decoder = () => new StringDecoder('utf8');
  const lastBytes = (before: Buffer, more: Buffer): Buffer =>
    Buffer.from(more.length >= TOO_LONG_PREFIX_BYTES ? more.subarray(-TOO_LONG_PREFIX_BYTES) : Buffer.concat([before, more]).subarray(-TOO_LONG_PREFIX_BYTES));
  // The last bytes may start inside a character: it is replaced, and the id is at the end.
  const text = (b: Buffer) => b.toString('utf8').replace(/\r$/, '');
  const finish = (tail: Buffer) => {
    if (skipped !== undefined) {
      on.tooLong(skipped, size + tail.length, text(lastBytes(last, tail)));
    } else if (size + tail.length > maxLineBytes) {
      const whole = Buffer.concat([...parts, tail]);
      on.tooLong(decoder().write(whole.subarray(0, TOO_LONG_PREFIX_BYTES)), size + tail.length, text(whole.subarray(-TOO_LONG_PREFIX_BYTES)));
    } else {
      // A byte-order mark (Windows writers put one first) is no part of the JSON.
      const text = Buffer.concat([...parts, tail]).toString('utf8').replace(/^\uFEFF/, '').replace(/\r$/, '');
      if (text.trim() !== '') on.line(text);
    }
    parts = [];
    size = 0;
    skipped = undefined;
    last = Buffer.alloc(0);
  };
  const onData = (chunk: Buffer | string) => {
    const buf = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    let start = 0;
    for (let nl = buf.indexOf(10, start); nl >= 0; nl = buf.indexOf(10, start)) {
      finish(buf.subarray(start, nl));
      start = nl + 1;
    }
    const rest = buf.subarray(start);
    if (!rest.length) return;
    if (skipped === undefined && size + rest.length > maxLineBytes) {
      const whole = Buffer.concat([...parts, rest]);
      skipped = decoder().write(whole.subarray(0, TOO_LONG_PREFIX_BYTES));
      last = lastBytes(Buffer.alloc(0), whole);
      parts = [];
    } else if (skipped !== undefined) {
      last = lastBytes(last, rest);
    }
    if (skipped === undefined) parts.push(rest);
    size += rest.length;
  };
  return new Promise((resolve, reject) => {
    let ended = false;
    const end = () => {
      if (ended) return;
      ended = true;
      input.off('data', onData);
      if (size > 0 || skipped !== undefined) finish(Buffer.alloc(0));
      resolve();
    };
    input.on('data', onData);
    input.once('end', end);
    input.once('close', end);
    input.once('error', (err) => {
      ended = true;
      input.off('data', onData);
      reject(err);
    });
  });
}
