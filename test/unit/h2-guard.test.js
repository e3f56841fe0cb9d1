// The HTTP/2 guard's pure parts (server/h2-guard.js): the rapid-reset bucket, the PING strikes and the idle sweep's
// verdict. What they do on the wire is test/integration/h2-hostile.test.js's and h2-shutdown.test.js's.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createPingStrikes, createResetBucket, sweepVerdict } from '../../server/h2-guard.js';

test('rapid reset: a burst of resets passes, the next one at the same instant does not; the bucket refills per second', () => {
  const bucket = createResetBucket(3, 10, 0);
  assert.deepEqual([1, 2, 3, 4].map(() => bucket.take(0)), [true, true, true, false]);
  // 100 ms refill one token at 10/s; the empty bucket was in debt by one.
  assert.equal(bucket.take(100), false);
  assert.equal(bucket.take(300), true);
  const full = createResetBucket(2, 1000, 0);
  full.take(0);
  assert.equal(full.take(60_000), true, 'never more than the burst');
  assert.equal(full.take(60_000), true);
  assert.equal(full.take(60_000), false);
});

test('PING strikes: quick PINGs without a call strike; one past the strikes is too many; a call clears them', () => {
  const strikes = createPingStrikes(1000, 2);
  const idle = { active: 0, seen: 0 };
  assert.equal(strikes.onPing(0, idle), false, 'the first PING is no strike');
  assert.equal(strikes.onPing(10, idle), false, 'strike 1');
  assert.equal(strikes.onPing(20, idle), false, 'strike 2');
  assert.equal(strikes.onPing(30, idle), true, 'strike 3, past 2');

  const cleared = createPingStrikes(1000, 2);
  for (const at of [0, 10, 20]) cleared.onPing(at, idle);
  assert.equal(cleared.onPing(30, { active: 0, seen: 1 }), false, 'a stream opened since the last PING: no strike, count reset');
  assert.equal(cleared.onPing(40, { active: 0, seen: 1 }), false);
  assert.equal(cleared.onPing(50, { active: 1, seen: 1 }), false, 'a stream open: no strike');
  assert.equal(cleared.onPing(60, { active: 0, seen: 1 }), false);
  assert.equal(cleared.onPing(70, { active: 0, seen: 1 }), false);
  assert.equal(cleared.onPing(80, { active: 0, seen: 1 }), true);

  const slow = createPingStrikes(1000, 0);
  assert.deepEqual([0, 1000, 2000, 3000].map((at) => slow.onPing(at, idle)), [false, false, false, false],
    'PINGs no sooner than the interval never strike');
});

test('idle sweep: busy while streams open; quiet when none opened since the last sweep; idle timeout from the first idle sweep', () => {
  const state = { seen: 0, active: 0, seenAtSweep: -1, idleSince: null };
  assert.equal(sweepVerdict(state, 0, 100), 'busy', 'the first sweep finds nothing to compare');
  assert.equal(state.idleSince, null);
  assert.equal(sweepVerdict(state, 50, 100), 'quiet');
  assert.equal(state.idleSince, 50);
  assert.equal(sweepVerdict(state, 149, 100), 'quiet');
  assert.equal(sweepVerdict(state, 150, 100), 'idle-timeout');

  const open = { seen: 1, active: 1, seenAtSweep: 1, idleSince: null };
  assert.equal(sweepVerdict(open, 1000, 100), 'quiet', 'a long stream: quiet (so PINGed), never idle');
  assert.equal(open.idleSince, null);
  open.seen = 2;
  open.active = 0;
  assert.equal(sweepVerdict(open, 2000, 100), 'busy');
  assert.equal(sweepVerdict(open, 2050, 100), 'quiet');
  assert.equal(open.idleSince, 2050);
  open.seen = 3;
  assert.equal(sweepVerdict(open, 2100, 100), 'busy', 'a stream came and went: idle again from the next sweep');
  assert.equal(open.idleSince, null);
});
