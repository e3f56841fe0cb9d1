// The side-by-side report: a table of one column per mode (each the median of its
// repeated runs, with their min-max spread) and the ratio of each column to the first, with the notes that say
// when a ratio means less than it seems. Rows: rows.js; rendering: render.js; files: files.js.
import { CLIENT_BOUND_PCT, readingOf, shareText } from './reading.js';
import { verdictOf, verdictPair } from './verdict.js';
import { columnKey, nodeOfKey, onNode } from '../modes.js';
import { provenanceDifferences } from './provenance.js';
import { profileBreakdown } from './profile.js';
import { replicaShares } from '../records/summary.js';
import { disturbedNotes } from './machine-noise.js';
import { formatNumber } from '../format.js';

import { ROWS, UNTRUSTED_SHARE, aggregate, notMeasured, valueAt } from './rows.js';
import { medianOrNull, ratioInterval } from './stats.js';

/**
 * The JSON report: each mode's combined figures and every column's ratio to the first.
 * @param {Array<{key: string, runs: import('../records/summary.js').ModeFigures[]}>} columns in table order;
 *   the first is the baseline of the ratios (the main job passes HTTP first)
 * @param {{generatedAt?: Date, via?: {title: string, replicas: number, workers: number, balancer: string, note: string}|null}} [options]
 *   via: how the columns reached the servers when not directly (SERVERS > 1: through HAProxy to replicas)
 * @returns {{generated_at: string, scenario: string, order: string[], modes: Record<string, object>,
 *   ratios: Record<string, Record<string, number|null>>, ratio_ci: Record<string, Record<string, import('./stats.js').Interval|null>>,
 *   client_bound: string[], notes: string[],
 *   reading: string[], verdict: string[], link: object|null, provenance: object|null, k6_instances: Record<string, object[]>|null,
 *   name: string, via: object|null, replicas: Record<string, object[]>|null, compression: ReturnType<typeof compressionOf>,
 *   profile: object|null, own: import('../own-service.js').OwnRecord|null}}
 *   own: an own service's record (its sizes table; bench/own-service.js), null for the demo's scenarios;
 *   ratios[`${key}/${first}`][row label] = column median / first column median (with compressed columns, the pairs of
 *   ratioPairs instead); ratio_ci[pair][row label]: that ratio's 95% interval from the two columns' runs paired by repeat
 *   (stats.js ratioInterval: {pairs, low, high, settled, why}; low, high and settled null with fewer than 3 pairs, `why`
 *   saying so), null for a summed row, a ratio that is null, or a baseline not above 0 in a run; also for the verdict's
 *   pair where the table has no ratio of it (MODES=grpc,http: `grpc/http` beside `ratios`' `http/grpc`); reading: plain-language sentences comparing each column with the first (of its compression); verdict: at most
 *   four plain sentences on the first gRPC/HTTP pair, each only where its figures support it (verdict.js); link: the link section's
 *   figures (null on loopback); provenance: what made the runs (bench/provenance.js); k6_instances: with
 *   K6_INSTANCES > 1, per column and run, the merged figures beside each k6 instance's (splitRuns); name: the
 *   report's name among a job's (its scenario, `-via-haproxy` through the balancer); via: as given; replicas: per
 *   column, each replica's share of each run and HAProxy's own count (replicasOf); compression: raw against gzip per
 *   mode (compressionOf; null without compressed columns); profile: with PROFILE=1, each column's server CPU per
 *   request by package and its top functions (profileOf); modes[key].not_measured: the figures the column lacks (k6's
 *   CPU, the server's accounting, a capacity pass, the client's ceiling), each with its null fields and why
 *   (rows.js notMeasured)
 */
export function buildReport(columns, { generatedAt = new Date(), via = null } = {}) {
  const modes = Object.fromEntries(columns.map(({ key, runs }) => [key, aggregate(runs)]));
  // What each column lacks of the figures a run may fail to measure, and why: read by the table, the notes, the reading and the verdict.
  const missing = notMeasured(modes);
  for (const [key, mode] of Object.entries(modes)) mode.not_measured = missing[key];
  const [base] = columns.map((c) => c.key);
  /** @type {Record<string, Record<string, number|null>>} */
  const ratios = {};
  /** @type {Record<string, Record<string, import('./stats.js').Interval|null>>} */
  const ratioCi = {};
  const pairs = ratioPairs(columns.map((c) => c.key), modes);
  // The verdict's pair (its first gRPC/HTTP columns) has its intervals too, where it is no pair of the table's ratios.
  const [http, grpc] = verdictPair({ order: columns.map((c) => c.key), modes }) ?? [];
  /** @type {Array<[string, string]>} */
  const extra = http && !pairs.some(([key, over]) => key === grpc && over === http) ? [[grpc, http]] : [];
  const runsOf = (key) => columns.find((c) => c.key === key).runs;
  for (const pair of [...pairs, ...extra]) {
    const [key, over] = pair;
    /** @type {Record<string, number|null>} */
    const ratio = {};
    const ci = (ratioCi[`${key}/${over}`] = {});
    for (const { label, field, how } of ROWS) {
      const x = valueAt(modes[over], field);
      const y = valueAt(modes[key], field);
      ratio[label] = typeof x === 'number' && typeof y === 'number' && x !== 0 ? y / x : null;
      // Per run, paired by repeat (the job interleaves the columns); a summed row (failures) is no median of runs.
      ci[label] = how === 'median' && ratio[label] !== null
        ? ratioInterval(runsOf(over).map((r) => valueAt(r, field)), runsOf(key).map((r) => valueAt(r, field))) : null;
    }
    if (pairs.includes(pair)) ratios[`${key}/${over}`] = ratio;
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
    ratio_ci: ratioCi,
    client_bound: clientBound,
    k6_instances: splitRuns(modes),
    compression: compressionOf(modes, pairs),
    profile: profileOf(modes), // PROFILE=1 (bench/report/profile.js)
    // An own service's record (bench/own-service.js): its sizes table and provenance; null for the demo's scenarios.
    own: columns[0]?.runs.find((r) => r.run?.own)?.run.own ?? null,
    notes: [...unfairness(modes), ...nodeMismatch(modes, pairs), ...unevenWorkers(modes), ...disturbedNotes(modes), ...(via ? [via.note] : []), ...notesOf(modes, clientBound)],
    reading: [], // filled below: the sentences read the report's own figures
    verdict: [], // likewise: at most four sentences on the first gRPC/HTTP pair (bench/report/verdict.js)
  };
  // Sentences compare columns of the same compression; raw against gzip is the compression section's.
  report.reading = pairs.filter(([key, over]) => modes[key].compression === modes[over].compression)
    .flatMap(([key, over]) => readingOf(report, over, key));
  report.verdict = verdictOf(report);
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

/**
 * What must match between columns for their ratio to mean anything: each field of a column and how a NOT COMPARABLE
 * warning names it.
 * @type {ReadonlyArray<[string, string]>}
 */
export const SHAPE = [['scenario', 'payload scenario'], ['connections', 'connection policy'], ['model', 'load model'],
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
    // In the open model the load is the arrival rate, compared above; the VUs are what k6 allocated to keep it up, more
    // where answers take longer: a result, not a condition.
    if (field === 'vus' && entries.every(([, m]) => m.model === 'open')) continue;
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

/** A worker serving more than this times its fair share (100% / workers) makes the column a measure of fewer workers (UNEVEN). */
export const UNEVEN_FACTOR = 1.5;

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
  // A stream's run reads the rows differently: said once, before the columns' notes.
  const streamed = Object.values(modes).filter((m) => typeof m.messages_per_s === 'number');
  const relay = streamed.some((m) => typeof m.sent_per_message === 'number' && typeof m.received_per_message === 'number');
  if (relay) {
    const frames = streamed.map((m) => m.runs[0]?.run?.own?.relay_frames).find(Boolean) ?? 'text';
    notes.push('a relay\'s run (a bidirectional stream): each request is one call, so RPS counts calls, and messages/s the answers; '
      + `over HTTP a call is a WebSocket (${frames === 'binary' ? 'binary frames, protobuf' : 'text frames, the proto3 JSON mapping'}: `
      + `RELAY_FRAMES=${frames}), its connection and upgrade in its time, over gRPC a stream on a kept connection; the latency `
      + 'rows are each call\'s whole duration, and the time to first message is timed by the scripts in whole milliseconds (k6\'s '
      + 'JavaScript clock has no finer one) (docs/streaming.md)');
  } else if (streamed.length) {
    const server = streamed.some((m) => typeof m.first_message_ms?.p50 === 'number');
    // Runs recorded before STREAM_FRAMING asked for SSE.
    const framing = streamed.map((m) => m.runs[0]?.run?.own?.stream_framing).find(Boolean) ?? 'sse';
    const asked = { sse: 'Server-Sent Events, an event a message', ndjson: 'NDJSON, a line a message' }[framing] ?? framing;
    notes.push(`a stream's run: each request is one stream, so RPS counts streams; the latency rows are the time to the `
      + `${server ? 'last message' : 'answer'}${server ? `; over HTTP the stream is read as ${asked} (STREAM_FRAMING=${framing}); `
        + 'gRPC\'s time to first message is timed in whole milliseconds (k6\'s JavaScript clock has no finer one)' : ''} (docs/streaming.md)`);
  }
  const open = Object.values(modes).map((m) => m.runs[0]?.run?.open_streams).find(Boolean);
  if (open) {
    notes.push(`STREAMS=${open.streams}: k6 held ${open.streams} streams open at once over ${open.vus} VUs, re-opening each as it `
      + 'ended, until the run\'s end cut those still open (not counted as failed); RPS and the latency rows count the streams '
      + 'that ended or were cut, k6\'s messages/s misses those of SSE or NDJSON streams cut at the end (k6 never sees their body), '
      + 'and the server-count rows are the server\'s: its peak of open streams, its messages, the RSS the streams took above the '
      + 'window\'s start, and the server CPU per message (docs/streaming.md)');
  }
  for (const [key, mode] of Object.entries(modes)) {
    notes.push(`${key}: ${mode.host}, ${mode.repeats} run(s): ${mode.runs.map((r) => r.file).join(', ')}`);
    const run = mode.runs[0].run;
    if (run?.pinning) notes.push(`${key}: ${run.pinning}`);
    const dashboards = mode.runs.flatMap((r) => r.run?.dashboard ?? []);
    if (dashboards.length) notes.push(`${key}: k6 web dashboard ${dashboards.join(', ')}`);
  }
  for (const [key, mode] of Object.entries(modes)) {
    const auto = mode.runs.map((r) => r.run?.capacity).find((c) => c?.pass === 'auto');
    if (auto) {
      notes.push(`${key}: server capacity by CAPACITY=auto (k6 was client-bound, by its ceiling or its CPU, for ${auto.client_bound.join(', ')}): ${auto.tool} loaded a `
        + `fresh server once after the scenario's k6 runs, ${formatNumber(auto.rps, 0)} req/s`);
    }
  }
  for (const [key, mode] of Object.entries(modes)) {
    // TLS=1: what the servers negotiated, by their own count; k6's and the capture's bytes are then of TLS records.
    if (mode.server_tls) {
      notes.push(`${key}: TLS, as the server negotiated it: ${mode.server_tls}. Bytes sent and received count TLS records `
        + '(headers, tags and handshakes included), as they cross the wire.');
    }
    // Requests the servers' handlers refused, by listener and reason: answered, but with no message (server/served.js).
    if (mode.server_rejected_by) notes.push(`${key}: the server refused requests (listener, reason: count): ${mode.server_rejected_by}.`);
  }
  for (const [key, mode] of Object.entries(modes)) {
    // What the column lacks (rows.js MEASUREMENTS), one note per reason: its cells in the table say only NOT_MEASURED.
    const byReason = new Map();
    for (const n of mode.not_measured) byReason.set(n.reason, [...(byReason.get(n.reason) ?? []), n]);
    for (const [reason, missing] of byReason) {
      const names = missing.map((n) => n.what);
      const list = names.length > 1 ? `${names.slice(0, -1).join(', ')} and ${names.at(-1)}` : names[0];
      notes.push(`${key}: ${list} ${names.length > 1 || missing[0].plural ? 'were' : 'was'} not measured: ${reason}`);
    }
  }
  for (const [key, mode] of Object.entries(modes)) {
    const { measured, client_bound: atLimit } = mode.k6_cpu_runs;
    if (clientBound.includes(key)) {
      const sign = mode.client_bound_by === 'ceiling'
        ? `the median run reached ${shareText(mode.client_share)} of the client's ceiling (${formatNumber(mode.client_ceiling_rps, 0)} req/s against the bare `
          + `${mode.runs[0].run?.client_ceiling?.listener ?? 'listener'})`
        : `k6 used ${CLIENT_BOUND_PCT}% or more of its core in the median run (${atLimit} of ${measured} runs)`;
      notes.push(`${key}: ${sign}, so the RPS is client-bound: the load generator, not the server, set the limit.`);
    }
    if (mode.client_ceiling_untrusted && mode.client_share > UNTRUSTED_SHARE) {
      notes.push(`${key}: the median run reached ${mode.client_share.toFixed(2)} of the client's ceiling, more than ${UNTRUSTED_SHARE}: a run `
        + 'cannot outrun its load generator\'s own ceiling, so that ceiling was measured low, on a busy machine, and is not '
        + `trusted; k6's CPU judges whether the column is client-bound instead. Rerun on a quiet machine.`);
    } else if (mode.client_ceiling_untrusted) {
      const runs = [...new Set(mode.client_ceiling_disturbed.map((d) => d.run))];
      notes.push(`${key}: the client's ceiling beside ${runs.length === 1 ? 'run' : 'runs'} ${runs.join(', ')} was measured on a busy machine `
        + `(${mode.client_ceiling_disturbed.map((d) => `${d.pct.toFixed(0)}% of ${d.side === 'server' ? 'the bare server\'s' : 'k6\'s'} cores (cpu ${d.cpus}) `
          + `went to ${d.what === 'steal' ? 'the hypervisor' : 'other processes'}`).join('; ')}), so it is not trusted; k6's CPU judges whether the `
        + 'column is client-bound instead. Rerun on a quiet machine.');
    }
    // How far apart the ceiling and the run it is read against were taken: the share's row reads the machine as it was then.
    const gap = medianOrNull(mode.runs.map((r) => r.run?.client_ceiling?.before_run_s));
    if (gap !== null) {
      notes.push(`${key}: each run's client's ceiling was measured right before it, a median of ${gap.toFixed(1)} s before the run `
        + 'began (the server\'s start and the warm-up in between), so its share reads the machine as it was then.');
    }
    // The ceiling is the client's only if the bare server had CPU to spare while k6 ran against it.
    const bareCpu = mode.runs[0].run?.client_ceiling?.server_cpu_pct;
    if (typeof bareCpu === 'number' && bareCpu >= CLIENT_BOUND_PCT) {
      notes.push(`${key}: the bare server used ${bareCpu.toFixed(0)}% of its cores during the client's ceiling, so that ceiling may be `
        + 'the bare server\'s, not k6\'s: read the share with care.');
    } else if (mode.client_bound_by !== 'ceiling' && atLimit > 0) {
      notes.push(`${key}: k6 reached ${CLIENT_BOUND_PCT}% of its core in ${atLimit} of ${measured} runs, not in the median run: `
        + 'those runs measure k6 as much as the server.');
    }
  }
  return notes;
}

