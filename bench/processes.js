// Child processes of the main job and the tests: the server (until it logs
// `ready`) and k6 (with its CPU use read from /proc), optionally pinned with taskset.
import { execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import net from 'node:net';
import { fileURLToPath } from 'node:url';

/** The repository's root folder. */
export const ROOT = fileURLToPath(new URL('..', import.meta.url));

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
 * Spawns `node server` and resolves once the primary logs `ready`.
 * @param {{env?: Record<string, string>, cpus?: string, readyTimeoutMs?: number}} [options]
 *   env: extra environment (MODE, WORKERS, ...); ports default to free ones on 127.0.0.1
 * @returns {Promise<{proc: import('node:child_process').ChildProcess, httpPort: number, grpcPort: number,
 *   lines: object[], output: () => string, stop: () => Promise<number|null>}>}
 *   `lines` collects the JSON log lines; `stop` sends SIGTERM and resolves with the exit code.
 * @throws {Error} with the server's output when it exits or is not ready in time
 */
export async function startServer({ env = {}, cpus, readyTimeoutMs = 15000 } = {}) {
  const httpPort = Number(env.HTTP_PORT ?? await freePort());
  const grpcPort = Number(env.GRPC_PORT ?? await freePort());
  const [command, args] = pinned(cpus, process.execPath, ['server']);
  const proc = spawn(command, args, {
    cwd: ROOT,
    env: { ...process.env, HOST: '127.0.0.1', WORKERS: '1', ...env, HTTP_PORT: String(httpPort), GRPC_PORT: String(grpcPort) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines = [];
  let output = '';
  const exited = once(proc, 'exit');
  await new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      proc.kill('SIGKILL');
      reject(new Error(`server not ready in ${readyTimeoutMs} ms:\n${output}`));
    }, readyTimeoutMs);
    let buffered = '';
    proc.stdout.on('data', (chunk) => {
      output += chunk;
      buffered += chunk;
      let nl;
      while ((nl = buffered.indexOf('\n')) >= 0) {
        const line = buffered.slice(0, nl);
        buffered = buffered.slice(nl + 1);
        try { lines.push(JSON.parse(line)); } catch { continue; }
        if (lines.at(-1).msg === 'ready') { clearTimeout(timer); resolve(); }
      }
    });
    proc.stderr.on('data', (chunk) => { output += chunk; });
    exited.then(([code]) => { clearTimeout(timer); reject(new Error(`server exited with ${code} before ready:\n${output}`)); });
  });
  const stop = async () => {
    if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGTERM');
    const [code] = await exited;
    return code;
  };
  return { proc, httpPort, grpcPort, lines, stop, output: () => output };
}

let clockTicks;
/** CPU seconds (user + system) a live process has used so far, from /proc/<pid>/stat. */
function cpuSecondsOf(pid) {
  clockTicks ??= Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }));
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // Fields after the command name, which is in parentheses and may hold spaces; utime and stime are fields 14 and 15.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / clockTicks;
}

/**
 * Runs k6 to completion and measures its CPU use over the run, sampling /proc
 * every 250 ms after the first second (k6's start-up is left out).
 * @param {{k6: string, args: string[], env?: Record<string, string>, cpus?: string, coreCount: number,
 *   quiet?: boolean}} options coreCount: cores k6 may use (GOMAXPROCS is set to it)
 * @returns {Promise<{code: number|null, output: string, cpu: {seconds: number, wall_s: number, utilization: number}|null}>}
 *   utilization: CPU seconds / (wall seconds x coreCount), 0..1; null when the run was too short to sample
 */
export async function runK6({ k6, args, env = {}, cpus, coreCount, quiet = false }) {
  const [command, argv] = pinned(cpus, k6, ['run', ...args]);
  const proc = spawn(command, argv, {
    cwd: ROOT,
    env: { ...process.env, GOMAXPROCS: String(coreCount), ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const keep = (chunk) => { output += chunk; };
  proc.stdout.on('data', quiet ? keep : (c) => { keep(c); process.stdout.write(c); });
  proc.stderr.on('data', quiet ? keep : (c) => { keep(c); process.stderr.write(c); });
  const exited = once(proc, 'exit');
  const samples = [];
  const sample = () => {
    try { samples.push([performance.now(), cpuSecondsOf(proc.pid)]); } catch { /* exited between ticks */ }
  };
  let timer;
  const first = setTimeout(() => { sample(); timer = setInterval(sample, 250); }, 1000);
  const [code] = await exited;
  clearTimeout(first);
  clearInterval(timer);
  let cpu = null;
  if (samples.length >= 2) {
    const [[t0, c0], [t1, c1]] = [samples[0], samples.at(-1)];
    const wall = (t1 - t0) / 1000;
    cpu = { seconds: c1 - c0, wall_s: wall, utilization: (c1 - c0) / (wall * coreCount) };
  }
  return { code, output, cpu };
}
