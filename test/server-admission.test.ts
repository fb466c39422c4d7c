import assert from 'node:assert/strict';
import { once } from 'node:events';
import { request } from 'node:http';
import { connect, type Socket } from 'node:net';
import { setTimeout as delay } from 'node:timers/promises';
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

it('requests pipelined on one connection give their slots back when the client drops it, the waiting ones too', async () => {
  // Only the response being written has the socket: those waiting their turn never emit `close`
  // when it dies, and held their slots for good (a few such bursts took every slot).
  const roomy = await startTestServer({ V2A_WORKERS: '1', V2A_QUEUE_LIMIT: '16' });
  try {
    const image = await photo(64, 48);
    const body = Buffer.concat([Buffer.from('--B\r\nContent-Disposition: form-data; name="image"; filename="a.png"\r\n\r\n'), image, Buffer.from('\r\n--B--\r\n')]);
    const head = (n: number) => `POST /api/v1/render?columns=${20 + n} HTTP/1.1\r\nHost: x\r\nContent-Type: multipart/form-data; boundary=B\r\nContent-Length: ${body.length}\r\n\r\n`;
    const { port } = new URL(roomy.base);
    const socket = connect(Number(port), '127.0.0.1');
    socket.on('error', () => {});
    await once(socket, 'connect');
    socket.write(Buffer.concat(Array.from({ length: 6 }, (_, n) => [Buffer.from(head(n)), body]).flat()));
    const admission = roomy.app.v2a.admission;
    for (const deadline = Date.now() + 10_000; admission.inFlight < 2 && Date.now() < deadline;) await delay(5);
    assert.ok(admission.inFlight >= 2, `pipelined requests admitted (${admission.inFlight})`);
    socket.destroy();
    for (const deadline = Date.now() + 10_000; admission.inFlight > 0 && Date.now() < deadline;) await delay(20);
    assert.equal(admission.inFlight, 0, 'every slot given back');
    assert.equal(roomy.app.v2a.connections.busy, 0, 'no request left busy for the shutdown to wait on');
  } finally {
    await roomy.close();
  }
});
