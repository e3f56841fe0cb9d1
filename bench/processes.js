// Child processes of the main job and the tests: the server (until it logs `ready`), optionally pinned with taskset,
// the CPU use of a process read from /proc, and the cleanup on a stop signal; k6 runs through bench/k6/runner.js on these.
import { execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import fs, { readFileSync } from 'node:fs';
import net from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { EVENT } from '../server/events.js';
import { LISTENERS, portEnv } from '../server/listeners.js';
import { BenchError } from './errors.js';
import { ROOT } from './root.js';

export { ROOT };

// Ports are picked outside the kernel's ephemeral range: an outgoing connection (k6's, a
// test's) takes its source port from that range and can take a port between the pick and the
// server's bind (CI saw ERR_PORT_IN_USE so). Each pick is also reserved for this process's
// life by an abstract Unix socket named after the port, which the kernel frees when the
// process ends, even by SIGKILL, so parallel test files and jobs never pick the same one.
export const PORT_CLAIM_PREFIX = '\0json-vs-grpc-bench-port-';
/** @type {Map<number, net.Server>} */
const reserved = new Map();

/**
 * The ports outside the ephemeral range this machine uses for outgoing connections.
 * @param {string} [rangeFile] read for the range (Linux: two numbers, low and high)
 * @returns {Array<[number, number]>} inclusive [low, high] intervals within 16384-65535: below 10000 sit the ports
 *   people give their own services, and from 16384 every port is 5 decimal digits and a 3-byte protobuf varint, so the
 *   payloads (which carry the listener's port) are the same size on every listener
 */
export function listenPortRanges(rangeFile = '/proc/sys/net/ipv4/ip_local_port_range') {
  let low = 32768;
  let high = 60999; // Linux's default ip_local_port_range, where the file cannot be read
  try {
    [low, high] = readFileSync(rangeFile, 'utf8').trim().split(/\s+/).map(Number);
  } catch { /* not Linux: keep the default */ }
  return /** @type {Array<[number, number]>} */ ([[16384, low - 1], [high + 1, 65535]].filter(([a, b]) => b - a >= 255));
}

/**
 * @param {string|net.ListenOptions} where a socket path or port and host
 * @returns {Promise<net.Server|null>} a server listening there, or null when it is taken
 */
async function listenOn(where) {
  const server = net.createServer();
  server.listen(where);
  try {
    await Promise.race([once(server, 'listening'), once(server, 'error').then(([err]) => { throw err; })]);
    return server;
  } catch {
    server.close();
    return null;
  }
}

/**
 * A TCP port free on 127.0.0.1 a moment ago, outside the ephemeral range, and reserved
 * for this process's life so no other caller of this function picks it meanwhile.
 * @returns {Promise<number>}
 * @throws {Error} when 200 random picks found no free port, or the ephemeral range leaves none
 */
export async function freePort() {
  const ranges = listenPortRanges();
  const size = ranges.reduce((n, [a, b]) => n + b - a + 1, 0);
  if (size === 0) throw new Error('no TCP ports outside the ephemeral range (/proc/sys/net/ipv4/ip_local_port_range) to listen on');
  for (let attempt = 0; attempt < 200; attempt += 1) {
    let port = Math.floor(Math.random() * size);
    for (const [low, high] of ranges) {
      if (port <= high - low) { port += low; break; }
      port -= high - low + 1;
    }
    if (reserved.has(port)) continue;
    const claim = process.platform === 'linux' ? await listenOn(`${PORT_CLAIM_PREFIX}${port}`) : net.createServer();
    if (!claim) continue; // another process holds it
    const probe = await listenOn({ port, host: '127.0.0.1', exclusive: true });
    if (!probe) { claim.close(); continue; }
    probe.close();
    await once(probe, 'close');
    claim.unref();
    reserved.set(port, claim);
    return port;
  }
  throw new Error('no free TCP port on 127.0.0.1 outside the ephemeral range after 200 tries');
}

/**
 * Command and arguments, prefixed with `taskset -c <cpus>` when cpus is given.
 * @param {string|undefined} cpus CPU list as taskset reads it, e.g. '0' or '0-2'
 * @param {string} command
 * @param {string[]} args
 * @returns {[string, string[]]}
 */
export function pinned(cpus, command, args) {
  return cpus ? ['taskset', ['-c', cpus, command, ...args]] : [command, args];
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
 * @property {Record<string, number>} ports every listener's port, by name (server/listeners.js)
 * @property {number} httpPort ports.http
 * @property {number} grpcPort ports.grpc
 * @property {object[]} lines every JSON log line so far, primary's and workers', each with `at`
 *   (the test's Date.now() when it arrived)
 * @property {() => string} output everything printed so far, stdout and stderr
 * @property {() => string} stderr what the primary and the workers printed on stderr so far (Node's warnings, a crash)
 * @property {(match: (line: object) => boolean, options?: {timeoutMs?: number, from?: number}) => Promise<object>} waitForLine
 *   resolves with the first line from index `from` (default 0) that matches; rejects after
 *   `timeoutMs` (default 5000) or when the primary exits first, with the output
 * @property {() => number[]} workerPids pids of every worker that logged 'worker listening'
 * @property {() => number[]} pids the primary's pid and workerPids (the pid of the command started: a wrapper such as taskset or
 *   `ip netns exec` execs the server in its place)
 * @property {Promise<[number|null, string|null]>} exited exit code and signal of the primary, once
 *   its output is read (or 500 ms after its exit, if workers still hold the pipe)
 * @property {(options?: {timeoutMs?: number}) => Promise<number|null>} stop SIGTERM to the primary,
 *   SIGKILL past `timeoutMs` (default 15000); then SIGKILLs any worker left; resolves with the exit code
 * @property {() => Promise<void>} kill SIGKILL to the primary and every worker it logged
 */

/** What runs when the job gets SIGINT or SIGTERM, in the order registered, before the job ends by that signal. */
const stopCleanups = new Set();
let handlingSignals = false;
const onSignal = (signal) => {
  process.off('SIGINT', onSignal);
  process.off('SIGTERM', onSignal);
  handlingSignals = false;
  for (const cleanup of stopCleanups) {
    // One cleanup that fails must not keep the others from running, nor the job from ending by its signal.
    try { cleanup(); } catch (err) { console.error(`cleanup on ${signal} failed: ${err.message}`); }
  }
  process.kill(process.pid, signal); // then end as the signal would have
};

/**
 * Runs `cleanup` if this process gets SIGINT or SIGTERM, before it ends by that signal: the one place the jobs and
 * the tests clean up on a signal (the children they started, an emulated link).
 * @param {() => void} cleanup synchronous (the process ends right after it); an error it throws is printed on stderr
 * @returns {() => void} forgets `cleanup`: call it once what it cleans is gone
 */
export function onStopSignal(cleanup) {
  // Once in place the handlers stay, and with nothing left to clean they only end the process: libuv drops a signal
  // caught but not yet read when its last listener goes, and the job would have gone on (as server/index.js once did).
  if (!handlingSignals) {
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
    handlingSignals = true;
  }
  stopCleanups.add(cleanup);
  return () => { stopCleanups.delete(cleanup); };
}

/**
 * A server or k6 run started by this process gets SIGTERM if the job is stopped by a signal before the child exited:
 * a server does not end by itself, and an orphaned k6 (bench/k6/runner.js) would load a stopping server to the end of
 * its duration.
 * @param {import('node:child_process').ChildProcess} proc
 * @returns {void}
 */
export const watchChild = (proc) => {
  const forget = onStopSignal(() => { if (proc.exitCode === null) proc.kill('SIGTERM'); });
  proc.once('exit', forget);
};

/**
 * startServer for the job's passes: its failure a BenchError naming what the server was started for.
 * @param {string} what e.g. `the grpc server`
 * @param {Parameters<typeof startServer>[0]} options as startServer's
 * @returns {Promise<RunningServer>}
 * @throws {BenchError} `<what> did not start: <why>`, the server's output included
 */
export async function launchServer(what, options) {
  try {
    return await startServer(options);
  } catch (err) {
    throw new BenchError(`${what} did not start: ${err.message}`);
  }
}

/**
 * Spawns `node server` (on 127.0.0.1, one worker unless env says otherwise,
 * every listener on a free port unless env sets it) and resolves once the
 * primary has logged `ready` and every worker its `worker listening` line.
 * @param {{env?: Record<string, string>, cpus?: string, readyTimeoutMs?: number, node?: string,
 *   wrap?: (command: string, args: string[]) => [string, string[]]}} [options]
 *   env: extra environment (MODE, WORKERS, COMPRESSION, ...; COMPRESSION is off unless given); cpus: taskset CPU list to pin the cluster to;
 *   node: the node binary the server runs on (default this process's, process.execPath; NODE_VERSIONS gives others);
 *   wrap: runs the (pinned) command through another, e.g. `ip netns exec` (it must exec, keeping the pid)
 * @returns {Promise<RunningServer>}
 * @throws {Error} with the server's output if it exits or is not ready in time
 */
export async function startServer({ env = {}, cpus, readyTimeoutMs = 15000, node = process.execPath, wrap = (c, a) => [c, a] } = {}) {
  /** @type {Record<string, number>} */
  const ports = {};
  for (const [name, { portSetting }] of Object.entries(LISTENERS)) ports[name] = Number(env[portSetting] ?? await freePort());
  const [command, args] = wrap(...pinned(cpus, node, ['server']));
  const proc = spawn(command, args, {
    cwd: ROOT,
    // COMPRESSION off unless env says: the main job's setting of that name must not reach the servers of its other passes.
    env: { ...process.env, HOST: '127.0.0.1', WORKERS: '1', COMPRESSION: 'off', ...env, ...portEnv((name) => ports[name]) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  watchChild(proc);
  const lines = [];
  const waiters = new Set();
  let output = '';
  let errors = '';
  let buffered = '';
  const stdoutEnded = once(proc.stdout, 'end');
  // stdout may still hold lines when 'exit' comes, so `exited` waits for its end too, but
  // not for long: workers that outlive the primary keep it open.
  const exited = once(proc, 'exit').then(async (result) => {
    await Promise.race([stdoutEnded, sleep(500)]);
    return /** @type {[number|null, string|null]} */ (result);
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
  proc.stderr.on('data', (chunk) => { output += chunk; errors += chunk; });

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
  const workerPids = () => [...new Set(lines.filter((l) => l.event === EVENT.WORKER_LISTENING).map((l) => l.pid))];
  const running = () => proc.exitCode === null && proc.signalCode === null;
  const killWorkers = () => { for (const pid of workerPids()) if (isServerProcess(pid)) process.kill(pid, 'SIGKILL'); };

  try {
    await waitForLine((l) => l.event === EVENT.READY, { timeoutMs: readyTimeoutMs });
    // Each process writes its log lines on its own (pino writes asynchronously), so a worker's
    // 'worker listening' can come through the pipe after the primary's 'ready'.
    const workers = Number(env.WORKERS ?? 1);
    await waitForLine(() => workerPids().length >= workers, { timeoutMs: 2000 });
  } catch (err) {
    if (running()) proc.kill('SIGKILL');
    killWorkers();
    throw new Error(`server not ready: ${err.message}`, { cause: err });
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
  return { proc, ports, httpPort: ports.http, grpcPort: ports.grpc, lines, stop, kill, exited, waitForLine, workerPids,
    pids: () => [proc.pid, ...workerPids()], output: () => output, stderr: () => errors };
}

let ticks;
/**
 * Ticks per second of the CPU times in /proc (USER_HZ: `getconf CLK_TCK`, normally 100; proc(5)), read once.
 * @returns {number}
 */
export function clockTicks() {
  ticks ??= Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }));
  return ticks;
}

/**
 * CPU seconds (user + system) a live process has used so far, from /proc/<pid>/stat.
 * @param {number} pid
 * @returns {number} s
 * @throws {Error} when the process is gone
 */
export function cpuSecondsOf(pid) {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // Fields after the command name, which is in parentheses and may hold spaces; utime and stime are fields 14 and 15.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / clockTicks();
}
