import assert from 'node:assert/strict';
import { request } from 'node:http';
import { after, before, it } from 'node:test';
import { assertProblem, call, photo, postForm, startTestServer, type TestServer } from './server-helpers.js';

/**
 * Admission control happens before a body is read: with one worker and no queue, a second upload
 * is refused while the first is still streaming its body, so bodies cannot pile up in memory.
 */
let server: TestServer;
before(async () => { server = await startTestServer({ V2A_WORKERS: '1', V2A_QUEUE_LIMIT: '0' }); });
after(async () => { await server.close(); });

it('refuses a render with 503 before reading its body when renders are at capacity', async () => {
  const url = new URL('/api/v1/render', server.base);
  // A JSON upload that sends its first bytes and then stalls: admitted, holding the only slot.
  const stalled = request(url, { method: 'POST', headers: { 'content-type': 'application/json', 'content-length': '100000' } });
  stalled.on('error', () => {});
  stalled.write('{"imageBase64":"');
  await new Promise((r) => setTimeout(r, 150));

  const refused = await postForm(`${server.base}/api/v1/render`, { image: await photo() });
  assertProblem(refused, 503, 'overloaded');
  assert.ok(Number(refused.headers.get('retry-after')) >= 1);
  assert.equal((await call(`${server.base}/api/health`)).status, 200, 'health still answers');

  // The slot comes back when the stalled client goes away.
  stalled.destroy();
  await new Promise((r) => setTimeout(r, 150));
  const ok = await postForm(`${server.base}/api/v1/render?columns=20`, { image: await photo() });
  assert.equal(ok.status, 200);
});
