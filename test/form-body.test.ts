/**
 * The multipart/form-data parser the render workers run (src/server/form-body.ts) on a request's
 * raw body chunks: what it returns, and each refusal with the problem it is answered with. Bodies
 * are built by hand (as curl -F sends them) and fed in chunks of every size.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { FORM_OVERHEAD_BYTES, MAX_FIELD_BYTES, MAX_FIELDS, MAX_FILES, parseForm } from '../src/server/form-body.js';
import type { HttpProblem } from '../src/server/problem.js';
import { problemOf } from './server-helpers.js';

const BOUNDARY = 'x-v2a-test-boundary';
const TYPE = `multipart/form-data; boundary=${BOUNDARY}`;

type Part = { name: string; value: string | Buffer; filename?: string; type?: string };

function body(parts: readonly Part[]): Buffer {
  const out: Buffer[] = [];
  for (const p of parts) {
    const disposition = `form-data; name="${p.name}"${p.filename !== undefined ? `; filename="${p.filename}"` : ''}`;
    const type = p.type ?? (p.filename !== undefined ? 'application/octet-stream' : undefined);
    out.push(Buffer.from(`--${BOUNDARY}\r\nContent-Disposition: ${disposition}\r\n${type ? `Content-Type: ${type}\r\n` : ''}\r\n`));
    out.push(Buffer.from(p.value));
    out.push(Buffer.from('\r\n'));
  }
  out.push(Buffer.from(`--${BOUNDARY}--\r\n`));
  return Buffer.concat(out);
}

function chunked(b: Buffer, size: number): Uint8Array[] {
  const out: Uint8Array[] = [];
  for (let o = 0; o < b.length; o += size) out.push(new Uint8Array(b.subarray(o, o + size)));
  return out;
}

const file = (bytes: number, name = 'image'): Part => ({ name, value: Buffer.alloc(bytes, 7), filename: 'a.png' });

async function refusal(parts: readonly Part[] | Buffer, maxBytes = 1000, type = TYPE): Promise<HttpProblem> {
  return problemOf(parseForm([Buffer.isBuffer(parts) ? parts : body(parts)], type, maxBytes));
}

describe('form body', () => {
  test('an upload, fields and a repeated field, in chunks of any size: the upload\'s bytes as sent', async () => {
    const image = Buffer.from(Array.from({ length: 3000 }, (_, i) => (i * 31) & 255));
    const b = body([{ name: 'columns', value: '80' }, { name: 'image', value: image, filename: 'x.jpg', type: 'image/jpeg' }, { name: 'charset', value: 'blocks' }, { name: 'charset', value: 'dots' }]);
    for (const size of [1, 7, 100, 4096, b.length]) {
      const form = await parseForm(chunked(b, size), TYPE, 5000);
      assert.deepEqual({ ...form.fields }, { columns: '80', charset: ['blocks', 'dots'] });
      assert.equal(form.images.length, 1);
      const up = form.images[0]!;
      assert.ok(up.field === 'image');
      assert.equal(up.byteLength, image.length);
      assert.deepEqual(Buffer.concat(up.chunks.map((c) => Buffer.from(c))), image, `chunks of ${size}`);
    }
  });

  test('the part named image is the upload without a filename too (curl -F \'image=<photo.png\'), of any type or none', async () => {
    const image = Buffer.alloc(40_000, 9); // longer than a text field may be
    for (const type of ['image/png', undefined]) {
      const form = await parseForm([body([{ name: 'image', value: image, ...(type ? { type } : {}) }, { name: 'columns', value: '80' }])], TYPE, 50_000);
      assert.deepEqual({ ...form.fields }, { columns: '80' }, String(type));
      assert.equal(form.images.length, 1);
      const up = form.images[0]!;
      assert.ok(up.field === 'image');
      assert.deepEqual(Buffer.concat(up.chunks.map((c) => Buffer.from(c))), image);
    }
  });

  test('image sources in the order of their parts; a text part declared JSON is read as JSON', async () => {
    const form = await parseForm([body([
      { name: 'imageUrl', value: 'https://example.com/a.png' },
      file(10),
      { name: 'columns', value: ' 64 ', type: 'application/json' },
      { name: 'format', value: '"json"', type: 'application/json; charset=utf-8' },
    ])], TYPE, 100);
    assert.deepEqual(form.images.map((i) => i.field), ['imageUrl', 'image']);
    assert.deepEqual({ ...form.fields }, { columns: '64', format: 'json' });
    const bad = await refusal([{ name: 'columns', value: '{', type: 'application/json' }]);
    assert.equal(bad.status, 400);
    assert.deepEqual(bad.errors, [{ parameter: 'columns', message: 'form field columns is declared application/json but is not valid JSON' }]);
  });

  test('an empty body is an empty form; no boundary, or a body cut short, is 400 malformed', async () => {
    for (const chunks of [[], [new Uint8Array(0)]]) {
      const empty = await parseForm(chunks, TYPE, 10);
      assert.deepEqual([empty.images, { ...empty.fields }], [[], {}]);
    }
    const noBoundary = await refusal([file(1)], 10, 'multipart/form-data');
    assert.equal(noBoundary.slug, 'invalid-request');
    assert.match(noBoundary.detail, /malformed: Boundary not found/);
    // RFC 2046's 70 characters at most: busboy's refusal named its internals ("The needle ...").
    for (const quote of ['', '"']) {
      const long = await refusal([file(1)], 10, `multipart/form-data; boundary=${quote}${'a'.repeat(300)}${quote}`);
      assert.equal(long.slug, 'invalid-request');
      assert.equal(long.detail, 'The multipart/form-data boundary is 300 characters long; at most 70 are allowed (RFC 2046, section 5.1.1).');
    }
    const cut = body([file(100)]).subarray(0, 120);
    const short = await refusal(cut, 1000);
    assert.equal(short.slug, 'invalid-request');
    assert.match(short.detail, /malformed/);
  });

  test('an upload over the limit is 413 naming image; at the limit it is read', async () => {
    const over = await refusal([file(1001)], 1000);
    assert.equal(over.status, 413);
    assert.equal(over.slug, 'image-too-large');
    assert.equal(over.errors?.[0]?.parameter, 'image');
    const at = await parseForm([body([file(1000)])], TYPE, 1000);
    assert.equal(at.images[0]!.field === 'image' && at.images[0]!.byteLength, 1000);
  });

  test('refusals: a second image file, another file field, imageBase64, a field over its limit', async () => {
    const twice = await refusal([file(5), file(5)]);
    assert.equal(twice.slug, 'multiple-images');
    const other = await refusal([file(5, 'photo')]);
    assert.equal(other.slug, 'invalid-request');
    assert.deepEqual(other.errors?.map((e) => e.parameter), ['photo']);
    const b64 = await refusal([{ name: 'imageBase64', value: 'QUJD' }]);
    assert.deepEqual(b64.errors?.map((e) => e.parameter), ['imageBase64']);
    const long = await refusal([{ name: 'imageUrl', value: 'h'.repeat(MAX_FIELD_BYTES + 1) }]);
    assert.match(long.detail, new RegExp(`imageUrl is longer than ${MAX_FIELD_BYTES} bytes`));
    // A refusal comes first: a too large file after it is not read, and is not the answer.
    const first = await refusal([file(5), file(5000)], 1000);
    assert.equal(first.slug, 'multiple-images');
  });

  test('the part limits and a field named after Object.prototype', async () => {
    const files = await refusal(Array.from({ length: MAX_FILES + 1 }, () => file(1)));
    assert.equal(files.status, 413);
    assert.equal(files.slug, 'request-too-large');
    assert.match(files.detail, new RegExp(`too many (files: at most ${MAX_FILES}|parts: at most ${MAX_FILES + MAX_FIELDS}) are allowed`));
    const fields = await refusal(Array.from({ length: MAX_FIELDS + 1 }, (_, i) => ({ name: `f${i}`, value: 'x' })));
    assert.equal(fields.slug, 'request-too-large');
    assert.match(fields.detail, new RegExp(`too many (fields: at most ${MAX_FIELDS}|parts: at most ${MAX_FILES + MAX_FIELDS}) are allowed`));
    for (const name of ['__proto__', 'constructor', 'toString']) {
      const p = await refusal([{ name, value: '1' }]);
      assert.equal(p.status, 400, name);
      assert.match(p.detail, /field name is not allowed/);
    }
    const protoFile = await refusal([file(3, '__proto__')]);
    assert.match(protoFile.detail, /field name is not allowed/);
  });

  test('a limit met beside a large part ends the parse in any chunk size (busboy stalled on the part it skips, and the form never finished)', async () => {
    const manyFields = body([...Array.from({ length: 2 * MAX_FIELDS }, (_, i) => ({ name: `f${i}`, value: '1' })), file(230_000)]);
    const manyFiles = body(Array.from({ length: MAX_FILES + 2 }, () => file(230_000)));
    for (const [b, what] of [[manyFields, /too many (fields|parts)/], [manyFiles, /too many (files|parts)/]] as const) {
      for (const size of [16 * 1024, 64 * 1024, 1024 * 1024]) {
        const stalled = new Promise<'stalled'>((resolve) => setTimeout(resolve, 5000, 'stalled').unref());
        const p = await Promise.race([problemOf(parseForm(chunked(b, size), TYPE, 16 << 20)), stalled]);
        assert.notEqual(p, 'stalled', `${String(what)} in ${size}-byte chunks`);
        assert.equal((p as HttpProblem).status, 413);
        assert.match((p as HttpProblem).detail, what);
      }
    }
  });

  test('the event loop\'s cap covers every field at its longest beside the image', () => {
    assert.ok(FORM_OVERHEAD_BYTES >= MAX_FIELDS * MAX_FIELD_BYTES + (MAX_FIELDS + MAX_FILES) * 200);
  });
});
