// Settings of the main job (bench.sh), read from the environment and checked before anything starts.
import { readFileSync } from 'node:fs';
import { bool, makeValidator, str } from 'envalid';
import { positiveInt, readEnv } from '../server/env.js';
import { SCENARIOS } from '../proto/payload.js';
import { MODE_NAMES, MODES } from './modes.js';
import { BenchError } from './errors.js';
import { hostPort } from './hosts.js';
import { linkSpec, PROFILES, rate, rttMs } from './network.js';
import { DEFAULTS as HOSTS } from '../config.js';

// k6's duration syntax (https://grafana.com/docs/k6/latest/using-k6/k6-options/reference/#duration), e.g. 30s, 1m30s, 500ms.
const DURATION_MS = { ms: 1, s: 1000, m: 60000, h: 3600000 };

/**
 * Milliseconds in a k6 duration.
 * @param {string} text e.g. '1m30s'
 * @returns {number} ms
 * @throws {Error} when the text is not a k6 duration
 */
export function durationMs(text) {
  if (!/^([0-9]+(\.[0-9]+)?(ms|s|m|h))+$/.test(text)) throw new Error('must be a k6 duration such as 20s, 1m or 1m30s');
  let ms = 0;
  for (const [, n, , unit] of text.matchAll(/([0-9]+(\.[0-9]+)?)(ms|s|m|h)/g)) ms += Number(n) * DURATION_MS[unit];
  return ms;
}

const duration = ({ allowZero }) => makeValidator((input) => {
  if (durationMs(String(input)) === 0 && !allowZero) throw new Error('must be longer than 0');
  return String(input);
});

/**
 * CPUs this process may run on, from /proc/self/status (Linux), e.g. [0, 1].
 * @returns {number[]} ids; empty when unknown
 */
export function allowedCpus() {
  try {
    const list = readFileSync('/proc/self/status', 'utf8').match(/^Cpus_allowed_list:\s*(.+)$/m)?.[1] ?? '';
    return list.split(',').flatMap((part) => {
      const [from, to = from] = part.split('-').map(Number);
      return Array.from({ length: to - from + 1 }, (_, i) => from + i);
    });
  } catch {
    return [];
  }
}

/**
 * How cores are shared: with two or more, k6 runs on the last one and the
 * server on the others, each pinned with taskset; with one, nothing is pinned.
 * @param {number[]} cpus allowed CPU ids
 * @returns {{serverCpus?: string, k6Cpus?: string, serverCoreCount: number, k6CoreCount: number, description: string}}
 */
export function splitCores(cpus) {
  if (cpus.length < 2) {
    return { serverCoreCount: 1, k6CoreCount: 1, description: 'one core: server and k6 share it, not pinned' };
  }
  const server = cpus.slice(0, -1);
  const k6 = cpus.at(-1);
  return {
    serverCpus: server.join(','),
    k6Cpus: String(k6),
    serverCoreCount: server.length,
    k6CoreCount: 1,
    description: `server pinned to cpu ${server.join(',')}, k6 pinned to cpu ${k6} (taskset)`,
  };
}

const listOf = (choices) => makeValidator((input) => {
  const items = String(input).split(',').map((x) => x.trim()).filter(Boolean);
  const unknown = items.filter((x) => !choices.includes(x));
  if (items.length === 0 || unknown.length) throw new Error(`must be a comma-separated list of ${choices.join(', ')}`);
  return [...new Set(items)];
});

/**
 * @typedef {object} BenchSettings
 * @property {number} VUS k6 virtual users, the same for each mode (closed model)
 * @property {number} REPEATS measured runs per mode, interleaved; the report gives their median and min-max
 * @property {string} DURATION measured k6 run per mode and repeat (k6 duration)
 * @property {string} WARMUP k6 run before each measured one, left out of the figures ('0s' skips it)
 * @property {number} WORKERS server cluster workers (default: one per server core)
 * @property {string[]} MODES modes to measure, in report order (default http,grpc)
 * @property {string[]} SCENARIO payload scenarios, one table each (default user)
 * @property {'reuse'|'per-request'} CONNECTIONS connection policy of both modes
 * @property {boolean} CAPACITY also load each server with wrk (HTTP) or h2load (gRPC) for DURATION, pinned like k6
 * @property {boolean} DECOMPOSE after the k6 runs, load every listener of one server (MODE=all) with wrk/h2load
 *   to separate encoding, transport and framework effects (bench/decompose.js)
 * @property {boolean} VERIFY_BYTES capture each measured run with dumpcap/tshark and compare TCP payload bytes with k6's counters
 * @property {number|undefined} RATE open model: k6 starts RATE requests a second (constant-arrival-rate); unset: closed model
 * @property {string} NETWORK network profile (bench/network.js PROFILES): loopback (default), lan, wan, mobile
 * @property {number|undefined} BANDWIDTH link bandwidth both ways (bit/s, from e.g. 10mbit); overrides the profile's
 * @property {number|undefined} DOWN server-to-client bandwidth (bit/s); overrides BANDWIDTH
 * @property {number|undefined} UP client-to-server bandwidth (bit/s); overrides BANDWIDTH
 * @property {number|undefined} RTT added round-trip time (ms); overrides the profile's
 * @property {import('./network.js').LinkSpec|null} link the emulated link (null: loopback)
 * @property {'local'|'remote'} TARGET local: the job starts the server; remote: servers already running
 *   at REMOTE_HTTP_HOST / REMOTE_GRPC_HOST
 * @property {string} REMOTE_HTTP_HOST, REMOTE_GRPC_HOST host:port of the remote servers (TARGET=remote)
 * @property {string} REMOTE_ADMIN_HOST host:port of the remote server's admin endpoint; '' leaves the server rows unmeasured
 * @property {boolean} VERBOSE k6's own output on the terminal too (it always goes to results/k6-<run>.log)
 * @property {string} K6_BIN path of the k6 binary (bench.sh sets it)
 * @property {string} RESULTS_DIR folder for summaries, dashboards and reports (relative to the repository, or absolute)
 */

/**
 * Reads and checks the main job's settings.
 * @param {Record<string, string|undefined>} [env] default `process.env`
 * @returns {BenchSettings}
 * @throws {BenchError} naming every invalid variable
 */
export function readBenchSettings(env = process.env) {
  const cores = splitCores(allowedCpus());
  const settings = readEnv(env, {
    VUS: positiveInt({ default: 32 }),
    REPEATS: positiveInt({ default: 3 }),
    DURATION: duration({ allowZero: false })({ default: '8s' }),
    WARMUP: duration({ allowZero: true })({ default: '2s' }),
    WORKERS: positiveInt({ default: cores.serverCoreCount }),
    MODES: listOf(MODE_NAMES)({ default: [...MODE_NAMES] }),
    SCENARIO: listOf(Object.keys(SCENARIOS))({ default: ['user'] }),
    CONNECTIONS: str({ choices: ['reuse', 'per-request'], default: 'reuse' }),
    RATE: positiveInt({ default: undefined }),
    CAPACITY: bool({ default: false }),
    VERIFY_BYTES: bool({ default: false }),
    DECOMPOSE: bool({ default: false }),
    NETWORK: str({ choices: Object.keys(PROFILES), default: 'loopback' }),
    BANDWIDTH: rate({ default: undefined }),
    DOWN: rate({ default: undefined }),
    UP: rate({ default: undefined }),
    RTT: rttMs({ default: undefined }),
    TARGET: str({ choices: ['local', 'remote'], default: 'local' }),
    // Each mode's remote host:port (REMOTE_HTTP_HOST, REMOTE_GRPC_HOST), default from config.js.
    ...Object.fromEntries(Object.values(MODES).map(({ hostVars: { remote } }) => [remote, hostPort({ default: HOSTS[remote] })])),
    REMOTE_ADMIN_HOST: hostPort({ default: '' }),
    VERBOSE: bool({ default: false }),
    K6_BIN: str({ default: 'k6' }),
    RESULTS_DIR: str({ default: 'results' }),
  }, BenchError);
  const link = linkSpec(settings);
  if (link && settings.TARGET === 'remote') {
    throw new BenchError('TARGET=remote loads servers on another machine over the real link; NETWORK, BANDWIDTH, DOWN, UP and RTT '
      + 'emulate a link to a local server: set one or the other');
  }
  if (settings.DECOMPOSE && (link || settings.TARGET === 'remote')) {
    throw new BenchError('DECOMPOSE=1 loads every listener of a local server on loopback: run it without NETWORK/BANDWIDTH/RTT and TARGET=remote');
  }
  return { ...settings, link };
}
