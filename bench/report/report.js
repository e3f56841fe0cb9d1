// The side-by-side report: a table of one column per mode (each the median of its
// repeated runs, with their min-max spread) and the ratio of each column to the first.
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { markdownTable } from 'markdown-table';
import { chartSvg } from './chart.js';
import { renderDecomposition } from './decomposition.js';
import { CLIENT_BOUND_PCT, readingOf } from './reading.js';
import { fileStamp, formatNumber } from '../format.js';
import { columnKey, MODES, modeLabel, nodeOfKey, onNode } from '../modes.js';
import { GZIP_LEVEL } from '../../server/compression.js';
import { formatRate } from '../settings/network.js';
import { provenanceDifferences } from './provenance.js';
import { profileBreakdown, renderBreakdown } from './profile.js';
import { replicaShares } from './summary.js';
import { spread, wideSpread } from './stats.js';

/**
 * The largest min–max range of a checked row's runs, as a fraction of their median, that passes without a warning:
 * beyond it the runs disagree (a busy machine: 6,343–10,918 HTTP RPS in one column), and the runs more than half of it
 * from the median are named (stats.js wideSpread).
 */
export const WIDE_SPREAD = 0.25;

/**
 * @typedef {object} Row one row of the report's table, and its JSON field
 * @property {string} label the row's label, also its key in `ratios`
 * @property {string} field its JSON field under `modes.<mode>` (dotted: `latency_ms.p50`)
 * @property {number} digits decimals shown in the table
 * @property {'median'|'sum'} how how repeated runs combine: failures add up, so none is hidden by a median
 * @property {boolean} [checkSpread] a headline row whose runs should agree: a range over WIDE_SPREAD of its median is
 *   warned about above the table (`wide_spread`)
 * @property {string} what what it is, for docs/report.md (generated from here by npm run docs)
 */

/**
 * Every row of the report, in table order. Rows of optional passes that no column has are left out of the table.
 * @type {ReadonlyArray<Readonly<Row>>}
 */
export const ROWS = Object.freeze([
  { label: 'RPS (req/s)', field: 'rps', digits: 0, how: 'median', checkSpread: true,
    what: 'requests / k6\'s test run duration' },
  { label: 'requests', field: 'requests', digits: 0, how: 'median',
    what: 'requests made, answered or not (`http_reqs`; for gRPC the samples of `grpc_req_failed`, one per call: k6\'s `grpc_req_duration` leaves out calls that reached their deadline), including the one request `setup()` makes' },
  { label: 'failed requests', field: 'failed', digits: 0, how: 'sum',
    what: 'HTTP: status ≥ 400 or a network error (`http_req_failed`); gRPC: a status other than OK (`grpc_req_failed`, the project\'s twin of it)' },
  { label: 'timed out requests', field: 'timed_out', digits: 0, how: 'sum',
    what: 'requests that reached `REQUEST_TIMEOUT` (default 5 s, both modes) and were ended by k6 (`requests_timed_out`); '
      + 'they are among the failed requests too. Without the timeout such a request would hang until k6\'s graceful stop, uncounted' },
  { label: 'failed checks (sampled responses)', field: 'checks_failed', digits: 0, how: 'sum',
    what: 'checks on the sampled responses (one in `SAMPLE_EVERY`=100 per VU is decoded and compared with the expected payload)' },
  { label: 'dropped iterations (open model)', field: 'dropped_iterations', digits: 0, how: 'sum',
    what: 'open model only: iterations k6 could not start for lack of VUs, i.e. the rate was not sustained' },
  { label: 'latency p50 (ms)', field: 'latency_ms.p50', digits: 2, how: 'median',
    what: 'median of `http_req_duration` (sending + waiting + receiving) or `grpc_req_duration` (the whole unary call)' },
  { label: 'latency p90 (ms)', field: 'latency_ms.p90', digits: 2, how: 'median',
    what: '90th percentile of the same' },
  { label: 'latency p95 (ms)', field: 'latency_ms.p95', digits: 2, how: 'median',
    what: '95th percentile of the same' },
  { label: 'latency p99 (ms)', field: 'latency_ms.p99', digits: 2, how: 'median',
    what: '99th percentile of the same' },
  { label: 'data sent (bytes)', field: 'data_sent_bytes', digits: 0, how: 'median',
    what: 'k6\'s counter of bytes written to its connections: payload, headers and framing' },
  { label: 'data received (bytes)', field: 'data_received_bytes', digits: 0, how: 'median',
    what: 'k6\'s counter of bytes read from its connections: payload, headers and framing' },
  { label: 'sent per request (bytes)', field: 'sent_per_request', digits: 1, how: 'median',
    what: 'data sent / requests' },
  { label: 'received per request (bytes)', field: 'received_per_request', digits: 1, how: 'median',
    what: 'data received / requests' },
  { label: 'payload per response (bytes)', field: 'payload_bytes', digits: 0, how: 'median',
    what: 'the payload alone: the JSON body as received, or the protobuf message k6 decoded, encoded again '
      + '(test/integration/payload.test.js checks it equals the bytes the server sends)' },
  { label: 'VUs', field: 'vus', digits: 0, how: 'median',
    what: 'highest number of VUs, as run' },
  { label: 'duration (s)', field: 'duration_s', digits: 1, how: 'median',
    what: 'k6\'s test run duration, as run' },
  { label: 'k6 CPU (% of its cores)', field: 'k6_cpu_pct', digits: 0, how: 'median',
    what: 'k6\'s user + system CPU time over the run / (wall time × its cores); ≥ 90% in the median run marks the column client-bound '
      + '(`client_bound`); `k6_cpu_runs` counts the runs that reached it' },
  // The server's own accounting of the measured window (bench/report/server-stats.js); the largest or worst worker where per worker.
  { label: 'requests served, server count', field: 'server_requests', digits: 0, how: 'median',
    what: 'the server\'s own count of requests over the measured window, warm-up left out (should equal k6\'s `requests`)' },
  { label: 'server CPU per request (µs)', field: 'server_cpu_us_per_request', digits: 1, how: 'median', checkSpread: true,
    what: 'CPU time (user + system) of the workers and the primary over the window / requests served' },
  { label: 'server user CPU per request (µs)', field: 'server_cpu_user_us_per_request', digits: 1, how: 'median',
    what: 'its user part' },
  { label: 'server system CPU per request (µs)', field: 'server_cpu_system_us_per_request', digits: 1, how: 'median',
    what: 'its system part' },
  { label: 'RSS peak, largest worker (MiB)', field: 'server_rss_peak_mib', digits: 1, how: 'median',
    what: 'RSS peak of the largest worker in the window, sampled every 100 ms' },
  { label: 'RSS at end, largest worker (MiB)', field: 'server_rss_end_mib', digits: 1, how: 'median',
    what: 'RSS of the largest worker at the end of the window' },
  { label: 'heap used peak, largest worker (MiB)', field: 'server_heap_peak_mib', digits: 1, how: 'median',
    what: 'V8 heap-used peak of the largest worker in the window, sampled every 100 ms' },
  { label: 'heap used at end, largest worker (MiB)', field: 'server_heap_end_mib', digits: 1, how: 'median',
    what: 'V8 heap used by the largest worker at the end of the window' },
  { label: 'event-loop delay p50, worst worker (ms)', field: 'server_eventloop_p50_ms', digits: 2, how: 'median',
    what: 'median event-loop delay of the worst worker over the window (`monitorEventLoopDelay`, its 10 ms sampling interval taken off)' },
  { label: 'event-loop delay p99, worst worker (ms)', field: 'server_eventloop_p99_ms', digits: 2, how: 'median',
    what: '99th percentile of the same' },
  { label: 'GC pause in window, all workers (ms)', field: 'server_gc_ms', digits: 1, how: 'median',
    what: 'garbage-collection pauses in the window, summed over the workers, from `perf_hooks` GC entries' },
  { label: 'GC pause per 1000 requests (ms)', field: 'server_gc_ms_per_1k_requests', digits: 2, how: 'median',
    what: 'the same per 1000 requests served' },
  { label: 'requests per worker, smallest share (%)', field: 'server_worker_share_min_pct', digits: 1, how: 'median',
    what: 'smallest share of the window\'s requests one worker served: how evenly the cluster spread the load' },
  { label: 'requests per worker, largest share (%)', field: 'server_worker_share_max_pct', digits: 1, how: 'median',
    what: 'largest such share' },
  // SERVERS > 1: the replicas behind HAProxy (bench/placement/replicas.js).
  { label: 'requests per replica, smallest share (%)', field: 'server_replica_share_min_pct', digits: 1, how: 'median',
    what: 'with `SERVERS` > 1, through HAProxy: the smallest share of the window\'s requests one replica served, by the replicas\' own counts' },
  { label: 'requests per replica, largest share (%)', field: 'server_replica_share_max_pct', digits: 1, how: 'median',
    what: 'the largest such share' },
  { label: 'balancer CPU per request (µs)', field: 'balancer_cpu_us_per_request', digits: 1, how: 'median',
    what: 'HAProxy\'s CPU time (user + system, from /proc) over the k6 run ÷ the requests the replicas served' },
  { label: 'server capacity, wrk/h2load (req/s)', field: 'capacity_rps', digits: 0, how: 'median',
    what: 'with `CAPACITY=1`: the rate wrk or h2load reached against the same server at the same concurrency' },
  { label: 'TCP payload sent, tshark (bytes)', field: 'wire_sent_bytes', digits: 0, how: 'median',
    what: 'with `VERIFY_BYTES=1`: TCP payload bytes client to server in a capture of the run (dumpcap, counted by tshark)' },
  { label: 'TCP payload received, tshark (bytes)', field: 'wire_received_bytes', digits: 0, how: 'median',
    what: 'with `VERIFY_BYTES=1`: TCP payload bytes server to client in that capture' },
  { label: 'k6 data_sent vs capture (%)', field: 'data_sent_vs_wire_pct', digits: 3, how: 'median',
    what: '(data sent / TCP payload sent − 1) × 100: how far k6\'s counter is from the wire' },
  { label: 'k6 data_received vs capture (%)', field: 'data_received_vs_wire_pct', digits: 3, how: 'median',
    what: '(data received / TCP payload received − 1) × 100' },
  // Over a link (NETWORK, BANDWIDTH, RTT, TARGET=remote): the link's own counters (bench/placement/link.js) and what they predict.
  { label: 'link throughput down, frames (Mbit/s)', field: 'link_down_mbps', digits: 3, how: 'median',
    what: 'over an emulated link: the veth\'s byte counters server to client over the k6 run ÷ its duration: '
      + 'everything that crossed the link, Ethernet/IP/TCP headers and ACKs included' },
  { label: 'link throughput up, frames (Mbit/s)', field: 'link_up_mbps', digits: 3, how: 'median',
    what: 'the same, client to server' },
  { label: 'link utilisation down (%)', field: 'link_down_util_pct', digits: 1, how: 'median',
    what: 'link throughput down ÷ the configured down bandwidth (null when not limited)' },
  { label: 'link utilisation up (%)', field: 'link_up_util_pct', digits: 1, how: 'median',
    what: 'link throughput up ÷ the configured up bandwidth' },
  { label: 'link bytes down per request (frames)', field: 'link_down_per_request', digits: 1, how: 'median',
    what: 'link-layer bytes server to client ÷ requests' },
  { label: 'link bytes up per request (frames)', field: 'link_up_per_request', digits: 1, how: 'median',
    what: 'link-layer bytes client to server ÷ requests' },
  { label: 'packets down per request', field: 'link_down_packets_per_request', digits: 2, how: 'median',
    what: 'packets server to client ÷ requests' },
  { label: 'packets up per request', field: 'link_up_packets_per_request', digits: 2, how: 'median',
    what: 'packets client to server ÷ requests' },
  { label: 'RPS ceiling from bandwidth, k6 bytes (req/s)', field: 'ceiling_k6_bytes_rps', digits: 0, how: 'median',
    what: 'min over both directions of bandwidth ÷ (8 × k6\'s bytes per request): what the payload-and-headers view predicts' },
  { label: 'RPS ceiling from bandwidth, link bytes (req/s)', field: 'ceiling_link_bytes_rps', digits: 0, how: 'median',
    what: 'the same from link bytes per request: what the link actually carries per request' },
  { label: 'RPS ceiling from latency, VUs ÷ RTT (req/s)', field: 'ceiling_latency_rps', digits: 0, how: 'median',
    what: 'closed model: VUs ÷ RTT (measured before the runs, else configured), the rate at which each VU only waits one round trip per request' },
  { label: 'RTT share of request time (%)', field: 'latency_share_pct', digits: 1, how: 'median',
    what: 'RPS ÷ that ceiling: the share of each request\'s time that is the RTT' },
  { label: 'server CPU (% of its cores)', field: 'server_cpu_pct', digits: 1, how: 'median',
    what: 'over a link: server CPU per request × RPS ÷ the server\'s cores (its accounting): how busy the server was' },
  { label: 'toxiproxy CPU (% of the server cores)', field: 'proxy_cpu_pct', digits: 1, how: 'median',
    what: 'toxiproxy\'s CPU over the run (/proc) ÷ the server\'s cores, which it shares: it stands in for the network' },
]);

const get = (object, field) => field.split('.').reduce((o, k) => o?.[k], object);

function set(object, field, value) {
  const keys = field.split('.');
  const last = keys.pop();
  let o = object;
  for (const k of keys) o = (o[k] ??= {});
  o[last] = value;
}

/**
 * Combines repeated runs of one mode: the median of each figure (failures
 * summed), and each figure's min and max in `spread`.
 * @param {import('./summary.js').ModeFigures[]} runs at least one
 * @returns {object} the figures' shape, plus `spread[field] = {min, max}`, `repeats`, `runs` (summary files),
 *   `client_bound` (the median run's k6 CPU ≥ 90% of its core) and `k6_cpu_runs` ({measured, client_bound}: the runs
 *   whose k6 CPU was measured, and of them those at ≥ 90%) and `wide_spread` (the checked rows whose runs disagree by more
 *   than WIDE_SPREAD of their median: {field, label, digits, median, min, max, range_pct, outliers: [{run (1-based, in
 *   `runs` order), file, value, off_pct (from the median)}]})
 */
export function aggregate(runs) {
  const [first] = runs;
  const combined = {
    mode: first.mode, target: first.target, host: first.host, repeats: runs.length, spread: {},
    scenario: first.scenario, connections: first.connections, model: first.model, rate: first.rate,
    // Raw and gzip runs in one column would make a median of both: `mixed`, which the shape check flags.
    compression: new Set(runs.map((r) => r.compression ?? 'off')).size > 1 ? 'mixed' : first.compression ?? 'off',
    // Likewise runs of two Node releases (summaries of two jobs) in one column: nodeMismatch flags it.
    node: new Set(runs.map((r) => r.node ?? null)).size > 1 ? 'mixed' : first.node ?? null,
    node_release: first.node_release ?? null,
  };
  for (const { field, how } of ROWS) {
    const values = runs.map((r) => get(r, field));
    const range = spread(values);
    if (!range) { set(combined, field, null); continue; }
    set(combined, field, how === 'sum' ? values.reduce((a, b) => a + (typeof b === 'number' ? b : 0), 0) : range.median);
    combined.spread[field] = { min: range.min, max: range.max };
  }
  combined.wide_spread = ROWS.filter((row) => row.checkSpread).flatMap(({ label, field, digits }) => {
    const wide = wideSpread(runs.map((r) => get(r, field)), WIDE_SPREAD);
    if (!wide) return [];
    return [{
      field, label, digits, median: wide.median, min: wide.min, max: wide.max, range_pct: wide.range * 100,
      outliers: wide.outliers.map(({ index, value, off }) => ({ run: index + 1, file: runs[index].file, value, off_pct: off * 100 })),
    }];
  });
  // Client-bound by the median run, as the column's figures are its median: one run at the limit does not make the
  // column client-bound, but the runs that reached it are counted for the reading and the notes to say so.
  const cpu = runs.map((r) => r.k6_cpu_pct).filter((v) => typeof v === 'number');
  combined.client_bound = typeof combined.k6_cpu_pct === 'number' && combined.k6_cpu_pct >= CLIENT_BOUND_PCT;
  combined.k6_cpu_runs = { measured: cpu.length, client_bound: cpu.filter((v) => v >= CLIENT_BOUND_PCT).length };
  combined.limits = runs.map((r) => r.limit).filter(Boolean);
  combined.link = first.run?.link ?? null;
  combined.runs = runs.map((r) => ({
    file: r.file, run: r.run,
    figures: { requests: r.requests, rps: r.rps, latency_ms: r.latency_ms, k6_cpu_pct: r.k6_cpu_pct, server_requests: r.server_requests },
    // The profile's function list is long: the report keeps what it shows (profileOf), the summary all of it.
  }));
  return combined;
}

/**
 * The JSON report: each mode's combined figures and every column's ratio to the first.
 * @param {Array<{key: string, runs: import('./summary.js').ModeFigures[]}>} columns in table order;
 *   the first is the baseline of the ratios (the main job passes HTTP first)
 * @param {{generatedAt?: Date, via?: {title: string, replicas: number, workers: number, balancer: string, note: string}|null}} [options]
 *   via: how the columns reached the servers when not directly (SERVERS > 1: through HAProxy to replicas)
 * @returns {{generated_at: string, scenario: string, order: string[], modes: Record<string, object>,
 *   ratios: Record<string, Record<string, number|null>>, client_bound: string[], notes: string[],
 *   reading: string[], link: object|null, provenance: object|null, k6_instances: Record<string, object[]>|null,
 *   name: string, via: object|null, replicas: Record<string, object[]>|null, compression: ReturnType<typeof compressionOf>,
 *   profile: object|null}}
 *   ratios[`${key}/${first}`][row label] = column median / first column median (with compressed columns, the pairs of
 *   ratioPairs instead); reading: plain-language sentences comparing each column with the first (of its compression); link: the link section's
 *   figures (null on loopback); provenance: what made the runs (bench/provenance.js); k6_instances: with
 *   K6_INSTANCES > 1, per column and run, the merged figures beside each k6 instance's (splitRuns); name: the
 *   report's name among a job's (its scenario, `-via-haproxy` through the balancer); via: as given; replicas: per
 *   column, each replica's share of each run and HAProxy's own count (replicasOf); compression: raw against gzip per
 *   mode (compressionOf; null without compressed columns); profile: with PROFILE=1, each column's server CPU per
 *   request by package and its top functions (profileOf)
 */
export function buildReport(columns, { generatedAt = new Date(), via = null } = {}) {
  const modes = Object.fromEntries(columns.map(({ key, runs }) => [key, aggregate(runs)]));
  const [base] = columns.map((c) => c.key);
  /** @type {Record<string, Record<string, number|null>>} */
  const ratios = {};
  const pairs = ratioPairs(columns.map((c) => c.key), modes);
  for (const [key, over] of pairs) {
    const ratio = (ratios[`${key}/${over}`] = {});
    for (const { label, field } of ROWS) {
      const x = get(modes[over], field);
      const y = get(modes[key], field);
      ratio[label] = typeof x === 'number' && typeof y === 'number' && x !== 0 ? y / x : null;
    }
  }
  const clientBound = columns.map((c) => c.key).filter((k) => modes[k].client_bound);
  const report = {
    generated_at: generatedAt.toISOString(),
    scenario: modes[base].scenario,
    // Names the report among those of one job: a scenario has two with SERVERS > 1 (direct, and through the balancer).
    name: via ? `${modes[base].scenario}-via-${via.balancer.toLowerCase()}` : modes[base].scenario,
    via,
    replicas: via ? replicasOf(modes) : null,
    link: linkOf(modes),
    provenance: provenanceOfReport(columns),
    order: columns.map((c) => c.key),
    modes,
    ratios,
    client_bound: clientBound,
    k6_instances: splitRuns(modes),
    compression: compressionOf(modes, pairs),
    profile: profileOf(modes), // PROFILE=1 (bench/report/profile.js)
    notes: [...unfairness(modes), ...nodeMismatch(modes, pairs), ...unevenWorkers(modes), ...(via ? [via.note] : []), ...notesOf(modes, clientBound)],
    reading: [], // filled below: the sentences read the report's own figures
  };
  // Sentences compare columns of the same compression; raw against gzip is the compression section's.
  report.reading = pairs.filter(([key, over]) => modes[key].compression === modes[over].compression)
    .flatMap(([key, over]) => readingOf(report, over, key));
  return report;
}

/**
 * Which column is divided by which, as [column, baseline] pairs in table order: each column by the first column of the
 * same compression and Node release (without compressed columns and NODE_VERSIONS: each by the first), each compressed
 * column by its raw one too (`grpc+gzip` by `grpc`), and each column on a later release of NODE_VERSIONS by the same
 * column on the first release listed (`grpc@node24.21.0` by `grpc@node20`: what the upgrade does). A column with none of
 * these is divided by the first.
 * @param {string[]} keys the columns, in table order
 * @param {Record<string, {compression: string, node_release?: string|null}>} modes their figures
 * @returns {Array<[string, string]>}
 */
export function ratioPairs(keys, modes) {
  /** @type {Array<[string, string]>} */
  const pairs = [];
  const firstRelease = modes[keys[0]].node_release ?? null;
  for (const key of keys.slice(1)) {
    const { compression, node_release: release = null } = modes[key];
    const first = keys.find((k) => modes[k].compression === compression && (modes[k].node_release ?? null) === release);
    const raw = compression === 'off' ? undefined : keys.find((k) => modes[k].compression === 'off' && columnKey(k, compression) === key);
    const upgraded = release !== firstRelease ? keys.find((k) => k !== key && k === onNode(key, firstRelease)) : undefined;
    if (first !== key) pairs.push([key, first]);
    if (raw) pairs.push([key, raw]);
    if (upgraded) pairs.push([key, upgraded]);
    if (first === key && !raw && !upgraded) pairs.push([key, keys[0]]);
  }
  return pairs;
}

/**
 * Raw against gzip for each column measured both ways: its median received bytes and server CPU per request
 * each way, with their min–max, and what gzip changed.
 * @param {Record<string, object>} modes the report's columns
 * @param {Array<[string, string]>} pairs ratioPairs
 * @returns {Array<{raw: string, compressed: string, compression: string, received_per_request: {raw: number|null,
 *   compressed: number|null, ratio: number|null}, server_cpu_us_per_request: {raw: number|null, compressed: number|null,
 *   added: number|null}}>|null} bytes; µs; null without a raw and compressed pair
 */
function compressionOf(modes, pairs) {
  const both = pairs.filter(([key, over]) => modes[over].compression === 'off' && modes[key].compression !== 'off'
    && columnKey(over, modes[key].compression) === key);
  if (!both.length) return null;
  const num = (v) => (typeof v === 'number' ? v : null);
  return both.map(([key, raw]) => {
    const bytes = [num(modes[raw].received_per_request), num(modes[key].received_per_request)];
    const cpu = [num(modes[raw].server_cpu_us_per_request), num(modes[key].server_cpu_us_per_request)];
    return {
      raw, compressed: key, compression: modes[key].compression,
      received_per_request: { raw: bytes[0], compressed: bytes[1], ratio: bytes[0] && bytes[1] !== null ? bytes[1] / bytes[0] : null },
      server_cpu_us_per_request: { raw: cpu[0], compressed: cpu[1], added: cpu[0] !== null && cpu[1] !== null ? cpu[1] - cpu[0] : null },
    };
  });
}

/**
 * The provenance of the report: the first run's in full, and what differs between the runs of the columns.
 * @returns {{recorded: import('../provenance.js').Provenance|null, missing: string[],
 *   differences: Array<{field: string, values: Record<string, string>}>}}
 */
function provenanceOfReport(columns) {
  const byColumn = Object.fromEntries(columns.map(({ key, runs }) => [key, runs.map((r) => r.run?.provenance)]));
  const recorded = Object.values(byColumn).flat().find(Boolean) ?? null;
  return { recorded, ...provenanceDifferences(byColumn) };
}

/**
 * The link the columns ran over, with what it predicts: null on loopback.
 * @returns {{name: string, configured: object|null, shapers: object|null, limits: string[], measured: object|null,
 *   warnings: string[], limit_hit: Record<string, string[]>}|null}
 */
function linkOf(modes) {
  const withLink = Object.values(modes).find((m) => m.link);
  if (!withLink) return null;
  const { name, configured, shapers, limits, measured } = withLink.link;
  return {
    name, configured, shapers, limits, measured,
    warnings: measured?.warnings ?? [],
    limit_hit: Object.fromEntries(Object.entries(modes).map(([k, m]) => [k, m.limits])),
  };
}

/**
 * Where each column's server CPU went (PROFILE=1): bench/report/profile.js's breakdown of each column's profiled runs, with the
 * primary's CPU and the measured CPU per request from the accounting.
 * @returns {ReturnType<typeof profileBreakdown>|null} null when no run was profiled
 */
function profileOf(modes) {
  const columns = Object.entries(modes).map(([key, mode]) => [key, mode.runs
    .filter((r) => r.run?.profile && r.figures.server_requests > 0)
    .map((r) => ({
      profile: r.run.profile,
      requests: r.figures.server_requests,
      primary_us: r.run.server?.primary ? (r.run.server.primary.cpu_user_s + r.run.server.primary.cpu_system_s) * 1e6 : null,
    }))]);
  if (!columns.some(([, runs]) => runs.length)) return null;
  const measured = Object.fromEntries(Object.entries(modes).map(([key, mode]) => [key, mode.server_cpu_us_per_request]));
  return profileBreakdown(/** @type {Array<[string, any[]]>} */ (columns), measured);
}

/**
 * Each replica's share of each run, by the replicas' own accounting and by HAProxy's count.
 * @returns {Record<string, Array<{file: string, replicas: Array<{host: string, requests: number|null, share_pct: number|null,
 *   balancer_requests: number|null}>, balancer_cpu_s: number|null}>>}
 */
function replicasOf(modes) {
  return Object.fromEntries(Object.entries(modes).map(([key, mode]) => [key, mode.runs.map((r) => {
    const replicas = r.run?.replicas ?? [];
    const shares = replicaShares(replicas);
    return {
      file: r.file,
      replicas: replicas.map((x, i) => ({
        host: x.host, requests: x.requests ?? null, share_pct: shares?.[i] ?? null, balancer_requests: x.balancer_requests ?? null,
      })),
      balancer_cpu_s: r.run?.balancer?.cpu_s ?? null,
    };
  })]));
}

/**
 * Runs split over k6 instances (K6_INSTANCES): per column, each run's merged figures and its instances'.
 * @returns {Record<string, Array<{file: string, merged: {requests: number, rps: number, p99_ms: number, k6_cpu_pct: number|null,
 *   server_requests: number|null}, instances: object[]}>>|null} null when no run was split
 */
function splitRuns(modes) {
  const split = Object.entries(modes).map(([key, mode]) => [key, mode.runs.filter((r) => r.run?.k6_instances).map((r) => ({
    file: r.file,
    merged: {
      requests: r.figures.requests, rps: r.figures.rps, p99_ms: r.figures.latency_ms.p99,
      k6_cpu_pct: r.figures.k6_cpu_pct, server_requests: r.figures.server_requests,
    },
    instances: r.run.k6_instances,
  }))]).filter(([, runs]) => runs.length);
  return split.length ? Object.fromEntries(split) : null;
}

// What must match between columns for their ratio to mean anything.
const SHAPE = [['scenario', 'payload scenario'], ['connections', 'connection policy'], ['model', 'load model'],
  ['rate', 'arrival rate'], ['vus', 'VUs'], ['compression', 'response compression']];

// Compression may differ between columns whose keys say it (`grpc+gzip` beside `grpc`): the deliberate layout of COMPRESSION=gzip.
const namesCompression = ([key, m]) => m.compression !== 'mixed' && columnKey(key.replace(/\+[a-z]+$/, ''), m.compression) === key;

/** Warnings for columns that were not measured under the same conditions. */
function unfairness(modes) {
  const entries = Object.entries(modes);
  const warnings = [];
  for (const [field, what] of SHAPE) {
    const values = new Set(entries.map(([, m]) => String(m[field])));
    if (field === 'compression' && entries.every(namesCompression)) continue;
    if (values.size > 1) {
      warnings.push(`NOT COMPARABLE: the ${what} differs (${entries.map(([k, m]) => `${k}: ${m[field]}`).join(', ')}), so the ratios mix it with the protocol.`);
    }
  }
  return warnings;
}

// A column names its Node release when its key says the release its runs record (NODE_VERSIONS: `http@node20`).
const namesNode = (key, m) => m.node !== 'mixed' && m.node_release !== null && nodeOfKey(key) === m.node_release;

/**
 * A warning when a ratio's two columns ran on different Node releases and differ in more than that, or do not name
 * their releases (summaries of two jobs), or when one column mixes releases: such a ratio mixes the runtime with the
 * protocol. The upgrade ratios of NODE_VERSIONS (`grpc@node24.21.0` by `grpc@node20`) differ in the release alone.
 * @param {Record<string, {node: string|null, node_release: string|null}>} modes
 * @param {Array<[string, string]>} pairs ratioPairs
 * @returns {string[]} none or one warning
 */
function nodeMismatch(modes, pairs) {
  const upgrade = (key, over) => namesNode(key, modes[key]) && namesNode(over, modes[over]) && onNode(key, null) === onNode(over, null);
  // A release nothing recorded (a manual k6 run) is left out: provenance names the columns without one.
  const differ = pairs.filter(([key, over]) => modes[key].node && modes[over].node
    && (modes[key].node !== modes[over].node || modes[key].node === 'mixed') && !upgrade(key, over));
  const columns = [...new Set([...differ.flat(), ...Object.keys(modes).filter((k) => modes[k].node === 'mixed')])];
  if (!columns.length) return [];
  return [`NOT COMPARABLE: the server's Node release differs (${columns.map((k) => `${k}: ${modes[k].node}`).join(', ')}), `
    + 'so the ratios mix it with the protocol.'];
}

// A worker serving more than this times its fair share (100% / workers) makes the column a measure of fewer workers.
const UNEVEN_FACTOR = 1.5;

/** Warnings for columns whose requests the cluster's workers did not share evenly. */
function unevenWorkers(modes) {
  const warnings = [];
  for (const [key, mode] of Object.entries(modes)) {
    const run = mode.runs[0]?.run;
    const workers = run?.workers * (run?.replicas?.length || 1);
    const largest = mode.server_worker_share_max_pct;
    if (!(workers >= 2) || typeof largest !== 'number' || largest <= UNEVEN_FACTOR * (100 / workers)) continue;
    warnings.push(`UNEVEN: ${key}: one worker served ${largest.toFixed(0)}% of the requests, more than ${UNEVEN_FACTOR}× the fair share `
      + `(${(100 / workers).toFixed(0)}%) of ${workers} workers. node:cluster hands out connections, not requests; `
      + 'few long-lived connections (gRPC) load few workers. GRPC_MAX_CONNECTION_AGE_MS makes clients reconnect and spread (docs/server.md).');
  }
  return warnings;
}

function notesOf(modes, clientBound) {
  const notes = [];
  for (const [key, mode] of Object.entries(modes)) {
    notes.push(`${key}: ${mode.host}, ${mode.repeats} run(s): ${mode.runs.map((r) => r.file).join(', ')}`);
    const run = mode.runs[0].run;
    if (run?.pinning) notes.push(`${key}: ${run.pinning}`);
    const dashboards = mode.runs.flatMap((r) => r.run?.dashboard ?? []);
    if (dashboards.length) notes.push(`${key}: k6 web dashboard ${dashboards.join(', ')}`);
  }
  for (const [key, mode] of Object.entries(modes)) {
    if (mode.target === 'remote' && mode.server_requests === null) {
      notes.push(`${key}: the server's own figures (CPU, memory, GC per request) were not measured: `
        + 'set REMOTE_ADMIN_HOST to the remote server\'s admin endpoint (ADMIN_PORT, ADMIN_HOST) to have them');
    }
  }
  for (const [key, mode] of Object.entries(modes)) {
    const { measured, client_bound: atLimit } = mode.k6_cpu_runs;
    if (clientBound.includes(key)) {
      notes.push(`${key}: k6 used ${CLIENT_BOUND_PCT}% or more of its core in the median run (${atLimit} of ${measured} runs), `
        + 'so the RPS is client-bound: the load generator, not the server, set the limit.');
    } else if (atLimit > 0) {
      notes.push(`${key}: k6 reached ${CLIENT_BOUND_PCT}% of its core in ${atLimit} of ${measured} runs, not in the median run: `
        + 'those runs measure k6 as much as the server.');
    }
  }
  return notes;
}

const number = formatNumber;

function cell(mode, field, digits, how) {
  const value = number(get(mode, field), digits);
  const spread = mode.spread[field];
  if (mode.repeats < 2 || how === 'sum' || !spread || number(spread.min, digits) === number(spread.max, digits)) return value;
  return `${value} (${number(spread.min, digits)}–${number(spread.max, digits)})`;
}

/**
 * The report as a Markdown table with notes below it. A cell shows the median and,
 * for repeated runs, the (min–max) spread.
 * @param {ReturnType<typeof buildReport>} report
 * @returns {string}
 */
export function renderMarkdown(report) {
  const keys = report.order;
  const heading = (k) => {
    const m = report.modes[k];
    const compressed = m.compression && m.compression !== 'off' ? ` + ${m.compression}` : '';
    const node = m.node_release ? ` · Node ${m.node}` : '';
    return `${MODES[k] ? modeLabel(k) : modeLabel(m.mode ?? k)}${compressed}${node}${m.target ? ` ${m.target}` : ''}`;
  };
  const ratioKeys = Object.keys(report.ratios);
  const header = ['', ...keys.map(heading), ...ratioKeys.map((r) => `ratio ${r}`)];
  // Rows of optional passes (capacity, capture) that no column has are left out.
  const shown = ROWS.filter(({ field }) => keys.some((k) => get(report.modes[k], field) !== null));
  const rows = shown.map(({ label, field, digits, how }) => [
    label,
    ...keys.map((k) => cell(report.modes[k], field, digits, how)),
    ...ratioKeys.map((r) => number(report.ratios[r][label], 2)),
  ]);
  const table = markdownTable([header, ...rows], { align: ['l', ...header.slice(1).map(() => 'r')] });
  const m = report.modes[keys[0]];
  const load = m.model === 'open' ? `open model, ${m.rate} req/s` : `closed model, ${m.vus} VUs`;
  const via = report.via ? ` · ${report.via.title}` : '';
  const title = `### Scenario \`${m.scenario}\`${via} · ${load} · connections: ${m.connections} · ${m.repeats} run(s) per mode\n\n`;
  const reading = report.reading.length ? `**Reading.** ${report.reading.join(' ')}\n\n` : '';
  const warnings = (report.link?.warnings ?? []).map((w) => `> **WARNING: the link is not what was asked for:** ${w}.\n\n`).join('');
  const link = report.link ? renderLink(report) : '';
  const instances = `${report.compression ? renderCompression(report) : ''}${report.replicas ? renderReplicas(report) : ''}`
    + `${report.k6_instances ? renderInstances(report) : ''}`
    + `${report.profile ? renderBreakdown(report.profile, report.order, 'Where the server\'s CPU goes') : ''}`;
  const { differences = [], missing = [], recorded = null } = report.provenance ?? {};
  const setup = differences.length
    ? `> **NOT THE SAME SETUP:** the runs compared differ in ${differences.length} recorded field(s), so the ratios mix them with the protocol:\n`
      + `${differences.map((d) => `> - \`${d.field}\`: ${Object.entries(d.values).map(([k, v]) => `${k} ${v}`).join('; ')}`).join('\n')}\n\n`
    : '';
  const unrecorded = missing.length ? [`provenance: not recorded for ${missing.join(', ')} (a manual k6 run records none)`] : [];
  const notes = [...report.notes, ...(recorded ? [provenanceLine(recorded, keys.map((k) => report.modes[k].node))] : []), ...unrecorded];
  // Under the scenario's title, so that with several scenarios it is not read as the previous one's.
  return `${warnings}${setup}${title}${link}${renderWideSpread(report)}${table}\n\n${reading}${instances}${notes.map((n) => `- ${n}`).join('\n')}\n`;
}

/** The warning above the table for columns whose runs disagree (aggregate's `wide_spread`); '' when none do. */
function renderWideSpread(report) {
  const lines = report.order.flatMap((key) => report.modes[key].wide_spread.map((w) => {
    const runs = w.outliers.map((o) => `run ${o.run} (${number(o.value, w.digits)}, ${o.off_pct > 0 ? '+' : '−'}${Math.abs(o.off_pct).toFixed(0)}%)`);
    return `> - ${w.label}, ${key}: ${number(w.min, w.digits)}–${number(w.max, w.digits)} over ${report.modes[key].repeats} runs, `
      + `${w.range_pct.toFixed(0)}% of the median ${number(w.median, w.digits)}; distrust ${runs.join(', ')}`;
  }));
  if (!lines.length) return '';
  const limit = WIDE_SPREAD * 100;
  return `> **WIDE SPREAD:** in these columns the runs disagree by more than ${limit}% of their median (max − min), `
    + 'as on a busy machine, so the median and the ratios are less certain than the table suggests. The runs named are those '
    + `more than ${limit / 2}% from the median (run N: the column's N-th summary in the notes below):\n${lines.join('\n')}\n\n`;
}

/**
 * The provenance in one line; the JSON report has all of it.
 * @param {Record<string, any>} p the first run's provenance (bench/provenance.js)
 * @param {Array<string|null>} nodes each column's server Node release: all of them are named when they differ (NODE_VERSIONS)
 */
function provenanceLine(p, nodes) {
  const commit = p.commit ? `${p.commit.slice(0, 12)}${p.dirty ? ' (uncommitted changes)' : ''}` : 'not a git checkout';
  const releases = [...new Set(nodes.filter(Boolean))];
  const node = releases.length > 1 ? releases.join(' / ') : p.versions.node;
  const versions = Object.entries({ ...p.versions, node }).map(([k, v]) => `${k} ${v ?? '?'}`).join(', ');
  const server = p.server ? `; server: ${['WORKERS', 'GRPC_CODEC', 'GRPC_CHANNELZ', 'H2_MAX_CONCURRENT_STREAMS'].map((k) => `${k}=${p.server[k]}`).join(' ')}` : '';
  return `provenance: commit ${commit}; ${versions}; ${p.machine.kernel}, ${p.machine.cpu_count} × ${p.machine.cpu_model}${server} (all settings in the JSON report)`;
}

/** Raw against gzip per mode: received bytes and server CPU per request, medians with their min–max. */
function renderCompression(report) {
  const rows = [['column', 'received per request, raw (bytes)', 'gzip (bytes)', 'gzip ÷ raw',
    'server CPU per request, raw (µs)', 'gzip (µs)', 'gzip adds (µs)']];
  for (const one of report.compression) {
    const raw = report.modes[one.raw];
    const compressed = report.modes[one.compressed];
    rows.push([`${one.raw} → ${one.compressed}`, cell(raw, 'received_per_request', 1, 'median'), cell(compressed, 'received_per_request', 1, 'median'),
      number(one.received_per_request.ratio, 3), cell(raw, 'server_cpu_us_per_request', 1, 'median'),
      cell(compressed, 'server_cpu_us_per_request', 1, 'median'), number(one.server_cpu_us_per_request.added, 1)]);
  }
  return `**Compression.** Each column measured raw and with gzip-compressed responses (zlib level ${GZIP_LEVEL} both ways), `
    + 'interleaved, all by k6: HTTP by @fastify/compress for `Accept-Encoding: gzip`; gRPC by server/grpc-gzip.js (grpc-js compresses '
    + 'no response itself) for k6\'s gRPC client, which lists gzip in `grpc-accept-encoding` on every call (docs/compression.md). '
    + 'Received bytes are as they crossed the connection; the payload row stays the payload before compression.\n\n'
    + `${markdownTable(rows, { align: ['l', 'r', 'r', 'r', 'r', 'r', 'r'] })}\n\n`;
}

/** The replicas behind the balancer: each one's share of each run, by its own count and by HAProxy's. */
function renderReplicas(report) {
  const rows = [['column', 'run', 'replica', 'requests, its own count', 'share (%)', 'requests, HAProxy\'s count']];
  for (const [key, runs] of Object.entries(report.replicas)) {
    for (const [r, run] of runs.entries()) {
      for (const [i, one] of run.replicas.entries()) {
        rows.push([key, String(r + 1), `${i + 1}: ${one.host}`, number(one.requests, 0), number(one.share_pct, 1), number(one.balancer_requests, 0)]);
      }
    }
  }
  return `**Replicas.** ${report.via.title}, each request balanced on its own (round robin, HAProxy in HTTP mode; gRPC calls are `
    + `HTTP/2 streams). Both counts include the k6 setup() request.\n\n${markdownTable(rows, { align: ['l', 'r', 'l', 'r', 'r', 'r'] })}\n\n`;
}

/** The k6 instances of split runs: each instance's figures, then the merged ones, which the table above shows. */
function renderInstances(report) {
  const rows = [['column', 'run', 'k6 instance (segment, cpu)', 'requests', 'RPS (req/s)', 'p99 (ms)', 'k6 CPU (% of its core)', 'server count']];
  for (const [key, runs] of Object.entries(report.k6_instances)) {
    for (const [r, run] of runs.entries()) {
      for (const [i, one] of run.instances.entries()) {
        rows.push([key, String(r + 1), `${i + 1}: ${one.segment}, cpu ${one.cpus ?? 'any'}`, number(one.requests, 0), number(one.rps, 0),
          number(one.latency_ms.p99, 2), number(one.k6_cpu ? one.k6_cpu.utilization * 100 : null, 0), '']);
      }
      rows.push([key, String(r + 1), '**merged**', number(run.merged.requests, 0), number(run.merged.rps, 0), number(run.merged.p99_ms, 2),
        number(run.merged.k6_cpu_pct, 0), number(run.merged.server_requests, 0)]);
    }
  }
  return `**k6 instances.** Each run was split over k6 processes by execution segment; merged: counters summed, `
    + `percentiles from all instances' samples (bench/passes/k6-split.js). The merged requests include each instance's setup() request.\n\n`
    + `${markdownTable(rows, { align: ['l', 'r', 'l', 'r', 'r', 'r', 'r', 'r'] })}\n\n`;
}

const rate = (bps) => (bps ? formatRate(bps) : 'not limited');

/** The link section: configured beside measured, the shapers and their limits, and what held each mode back. */
function renderLink(report) {
  const { name, configured, shapers, limits, measured, limit_hit: limitHit } = report.link;
  const lines = [];
  if (configured) {
    lines.push(`- configured (${name}): down ${rate(configured.down_bps)}, up ${rate(configured.up_bps)}, RTT ${configured.rtt_ms} ms`);
  }
  if (measured) {
    const ways = ['down', 'up'].filter((w) => measured[w])
      .map((w) => `${w} ${formatRate(measured[w].link_bps)} link layer (${formatRate(measured[w].goodput_bps)} TCP payload)`);
    lines.push(`- measured before the runs: RTT ${measured.rtt.min_ms.toFixed(2)} ms min, ${measured.rtt.median_ms.toFixed(2)} ms median`
      + `${measured.rtt.method ? ` (${measured.rtt.method})` : ''}${ways.length ? `; ${ways.join(', ')}` : ''}`);
  }
  if (shapers) {
    lines.push(`- shaped by: bandwidth ${shapers.bandwidth}, delay ${shapers.delay}`
      + `${shapers.delay !== 'none' ? ` (${shapers.delay_ms.up} ms up + ${shapers.delay_ms.down} ms down)` : ''}`);
  }
  for (const limit of limits) lines.push(`- ${limit}`);
  lines.push(`- packet loss and reordering: not emulated (they need netem${shapers?.delay === 'netem' ? '' : ', which this kernel lacks'})`);
  for (const [key, hits] of Object.entries(limitHit)) if (hits.length) lines.push(`- ${key} was held back by: ${hits.join('; ')}`);
  // The ratio a bandwidth-bound pair would show, from each way of counting bytes, beside the measured one.
  for (const [pair, ratio] of Object.entries(report.ratios)) {
    const predicted = ratio['RPS ceiling from bandwidth, link bytes (req/s)'];
    if (typeof predicted !== 'number') continue;
    lines.push(`- ${pair} RPS ratio: measured ${ratio['RPS (req/s)'].toFixed(2)}; predicted for a bandwidth-bound pair `
      + `${predicted.toFixed(2)} from link bytes per request (frames, headers and ACKs included), `
      + `${ratio['RPS ceiling from bandwidth, k6 bytes (req/s)'].toFixed(2)} from k6's bytes per request`);
  }
  return `**Link.**\n\n${lines.join('\n')}\n\n`;
}

/**
 * Writes `compare-<time>.md` and `.json` into a folder, with one table and one
 * chart (`compare-<time>-<scenario>.svg`) per scenario. The JSON holds the first
 * scenario's report at its top level (`modes.http`, `modes.grpc`, ...) and
 * every report's in `scenarios[name]` (its `name`: the scenario, with `-via-haproxy` for the run through the balancer).
 * With decompositions (DECOMPOSE=1), their tables follow and the JSON holds them in `decomposition[scenario]`.
 * @param {Array<ReturnType<typeof buildReport>>} reports one per scenario, at least one
 * @param {string} dir folder, created if missing
 * @param {{decompositions?: Array<ReturnType<typeof import('./decomposition.js').decompositionReport>>}} [extra]
 * @returns {Promise<{markdown: string, json: string, charts: string[]}>} the paths written
 */
export async function writeReports(reports, dir, { decompositions = [] } = {}) {
  await mkdir(dir, { recursive: true });
  const base = path.join(dir, `compare-${fileStamp(reports[0].generated_at)}`);
  const paths = { markdown: `${base}.md`, json: `${base}.json`, charts: [] };
  const sections = [];
  for (const report of reports) {
    const chart = `${base}-${report.name ?? report.scenario}.svg`;
    await writeFile(chart, await chartSvg(report));
    paths.charts.push(chart);
    sections.push(`${renderMarkdown(report)}\n![RPS, p99 latency and bytes per request](${path.basename(chart)})\n`);
  }
  for (const decomposition of decompositions) sections.push(renderDecomposition(decomposition));
  const tables = sections.join('\n');
  await writeFile(paths.markdown, `# JSON over HTTP vs protobuf over gRPC\n\n${tables}`);
  const scenarios = Object.fromEntries(reports.map((r) => [r.name ?? r.scenario, r]));
  const decomposition = decompositions.length ? Object.fromEntries(decompositions.map((d) => [d.scenario, d])) : undefined;
  await writeFile(paths.json, `${JSON.stringify({ ...reports[0], scenarios, decomposition }, null, 2)}\n`);
  return paths;
}
