/**
 * A render request's body as a render worker reads it (src/server/request-body.ts): the image
 * sources and parameter carriers of a JSON body given as raw chunks, and its refusals.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { HttpProblem } from '../src/server/problem.js';
import { problemOf } from './server-helpers.js';
import { requestInputs } from '../src/server/request-body.js';
import type { BodyJob } from '../src/server/render-task.js';

const json = (text: string, size = 1 << 20, query: Record<string, unknown> = {}): BodyJob['body'] => {
  const b = Buffer.from(text);
  const chunks: Uint8Array[] = [];
  for (let o = 0; o < b.length; o += size) chunks.push(new Uint8Array(b.subarray(o, o + size)));
  return { type: 'json', chunks, contentType: 'application/json', query };
};

const refused = (body: BodyJob['body']): Promise<HttpProblem> => problemOf(requestInputs(body, 1000));

describe('request body', () => {
  test('JSON: the image sources and the parameters, the query string\'s carrier first, in chunks of any size', async () => {
    const text = JSON.stringify({ imageBase64: 'QUJD', columns: 40, charset: 'blocks', note: 'é✓𝄞' });
    for (const size of [1, 2, 3, 5, text.length]) {
      const inputs = await requestInputs(json(text, size, { format: 'json' }), 1000);
      assert.deepEqual(inputs.images, [{ field: 'imageBase64', text: 'QUJD' }]);
      assert.deepEqual(inputs.carriers.map((c) => [c.name, c.kind]), [['query string', 'strings'], ['JSON body', 'json']]);
      assert.deepEqual(inputs.carriers[0]!.values, { format: 'json' });
      // A character split between chunks is decoded whole.
      assert.deepEqual(inputs.carriers[1]!.values, { columns: 40, charset: 'blocks', note: 'é✓𝄞' }, `chunks of ${size}`);
    }
  });

  test('JSON refusals: not JSON, not an object, the form\'s field name, too many keys, a duplicate key', async () => {
    assert.match((await refused(json('{"imageBase64": '))).detail, /^The body is not valid JSON: /);
    assert.match((await refused(json('[1, 2]'))).detail, /must be an object/);
    assert.deepEqual((await refused(json('{"image": "x"}'))).errors?.map((e) => e.parameter), ['image']);
    const keys = Array.from({ length: 2000 }, (_, i) => `"k${i}":1`).join(',');
    assert.equal((await refused(json(`{${keys}}`))).slug, 'json-too-complex');
    assert.equal((await refused(json('{"columns":1,"columns":2}'))).slug, 'duplicate-key');
  });
});
