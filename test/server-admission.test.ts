import assert from 'node:assert/strict';
import { once } from 'node:events';
import { request } from 'node:http';
import type { Socket } from 'node:net';
import { after, before, it } from 'node:test';
import { assertProblem, call, photo, postForm, startTestServer, type TestServer } from './server-helpers.js';

/**
 * Admission control happens before a body is read: with one worker and no queue, a second upload
 * is refused while the first is still streaming its body, so bodies cannot pile up in memory.
 * Waits are on events: the interim `100 Continue` (sent once a request is admitted) and the
 * server side of the stalled connection closing.
 */
let server: TestServer;
before(async () => { server = await startTestServer({ V2A_WORKERS: '1', V2A_QUEUE_LIMIT: '0' }); });
after(async () => { await server.close(); });

it('refuses a render with 503 before reading its body when renders are at capacity', async () => {
  const url = new URL('/api/v1/render', server.base);
  const serverSide = once(server.app.server, 'connection') as Promise<[Socket]>;
  // A JSON upload that sends its first bytes and then stalls: admitted, holding the only slot.
  const stalled = request(url, { method: 'POST', headers: { 'content-type': 'application/json', 'content-length': '100000', expect: '100-continue' } });
  stalled.on('error', () => {});
  stalled.flushHeaders();
  await once(stalled, 'continue');
  stalled.write('{"imageBase64":"');
  const [socket] = await serverSide;

  const refused = await postForm(`${server.base}/api/v1/render`, { image: await photo() });
  assertProblem(refused, 503, 'overloaded');
  assert.ok(Number(refused.headers.get('retry-after')) >= 1);
  assert.equal(refused.headers.get('connection'), 'close');
  assert.equal((await call(`${server.base}/api/health`)).status, 200, 'health still answers');

  // The slot comes back when the stalled client goes away.
  const closed = once(socket, 'close');
  stalled.destroy();
  await closed;
  const ok = await postForm(`${server.base}/api/v1/render?columns=20`, { image: await photo() });
  assert.equal(ok.status, 200);
  assert.equal(server.app.v2a.admission.inFlight, 0);
});
