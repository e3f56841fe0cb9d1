// The client's ceiling (CALIBRATE): before a scenario's measured runs, the mode's own k6 script, at the same VUs and
// pinning, against the mode's bare listener (bench/modes.js `bare`: node:http or node:http2 sending the very same
// bytes at next to no cost), on loopback. What k6 reaches there is what this machine's load generator can do for that
// mode; a measured run at or near it (report: `client_share`) measures k6, not the server. k6's CPU alone is a
// weaker sign: k6 can be the limit below 90% of its core (waiting on its own scheduling) and short of it above.
// Under TLS=1 the bare listener serves TLS too, with certificates of its own, and k6 verifies them as in the measured
// runs: the handshakes and records are the client's work as much as the server's.
import path from 'node:path';
import { scenarioVars } from '../own-service.js';
import { serverEnv } from '../invoke.js';
import { k6Args, k6Tls } from '../k6/command.js';
import { jobCertificates, serverTlsSettings } from '../tls.js';
import { MODES } from '../modes.js';
import { clockTicks, cpuSecondsOf, startServer } from '../processes.js';
import { coreSides, readMachine } from './machine-noise.js';
import { machineWindow } from '../records/machine-noise.js';
import { runK6 } from '../k6/runner.js';
import { beforeAfter, serverRun } from './lifecycle.js';
import { figuresOf } from '../records/summary.js';
import { readFile } from 'node:fs/promises';
import { BenchError } from '../errors.js';
import { formatNumber } from '../format.js';
import { k6CpuPct, k6Reason } from '../k6/output.js';

/** Where the bare server runs: on this machine, on loopback, whatever the measured runs' placement. */
const LOOPBACK = /** @type {{target: 'local', link: null}} */ ({ target: 'local', link: null });

/** The calibration's own warm-up (k6 duration): the bare server's JIT and k6's VUs, left out. */
const WARMUP = '1s';

/**
 * @typedef {object} ClientCeiling
 * @property {number|null} rps requests per second k6 reached against the bare listener (the report's RPS, requests /
 *   k6's test run duration); null when not measured (`reason` says why)
 * @property {string} listener the bare listener it loaded
 * @property {string} duration how long (k6 duration)
 * @property {number} vus
 * @property {number|null} k6_cpu_pct k6's CPU over the run, % of its cores
 * @property {number|null} server_cpu_pct the bare server's workers' CPU over the run, % of the server's cores: well
 *   below 90 shows the ceiling is the client's, not the bare server's
 * @property {string} [reason] why it was not measured
 * @property {import('../records/machine-noise.js').MachineNoise} [machine] the pinned cores' noise over its measured run
 *   (steal and other processes' CPU, as around a measured cell)
 * @property {string} [ended_at] when its measured run ended (ISO 8601): the measured run beside it records how long
 *   before itself that was (`before_run_s`, bench/passes/cell.js)
 */

/**
 * Why a column cannot be calibrated, or null when it can.
 * @param {{compression: 'off'|'gzip', bare?: string, stream?: boolean}} column bare: its mode's bare listener
 *   (bench/modes.js); stream: a server-streaming RPC (default false)
 * @param {{K6_INSTANCES: number, CALIBRATE: string}} plan
 * @param {{k6Cpus?: string}} cores
 * @returns {string|null}
 */
export function calibrationGap({ compression, bare, stream = false }, plan, cores) {
  if (/^0+(\.0+)?(ms|s|m|h)?$/.test(plan.CALIBRATE)) return 'CALIBRATE=0';
  if (!bare) return 'its mode names no bare listener (bench/modes.js)';
  if (stream) return 'the bare listeners serve no streams';
  if (compression !== 'off') return 'the bare listeners send no gzip, so they cannot send the same bytes';
  if (plan.K6_INSTANCES > 1) return 'K6_INSTANCES > 1: one calibration run cannot split the same way';
  if (!cores.k6Cpus) return 'one core: k6 and the bare server would share it';
  return null;
}

/**
 * Measures the client's ceiling of one column: a fresh bare server (its mode's `bare` listener, WORKERS workers, pinned
 * where the measured server is), a 1 s warm-up, then CALIBRATE of the mode's local script at VUS, pinned like k6's
 * measured runs, always closed-model (the most the client can do; with RATE the measured run asks less). With TLS=1 the
 * bare server serves TLS (certificates made for the calibration, TLS_SESSION_TICKETS as the job's) and k6 verifies them.
 * The ceiling is said in one line on stderr.
 * @param {{key?: string, mode: string, scenario: string, compression: 'off'|'gzip', own?: import('../own-service.js').OwnRun|null}} column
 *   key: the column's name in that line (default: the mode)
 *   own: an own service, which the bare listeners serve as pre-encoded bytes in turn
 * @param {import('../plans.js').CeilingPlan} plan
 * @param {ReturnType<typeof import('../settings/cores.js').splitCores>} cores
 * @param {string} scratch folder for the runs' summaries
 * @returns {Promise<ClientCeiling>} with rps null and a reason when the column cannot be calibrated
 * @throws {BenchError} when the bare server does not start or k6 fails against it
 */
export async function measureClientCeiling({ mode, key = mode, scenario, compression, own = null }, plan, cores, scratch) {
  const ceiling = await clientCeiling({ mode, scenario, compression, own }, plan, cores, scratch);
  console.error(ceiling.rps === null ? `client's ceiling · ${scenario} · ${key}: not measured (${ceiling.reason})`
    : `client's ceiling · ${scenario} · ${key}: ${formatNumber(ceiling.rps, 0)} req/s against ${ceiling.listener}`
      + `${ceiling.k6_cpu_pct === null ? '' : `, k6 at ${ceiling.k6_cpu_pct.toFixed(0)}% of its core`}`
      + `${ceiling.server_cpu_pct === null ? '' : `, the bare server at ${ceiling.server_cpu_pct.toFixed(0)}% of its own`}`);
  return ceiling;
}

/** What measureClientCeiling measures, before it is said. */
async function clientCeiling({ mode, scenario, compression, own }, plan, cores, scratch) {
  const { bare } = MODES[mode];
  const base = { listener: bare, duration: plan.CALIBRATE, vus: plan.VUS };
  const gap = calibrationGap({ compression, bare, stream: own?.stream }, plan, cores);
  if (gap) return { ...base, rps: null, k6_cpu_pct: null, server_cpu_pct: null, reason: gap };
  const certs = plan.TLS ? await jobCertificates() : null;
  const tls = k6Tls(certs);
  const run = async (server, duration, summaryFile) => {
    const host = `127.0.0.1:${server.ports[bare]}`;
    const args = k6Args(mode, {
      host, vus: plan.VUS, duration, summaryFile,
      vars: { ...scenarioVars(scenario, own), CONNECTIONS: plan.CONNECTIONS, ...tls.vars },
    });
    const result = await runK6({ k6: plan.K6_BIN, args, env: tls.env, cpus: cores.k6Cpus, coreCount: cores.k6CoreCount, quiet: true });
    if (result.code !== 0) {
      throw new BenchError(`client ceiling: k6 ${MODES[mode].scripts.local} against the bare listener ${bare} at ${host} failed `
        + `(exit ${result.code})${k6Reason(result.output) ? `: ${k6Reason(result.output)}` : ''}`);
    }
    return result;
  };
  const file = path.join(scratch, `calibrate-${mode}-${scenario}.json`);
  return serverRun({
    start: () => startServer({
      env: { ...serverEnv(null, { workers: plan.WORKERS, settings: { ...serverTlsSettings(certs, plan.TLS_SESSION_TICKETS), ...own?.server } }), MODE: bare },
      cpus: cores.serverCpus,
    }).catch(async (err) => { await certs?.remove(); throw err; }),
    warmup: (server) => run(server, WARMUP, path.join(scratch, `calibrate-${mode}-${scenario}-warmup.json`)),
    samplers: [beforeAfter('server', (server) => ({ cpu: server.workerPids().reduce((sum, pid) => sum + cpuSecondsOf(pid), 0), at: performance.now() }),
      (before, after) => ((after.cpu - before.cpu) / ((after.at - before.at) / 1000) / cores.serverCoreCount) * 100),
    // The machine's noise over the calibration too: a ceiling measured while other processes took the cores is low.
    beforeAfter('machine', (server) => readMachine(server.pids()),
      (before, after) => machineWindow(before, after, coreSides(cores, LOOPBACK), clockTicks()))],
    measure: (server) => run(server, plan.CALIBRATE, file),
    after: async (server, { run: measured, readings }) => {
      const { rps } = figuresOf(file, JSON.parse(await readFile(file, 'utf8')));
      return { ...base, rps, k6_cpu_pct: k6CpuPct(measured.cpu), server_cpu_pct: readings.server, machine: readings.machine,
        ended_at: new Date().toISOString() };
    },
    stop: async (server) => {
      await server.stop();
      await certs?.remove();
    },
  });
}
