// What each pass of the main job needs, worked out once from the job's settings (bench/settings/bench.js): a pass gets
// its plan, not the settings. A plan keeps the settings' own names (those of docs/settings.md) for what it takes as it
// is, so that a figure in a record reads back to the variable that set it. The sweep makes the same plans per point.
import { parseHost } from '../config.js';
import { remoteSettingOf } from './modes.js';
import { provenanceOf } from './provenance.js';
import { scenariosOf } from './own-service.js';
import { durationMs } from './settings/validators.js';

/** @typedef {import('./settings/bench.js').BenchSettings} BenchSettings */

/** @type {<K extends keyof BenchSettings>(settings: BenchSettings, keys: readonly K[]) => Pick<BenchSettings, K>} */
const pick = (settings, keys) => /** @type {any} */ (Object.fromEntries(keys.map((k) => [k, settings[k]])));

/**
 * What one measured cell needs (bench/passes/cell.js): the server's workers, k6's load and where its files go, the
 * samplers asked for (PROFILE, VERIFY_BYTES; CAPACITY=1 runs the capacity pass after each k6 run), and the provenance
 * every run record carries: every setting of the job.
 * @typedef {Pick<BenchSettings, 'WORKERS'|'VUS'|'RATE'|'DURATION'|'WARMUP'|'CONNECTIONS'|'REQUEST_TIMEOUT'|'K6_BIN'
 *   |'K6_INSTANCES'|'VERBOSE'|'RESULTS_DIR'|'PROFILE'|'VERIFY_BYTES'|'CAPACITY'|'STREAMS'|'STREAM_INTERVAL'> & {
 *   durationS: number, warmupS: number,
 *   provenance: (run: {pinning: string, serverEnv: Record<string, string>|null, node?: string}) => object}} CellPlan
 *   durationS, warmupS: DURATION and WARMUP in seconds; provenance: bench/provenance.js provenanceOf of the job's settings;
 *   VUS: with STREAMS, the VUs the streams are spread over (openStreamVus)
 */

/**
 * The most streams one VU holds with STREAMS: a gRPC VU's share on its one connection, kept under the server's
 * H2_MAX_CONCURRENT_STREAMS (128 by default), as test/manual/open-streams.js's Node client puts 100 on a channel.
 */
export const STREAMS_PER_VU = 100;

/**
 * The VUs STREAMS=N is spread over: VUS, or more where VUS would put more than STREAMS_PER_VU streams on one VU.
 * @param {number} streams N
 * @param {number} vus VUS
 * @returns {number}
 */
export const openStreamVus = (streams, vus) => Math.max(vus, Math.ceil(streams / STREAMS_PER_VU));

/**
 * What the client's ceiling needs (bench/passes/calibrate.js).
 * @typedef {Pick<BenchSettings, 'CALIBRATE'|'CONNECTIONS'|'K6_BIN'|'K6_INSTANCES'|'TLS'|'TLS_SESSION_TICKETS'|'VUS'|'WORKERS'>} CeilingPlan
 */

/**
 * Where the servers run (bench/placement/placement.js): loopback, an emulated link, or another machine.
 * @typedef {Pick<BenchSettings, 'TARGET'|'link'|'TLS'|'TLS_SESSION_TICKETS'|'TLS_CA'|'REMOTE_ADMIN_HOST'> & {
 *   remotes: Record<string, {authority: string, host: string, port: number}>}} PlacementPlan remotes: TARGET=remote, each
 *   mode's REMOTE_*_HOST read (config.js parseHost: authority is what k6 is given), `http`'s always ({} on this machine)
 */

/**
 * What the decomposition pass needs (bench/passes/decompose.js).
 * @typedef {Pick<BenchSettings, 'PROFILE'|'REPEATS'|'RESULTS_DIR'|'VUS'|'WORKERS'> & {durationS: number, warmupS: number}} DecompositionPlan
 */

/**
 * The main job's plan (bench/commands/run.js): what it loops over, and each pass's plan.
 * @typedef {object} RunPlan
 * @property {ReturnType<typeof scenariosOf>} scenarios
 * @property {Pick<BenchSettings, 'MODES'|'COMPRESSION'|'NODE_VERSIONS'|'REPEATS'|'CAPACITY'|'SERVERS'|'WORKERS'|'RESULTS_DIR'
 *   |'K6_INSTANCES'>} job what the loops and the report need
 * @property {CellPlan} cell
 * @property {CeilingPlan} ceiling
 * @property {PlacementPlan} placement
 * @property {DecompositionPlan|null} decomposition null: DECOMPOSE=0
 */

/**
 * Every plan of the main job, worked out in one pass over the settings: what is taken as it is first, then what is
 * read from it (durations, the scenarios' sources, the remote hosts).
 * @param {BenchSettings} settings checked (bench/settings/bench.js, which checks every REMOTE_*_HOST the modes use)
 * @returns {RunPlan}
 * @throws {Error} from config.js parseHost, for a REMOTE_*_HOST the checks let through
 */
export function runPlanOf(settings) {
  const job = pick(settings, ['MODES', 'COMPRESSION', 'NODE_VERSIONS', 'REPEATS', 'CAPACITY', 'SERVERS', 'WORKERS', 'RESULTS_DIR', 'K6_INSTANCES']);
  const ceiling = pick(settings, ['CALIBRATE', 'CONNECTIONS', 'K6_BIN', 'K6_INSTANCES', 'TLS', 'TLS_SESSION_TICKETS', 'VUS', 'WORKERS']);
  const cell = pick(settings, ['WORKERS', 'VUS', 'RATE', 'DURATION', 'WARMUP', 'CONNECTIONS', 'REQUEST_TIMEOUT', 'K6_BIN', 'K6_INSTANCES',
    'VERBOSE', 'RESULTS_DIR', 'PROFILE', 'VERIFY_BYTES', 'CAPACITY', 'STREAMS', 'STREAM_INTERVAL']);
  const decomposition = pick(settings, ['PROFILE', 'REPEATS', 'RESULTS_DIR', 'VUS', 'WORKERS']);
  const placement = pick(settings, ['TARGET', 'link', 'TLS', 'TLS_SESSION_TICKETS', 'TLS_CA', 'REMOTE_ADMIN_HOST']);
  const remote = settings.TARGET === 'remote' ? [...new Set(['http', ...settings.MODES])] : [];
  const durationS = durationMs(settings.DURATION) / 1000;
  const warmupS = durationMs(settings.WARMUP) / 1000;
  const provenance = (run) => provenanceOf({ settings, ...run });
  const scenarios = scenariosOf(settings);
  const remotes = Object.fromEntries(remote.map((mode) => {
    const name = remoteSettingOf(mode);
    return [mode, parseHost(name, /** @type {string} */ (settings[/** @type {keyof BenchSettings} */ (name)]))];
  }));
  return {
    scenarios,
    job,
    cell: { ...cell, ...(settings.STREAMS ? { VUS: openStreamVus(settings.STREAMS, settings.VUS) } : {}), durationS, warmupS, provenance },
    ceiling,
    placement: { ...placement, remotes },
    decomposition: settings.DECOMPOSE ? { ...decomposition, durationS, warmupS } : null,
  };
}

/**
 * @param {BenchSettings} settings
 * @returns {CellPlan}
 */
export const cellPlanOf = (settings) => runPlanOf(settings).cell;

/**
 * @param {BenchSettings} settings
 * @returns {PlacementPlan}
 */
export const placementPlanOf = (settings) => runPlanOf(settings).placement;

/**
 * The decomposition's plan whatever DECOMPOSE says (npm run targets runs the pass alone).
 * @param {BenchSettings} settings
 * @returns {DecompositionPlan}
 */
export const decompositionPlanOf = (settings) => /** @type {DecompositionPlan} */ (runPlanOf({ ...settings, DECOMPOSE: true }).decomposition);
