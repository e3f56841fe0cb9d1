// The soak job's two runs (bench/commands/soak.js runs them per mode): the server under sustained
// load for SOAK_DURATION (open model at a steady rate by default, SOAK_RATE) while every worker's RSS is sampled
// from /proc and the server's own accounting (GC, allocation, CPU per request) is read per window; and a short
// fault run in which one worker is killed with SIGKILL at the load's midpoint, timing its
// replacement and counting the requests that failed.
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { BenchError } from '../errors.js';
import { round } from '../format.js';
import { k6CpuPct, k6Interrupted, k6Reason } from '../k6/output.js';
import { freePort, isServerProcess, launchServer } from '../processes.js';
import { serverRun } from './lifecycle.js';
import { runK6 } from '../k6/runner.js';
import { scrapeServer } from './scrape.js';
import { measureCapacity } from './capacity.js';
import { MODES } from '../modes.js';
import { LISTENERS } from '../../server/listeners.js';
import { serverFigures, serverWindow } from '../records/server-stats.js';
import { durationMs } from '../settings/validators.js';
import { EVENT } from '../../server/events.js';
import { portOfMode, serverEnv } from '../invoke.js';
import { k6Args, k6Tls } from '../k6/command.js';
import { serverTlsSettings } from '../tls.js';
import { readSummary } from '../records/summary.js';
import { memoryFigures, outsideHeapTrend, serverTrend } from '../records/soak.js';
import { loadAverage, rssMib } from './memory.js';
import { autoRate, RSS_INTERVAL_S, SERVER_WINDOW_S } from '../settings/soak.js';

// Past --duration k6 may spend its setupTimeout (15 s) and gracefulStop (30 s); past those and a margin it is stuck.
const K6_OVERRUN_MS = 75000;
// A replacement slower than this is a failed respawn, not a slow one (about 0.9 s here: test/manual/respawn-ab.js).
const RESPAWN_TIMEOUT_MS = 10000;
// k6 starts loading after its start-up and setup(); past this it is not going to.
const LOAD_START_TIMEOUT_MS = 30000;

const log = (message) => console.error(`soak: ${message}`);


/** k6's warnings and errors (first few), kept in the report for diagnosis. */
const k6Messages = (output) => output.split('\n').filter((l) => /level=(warning|error)/.test(l)).slice(0, 5);

/**
 * Runs k6 (bench/k6/runner.js runK6) and kills it by pid if it outlives its duration by
 * K6_OVERRUN_MS, so that no load loop of this job runs unbounded.
 * @param {Parameters<typeof runK6>[0]} options
 * @param {string} duration the run's k6 duration
 * @param {string} what names the run in the error
 * @returns {ReturnType<typeof runK6>}
 * @throws {BenchError} when k6 had to be killed
 */
async function boundedK6(options, duration, what) {
  const limitMs = durationMs(duration) + K6_OVERRUN_MS;
  const run = await runK6({ ...options, timeoutMs: limitMs });
  if (!run.timedOut) return run;
  throw new BenchError(`${what}: k6 was still running ${limitMs / 1000} s after its start, so it was killed`);
}

/**
 * k6 arguments of one run of a mode's local script (k6 sees only -e: runK6 leaves the environment out): closed model at
 * VUS, or, given a rate, open model at that many requests a second with VUS VUs, all made before the load (MAX_VUS =
 * VUS). A VU k6 makes mid-run costs it a script start, which stalls it and drops more iterations: measured here (20 s at
 * 80% of k6's ceiling, 1 worker), VUS VUs growing to 4 x VUS mid-run dropped 8% of HTTP's iterations (p99 72 ms), and
 * 4 x VUS made up front did worse (p99 88 ms).
 */
const soakK6Args = (mode, host, summaryFile, duration, settings, rate = null, tls = null) => k6Args(mode, {
  host, summaryFile, duration, vus: settings.VUS, rate,
  vars: { SCENARIO: 'user', CONNECTIONS: 'reuse', REQUEST_TIMEOUT: settings.REQUEST_TIMEOUT, ...(rate ? { MAX_VUS: settings.VUS } : {}), ...k6Tls(tls).vars },
});

/**
 * The ceiling of SOAK_RATE=auto on the running server, CEILING_RUNS times: the server's own (the listener's native tool,
 * wrk or h2load, at VUS connections pinned where k6 runs), then k6's as an open-model client (asked for the server's
 * ceiling, what it starts is its own), each for CEILING_DURATION. The rate comes from their medians (autoRate): a rate k6
 * cannot start would measure k6 (dropped iterations), not the server.
 * @returns {Promise<{server_rps: number, server_tool: string, k6_rps: number, limit: 'server'|'k6', rate: number,
 *   runs: Array<{server_rps: number, k6_rps: number, k6_cpu_pct: number|null}>}>} req/s; server_rps and k6_rps the medians
 * @throws {BenchError} when a ceiling run fails
 */
async function ceilingOf(mode, host, settings, cores, k6, job) {
  const durationS = Math.max(1, Math.round(durationMs(settings.CEILING_DURATION) / 1000));
  const { tool } = LISTENERS[MODES[mode].listener].load;
  const runs = [];
  for (let i = 1; i <= settings.CEILING_RUNS; i++) {
    log(`${mode}: ceiling ${i}/${settings.CEILING_RUNS}, ${settings.CEILING_DURATION} of ${tool} then of k6, at ${settings.VUS} connections`);
    const native = await measureCapacity({ listener: MODES[mode].listener, scenario: 'user', host, connections: settings.VUS, durationS,
      cpus: cores.k6Cpus, tls: Boolean(job.tls) });
    if (native.failed > 0) throw new BenchError(`${mode} ceiling: ${native.tool} saw ${native.failed} failed requests`);
    const summaryFile = path.join(job.scratch, `ceiling-${mode}-${i}.json`);
    const run = await boundedK6({ ...k6, args: soakK6Args(mode, host, summaryFile, settings.CEILING_DURATION, settings, Math.ceil(native.rps), job.tls) },
      settings.CEILING_DURATION, `${mode} ceiling`);
    if (run.code !== 0) throw new BenchError(`k6 ceiling run against ${host} failed (exit ${run.code}): ${k6Reason(run.output)}`);
    const client = await readSummary(summaryFile);
    runs.push({ server_rps: round(native.rps, 1), k6_rps: round(client.rps, 1), k6_cpu_pct: round(k6CpuPct(run.cpu), 1) });
  }
  return { ...autoRate(runs), server_tool: tool, runs };
}

/** The soak's server for a mode, with the job's certificates under TLS=1. */
const start = (mode, options, cores, job) => launchServer(`the ${mode} server`, {
  env: serverEnv([mode], { ...options, settings: serverTlsSettings(job.tls) }), cpus: cores.serverCpus,
});

/**
 * One sustained run: server up, warm-up, the measured run with every worker's RSS read
 * at its start, every RSS_INTERVAL_S seconds and at its end, server down.
 * @param {string} mode a name of MODES (bench/modes.js)
 * @param {import('../settings/soak.js').SoakSettings} settings
 * @param {ReturnType<typeof import('../settings/cores.js').splitCores>} cores
 * @param {{stamp: string, scratch: string, tls: import('../tls.js').RunCertificates|null}} job the job's file stamp and scratch
 *   folder, and its certificates with TLS=1 (null: cleartext)
 * @returns {Promise<object>} the run's figures; memory in MiB, times in s
 * @throws {BenchError} when the server does not start or k6 fails
 */
export async function soakRun(mode, settings, cores, job) {
  const loadavgBefore = loadAverage();
  const adminPort = await freePort();
  const admin = `127.0.0.1:${adminPort}`;
  const k6 = { k6: settings.K6_BIN, cpus: cores.k6Cpus, coreCount: cores.k6CoreCount, quiet: true, env: k6Tls(job.tls).env };
  const hostOf = (server) => `127.0.0.1:${portOfMode(server, mode)}`;
  const summaryFile = path.join(settings.RESULTS_DIR, `soak-${job.stamp}-${mode}-k6.json`);
  return serverRun({
    start: () => start(mode, { workers: settings.WORKERS, adminPort }, cores, job),
    warmup: async (server) => {
      const host = hostOf(server);
      if (durationMs(settings.WARMUP) > 0) {
        log(`${mode}: warm-up, ${settings.WARMUP} at ${settings.VUS} VUs (left out of the figures)`);
        const warm = await boundedK6({ ...k6, args: soakK6Args(mode, host, path.join(job.scratch, `warmup-${mode}.json`), settings.WARMUP, settings, null, job.tls) },
          settings.WARMUP, `${mode} warm-up`);
        if (warm.code !== 0) throw new BenchError(`k6 warm-up against ${host} failed (exit ${warm.code}): ${k6Reason(warm.output)}`);
      }
      const ceiling = settings.SOAK_RATE === 'auto' ? await ceilingOf(mode, host, settings, cores, k6, job) : null;
      const rate = ceiling ? ceiling.rate : settings.SOAK_RATE === 'closed' ? null : settings.SOAK_RATE;
      log(`${mode}: sustained load, ${settings.SOAK_DURATION} ${rate ? `at ${rate} req/s (open model)` : `at ${settings.VUS} VUs`}, `
        + `${settings.WORKERS} worker(s); RSS every ${RSS_INTERVAL_S} s, the server's accounting every ${SERVER_WINDOW_S} s`);
      return { ceiling, rate };
    },
    samplers: [rssSampler(), windowSampler(admin)],
    measure: (server, warm) => boundedK6({ ...k6, args: soakK6Args(mode, hostOf(server), summaryFile, settings.SOAK_DURATION, settings, warm?.rate ?? null, job.tls) },
      settings.SOAK_DURATION, `${mode} sustained run`),
    after: async (server, { warm, run, readings }) => {
      const { ceiling = null, rate = null } = warm ?? {};
      if (run.code !== 0) throw new BenchError(`k6 run against ${hostOf(server)} failed (exit ${run.code}): ${k6Reason(run.output)}`);
      const { idle, samples } = readings.rss;
      const windows = readings.server;
      const figures = await readSummary(summaryFile);
      const first = Object.keys(idle.workers);
      const limits = { growthPct: settings.RSS_GROWTH_PCT, slopeMibPerMin: settings.RSS_SLOPE_MIB_PER_MIN };
      return {
        mode,
        workers: settings.WORKERS,
        vus: settings.VUS,
        model: rate ? 'open' : 'closed',
        rate,
        ceiling,
        duration: settings.SOAK_DURATION,
        warmup: settings.WARMUP,
        summary_file: summaryFile,
        rps: figures.rps,
        requests: figures.requests,
        failed: figures.failed,
        timed_out: figures.timed_out,
        dropped_iterations: figures.dropped_iterations,
        checks_failed: figures.checks_failed,
        latency_ms: figures.latency_ms,
        run_s: figures.duration_s,
        interrupted_iterations: k6Interrupted(run.output),
        k6_cpu_pct: k6CpuPct(run.cpu),
        loadavg_before: loadavgBefore,
        loadavg_after: loadAverage(),
        rss_interval_s: RSS_INTERVAL_S,
        rss_idle_mib: round(Object.values(idle.workers).reduce((a, b) => a + b, 0), 3),
        memory: memoryFigures(samples, limits),
        outside_heap: outsideHeapTrend(windows, limits),
        server_window_s: SERVER_WINDOW_S,
        server: serverTrend(windows),
        // A worker that died during the sustained run would hide its memory from the end figures.
        workers_gone: first.filter((pid) => !(pid in samples.at(-1).workers)).map(Number),
        rss_idle: idle,
        rss_samples: samples,
        server_windows: windows,
      };
    },
  });
}

/**
 * Every worker's RSS from /proc: once before the load (the idle reading, kept apart: the server idles between the two
 * runs and its RSS drops, so the trend starts with the first reading under load), every RSS_INTERVAL_S seconds, and
 * at the load's end.
 * @returns {import('./lifecycle.js').Sampler<import('../processes.js').RunningServer>} reading {idle, samples}
 */
function rssSampler() {
  return {
    name: 'rss',
    open: async (server) => {
      const t0 = performance.now();
      /** @returns {import('../records/soak.js').RssSample} */
      const read = () => {
        /** @type {Record<string, number>} */
        const workers = {};
        for (const pid of server.workerPids()) {
          const mib = rssMib(pid);
          if (mib !== null) workers[pid] = round(mib, 3);
        }
        return { t_s: round((performance.now() - t0) / 1000, 3), workers };
      };
      const idle = read();
      /** @type {import('../records/soak.js').RssSample[]} */
      const samples = [];
      const timer = setInterval(() => samples.push(read()), RSS_INTERVAL_S * 1000);
      return async () => {
        clearInterval(timer);
        samples.push(read());
        return { idle, samples };
      };
    },
  };
}

/**
 * The server's accounting per window of SERVER_WINDOW_S seconds, and the tail at the load's end: GC, allocation and
 * CPU per request over time (a leak, or a heap V8 keeps growing, shows as GC per request rising). A missed reading
 * merges its window into the next.
 * @param {string} admin host:port of the server's admin endpoint
 * @returns {import('./lifecycle.js').Sampler<unknown>} reading: the windows
 */
function windowSampler(admin) {
  return {
    name: 'server',
    open: async () => {
      const t0 = performance.now();
      /** @type {import('../records/soak.js').ServerWindowFigures[]} */
      const windows = [];
      let last = await scrapeServer(admin);
      let lastT = 0;
      const readWindow = async () => {
        const now = await scrapeServer(admin, { timeoutMs: 5000 }).catch(() => null);
        if (!now) return;
        const t = round((performance.now() - t0) / 1000, 3);
        const window = serverWindow(last, now);
        const f = serverFigures(window);
        const largest = (pick) => round(Math.max(...window.workers.map(pick)) / 2 ** 20, 1);
        windows.push({
          from_s: lastT, to_s: t, requests: f.server_requests, rps: round(f.server_requests / (t - lastT), 1),
          gc_ms_per_1k_requests: f.server_gc_ms_per_1k_requests === null ? null : round(f.server_gc_ms_per_1k_requests, 3),
          allocated_bytes_per_request: f.server_heap_allocated_bytes_per_request === null ? null : Math.round(f.server_heap_allocated_bytes_per_request),
          cpu_us_per_request: f.server_cpu_us_per_request === null ? null : round(f.server_cpu_us_per_request, 2),
          heap_end_mib: round(f.server_heap_end_mib, 1),
          heap_committed_end_mib: largest((w) => w.heap_total_end_bytes),
          outside_heap_end_mib: largest((w) => w.rss_end_bytes - w.heap_total_end_bytes),
          tls_handshakes_per_1k_requests: f.server_tls_handshakes_per_1k_requests === null ? null : round(f.server_tls_handshakes_per_1k_requests, 3),
          tls: f.server_tls,
        });
        last = now;
        lastT = t;
      };
      let windowing = Promise.resolve();
      const timer = setInterval(() => { windowing = windowing.then(readWindow); }, SERVER_WINDOW_S * 1000);
      return async () => {
        clearInterval(timer);
        await windowing;
        await readWindow(); // the tail, k6's end included
        return windows;
      };
    },
  };
}

/**
 * Resolves once the server has served a request past k6's setup() one (its admin endpoint's
 * count), i.e. once the VUs load it; the midpoint of the load is counted from there.
 * @param {string} admin host:port of the admin endpoint
 * @param {() => boolean} k6Ended
 * @returns {Promise<number>} performance.now() at that moment (ms)
 * @throws {BenchError} when k6 ends first or no load comes within LOAD_START_TIMEOUT_MS
 */
async function loadStart(admin, k6Ended) {
  const deadline = Date.now() + LOAD_START_TIMEOUT_MS;
  while (Date.now() < deadline && !k6Ended()) {
    const scrape = await scrapeServer(admin, { timeoutMs: 2000 }).catch(() => null);
    const served = (scrape?.workers ?? []).reduce((sum, w) => sum + Object.values(w.served).reduce((a, n) => a + n, 0), 0);
    if (served >= 2) return performance.now();
    await sleep(50);
  }
  throw new BenchError(k6Ended() ? 'k6 ended before it loaded the server' : `k6 sent no load within ${LOAD_START_TIMEOUT_MS / 1000} s`);
}

/**
 * One fault run on a fresh server: k6 for FAULT_DURATION, one worker killed with SIGKILL at
 * the load's midpoint, its replacement timed from the log lines.
 * @param {string} mode a name of MODES (bench/modes.js)
 * @param {import('../settings/soak.js').SoakSettings} settings
 * @param {ReturnType<typeof import('../settings/cores.js').splitCores>} cores
 * @param {{stamp: string, scratch: string, tls: import('../tls.js').RunCertificates|null}} job the job's file stamp and scratch
 *   folder, and its certificates with TLS=1 (null: cleartext)
 * @param {number} repeat 1-based
 * @returns {Promise<object>} the run's figures; times in ms
 * @throws {BenchError} when the server does not start, k6 fails or no replacement listens in time
 */
export async function faultRun(mode, settings, cores, job, repeat) {
  const adminPort = await freePort();
  const admin = `127.0.0.1:${adminPort}`;
  const loadavgBefore = loadAverage();
  const what = `${mode} fault run ${repeat}`;
  const summaryFile = path.join(settings.RESULTS_DIR, `soak-${job.stamp}-${mode}-fault-r${repeat}-k6.json`);
  let before = [];
  return serverRun({
    start: () => start(mode, { workers: settings.FAULT_WORKERS, adminPort }, cores, job),
    measure: async (server) => {
      before = server.workerPids();
      const host = `127.0.0.1:${portOfMode(server, mode)}`;
      log(`${what}: ${settings.FAULT_DURATION} at ${settings.VUS} VUs, ${settings.FAULT_WORKERS} worker(s); one killed at the midpoint`);
      let ended = false;
      const running = boundedK6({ k6: settings.K6_BIN, cpus: cores.k6Cpus, coreCount: cores.k6CoreCount, quiet: true, env: k6Tls(job.tls).env,
        args: soakK6Args(mode, host, summaryFile, settings.FAULT_DURATION, settings, null, job.tls) }, settings.FAULT_DURATION, what)
        .finally(() => { ended = true; });
      running.catch(() => {}); // awaited below, after the kill
      let fault;
      let faultError;
      try {
        fault = await killAtMidpoint(server, { admin, before, loadMs: durationMs(settings.FAULT_DURATION), ended: () => ended });
      } catch (err) {
        faultError = err;
      }
      const run = await running;
      if (faultError) throw new BenchError(`${what}: ${faultError.message.split('\n')[0]}`);
      if (run.code !== 0) throw new BenchError(`${what}: k6 run against ${host} failed (exit ${run.code}): ${k6Reason(run.output)}`);
      return { run, fault };
    },
    after: async (server, { run: { run, fault } }) => {
      const end = await scrapeServer(admin).catch(() => null);
      const replacementServed = end?.workers.find((w) => w.pid === fault.replacement);
      const figures = await readSummary(summaryFile);
      return {
        repeat,
        summary_file: summaryFile,
        ...fault,
        requests: figures.requests,
        // Every request the kill cost: failed ones, those that reached REQUEST_TIMEOUT included.
        failed: figures.failed,
        timed_out: figures.timed_out,
        failed_pct: figures.requests > 0 ? (figures.failed / figures.requests) * 100 : null,
        // Iterations that threw (a gRPC call on a broken connection can) end without a request counted.
        k6_error_lines: run.output.split('\n').filter((l) => /level=error/.test(l)).length,
        interrupted_iterations: k6Interrupted(run.output),
        // Longer than FAULT_DURATION when k6 waited for stuck iterations (its gracefulStop).
        run_s: figures.duration_s,
        k6_messages: k6Messages(run.output),
        replacement_served: replacementServed ? Object.values(replacementServed.served).reduce((a, n) => a + n, 0) : null,
        workers_after: server.workerPids().filter(isServerProcess).length,
        rps: figures.rps,
        latency_ms: figures.latency_ms,
        k6_cpu_pct: k6CpuPct(run.cpu),
        loadavg_before: loadavgBefore,
      };
    },
  });
}

/**
 * The fault of a fault run: one worker killed with SIGKILL at the load's midpoint (counted from when the VUs load the
 * server), its death and its replacement's `worker listening` read from the server's log lines.
 * @param {import('../processes.js').RunningServer} server
 * @param {{admin: string, before: number[], loadMs: number, ended: () => boolean}} load admin: the admin endpoint;
 *   before: the worker pids before the load; loadMs: the load's duration (ms); ended: whether k6 ended
 * @returns {Promise<{victim: number, replacement: number, killed_at_s: number, respawn_ms: number, respawn_logged_ms: number,
 *   death_logged_ms: number}>}
 * @throws {BenchError} when k6 ends first or no replacement listens within RESPAWN_TIMEOUT_MS
 */
async function killAtMidpoint(server, { admin, before, loadMs, ended }) {
  const loadAt = await loadStart(admin, ended);
  await sleep(loadMs / 2);
  if (ended()) throw new BenchError('k6 ended before the midpoint');
  const victim = before.find(isServerProcess);
  const from = server.lines.length;
  const killedAt = Date.now();
  process.kill(victim, 'SIGKILL');
  const killedAtS = (performance.now() - loadAt) / 1000;
  const wait = (match) => server.waitForLine(match, { from, timeoutMs: RESPAWN_TIMEOUT_MS });
  const [died, listening] = await Promise.all([
    wait((l) => l.event === EVENT.WORKER_REPLACED && l.worker === victim),
    wait((l) => l.event === EVENT.WORKER_LISTENING && !before.includes(l.pid)),
  ]).catch(() => { throw new BenchError(`no replacement worker listened within ${RESPAWN_TIMEOUT_MS} ms of the kill`); });
  return {
    victim,
    replacement: listening.pid,
    killed_at_s: round(killedAtS, 3),
    respawn_ms: listening.at - killedAt,
    // pino's own timestamp of the line, before the pipe: the same clock, without the pipe's delay
    respawn_logged_ms: listening.time - killedAt,
    death_logged_ms: died.at - killedAt,
  };
}
