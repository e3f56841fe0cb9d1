// The workers' V8 CPU profiles over a measured window (PROFILE=1), through each server's admin endpoint
// (server/profiling.js): started, stopped and written to results/ as .cpuprofile (Chrome DevTools and
// speedscope open them); their sums by package are bench/records/profile.js's.
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { BenchError } from '../errors.js';
import { profileTotals, sumTotals } from '../records/profile.js';

/** @typedef {import('../records/profile.js').ProfileTotals} ProfileTotals */

/** POSTs to an admin endpoint's profile path; the parsed body, or null for 204. */
async function post(admin, what) {
  const url = `http://${admin}/profile/${what}`;
  let res;
  try {
    res = await fetch(url, { method: 'POST', signal: AbortSignal.timeout(30000) });
  } catch (err) {
    throw new BenchError(`the server's profiler at ${url} did not answer: ${err.cause?.code ?? err.message}`);
  }
  const text = await res.text();
  if (res.status >= 300) throw new BenchError(`the server's profiler at ${url} answered ${res.status}: ${text.slice(0, 300)}`);
  return text ? JSON.parse(text) : null;
}

/**
 * Starts the workers' CPU profiles of every admin endpoint (one per server or replica).
 * @param {string[]} admins host:port of each admin endpoint
 * @returns {Promise<void>}
 * @throws {BenchError} when one does not start
 */
export async function startProfiles(admins) {
  await Promise.all(admins.map((admin) => post(admin, 'start')));
}

/** How many functions a run keeps, per mode: the report shows ten. */
const KEPT_FUNCTIONS = 30;

/**
 * Stops the profiles, writes each worker's as `<prefix>-<pid>.cpuprofile` and sums them.
 * @param {string[]} admins
 * @param {string} prefix path and file name start, e.g. results/profile-http-local-user-…-r1
 * @param {number} intervalUs the sampling interval (µs; server/profiling.js)
 * @returns {Promise<{files: string[], interval_us: number, cpu: {main_thread_us: number|null, process_us: number}}
 *   & ProfileTotals>} totals of all workers (µs): their profiles' self time, the first KEPT_FUNCTIONS functions, and
 *   their CPU time over the profiles (main threads and whole processes, from /proc and process.cpuUsage)
 * @throws {BenchError} when a profile cannot be stopped
 */
export async function stopProfiles(admins, prefix, intervalUs) {
  const files = [];
  const totals = [];
  const cpu = { main_thread_us: 0, process_us: 0 };
  await mkdir(path.dirname(prefix), { recursive: true });
  for (const admin of admins) {
    const { profiles } = await post(admin, 'stop');
    for (const { pid, profile, cpu: own } of profiles) {
      const file = `${prefix}-${pid}.cpuprofile`;
      await writeFile(file, JSON.stringify(profile));
      files.push(path.resolve(file));
      totals.push(profileTotals(profile, intervalUs));
      cpu.main_thread_us = own?.main_thread_us === null || cpu.main_thread_us === null ? null : cpu.main_thread_us + own.main_thread_us;
      cpu.process_us += own?.process_us ?? 0;
    }
  }
  const sum = sumTotals(totals);
  return { files, interval_us: intervalUs, cpu, ...sum, functions: sum.functions.slice(0, KEPT_FUNCTIONS) };
}

