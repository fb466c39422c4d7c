/** InFlightCalls (notifications/cancelled over HTTP): a cancel that overtakes its call is kept, bounded in time and number. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { InFlightCalls } from '../src/server/mcp/cancels.js';

const call = (id: string | number) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: {} });
const cancel = (id: string | number) => ({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: id } });

test('a cancel before its call stops the call as it is tracked, once, in its own session only, within its time', () => {
  let now = 0;
  const calls = new InFlightCalls({ keepMs: 1000, most: 3, now: () => now });
  calls.cancel('s', cancel(1));
  assert.equal(calls.track('other', call(1)).signal.aborted, false, 'another session');
  assert.equal(calls.track('s', call(2)).signal.aborted, false, 'another id');
  const early = calls.track('s', call(1));
  assert.equal(early.signal.aborted, true);
  assert.equal((early.signal.reason as { slug?: string }).slug, 'interrupted');
  early.done();
  assert.equal(calls.waitingCancels, 0, 'used once');
  // Kept for keepMs, then forgotten.
  calls.cancel('s', cancel(3));
  now = 1000;
  assert.equal(calls.track('s', call(3)).signal.aborted, false, 'expired');
  // At most `most`: the oldest go first.
  for (const id of [10, 11, 12, 13]) calls.cancel('s', cancel(id));
  assert.equal(calls.waitingCancels, 3);
  assert.equal(calls.track('s', call(10)).signal.aborted, false, 'pushed out');
  assert.equal(calls.track('s', call(13)).signal.aborted, true);
  // A cancel of a tracked call aborts it and keeps nothing.
  const running = calls.track('s', call(20));
  calls.cancel('s', cancel(20));
  assert.equal(running.signal.aborted, true);
  assert.equal(calls.waitingCancels, 2);
  // Without a session nothing is kept.
  calls.cancel(undefined, cancel(30));
  assert.equal(calls.waitingCancels, 2);
});
