// A job stopped by a signal (a user's kill, a CI timeout) stops the servers it started: they would not end by
// themselves, and an orphaned server holds a core through every later run. Nor does it leave its scratch folder behind.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { test } from 'node:test';
import { k6Bin } from '../helpers/k6.js';
import { ROOT } from '../helpers/server.js';

/** The pids of a process's children, from each process's parent in /proc/<pid>/stat (Linux). */
const childrenOf = (pid) => readdirSync('/proc').filter((d) => /^\d+$/.test(d)).filter((d) => {
  try {
    const stat = readFileSync(`/proc/${d}/stat`, 'utf8');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === pid;
  } catch { return false; } // gone meanwhile
}).map(Number);
/** Running, not a zombie: where nothing reaps orphans (a container whose pid 1 is a shell), a stopped server stays a zombie. */
const running = (pid) => {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch { return false; } // gone
};
const cmdline = (pid) => { try { return readFileSync(`/proc/${pid}/cmdline`, 'latin1').split('\0').filter(Boolean).join(' '); } catch { return ''; } };

for (const signal of ['SIGTERM', 'SIGINT']) {
  test(`${signal} to a running job stops the servers it started and removes its scratch, then the job ends by the signal`, async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'interrupt-'));
    // The job's temporary folder (its scratch: summaries, warm-ups) in one of the test's own.
    const tmp = path.join(dir, 'tmp');
    mkdirSync(tmp);
    // A long measured run, so the signal comes while the server serves k6; no pinning, to find it as the job's child.
    const job = spawn(process.execPath, ['bench/cli.js', 'run'], {
      cwd: ROOT, stdio: ['ignore', 'ignore', 'pipe'],
      env: { ...process.env, K6_BIN: k6Bin(), DURATION: '60s', WARMUP: '1s', VUS: '2', REPEATS: '1', CAPACITY: '0', CALIBRATE: '0', RESULTS_DIR: dir, TMPDIR: tmp },
    });
    let stderr = '';
    job.stderr.on('data', (chunk) => { stderr += chunk; });
    let servers = [];
    let workers = [];
    let k6 = [];
    try {
      // The signal comes while k6 loads the server (the measured run, after the 1 s warm-up), as a user's kill would.
      const deadline = Date.now() + 30000;
      while (!(servers.length && k6.length) && Date.now() < deadline && job.exitCode === null) {
        await sleep(200);
        // The server is the job's child, or taskset's that exec'd into it: either way its command line ends in `server`.
        servers = childrenOf(job.pid).filter((pid) => / server$/.test(cmdline(pid)));
        k6 = childrenOf(job.pid).filter((pid) => / --duration 60s .*\.js$/.test(cmdline(pid)));
      }
      assert.ok(servers.length && k6.length, `no server and measured k6 run within 30 s: ${stderr}`);
      await sleep(1000);
      workers = servers.flatMap(childrenOf);
      assert.ok(workers.length, 'the server has its worker');
      job.kill(signal);
      const [code, endedBy] = await once(job, 'exit');
      assert.equal(endedBy, signal, `the job ended by its signal (code ${code})`);
      // The server drains for at most SHUTDOWN_TIMEOUT_MS (10 s by default); k6 stops at once.
      const gone = Date.now() + 15000;
      while ([...servers, ...workers, ...k6].some(running) && Date.now() < gone) await sleep(100);
      assert.deepEqual([...servers, ...workers].filter(running), [], 'every server process stopped');
      assert.deepEqual(k6.filter(running), [], 'k6 stopped');
      assert.deepEqual(readdirSync(tmp), [], 'the job removed its scratch');
    } finally {
      if (job.exitCode === null && job.signalCode === null) job.kill('SIGKILL');
      for (const pid of [...servers, ...workers, ...k6].filter(running)) process.kill(pid, 'SIGKILL'); // none left behind by a failure
      await rm(dir, { recursive: true, force: true });
    }
  });
}
