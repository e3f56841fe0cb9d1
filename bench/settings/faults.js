// The fault matrix's settings (bench/commands/faults.js; docs/faults.md's table is generated from the specs).
import { bool, str } from 'envalid';
import { positiveInt, readEnv } from '../../server/env.js';
import { BenchError } from '../errors.js';
import { FAULTS } from '../passes/faults.js';
import { MODE_NAMES } from '../modes.js';
import { duration, listOf } from './bench.js';

/**
 * The fault matrix's settings, as envalid specs (scripts/gen-docs.js renders them in docs/faults.md).
 * @returns {Record<string, object>}
 */
export function faultSettingSpecs() {
  return {
    FAULTS: listOf(Object.keys(FAULTS))({
      default: Object.keys(FAULTS),
      desc: `faults to inject, comma-separated from ${Object.keys(FAULTS).map((f) => `\`${f}\``).join(', ')} (bench/passes/faults.js)`,
    }),
    MODES: listOf(MODE_NAMES)({ default: [...MODE_NAMES], desc: 'modes to load, comma-separated (bench/modes.js)' }),
    FAULT_DURATION: duration({ minMs: 8000 })({ default: '12s', desc: 'k6 run of one cell, the fault injected during it (k6 duration, at least 8s)' }),
    VUS: positiveInt({ default: 16, desc: 'k6 virtual users (closed model)' }),
    WORKERS: positiveInt({ default: 2, desc: 'server workers: 2 keeps one serving while the other is killed or replaced' }),
    REQUEST_TIMEOUT: duration()({
      default: '5s', desc: 'how long one k6 request may take; past it, it is ended and counted as failed and as timed out',
    }),
    IDLE_CONNECTIONS: positiveInt({ default: 10000, desc: 'connections the idle-connections fault opens on the loaded port' }),
    SHUTDOWN_TIMEOUT_MS: positiveInt({ default: 10000, desc: 'the server\'s drain time (its SHUTDOWN_TIMEOUT_MS)' }),
    H2_IDLE_PING_MS: positiveInt({ default: 5000, desc: 'the server\'s idle PING sweep (its H2_IDLE_PING_MS)' }),
    VERBOSE: bool({ default: false, desc: 'k6\'s own output on the terminal too' }),
    K6_BIN: str({ default: '', desc: 'path of k6; empty: `bench/cli.js` finds or builds the pinned release' }),
    RESULTS_DIR: str({ default: 'results', desc: 'where the report and the k6 summaries go' }),
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
 * @property {number} IDLE_CONNECTIONS
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
  return /** @type {FaultSettings} */ ({ ...readEnv(env, faultSettingSpecs(), BenchError) });
}

