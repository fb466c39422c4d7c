/** The Origin rule of /api/mcp (DNS-rebinding protection), case by case. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { mcpOriginAllowed } from '../src/server/mcp/origin.js';

test('own origin: V2A_PUBLIC_URL when set, else the request\'s own only for a Host that cannot be rebound', () => {
  const open = { corsOrigins: '*' as const, publicUrl: undefined };
  assert.equal(mcpOriginAllowed('http://localhost:8080', 'http://localhost:8080', open), true);
  assert.equal(mcpOriginAllowed('http://127.0.0.1:8080', 'http://127.0.0.1:8080', open), true);
  assert.equal(mcpOriginAllowed('http://[::1]:8080', 'http://[::1]:8080', open), true);
  assert.equal(mcpOriginAllowed('http://rebound.example:8080', 'http://rebound.example:8080', open), false, 'a name proves nothing');
  assert.equal(mcpOriginAllowed('http://localhost:9999', 'http://localhost:8080', open), false, 'another port is another origin');
  assert.equal(mcpOriginAllowed('https://evil.example', 'http://localhost:8080', open), false);
  for (const bad of ['null', '', 'not a url', 'http://localhost:8080/path']) assert.equal(mcpOriginAllowed(bad, 'http://localhost:8080', open), false, bad);
  const pub = { corsOrigins: '*' as const, publicUrl: 'https://v2a.example.com' };
  assert.equal(mcpOriginAllowed('https://v2a.example.com', 'https://v2a.example.com', pub), true);
  assert.equal(mcpOriginAllowed('http://localhost:8080', 'http://localhost:8080', pub), false, 'the public URL is the own origin');
});

test('a V2A_CORS_ORIGINS list adds its origins; * adds none', () => {
  const list = { corsOrigins: ['https://app.example'], publicUrl: undefined };
  assert.equal(mcpOriginAllowed('https://app.example', 'http://localhost:8080', list), true);
  assert.equal(mcpOriginAllowed('https://other.example', 'http://localhost:8080', list), false);
  assert.equal(mcpOriginAllowed('http://localhost:8080', 'http://localhost:8080', list), true, 'the own origin still');
});
