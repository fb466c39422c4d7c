/**
 * Base64 (RFC 4648 §4: standard alphabet, `=` padding) over Uint8Array, in ECMAScript plus the
 * TextDecoder every runtime has, so the isomorphic core needs neither Buffer nor btoa/atob.
 *
 * `decodeBase64` is strict: it accepts only canonical base64 (length a multiple of 4, alphabet
 * characters only, at most two `=` and only at the end, zero pad bits) and throws
 * `Base64Error` otherwise. Whitespace and `data:` URL envelopes are handled by the separate,
 * explicit `unwrapBase64` / `decodeBase64Input` helpers (used for user-supplied `imageBase64`).
 */

import { checkBytes, describeType } from '../args.js';
import { textDecoder, textEncoder } from '../text-codec.js';
import { V2aError } from '../errors.js';

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
const PAD = 61; // '='

/** Alphabet as char codes. */
const ENC = new Uint8Array(64);
/** char code (0..255) -> 6-bit value, or 255 when not in the alphabet. */
const DEC = new Uint8Array(256).fill(255);
for (let i = 0; i < 64; i++) {
  const c = ALPHABET.charCodeAt(i);
  ENC[i] = c;
  DEC[c] = i;
}

/** Thrown for input that is not strict base64. */
/** Text that is not base64: a V2aError of code `invalid-base64`, as the library's input errors are. */
export class Base64Error extends V2aError {
  /** @param reason what is wrong, without the `invalid base64: ` prefix of the message */
  constructor(readonly reason: string) {
    super('invalid-base64', `invalid base64: ${reason}`);
    this.name = 'Base64Error';
  }
}

/** Base64 of `bytes`, standard alphabet, padded. */
export function encodeBase64(bytes: Uint8Array): string {
  checkBytes(bytes, 'encodeBase64: bytes');
  const n = bytes.length;
  const out = new Uint8Array(Math.ceil(n / 3) * 4);
  const whole = n - (n % 3);
  let o = 0;
  for (let i = 0; i < whole; i += 3) {
    const v = (bytes[i]! << 16) | (bytes[i + 1]! << 8) | bytes[i + 2]!;
    out[o] = ENC[v >>> 18]!;
    out[o + 1] = ENC[(v >>> 12) & 63]!;
    out[o + 2] = ENC[(v >>> 6) & 63]!;
    out[o + 3] = ENC[v & 63]!;
    o += 4;
  }
  const rest = n - whole;
  if (rest === 1) {
    const v = bytes[whole]! << 16;
    out[o] = ENC[v >>> 18]!;
    out[o + 1] = ENC[(v >>> 12) & 63]!;
    out[o + 2] = PAD;
    out[o + 3] = PAD;
  } else if (rest === 2) {
    const v = (bytes[whole]! << 16) | (bytes[whole + 1]! << 8);
    out[o] = ENC[v >>> 18]!;
    out[o + 1] = ENC[(v >>> 12) & 63]!;
    out[o + 2] = ENC[(v >>> 6) & 63]!;
    out[o + 3] = PAD;
  }
  // The ASCII codes as a string: the runtime's TextDecoder (UTF-8, which ASCII is as it is) is
  // ~10x faster than String.fromCharCode over chunks (0.24 against 2.5 ms for 360 KB, Node 20).
  return textDecoder().decode(out);
}

function sextet(s: string, i: number): number {
  const c = s.charCodeAt(i);
  const v = c < 256 ? DEC[c]! : 255;
  if (v === 255) {
    const shown = c === PAD ? "'=' before the end" : `character ${JSON.stringify(s[i])}`;
    throw new Base64Error(`unexpected ${shown} at offset ${i}`);
  }
  return v;
}

/** Decodes strict, canonical base64 (see the module comment); throws `Base64Error` otherwise. */
export function decodeBase64(s: string): Uint8Array {
  if (typeof s !== 'string') throw new TypeError(`decodeBase64: input must be a string (got ${describeType(s)})`);
  return decodeString(s) ?? explainedDecode(s);
}

/**
 * decodeBase64() a character at a time, saying what is wrong: the path for input the fast ones
 * (decodeString, decodeRange) refused, so that the error names the offset and the character.
 */
function explainedDecode(s: string): Uint8Array {
  const len = s.length;
  // base64url's two characters first: its text is often unpadded too, and the alphabet is the fault to name.
  const url = /[-_]/.exec(s);
  if (url) throw new Base64Error(`unexpected character ${JSON.stringify(url[0])} at offset ${url.index}: that is base64url; use the standard alphabet ('+' for '-', '/' for '_', '=' padding)`);
  // Then a character outside the alphabet, before the length: text that is no base64 at all (a
  // file name, a URL) was told to add padding.
  const stray = /[^A-Za-z0-9+/=]/.exec(s);
  if (stray) throw new Base64Error(`unexpected character ${JSON.stringify(stray[0])} at offset ${stray.index}`);
  if (len % 4 !== 0) {
    const missing = 4 - (len % 4);
    const why = missing < 3 && s.charCodeAt(len - 1) !== PAD ? `: the '=' padding is missing (add ${missing === 1 ? "'='" : "'=='"} at the end)` : ': characters are missing or extra';
    throw new Base64Error(`length ${len} is not a multiple of 4${why}`);
  }
  if (len === 0) return new Uint8Array(0);
  const pad = s.charCodeAt(len - 1) === PAD ? (s.charCodeAt(len - 2) === PAD ? 2 : 1) : 0;
  const out = new Uint8Array((len / 4) * 3 - pad);
  const fullEnd = pad === 0 ? len : len - 4;
  let o = 0;
  for (let i = 0; i < fullEnd; i += 4) {
    const v = (sextet(s, i) << 18) | (sextet(s, i + 1) << 12) | (sextet(s, i + 2) << 6) | sextet(s, i + 3);
    out[o] = v >>> 16;
    out[o + 1] = (v >>> 8) & 255;
    out[o + 2] = v & 255;
    o += 3;
  }
  if (pad === 2) {
    const v = (sextet(s, fullEnd) << 18) | (sextet(s, fullEnd + 1) << 12);
    if (v & 0xffff) throw new Base64Error('non-zero pad bits (not canonical)');
    out[o] = v >>> 16;
  } else if (pad === 1) {
    const v = (sextet(s, fullEnd) << 18) | (sextet(s, fullEnd + 1) << 12) | (sextet(s, fullEnd + 2) << 6);
    if (v & 0xff) throw new Base64Error('non-zero pad bits (not canonical)');
    out[o] = v >>> 16;
    out[o + 1] = (v >>> 8) & 255;
  }
  return out;
}

/**
 * Two base64 characters' codes (first << 8 | second) -> their 12 bits; -1 where either is not in
 * the alphabet. Two lookups a quad; per-character tables (four lookups, 4 KB) measured slower,
 * alone and under load (decode 8.2 % against 11.1 % of a loaded server's samples at 12 MP).
 */
let pairTable: Int16Array | null = null;
function pairs(): Int16Array {
  if (pairTable) return pairTable;
  const t = new Int16Array(65536).fill(-1);
  for (let a = 0; a < 64; a++) for (let b = 0; b < 64; b++) t[(ENC[a]! << 8) | ENC[b]!] = (a << 6) | b;
  return (pairTable = t);
}

/** Characters a decode takes from its string at a time (a multiple of 4), into a scratch reused across calls. */
const CHUNK_CHARS = 1 << 16;
let chunkCodes: Uint8Array | null = null;

/**
 * decodeBase64() of a string, or null where it is not strict base64 (explainedDecode() then says
 * why). The characters go through a 64 KB scratch as bytes (the runtime's UTF-8 encoder, native;
 * a fresh buffer for the whole string cost more in first-touch page faults than the decode) and
 * are decoded two a table lookup: 3.8 MB in about 3 ms against 7-8 a character at a time.
 */
function decodeString(s: string): Uint8Array | null {
  const n = s.length;
  if (n % 4 !== 0) return null;
  if (n === 0) return new Uint8Array(0);
  const pad = s.charCodeAt(n - 1) === PAD ? (s.charCodeAt(n - 2) === PAD ? 2 : 1) : 0;
  const out = new Uint8Array((n / 4) * 3 - pad);
  const full = pad === 0 ? n : n - 4;
  const codes = (chunkCodes ??= new Uint8Array(CHUNK_CHARS));
  const encoder = textEncoder();
  let o = 0;
  for (let at = 0; at < full; at += CHUNK_CHARS) {
    const m = Math.min(CHUNK_CHARS, full - at);
    // A character outside ASCII is read as fewer characters than written bytes, or not at all.
    const { read, written } = encoder.encodeInto(s.substring(at, at + m), codes);
    if (read !== m || written !== m) return null;
    o = decodeQuads(codes, m, out, o);
    if (o < 0) return null;
  }
  return pad === 0 || decodeLast(s.charCodeAt(full), s.charCodeAt(full + 1), s.charCodeAt(full + 2), pad, out, o) ? out : null;
}

/** Decodes the m (a multiple of 4) codes into out from o: the next o, or -1 at a code outside the alphabet. */
function decodeQuads(codes: Uint8Array, m: number, out: Uint8Array, o: number): number {
  const t = pairs();
  for (let i = 0; i < m; i += 4) {
    // A -1 from either lookup makes v negative.
    const v = (t[(codes[i]! << 8) | codes[i + 1]!]! << 12) | t[(codes[i + 2]! << 8) | codes[i + 3]!]!;
    if (v < 0) return -1;
    out[o] = v >>> 16;
    out[o + 1] = (v >>> 8) & 255;
    out[o + 2] = v & 255;
    o += 3;
  }
  return o;
}

/**
 * The last group of a padded input (its first three codes, any of them a char code of a string
 * or -1 past the end; `pad` of them '='): false where it is not canonical.
 */
function decodeLast(a: number, b: number, c: number, pad: number, out: Uint8Array, o: number): boolean {
  if ((a | b | c) >>> 0 > 255) return false;
  const hi = pairs()[(a << 8) | b]!;
  const low = pad === 2 ? 0 : DEC[c]!;
  // hi < 0 or low 255: a code outside the alphabet; bits below the last byte set: not canonical.
  if (hi < 0 || low === 255 || (pad === 2 ? hi & 15 : low & 3)) return false;
  const v = (hi << 6) | low;
  out[o] = v >>> 10;
  if (pad === 1) out[o + 1] = (v >>> 2) & 255;
  return true;
}

/** Removes WHITESPACE's characters from codes[0..n) in place; the new count. */
function withoutWhitespace(codes: Uint8Array, n: number): number {
  let w = 0;
  for (let i = 0; i < n; i++) {
    const c = codes[i]!;
    if (!isSpace(c)) codes[w++] = c;
  }
  return w;
}

/** `data:[<media type>][;params];base64,` (RFC 2397), case-insensitive scheme and `;base64`. */
const DATA_URL = /^data:([^,;]*)((?:;[^,;]*)*?);base64,/i;
/** ASCII whitespace (HTML/MIME line wrapping): space, tab, CR, LF, FF. */
const WHITESPACE = /[ \t\r\n\f]+/g;
/** WHITESPACE's characters, by code. */
const isSpace = (c: number | undefined): boolean => c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d || c === 0x0c;
/** "data:", each letter's code with 0x20 set (lower case). */
const DATA_SCHEME = [0x64, 0x61, 0x74, 0x61, 0x3a];

/** The base64 payload of a user-supplied value, and the media type its `data:` URL named, if any. */
export interface Base64Input {
  readonly base64: string;
  /** Lower-cased media type of a `data:` URL prefix, or null when there was no prefix or it named none. */
  readonly mediaType: string | null;
}

/**
 * Lenient envelope handling for user input: strips one leading `data:...;base64,` prefix and all
 * ASCII whitespace (line-wrapped base64). Does not validate the payload: pass `base64` to the
 * strict `decodeBase64`.
 */
export function unwrapBase64(input: string): Base64Input {
  const { payload, mediaType } = envelope(input);
  return { base64: payload.replace(WHITESPACE, ''), mediaType };
}

/** The input trimmed and without its `data:` URL prefix (whitespace inside kept), and the prefix's media type. */
function envelope(input: string): { payload: string; mediaType: string | null } {
  const s = input.trim();
  const m = DATA_URL.exec(s);
  if (!m) return { payload: s, mediaType: null };
  return { payload: s.slice(m[0].length), mediaType: m[1]!.trim().toLowerCase() || null };
}

/**
 * `decodeBase64(unwrapBase64(input).base64)`: for user-supplied values such as `imageBase64`,
 * given as a string or as its character codes, whole or in parts (a JSON body's chunks as read:
 * no string is made for them where they are plain base64, with or without a data: URL prefix).
 * The payload is decoded as it is first; only if that fails is its whitespace taken out (line-
 * wrapped base64) and the decode tried again, and only if that fails too does the strict decoder
 * say why.
 */
export function decodeBase64Input(input: string | Uint8Array | readonly Uint8Array[]): Uint8Array {
  if (!(typeof input === 'string' || input instanceof Uint8Array || (Array.isArray(input) && input.every((p) => p instanceof Uint8Array)))) {
    throw new TypeError(`decodeBase64Input: input must be a string, a Uint8Array or an array of them (got ${describeType(input)})`);
  }
  if (typeof input !== 'string') {
    const parts = input instanceof Uint8Array ? [input] : input;
    return decodePartsInput(parts) ?? decodeBase64Input(textDecoder().decode(joined(parts, 0, Infinity)));
  }
  const payload = envelope(input).payload;
  // Both fast decodes refused it: the character-at-a-time one says why (it throws).
  return decodeString(payload) ?? decodeWrapped(payload) ?? explainedDecode(notDataUrl(payload).replace(WHITESPACE, ''));
}

/**
 * The payload, where it is no data: URL envelope() left in place (one without `;base64`, whose
 * text would be blamed for its length or its ':'): only base64 ones are read.
 */
function notDataUrl(payload: string): string {
  const prefix = /^data:[^,]{0,60},?/i.exec(payload);
  if (prefix) throw new Base64Error(`only base64 data: URLs are accepted (data:<media type>;base64,<data>), not one beginning ${JSON.stringify(prefix[0])}`);
  return payload;
}

/** Longest data: URL prefix read from character codes; a longer one goes through the text form. */
const MAX_PREFIX = 256;

/**
 * decodeBase64Input() of character codes in parts, as one sequence; null for whatever the text
 * form must judge (a character outside ASCII, whitespace other than WHITESPACE's at the ends, a
 * bad character, an unusual prefix). The parts are decoded where they lie: joining 4 MB of them
 * first cost more in the garbage collector's marking (external memory) than the join itself.
 */
function decodePartsInput(parts: readonly Uint8Array[]): Uint8Array | null {
  let total = 0;
  for (const p of parts) total += p.length;
  // Whitespace at the ends, walked from each end (however much of it there is, once).
  let a = 0, b = total;
  for (let j = 0, base = 0; j < parts.length && a === base; base += parts[j++]!.length) {
    const p = parts[j]!;
    let i = 0;
    while (i < p.length && isSpace(p[i])) i++;
    a = base + i;
  }
  for (let j = parts.length - 1, end = total; j >= 0 && b === end && b > a; end -= parts[j--]!.length) {
    const p = parts[j]!;
    let i = p.length;
    while (i > 0 && end - p.length + i > a && isSpace(p[i - 1])) i--;
    b = end - p.length + i;
  }
  if (b - a > DATA_SCHEME.length) {
    const head = joined(parts, a, Math.min(b, a + MAX_PREFIX));
    if (DATA_SCHEME.every((c, i) => (head[i]! | 0x20) === c)) {
      const m = DATA_URL.exec(textDecoder().decode(head));
      // The match ends at the first comma (its pattern has none before ","); ASCII, so a character a byte.
      const comma = head.indexOf(0x2c);
      if (!m || comma < 0 || m[0].length !== comma + 1) return null;
      a += comma + 1;
    }
  }
  const out = decodeRange(parts, a, b);
  if (out) return out;
  const copy = joined(parts, a, b);
  return decodeRange([copy], 0, withoutWhitespace(copy, copy.length));
}

/** codes[from..to) of the parts as one sequence, copied into one array. */
function joined(parts: readonly Uint8Array[], from: number, to: number): Uint8Array {
  let total = 0;
  for (const p of parts) total += p.length;
  const out = new Uint8Array(Math.max(0, Math.min(to, total) - from));
  let base = 0, o = 0;
  for (const p of parts) {
    const lo = Math.max(from, base), hi = Math.min(from + out.length, base + p.length);
    if (lo < hi) {
      out.set(p.subarray(lo - base, hi - base), o);
      o += hi - lo;
    }
    base += p.length;
  }
  return out;
}

/** The code at offset k of the parts as one sequence; -1 past the end. */
function codeAt(parts: readonly Uint8Array[], k: number): number {
  for (const p of parts) {
    if (k < p.length) return p[k]!;
    k -= p.length;
  }
  return -1;
}

/**
 * decodeString() of the codes [a, b) of the parts as one sequence (no whitespace), or null; quads
 * that straddle two parts go through a carry.
 */
function decodeRange(parts: readonly Uint8Array[], a: number, b: number): Uint8Array | null {
  const n = b - a;
  if (n % 4 !== 0) return null;
  if (n === 0) return new Uint8Array(0);
  const pad = codeAt(parts, b - 1) === PAD ? (codeAt(parts, b - 2) === PAD ? 2 : 1) : 0;
  const out = new Uint8Array((n / 4) * 3 - pad);
  const full = pad === 0 ? b : b - 4;
  const carry = new Uint8Array(4);
  let k = 0, o = 0, base = 0;
  for (const p of parts) {
    const lo = Math.max(a, base), hi = Math.min(full, base + p.length);
    if (lo < hi) {
      let i = lo - base;
      const end = hi - base;
      while (k > 0 && i < end) {
        carry[k++] = p[i++]!;
        if (k === 4) {
          o = decodeQuads(carry, 4, out, o);
          if (o < 0) return null;
          k = 0;
        }
      }
      const m = (end - i) & ~3;
      if (m > 0) {
        o = decodeQuads(p.subarray(i, i + m), m, out, o);
        if (o < 0) return null;
        i += m;
      }
      while (i < end) carry[k++] = p[i++]!;
    }
    base += p.length;
  }
  return pad === 0 || decodeLast(codeAt(parts, full), codeAt(parts, full + 1), codeAt(parts, full + 2), pad, out, o) ? out : null;
}

/** decodeString() of the payload without its ASCII whitespace, or null (also for a character outside ASCII). */
function decodeWrapped(payload: string): Uint8Array | null {
  const codes = new Uint8Array(payload.length);
  const { read, written } = textEncoder().encodeInto(payload, codes);
  return read === payload.length && written === payload.length ? decodeRange([codes], 0, withoutWhitespace(codes, written)) : null;
}
