/**
 * Long `imageBase64` values lifted out of a JSON body before it is parsed: for the MCP endpoint,
 * whose dispatcher takes the parsed JSON-RPC body on the event loop. A 12 MP image is ~4 MB of
 * base64; joining the body, decoding it into a string, parsing it and cloning the value to a
 * render worker cost the event loop ~7.5 ms per tools/call (bench/README.md), the cap on such
 * calls whatever the worker count. Here each such value stays bytes, in the socket's chunks: the
 * body is scanned for strings (a search for quotes, not a parse), a long value directly after the
 * key is cut out and a placeholder (with a nonce the client cannot know) parsed in its place; the
 * parse then puts a LiftedText, the value's bytes, where the string would have been, and the
 * worker decodes the base64 from those bytes (a body's only lifted value takes its chunks'
 * buffers with it). The render route's large JSON bodies, parsed in a worker, go the same way.
 *
 * Only values that need no unescaping are lifted (no backslash: base64 has none), so a lifted
 * value is exactly the string JSON.parse would have made, and the bounds check (json-body.ts)
 * sees the same structure. A raw control character inside a lifted value, which makes the body
 * invalid JSON, is not looked for here (that would be a pass over every byte): the base64 decode
 * then refuses it, except the whitespace it skips in any imageBase64 (tab, CR, LF, FF), which is
 * accepted where strict JSON would refuse the whole body.
 */
import { randomBytes } from 'node:crypto';
import { parseJsonBounded, type KeyProblem } from './json-body.js';
import { LiftedText } from './render-inputs.js';

/** Values shorter than this are parsed as ever: lifting pays for itself on large ones only. */
export const MIN_LIFTED_BYTES = 64 * 1024;

const QUOTE = 0x22, BACKSLASH = 0x5c, COLON = 0x3a;

/** Placeholders' prefix: random per process (a client cannot name one), then a body counter. */
const PROCESS_NONCE = randomBytes(12).toString('hex');
let bodies = 0;

export interface LiftedBody {
  /** The body's text with each lifted value replaced by its placeholder. */
  readonly text: string;
  /** Placeholder -> the value's bytes; null when nothing was lifted. */
  readonly lifted: ReadonlyMap<string, LiftedText> | null;
}

/** A body's chunks addressed as one run of bytes. */
class Chunks {
  private readonly starts: number[] = [];
  readonly length: number;
  constructor(private readonly chunks: readonly Uint8Array[]) {
    let n = 0;
    for (const c of chunks) {
      this.starts.push(n);
      n += c.byteLength;
    }
    this.length = n;
  }

  /** Index of the chunk holding byte i (0 <= i < length). */
  private chunkOf(i: number): number {
    let lo = 0, hi = this.starts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (this.starts[mid]! <= i) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  }

  at(i: number): number | undefined {
    if (i < 0 || i >= this.length) return undefined;
    const c = this.chunkOf(i);
    return this.chunks[c]![i - this.starts[c]!];
  }

  /** The first index >= from holding `byte`, or -1. */
  indexOf(byte: number, from: number): number {
    if (from >= this.length) return -1;
    for (let c = this.chunkOf(Math.max(0, from)); c < this.chunks.length; c++) {
      const start = this.starts[c]!;
      const j = Buffer.prototype.indexOf.call(this.chunks[c], byte, Math.max(0, from - start));
      if (j >= 0) return start + j;
    }
    return -1;
  }

  /** Views of bytes a..b (exclusive), chunk by chunk. */
  views(a: number, b: number): Uint8Array[] {
    const out: Uint8Array[] = [];
    if (a >= b) return out;
    for (let c = this.chunkOf(a); c < this.chunks.length && this.starts[c]! < b; c++) {
      const start = this.starts[c]!, chunk = this.chunks[c]!;
      out.push(chunk.subarray(Math.max(0, a - start), Math.min(chunk.byteLength, b - start)));
    }
    return out;
  }

  /** Bytes a..b decoded (the cuts are at ASCII quotes: no UTF-8 sequence is split). */
  text(a: number, b: number, encoding: 'utf8' | 'latin1' = 'utf8'): string {
    const v = this.views(a, b);
    if (v.length === 1) return Buffer.from(v[0]!.buffer, v[0]!.byteOffset, v[0]!.byteLength).toString(encoding);
    return Buffer.concat(v).toString(encoding);
  }
}

/** Index of the quote closing the string opened at `open`, or -1. */
function closingQuote(body: Chunks, open: number): number {
  let j = body.indexOf(QUOTE, open + 1);
  while (j >= 0) {
    let slashes = 0;
    for (let k = j - 1; k > open && body.at(k) === BACKSLASH; k--) slashes++;
    if (slashes % 2 === 0) return j;
    j = body.indexOf(QUOTE, j + 1);
  }
  return -1;
}

const isSpace = (b: number | undefined) => b === 0x20 || b === 0x09 || b === 0x0a || b === 0x0d;

/** The body (its chunks) with its values of `key` of at least `minBytes` lifted out (see above). */
export function liftValues(chunks: readonly Uint8Array[], key: string, minBytes = MIN_LIFTED_BYTES): LiftedBody {
  const body = new Chunks(chunks);
  if (body.length < minBytes) return { text: body.text(0, body.length), lifted: null };
  const parts: string[] = [];
  const values: [placeholder: string, from: number, to: number][] = [];
  let nonce = '';
  let last = 0;
  // Where a value of `key` opens: the quote after `"key":` (-1: none expected).
  let valueAt = -1;
  for (let open = body.indexOf(QUOTE, 0); open >= 0; ) {
    const close = closingQuote(body, open);
    if (close < 0) break; // unterminated: the parse says so
    if (open === valueAt && close - open - 1 >= minBytes) {
      const bs = body.indexOf(BACKSLASH, open + 1);
      if (bs < 0 || bs > close) {
        if (!nonce) nonce = `${PROCESS_NONCE}-${(bodies++).toString(36)}`;
        const placeholder = `v2a-lifted-${nonce}-${values.length}`;
        values.push([placeholder, open + 1, close]);
        parts.push(body.text(last, open + 1), placeholder);
        last = close;
      }
    }
    valueAt = -1;
    let k = close + 1;
    while (isSpace(body.at(k))) k++;
    if (body.at(k) === COLON && close - open - 1 === key.length && body.text(open + 1, close, 'latin1') === key) {
      k++;
      while (isSpace(body.at(k))) k++;
      if (body.at(k) === QUOTE) valueAt = k;
    }
    open = body.indexOf(QUOTE, close + 1);
  }
  if (values.length === 0) return { text: body.text(0, body.length), lifted: null };
  parts.push(body.text(last, body.length));
  // One lifted value alone may take its chunks' buffers with it: the rest of the body is text by
  // now. A batch's values may share a chunk: theirs are copied.
  const own = values.length === 1 && chunks.every((c) => c.byteOffset === 0 && c.byteLength === c.buffer.byteLength);
  const lifted = new Map(values.map(([p, a, b]) => [p, new LiftedText(body.views(a, b), own)]));
  return { text: parts.join(''), lifted };
}

/** A JSON.parse reviver that puts each lifted value of `key` back, as its LiftedText. */
export function revive(key: string, lifted: ReadonlyMap<string, LiftedText>): (k: string, v: unknown) => unknown {
  return (k, v) => (k === key && typeof v === 'string' ? lifted.get(v) ?? v : v);
}

/**
 * The body parsed with its bounds checked (json-body.ts), each long value of `key` lifted out of
 * the parse and put back as its LiftedText (views of the chunks: the list itself is not needed
 * after this). A syntax error is JSON.parse's SyntaxError. `keyProblems`: as parseJsonBounded's.
 */
export function parseLifted(chunks: readonly Uint8Array[], key: string, keyProblems?: KeyProblem[]): unknown {
  const { text, lifted } = liftValues(chunks, key);
  return parseJsonBounded(withoutBom(text), undefined, lifted ? revive(key, lifted) : undefined, keyProblems);
}

/**
 * The text without a leading byte order mark, which RFC 8259 §8.1 lets a parser ignore (editors on
 * Windows and PowerShell's UTF8 encoding write one); JSON.parse refuses it as a token.
 */
export function withoutBom(text: string): string {
  return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
}
