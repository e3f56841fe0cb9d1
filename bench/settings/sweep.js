// The sweep's settings (npm run sweep, bench/commands/sweep.js; docs/sweep.md's table is generated from the specs).
// Each cell of the sweep is one main-job link (bench/settings/network.js's units): its settings are turned into the
// main job's for the cell (cellEnv), so that the main job's own checks and defaults apply to every cell.
import { bool, makeValidator } from 'envalid';
import { positiveInt, readEnv, withDefaultText } from '../../server/env.js';
import { BenchError } from '../errors.js';
import { parseRate, parseRttMs } from './network.js';
import { OWN_SETTING_NAMES, ownServiceGap, sharedSpec } from './shared.js';
import { allowedCpus, splitCores } from './cores.js';
import { duration } from './validators.js';

/** What this machine can emulate at most: past these, the map's cells are predicted only (docs/sweep.md). */
export const EMULATION_LIMITS = Object.freeze({ bandwidth_bps: 10e9, rtt_ms: 300, vus: 10000 });

/**
 * envalid validator of a comma-separated list, each item parsed by `parse` (which throws with the message for one
 * item), sorted ascending and without duplicates.
 * @param {(text: string) => number} parse
 * @param {string} what how an item reads, for the message
 */
const numbers = (parse, what) => makeValidator((input) => {
  const items = String(input).split(',').map((x) => x.trim()).filter(Boolean);
  if (items.length === 0) throw new Error(`must be a comma-separated list of ${what}`);
  const values = items.map((item) => {
    try {
      return parse(item);
    } catch (err) {
      throw new Error(`${JSON.stringify(item)} ${err.message}`, { cause: err });
    }
  });
  return [...new Set(values)].sort((a, b) => a - b);
});

const count = (max) => (text) => {
  if (!/^[0-9]+$/.test(text) || Number(text) < 1 || Number(text) > max) throw new Error(`must be a whole number from 1 to ${max}`);
  return Number(text);
};

/**
 * The sweep's settings, by variable name (their meaning: sweepSettingSpecs).
 * @typedef {object} SweepSettings
 * @property {number[]} SWEEP_BANDWIDTH bit/s, ascending
 * @property {number[]} SWEEP_RTT ms, ascending
 * @property {number[]} SWEEP_VUS ascending (closed model)
 * @property {number[]|undefined} SWEEP_RATE req/s, ascending (open model; replaces SWEEP_VUS)
 * @property {string[]} SCENARIO
 * @property {string|undefined} PROTO an own service (docs/own-message.md): with RPC, the sweep maps that RPC in place of SCENARIO
 * @property {string|undefined} PROTO_PATH
 * @property {string|undefined} RPC
 * @property {string|undefined} REQUEST
 * @property {string|undefined} RESPONSE
 * @property {'reuse'|'per-request'} CONNECTIONS
 * @property {string} DURATION k6 duration
 * @property {string} WARMUP k6 duration
 * @property {number} REPEATS
 * @property {number} WORKERS
 * @property {string} REQUEST_TIMEOUT k6 duration
 * @property {boolean} VERBOSE
 * @property {string} K6_BIN
 * @property {string} RESULTS_DIR
 */

/**
 * The sweep's settings as envalid specs, by variable name, in the order docs/sweep.md lists them.
 * @param {ReturnType<typeof splitCores>} [cores] how cores are shared (default: this process's)
 * @returns {Record<string, object>} envalid validators by variable name
 */
export function sweepSettingSpecs(cores = splitCores(allowedCpus())) {
  return {
    SWEEP_BANDWIDTH: withDefaultText(numbers(parseRate, 'rates such as 1mbit,20mbit,1gbit')({
      default: [1e6, 5e6, 20e6, 100e6],
      desc: 'link bandwidths, both ways, comma-separated in tc\'s bit units (as BANDWIDTH); one column of each heat map each',
      example: '1mbit,2mbit,5mbit,20mbit,100mbit,1gbit',
    }), '`1mbit,5mbit,20mbit,100mbit`'),
    SWEEP_RTT: withDefaultText(numbers(parseRttMs, 'round-trip times such as 1ms,20ms,60ms')({
      default: [20, 60],
      desc: `round-trip times (ms, as RTT, each at most ${EMULATION_LIMITS.rtt_ms} ms here); one heat map each`,
      example: '1ms,20ms,60ms',
    }), '`20ms,60ms`'),
    SWEEP_VUS: numbers(count(EMULATION_LIMITS.vus), 'VU counts such as 8,64,256')({
      default: [8, 64, 256],
      desc: 'closed model: k6 VUs (concurrent clients), comma-separated; one row of each heat map each',
      example: '8,64,256',
    }),
    SWEEP_RATE: withDefaultText(numbers(count(1e6), 'rates such as 500,2000')({
      default: undefined,
      desc: 'open model instead of SWEEP_VUS: offered requests per second, comma-separated (k6 `constant-arrival-rate`, up to '
        + '4 × 64 VUs); one row of each heat map each',
      example: '500,2000',
    }), 'unset: closed model (SWEEP_VUS)'),
    SCENARIO: sharedSpec('SCENARIO', 'sweep', cores),
    ...Object.fromEntries(OWN_SETTING_NAMES.map((name) => [name, sharedSpec(name, 'sweep', cores)])),
    CONNECTIONS: sharedSpec('CONNECTIONS', 'sweep', cores),
    DURATION: duration({ minMs: 1000 })({
      default: '3s',
      desc: 'measured k6 run per mode, cell and repeat (k6 duration, at least 1s); short by default so that the default sweep '
        + 'ends within 10 minutes on 2 cores',
      example: '8s',
    }),
    WARMUP: sharedSpec('WARMUP', 'sweep', cores),
    REPEATS: positiveInt({
      default: 1,
      desc: 'measured runs per mode and cell, interleaved (HTTP, gRPC, HTTP, …); the cell\'s figures are their medians',
      example: '3',
    }),
    WORKERS: sharedSpec('WORKERS', 'sweep', cores),
    REQUEST_TIMEOUT: sharedSpec('REQUEST_TIMEOUT', 'sweep', cores),
    VERBOSE: sharedSpec('VERBOSE', 'sweep', cores),
    K6_BIN: sharedSpec('K6_BIN', 'sweep', cores),
    RESULTS_DIR: sharedSpec('RESULTS_DIR', 'sweep', cores),
  };
}

/** Names of the sweep's settings. */
export const SWEEP_SETTING_NAMES = Object.freeze(Object.keys(sweepSettingSpecs(splitCores([]))));

/**
 * Reads and checks the sweep's settings.
 * @param {Record<string, string|undefined>} [env] default `process.env`
 * @returns {SweepSettings}
 * @throws {BenchError} ERR_BENCH, naming every invalid variable in one line
 */
export function readSweepSettings(env = process.env) {
  // The map's model counts no TLS records or handshakes, and its cells run cleartext: TLS=1 is refused, not ignored.
  if (readEnv({ TLS: env.TLS }, { TLS: bool({ default: false }) }, BenchError).TLS) {
    throw new BenchError('npm run sweep runs cleartext (its model counts no TLS records or handshakes): run it without TLS=1, '
      + 'and TLS=1 bash bench.sh with BANDWIDTH and RTT for a link over TLS (docs/tls.md)');
  }
  const settings = { ...readEnv(env, sweepSettingSpecs(), BenchError) };
  const ownGap = ownServiceGap(settings, env);
  if (ownGap) throw new BenchError(ownGap);
  if (env.SWEEP_RATE !== undefined && env.SWEEP_VUS !== undefined) {
    throw new BenchError('SWEEP_RATE (open model) and SWEEP_VUS (closed model) are each a heat map\'s rows: set one of them');
  }
  const far = settings.SWEEP_RTT.filter((ms) => ms > EMULATION_LIMITS.rtt_ms);
  if (far.length) throw new BenchError(`invalid setting SWEEP_RTT: ${far.join(', ')} ms is past the ${EMULATION_LIMITS.rtt_ms} ms this machine emulates (the map predicts up to it)`);
  const fast = settings.SWEEP_BANDWIDTH.filter((bps) => bps > EMULATION_LIMITS.bandwidth_bps);
  if (fast.length) throw new BenchError(`invalid setting SWEEP_BANDWIDTH: more than ${EMULATION_LIMITS.bandwidth_bps / 1e9} Gbit/s is past what this machine emulates`);
  return settings;
}

/** The open model's VUs, as the main job gives k6 (up to 4 × VUS): enough for the rates a sweep offers. */
export const OPEN_MODEL_VUS = 64;

/**
 * The main job's environment for one measured cell of the sweep (bench/settings/bench.js reads it): its link, its
 * concurrency, its scenario; no capacity pass and no calibration (the sweep reads k6's CPU instead).
 * @param {SweepSettings & {K6_BIN: string}} settings
 * @param {{bandwidth: number, rttMs: number, vus?: number, rate?: number, scenario: string}} cell bandwidth bit/s, RTT ms;
 *   scenario: a demo scenario or built-in service by name (with RPC set, the own service's settings go instead)
 * @returns {Record<string, string>}
 */
export function cellEnv(settings, { bandwidth, rttMs, vus, rate, scenario }) {
  return {
    BANDWIDTH: `${Math.round(bandwidth)}bit`,
    RTT: String(rttMs),
    VUS: String(rate ? OPEN_MODEL_VUS : vus),
    ...(rate ? { RATE: String(rate) } : {}),
    // An own service's settings as they were given (the main job checks them again), or the scenario by name.
    ...(settings.RPC ? Object.fromEntries(OWN_SETTING_NAMES.filter((n) => settings[n] !== undefined).map((n) => [n, settings[n]])) : { SCENARIO: scenario }),
    CONNECTIONS: settings.CONNECTIONS,
    DURATION: settings.DURATION,
    WARMUP: settings.WARMUP,
    REPEATS: String(settings.REPEATS),
    WORKERS: String(settings.WORKERS),
    REQUEST_TIMEOUT: settings.REQUEST_TIMEOUT,
    VERBOSE: settings.VERBOSE ? '1' : '0',
    K6_BIN: settings.K6_BIN,
    RESULTS_DIR: settings.RESULTS_DIR,
    CAPACITY: '0',
    CALIBRATE: '0s',
  };
}
