// The cluster primary's decisions (server/supervisor.js), driven with fake workers: no node:cluster, no process,
// timers and Date mocked. Each test reads the log events (server/events.js) the real primary writes.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { EVENT } from '../../server/events.js';
import { RESTART_DEFAULTS } from '../../server/restart-policy.js';
import { readSettings } from '../../server/settings.js';
import { KILL_AFTER_DRAIN_MS, RELOAD_START_TIMEOUT_MS, Supervisor } from '../../server/supervisor.js';

/** What the supervisor uses of a cluster worker, and what it did to it. */
class FakeWorker {
  /** @param {number} id */
  constructor(id) {
    this.id = id;
    this.dead = false;
    /** @type {string[]} message types sent */
    this.sent = [];
    /** @type {string[]} signals sent */
    this.kills = [];
    this.process = { pid: 1000 + id, kill: (signal) => { this.kills.push(signal); } };
  }

  send(msg, callback) {
    this.sent.push(msg.type);
    callback?.(null);
  }

  isDead() { return this.dead; }
}

/**
 * A supervisor over a fake cluster; its log lines and exits are recorded.
 * @param {import('node:test').TestContext} t
 * @param {Record<string, string>} [env] settings over WORKERS=2 MODE=both
 */
function harness(t, env = {}) {
  t.mock.timers.enable({ apis: ['setTimeout', 'Date'], now: 1_000_000 });
  const settings = readSettings({ WORKERS: '2', MODE: 'both', WORKER_MEMORY_MB: '300', SHUTDOWN_TIMEOUT_MS: '1000', ...env });
  /** @type {FakeWorker[]} every worker forked, in order */
  const forked = [];
  const cluster = {
    /** @type {Record<number, FakeWorker>} */
    workers: {},
    fork() {
      const worker = new FakeWorker(forked.length + 1);
      forked.push(worker);
      this.workers[worker.id] = worker;
      return worker;
    },
  };
  /** @type {number[]} */
  const exits = [];
  /** @type {Array<Record<string, any> & {level: string}>} */
  const lines = [];
  const line = (level) => (obj) => { lines.push({ level, ...obj }); };
  const log = /** @type {any} */ ({ info: line('info'), warn: line('warn'), error: line('error'), fatal: line('fatal') });
  const supervisor = new Supervisor({ settings, log, cluster, process: { exit: (code) => { exits.push(code); } } });
  /** Every worker of the list reports its listeners bound. */
  const listen = (...workers) => { for (const w of workers) supervisor.onMessage(w, { type: 'listening' }); };
  /** A worker exits, as cluster reports it: dead, unlisted (its IPC closed too), then 'exit'. */
  const die = (worker, code = 1, signal = null) => {
    worker.dead = true;
    delete cluster.workers[worker.id];
    supervisor.onExit(worker, code, signal);
  };
  const events = () => lines.map((l) => l.event);
  const lastOf = (event) => lines.findLast((l) => l.event === event);
  /** Let the supervisor's awaits run. */
  const settle = () => new Promise((resolve) => { setImmediate(resolve); });
  /** Starts the workers and brings them all to listen. */
  const startReady = () => {
    supervisor.start();
    listen(...forked);
    return [...forked];
  };
  return { settings, supervisor, cluster, forked, exits, lines, listen, die, events, lastOf, settle, startReady };
}

test('start: WORKERS forks; ready once every worker listens, with the ports and the memory budget', (t) => {
  const h = harness(t, { ADMIN_PORT: '9100' });
  h.supervisor.start();
  assert.equal(h.forked.length, 2);
  h.listen(h.forked[0]);
  assert.equal(h.supervisor.ready, false);
  assert.deepEqual(h.events(), []);
  h.listen(h.forked[1]);
  assert.equal(h.supervisor.ready, true);
  const ready = h.lastOf(EVENT.READY);
  assert.deepEqual(
    { mode: ready.mode, workers: ready.workers, http: ready.http, grpc: ready.grpc, admin: ready.admin, mb: ready.workerMemoryMb },
    { mode: 'both', workers: 2, http: h.settings.HTTP_PORT, grpc: h.settings.GRPC_PORT, admin: `${h.settings.ADMIN_HOST}:9100`, mb: 300 },
  );
  h.listen(h.forked[0]); // a second report changes nothing
  assert.equal(h.events().filter((e) => e === EVENT.READY).length, 1);
});

test('a start after a stop forks nothing (the admin endpoint opened after the signal)', (t) => {
  const h = harness(t);
  h.supervisor.onStopSignal('SIGTERM');
  h.supervisor.start();
  assert.equal(h.forked.length, 0);
  assert.deepEqual(h.exits, [0]);
  assert.deepEqual(h.events(), [EVENT.SHUTTING_DOWN, EVENT.STOPPED]);
});

test('a worker dying before ready stops the primary with exit 1', (t) => {
  const h = harness(t);
  h.supervisor.start();
  h.listen(h.forked[0]);
  h.die(h.forked[1], 1);
  assert.deepEqual(h.events(), [EVENT.WORKER_DIED_EARLY]);
  assert.equal(h.lastOf(EVENT.WORKER_DIED_EARLY).reason, 'exited with code 1');
  assert.deepEqual(h.forked[0].sent, ['shutdown'], 'the listening worker is told to drain');
  assert.deepEqual(h.forked[0].kills, []);
  h.die(h.forked[0], 0);
  assert.deepEqual(h.exits, [1]);
  assert.equal(h.lastOf(EVENT.STOPPED).exitCode, 1);
});

test('a fatal report before ready stops the primary: every worker is told, and SIGTERM to those not listening', (t) => {
  const f = harness(t);
  f.supervisor.start();
  f.supervisor.onMessage(f.forked[0], { type: 'fatal', code: 'EADDRINUSE', message: 'HTTP port 0.0.0.0:3000 is already in use' });
  assert.equal(f.lastOf(EVENT.START_FAILED).code, 'EADDRINUSE');
  assert.deepEqual(f.forked.map((w) => [w.sent, w.kills]), [[['shutdown'], ['SIGTERM']], [['shutdown'], ['SIGTERM']]]);
  assert.equal(f.supervisor.stopping, true);
});

test('a worker that dies after ready is replaced in its slot, at once, then with back-off; the primary gives up', (t) => {
  const h = harness(t);
  const [first] = h.startReady();
  h.supervisor.onMessage(first, { type: 'crash', message: 'boom' });
  h.die(first, 1);
  const replaced = h.lastOf(EVENT.WORKER_REPLACED);
  assert.deepEqual({ reason: replaced.reason, delayMs: replaced.delayMs, quickDeaths: replaced.quickDeaths, worker: replaced.worker },
    { reason: 'boom', delayMs: 0, quickDeaths: 1, worker: first.process.pid });
  assert.equal(h.forked.length, 3, 'the first quick death is replaced at once');
  // Quick deaths in a row in the same slot: 250 ms, 500 ms, 1000 ms, then the policy gives up.
  let worker = h.forked[2];
  for (const delayMs of [250, 500, 1000]) {
    h.die(worker, null, 'SIGKILL');
    assert.equal(h.lastOf(EVENT.WORKER_REPLACED).delayMs, delayMs);
    assert.equal(h.lastOf(EVENT.WORKER_REPLACED).reason, 'killed by SIGKILL');
    const before = h.forked.length;
    t.mock.timers.tick(delayMs - 1);
    assert.equal(h.forked.length, before);
    t.mock.timers.tick(1);
    assert.equal(h.forked.length, before + 1);
    worker = h.forked.at(-1);
  }
  h.die(worker, 1);
  assert.equal(h.lastOf(EVENT.GAVE_UP).quickDeaths, RESTART_DEFAULTS.maxQuickDeaths);
  assert.deepEqual(h.exits, [], 'the other worker still drains');
  h.die(h.forked[1], 0);
  assert.deepEqual(h.exits, [1]);
});

test('a worker that ran past stableAfterMs is replaced at once, its slot\'s count reset', (t) => {
  const h = harness(t);
  const [first] = h.startReady();
  h.die(first);
  t.mock.timers.tick(RESTART_DEFAULTS.stableAfterMs);
  h.die(h.forked[2]);
  assert.deepEqual([h.lastOf(EVENT.WORKER_REPLACED).delayMs, h.lastOf(EVENT.WORKER_REPLACED).quickDeaths], [0, 0]);
  assert.equal(h.forked.length, 4);
});

test('a stop cancels a delayed replacement', (t) => {
  const h = harness(t);
  const [first] = h.startReady();
  h.die(first);
  h.die(h.forked[2]); // second quick death: delayed 250 ms
  h.supervisor.onStopSignal('SIGINT');
  t.mock.timers.tick(1000);
  assert.equal(h.forked.length, 3);
  h.die(h.forked[1], 0);
  assert.deepEqual(h.exits, [0]);
});

test('SIGTERM drains: every worker is told, the ones not listening get SIGTERM, exit 0 once none is left', (t) => {
  const h = harness(t, { WORKERS: '3' });
  h.supervisor.start();
  h.listen(h.forked[0], h.forked[1]);
  h.supervisor.onStopSignal('SIGTERM');
  assert.deepEqual(h.lastOf(EVENT.SHUTTING_DOWN).signal, 'SIGTERM');
  assert.deepEqual(h.forked.map((w) => w.sent), [['shutdown'], ['shutdown'], ['shutdown']]);
  assert.deepEqual(h.forked.map((w) => w.kills), [[], [], ['SIGTERM']]);
  h.supervisor.onStopSignal('SIGTERM'); // a second signal: logged, nothing more
  assert.equal(h.forked[0].sent.length, 1);
  h.die(h.forked[2], null, 'SIGTERM');
  h.die(h.forked[0], 0);
  assert.deepEqual(h.exits, []);
  assert.equal(h.forked.length, 3, 'no replacement while stopping');
  // Exited but still listed (its IPC not closed yet): gone all the same.
  h.forked[1].dead = true;
  h.supervisor.onExit(h.forked[1], 0, null);
  assert.deepEqual(h.exits, [0]);
  assert.equal(h.lastOf(EVENT.STOPPED).exitCode, 0);
});

test('workers that outlive the drain deadline are killed, exit 1', (t) => {
  const h = harness(t);
  h.startReady();
  h.supervisor.onStopSignal('SIGTERM');
  t.mock.timers.tick(h.settings.SHUTDOWN_TIMEOUT_MS + KILL_AFTER_DRAIN_MS - 1);
  assert.deepEqual(h.exits, []);
  t.mock.timers.tick(1);
  assert.deepEqual(h.lastOf(EVENT.WORKERS_KILLED).workers, h.forked.map((w) => w.process.pid));
  assert.deepEqual(h.forked.map((w) => w.kills), [['SIGKILL'], ['SIGKILL']]);
  assert.deepEqual(h.exits, [1]);
});

test('SIGHUP before ready is ignored with "not ready yet"; while stopping, with "stopping"', (t) => {
  const h = harness(t);
  h.supervisor.onHangup(); // as server/index.js's early SIGHUPs are replayed, before any fork
  h.supervisor.start();
  h.supervisor.onHangup();
  assert.deepEqual(h.lines.map((l) => [l.level, l.event, l.reason]),
    [['warn', EVENT.RELOAD_FAILED, 'not ready yet'], ['warn', EVENT.RELOAD_FAILED, 'not ready yet']]);
  assert.equal(h.forked.length, 2);
  h.listen(...h.forked);
  h.supervisor.onStopSignal('SIGTERM');
  h.supervisor.onHangup();
  assert.equal(h.lastOf(EVENT.RELOAD_FAILED).reason, 'stopping');
  assert.equal(h.forked.length, 2);
});

test('SIGHUP reloads one worker at a time: the replacement listens, then the old one drains and retires', async (t) => {
  const h = harness(t);
  const [a, b] = h.startReady();
  h.supervisor.onHangup();
  assert.deepEqual(h.lastOf(EVENT.RELOADING).workers, [a.process.pid, b.process.pid]);
  assert.equal(h.forked.length, 3, 'one replacement at a time');
  const a2 = h.forked[2];
  h.supervisor.onHangup();
  assert.equal(h.lastOf(EVENT.RELOAD_FAILED).reason, 'a reload is running');
  await h.settle();
  assert.deepEqual(a.sent, [], 'the old worker serves until its replacement listens');
  h.listen(a2);
  await h.settle();
  assert.deepEqual(a.sent, ['shutdown']);
  assert.equal(h.forked.length, 3, 'the next waits for the old one to exit');
  h.supervisor.onMessage(a, { type: 'drained' });
  assert.deepEqual(a.sent, ['shutdown', 'drained-ack']);
  h.die(a, 0);
  assert.equal(h.lastOf(EVENT.WORKER_RETIRED).by, a2.process.pid);
  await h.settle();
  assert.equal(h.forked.length, 4);
  const b2 = h.forked[3];
  h.listen(b2);
  await h.settle();
  h.die(b, 0);
  await h.settle();
  assert.deepEqual(h.lastOf(EVENT.RELOADED).workers, [a2.process.pid, b2.process.pid]);
  assert.ok(!h.events().includes(EVENT.WORKER_REPLACED), 'a retired worker is no death');
  h.supervisor.onHangup(); // the next reload may run
  assert.equal(h.events().filter((e) => e === EVENT.RELOADING).length, 2);
});

test('a reload stops at a replacement that dies before it listens, or outlives the start timeout; no replacement for it', async (t) => {
  const h = harness(t);
  const [a] = h.startReady();
  h.supervisor.onHangup();
  h.die(h.forked[2], 1);
  await h.settle();
  assert.deepEqual([h.lastOf(EVENT.RELOAD_FAILED).worker, h.lastOf(EVENT.RELOAD_FAILED).reason], [a.process.pid, 'exited with code 1']);
  assert.deepEqual(a.sent, []);
  assert.ok(!h.events().includes(EVENT.RELOADED));
  assert.equal(h.forked.length, 3, 'the dead replacement is not replaced');

  h.supervisor.onHangup();
  const slow = h.forked[3];
  t.mock.timers.tick(RELOAD_START_TIMEOUT_MS);
  assert.deepEqual(slow.kills, ['SIGKILL']);
  h.die(slow, null, 'SIGKILL');
  await h.settle();
  assert.equal(h.lastOf(EVENT.RELOAD_FAILED).reason, 'killed by SIGKILL');
});

test('a worker past its memory budget is recycled as a reload replaces one; one replacement at a time', async (t) => {
  const h = harness(t);
  const [a, b] = h.startReady();
  h.supervisor.onMessage(a, { type: 'over-budget' });
  assert.equal(h.lastOf(EVENT.WORKER_RECYCLING).worker, a.process.pid);
  assert.equal(h.forked.length, 3);
  h.supervisor.onMessage(b, { type: 'over-budget' }); // asks again later
  h.supervisor.onMessage(a, { type: 'over-budget' });
  assert.equal(h.forked.length, 3);
  h.supervisor.onHangup();
  assert.equal(h.lastOf(EVENT.RELOAD_FAILED).reason, 'a recycling is running');
  h.listen(h.forked[2]);
  await h.settle();
  assert.deepEqual(a.sent, ['shutdown']);
  h.die(a, 0);
  assert.equal(h.lastOf(EVENT.WORKER_RETIRED).by, h.forked[2].process.pid);
  await h.settle();
  h.supervisor.onMessage(b, { type: 'over-budget' });
  assert.equal(h.forked.length, 4, 'the next one is recycled once the first is done');
  assert.equal(h.events().filter((e) => e === EVENT.WORKER_RECYCLING).length, 2);
});

test('a stop during a reload ends it; the replacement is told to drain', async (t) => {
  const h = harness(t);
  const [a, b] = h.startReady();
  h.supervisor.onHangup();
  const a2 = h.forked[2];
  h.supervisor.onStopSignal('SIGTERM');
  assert.deepEqual(a2.kills, ['SIGTERM'], 'not listening yet: SIGTERM as well');
  h.listen(a2);
  await h.settle();
  assert.deepEqual(a.sent, ['shutdown']);
  for (const w of [a, b, a2]) h.die(w, 0);
  await h.settle();
  assert.deepEqual(h.exits, [0]);
  assert.ok(!h.events().includes(EVENT.RELOADED));
  assert.ok(!h.events().includes(EVENT.RELOAD_FAILED));
});

test('a worker that dies during a reload, before its turn, is replaced by the restart policy and skipped', async (t) => {
  const h = harness(t);
  const [a, b] = h.startReady();
  h.supervisor.onHangup();
  const a2 = h.forked[2];
  h.die(b, 1);
  assert.equal(h.lastOf(EVENT.WORKER_REPLACED).worker, b.process.pid);
  assert.equal(h.forked.length, 4);
  h.listen(a2, h.forked[3]);
  await h.settle();
  h.die(a, 0);
  await h.settle();
  assert.deepEqual(h.lastOf(EVENT.RELOADED).workers, [a2.process.pid]);
  assert.equal(h.forked.length, 4);
});
