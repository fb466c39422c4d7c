/**
 * JSON request bodies with bounds checked while parsing: one pass over the text counts keys,
 * tracks nesting and refuses duplicate keys before `JSON.parse` builds a single object, so a
 * flood of keys costs a scan up to the first key over the limit (not a parse, a validation and an
 * error per key), and a deeply nested body never reaches the recursive parser.
 *
 * The scan only follows structure (strings, braces, brackets, commas); syntax errors are left to
 * `JSON.parse`, which runs on text that passed the bounds. String contents (base64 images) are
 * skipped with indexOf, so the scan costs little next to the parse.
 */
import { HttpProblem } from './problem.js';

/** Most object keys in one body: a render has ~30 names, an MCP batch of 16 calls ~500. */
export const MAX_JSON_KEYS = 1024;
/** Deepest nesting of objects and arrays (the deepest legitimate body nests 4 levels). */
export const MAX_JSON_DEPTH = 32;
/**
 * Most array elements in one body, all arrays together (a batch of 16 messages is the longest a
 * client sends). Keys alone did not bound the parse: 20 MB of `[1,1,...]` under /api/mcp, whose
 * bodies are parsed on the event loop, held it for 2.4 s.
 */
export const MAX_JSON_ELEMENTS = 4096;

export interface JsonLimits {
  readonly maxKeys: number;
  readonly maxDepth: number;
  readonly maxElements: number;
}

const DEFAULT_LIMITS: JsonLimits = { maxKeys: MAX_JSON_KEYS, maxDepth: MAX_JSON_DEPTH, maxElements: MAX_JSON_ELEMENTS };

const QUOTE = 0x22, BACKSLASH = 0x5c, LBRACE = 0x7b, RBRACE = 0x7d, LBRACKET = 0x5b, RBRACKET = 0x5d, COMMA = 0x2c;

/** Index of the quote closing the string opened at `open`, or -1. */
function stringEnd(text: string, open: number): number {
  let j = text.indexOf('"', open + 1);
  while (j >= 0) {
    let slashes = 0;
    for (let k = j - 1; k > open && text.charCodeAt(k) === BACKSLASH; k--) slashes++;
    if (slashes % 2 === 0) return j;
    j = text.indexOf('"', j + 1);
  }
  return -1;
}

/** A key as JSON.parse would read it (escapes decoded); undefined when it is malformed. */
function keyText(raw: string): string | undefined {
  if (raw.indexOf('\\') < 0) return raw;
  try {
    return JSON.parse(`"${raw}"`) as string;
  } catch {
    return undefined;
  }
}

/**
 * A key the scan refuses (given twice in one object, or `__proto__`), as collected when the caller
 * answers such messages one by one (the MCP endpoint) instead of refusing the whole body.
 */
export interface KeyProblem {
  readonly problem: HttpProblem;
  /** Index of the root array's element it is in; -1 when the root is not an array. */
  readonly element: number;
  /** Object keys from that element (or the root) down to the key itself; array indices left out. */
  readonly path: readonly string[];
}

/**
 * Checks the bounds of `text` (throws HttpProblem 400 `json-too-complex` or `duplicate-key`) and
 * returns `JSON.parse(text, reviver)`; a syntax error is thrown as JSON.parse's SyntaxError.
 * With `keyProblems`, refused keys are collected there instead of thrown (the limits still throw),
 * and `__proto__` keys are left out of the value.
 */
export function parseJsonBounded(text: string, limits: JsonLimits = DEFAULT_LIMITS, reviver?: (key: string, value: unknown) => unknown, keyProblems?: KeyProblem[]): unknown {
  checkJsonBounds(text, limits, keyProblems);
  if (!keyProblems?.length) return JSON.parse(text, reviver) as unknown;
  return JSON.parse(text, function (this: unknown, key, value) {
    if (key === '__proto__') return undefined; // JSON.parse made it an own property: dropped
    return reviver ? reviver.call(this, key, value) : value;
  }) as unknown;
}

const protoProblem = () => new HttpProblem('invalid-request', 'The JSON body may not contain the key "__proto__".', { errors: [{ parameter: '__proto__', message: 'not allowed' }] });

function duplicateProblem(key: string): HttpProblem {
  const message = `${JSON.stringify(key.slice(0, 100))} is given twice in one JSON object`;
  return new HttpProblem('duplicate-key', `The JSON body names a key twice: ${message}; send each key once.`, { errors: [{ parameter: key.slice(0, 100), message }] });
}

/** The scan of parseJsonBounded, without the parse. */
function checkJsonBounds(text: string, limits: JsonLimits = DEFAULT_LIMITS, keyProblems?: KeyProblem[]): void {
  // One entry per open container: a Set of keys for an object, null for an array; and the key
  // each object level last read (the path to a refused key).
  const stack: Array<Set<string> | null> = [];
  const names: string[] = [];
  let expectKey = false;
  let keys = 0;
  let element = 0;
  // Commas between array elements: one less than the elements, per non-empty array.
  let commas = 0;
  const n = text.length;
  const refuse = (problem: HttpProblem, key: string) => {
    if (!keyProblems) throw problem;
    const path: string[] = [];
    for (let d = 0; d < stack.length - 1; d++) if (stack[d] !== null) path.push(names[d]!);
    path.push(key);
    keyProblems.push({ problem, element: stack[0] === null ? element : -1, path });
  };
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      const end = stringEnd(text, i);
      if (end < 0) return; // unterminated: JSON.parse says so
      const top = stack[stack.length - 1];
      if (top && expectKey) {
        expectKey = false;
        if (++keys > limits.maxKeys) {
          throw new HttpProblem('json-too-complex', `The JSON body has more than ${limits.maxKeys} keys; nothing past the limit was read.`);
        }
        const key = keyText(text.slice(i + 1, end));
        if (key !== undefined) {
          names[stack.length - 1] = key;
          // As Fastify's own JSON parser did (secure-json-parse): never a prototype key.
          if (key === '__proto__') refuse(protoProblem(), key);
          else if (top.has(key)) refuse(duplicateProblem(key), key);
          else top.add(key);
        }
      }
      i = end;
    } else if (c === LBRACE || c === LBRACKET) {
      if (stack.length >= limits.maxDepth) {
        throw new HttpProblem('json-too-complex', `The JSON body nests objects and arrays deeper than ${limits.maxDepth} levels.`);
      }
      stack.push(c === LBRACE ? new Set<string>() : null);
      expectKey = c === LBRACE;
    } else if (c === RBRACE || c === RBRACKET) {
      stack.pop();
      expectKey = false;
    } else if (c === COMMA) {
      if (stack.length === 1 && stack[0] === null) element++;
      const inArray = stack[stack.length - 1] === null;
      if (inArray && ++commas >= limits.maxElements) {
        throw new HttpProblem('json-too-complex', `The JSON body has more than ${limits.maxElements} array elements; nothing past the limit was read.`);
      }
      expectKey = !inArray && stack.length > 0;
    }
  }
}
