// The fault matrix's settings (bench/commands/faults.js; docs/faults.md's table is generated from the specs).
import { positiveInt, readEnv, wholeNumber } from '../../server/env.js';
import { serverSettingSpecs } from '../../server/settings.js';
import { BenchError } from '../errors.js';
import { DEFAULT_FAULTS, FAULT_NAMES, STREAM_FAULTS } from '../faults/names.js';
import { tlsGap } from '../modes.js';
import { allowedCpus, splitCores } from './cores.js';
import { OWN_SETTING_NAMES, ownServiceGap, sharedSpec } from './shared.js';
import { duration, listOf } from './validators.js';

/**
 * The fault matrix's settings, as envalid specs (scripts/gen-docs.js renders them in docs/faults.md).
 * @param {{serverCoreCount: number}} [cores] how cores are shared (default: this process's, from splitCores)
 * @returns {Record<string, object>}
 */
export function faultSettingSpecs(cores = splitCores(allowedCpus())) {
  // The server's own specs of the server settings the matrix sets: one validator, one default, one meaning.
  const server = serverSettingSpecs();
  return {
    FAULTS: listOf(FAULT_NAMES)({
      default: [...DEFAULT_FAULTS],
      desc: `faults to inject, comma-separated from ${FAULT_NAMES.map((f) => `\`${f}\``).join(', ')} (bench/faults/registry.js); `
        + `${STREAM_FAULTS.map((f) => `\`${f}\``).join(', ')} needs RPC, a streaming own RPC, and is not in the default list`,
    }),
    MODES: sharedSpec('MODES', 'faults', cores),
    FAULT_DURATION: duration({ minMs: 8000 })({ default: '12s', desc: 'k6 run of one cell, the fault injected during it (k6 duration, at least 8s)' }),
    VUS: sharedSpec('VUS', 'faults', cores),
    WORKERS: sharedSpec('WORKERS', 'faults', cores),
    REQUEST_TIMEOUT: sharedSpec('REQUEST_TIMEOUT', 'faults', cores),
    TLS: sharedSpec('TLS', 'faults', cores),
    IDLE_CONNECTIONS: positiveInt({ default: 10000, desc: 'connections the idle-connections fault opens on the loaded port' }),
    SLOW_STREAM_READERS: positiveInt({
      default: 256,
      desc: 'streams the slow-stream-readers fault opens, all at once a second into the load, and holds until a second before its end',
    }),
    // The own streaming RPC of slow-stream-readers (docs/streaming.md), served by each cell's server beside the demo.
    ...Object.fromEntries(OWN_SETTING_NAMES.map((name) => [name, sharedSpec(name, 'faults', cores)])),
    SLOW_READERS_CONNECTIONS: positiveInt({
      default: 64,
      desc: 'connections the slow-readers-max fault opens, each with H2_MAX_CONCURRENT_STREAMS unread 1 MiB answers; its cell\'s '
        + 'server takes that many per worker (MAX_CONNECTIONS), so that the fault holds as much as the cap allows',
    }),
    WORKER_MEMORY_MB: wholeNumber(0, 16_777_216)({
      default: 512,
      desc: 'each cell\'s server budget per worker (the server\'s WORKER_MEMORY_MB): a container\'s size, which the memory faults '
        + 'reach on any machine; 0 leaves the server\'s default, derived from the machine\'s memory',
    }),
    H2_MAX_CONCURRENT_STREAMS: server.H2_MAX_CONCURRENT_STREAMS,
    SHUTDOWN_TIMEOUT_MS: server.SHUTDOWN_TIMEOUT_MS,
    H2_IDLE_PING_MS: server.H2_IDLE_PING_MS,
    VERBOSE: sharedSpec('VERBOSE', 'faults', cores),
    K6_BIN: sharedSpec('K6_BIN', 'faults', cores),
    RESULTS_DIR: sharedSpec('RESULTS_DIR', 'faults', cores),
  };
}

/**
 * @typedef {object} FaultSettings
 * @property {string[]} FAULTS
 * @property {string[]} MODES
 * @property {string} FAULT_DURATION k6 duration
 * @property {number} VUS
 * @property {number} WORKERS
 * @property {string} REQUEST_TIMEOUT k6 duration
 * @property {boolean} TLS
 * @property {number} IDLE_CONNECTIONS
 * @property {number} SLOW_STREAM_READERS
 * @property {string} [PROTO]
 * @property {string} [PROTO_PATH]
 * @property {string} [RPC]
 * @property {string} [REQUEST]
 * @property {string} [RESPONSE]
 * @property {number} SLOW_READERS_CONNECTIONS
 * @property {number} WORKER_MEMORY_MB MiB
 * @property {number} H2_MAX_CONCURRENT_STREAMS
 * @property {number} SHUTDOWN_TIMEOUT_MS ms
 * @property {number} H2_IDLE_PING_MS ms
 * @property {boolean} VERBOSE
 * @property {string} K6_BIN
 * @property {string} RESULTS_DIR
 */

/**
 * Reads and checks the fault matrix's settings.
 * @param {Record<string, string|undefined>} [env] default `process.env`
 * @returns {FaultSettings}
 * @throws {BenchError} naming every invalid variable
 */
export function readFaultSettings(env = process.env) {
  // A plain copy: envalid's object refuses changes, and the CLI sets K6_BIN.
  const settings = /** @type {FaultSettings} */ ({ ...readEnv(env, faultSettingSpecs(), BenchError) });
  const gap = tlsGap(settings.MODES, settings.TLS, 'MODES') ?? ownServiceGap(settings, env);
  if (gap) throw new BenchError(gap);
  const needsRpc = settings.FAULTS.filter((f) => STREAM_FAULTS.includes(f));
  if (needsRpc.length && !settings.RPC) {
    throw new BenchError(`FAULTS=${needsRpc.join(',')} opens streams of an own streaming RPC: set RPC (and PROTO, RESPONSE), e.g. `
      + 'a server stream as docs/streaming.md shows, or leave it out of FAULTS');
  }
  return settings;
}

