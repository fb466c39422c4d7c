/** InFlightCalls (notifications/cancelled over HTTP): a cancel that overtakes its call is kept, bounded in time and number. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { InFlightCalls, MAX_KEPT_ID_LENGTH, sessionOf } from '../src/server/mcp/cancels.js';

const call = (id: string | number) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: {} });
const cancel = (id: string | number) => ({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: id } });

test('a cancel before its call stops the call as it is tracked, once, in its own session only, within its time', () => {
  let now = 0;
  const calls = new InFlightCalls({ keepMs: 1000, most: 3, maxBatch: 16, now: () => now });
  calls.cancel('s', cancel(1));
  assert.equal(calls.track('other', call(1)).cancelOf(1)!.aborted, false, 'another session');
  assert.equal(calls.track('s', call(2)).cancelOf(2)!.aborted, false, 'another id');
  const early = calls.track('s', call(1));
  assert.equal(early.cancelOf(1)!.aborted, true);
  assert.equal((early.cancelOf(1)!.reason as { slug?: string }).slug, 'interrupted');
  early.done();
  assert.equal(calls.waitingCancels, 0, 'used once');
  // Kept for keepMs, then forgotten.
  calls.cancel('s', cancel(3));
  now = 1000;
  assert.equal(calls.track('s', call(3)).cancelOf(3)!.aborted, false, 'expired');
  // At most `most`: the oldest go first.
  for (const id of [10, 11, 12, 13]) calls.cancel('s', cancel(id));
  assert.equal(calls.waitingCancels, 3);
  assert.equal(calls.track('s', call(10)).cancelOf(10)!.aborted, false, 'pushed out');
  assert.equal(calls.track('s', call(13)).cancelOf(13)!.aborted, true);
  // A cancel of a tracked call aborts it and keeps nothing.
  const running = calls.track('s', call(20));
  calls.cancel('s', cancel(20));
  assert.equal(running.cancelOf(20)!.aborted, true);
  assert.equal(calls.waitingCancels, 2);
  // Without a session nothing is kept.
  calls.cancel(undefined, cancel(30));
  assert.equal(calls.waitingCancels, 2);
});

test('each request of a batch has its own signal: a cancel stops the call it names, not its batch', () => {
  const calls = new InFlightCalls({ keepMs: 1000, most: 3, maxBatch: 16 });
  const batch = calls.track('s', [call(1), call(2), { jsonrpc: '2.0', id: 3, method: 'ping' }]);
  calls.cancel('s', cancel(2));
  assert.deepEqual([1, 2, 3].map((id) => batch.cancelOf(id)!.aborted), [false, true, false]);
  assert.equal(batch.cancelOf(4), undefined, 'not a request of the batch');
  assert.equal(calls.track(undefined, call(5)).cancelOf(5), undefined, 'no session: nothing to cancel by');
});

test('what a client sends cannot make the kept cancels large: ids past MAX_KEPT_ID_LENGTH and batches the dispatcher refuses keep nothing', () => {
  const calls = new InFlightCalls({ keepMs: 1000, most: 100, maxBatch: 4 });
  const long = 'x'.repeat(MAX_KEPT_ID_LENGTH + 1);
  calls.cancel('s', cancel(long));
  assert.equal(calls.waitingCancels, 0, 'a long id is not kept');
  // ...but a call already tracked under a long id is still stopped by its cancel.
  const running = calls.track('s', call(long));
  calls.cancel('s', cancel(long));
  assert.equal(running.cancelOf(long)!.aborted, true);
  calls.cancel('s', cancel('y'.repeat(MAX_KEPT_ID_LENGTH)));
  assert.equal(calls.waitingCancels, 1, 'an id at the bound is kept');
  // A batch over maxBatch is refused whole by the dispatcher: none of its cancels is kept.
  calls.cancel('s', [1, 2, 3, 4, 5].map((id) => cancel(id)));
  assert.equal(calls.waitingCancels, 1);
  calls.cancel('s', [1, 2, 3, 4].map((id) => cancel(id)));
  assert.equal(calls.waitingCancels, 5);
});

test('a cancel that comes after its call was answered is ignored: the next call reusing the id runs; bounded like the early cancels', () => {
  let now = 0;
  const calls = new InFlightCalls({ keepMs: 1000, most: 2, maxBatch: 16, now: () => now });
  calls.track('s', call(1)).done();
  calls.cancel('s', cancel(1));
  assert.equal(calls.waitingCancels, 0, 'late: not kept as an early cancel');
  const again = calls.track('s', call(1));
  assert.equal(again.cancelOf(1)!.aborted, false, 'the id reused');
  // While it runs, a cancel names this call.
  calls.cancel('s', cancel(1));
  assert.equal(again.cancelOf(1)!.aborted, true);
  again.done();
  // Another session's answered id is no reason to ignore a cancel: it is early there.
  calls.cancel('t', cancel(1));
  assert.equal(calls.track('t', call(1)).cancelOf(1)!.aborted, true);
  // Remembered for keepMs only...
  calls.track('s', call(2)).done();
  now = 1000;
  calls.cancel('s', cancel(2));
  assert.equal(calls.track('s', call(2)).cancelOf(2)!.aborted, true, 'forgotten: the cancel was early');
  // ...at most `most` of them (the oldest go first), and ids past MAX_KEPT_ID_LENGTH not at all.
  for (const id of [10, 11, 12]) calls.track('s', call(id)).done();
  assert.equal(calls.answeredCalls, 2);
  calls.track('s', call('x'.repeat(MAX_KEPT_ID_LENGTH + 1))).done();
  assert.equal(calls.answeredCalls, 2);
  calls.cancel('s', [cancel(10), cancel(12)]);
  assert.equal(calls.waitingCancels, 1, 'pushed out: 10 is kept as early; 12 is ignored');
});

test('a session is keyed with its client\'s address: an id a client made up cannot be used from another address', () => {
  assert.equal(sessionOf('1', '10.0.0.1'), '10.0.0.1 1');
  assert.notEqual(sessionOf('1', '10.0.0.2'), sessionOf('1', '10.0.0.1'));
  const calls = new InFlightCalls({ keepMs: 1000, most: 3, maxBatch: 16 });
  const running = calls.track(sessionOf('1', '10.0.0.1'), call(7));
  calls.cancel(sessionOf('1', '10.0.0.2'), cancel(7));
  assert.equal(running.cancelOf(7)!.aborted, false, 'another address');
  calls.cancel(sessionOf('1', '10.0.0.1'), cancel(7));
  assert.equal(running.cancelOf(7)!.aborted, true);
  assert.equal(sessionOf(['a', 'b'], '10.0.0.1'), undefined, 'given twice: no key');
  assert.equal(sessionOf('x'.repeat(129), '10.0.0.1'), undefined, 'no id of ours');
});
