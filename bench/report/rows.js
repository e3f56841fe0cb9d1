// The report's rows, each a figure of a column with its JSON field, and how a column's repeated runs combine
// into them (median and spread, or sum): the registry the table, the JSON and docs/report.md derive from.
import { CLIENT_BOUND_PCT, CLIENT_BOUND_SHARE } from './reading.js';

/**
 * A share of the client's ceiling past which the ceiling is not trusted: a run cannot outrun the load generator's own
 * ceiling by more than the runs' noise, 10% (the share's ceiling and run were measured a few seconds apart), so a
 * ceiling that low was measured on a busy machine (issue 50: 528 req/s with k6 at 3% of its core, a share of 1.48).
 */
export const UNTRUSTED_SHARE = 1.1;
import { SERVER_FIELDS, SERVER_ROWS } from '../records/server-stats.js';
import { spread, wideSpread } from './stats.js';
import { DISTURBED, disturbedRuns } from './machine-noise.js';


/**
 * The largest min–max range of a checked row's runs, as a fraction of their median, that passes without a warning:
 * beyond it the runs disagree (a busy machine: 6,343–10,918 HTTP RPS in one column), and the runs more than half of it
 * from the median are named (stats.js wideSpread).
 */
export const WIDE_SPREAD = 0.25;

/**
 * What measures the rows' figures, each row naming one (`source`): docs/report.md's table gives it beside the row.
 */
export const SOURCES = Object.freeze({
  k6: 'k6\'s summary of the measured run, and its CPU (bench/k6/runner.js)',
  capacity: 'the capacity pass: wrk or h2load against the same server (bench/passes/capacity.js)',
  calibration: 'the client\'s ceiling: the same k6 run against the mode\'s bare listener (bench/passes/calibrate.js)',
  machine: '/proc/stat and /proc/<pid>/stat around the run (bench/records/machine-noise.js)',
  server: 'the server\'s own accounting, read from its admin endpoint around the run (bench/records/server-stats.js)',
  replicas: 'with SERVERS > 1: the replicas\' own counts and HAProxy\'s CPU (bench/placement/replicas.js)',
  capture: 'with VERIFY_BYTES=1: a capture of the run counted by tshark (bench/passes/wire.js)',
  link: 'over a link: its counters, its settings and toxiproxy\'s CPU (bench/placement/link.js)',
});

/**
 * @typedef {object} Row one row of the report's table, and its JSON field
 * @property {string} label the row's label, also its key in `ratios`
 * @property {string} field its JSON field under `modes.<mode>` (dotted: `latency_ms.p50`)
 * @property {number} digits decimals shown in the table
 * @property {'median'|'sum'} how how repeated runs combine: failures add up, so none is hidden by a median
 * @property {keyof typeof SOURCES} source what measures it (SOURCES)
 * @property {boolean} [checkSpread] a headline row whose runs should agree: a range over WIDE_SPREAD of its median is
 *   warned about above the table (`wide_spread`)
 * @property {string} what what it is, for docs/report.md (generated from here by npm run docs)
 */

/**
 * Every row of the report, in table order. Rows of optional passes that no column has are left out of the table.
 * @type {ReadonlyArray<Readonly<Row>>}
 */
export const ROWS = Object.freeze([
  { label: 'RPS (req/s)', field: 'rps', digits: 0, how: 'median', source: 'k6', checkSpread: true,
    what: 'requests / k6\'s test run duration' },
  // A server stream's (RPC set to one): each request is a stream, so RPS above counts streams.
  { label: 'messages/s', field: 'messages_per_s', digits: 0, how: 'median', source: 'k6', checkSpread: true,
    what: 'a stream\'s run: the messages k6 received from a server stream or sent on a client stream ÷ k6\'s test run duration, RPS then counting streams' },
  { label: 'messages per stream', field: 'messages_per_stream', digits: 1, how: 'median', source: 'k6',
    what: 'a stream\'s run: messages ÷ requests' },
  { label: 'time to first message p50 (ms)', field: 'first_message_ms.p50', digits: 2, how: 'median', source: 'k6',
    what: 'a server stream\'s run: median time from a stream\'s start to its first message, gRPC\'s in whole milliseconds ([streaming.md](streaming.md))' },
  { label: 'time to first message p99 (ms)', field: 'first_message_ms.p99', digits: 2, how: 'median', source: 'k6',
    what: '99th percentile of the same' },
  { label: 'largest gap between messages p50 (ms)', field: 'largest_gap_ms.p50', digits: 0, how: 'median', source: 'k6',
    what: 'a server stream\'s or a relay\'s run over gRPC or a WebSocket: median over the streams of each one\'s largest gap between '
      + 'two messages, timed by the scripts in whole milliseconds; not seen over SSE or NDJSON, whose body k6 returns whole ([streaming.md](streaming.md))' },
  { label: 'largest gap between messages p99 (ms)', field: 'largest_gap_ms.p99', digits: 0, how: 'median', source: 'k6',
    what: '99th percentile of the same' },
  { label: 'received per message (bytes)', field: 'received_per_message', digits: 1, how: 'median', source: 'k6',
    what: 'a server stream\'s run: data received ÷ messages, the stream\'s head and end shared out over its messages' },
  { label: 'sent per message (bytes)', field: 'sent_per_message', digits: 1, how: 'median', source: 'k6',
    what: 'a client stream\'s run: data sent ÷ messages, the stream\'s head and end shared out over its messages' },
  // Beside k6's RPS, so that its ratio stands beside k6's: the servers' own ceilings where k6 is the limit.
  { label: 'server capacity, wrk/h2load (req/s)', field: 'capacity_rps', digits: 0, how: 'median', source: 'capacity',
    what: 'the rate wrk or h2load reached against the same server at the same concurrency: the [capacity pass](#capacity-pass)' },
  // The client's ceiling: what the same k6 script reached against a server that costs next to nothing (bench/passes/calibrate.js).
  { label: 'client\'s ceiling, k6 vs bare server (req/s)', field: 'client_ceiling_rps', digits: 0, how: 'median', source: 'calibration',
    what: 'the rate the same k6 script, VUs and pinning reached against the mode\'s [bare server](#bare-server) right before each run, not measured '
      + 'for gzip columns or with `K6_INSTANCES` > 1: the [client\'s ceiling](#clients-ceiling)' },
  { label: 'share of the client\'s ceiling', field: 'client_share', digits: 2, how: 'median', source: 'calibration',
    what: `RPS ÷ the client's ceiling, which makes the column [client-bound](#client-bound) at ${CLIENT_BOUND_SHARE} or more in the median run and is not `
      + `trusted past ${UNTRUSTED_SHARE} (\`client_bound_by\`, \`client_ceiling_untrusted\`)` },
  { label: 'requests', field: 'requests', digits: 0, how: 'median', source: 'k6',
    what: 'requests made, answered or not, `setup()`\'s one included (HTTP `http_reqs`; gRPC the script\'s `grpc_req_failed` count, as k6\'s `grpc_req_duration` leaves out calls that reached their deadline)' },
  { label: 'failed requests', field: 'failed', digits: 0, how: 'sum', source: 'k6',
    what: 'HTTP: status ≥ 400 or a network error (`http_req_failed`); gRPC: a status other than OK, or a call that never went out (`grpc_req_failed`)' },
  { label: 'timed out requests', field: 'timed_out', digits: 0, how: 'sum', source: 'k6',
    what: 'requests k6 ended at `REQUEST_TIMEOUT` (default: k6\'s own 60 s), also counted as failed (HTTP `http_reqs{error_code:1050}`, gRPC `requests_timed_out`)' },
  { label: 'interrupted at the end (unanswered)', field: 'interrupted', digits: 0, how: 'sum', source: 'k6',
    what: 'requests with neither an answer nor an error when k6\'s graceful stop (30 s) ended the run, from k6\'s last progress line' },
  { label: 'failed checks (sampled responses)', field: 'checks_failed', digits: 0, how: 'sum', source: 'k6',
    what: 'checks on the sampled responses (one in `SAMPLE_EVERY`=1000 per VU is decoded and compared with the expected payload)' },
  { label: 'dropped iterations (open model)', field: 'dropped_iterations', digits: 0, how: 'sum', source: 'k6',
    what: 'open model only: iterations k6 could not start for lack of VUs, i.e. the rate was not sustained' },
  { label: 'latency p50 (ms)', field: 'latency_ms.p50', digits: 2, how: 'median', source: 'k6',
    what: 'median of `http_req_duration` (sending + waiting + receiving) or `grpc_req_duration` (the whole call); for a server '
      + 'stream, the time to its last message' },
  { label: 'latency p90 (ms)', field: 'latency_ms.p90', digits: 2, how: 'median', source: 'k6',
    what: '90th percentile of the same' },
  { label: 'latency p95 (ms)', field: 'latency_ms.p95', digits: 2, how: 'median', source: 'k6',
    what: '95th percentile of the same' },
  { label: 'latency p99 (ms)', field: 'latency_ms.p99', digits: 2, how: 'median', source: 'k6',
    what: '99th percentile of the same' },
  { label: 'data sent (bytes)', field: 'data_sent_bytes', digits: 0, how: 'median', source: 'k6',
    what: 'k6\'s counter of bytes written to its connections: payload, headers and framing' },
  { label: 'data received (bytes)', field: 'data_received_bytes', digits: 0, how: 'median', source: 'k6',
    what: 'k6\'s counter of bytes read from its connections: payload, headers and framing' },
  { label: 'sent per request (bytes)', field: 'sent_per_request', digits: 1, how: 'median', source: 'k6',
    what: 'data sent / requests' },
  { label: 'received per request (bytes)', field: 'received_per_request', digits: 1, how: 'median', source: 'k6',
    what: 'data received / requests' },
  { label: 'payload per response (bytes)', field: 'payload_bytes', digits: 0, how: 'median', source: 'k6',
    what: 'the payload alone: the JSON body as received, or the protobuf message k6 decoded, encoded again '
      + '(test/integration/payload.test.js checks it equals the bytes the server sends)' },
  { label: 'VUs', field: 'vus', digits: 0, how: 'median', source: 'k6',
    what: 'highest number of VUs, as run' },
  { label: 'duration (s)', field: 'duration_s', digits: 1, how: 'median', source: 'k6',
    what: 'k6\'s test run duration, as run' },
  { label: 'k6 CPU (% of its cores)', field: 'k6_cpu_pct', digits: 0, how: 'median', source: 'k6',
    what: `k6's user + system CPU time ÷ (wall time × its cores), which makes the column client-bound at ${CLIENT_BOUND_PCT}% or more in the median run `
      + 'where no trusted client\'s ceiling decides (`k6_cpu_runs` counts the runs that reached it)' },
  // The machine's noise on the pinned cores over the k6 run (bench/records/machine-noise.js, from /proc): what a busy shared
  // machine took from the server and k6 without a sign in their own figures.
  { label: 'steal, server cores (%)', field: 'machine_steal_server_pct', digits: 1, how: 'median', source: 'machine',
    what: `the share of the server's pinned cores' time the hypervisor gave to something else over the k6 run (\`steal\` in /proc/stat): `
      + `${DISTURBED.steal * 100}% or more makes the run [DISTURBED](#the-banners) ([Methodology](#methodology))` },
  { label: 'other processes\' CPU, server cores (%)', field: 'machine_other_server_pct', digits: 1, how: 'median', source: 'machine',
    what: `the share of the server's pinned cores' time busy with anything but the server's own processes over the k6 run: `
      + `${DISTURBED.other * 100}% or more makes the run DISTURBED (not measured over an emulated link)` },
  { label: 'steal, k6\'s cores (%)', field: 'machine_steal_k6_pct', digits: 1, how: 'median', source: 'machine',
    what: 'the same steal on k6\'s pinned cores' },
  { label: 'other processes\' CPU, k6\'s cores (%)', field: 'machine_other_k6_pct', digits: 1, how: 'median', source: 'machine',
    what: 'the same on k6\'s cores, less k6\'s own CPU' },
  // The server's own accounting of the measured window: its rows are defined beside the arithmetic that gives them.
  ...SERVER_ROWS,
  // SERVERS > 1: the replicas behind HAProxy (bench/placement/replicas.js).
  { label: 'requests per replica, smallest share (%)', field: 'server_replica_share_min_pct', digits: 1, how: 'median', source: 'replicas',
    what: 'with `SERVERS` > 1, through HAProxy: the smallest share of the window\'s requests one replica served, by the replicas\' own counts' },
  { label: 'requests per replica, largest share (%)', field: 'server_replica_share_max_pct', digits: 1, how: 'median', source: 'replicas',
    what: 'the largest such share' },
  { label: 'balancer CPU per request (µs)', field: 'balancer_cpu_us_per_request', digits: 1, how: 'median', source: 'replicas',
    what: 'HAProxy\'s CPU time (user + system, from /proc) over the k6 run ÷ the requests the replicas served' },
  { label: 'TCP payload sent, tshark (bytes)', field: 'wire_sent_bytes', digits: 0, how: 'median', source: 'capture',
    what: 'with `VERIFY_BYTES=1`: TCP payload bytes client to server in a capture of the run (dumpcap, counted by tshark)' },
  { label: 'TCP payload received, tshark (bytes)', field: 'wire_received_bytes', digits: 0, how: 'median', source: 'capture',
    what: 'with `VERIFY_BYTES=1`: TCP payload bytes server to client in that capture' },
  { label: 'k6 data_sent vs capture (%)', field: 'data_sent_vs_wire_pct', digits: 3, how: 'median', source: 'capture',
    what: '(data sent / TCP payload sent − 1) × 100: how far k6\'s counter is from the wire' },
  { label: 'k6 data_received vs capture (%)', field: 'data_received_vs_wire_pct', digits: 3, how: 'median', source: 'capture',
    what: '(data received / TCP payload received − 1) × 100' },
  // Over a link (NETWORK, BANDWIDTH, RTT, TARGET=remote): the link's own counters (bench/placement/link.js) and what they predict.
  { label: 'link throughput down, frames (Mbit/s)', field: 'link_down_mbps', digits: 3, how: 'median', source: 'link',
    what: 'over an emulated link: the veth\'s bytes server to client over the k6 run ÷ its duration, Ethernet/IP/TCP headers and ACKs included' },
  { label: 'link throughput up, frames (Mbit/s)', field: 'link_up_mbps', digits: 3, how: 'median', source: 'link',
    what: 'the same, client to server' },
  { label: 'link utilisation down (%)', field: 'link_down_util_pct', digits: 1, how: 'median', source: 'link',
    what: 'link throughput down ÷ the configured down bandwidth (null when not limited)' },
  { label: 'link utilisation up (%)', field: 'link_up_util_pct', digits: 1, how: 'median', source: 'link',
    what: 'link throughput up ÷ the configured up bandwidth' },
  { label: 'link bytes down per request (frames)', field: 'link_down_per_request', digits: 1, how: 'median', source: 'link',
    what: 'link-layer bytes server to client ÷ requests' },
  { label: 'link bytes up per request (frames)', field: 'link_up_per_request', digits: 1, how: 'median', source: 'link',
    what: 'link-layer bytes client to server ÷ requests' },
  { label: 'packets down per request', field: 'link_down_packets_per_request', digits: 2, how: 'median', source: 'link',
    what: 'packets server to client ÷ requests' },
  { label: 'packets up per request', field: 'link_up_packets_per_request', digits: 2, how: 'median', source: 'link',
    what: 'packets client to server ÷ requests' },
  { label: 'RPS ceiling from bandwidth, k6 bytes (req/s)', field: 'ceiling_k6_bytes_rps', digits: 0, how: 'median', source: 'link',
    what: 'min over both directions of bandwidth ÷ (8 × k6\'s bytes per request): what the payload-and-headers view predicts' },
  { label: 'RPS ceiling from bandwidth, link bytes (req/s)', field: 'ceiling_link_bytes_rps', digits: 0, how: 'median', source: 'link',
    what: 'the same from link bytes per request: what the link actually carries per request' },
  { label: 'RPS ceiling from latency, VUs ÷ RTT (req/s)', field: 'ceiling_latency_rps', digits: 0, how: 'median', source: 'link',
    what: 'closed model: VUs ÷ RTT (measured before the runs, else configured), the rate at which each VU waits only one round trip per request' },
  { label: 'RTT share of request time (%)', field: 'latency_share_pct', digits: 1, how: 'median', source: 'link',
    what: 'RPS ÷ that ceiling: the share of each request\'s time that is the RTT' },
  { label: 'server CPU (% of its cores)', field: 'server_cpu_pct', digits: 1, how: 'median', source: 'link',
    what: 'over a link: server CPU per request × RPS ÷ the server\'s cores (its accounting): how busy the server was' },
  { label: 'toxiproxy CPU (% of the server cores)', field: 'proxy_cpu_pct', digits: 1, how: 'median', source: 'link',
    what: 'toxiproxy\'s CPU over the run (/proc) ÷ the server\'s cores, which it shares: it stands in for the network' },
]);

/** Why a summary of a k6 run started by hand (npm run k6, then npm run compare) lacks what the main job records about a run. */
const BY_HAND = 'a k6 run started by hand records none';

/**
 * Why a run lacks one of the machine figures (bench/records/machine-noise.js): a run by hand or before the job read /proc, or the
 * reason the run recorded (not pinned, TARGET=remote, an emulated link).
 * @param {'server'|'k6'} side
 * @param {'steal'|'other'} what
 * @returns {(run: any) => string}
 */
const machineReason = (side, what) => (run) => (!run ? BY_HAND
  : run.machine?.[side]?.[`${what}_reason`] ?? (run.machine ? 'the reading recorded no figure' : 'the run recorded no reading of /proc'));

/**
 * @typedef {object} Measurement a figure of a run that the run may lack, measured beside k6's own figures, which a summary
 *   always has (bench/records/summary.js throws without them)
 * @property {string} what how the report names it, in a sentence (`k6's CPU was not measured`)
 * @property {boolean} plural whether `what` takes `were`
 * @property {string} sign the field that is null when it was not measured
 * @property {readonly string[]} fields every field of the report's columns that it gives (null then)
 * @property {boolean} onDemand a pass a setting or the job runs for some columns only (CAPACITY): not measured only in a
 *   column of a report whose other columns have it; the others are measured in every run unless they fail or a setting
 *   turns them off
 * @property {(run: any, figures: {target: string, server_requests: number|null}) => string} reason why a run lacks it, from
 *   what the run recorded (bench.run; undefined for a run by hand) and its figures
 */

/**
 * The figures a run may lack, each with the fields it gives and why it can be missing: where a column lacks one the table
 * says NOT_MEASURED (bench/format.js) in its cells, a note under the table gives the reason, and the JSON holds null in its
 * fields and the reason in `modes.<mode>.not_measured`.
 * @type {ReadonlyArray<Readonly<Measurement>>}
 */
export const MEASUREMENTS = Object.freeze([
  {
    what: 'k6\'s CPU', plural: false, sign: 'k6_cpu_pct', fields: ['k6_cpu_pct'], onDemand: false,
    // runK6 samples k6's CPU from 1 s into the run, every 250 ms (bench/k6/runner.js); a split run has it if every instance has.
    // A record with no k6_cpu at all is older than the figure; null is a run too short to sample it.
    reason: (run) => (!run ? BY_HAND : !('k6_cpu' in run) ? 'its summary records none (written before the job kept k6\'s CPU)'
      : 'the k6 run was too short to sample it'),
  },
  {
    what: 'the server\'s own figures (CPU, memory, GC per request)', plural: true, sign: 'server_cpu_us_per_request', fields: SERVER_FIELDS, onDemand: false,
    reason: (run, figures) => {
      if (figures.target === 'remote' && !run?.server) return 'set REMOTE_ADMIN_HOST to the remote server\'s admin endpoint (ADMIN_PORT, ADMIN_HOST) to have them';
      if (!run) return BY_HAND;
      if (!run.server) return 'the run recorded no server accounting';
      if (!run.server.workers?.length) return 'the server\'s admin endpoint listed no worker';
      if (figures.server_requests === 0) return 'the server counted no request in the measured window';
      return 'the server\'s admin endpoint left out some of its figures';
    },
  },
  {
    what: 'the server capacity (wrk/h2load)', plural: false, sign: 'capacity_rps', fields: ['capacity_rps'], onDemand: true,
    reason: (run) => (!run ? BY_HAND : !run.capacity ? 'no capacity pass ran for it' : 'the capacity pass recorded no rate'),
  },
  {
    what: 'the client\'s ceiling', plural: false, sign: 'client_ceiling_rps', fields: ['client_ceiling_rps', 'client_share'], onDemand: false,
    reason: (run) => (!run ? BY_HAND : run.client_ceiling?.reason ?? (run.client_ceiling ? 'the calibration recorded no rate' : 'the run recorded no calibration')),
  },
  ...[['server', 'the server\'s cores'], ['k6', 'k6\'s cores']].flatMap(([side, cores]) => [
    {
      what: `steal on ${cores}`, plural: false, sign: `machine_steal_${side}_pct`, fields: [`machine_steal_${side}_pct`], onDemand: false,
      reason: machineReason(/** @type {'server'|'k6'} */ (side), 'steal'),
    },
    {
      what: `other processes' CPU on ${cores}`, plural: false, sign: `machine_other_${side}_pct`, fields: [`machine_other_${side}_pct`],
      onDemand: false, reason: machineReason(/** @type {'server'|'k6'} */ (side), 'other'),
    },
  ]),
]);

/**
 * @typedef {object} NotMeasured one of MEASUREMENTS a column lacks, as its JSON gives it (`modes.<mode>.not_measured`)
 * @property {string} what
 * @property {boolean} plural
 * @property {string[]} fields its fields, null in the column
 * @property {string} reason why, from the column's runs (several reasons joined by `; `)
 */

/**
 * The MEASUREMENTS each column of a report lacks: those null in the column (in every run, as a median leaves nulls out) and
 * due there (a pass run on demand only where another column has it), with why.
 * @param {Record<string, ReturnType<typeof aggregate>>} modes the report's columns
 * @returns {Record<string, NotMeasured[]>} by column key, in MEASUREMENTS order
 */
export function notMeasured(modes) {
  const columns = Object.values(modes);
  return Object.fromEntries(Object.entries(modes).map(([key, mode]) => [key, MEASUREMENTS
    .filter(({ sign, onDemand }) => typeof mode[sign] !== 'number' && (!onDemand || columns.some((m) => typeof m[sign] === 'number')))
    .map(({ what, plural, fields, reason }) => ({
      what, plural, fields: [...fields],
      reason: [...new Set(mode.runs.map((r) => reason(r.run, { target: mode.target, ...r.figures })))].join('; '),
    }))]));
}

/**
 * Whether a field is null in a column because one of MEASUREMENTS is missing there (NOT_MEASURED), not because it does
 * not apply (a cleartext column's TLS handshakes, the closed model's dropped iterations: 'n/a').
 * @param {{not_measured?: NotMeasured[]}} mode a column of a report
 * @param {string} field
 * @returns {boolean}
 */
export const isNotMeasured = (mode, field) => (mode.not_measured ?? []).some((n) => n.fields.includes(field));

/**
 * The value of a dotted field (`latency_ms.p50`) of a column's figures, undefined when absent.
 * @param {object} object
 * @param {string} field
 * @returns {any}
 */
export const valueAt = (object, field) => field.split('.').reduce((o, k) => o?.[k], object);

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
 * @param {import('../records/summary.js').ModeFigures[]} runs at least one
 * @returns {object} the figures' shape, plus `spread[field] = {min, max}`, `repeats`, `runs` (summary files),
 *   `client_bound` (the median run's share of the client's ceiling ≥ 0.9; without a ceiling, its k6 CPU ≥ 90% of its
 *   core), `client_bound_by` ('ceiling', 'cpu' or null: neither measured), `client_bound_cpu` (the CPU sign alone), and `k6_cpu_runs` ({measured, client_bound}: the runs
 *   whose k6 CPU was measured, and of them those at ≥ 90%) and `wide_spread` (the checked rows whose runs disagree by more
 *   than WIDE_SPREAD of their median: {field, label, digits, median, min, max, range_pct, outliers: [{run (1-based, in
 *   `runs` order), file, value, off_pct (from the median)}]}), `disturbed` (the runs whose pinned cores lost DISTURBED
 *   or more of their time to steal or other processes: machine-noise.js Disturbance[])
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
    // What the servers' TLS handshakes negotiated (bench/records/server-stats.js server_tls), each run's that made any, once each.
    server_tls: [...new Set(runs.map((r) => r.server_tls).filter(Boolean))].join(' | ') || null,
    // What the servers' handlers refused, each run's that refused any (bench/records/server-stats.js server_rejected_by).
    server_rejected_by: runs.map((r, i) => (r.server_rejected_by ? `run ${i + 1}: ${r.server_rejected_by}` : null)).filter(Boolean).join('; ') || null,
  };
  for (const { field, how } of ROWS) {
    const values = runs.map((r) => valueAt(r, field));
    const range = spread(values);
    if (!range) { set(combined, field, null); continue; }
    set(combined, field, how === 'sum' ? values.reduce((a, b) => a + (typeof b === 'number' ? b : 0), 0) : range.median);
    combined.spread[field] = { min: range.min, max: range.max };
  }
  combined.wide_spread = ROWS.filter((row) => row.checkSpread).flatMap(({ label, field, digits }) => {
    const values = runs.map((r) => valueAt(r, field));
    const wide = wideSpread(values, WIDE_SPREAD);
    if (!wide) return [];
    return [{
      field, label, digits, median: wide.median, min: wide.min, max: wide.max, range_pct: wide.range * 100,
      // The runs that measured it: fewer than the column's where one lacks the figure.
      runs: values.filter((v) => typeof v === 'number' && Number.isFinite(v)).length,
      outliers: wide.outliers.map(({ index, value, off }) => ({ run: index + 1, file: runs[index].file, value, off_pct: off * 100 })),
    }];
  });
  // Client-bound by the median run, as the column's figures are its median: one run at the limit does not make the
  // column client-bound, but the runs that reached it are counted for the reading and the notes to say so.
  // The client's ceiling decides where it was measured; k6's CPU, a weaker sign, where not (bench/passes/calibrate.js).
  const cpu = runs.map((r) => r.k6_cpu_pct).filter((v) => typeof v === 'number');
  combined.client_bound_cpu = typeof combined.k6_cpu_pct === 'number' && combined.k6_cpu_pct >= CLIENT_BOUND_PCT;
  // A share above UNTRUSTED_SHARE: the run outran its ceiling, so the ceiling was measured low (a busy machine then) and is
  // no ceiling; k6's CPU judges the column instead, and a note says why.
  // A ceiling measured while other processes or the hypervisor took the cores (its own machine reading, DISTURBED) is
  // not trusted either: the runs whose calibration was disturbed are named.
  combined.client_ceiling_disturbed = disturbedRuns(runs.map((r) => ({ file: r.file, run: { machine: r.run?.client_ceiling?.machine } })));
  combined.client_ceiling_untrusted = typeof combined.client_share === 'number'
    && (combined.client_share > UNTRUSTED_SHARE || combined.client_ceiling_disturbed.length > 0);
  const share = typeof combined.client_share === 'number' && !combined.client_ceiling_untrusted ? combined.client_share : null;
  combined.client_bound_by = typeof share === 'number' ? 'ceiling' : typeof combined.k6_cpu_pct === 'number' ? 'cpu' : null;
  combined.client_bound = typeof share === 'number' ? share >= CLIENT_BOUND_SHARE : combined.client_bound_cpu;
  combined.k6_cpu_runs = { measured: cpu.length, client_bound: cpu.filter((v) => v >= CLIENT_BOUND_PCT).length };
  combined.limits = runs.map((r) => r.limit).filter(Boolean);
  // The runs whose pinned cores lost DISTURBED or more to steal or other processes, for the report's DISTURBED note.
  combined.disturbed = disturbedRuns(runs);
  combined.link = first.run?.link ?? null;
  combined.runs = runs.map((r) => ({
    file: r.file, run: r.run,
    figures: { requests: r.requests, rps: r.rps, latency_ms: r.latency_ms, k6_cpu_pct: r.k6_cpu_pct, server_requests: r.server_requests },
    // The profile's function list is long: the report keeps what it shows (profileOf), the summary all of it.
  }));
  return combined;
}

