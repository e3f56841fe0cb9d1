// The fault matrix's faults and its cell (bench/commands/faults.js runs them): each fault injected into a
// fresh server under k6 load, with the requests that completed, failed and timed out and the workers' RSS
// before, at the peak and at the end. A fault is one entry of FAULTS: what it does, and the function
// that does it while k6 loads the server.
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { EVENT } from '../../server/events.js';
import { LISTENERS } from '../../server/listeners.js';
import { BenchError } from '../errors.js';
import { idleConnections, malformedBurst, slowReaders } from './fault-clients.js';
import { k6Reason } from '../format.js';
import { MODES } from '../modes.js';
import { k6Args, portOfMode, serverEnv } from '../invoke.js';
import { freePort, isServerProcess, runK6, startServer } from '../processes.js';
import { durationMs } from '../settings/validators.js';
import { rssMib } from './memory.js';
import { readSummary } from '../report/summary.js';

// Past --duration k6 may spend its gracefulStop (30 s); past that and a margin it is stuck.
const K6_OVERRUN_MS = 60000;

/**
 * @typedef {object} FaultContext what a fault gets while k6 loads the server
 * @property {import('../processes.js').RunningServer} server
 * @property {number} port the port k6 loads
 * @property {'http'|'grpc'} protocol how the port is spoken to: HTTP/1.1 GET, or gRPC
 * @property {number} loadMs how long the load lasts from the moment the fault starts (ms)
 * @property {import('../settings/faults.js').FaultSettings} settings
 */

/**
 * Every fault, in table order. `inject` runs at the load's start and returns what it observed.
 * @type {Readonly<Record<string, {about: string, inject: (ctx: FaultContext) => Promise<Record<string, unknown>>}>>}
 */
export const FAULTS = Object.freeze({
  'worker-kill': {
    about: 'a worker killed with SIGKILL every 3 s (the restart policy replaces it)',
    async inject({ server, loadMs }) {
      let kills = 0;
      for (let at = 3000; at < loadMs - 1000; at += 3000) {
        await sleep(3000);
        const victim = server.workerPids().filter(isServerProcess).at(kills % 2);
        if (!victim) continue;
        process.kill(victim, 'SIGKILL');
        kills++;
      }
      return { kills };
    },
  },
  'primary-sigterm': {
    about: 'the primary gets SIGTERM at the midpoint: it drains and exits; later requests are refused, not lost',
    async inject({ server, loadMs, settings }) {
      await sleep(loadMs / 2);
      const at = Date.now();
      server.proc.kill('SIGTERM');
      const [code] = await Promise.race([server.exited, sleep(settings.SHUTDOWN_TIMEOUT_MS + 6000).then(() => ['hung'])]);
      return { exit_code: code, exit_ms: Date.now() - at };
    },
  },
  reload: {
    about: 'SIGHUP at the midpoint: every worker replaced one at a time',
    async inject({ server, loadMs }) {
      await sleep(loadMs / 2);
      const from = server.lines.length;
      server.proc.kill('SIGHUP');
      const done = await server.waitForLine((l) => l.event === EVENT.RELOADED || l.event === EVENT.RELOAD_FAILED, { from, timeoutMs: 30000 });
      return { reloaded: done.event === EVENT.RELOADED, reload_ms: done.ms ?? null };
    },
  },
  'slow-readers': {
    about: '16 connections ask for the 1 MiB blob (8 requests each: pipelined, or streams) and never read',
    async inject({ port, protocol, loadMs }) {
      await sleep(1000);
      const readers = await slowReaders({ port, protocol, connections: 16, requestsEach: 8 });
      await sleep(loadMs - 2000);
      readers.close();
      return { connections: readers.opened, requests: readers.opened * 8 };
    },
  },
  'idle-connections': {
    about: 'IDLE_CONNECTIONS connections opened at once that send nothing (gRPC: the preface only)',
    async inject({ port, protocol, loadMs, settings }) {
      await sleep(1000);
      const started = Date.now();
      const idle = await idleConnections({ port, protocol, count: settings.IDLE_CONNECTIONS });
      // Held at the end of the load: the primary hands each connection to a worker, which closes the ones
      // past MAX_CONNECTIONS, and with 10,000 queued that takes seconds.
      await sleep(Math.max(0, loadMs - 1000 - (Date.now() - started)));
      const heldAtEnd = idle.open();
      idle.close();
      return { opened: idle.opened, refused: idle.refused, held_at_end: heldAtEnd };
    },
  },
  'malformed-frames': {
    about: '500 connections at once, each with one malformed request (HTTP: not a request line; gRPC: DATA on stream 0)',
    async inject({ port, protocol, loadMs, settings }) {
      await sleep(loadMs / 2 - 1000);
      const timeoutMs = protocol === 'grpc' ? 2 * settings.H2_IDLE_PING_MS + 3000 : 5000;
      return malformedBurst({ port, protocol, count: 500, timeoutMs });
    },
  },
});

/** The server settings the matrix sets in each cell's server. */
export const serverSettingsOf = (settings) => ({ SHUTDOWN_TIMEOUT_MS: settings.SHUTDOWN_TIMEOUT_MS, H2_IDLE_PING_MS: settings.H2_IDLE_PING_MS });

/** Sum of the workers' RSS (MiB), null when none is readable. */
const workersRss = (server) => {
  const each = server.workerPids().map(rssMib).filter((v) => v !== null);
  return each.length ? each.reduce((a, b) => a + b, 0) : null;
};

/**
 * One cell: a fresh server in the mode's listener, k6 for FAULT_DURATION, the fault during it.
 * @param {string} name a key of FAULTS
 * @param {string} mode a name of MODES (bench/modes.js)
 * @param {import('../settings/faults.js').FaultSettings} settings
 * @param {ReturnType<typeof import('../settings/cores.js').splitCores>} cores
 * @param {string} stamp the job's file stamp, in the k6 summary's name
 * @returns {Promise<object>} the cell's figures; memory in MiB
 * @throws {BenchError} when the server does not start or k6 cannot run
 */
export async function cell(name, mode, settings, cores, stamp) {
  const { listener } = MODES[mode];
  const server = await startServer({
    env: serverEnv([mode], { workers: settings.WORKERS, adminPort: await freePort(), settings: serverSettingsOf(settings) }),
    cpus: cores.serverCpus,
  }).catch((err) => { throw new BenchError(`the ${mode} server did not start: ${err.message.split('\n')[0]}`); });
  const port = portOfMode(server, mode);
  const summaryFile = path.join(settings.RESULTS_DIR, `faults-${stamp}-${name}-${mode}-k6.json`);
  try {
    const loadMs = durationMs(settings.FAULT_DURATION);
    const load = runK6({
      k6: settings.K6_BIN, cpus: cores.k6Cpus, coreCount: cores.k6CoreCount, quiet: !settings.VERBOSE, timeoutMs: loadMs + K6_OVERRUN_MS,
      args: k6Args(mode, {
        host: `127.0.0.1:${port}`, vus: settings.VUS, duration: settings.FAULT_DURATION, summaryFile,
        vars: { SCENARIO: 'user', REQUEST_TIMEOUT: settings.REQUEST_TIMEOUT },
      }),
    });
    await sleep(1000); // k6's start-up and setup()
    const rssBefore = workersRss(server);
    let rssPeak = rssBefore ?? 0;
    const sampler = setInterval(() => { rssPeak = Math.max(rssPeak, workersRss(server) ?? 0); }, 200);
    const protocol = LISTENERS[listener].load.request === 'grpc' ? 'grpc' : 'http';
    const observed = await FAULTS[name].inject({ server, port, protocol, loadMs: loadMs - 1000, settings })
      .catch((err) => ({ error: err.message.split('\n')[0] }));
    const run = await load;
    clearInterval(sampler);
    const rssEnd = workersRss(server);
    if (run.timedOut) throw new BenchError(`${name} · ${mode}: k6 still ran ${(loadMs + K6_OVERRUN_MS) / 1000} s after its start and was killed`);
    const figures = await readSummary(summaryFile).catch((err) => {
      throw new BenchError(`${name} · ${mode}: k6 wrote no summary (exit ${run.code}): ${k6Reason(run.output) || err.message}`);
    });
    const exitCode = await server.stop();
    return {
      fault: name, mode, summary_file: summaryFile,
      completed: figures.requests - figures.failed, failed: figures.failed, timed_out: figures.timed_out,
      rss_before_mib: rssBefore, rss_peak_mib: rssPeak, rss_end_mib: rssEnd,
      server_exit_code: exitCode, observed,
    };
  } finally {
    await server.kill();
  }
}

