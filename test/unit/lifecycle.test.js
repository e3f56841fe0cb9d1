// One server run (bench/passes/lifecycle.js serverRun): the order of its steps, the samplers closed in reverse around
// the load, and the server stopped whatever fails. Pure: the server and the steps are stand-ins that log what happens.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { beforeAfter, serverRun } from '../../bench/passes/lifecycle.js';

/** Steps that log every call, with samplers a and b; `fail` names the step that throws. */
function logged(fail = null) {
  const log = [];
  const step = (name, value) => async () => {
    log.push(name);
    if (fail === name) throw new Error(`${name} failed`);
    return value;
  };
  const sampler = (name) => ({
    name,
    open: async () => {
      log.push(`open ${name}`);
      return async () => { log.push(`close ${name}`); return `${name} reading`; };
    },
  });
  return {
    log,
    steps: {
      start: async () => { log.push('start'); return { stop: step('stop', 0) }; },
      warmup: step('warmup', 'warm'),
      samplers: [sampler('a'), sampler('b')],
      measure: step('measure', 'run'),
      after: async (server, done) => { log.push('after'); if (fail === 'after') throw new Error('after failed'); return done; },
    },
  };
}

test('serverRun: start, warm-up, samplers opened in order, the load, samplers closed in reverse, after, stop', async () => {
  const { log, steps } = logged();
  const done = await serverRun(steps);
  assert.deepEqual(log, ['start', 'warmup', 'open a', 'open b', 'measure', 'close b', 'close a', 'after', 'stop']);
  assert.deepEqual(done, { warm: 'warm', run: 'run', readings: { a: 'a reading', b: 'b reading' } });
});

test('serverRun: a failed load still closes the samplers and stops the server, and its error is the one thrown', async () => {
  const { log, steps } = logged('measure');
  await assert.rejects(serverRun(steps), /measure failed/);
  assert.deepEqual(log, ['start', 'warmup', 'open a', 'open b', 'measure', 'close b', 'close a', 'stop']);
});

test('serverRun: a failed warm-up or after stops the server; a server that did not start is not stopped', async () => {
  for (const fail of ['warmup', 'after']) {
    const { log, steps } = logged(fail);
    await assert.rejects(serverRun(steps), new RegExp(`${fail} failed`));
    assert.equal(log.at(-1), 'stop', fail);
  }
  const { log, steps } = logged();
  await assert.rejects(serverRun({ ...steps, start: async () => { throw new Error('no start'); } }), /no start/);
  assert.deepEqual(log, []);
});

test('serverRun: without after it resolves to the warm-up, the load and the readings; a stop of its own replaces server.stop', async () => {
  const stopped = [];
  const server = { stop: async () => stopped.push('stop'), kill: async () => stopped.push('kill') };
  const done = await serverRun({ start: async () => server, measure: async () => 42, stop: (s) => s.kill() });
  assert.deepEqual(done, { warm: undefined, run: 42, readings: {} });
  assert.deepEqual(stopped, ['kill']);
});

test('beforeAfter: reads before the load and after it, and makes its reading of the two and the server', async () => {
  let count = 10;
  const sampler = beforeAfter('count', () => count, (before, after, server) => ({ before, after, server }));
  const done = await serverRun({ start: async () => ({ stop: async () => {}, name: 's' }), samplers: [sampler], measure: async () => { count = 15; } });
  assert.deepEqual(done.readings.count.before, 10);
  assert.deepEqual(done.readings.count.after, 15);
  assert.equal(done.readings.count.server.name, 's');
});
