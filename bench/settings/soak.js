// The soak job's settings (bench/commands/soak.js; docs/soak.md's table is generated from the specs).
import { bool, makeValidator } from 'envalid';
import { median } from 'simple-statistics';
import { positiveInt, readEnv, withDefaultText } from '../../server/env.js';
import { sharedSpec } from './shared.js';
import { BenchError } from '../errors.js';
import { CLEARTEXT_MODE_NAMES, MODE_NAMES, tlsGap } from '../modes.js';
import { allowedCpus, splitCores } from './cores.js';
import { duration, positiveNumber } from './validators.js';

/** Seconds between two RSS samples of the workers during the sustained run. */
export const RSS_INTERVAL_S = 5;
/** Seconds between two readings of the server's own accounting (GC, allocation, CPU per request) during the sustained run. */
export const SERVER_WINDOW_S = 30;
/** The open model's rate under SOAK_RATE=auto, as a share of the ceiling (the issue's 80%: load a server keeps up with). */
export const AUTO_RATE_SHARE = 0.8;
/**
 * Under SOAK_RATE=auto, the most of k6's own open-model ceiling the rate may ask. k6 on one core does not start 80% of its
 * ceiling steadily: measured here (60 s, 64 VUs made up front, 1 worker), 8% of HTTP's and 8% of gRPC's iterations dropped at
 * 80% of it, k6 at 87% of its core, p99 21 and 30 ms; see docs/findings/2026-11-25-soak.md for the share that holds.
 */
export const K6_RATE_SHARE = 0.5;
// Within this share of what it was asked, k6 kept up: the server's ceiling is the lower.
const K6_KEPT_UP = 0.97;

/**
 * The sustained run's rate under SOAK_RATE=auto, from CEILING_RUNS ceiling runs: the lower of AUTO_RATE_SHARE of the
 * median of the server's ceilings and K6_RATE_SHARE of the median of k6's. A median, so that one run the machine
 * disturbed (another job, a GC at the wrong moment) does not set the rate of minutes of load.
 * @param {Array<{server_rps: number, k6_rps: number}>} runs one a ceiling run: the native tool's req/s and what k6 started
 *   (req/s) when asked for it
 * @returns {{server_rps: number, k6_rps: number, limit: 'server'|'k6', rate: number}} the medians (req/s), which of them
 *   was the lower (k6 when it started under 97% of the server's), and the rate (req/s, an integer of at least 1)
 * @throws {BenchError} when there is no run, or a figure is not a positive number
 */
export function autoRate(runs) {
  if (!Array.isArray(runs) || runs.length === 0) throw new BenchError('SOAK_RATE=auto: no ceiling run to choose the rate from');
  for (const [i, run] of runs.entries()) {
    for (const key of ['server_rps', 'k6_rps']) {
      if (!(Number.isFinite(run?.[key]) && run[key] > 0)) throw new BenchError(`SOAK_RATE=auto: ceiling run ${i + 1}'s ${key} is ${run?.[key]}, not a positive number`);
    }
  }
  const serverRps = median(runs.map((r) => r.server_rps));
  const k6Rps = median(runs.map((r) => r.k6_rps));
  return {
    server_rps: serverRps, k6_rps: k6Rps, limit: k6Rps < K6_KEPT_UP * serverRps ? 'k6' : 'server',
    rate: Math.max(1, Math.round(Math.min(AUTO_RATE_SHARE * serverRps, K6_RATE_SHARE * k6Rps))),
  };
}

// SOAK_RATE: `auto` (the rate the ceilings measured before the run give), `closed` (VUS looping), or req/s.
const rate = makeValidator((input) => {
  const value = String(input).trim();
  if (value === 'auto' || value === 'closed') return value;
  if (/^[1-9][0-9]*$/.test(value) && Number(value) <= 1e6) return Number(value);
  throw new Error('must be auto, closed, or requests a second (an integer from 1 to 1000000)');
});

// The soak's MODE is a list of modes (bench/modes.js), loaded one after the other; its `both` is every mode that runs in
// cleartext too (not json-h2, which needs TLS=1), not the server's MODE=both (a listener set).
const modes = makeValidator((input) => {
  const value = String(input).trim();
  if (value === 'both') return [...CLEARTEXT_MODE_NAMES];
  const items = value.split(',').map((x) => x.trim()).filter(Boolean);
  if (items.length === 0 || items.some((x) => !MODE_NAMES.includes(x))) throw new Error(`must be both or a comma-separated list of ${MODE_NAMES.join(', ')}`);
  return [...new Set(items)];
});

/**
 * The soak job's settings, by variable name. What each one means, its unit and default are in
 * soakSettingSpecs (each spec's `desc`); docs/soak.md's table is generated from them (npm run docs).
 * @typedef {object} SoakSettings
 * @property {string[]} MODE
 * @property {boolean} SOAK
 * @property {string} SOAK_DURATION k6 duration
 * @property {'auto'|'closed'|number} SOAK_RATE req/s of the open model, or how it is chosen
 * @property {string} CEILING_DURATION k6 duration
 * @property {number} CEILING_RUNS
 * @property {boolean} TLS
 * @property {string} WARMUP k6 duration
 * @property {number} VUS
 * @property {number} WORKERS
 * @property {boolean} FAULTS
 * @property {string} REQUEST_TIMEOUT k6 duration
 * @property {string} FAULT_DURATION k6 duration
 * @property {number} FAULT_WORKERS
 * @property {number} FAULT_REPEATS
 * @property {number} RSS_GROWTH_PCT %
 * @property {number} RSS_SLOPE_MIB_PER_MIN MiB/min
 * @property {string} K6_BIN
 * @property {string} RESULTS_DIR
 */

/**
 * The soak job's settings as envalid specs, by variable name, in the order the report and docs/soak.md
 * list them. Each spec has a `desc` (what it does, its unit), maybe an `example`, and, where the default
 * depends on the machine, a `defaultText` the docs show instead of it (withDefaultText). Reading them
 * needs no environment: scripts/gen-docs.js renders docs/soak.md's table from them.
 * @param {ReturnType<typeof splitCores>} [cores] how cores are shared (default: this process's, from splitCores)
 * @returns {Record<string, object>} envalid validators by variable name
 */
export function soakSettingSpecs(cores = splitCores(allowedCpus())) {
  return {
    MODE: withDefaultText(modes({
      default: [...CLEARTEXT_MODE_NAMES],
      desc: `modes to load, one after the other: \`both\` (${CLEARTEXT_MODE_NAMES.map((m) => `\`${m}\``).join(' then ')}) or a `
        + `comma-separated list of ${MODE_NAMES.map((m) => `\`${m}\``).join(', ')} (\`json-h2\` with TLS=1)`,
      example: 'grpc',
    }), '`both`'),
    SOAK: bool({ default: true, desc: 'run the sustained runs; `false` runs the fault runs alone' }),
    SOAK_DURATION: duration({ minMs: 1000 })({
      default: '5m',
      desc: 'measured sustained run per mode (k6 duration, at least 1s)',
      example: '30m',
    }),
    SOAK_RATE: rate({
      default: 'auto',
      desc: 'the sustained run\'s load. `auto`: open model (k6 `constant-arrival-rate`, VUS VUs made up front) at the lower of '
        + `${AUTO_RATE_SHARE * 100}% of the server's ceiling (wrk or h2load at VUS connections) and ${K6_RATE_SHARE * 100}% of k6's own `
        + '(the rate k6 starts when asked for the server\'s), each the median of CEILING_RUNS runs of CEILING_DURATION on the same server '
        + 'after the warm-up; '
        + 'a number: open model at that many requests a second; `closed`: VUS looping as fast as answers come (no ceiling runs)',
      example: '4000',
    }),
    CEILING_DURATION: duration({ minMs: 1000 })({
      default: '15s',
      desc: 'each ceiling run of SOAK_RATE=auto, the native tool\'s and k6\'s alike (k6 duration, at least 1s)',
    }),
    CEILING_RUNS: positiveInt({
      default: 3,
      desc: 'ceiling runs of SOAK_RATE=auto per mode, each the native tool then k6; the rate comes from their medians, and the '
        + 'report\'s JSON keeps every run',
    }),
    TLS: sharedSpec('TLS', 'soak', cores),
    WARMUP: sharedSpec('WARMUP', 'soak', cores),
    VUS: sharedSpec('VUS', 'soak', cores),
    WORKERS: sharedSpec('WORKERS', 'soak', cores),
    REQUEST_TIMEOUT: sharedSpec('REQUEST_TIMEOUT', 'soak', cores),
    FAULTS: bool({ default: true, desc: 'run the fault runs' }),
    // The kill needs load before and after it: at least a second each side.
    FAULT_DURATION: duration({ minMs: 2000 })({
      default: '30s',
      desc: 'k6 run of one fault run, a worker killed with SIGKILL at its midpoint (k6 duration, at least 2s: load on each side of the kill)',
    }),
    FAULT_WORKERS: positiveInt({
      default: 2,
      desc: 'server workers of the fault runs; the default keeps one serving through the kill',
    }),
    FAULT_REPEATS: positiveInt({
      default: 3,
      desc: 'fault runs per mode, each on a fresh server; the report gives their median and min–max',
    }),
    RSS_GROWTH_PCT: positiveNumber({
      default: 10,
      desc: 'growth of a worker\'s median RSS, last minute vs first (%), at which it is \'growing\'',
    }),
    RSS_SLOPE_MIB_PER_MIN: positiveNumber({
      default: 1,
      desc: 'fitted RSS slope (MiB/min) under which a worker can be \'stable\' (rssTrend in bench/records/soak.js)',
    }),
    K6_BIN: sharedSpec('K6_BIN', 'soak', cores),
    RESULTS_DIR: sharedSpec('RESULTS_DIR', 'soak', cores),
  };
}

/** Names of the soak job's settings, in the order the report lists them. */
export const SOAK_SETTING_NAMES = Object.freeze(Object.keys(soakSettingSpecs(splitCores([]))));

/**
 * Reads and checks the soak job's settings.
 * @param {Record<string, string|undefined>} [env] default `process.env`
 * @returns {SoakSettings}
 * @throws {BenchError} ERR_BENCH, naming every invalid variable in one line
 */
export function readSoakSettings(env = process.env) {
  const settings = readEnv(env, soakSettingSpecs(), BenchError);
  if (!settings.SOAK && !settings.FAULTS) throw new BenchError('invalid setting SOAK="false" with FAULTS="false": nothing to run');
  const gap = tlsGap(settings.MODE, settings.TLS, 'MODE');
  if (gap) throw new BenchError(gap);
  // envalid gives a proxy; a plain copy goes into the JSON report as it is.
  return { ...settings };
}

