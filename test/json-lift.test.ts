/**
 * Long imageBase64 values lifted out of a JSON body before the parse (src/server/json-lift.ts):
 * which values are lifted, and that the parse with them put back equals JSON.parse of the body.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { parseJsonBounded, type KeyProblem } from '../src/server/json-body.js';
import { liftValues, revive } from '../src/server/json-lift.js';
import { HttpProblem } from '../src/server/problem.js';
import { LiftedText } from '../src/server/render-inputs.js';

const MIN = 100;
const b64 = (n: number, c = 'A') => c.repeat(n);

/** `text`'s bytes in chunks of `size` (each its own buffer, as a socket's). */
function chunked(text: string, size: number): Uint8Array[] {
  const b = Buffer.from(text);
  const out: Uint8Array[] = [];
  for (let o = 0; o < b.length; o += size) out.push(new Uint8Array(b.subarray(o, o + size)));
  return out;
}

/** The parse of `text` (in chunks of `size`) with its lifted values put back, each shown as its text again. */
function roundTrip(text: string, size: number): { value: unknown; count: number } {
  const { text: reduced, lifted } = liftValues(chunked(text, size), 'imageBase64', MIN);
  const value = parseJsonBounded(reduced, undefined, lifted ? revive('imageBase64', lifted) : undefined);
  return { value: shown(value), count: lifted?.size ?? 0 };
}

/** `v` with each LiftedText replaced by its text (JSON.stringify would use its toJSON). */
function shown(v: unknown): unknown {
  if (v instanceof LiftedText) return Buffer.concat(v.parts).toString('latin1');
  if (Array.isArray(v)) return v.map(shown);
  if (typeof v === 'object' && v !== null) return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, shown(x)]));
  return v;
}

describe('lifted JSON values', () => {
  test('values of imageBase64 at least the minimum long are lifted, in objects and batches, and parse back to the same JSON', () => {
    const cases: [string, number][] = [
      [JSON.stringify({ imageBase64: b64(MIN), columns: 20 }), 1],
      [JSON.stringify([{ params: { arguments: { imageBase64: b64(300, 'B'), note: 'é✓' } } }, { params: { arguments: { imageBase64: b64(MIN + 1, 'C') } } }]), 2],
      [`{ "imageBase64" :\n  "${b64(200)}" , "x": "${b64(500)}" }`, 1],
      // Too short, another key, an escape inside, an escaped key, in an array: parsed as ever.
      [JSON.stringify({ imageBase64: b64(MIN - 1) }), 0],
      [JSON.stringify({ image: b64(500) }), 0],
      [`{"imageBase64": "${b64(150)}\\u0041${b64(150)}"}`, 0],
      [`{"image\\u0042ase64": "${b64(500)}"}`, 0],
      [JSON.stringify({ imageBase64: [b64(500)] }), 0],
      ['{"k": "\\"imageBase64\\": ", "imageBase64": "' + b64(MIN) + '"}', 1],
    ];
    for (const [text, count] of cases) {
      // In chunks of any size: quotes, keys, escapes and characters split between chunks.
      for (const size of [1, 2, 3, 7, 64, text.length]) {
        const r = roundTrip(text, size);
        assert.equal(r.count, count, `${text.slice(0, 60)} in chunks of ${size}`);
        assert.deepEqual(r.value, JSON.parse(text), `${text.slice(0, 60)} in chunks of ${size}`);
      }
    }
  });

  test('a lifted value is views of its body\'s chunks (no copy), shows no bytes in JSON, and the bounds still hold', () => {
    const chunks = chunked(JSON.stringify({ imageBase64: b64(500, 'Q') }), 128);
    const { lifted } = liftValues(chunks, 'imageBase64', MIN);
    const value = [...lifted!.values()][0]!;
    assert.deepEqual(value.parts.map((p) => p.buffer), chunks.map((c) => c.buffer), 'views of each chunk');
    assert.equal(value.byteLength, 500);
    assert.equal(value.movable, true, 'the only value may take its chunks\' buffers with it');
    const two = liftValues(chunked(JSON.stringify([{ imageBase64: b64(500) }, { imageBase64: b64(500) }]), 128), 'imageBase64', MIN).lifted!;
    assert.deepEqual([...two.values()].map((v) => v.movable), [false, false], 'values sharing chunks are copied');
    assert.equal(JSON.stringify({ imageBase64: value }), '{"imageBase64":"(500 characters of base64)"}');
    const twice = liftValues(chunked(`{"imageBase64": "${b64(500)}", "imageBase64": "${b64(500)}"}`, 100), 'imageBase64', MIN);
    assert.throws(() => parseJsonBounded(twice.text), (e: unknown) => e instanceof HttpProblem && e.slug === 'duplicate-key');
  });

  test('refused keys collected instead of thrown: where they are (element, path); __proto__ left out; the limits still throw', () => {
    const problems: KeyProblem[] = [];
    const text = '[{"a":1},{"b":{"c":[{"d":1,"d":2}]},"e":1,"e":2},{"__proto__":{"x":1},"f":{"__proto__":1}}]';
    const value = parseJsonBounded(text, undefined, undefined, problems) as Array<Record<string, unknown>>;
    assert.deepEqual(problems.map((p) => [p.problem.slug, p.element, p.path.join('.')]), [
      ['duplicate-key', 1, 'b.c.d'], ['duplicate-key', 1, 'e'], ['invalid-request', 2, '__proto__'], ['invalid-request', 2, 'f.__proto__'],
    ]);
    assert.deepEqual(value, [{ a: 1 }, { b: { c: [{ d: 2 }] }, e: 2 }, { f: {} }]);
    assert.ok(!Object.hasOwn(value[2]!, '__proto__') && Object.getPrototypeOf(value[2]) === Object.prototype);
    const root: KeyProblem[] = [];
    parseJsonBounded('{"id":1,"id":2}', undefined, undefined, root);
    assert.deepEqual(root.map((p) => [p.element, p.path]), [[-1, ['id']]]);
    assert.throws(() => parseJsonBounded('[[[[1]]]]', { maxKeys: 10, maxDepth: 3, maxElements: 10 }, undefined, []), (e: unknown) => e instanceof HttpProblem && e.slug === 'json-too-complex');
  });

  test('a placeholder sent by a client is a string like any other', () => {
    const { text, lifted } = liftValues(chunked(`{"a": {"imageBase64": "${b64(500)}"}, "b": {"imageBase64": "v2a-lifted-0-0"}}`, 50), 'imageBase64', MIN);
    const value = parseJsonBounded(text, undefined, revive('imageBase64', lifted!)) as { a: { imageBase64: unknown }; b: { imageBase64: unknown } };
    assert.ok(value.a.imageBase64 instanceof LiftedText);
    assert.equal(value.b.imageBase64, 'v2a-lifted-0-0');
  });
});
