/**
 * Long `imageBase64` values lifted out of a JSON body before it is parsed: for the MCP endpoint,
 * whose dispatcher takes the parsed JSON-RPC body on the event loop. A 12 MP image is ~4 MB of
 * base64; decoding it into a string, parsing it and cloning it to a render worker cost the event
 * loop ~7.5 ms per tools/call (bench/README.md), the cap on such calls whatever the worker count.
 * Here each such value stays bytes: the body is scanned for strings (a search for quotes, not a
 * parse), a long value directly after the key is cut out and a placeholder (with a nonce the
 * client cannot know) parsed in its place; the parse then puts a LiftedText, its bytes, where the
 * string would have been, and those bytes are transferred to the worker, which decodes them
 * (a body's only lifted value moves with the body's whole buffer, nothing copied).
 *
 * Only values that need no unescaping are lifted (no backslash: base64 has none), so a lifted
 * value is exactly the string JSON.parse would have made, and the bounds check (json-body.ts)
 * sees the same structure. A control character inside a lifted value, which makes the body
 * invalid JSON, is not looked for here: the value is then refused as base64 instead.
 */
import { randomBytes } from 'node:crypto';
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

/** Index of the quote closing the string opened at `open`, or -1. */
function closingQuote(buf: Buffer, open: number): number {
  let j = buf.indexOf(QUOTE, open + 1);
  while (j >= 0) {
    let slashes = 0;
    for (let k = j - 1; k > open && buf[k] === BACKSLASH; k--) slashes++;
    if (slashes % 2 === 0) return j;
    j = buf.indexOf(QUOTE, j + 1);
  }
  return -1;
}

const isSpace = (b: number | undefined) => b === 0x20 || b === 0x09 || b === 0x0a || b === 0x0d;

/** `body` with its values of `key` of at least `minBytes` lifted out (see above). */
export function liftValues(body: Buffer, key: string, minBytes = MIN_LIFTED_BYTES): LiftedBody {
  if (body.length < minBytes) return { text: body.toString('utf8'), lifted: null };
  const parts: string[] = [];
  let lifted: Map<string, LiftedText> | null = null;
  let nonce = '';
  let last = 0;
  // Where a value of `key` opens: the quote after `"key":` (-1: none expected).
  let valueAt = -1;
  const values: string[] = [];
  for (let open = body.indexOf(QUOTE); open >= 0; ) {
    const close = closingQuote(body, open);
    if (close < 0) break; // unterminated: the parse says so
    if (open === valueAt && close - open - 1 >= minBytes) {
      const bs = body.indexOf(BACKSLASH, open + 1);
      if (bs < 0 || bs > close) {
        if (!lifted) {
          lifted = new Map();
          nonce = `${PROCESS_NONCE}-${(bodies++).toString(36)}`;
        }
        const placeholder = `v2a-lifted-${nonce}-${lifted.size}`;
        lifted.set(placeholder, new LiftedText(body.subarray(open + 1, close)));
        values.push(placeholder);
        // Both cuts are at ASCII quotes: no UTF-8 sequence is split.
        parts.push(body.toString('utf8', last, open + 1), placeholder);
        last = close;
      }
    }
    valueAt = -1;
    let k = close + 1;
    while (isSpace(body[k])) k++;
    if (body[k] === COLON && close - open - 1 === key.length && body.toString('latin1', open + 1, close) === key) {
      k++;
      while (isSpace(body[k])) k++;
      if (body[k] === QUOTE) valueAt = k;
    }
    open = body.indexOf(QUOTE, close + 1);
  }
  if (!lifted) return { text: body.toString('utf8'), lifted: null };
  parts.push(body.toString('utf8', last));
  // One lifted value alone may take the body's buffer with it (a batch's share theirs: copied).
  if (values.length === 1 && body.byteOffset === 0 && body.byteLength === body.buffer.byteLength) {
    const only = lifted.get(values[0]!)!;
    lifted.set(values[0]!, new LiftedText(only.bytes, true));
  }
  return { text: parts.join(''), lifted };
}

/** A JSON.parse reviver that puts each lifted value of `key` back, as its LiftedText. */
export function revive(key: string, lifted: ReadonlyMap<string, LiftedText>): (k: string, v: unknown) => unknown {
  return (k, v) => (k === key && typeof v === 'string' ? lifted.get(v) ?? v : v);
}
