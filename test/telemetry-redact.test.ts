/**
 * The one redaction point (src/server/telemetry/redact.ts): every string a span carries (name,
 * attributes, event names and attributes, link attributes, status message) is sanitised before
 * any exporter sees it.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, test } from 'node:test';
import { SpanStatusCode, trace, ROOT_CONTEXT } from '@opentelemetry/api';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { RedactingSpanExporter, redactAttributes, redactString, REDACTED } from '../src/server/telemetry/redact.js';
import { photo } from './server-helpers.js';

const KEY = `pk_${randomBytes(30).toString('base64url')}`;

describe('redactString', () => {
  test('URLs keep origin and path only', () => {
    assert.equal(redactString('https://user:pw@images.example.com:8443/a/b.png?sig=abc&x=1#frag'), 'https://images.example.com:8443/a/b.png');
    assert.equal(redactString('fetch from http://h.example/x?q=1, then'), 'fetch from http://h.example/x, then');
    assert.equal(redactString('see https://h.example/p.'), 'see https://h.example/p.');
    assert.equal(redactString('path /api/v1/render?columns=10&token=x'), 'path /api/v1/render');
    assert.equal(redactString('"/a/b?c=d"'), '"/a/b"');
  });

  test('data: URLs and base64 disappear', async () => {
    const b64 = (await photo(32, 24)).toString('base64');
    assert.equal(redactString(`data:image/png;base64,${b64}`), `data:${REDACTED}`);
    assert.equal(redactString(`got ${b64}`), 'got [REDACTED-BASE64]');
    assert.equal(redactString(`got "${b64.slice(0, 36)}..."`), 'got "[REDACTED-BASE64]..."', 'a quoted, cut value');
    const wrapped = b64.match(/.{1,76}/g)!.join('\n');
    assert.equal(redactString(wrapped), '[REDACTED-BASE64]', 'line-wrapped base64, last line included');
    assert.equal(redactString(b64.match(/.{1,76}/g)!.join('\\n')), '[REDACTED-BASE64]', 'escaped line breaks');
  });

  test('ordinary text, ids, slugs and paths stay', () => {
    for (const s of [
      'The image is damaged, truncated, empty or not an image.',
      '4bf92f3577b34da6a3ce929d0e0e4736',
      'image-url-not-allowed',
      'https://v2a.dev/problems/image-url-not-allowed',
      'columns must be an integer from 8 to 400 (got 7)',
      '/api/v1/render',
      'target_met',
    ]) assert.equal(redactString(s), s);
  });

  test('the key and any 12-character fragment of it', () => {
    assert.equal(redactString(`x ${KEY} y`, [KEY]), `x ${REDACTED} y`);
    assert.equal(redactString(`monoColor must be a hex colour (got "${KEY.slice(0, 36)}...")`, [KEY]), `monoColor must be a hex colour (got "${REDACTED}...")`);
    assert.ok(!redactString(`a${KEY.slice(5, 20)}b`, [KEY]).includes(KEY.slice(5, 17)));
    assert.equal(redactString('short key k stays readable', ['k']), 'short key k stays readable', 'keys under 8 characters are not searched');
  });

  test('long strings are cut', () => {
    assert.equal(redactString('a '.repeat(1000)).length, 512);
  });
});

describe('redactAttributes', () => {
  test('credential-like and image-data names lose their values; arrays are bounded', () => {
    const out = redactAttributes({
      'http.request.header.authorization': 'Bearer abc',
      'x-platform-api-key': 'abc',
      'app.token': 'abc',
      imageBase64: 'abc',
      'v2a.image.data': 'abc',
      'v2a.image.bytes': 1234,
      'v2a.columns': 80,
      list: Array.from({ length: 100 }, (_, i) => `https://h.example/${i}?q=${i}`),
    }, [KEY]);
    assert.equal(out['http.request.header.authorization'], REDACTED);
    assert.equal(out['x-platform-api-key'], REDACTED);
    assert.equal(out['app.token'], REDACTED);
    assert.equal(out.imageBase64, REDACTED);
    assert.equal(out['v2a.image.data'], REDACTED);
    assert.equal(out['v2a.image.bytes'], 1234);
    assert.equal(out['v2a.columns'], 80);
    assert.equal((out.list as string[]).length, 64);
    assert.equal((out.list as string[])[3], 'https://h.example/3');
  });
});

describe('RedactingSpanExporter', () => {
  test('every string of a span is sanitised before the inner exporter sees it', async () => {
    const b64 = (await photo(40, 30)).toString('base64');
    const memory = new InMemorySpanExporter();
    const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(new RedactingSpanExporter(memory, [KEY]))] });
    const tracer = provider.getTracer('t');
    const linked = tracer.startSpan('linked');
    linked.end();
    const span = tracer.startSpan(`render ${KEY}`, {
      attributes: { 'url.full': 'https://u:p@h.example/x?y=1', note: `data:image/png;base64,${b64}` },
      links: [{ context: linked.spanContext(), attributes: { why: `https://h.example/?k=${KEY}` } }],
    }, trace.setSpan(ROOT_CONTEXT, linked));
    span.addEvent(`event ${b64}`, { detail: `key ${KEY}` });
    span.setStatus({ code: SpanStatusCode.ERROR, message: `failed for https://h.example/a?token=SECRETQ with ${b64.slice(10, 60)}` });
    span.end();
    await provider.forceFlush();
    const [, out] = memory.getFinishedSpans();
    assert.ok(out);
    const text = JSON.stringify({ name: out.name, attributes: out.attributes, events: out.events, links: out.links.map((l) => l.attributes), status: out.status });
    assert.ok(!text.includes(KEY.slice(3, 15)), 'no key');
    assert.ok(!text.includes(b64.slice(30, 54)), 'no base64');
    assert.ok(!text.includes('SECRETQ') && !text.includes('y=1') && !text.includes('u:p@'), 'no query or user info');
    assert.equal(out.name, `render ${REDACTED}`);
    assert.equal(out.attributes['url.full'], 'https://h.example/x');
    assert.equal(out.status.message, 'failed for https://h.example/a with [REDACTED-BASE64]');
    assert.equal(out.events[0]!.name, 'event [REDACTED-BASE64]');
    assert.equal(out.spanContext().spanId, span.spanContext().spanId, 'ids untouched');
    assert.equal(out.parentSpanContext?.spanId, linked.spanContext().spanId);
    await provider.shutdown();
  });
});
