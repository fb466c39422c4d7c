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
  // Binary data is named by its type: "got an object" for an ArrayBuffer left the caller guessing.
  if (value instanceof ArrayBuffer) return 'an ArrayBuffer';
  if (ArrayBuffer.isView(value)) return `a ${value.constructor.name}`;
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}

/** An object of named fields: not null, an array or a primitive (JSON's object, as parsed). */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** `value` is a plain object of named fields (not null, an array or a primitive). */
export function checkObject(value: unknown, name: string): asserts value is Readonly<Record<string, unknown>> {
  if (!isRecord(value)) {
    throw new TypeError(`${name} must be an object (got ${describeType(value)})`);
  }
}

/**
 * `value` is a record of named parameters or options, read by its own keys: a Map, a Date or an
 * object whose names are inherited (`Object.create({ columns: 20 })`) had no names to read, and
 * rendered at the defaults without a word.
 */
export function checkFields(value: unknown, name: string): asserts value is Readonly<Record<string, unknown>> {
  checkObject(value, name);
  const tag = Object.prototype.toString.call(value);
  if (tag !== '[object Object]') throw new TypeError(`${name} must be a plain object of named fields (got a ${tag.slice(8, -1)})`);
  for (const key in value) {
    if (!Object.prototype.hasOwnProperty.call(value, key)) throw new TypeError(`${name}: ${JSON.stringify(key)} is inherited, not a field of its own (pass a plain object, e.g. { ...options })`);
  }
}

/**
 * `value` holds bytes: a Uint8Array (a Node Buffer is one). Other binary data (an ArrayBuffer, a
 * Uint8ClampedArray) is refused with the way to view it as one, no copy made: the types say
 * Uint8Array, and a Float32Array's bytes are not what its caller meant either.
 */
export function checkBytes(value: unknown, name: string): asserts value is Uint8Array {
  if (value instanceof Uint8Array) return;
  const how = value instanceof ArrayBuffer ? ': pass new Uint8Array(buffer)'
    : ArrayBuffer.isView(value) ? ': pass new Uint8Array(view.buffer, view.byteOffset, view.byteLength)' : '';
  throw new TypeError(`${name} must be a Uint8Array or Buffer (got ${describeType(value)}${how})`);
}

/**
 * `options` of function `what` is a plain object of named fields (checkFields) that names only
 * `known` options: a misspelt one (`maxPixel`) would otherwise go unapplied without a word. A
 * RangeError naming it and listing the options.
 */
export function checkOptions(options: unknown, known: ReadonlySet<string>, what: string): asserts options is Readonly<Record<string, unknown>> {
  checkFields(options, `${what}: options`);
  for (const name of Object.keys(options)) {
    if (!known.has(name)) throw new RangeError(`${what}: unknown option ${JSON.stringify(name)} (the options are ${[...known].join(', ')})`);
  }
}
