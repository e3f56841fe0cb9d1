// The cluster through crashes and stops: a dead worker is replaced fast, a crash loop
// ends the server, a signal drains in-flight requests, and no worker outlives its primary.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { pathToFileURL } from 'node:url';
import { RESTART_DEFAULTS } from '../../server/restart-policy.js';
import { grpcGetUser, partialGrpcCall, partialHttpRequest, tcpExchange } from '../helpers/clients.js';
import { ROOT, freePort, isAlive, startServer, waitGone } from '../helpers/server.js';
import { EVENT } from '../../server/events.js';

// Time for the workers to read a partial request before the test signals: loopback delivers
// in microseconds, and a request not yet read when the drain starts would count as not in flight.
const SETTLE_MS = 300;

// What the restart policy decides is asserted (a first quick death is replaced at once, delayMs 0), not how fast the
// replacement starts: a speed, which a loaded machine moves (1,004 ms in CI's fresh container, 2026-11-28, against
// 900 ms here), is the benchmark's (test/manual/respawn-ab.js, the soak report's respawn row). The bound only says
// that it listens.
test('a worker killed with SIGKILL is replaced at once, and the primary logs why', async () => {
  const server = await startServer({ MODE: 'both' });
  try {
    const [victim] = server.workerPids();
    const from = server.lines.length;
    const killedAt = Date.now();
    process.kill(victim, 'SIGKILL');
    const replacement = await server.waitForLine((l) => l.event === EVENT.WORKER_LISTENING && l.pid !== victim, { from });
    const tookMs = replacement.at - killedAt;
    assert.ok(tookMs < 5000, `the replacement listened ${tookMs} ms after the kill`);

    const died = await server.waitForLine((l) => l.event === EVENT.WORKER_REPLACED, { from });
    assert.equal(died.delayMs, 0, 'a first quick death is replaced at once, with no back-off');
    assert.equal(died.worker, victim);
    assert.equal(died.signal, 'SIGKILL');
    assert.equal(died.reason, 'killed by SIGKILL');
    assert.equal(died.pid, server.proc.pid, 'the primary logged it');
    assert.equal(server.lines.filter((l) => l.event === EVENT.READY).length, 1, 'ready is logged once');
    assert.equal((await (await fetch(`http://127.0.0.1:${server.httpPort}/`)).json()).workerPid, replacement.pid);
    assert.equal((await grpcGetUser(server.grpcPort)).workerPid, replacement.pid);
  } finally {
    assert.equal(await server.stop(), 0);
  }
});

test('workers that die again and again at start are replaced after growing delays, then the primary exits 1', async () => {
  const fixture = pathToFileURL(`${ROOT}test/fixtures/crash-workers.js`).href;
  const server = await startServer({ MODE: 'http', NODE_OPTIONS: `--import=${fixture}` });
  try {
    const [code] = await Promise.race([server.exited, sleep(15000).then(() => ['still running after 15 s'])]);
    assert.equal(code, 1);
    const deaths = server.lines.filter((l) => l.event === EVENT.WORKER_REPLACED);
    const { maxQuickDeaths, firstDelayMs } = RESTART_DEFAULTS;
    // The first death may be a one-off: replaced at once; then the delay doubles.
    assert.deepEqual(deaths.map((l) => l.delayMs), [0, firstDelayMs, firstDelayMs * 2, firstDelayMs * 4]);
    assert.deepEqual(deaths.map((l) => l.quickDeaths), [1, 2, 3, 4]);
    for (let i = 1; i < deaths.length; i++) {
      const gap = deaths[i].time - deaths[i - 1].time;
      assert.ok(gap >= deaths[i - 1].delayMs, `death ${i + 1} came ${gap} ms after death ${i}, inside its ${deaths[i - 1].delayMs} ms delay`);
    }
    // Why: the uncaught exception's message, from the worker through the primary.
    assert.equal(deaths[0].reason, 'injected crash after listening');
    assert.ok(server.lines.some((l) => l.event === EVENT.UNCAUGHT_EXCEPTION && l.err?.message === 'injected crash after listening'));
    assert.equal(deaths[1].reason, 'exited with code 1');
    const fatal = server.lines.find((l) => l.event === EVENT.GAVE_UP);
    assert.equal(fatal?.level, 60, 'logged as fatal');
    assert.equal(fatal.pid, server.proc.pid, 'by the primary');
    assert.match(fatal.msg, new RegExp(`^worker died ${maxQuickDeaths} times in a row within \\d+ ms of its start; giving up$`));
    assert.equal(fatal.quickDeaths, maxQuickDeaths);
    assert.equal(server.lines.filter((l) => l.event === EVENT.WORKER_LISTENING).length, 1, 'only the first worker ever listened');
  } finally {
    await server.kill();
  }
});

test('SIGTERM drains: requests in flight on both protocols are answered, new connections are refused, all exit 0', async () => {
  const server = await startServer({ MODE: 'both', WORKERS: '2' });
  const workers = server.workerPids();
  try {
    const httpCalls = Array.from({ length: 20 }, () => partialHttpRequest(server.httpPort, '/'));
    const grpcCalls = Array.from({ length: 4 }, () => partialGrpcCall(server.grpcPort));
    await sleep(SETTLE_MS);
    const from = server.lines.length;
    server.proc.kill('SIGTERM');
    for (const pid of workers) await server.waitForLine((l) => l.event === EVENT.DRAINING && l.pid === pid, { from });

    // Stopped accepting: the primary closes the shared port once every worker closed its listener.
    let refused;
    for (let i = 0; i < 50 && !refused; i++) {
      refused = (await tcpExchange(server.httpPort, [], { timeoutMs: 200 })).error === 'ECONNREFUSED';
      if (!refused) await sleep(20);
    }
    assert.ok(refused, 'the HTTP port still accepts connections during the drain');

    const httpAnswers = await Promise.all(httpCalls.map((c) => c.finish()));
    for (const answer of httpAnswers) {
      assert.match(answer, /^HTTP\/1\.1 200 OK\r\n/);
      assert.match(answer, /\r\nconnection: close\r\n/i, 'a draining server ends keep-alive');
    }
    const grpcAnswers = await Promise.all(grpcCalls.map((c) => c.finish()));
    for (const { grpcStatus, user } of grpcAnswers) {
      assert.equal(grpcStatus, '0');
      assert.ok(workers.includes(user.workerPid));
    }
    const [code] = await server.exited;
    assert.equal(code, 0);
    assert.deepEqual(await waitGone(workers, 3000), []);
    assert.equal(server.lines.filter((l) => l.event === EVENT.WORKER_STOPPED).length, 2);
    assert.ok(!server.lines.some((l) => l.event === EVENT.DRAIN_TIMED_OUT));
  } finally {
    await server.stop();
  }
});

test('a drain that in-flight requests never finish ends at SHUTDOWN_TIMEOUT_MS, and the primary still exits 0', async () => {
  const server = await startServer({ MODE: 'both', SHUTDOWN_TIMEOUT_MS: '1000' });
  const grpcCall = partialGrpcCall(server.grpcPort);
  try {
    const stuck = partialHttpRequest(server.httpPort, '/');
    const stuckClosed = new Promise((resolve) => stuck.socket.on('close', resolve));
    await sleep(SETTLE_MS);
    const signalledAt = Date.now();
    server.proc.kill('SIGTERM');
    const [code] = await server.exited;
    const tookMs = Date.now() - signalledAt;
    assert.equal(code, 0);
    assert.ok(tookMs >= 1000 && tookMs < 4000, `stopped ${tookMs} ms after SIGTERM`);
    assert.ok(server.lines.some((l) => l.event === EVENT.DRAIN_TIMED_OUT && l.timeoutMs === 1000));
    await stuckClosed;
  } finally {
    grpcCall.close();
    await server.stop();
  }
});

test('SIGINT stops the server like SIGTERM: exit 0 and no worker left', async () => {
  const server = await startServer({ MODE: 'both', WORKERS: '2' });
  const workers = server.workerPids();
  try {
    server.proc.kill('SIGINT');
    const [code] = await server.exited;
    assert.equal(code, 0);
    assert.deepEqual(await waitGone(workers, 3000), []);
  } finally {
    await server.stop();
  }
});

test('no worker outlives a primary killed with SIGKILL by more than 3 s', async () => {
  const server = await startServer({ MODE: 'both', WORKERS: '2' });
  const workers = server.workerPids();
  try {
    assert.equal(workers.length, 2);
    assert.ok(workers.every(isAlive));
    // A request in flight must not keep a worker alive either.
    const inFlight = partialHttpRequest(server.httpPort, '/');
    await sleep(SETTLE_MS);
    const killedAt = Date.now();
    server.proc.kill('SIGKILL');
    await server.exited;
    assert.deepEqual(await waitGone(workers, 3000 - (Date.now() - killedAt)), [], 'workers still alive 3 s after the primary died');
    inFlight.socket.destroy();
  } finally {
    await server.kill();
  }
});

/** Pids of a process's children (/proc/<pid>/task/<pid>/children), for checking none is left. */
const childrenOf = (pid) => {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
  } catch {
    return [];
  }
};

// Issue 11: a stop that comes while a replacement worker is starting once lost its message, and the
// primary hung until its kill timer (exit 1 at SHUTDOWN_TIMEOUT_MS + 5 s). Each delay lands the signal
// at another point of the fork, the replacement's start-up or its listening.
const DRAIN_MS = 3000;
for (const delayMs of [0, 10, 30, 60, 100, 250]) {
  test(`SIGTERM ${delayMs} ms after a worker is killed: exit 0 within the drain time, no worker left`, async () => {
    const server = await startServer({ MODE: 'http', WORKERS: '2', SHUTDOWN_TIMEOUT_MS: String(DRAIN_MS) });
    try {
      process.kill(server.workerPids()[0], 'SIGKILL');
      await sleep(delayMs);
      const workers = childrenOf(server.proc.pid);
      const signalledAt = Date.now();
      server.proc.kill('SIGTERM');
      const [code] = await Promise.race([server.exited, sleep(DRAIN_MS + 2000).then(() => ['still running'])]);
      assert.equal(code, 0, `exit after ${Date.now() - signalledAt} ms`);
      assert.ok(Date.now() - signalledAt < DRAIN_MS, `took ${Date.now() - signalledAt} ms`);
      assert.deepEqual(await waitGone(workers, 1000), []);
    } finally {
      await server.kill();
    }
  });
}

test('SIGTERM during the back-off delay before a replacement: nothing is forked, exit 0 at once', async () => {
  const server = await startServer({ MODE: 'http', WORKERS: '2', SHUTDOWN_TIMEOUT_MS: String(DRAIN_MS) });
  try {
    // The first quick death is replaced at once; the second waits firstDelayMs.
    const from = server.lines.length;
    const [victim] = server.workerPids();
    process.kill(victim, 'SIGKILL');
    const replacement = await server.waitForLine((l) => l.event === EVENT.WORKER_LISTENING && l.pid !== victim, { from });
    process.kill(replacement.pid, 'SIGKILL');
    const delayed = await server.waitForLine((l) => l.event === EVENT.WORKER_REPLACED && l.worker === replacement.pid, { from });
    assert.equal(delayed.delayMs, RESTART_DEFAULTS.firstDelayMs);
    const signalledAt = Date.now();
    server.proc.kill('SIGTERM');
    const [code] = await server.exited;
    assert.equal(code, 0);
    assert.ok(Date.now() - signalledAt < DRAIN_MS, `took ${Date.now() - signalledAt} ms`);
    const forkedAfter = server.lines.filter((l) => l.event === EVENT.WORKER_LISTENING && l.time >= delayed.time);
    assert.deepEqual(forkedAfter, [], 'no worker started after the signal');
  } finally {
    await server.kill();
  }
});

test('SIGTERM while the workers are still starting: exit 0, no worker left', async () => {
  // Timed from the first worker's fork (before it, Node itself may still be starting up, and a
  // process that has no handler yet dies of the signal).
  for (const delayMs of [0, 20, 80, 200]) {
    const proc = spawn(process.execPath, ['server'], {
      cwd: ROOT, env: { ...process.env, MODE: 'both', WORKERS: '2', HOST: '127.0.0.1', HTTP_PORT: String(await freePort()),
        GRPC_PORT: String(await freePort()), SHUTDOWN_TIMEOUT_MS: String(DRAIN_MS) }, stdio: 'ignore',
    });
    const exited = once(proc, 'exit');
    try {
      const forkedBy = Date.now() + 5000;
      while (childrenOf(proc.pid).length === 0 && Date.now() < forkedBy) await sleep(2);
      await sleep(delayMs);
      const workers = childrenOf(proc.pid);
      assert.ok(workers.length > 0, 'a worker was forked');
      const signalledAt = Date.now();
      proc.kill('SIGTERM');
      const [code] = await Promise.race([exited, sleep(DRAIN_MS + 2000).then(() => ['still running'])]);
      assert.equal(code, 0, `SIGTERM ${delayMs} ms after the first fork: exit ${code} after ${Date.now() - signalledAt} ms`);
      assert.deepEqual(await waitGone(workers, 1000), []);
    } finally {
      if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGKILL');
    }
  }
});
