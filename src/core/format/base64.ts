/**
 * Base64 (RFC 4648 §4: standard alphabet, `=` padding) over Uint8Array, in ECMAScript plus the
 * TextDecoder every runtime has, so the isomorphic core needs neither Buffer nor btoa/atob.
 *
 * `decodeBase64` is strict: it accepts only canonical base64 (length a multiple of 4, alphabet
 * characters only, at most two `=` and only at the end, zero pad bits) and throws
 * `Base64Error` otherwise. Whitespace and `data:` URL envelopes are handled by the separate,
 * explicit `unwrapBase64` / `decodeBase64Input` helpers (used for user-supplied `imageBase64`).
 */

import { textDecoder, textEncoder } from '../text-codec.js';

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
export class Base64Error extends Error {
  /** @param reason what is wrong, without the `invalid base64: ` prefix of the message */
  constructor(readonly reason: string) {
    super(`invalid base64: ${reason}`);
    this.name = 'Base64Error';
  }
}

/** Base64 of `bytes`, standard alphabet, padded. */
export function encodeBase64(bytes: Uint8Array): string {
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
  return decodeString(s) ?? explainedDecode(s);
}

/**
 * decodeBase64() a character at a time, saying what is wrong: the path for input the fast one
 * (decodeCodes) refused, so that the error names the offset and the character.
 */
function explainedDecode(s: string): Uint8Array {
  const len = s.length;
  if (len % 4 !== 0) throw new Base64Error(`length ${len} is not a multiple of 4`);
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

/** Two base64 characters' codes (first << 8 | second) -> their 12 bits; -1 where either is not in the alphabet. */
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

/** decodeString() of character codes codes[0..n) (no whitespace), or null. */
function decodeCodes(codes: Uint8Array, n: number): Uint8Array | null {
  if (n % 4 !== 0) return null;
  if (n === 0) return new Uint8Array(0);
  const pad = codes[n - 1] === PAD ? (codes[n - 2] === PAD ? 2 : 1) : 0;
  const out = new Uint8Array((n / 4) * 3 - pad);
  const full = pad === 0 ? n : n - 4;
  const o = decodeQuads(codes, full, out, 0);
  if (o < 0) return null;
  return pad === 0 || decodeLast(codes[full]!, codes[full + 1]!, codes[full + 2]!, pad, out, o) ? out : null;
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

/** The last group of a padded input (its first three codes; `pad` of them '='): false where it is not canonical. */
function decodeLast(a: number, b: number, c: number, pad: number, out: Uint8Array, o: number): boolean {
  const hi = a < 256 && b < 256 ? pairs()[(a << 8) | b]! : -1;
  if (hi < 0) return false;
  if (pad === 2) {
    if (hi & 15) return false; // non-zero pad bits
    out[o] = hi >>> 4;
    return true;
  }
  const low = c < 256 ? DEC[c]! : 255;
  if (low === 255 || low & 3) return false;
  const v = (hi << 6) | low;
  out[o] = v >>> 10;
  out[o + 1] = (v >>> 2) & 255;
  return true;
}

/** Removes ASCII whitespace (WHITESPACE's set) from codes[0..n) in place; the new count. */
function withoutWhitespace(codes: Uint8Array, n: number): number {
  let w = 0;
  for (let i = 0; i < n; i++) {
    const c = codes[i]!;
    if (c !== 0x20 && c !== 0x09 && c !== 0x0a && c !== 0x0d && c !== 0x0c) codes[w++] = c;
  }
  return w;
}

/** `data:[<media type>][;params];base64,` (RFC 2397), case-insensitive scheme and `;base64`. */
const DATA_URL = /^data:([^,;]*)((?:;[^,;]*)*?);base64,/i;
/** ASCII whitespace (HTML/MIME line wrapping): space, tab, CR, LF, FF. */
const WHITESPACE = /[ \t\r\n\f]+/g;

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
 * `decodeBase64(unwrapBase64(input).base64)`: for user-supplied values such as `imageBase64`.
 * The payload is decoded as it is first; only if that fails is its whitespace taken out (line-
 * wrapped base64) and the decode tried again, and only if that fails too does the strict decoder
 * say why.
 */
export function decodeBase64Input(input: string): Uint8Array {
  const payload = envelope(input).payload;
  return decodeString(payload) ?? decodeWrapped(payload) ?? decodeBase64(unwrapBase64(input).base64);
}

/** decodeString() of the payload without its ASCII whitespace, or null (also for a character outside ASCII). */
function decodeWrapped(payload: string): Uint8Array | null {
  const codes = new Uint8Array(payload.length);
  const { read, written } = textEncoder().encodeInto(payload, codes);
  return read === payload.length && written === payload.length ? decodeCodes(codes, withoutWhitespace(codes, written)) : null;
}
