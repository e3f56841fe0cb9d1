// The one k6 runner of the jobs and the tests: `k6 run` to completion, its output collected, its CPU use over the run
// read from /proc. The script sees only what -e gives it (k6's command line: bench/k6/command.js).
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import os from 'node:os';
import { cpuSecondsOf, pinned, watchChild } from '../processes.js';
import { ROOT } from '../root.js';

/**
 * k6's CPU per iteration over its sampled window: what one iteration cost k6, whoever else shared its cores.
 * @param {{seconds: number, wall_s: number}|null} cpu runK6's `cpu` (null: not read)
 * @param {number} rate the run's iterations per second (its summary)
 * @returns {number|null} CPU seconds per iteration; null when the CPU was not read
 */
export const cpuPerIteration = (cpu, rate) => (cpu ? cpu.seconds / (rate * cpu.wall_s) : null);

/**
 * Runs `k6 run` to completion and measures its CPU use over the run, sampling /proc
 * every 250 ms after the first second (k6's start-up is left out). The one k6 runner of
 * the jobs and the tests: the script sees only what -e gives it.
 * @param {{k6: string, args: string[], env?: Record<string, string>, cpus?: string, coreCount?: number,
 *   quiet?: boolean, timeoutMs?: number}} options coreCount: cores k6 may use (GOMAXPROCS is set to it;
 *   default every core); quiet: k6's output only collected, not shown; timeoutMs: k6 is killed (SIGKILL, by its pid)
 *   if it runs longer, so that no load loop runs unbounded
 * @returns {Promise<{code: number|null, output: string, cpu: {seconds: number, wall_s: number, utilization: number}|null,
 *   timedOut: boolean}>} utilization: CPU seconds / (wall seconds x coreCount), 0..1; null when the run was too
 *   short to sample; timedOut: killed at timeoutMs
 */
export async function runK6({ k6, args, env = {}, cpus, coreCount = os.availableParallelism(), quiet = false, timeoutMs }) {
  // The script sees only what -e gives it: the main job's own environment (RATE, DURATION, ...) must not leak into __ENV.
  const [command, argv] = pinned(cpus, k6, ['run', '--include-system-env-vars=false', ...args]);
  const proc = spawn(command, argv, {
    cwd: ROOT,
    env: { ...process.env, GOMAXPROCS: String(coreCount), ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  watchChild(proc);
  let output = '';
  const keep = (chunk) => { output += chunk; };
  proc.stdout.on('data', quiet ? keep : (c) => { keep(c); process.stdout.write(c); });
  proc.stderr.on('data', quiet ? keep : (c) => { keep(c); process.stderr.write(c); });
  const exited = once(proc, 'exit');
  let timedOut = false;
  const limit = timeoutMs && setTimeout(() => { timedOut = true; proc.kill('SIGKILL'); }, timeoutMs);
  const samples = [];
  const sample = () => {
    try { samples.push([performance.now(), cpuSecondsOf(proc.pid)]); } catch { /* exited between ticks */ }
  };
  let timer;
  const first = setTimeout(() => { sample(); timer = setInterval(sample, 250); }, 1000);
  const [code] = await exited;
  clearTimeout(limit);
  clearTimeout(first);
  clearInterval(timer);
  let cpu = null;
  if (samples.length >= 2) {
    const [[t0, c0], [t1, c1]] = [samples[0], samples.at(-1)];
    const wall = (t1 - t0) / 1000;
    cpu = { seconds: c1 - c0, wall_s: wall, utilization: (c1 - c0) / (wall * coreCount) };
  }
  return { code, output, cpu, timedOut };
}
