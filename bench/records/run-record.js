// The run record: what the main job records about one measured run in its k6 summary, `bench.run`, beside k6's own
// figures. One writer (writeRunRecord, with withCapacity for a capacity pass measured after the run) and one reader
// (bench/records/summary.js figuresOf); every record the job writes carries RUN_RECORD_VERSION.
import { readFile, writeFile } from 'node:fs/promises';

/**
 * The version of the run record's shape, written into every record (`bench.run.version`). A record without one was
 * written before the record had a version: its reader then finds some figures in older places (nodeOf).
 * Raise it when a field changes its meaning or its place.
 */
export const RUN_RECORD_VERSION = 1;

/**
 * @typedef {object} RunRecord what the main job records about one measured run (`bench.run` of its k6 summary)
 * @property {number} version RUN_RECORD_VERSION when it was written; absent in a record from before it had one
 * @property {import('../provenance.js').Provenance} provenance the commit, the tools' versions, the machine, every setting
 * @property {{release: string|null, version: string, path: string}|null} node the Node release the job started the server
 *   on: release as NODE_VERSIONS lists it (null without NODE_VERSIONS), version as `node --version` says it (`v24.21.0`),
 *   path of its binary; null for a server the job did not start (TARGET=remote)
 * @property {string} [measured_at] when the measured run began (ISO 8601); absent in a record from before it was kept
 * @property {{seconds: number, wall_s: number, utilization: number}|null} k6_cpu k6's CPU over the measured run: CPU time
 *   (s), wall time (s), and their ratio over k6's cores (0..1); null when not read
 * @property {number|null} k6_interrupted iterations k6 interrupted at the end of the run (null: its output did not say)
 * @property {{rps: number|null, listener: string, duration: string, vus: number, k6_cpu_pct: number|null,
 *   server_cpu_pct: number|null, reason?: string, ended_at?: string, before_run_s?: number,
 *   machine?: import('./machine-noise.js').MachineNoise}|null} client_ceiling the same
 *   k6 script's rate against the bare listener (bench/passes/calibrate.js ClientCeiling; rps in req/s, CPU in %), with
 *   how long before the measured run it ended (s); null without one
 * @property {Array<{segment: string, cpus: string|null, summary: string, dashboard: string, requests: number, rps: number,
 *   failed: number, latency_ms: {p50: number, p90: number, p95: number, p99: number},
 *   k6_cpu: {seconds: number, wall_s: number, utilization: number}|null}>|undefined} k6_instances K6_INSTANCES > 1: each
 *   k6 instance's execution segment, cores, files and figures (req/s, ms, s); undefined for one k6 process
 * @property {string} pinning how the cores were shared between the server and k6, in words
 * @property {number} workers server workers (WORKERS)
 * @property {number|null} server_cores cores the server was pinned to; null for a server on another machine
 * @property {string} warmup the warm-up left out of the figures (k6 duration, e.g. `5s`)
 * @property {string|string[]} dashboard k6's web dashboard of the run (HTML file), or one per k6 instance
 * @property {{tool: string, rps: number, requests: number, failed: number, received_per_request: number,
 *   headers_per_request: number|null, pass?: 'auto', client_bound?: string[]}|undefined} capacity the server's rate under
 *   wrk/h2load (req/s; bytes per request): CAPACITY=1 measures it per run; CAPACITY=auto on a column's last run, with the
 *   columns that were client-bound (withCapacity); undefined without either
 * @property {{sent_bytes: number, received_bytes: number, packets: number, dropped: number}|undefined} wire TCP payload
 *   bytes each way in a capture of the run (VERIFY_BYTES=1; bytes, packets); undefined without it
 * @property {import('./server-stats.js').ServerWindow|undefined} server the server's own accounting of the measured window
 *   (replicas' combined); undefined when no admin endpoint was read
 * @property {import('./machine-noise.js').MachineNoise} machine steal and other processes' CPU on the pinned cores
 * @property {{name: string, configured: {down_bps: number, up_bps: number, rtt_ms: number}|null, shapers: object|null,
 *   limits: string[], measured: object|null, counters: {down: {bytes: number, packets: number},
 *   up: {bytes: number, packets: number}, proxy_cpu_s: number}|null}|undefined} link the emulated or real link the run
 *   went over (bit/s, ms; counters: link-layer bytes and packets of the run, toxiproxy's CPU in s); undefined on loopback
 * @property {Array<{host: string, admin: string, requests: number|null, balancer_requests: number|null}>|undefined}
 *   replicas SERVERS > 1: each replica, the requests it served in the window by its own count and by HAProxy's
 * @property {{name: string, version: string, cpu_s: number, requests: Record<string, number>}|undefined} balancer HAProxy
 *   over the run: its CPU (s) and the requests it sent to each replica; undefined without replicas
 * @property {{files: string[], interval_us: number, cpu: {main_thread_us: number|null, process_us: number},
 *   sampled_us: number, idle_us: number, by_package: Record<string, number>,
 *   functions: Array<{name: string, package: string, where: string, self_us: number}>}|undefined} profile PROFILE=1: the
 *   workers' CPU profiles summed (bench/records/profile.js ProfileTotals, µs); undefined without it
 * @property {import('../own-service.js').OwnRecord|undefined} own an own service's schema, samples and sizes; undefined for
 *   the demo's scenarios
 * @property {{streams: number, vus: number, interval_ms: number, held_s: number}|undefined} open_streams STREAMS=N: the
 *   streams k6 held open at once, the VUs they were spread over, STREAM_INTERVAL (ms), and how long k6 held them (DURATION,
 *   s: k6's test run duration adds setup()'s stream); undefined without STREAMS
 */

/** Writes a k6 summary back, as the job writes every summary (JSON, two spaces). */
const writeSummary = (file, summary) => writeFile(file, JSON.stringify(summary, null, 2));

/**
 * Writes the run record into a k6 summary and the summary to its file: the one writer of `bench.run`.
 * @param {string} file the summary's path
 * @param {{bench: object}} summary the parsed k6 summary (handleSummary's), changed in place
 * @param {Omit<RunRecord, 'version'>} record
 * @returns {Promise<string>} the file
 */
export async function writeRunRecord(file, summary, record) {
  summary.bench.run = { version: RUN_RECORD_VERSION, ...record };
  await writeSummary(file, summary);
  return file;
}

/**
 * Records a capacity pass of CAPACITY=auto in a column's last summary (`bench.run.capacity`), where CAPACITY=1 records
 * each run's: the report's capacity row then reads it as any other.
 * @param {string} file the summary
 * @param {RunRecord['capacity']} capacity measureColumnCapacity's result, with the columns that were client-bound
 * @returns {Promise<string>} the file
 */
export async function withCapacity(file, capacity) {
  const summary = JSON.parse(await readFile(file, 'utf8'));
  summary.bench.run.capacity = capacity;
  await writeSummary(file, summary);
  return file;
}

/**
 * The Node release a run's server ran on, from its record: as the server reported it (`server.node`), else as the job
 * started it (`node.version`). A record without a version (from before RUN_RECORD_VERSION) also falls back on the
 * provenance's, which was the job's own Node where it started no server.
 * @param {Partial<RunRecord>|undefined} run `bench.run`
 * @returns {string|null} e.g. `v24.21.0`; null when the record says nothing (a manual k6 run, or a server on another
 *   machine whose accounting was not read)
 */
export function nodeOf(run) {
  const recorded = run?.server?.node ?? run?.node?.version ?? null;
  if (recorded !== null || run?.version !== undefined) return recorded;
  return run?.provenance?.versions?.node ?? null;
}
