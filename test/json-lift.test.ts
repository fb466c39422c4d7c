/**
 * Long imageBase64 values lifted out of a JSON body before the parse (src/server/json-lift.ts):
 * which values are lifted, and that the parse with them put back equals JSON.parse of the body.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { parseJsonBounded } from '../src/server/json-body.js';
import { liftValues, revive } from '../src/server/json-lift.js';
import { HttpProblem } from '../src/server/problem.js';
import { LiftedText } from '../src/server/render-inputs.js';

const MIN = 100;
const b64 = (n: number, c = 'A') => c.repeat(n);

/** The parse of `text` with its lifted values put back, each shown as its text again. */
function roundTrip(text: string): { value: unknown; count: number } {
  const { text: reduced, lifted } = liftValues(Buffer.from(text), 'imageBase64', MIN);
  const value = parseJsonBounded(reduced, undefined, lifted ? revive('imageBase64', lifted) : undefined);
  return { value: shown(value), count: lifted?.size ?? 0 };
}

/** `v` with each LiftedText replaced by its text (JSON.stringify would use its toJSON). */
function shown(v: unknown): unknown {
  if (v instanceof LiftedText) return Buffer.from(v.bytes).toString('latin1');
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
      const r = roundTrip(text);
      assert.equal(r.count, count, text.slice(0, 60));
      assert.deepEqual(r.value, JSON.parse(text), text.slice(0, 60));
    }
  });

  test('a lifted value is its body\'s bytes (no copy), shows no bytes in JSON, and the bounds still hold', () => {
    const body = Buffer.from(JSON.stringify({ imageBase64: b64(500, 'Q') }));
    const { lifted } = liftValues(body, 'imageBase64', MIN);
    const value = [...lifted!.values()][0]!;
    assert.equal(value.bytes.buffer, body.buffer);
    assert.equal(value.movable, body.byteOffset === 0 && body.byteLength === body.buffer.byteLength, 'the only value may take a whole buffer with it');
    const two = liftValues(Buffer.from(JSON.stringify([{ imageBase64: b64(500) }, { imageBase64: b64(500) }])), 'imageBase64', MIN).lifted!;
    assert.deepEqual([...two.values()].map((v) => v.movable), [false, false], 'values sharing a body are copied');
    assert.equal(JSON.stringify({ imageBase64: value }), '{"imageBase64":"(500 characters of base64)"}');
    const twice = liftValues(Buffer.from(`{"imageBase64": "${b64(500)}", "imageBase64": "${b64(500)}"}`), 'imageBase64', MIN);
    assert.throws(() => parseJsonBounded(twice.text), (e: unknown) => e instanceof HttpProblem && e.slug === 'duplicate-key');
  });

  test('a placeholder sent by a client is a string like any other', () => {
    const { text, lifted } = liftValues(Buffer.from(`{"a": {"imageBase64": "${b64(500)}"}, "b": {"imageBase64": "v2a-lifted-0-0"}}`), 'imageBase64', MIN);
    const value = parseJsonBounded(text, undefined, revive('imageBase64', lifted!)) as { a: { imageBase64: unknown }; b: { imageBase64: unknown } };
    assert.ok(value.a.imageBase64 instanceof LiftedText);
    assert.equal(value.b.imageBase64, 'v2a-lifted-0-0');
  });
});
