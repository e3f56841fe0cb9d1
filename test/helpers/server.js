// Starts the real cluster server on loopback with free ports, for tests.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import fs from 'node:fs';
import net from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/**
 * A TCP port that was free on 127.0.0.1 a moment ago (bound to 0, then released).
 * @returns {Promise<number>}
 */
export async function freePort() {
  const server = net.createServer().listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address();
  server.close();
  await once(server, 'close');
  return port;
}

/**
 * True while a process with this pid exists (signal 0 only checks).
 * @param {number} pid
 * @returns {boolean}
 */
export function isAlive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return err.code === 'EPERM';
  }
}

/**
 * True while `pid` is alive and, where /proc tells, still runs this repo's server
 * (so a pid the system gave to another process since is neither waited for nor killed).
 * @param {number} pid
 * @returns {boolean}
 */
export function isServerProcess(pid) {
  if (!isAlive(pid)) return false;
  try {
    const args = fs.readFileSync(`/proc/${pid}/cmdline`, 'latin1').split('\0');
    return args.includes(`${ROOT}server`) || args.includes('server');
  } catch {
    return !fs.existsSync('/proc/self/cmdline') && isAlive(pid);
  }
}

/**
 * Polls until none of `pids` is a live server process.
 * @param {number[]} pids
 * @param {number} timeoutMs
 * @returns {Promise<number[]>} the pids still alive at the deadline (empty when all are gone)
 */
export async function waitGone(pids, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  while (pids.some(isServerProcess) && Date.now() < deadline) await sleep(20);
  return pids.filter(isServerProcess);
}

/**
 * @typedef {object} RunningServer
 * @property {import('node:child_process').ChildProcess} proc the primary
 * @property {number} httpPort
 * @property {number} grpcPort
 * @property {object[]} lines every JSON log line so far, primary's and workers', each with `at`
 *   (the test's Date.now() when it arrived)
 * @property {() => string} output everything printed so far, stdout and stderr
 * @property {(match: (line: object) => boolean, options?: {timeoutMs?: number, from?: number}) => Promise<object>} waitForLine
 *   resolves with the first line from index `from` (default 0) that matches; rejects after
 *   `timeoutMs` (default 5000) or when the primary exits first, with the output
 * @property {() => number[]} workerPids pids of every worker that logged 'worker listening'
 * @property {Promise<[number|null, string|null]>} exited exit code and signal of the primary, once
 *   its output is read (or 500 ms after its exit, if workers still hold the pipe)
 * @property {(options?: {timeoutMs?: number}) => Promise<number|null>} stop SIGTERM to the primary,
 *   SIGKILL past `timeoutMs` (default 15000); then SIGKILLs any worker left; resolves with the exit code
 * @property {() => Promise<void>} kill SIGKILL to the primary and every worker it logged
 */

/**
 * Spawns `node server` and resolves once the primary has logged `ready` and every worker
 * its `worker listening` line.
 * @param {Record<string, string>} [env] extra environment (MODE, WORKERS, ...)
 * @param {{readyTimeoutMs?: number}} [options]
 * @returns {Promise<RunningServer>}
 *   `lines` collects every JSON log line; `stop` sends SIGTERM and resolves with the exit code.
 * @throws {Error} with the server's output if it exits or is not ready in time
 */
export async function startServer(env = {}, { readyTimeoutMs = 15000 } = {}) {
  const httpPort = await freePort();
  const grpcPort = await freePort();
  const proc = spawn(process.execPath, ['server'], {
    cwd: ROOT,
    env: { ...process.env, HOST: '127.0.0.1', WORKERS: '1', HTTP_PORT: String(httpPort), GRPC_PORT: String(grpcPort), ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines = [];
  const waiters = new Set();
  let output = '';
  let buffered = '';
  const stdoutEnded = once(proc.stdout, 'end');
  // stdout may still hold lines when 'exit' comes, so `exited` waits for its end too, but
  // not for long: workers that outlive the primary keep it open.
  const exited = once(proc, 'exit').then(async (result) => {
    await Promise.race([stdoutEnded, sleep(500)]);
    return result;
  });
  proc.stdout.on('data', (chunk) => {
    output += chunk;
    buffered += chunk;
    let nl;
    while ((nl = buffered.indexOf('\n')) >= 0) {
      const line = buffered.slice(0, nl);
      buffered = buffered.slice(nl + 1);
      try { lines.push({ ...JSON.parse(line), at: Date.now() }); } catch { continue; }
      for (const check of waiters) check();
    }
  });
  proc.stderr.on('data', (chunk) => { output += chunk; });

  const waitForLine = (match, { timeoutMs = 5000, from = 0 } = {}) => new Promise((resolve, reject) => {
    const done = () => { waiters.delete(check); clearTimeout(timer); };
    const check = () => {
      const found = lines.slice(from).find(match);
      if (found) { done(); resolve(found); }
    };
    const timer = setTimeout(() => { done(); reject(new Error(`no such log line in ${timeoutMs} ms:\n${output}`)); }, timeoutMs);
    exited.then(() => {
      check();
      if (waiters.has(check)) { done(); reject(new Error(`server exited before the log line:\n${output}`)); }
    });
    waiters.add(check);
    check();
  });
  const workerPids = () => [...new Set(lines.filter((l) => l.msg === 'worker listening').map((l) => l.pid))];
  const running = () => proc.exitCode === null && proc.signalCode === null;
  const killWorkers = () => { for (const pid of workerPids()) if (isServerProcess(pid)) process.kill(pid, 'SIGKILL'); };

  try {
    await waitForLine((l) => l.msg === 'ready', { timeoutMs: readyTimeoutMs });
    // Each process writes its log lines on its own (pino writes asynchronously), so a worker's
    // 'worker listening' can come through the pipe after the primary's 'ready'.
    const workers = Number(env.WORKERS ?? 1);
    await waitForLine(() => workerPids().length >= workers, { timeoutMs: 2000 });
  } catch (err) {
    if (running()) proc.kill('SIGKILL');
    killWorkers();
    throw new Error(`server not ready: ${err.message}`);
  }

  const stop = async ({ timeoutMs = 15000 } = {}) => {
    if (running()) proc.kill('SIGTERM');
    const timer = setTimeout(() => running() && proc.kill('SIGKILL'), timeoutMs);
    const [code] = await exited;
    clearTimeout(timer);
    // Workers exit on their own once the primary is gone; these are the ones that did not.
    await waitGone(workerPids(), 3000);
    killWorkers();
    return code;
  };
  const kill = async () => {
    if (running()) proc.kill('SIGKILL');
    killWorkers();
    await exited;
  };
  return { proc, httpPort, grpcPort, lines, stop, kill, exited, waitForLine, workerPids, output: () => output };
}
