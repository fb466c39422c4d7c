/**
 * A library caller's arguments come from JavaScript as often as from TypeScript: a wrong type is
 * a TypeError that names the argument, not a crash deep inside ("Cannot read properties of null").
 * Checked once per call, never per pixel.
 */

/** What a value is, for a message: "null", "a string", "an array", "a number out of range". */
export function describeType(value: unknown): string {
  if (value === null || value === undefined) return String(value);
  if (Array.isArray(value)) return 'an array';
  // JSON has no Infinity: 1e400 parses to it, and "got a number" would read as no fault at all.
  if (typeof value === 'number' && !Number.isFinite(value)) return 'a number out of range';
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}

/** `value` is a plain object of named fields (not null, an array or a primitive). */
export function checkObject(value: unknown, name: string): asserts value is Readonly<Record<string, unknown>> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new TypeError(`${name} must be an object (got ${describeType(value)})`);
  }
}

/** `value` holds bytes: a Uint8Array (a Node Buffer is one). */
export function checkBytes(value: unknown, name: string): asserts value is Uint8Array {
  if (!(value instanceof Uint8Array)) throw new TypeError(`${name} must be a Uint8Array or Buffer (got ${describeType(value)})`);
}
