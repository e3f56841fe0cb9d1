// A stop at any moment of the server's start: SIGTERM or SIGINT from 0 to 1000 ms after `node server` is spawned
// lands before Node runs any of its code, while the primary's modules load, while the admin endpoint opens, while
// the workers fork and while they listen. Whatever the moment, the primary and every worker are gone within the
// drain time and nothing listens on the server's ports. A signal that came while the primary's modules were being
// evaluated was once lost (server/index.js dropped its early handlers before runPrimary set its own, and libuv
// drops a signal whose last listener goes before the signal is read): the primary then served on.
// And a SIGHUP (a reload) while the primary's start runs, before runPrimary: once fatal (Node's default action), now
// ignored with a warning.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { EVENT } from '../../server/events.js';
import { eventually, listeningPorts } from '../helpers/proc.js';
import { freePort, ROOT } from '../helpers/server.js';

const DRAIN_MS = 1000;
// The primary and its workers must be gone this long after the signal (docs/server.md: exit 0 within the drain time).
const BOUND_MS = DRAIN_MS + 2000;
// Dense over the primary's start (Node's own start-up, its modules, the admin endpoint, the forks: within about
// 200 ms on a quiet machine, where a lost signal was seen from 20 to 60 ms), sparse over the workers' start and
// listening (fastify and grpc-js load for some 0.5 to 1 s on a shared 2-core machine).
const DELAYS_MS = [...Array.from({ length: 21 }, (_, i) => i * 10), 300, 450, 700, 1000];
// Every process of a run carries this in its environment (workers inherit it): found even once orphaned.
const TAG = 'JVGB_EARLY_SIGNAL_RUN';

/** Pids of a process's children (/proc/<pid>/task/<pid>/children). */
const childrenOf = (pid) => {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
  } catch {
    return []; // gone
  }
};

/** Pids of the live (not zombie) processes whose environment holds TAG=run. */
const processesOf = (run) => readdirSync('/proc').filter((d) => /^\d+$/.test(d)).map(Number).filter((pid) => {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    if (stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) === 'Z') return false;
    return readFileSync(`/proc/${pid}/environ`, 'latin1').split('\0').includes(`${TAG}=${run}`);
  } catch {
    return false; // gone meanwhile, or not ours to read
  }
});

for (const signal of ['SIGTERM', 'SIGINT']) {
  test(`${signal} 0 to 1000 ms after the start: the primary and its workers are gone within the drain time, ports free`, async (t) => {
    const outcomes = { exit0: 0, exit0WithWorkers: 0, exit0WithWorkersListening: 0, killedBeforeHandlers: 0 };
    for (const delayMs of DELAYS_MS) {
      const run = `${process.pid}-${signal}-${delayMs}`;
      const ports = { HTTP_PORT: await freePort(), GRPC_PORT: await freePort(), ADMIN_PORT: await freePort() };
      const proc = spawn(process.execPath, ['server'], {
        cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'],
        env: { ...process.env, MODE: 'both', WORKERS: '2', HOST: '127.0.0.1', SHUTDOWN_TIMEOUT_MS: String(DRAIN_MS),
          [TAG]: run, ...Object.fromEntries(Object.entries(ports).map(([k, v]) => [k, String(v)])) },
      });
      let output = '';
      proc.stdout.on('data', (chunk) => { output += chunk; });
      proc.stderr.on('data', (chunk) => { output += chunk; });
      const exited = once(proc, 'exit');
      try {
        await sleep(delayMs);
        // Forks come only after the primary set its handlers: a primary with workers must end as a stop ends, exit 0.
        const workers = childrenOf(proc.pid);
        const listening = output.split(`"event":"${EVENT.WORKER_LISTENING}"`).length - 1;
        const signalledAt = Date.now();
        proc.kill(signal);
        const about = `${signal} ${delayMs} ms after the spawn, ${workers.length} worker(s) forked by then`;
        const result = await Promise.race([exited, sleep(BOUND_MS).then(() => null)]);
        assert.ok(result, `${about}: the primary still runs ${BOUND_MS} ms later:\n${output}`);
        const [code, endedBy] = result;
        if (code === 0) {
          outcomes.exit0++;
          if (workers.length) outcomes.exit0WithWorkers++;
          if (listening) outcomes.exit0WithWorkersListening++;
        } else {
          // Before Node runs index.js nothing can handle the signal: the process dies of it, having forked nothing.
          assert.deepEqual([code, endedBy, workers.length], [null, signal, 0], `${about}: exit ${code} (${endedBy}):\n${output}`);
          outcomes.killedBeforeHandlers++;
        }
        const deadline = signalledAt + BOUND_MS;
        while (processesOf(run).length && Date.now() < deadline) await sleep(20);
        assert.deepEqual(processesOf(run), [], `${about}: processes left ${Date.now() - signalledAt} ms after the signal`);
        const open = listeningPorts();
        assert.deepEqual(Object.entries(ports).filter(([, port]) => open.has(port)), [], `${about}: still listening`);
      } finally {
        if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGKILL');
        for (const pid of processesOf(run)) process.kill(pid, 'SIGKILL'); // none left behind by a failure
      }
    }
    t.diagnostic(JSON.stringify(outcomes));
    // The range covered the start: some signals found workers forked, or the race above was not run.
    assert.ok(outcomes.exit0WithWorkers > 0, `no signal came after the workers forked: ${JSON.stringify(outcomes)}`);
  });
}

// The window before runPrimary, held open 1 s by test/fixtures/slow-start.js as a slow start (a large schema) would.
const SLOW_START_MS = 1000;

test('SIGHUP while the primary\'s start runs, before runPrimary: ignored with a warning, the server starts and serves', async () => {
  for (let round = 1; round <= 2; round++) {
    const run = `${process.pid}-SIGHUP-${round}`;
    const ports = { HTTP_PORT: await freePort(), GRPC_PORT: await freePort() };
    const proc = spawn(process.execPath, ['server'], {
      cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, MODE: 'both', WORKERS: '1', HOST: '127.0.0.1', SHUTDOWN_TIMEOUT_MS: String(DRAIN_MS),
        NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --import=${path.join(ROOT, 'test/fixtures/slow-start.js')}`,
        SLOW_START_MS: String(SLOW_START_MS), [TAG]: run, ...Object.fromEntries(Object.entries(ports).map(([k, v]) => [k, String(v)])) },
    });
    let output = '';
    proc.stdout.on('data', (chunk) => { output += chunk; });
    proc.stderr.on('data', (chunk) => { output += chunk; });
    const exited = once(proc, 'exit');
    const ended = () => proc.exitCode !== null || proc.signalCode !== null;
    try {
      assert.ok(await eventually(() => output.includes('slow-start: index.js runs') || ended(), 10000), `round ${round}: no start:\n${output}`);
      proc.kill('SIGHUP');
      await eventually(() => output.includes(`"event":"${EVENT.READY}"`) || ended(), 20000);
      assert.ok(!ended(), `round ${round}: the primary ended (${proc.exitCode ?? proc.signalCode}) after the early SIGHUP:\n${output}`);
      assert.match(output, new RegExp(`"event":"${EVENT.READY}"`), `round ${round}: not ready in 20 s:\n${output}`);
      assert.match(output, new RegExp(`"event":"${EVENT.RELOAD_FAILED}","reason":"not ready yet"`), `round ${round}: no warning:\n${output}`);
      assert.equal((await fetch(`http://127.0.0.1:${ports.HTTP_PORT}/health`)).status, 200);
      proc.kill('SIGTERM');
      const result = await Promise.race([exited, sleep(BOUND_MS).then(() => null)]);
      assert.deepEqual(result, [0, null], `round ${round}: the stop after:\n${output}`);
    } finally {
      if (!ended()) proc.kill('SIGKILL');
      for (const pid of processesOf(run)) process.kill(pid, 'SIGKILL');
    }
  }
});
