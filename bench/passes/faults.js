// The fault matrix's cell (bench/commands/faults.js runs one per fault and mode): a fault of the registry
// (bench/faults/registry.js) injected into a fresh server under k6 load (and, in gRPC cells, ghz's multiplexed calls:
// bench/faults/mux-client.js), with the requests that completed, failed and timed out and the workers' RSS before, at the
// peak and at the end.
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { EVENT } from '../../server/events.js';
import { LISTENERS } from '../../server/listeners.js';
import { BenchError } from '../errors.js';
import { FAULTS } from '../faults/registry.js';
import { ownServerSettings } from '../faults/own-stream.js';
import { muxLoad } from '../faults/mux-client.js';
import { k6Reason } from '../k6/output.js';
import { round } from '../format.js';
import { MODES } from '../modes.js';
import { portOfMode, serverEnv } from '../invoke.js';
import { k6Args, k6Tls } from '../k6/command.js';
import { serverTlsSettings } from '../tls.js';
import { freePort, launchServer } from '../processes.js';
import { serverRun } from './lifecycle.js';
import { runK6 } from '../k6/runner.js';
import { durationMs } from '../settings/validators.js';
import { rssMib } from './memory.js';
import { readSummary } from '../records/summary.js';

// Past --duration k6 may spend its gracefulStop (30 s); past that and a margin it is stuck.
const K6_OVERRUN_MS = 60000;

/** The server settings the matrix sets in each cell's server. */
export const serverSettingsOf = (settings) => ({
  SHUTDOWN_TIMEOUT_MS: settings.SHUTDOWN_TIMEOUT_MS, H2_IDLE_PING_MS: settings.H2_IDLE_PING_MS,
  WORKER_MEMORY_MB: settings.WORKER_MEMORY_MB, H2_MAX_CONCURRENT_STREAMS: settings.H2_MAX_CONCURRENT_STREAMS,
  // With RPC every cell's server serves it beside the demo, the `none` cell too: slow-stream-readers' baseline.
  ...ownServerSettings(settings),
});

/**
 * How a mode's listener is spoken to by the misbehaving clients, and whether ghz runs beside k6 ('grpc'): HTTP/1.1 GET,
 * gRPC, or GET over HTTP/2 (json-h2).
 * @param {string} mode a name of MODES
 * @returns {import('../faults/clients.js').FaultProtocol}
 */
export const protocolOf = (mode) => {
  const listener = LISTENERS[MODES[mode].listener];
  if (listener.transport === 'HTTP/1.1') return 'http';
  return listener.load.request === 'grpc' ? 'grpc' : 'h2';
};

/**
 * The server streams and relays the stopped workers ended, summed over their listeners.
 * @param {Array<{streamsEnded?: Record<string, number>}>} stopped the workers' worker-stopped lines
 * @returns {{completed: number, cut: number}}
 */
const endedStreams = (stopped) => {
  const ended = { completed: 0, cut: 0 };
  for (const [key, count] of stopped.flatMap((l) => Object.entries(l.streamsEnded ?? {}))) ended[key.split(' ')[1]] += count;
  return ended;
};

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
 * @param {import('../tls.js').RunCertificates|null} [certs] the job's certificates with TLS=1 (the server serves them, k6,
 *   ghz and the misbehaving clients verify their CA); null: cleartext
 * @returns {Promise<object>} the cell's figures; memory in MiB; elapsed_s: seconds from k6's start until k6, the fault
 *   and ghz had all ended; ended_s: when each of them ended ({k6, fault, ghz?}, s since k6's start)
 * @throws {BenchError} when the server does not start or k6 cannot run
 */
export async function cell(name, mode, settings, cores, stamp, certs = null) {
  const summaryFile = path.join(settings.RESULTS_DIR, `faults-${stamp}-${name}-${mode}-k6.json`);
  const loadMs = durationMs(settings.FAULT_DURATION);
  return serverRun({
    start: async () => launchServer(`the ${mode} server`, {
      env: serverEnv([mode], {
        workers: settings.WORKERS,
        adminPort: await freePort(),
        settings: { ...serverSettingsOf(settings), ...serverTlsSettings(certs), ...FAULTS[name].server?.(settings) },
      }),
      cpus: cores.serverCpus,
    }),
    measure: async (server) => {
      const port = portOfMode(server, mode);
      const k6Verifies = k6Tls(certs);
      const loadStarted = performance.now();
      // When each part of the cell ended (s since k6's start): which one made a cell run past FAULT_DURATION.
      const ended = {};
      const timed = (part, promise) => promise.finally(() => { ended[part] = round((performance.now() - loadStarted) / 1000, 1); });
      const load = timed('k6', runK6({
        k6: settings.K6_BIN, cpus: cores.k6Cpus, coreCount: cores.k6CoreCount, quiet: !settings.VERBOSE, timeoutMs: loadMs + K6_OVERRUN_MS,
        env: k6Verifies.env,
        args: k6Args(mode, {
          host: `127.0.0.1:${port}`, vus: settings.VUS, duration: settings.FAULT_DURATION, summaryFile,
          vars: { SCENARIO: 'user', REQUEST_TIMEOUT: settings.REQUEST_TIMEOUT, ...k6Verifies.vars },
        }),
      }));
      const protocol = protocolOf(mode);
      // The multiplexing client beside k6, from the same start, on k6's core.
      const mux = protocol === 'grpc' ? timed('ghz', muxLoad({ port, loadMs, cpus: cores.k6Cpus, caCert: certs?.caCert })) : null;
      const clientTls = certs ? { ca: await readFile(certs.caCert) } : null;
      await sleep(1000); // k6's start-up and setup()
      const rssBefore = workersRss(server);
      let rssPeak = rssBefore ?? 0;
      // And each worker's own peak, which its budget bounds (a replaced worker's included).
      let workerPeak = 0;
      const sampler = setInterval(() => {
        rssPeak = Math.max(rssPeak, workersRss(server) ?? 0);
        for (const pid of server.workerPids()) workerPeak = Math.max(workerPeak, rssMib(pid) ?? 0);
      }, 200);
      const observed = await timed('fault', FAULTS[name].inject({ server, port, protocol, tls: clientTls, loadMs: loadMs - 1000, settings })
        .catch((err) => ({ error: err.message.split('\n')[0] })));
      const run = await load;
      const multiplexed = mux ? await mux : null;
      clearInterval(sampler);
      const rss = { rss_before_mib: rssBefore, rss_peak_mib: rssPeak, rss_end_mib: workersRss(server), worker_rss_peak_mib: workerPeak };
      return { run, observed, multiplexed, ended, rss };
    },
    after: async (server, { run: { run, observed, multiplexed, ended, rss } }) => {
      if (run.timedOut) throw new BenchError(`${name} · ${mode}: k6 still ran ${(loadMs + K6_OVERRUN_MS) / 1000} s after its start and was killed`);
      const figures = await readSummary(summaryFile).catch((err) => {
        throw new BenchError(`${name} · ${mode}: k6 wrote no summary (exit ${run.code}): ${k6Reason(run.output) || err.message}`);
      });
      const exitCode = await server.stop();
      // What the budget refused, by every worker of the cell (server/memory-budget.js, in each worker-stopped line).
      const stopped = server.lines.filter((l) => l.event === EVENT.WORKER_STOPPED && l.memory);
      const refused = (key) => stopped.reduce((sum, l) => sum + l.memory[key], 0);
      return {
        fault: name, mode, summary_file: summaryFile,
        completed: figures.requests - figures.failed, failed: figures.failed, timed_out: figures.timed_out, p99_ms: figures.latency_ms.p99,
        ...rss,
        worker_memory_mb: Number(server.lines.find((l) => l.event === EVENT.READY)?.workerMemoryMb ?? 0),
        refused_answers: refused('refusedAnswers'),
        // Streams the workers ended, every listener's, by how (server/served.js): beside the refused ones, all of them.
        streams_ended: endedStreams(stopped),
        recycled: server.lines.filter((l) => l.event === EVENT.WORKER_RECYCLING).length,
        server_exit_code: exitCode, observed, multiplexed,
        elapsed_s: Math.max(...Object.values(ended)), ended_s: ended,
      };
    },
    // after stops the server itself, for its exit code: this ends whatever is left of it, whatever failed before.
    stop: (server) => server.kill(),
  });
}
