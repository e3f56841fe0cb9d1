// The reader of the run record: reads a k6 summary written by the project's scripts (handleSummary), with the
// `bench.run` the job wrote into it (bench/records/run-record.js), into the figures the report compares.
import { readFile } from 'node:fs/promises';
import { HTTP_TIMED_OUT, STREAM_METRICS } from '../../k6/settings.js';
import { responseTypeOf, withoutDefaults } from '../../proto/index.js';
import { SummaryError } from '../errors.js';
import { serverFigures } from './server-stats.js';
import { machineFigures } from './machine-noise.js';
import { MODES } from '../modes.js';
import { NOT_MEASURED } from '../format.js';
import { k6CpuPct } from '../k6/output.js';
import { nodeOf } from './run-record.js';

const PERCENTILES = { p50: 'med', p90: 'p(90)', p95: 'p(95)', p99: 'p(99)' };

/**
 * @typedef {object} ModeFigures
 * @property {'http'|'grpc'} mode
 * @property {string} target 'local', 'remote' or '' when the summary does not say
 * @property {string} host host:port the load went to
 * @property {string} file the summary it came from
 * @property {number} duration_s length of the k6 run (s)
 * @property {number} vus highest number of VUs
 * @property {number} rps requests per second over the run (req/s)
 * @property {number} requests completed requests
 * @property {number} failed requests that failed (HTTP status >= 400 or network error; gRPC status not OK)
 * @property {number} checks_failed failed checks on the sampled responses
 * @property {number|null} timed_out requests ended at REQUEST_TIMEOUT (failed too); null in a summary without the timeout
 * @property {{p50: number, p90: number, p95: number, p99: number}} latency_ms request duration percentiles (ms)
 * @property {number} data_sent_bytes bytes k6 wrote to the connections (all headers and framing)
 * @property {number} data_received_bytes bytes k6 read from the connections
 * @property {number} sent_per_request data_sent_bytes / requests (bytes)
 * @property {number} received_per_request data_received_bytes / requests (bytes)
 * @property {number} payload_bytes size of one response payload alone: the JSON body, or the protobuf message
 * @property {string} scenario payload scenario (user, users-100, blob-32k, blob-1m)
 * @property {string} connections connection policy: reuse or per-request
 * @property {string} model load model: closed (VUs) or open (constant arrival RATE)
 * @property {number|null} rate target arrival rate of the open model (req/s)
 * @property {boolean} tls whether k6 spoke TLS (its TLS_CA; false in a summary from before it said)
 * @property {'off'|'gzip'} compression response compression k6 asked for (COMPRESSION; 'off' in a summary
 *   from before it was recorded): with gzip, the byte counts are of the compressed responses, payload_bytes
 *   of the payload before compression
 * @property {string|null} node the Node release the server ran on, e.g. `v24.21.0`, as its run record says (run-record.js
 *   nodeOf); null when nothing says (a manual k6 run)
 * @property {string|null} node_release the NODE_VERSIONS release the column stands for, as listed (e.g. `20`); null without NODE_VERSIONS
 * @property {number|null} dropped_iterations iterations the open model could not start for lack of VUs (null in the closed model)
 * @property {number|null} capacity_rps the server's rate under wrk/h2load (req/s; null without CAPACITY=1)
 * @property {number|null} client_ceiling_rps the same k6 script's rate against the bare listener (req/s; bench/passes/calibrate.js)
 * @property {number|null} client_share rps ÷ client_ceiling_rps; null without a ceiling
 * @property {number|null} interrupted iterations k6 interrupted at the end of the run (null: not read)
 * @property {number|null} wire_sent_bytes TCP payload bytes client to server in a capture of the run (null without VERIFY_BYTES=1)
 * @property {number|null} wire_received_bytes TCP payload bytes server to client in that capture
 * @property {number|null} data_sent_vs_wire_pct (data_sent_bytes / wire_sent_bytes − 1) × 100
 * @property {number|null} data_received_vs_wire_pct (data_received_bytes / wire_received_bytes − 1) × 100
 * @property {number|null} messages a stream's run: the messages k6 received (server stream, relay) or sent (client stream); null
 *   for a unary RPC's run, as every stream figure
 * @property {number|null} messages_per_s messages ÷ the run's duration (messages/s)
 * @property {number|null} messages_per_stream messages ÷ requests (each request a stream)
 * @property {{p50: number, p99: number}|null} first_message_ms time from a stream's start to its first message (ms): gRPC's
 *   timed by the script in whole milliseconds (k6's Date.now), HTTP's k6's sending + waiting (its head leaves with the first
 *   event); the time to the last message is latency_ms
 * @property {{p50: number, p99: number}|null} largest_gap_ms each stream's largest gap between two messages it received (ms),
 *   over the streams: timed by the gRPC and WebSocket scripts in whole milliseconds; null over SSE and NDJSON (k6's HTTP client
 *   returns a body whole), for a client stream, and in runs from before it was recorded
 * @property {number|null} received_per_message a server stream's or a relay's: data_received_bytes ÷ messages received (bytes)
 * @property {number|null} sent_per_message a client stream's or a relay's: data_sent_bytes ÷ messages sent (bytes)
 * @property {number|null} server_cpu_us_per_message server_cpu_us_per_request ÷ messages_per_stream (µs); with STREAMS,
 *   the server's CPU in the window ÷ the messages its streams sent in it, by its own count

 * @property {number|null} k6_cpu_pct k6's CPU use over the run, % of the cores it had (null when not measured)
 * @property {number|null} machine_steal_server_pct steal on the server's pinned cores over the run, % of their time
 *   (bench.run.machine, bench/report/machine-noise.js; null, like every machine_ figure, where not measured: why is there)
 * @property {number|null} machine_other_server_pct CPU of processes other than the server and k6 on the server's cores, % of
 *   their time
 * @property {number|null} machine_steal_k6_pct steal on k6's pinned cores, % of their time
 * @property {number|null} machine_other_k6_pct CPU of processes other than the server and k6 on k6's cores, % of their time
 * @property {number|null} server_requests requests the server's handlers counted in the measured window
 *   (the k6 run, warm-up excluded; null, like every server_ figure, when the run recorded no
 *   bench.run.server: see bench/report/server-stats.js for how each is made from it)
 * @property {number|null} server_cpu_us_per_request server CPU time (user + system, workers and primary)
 *   in the window / server_requests (µs)
 * @property {number|null} server_cpu_user_us_per_request its user part (µs)
 * @property {number|null} server_cpu_system_us_per_request its system part (µs)
 * @property {number|null} server_rss_peak_mib largest worker's RSS peak in the window, sampled every 100 ms (MiB)
 * @property {number|null} server_rss_end_mib largest worker's RSS at the end of the window (MiB)
 * @property {number|null} server_heap_peak_mib largest worker's V8 heap-used peak in the window, sampled every 100 ms (MiB)
 * @property {number|null} server_heap_end_mib largest worker's V8 heap used at the end (MiB)
 * @property {number|null} server_eventloop_p50_ms worst worker's median event-loop delay in the window
 *   (perf_hooks.monitorEventLoopDelay, its 10 ms sampling interval taken out; ms)
 * @property {number|null} server_eventloop_p99_ms worst worker's p99 event-loop delay (ms)
 * @property {number|null} server_gc_ms garbage-collection pauses of all workers in the window (ms)
 * @property {number|null} server_gc_ms_per_1k_requests server_gc_ms per 1000 requests served (ms)
 * @property {number|null} server_heap_allocated_bytes_per_request bytes the workers allocated on their V8 heaps in the
 *   window per request served (bytes)
 * @property {number|null} server_tls_handshakes_per_1k_requests TLS handshakes in the window × 1000 ÷ requests (null: none)
 * @property {number|null} server_tls_resumed_pct share of them that resumed a session (%)
 * @property {string|null} server_tls what they negotiated: `<version> · <cipher> · ALPN <protocol>` (server-stats.js)
 * @property {number|null} server_requests_rejected requests the server's handlers refused in the window (server-stats.js)
 * @property {string|null} server_rejected_by those by `<listener> <reason>: <count>` (null: none)
 * @property {number|null} server_worker_share_min_pct smallest share of the window's requests one worker served (%)
 * @property {number|null} server_worker_share_max_pct largest such share (%)
 * @property {number|null} server_replica_share_min_pct with SERVERS > 1, through the balancer: the smallest share of
 *   the window's requests one replica served, by the replicas' own counts (%; null otherwise)
 * @property {number|null} server_replica_share_max_pct the largest such share (%)
 * @property {number|null} balancer_cpu_us_per_request HAProxy's CPU time (user + system, /proc) over the run ÷ the
 *   requests the replicas served (µs; null without a balancer)
 * @property {number|null} link_down_mbps link-layer throughput server to client over the run (Mbit/s; the veth's
 *   counters, so Ethernet, IP and TCP headers and ACKs count; null, like every link_ figure, off an emulated link)
 * @property {number|null} link_up_mbps the same, client to server (Mbit/s)
 * @property {number|null} link_down_util_pct link_down ÷ the configured down bandwidth (%; null when not limited)
 * @property {number|null} link_up_util_pct link_up ÷ the configured up bandwidth (%)
 * @property {number|null} link_down_per_request link-layer bytes server to client per request (bytes)
 * @property {number|null} link_up_per_request link-layer bytes client to server per request (bytes)
 * @property {number|null} link_down_packets_per_request packets server to client per request
 * @property {number|null} link_up_packets_per_request packets client to server per request
 * @property {number|null} ceiling_k6_bytes_rps bandwidth-bound RPS predicted from k6's bytes per request:
 *   min over directions of bandwidth / (8 × bytes per request) (req/s)
 * @property {number|null} ceiling_link_bytes_rps the same from link-layer bytes per request (req/s)
 * @property {number|null} ceiling_latency_rps closed model: VUs / measured RTT, the rate at which every VU waits one
 *   round trip per request and nothing else (req/s)
 * @property {number|null} latency_share_pct RPS ÷ ceiling_latency_rps: the share of each request's time that is the RTT (%)
 * @property {number|null} server_cpu_pct server CPU over the run ÷ its cores (%)
 * @property {number|null} proxy_cpu_pct toxiproxy's CPU over the run ÷ the server's cores, which it shares (%)
 * @property {string|null} limit what held RPS back (bandwidth, client, server, latency), see limitOf
 * @property {import('./run-record.js').RunRecord|undefined} run what the main job recorded about the run (bench.run), if anything
 */

/**
 * Reads and checks one summary file.
 * @param {string} file path of a JSON summary written by http-tests/ or grpc-tests/
 * @returns {Promise<ModeFigures>}
 * @throws {SummaryError} naming the file and the missing metric or field
 */
export async function readSummary(file) {
  let text;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    throw new SummaryError(file, `cannot read it (${err.code ?? err.message})`);
  }
  let data;
  try {
    data = JSON.parse(text);
  } catch {
    throw new SummaryError(file, 'is not JSON, so not a k6 summary');
  }
  return figuresOf(file, data);
}

/**
 * Extracts the compared figures from a parsed summary.
 * @param {string} file path, for error messages
 * @param {object} data the parsed summary
 * @returns {ModeFigures}
 * @throws {SummaryError} also for one instance's summary of a run split over k6 instances (use the merged one)
 */
export function figuresOf(file, data) {
  if (!data || typeof data.metrics !== 'object' || typeof data.state?.testRunDurationMs !== 'number') {
    throw new SummaryError(file, 'is not a k6 summary (no "metrics" and "state.testRunDurationMs")');
  }
  const mode = data.bench?.mode ?? data.setup_data?.mode;
  if (!MODES[mode]) {
    throw new SummaryError(file, 'does not say its mode (bench.mode): write it with the scripts in http-tests/ or grpc-tests/');
  }
  const part = data.bench?.instance;
  if (part) {
    throw new SummaryError(file, `is k6 instance ${part.index} of ${part.of} of one run split by K6_INSTANCES, not the whole run: `
      + `compare its merged summary, ${part.merged_into}`);
  }
  const names = MODES[mode].metrics;
  const stat = (metric, name) => {
    const value = data.metrics[metric]?.values?.[name];
    if (typeof value !== 'number' || !Number.isFinite(value)) {
      throw new SummaryError(file, `metric ${metric} has no "${name}" value${data.metrics[metric] ? '' : ' (metric missing)'}`);
    }
    return value;
  };
  const durationS = data.state.testRunDurationMs / 1000;
  // A value 'passes+fails' counts every sample of a rate metric: every request, answered or not.
  const requests = names.requests[1] === 'passes+fails'
    ? stat(names.requests[0], 'passes') + stat(names.requests[0], 'fails') : stat(...names.requests);
  const sent = stat('data_sent', 'count');
  const received = stat('data_received', 'count');
  const perRequest = (bytes) => (requests > 0 ? bytes / requests : 0);
  const figures = {
    mode,
    target: data.bench?.target ?? '',
    host: data.bench?.host ?? data.setup_data?.host ?? '',
    file,
    duration_s: durationS,
    vus: data.metrics.vus_max?.values?.max ?? data.metrics.vus?.values?.max ?? 0,
    rps: durationS > 0 ? requests / durationS : 0,
    requests,
    failed: stat(names.failed, 'passes'),
    checks_failed: data.metrics.checks ? stat('checks', 'fails') : 0,
    // k6 reports a counter only once it counted something; null: a summary from before the scripts had the timeout.
    // HTTP's come from k6's own sub-metric (k6/http.js), gRPC's from the script's counter.
    timed_out: data.bench?.request_timeout === undefined ? null
      : (data.metrics.requests_timed_out?.values?.count ?? 0) + (data.metrics[HTTP_TIMED_OUT]?.values?.count ?? 0),
    latency_ms: /** @type {ModeFigures['latency_ms']} */ (Object.fromEntries(Object.entries(PERCENTILES).map(([key, name]) => [key, stat(names.latency, name)]))),
    data_sent_bytes: sent,
    data_received_bytes: received,
    sent_per_request: perRequest(sent),
    received_per_request: perRequest(received),
    // An own service's: the median response sample, as the twin of the mode encodes it (bench/own-service.js); a relay in
    // binary frames (RELAY_FRAMES=binary) answers protobuf over HTTP too.
    payload_bytes: data.bench?.run?.own?.payload_bytes?.[MODES[mode].payload === 'json-body' && data.bench?.run?.own?.relay_frames !== 'binary' ? 'json' : 'protobuf']
      ?? payloadBytes(file, mode, data.setup_data),
    scenario: data.bench?.scenario ?? 'user',
    connections: data.bench?.connections ?? 'reuse',
    model: data.bench?.model ?? 'closed',
    rate: data.bench?.rate ?? null,
    compression: data.bench?.compression ?? 'off',
    tls: data.bench?.tls ?? false,
    node: nodeOf(data.bench?.run),
    node_release: data.bench?.run?.node?.release ?? null,
    // k6 reports dropped_iterations only when the open model dropped some.
    dropped_iterations: data.bench?.model === 'open' ? data.metrics.dropped_iterations?.values?.count ?? 0 : null,
    capacity_rps: finiteOrNull(data.bench?.run?.capacity?.rps),
    client_ceiling_rps: finiteOrNull(data.bench?.run?.client_ceiling?.rps),
    interrupted: data.bench?.run?.k6_interrupted ?? null,
    ...wireFigures(data.bench?.run?.wire, sent, received),
    k6_cpu_pct: k6CpuPct(data.bench?.run?.k6_cpu),
    ...machineFigures(data.bench?.run?.machine),
    ...serverFigures(data.bench?.run?.server, data.bench?.run?.open_streams),
    ...replicaFigures(data.bench?.run),
    run: data.bench?.run,
  };
  const ceiling = figures.client_ceiling_rps;
  return {
    ...figures, ...streamFigures(data.metrics, figures),
    client_share: ceiling > 0 ? figures.rps / ceiling : null,
    ...linkFigures(figures, data.bench?.run),
  };
}

/**
 * A stream's figures, from the scripts' stream metrics (k6/settings.js STREAM_METRICS): a server stream's and a relay's
 * messages are those received, a client stream's those sent; bytes per message each way that carries a counted stream
 * (a relay's both); all null without them.
 * @param {Record<string, {values: Record<string, number>}>} metrics k6's summary metrics
 * @param {{requests: number, duration_s: number, data_received_bytes: number, data_sent_bytes: number,
 *   server_cpu_us_per_request: number|null, server_cpu_us_per_message: number|null, server_streams_open_peak: number|null}} f
 * @returns {Pick<ModeFigures, 'messages'|'messages_per_s'|'messages_per_stream'|'first_message_ms'|'largest_gap_ms'|'received_per_message'|'sent_per_message'|'server_cpu_us_per_message'>}
 */
function streamFigures(metrics, f) {
  const received = metrics[STREAM_METRICS.messages]?.values?.count;
  const sent = metrics[STREAM_METRICS.sent]?.values?.count;
  const messages = typeof received === 'number' ? received : sent;
  // With STREAMS the server's count gives the CPU per message (server-stats.js serverFigures), k6's or not: no SSE stream
  // of a 10-minute stream ends in the run, so k6 sees none of its messages.
  const held = f.server_streams_open_peak !== null;
  if (typeof messages !== 'number') {
    return { messages: null, messages_per_s: null, messages_per_stream: null, first_message_ms: null, largest_gap_ms: null,
      received_per_message: null, sent_per_message: null, server_cpu_us_per_message: held ? f.server_cpu_us_per_message : null };
  }
  const first = metrics[STREAM_METRICS.firstMessage]?.values;
  const gap = metrics[STREAM_METRICS.largestGap]?.values;
  const perStream = f.requests > 0 ? messages / f.requests : null;
  const per = (bytes) => (messages > 0 ? bytes / messages : null);
  return {
    messages,
    messages_per_s: f.duration_s > 0 ? messages / f.duration_s : null,
    messages_per_stream: perStream,
    first_message_ms: first ? { p50: finiteOrNull(first.med), p99: finiteOrNull(first['p(99)']) } : null,
    largest_gap_ms: gap ? { p50: finiteOrNull(gap.med), p99: finiteOrNull(gap['p(99)']) } : null,
    received_per_message: typeof received === 'number' ? per(f.data_received_bytes) : null,
    sent_per_message: typeof sent === 'number' && sent > 0 ? f.data_sent_bytes / sent : null,
    // With STREAMS the server's own count of messages gives it (server-stats.js serverFigures): a stream cut at the run's
    // end is a request with few messages.
    server_cpu_us_per_message: held ? f.server_cpu_us_per_message
      : f.server_cpu_us_per_request !== null && perStream ? f.server_cpu_us_per_request / perStream : null,
  };
}

/** A recorded figure as the report takes it: a finite number, or null (not recorded, or not a number: NaN became null in JSON). */
const finiteOrNull = (v) => (typeof v === 'number' && Number.isFinite(v) ? v : null);

/**
 * Each replica's share of the requests the replicas served in a run, by their own counts.
 * @param {Array<{requests: number|null}>} [replicas] bench.run.replicas
 * @returns {number[]|null} % per replica, in order; null when a count is missing or none was served
 */
export function replicaShares(replicas = []) {
  const counts = replicas.map((r) => r.requests);
  const total = counts.reduce((a, n) => a + (n ?? 0), 0);
  if (counts.some((n) => typeof n !== 'number') || total === 0) return null;
  return counts.map((n) => (n / total) * 100);
}

/** The replicas' shares and the balancer's CPU per request of a run through HAProxy (all null otherwise). */
function replicaFigures(run) {
  const shares = replicaShares(run?.replicas);
  if (!shares || shares.length < 2) {
    return { server_replica_share_min_pct: null, server_replica_share_max_pct: null, balancer_cpu_us_per_request: null };
  }
  const total = run.replicas.reduce((a, r) => a + r.requests, 0);
  return {
    server_replica_share_min_pct: Math.min(...shares),
    server_replica_share_max_pct: Math.max(...shares),
    balancer_cpu_us_per_request: finiteOrNull(run.balancer?.cpu_s) !== null ? (run.balancer.cpu_s * 1e6) / total : null,
  };
}

const LINK_NULLS = Object.freeze({
  link_down_mbps: null, link_up_mbps: null, link_down_util_pct: null, link_up_util_pct: null,
  link_down_per_request: null, link_up_per_request: null, link_down_packets_per_request: null, link_up_packets_per_request: null,
  ceiling_k6_bytes_rps: null, ceiling_link_bytes_rps: null, ceiling_latency_rps: null, latency_share_pct: null,
  server_cpu_pct: null, proxy_cpu_pct: null, limit: null,
});

// One resource used to this share or more held the rate back.
const LIMIT_SHARE = 0.8;

/**
 * What held a run's RPS back: the resource it used the largest share of, if that share
 * is 80% or more. Shares: bandwidth, the busier direction's utilisation; client, k6's CPU;
 * server, the server's (and toxiproxy's) CPU of its cores; latency, RPS ÷ (VUs ÷ RTT).
 * @param {Record<string, number|null>} shares by resource, 0..1 (null: not measured)
 * @returns {string} e.g. `bandwidth (97%)`, or `none reached 80% (largest: latency 52%)`
 */
export function limitOf(shares) {
  const measured = Object.entries(shares).filter(([, v]) => typeof v === 'number');
  if (measured.length === 0) return NOT_MEASURED;
  const [name, share] = measured.reduce((a, b) => (b[1] > a[1] ? b : a));
  const pct = `${Math.round(share * 100)}%`;
  return share >= LIMIT_SHARE ? `${name} (${pct})` : `none reached ${LIMIT_SHARE * 100}% (largest: ${name} ${pct})`;
}

/** The link figures of a run over an emulated or real link (all null on loopback). */
function linkFigures(f, run) {
  const link = run?.link;
  if (!link) return LINK_NULLS;
  const { counters, configured, measured } = link;
  const per = (n) => (counters && f.requests > 0 ? n / f.requests : null);
  const mbps = (bytes) => (counters && f.duration_s > 0 ? (bytes * 8) / f.duration_s / 1e6 : null);
  const down = configured?.down_bps ?? null;
  const up = configured?.up_bps ?? null;
  const util = (rateMbps, bps) => (rateMbps !== null && bps ? (rateMbps * 1e6 / bps) * 100 : null);
  const ceiling = (downBytes, upBytes) => {
    const each = [[down, downBytes], [up, upBytes]].filter(([bps, bytes]) => bps && bytes > 0).map(([bps, bytes]) => bps / (8 * bytes));
    return each.length ? Math.min(...each) : null;
  };
  const rttMs = measured?.rtt?.min_ms ?? configured?.rtt_ms ?? null;
  const latencyCeiling = f.model === 'closed' && rttMs > 0 ? f.vus / (rttMs / 1000) : null;
  const cores = run.server_cores;
  const serverCpu = cores && f.server_cpu_us_per_request !== null ? (f.server_cpu_us_per_request * f.rps) / 1e6 / cores * 100 : null;
  const proxyCpu = cores && counters && f.duration_s > 0 ? (counters.proxy_cpu_s / f.duration_s / cores) * 100 : null;
  const figures = {
    link_down_mbps: counters ? mbps(counters.down.bytes) : null,
    link_up_mbps: counters ? mbps(counters.up.bytes) : null,
    link_down_per_request: counters ? per(counters.down.bytes) : null,
    link_up_per_request: counters ? per(counters.up.bytes) : null,
    link_down_packets_per_request: counters ? per(counters.down.packets) : null,
    link_up_packets_per_request: counters ? per(counters.up.packets) : null,
    ceiling_k6_bytes_rps: ceiling(f.received_per_request, f.sent_per_request),
    ceiling_latency_rps: latencyCeiling,
    latency_share_pct: latencyCeiling ? (f.rps / latencyCeiling) * 100 : null,
    server_cpu_pct: serverCpu,
    proxy_cpu_pct: proxyCpu,
    // Derived from the figures above, below.
    link_down_util_pct: null,
    link_up_util_pct: null,
    ceiling_link_bytes_rps: null,
    limit: null,
  };
  figures.link_down_util_pct = util(figures.link_down_mbps, down);
  figures.link_up_util_pct = util(figures.link_up_mbps, up);
  figures.ceiling_link_bytes_rps = counters ? ceiling(figures.link_down_per_request, figures.link_up_per_request) : null;
  const share = (pct) => (typeof pct === 'number' ? pct / 100 : null);
  const bandwidth = [figures.link_down_util_pct, figures.link_up_util_pct].filter((v) => v !== null);
  figures.limit = limitOf({
    bandwidth: bandwidth.length ? share(Math.max(...bandwidth)) : null,
    client: share(f.k6_cpu_pct),
    server: serverCpu === null ? null : share(serverCpu + (proxyCpu ?? 0)),
    latency: share(figures.latency_share_pct),
  });
  return figures;
}

/** The capture's byte counts beside k6's, with the difference in percent. */
function wireFigures(wire, sent, received) {
  const versus = (k6, captured) => (captured > 0 ? (k6 / captured - 1) * 100 : null);
  return {
    wire_sent_bytes: wire?.sent_bytes ?? null,
    wire_received_bytes: wire?.received_bytes ?? null,
    data_sent_vs_wire_pct: wire ? versus(sent, wire.sent_bytes) : null,
    data_received_vs_wire_pct: wire ? versus(received, wire.received_bytes) : null,
  };
}

/**
 * Size of the payload sampled in setup(): the JSON body's bytes as k6 received
 * them, or the protobuf encoding of the message k6 decoded (protobufjs,
 * default-valued fields omitted as proto3 does; test/integration/payload.test.js checks
 * that this equals the bytes the server sends).
 * @param {string} file
 * @param {'http'|'grpc'} mode
 * @param {{sampleBytes?: number, sample?: object}|undefined} setupData
 * @returns {number} bytes
 * @throws {SummaryError} when the summary holds no sample
 */
function payloadBytes(file, mode, setupData) {
  try {
    return payloadBytesOf(mode, setupData);
  } catch (err) {
    throw new SummaryError(file, err.message);
  }
}

/**
 * The payload size in bytes from a summary's setup_data (see payloadBytes).
 * @param {'http'|'grpc'} mode
 * @param {{sampleBytes?: number, sample?: object, rpc?: string, own?: boolean}|undefined} setupData
 * @returns {number|null} bytes; null for an own service's run (its sizes are in bench.run.own)
 * @throws {Error} when setup_data holds no sample
 */
export function payloadBytesOf(mode, setupData) {
  // An own service's scripts sample no payload the demo's types can measure; the job records its sizes (bench.run.own).
  if (setupData?.own) return null;
  if (MODES[mode]?.payload === 'json-body') {
    if (!Number.isInteger(setupData?.sampleBytes)) throw new Error('has no setup_data.sampleBytes (the body sampled in setup())');
    return setupData.sampleBytes;
  }
  const { sample, rpc } = setupData ?? {};
  if (!sample || typeof sample !== 'object') throw new Error('has no setup_data.sample (the message sampled in setup())');
  const type = responseTypeOf(rpc ?? 'GetUser');
  return type.encode(withoutDefaults(type, type.fromObject(sample))).finish().length;
}
