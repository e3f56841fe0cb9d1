// A short plain-language reading of a report: what differs between two columns and why.
import { formatNumber as round } from '../format.js';

/** k6 at this share of its core (%) or more is the bottleneck, not the server: the sign used where no client's ceiling was measured. */
export const CLIENT_BOUND_PCT = 90;

/** A column whose RPS is this share of the client's ceiling or more (bench/passes/calibrate.js) measures k6, not the server. */
export const CLIENT_BOUND_SHARE = 0.9;

/**
 * Client-bound columns with why, e.g. 'HTTP (0.97 of k6's ceiling) and gRPC (0.92 of k6's ceiling)', or with one reason
 * for all where all were judged by k6's CPU: 'http and grpc (k6 at 90% of its core or more)'.
 * @param {Array<[object, string]>} columns [aggregated column, name] of each client-bound column
 * @returns {string}
 */
export function boundNames(columns) {
  if (columns.every(([m]) => m.client_bound_by !== 'ceiling')) {
    return `${columns.map(([, name]) => name).join(' and ')} (k6 at ${CLIENT_BOUND_PCT}% of its core or more)`;
  }
  return columns.map(([m, name]) => `${name} (${boundSign(m)})`).join(' and ');
}

/**
 * Why a column is called client-bound, in a few words: its share of the client's ceiling, or k6's CPU where no ceiling was measured.
 * @param {{client_bound_by?: string|null, client_share?: number|null}} m an aggregated column
 * @returns {string} e.g. '0.97 of k6's ceiling'
 */
const boundSign = (m) => (m.client_bound_by === 'ceiling' && typeof m.client_share === 'number'
  ? `${m.client_share.toFixed(2)} of k6's ceiling` : `k6 at ${CLIENT_BOUND_PCT}% of its core or more`);

const pct = (ratio) => `${ratio < 1 ? '−' : '+'}${Math.abs((ratio - 1) * 100).toFixed(0)}%`;
const times = (ratio) => `${ratio.toFixed(2)}×`;

/**
 * Sentences comparing column `key` with the baseline column `base` of a report.
 * Byte overheads are derived: bytes per request minus the payload is what the
 * protocol adds (HTTP/1.1 text headers; HTTP/2 frames, HPACK headers, gRPC's
 * 5-byte message prefix and trailers).
 * @param {{modes: Record<string, object>}} report
 * @param {string} base baseline column key (e.g. 'http')
 * @param {string} key compared column key (e.g. 'grpc')
 * @returns {string[]}
 */
export function readingOf(report, base, key) {
  const a = report.modes[base];
  const b = report.modes[key];
  const lines = [];
  const failed = a.failed + b.failed + a.checks_failed + b.checks_failed;
  if (failed > 0) lines.push(`${failed} request(s) or check(s) failed: read the figures below with that in mind.`);

  const rpsLine = a.model === 'open'
    ? `Offered ${a.rate} req/s, ${key} completed ${round(b.rps)} and ${base} ${round(a.rps)} req/s (medians).`
    : `${key} served ${times(b.rps / a.rps)} the RPS of ${base} (${round(b.rps)} vs ${round(a.rps)} req/s, medians).`;
  // The ratio is only as firm as the runs under each median (report.js WIDE_SPREAD, warned about above the table).
  const unsteady = [base, key].filter((k) => report.modes[k].wide_spread?.some((w) => w.field === 'rps'));
  const spreadLine = unsteady.length
    ? [`The runs of ${unsteady.join(' and ')} disagree on RPS (WIDE SPREAD, above the table): read this ratio with that in mind.`] : [];
  lines.push([rpsLine, ...spreadLine, ...clientLimit(report, base, key)].join(' '));
  if (typeof a.capacity_rps === 'number' && typeof b.capacity_rps === 'number') {
    lines.push(`Under native load generators (wrk for HTTP/1.1, h2load for gRPC, same concurrency) the servers reach ${round(b.capacity_rps)} vs `
      + `${round(a.capacity_rps)} req/s (${times(b.capacity_rps / a.capacity_rps)}), their own ceilings; k6 reached `
      + `${((b.rps / b.capacity_rps) * 100).toFixed(0)}% of it for ${key} and ${((a.rps / a.capacity_rps) * 100).toFixed(0)}% for ${base}, `
      + 'so where that share is low, k6 and not the server set the k6 figures.');
  }
  if (a.model === 'closed') {
    lines.push(`In the closed model latency follows throughput (each VU waits for its answer): p50 ${b.latency_ms.p50.toFixed(2)} vs ${a.latency_ms.p50.toFixed(2)} ms, `
      + `p99 ${b.latency_ms.p99.toFixed(2)} vs ${a.latency_ms.p99.toFixed(2)} ms; compare latency at a fixed rate with the open model (RATE).`);
  } else {
    lines.push(`At the same arrival rate (${a.rate} req/s), p50 is ${b.latency_ms.p50.toFixed(2)} vs ${a.latency_ms.p50.toFixed(2)} ms and `
      + `p99 ${b.latency_ms.p99.toFixed(2)} vs ${a.latency_ms.p99.toFixed(2)} ms.`);
    if (a.dropped_iterations + b.dropped_iterations > 0) {
      lines.push(`Dropped iterations (${base} ${a.dropped_iterations}, ${key} ${b.dropped_iterations}) mean the rate was not sustained: lower RATE or raise VUS.`);
    }
  }

  const overhead = (m) => m.received_per_request - m.payload_bytes;
  const received = `Bytes received per request: ${b.received_per_request.toFixed(0)} vs ${a.received_per_request.toFixed(0)} (${pct(b.received_per_request / a.received_per_request)}). `;
  // Compressed responses: the payload row is the payload before compression, so received minus it means nothing.
  lines.push((a.compression ?? 'off') !== 'off'
    ? `${received}Both ${a.compression}-compressed; before compression the payload is ${b.payload_bytes} vs ${a.payload_bytes} bytes `
      + `(${pct(b.payload_bytes / a.payload_bytes)}).`
    : `${received}Encoding alone: the payload is ${b.payload_bytes} vs ${a.payload_bytes} bytes (${pct(b.payload_bytes / a.payload_bytes)}). `
      + `Protocol around it: about ${overhead(b).toFixed(0)} vs ${overhead(a).toFixed(0)} bytes per response of headers and framing.`);
  lines.push(`Bytes sent per request: ${b.sent_per_request.toFixed(0)} vs ${a.sent_per_request.toFixed(0)} (${pct(b.sent_per_request / a.sent_per_request)}); `
    + 'the requests carry no payload to speak of, so this is almost all headers and framing.');
  if (typeof a.server_cpu_us_per_request === 'number' && typeof b.server_cpu_us_per_request === 'number') {
    lines.push(`The server's own accounting of the measured run: ${b.server_cpu_us_per_request.toFixed(0)} vs `
      + `${a.server_cpu_us_per_request.toFixed(0)} µs of server CPU per request (${times(b.server_cpu_us_per_request / a.server_cpu_us_per_request)}), `
      + `${b.server_gc_ms_per_1k_requests.toFixed(1)} vs ${a.server_gc_ms_per_1k_requests.toFixed(1)} ms of GC pauses per 1000 requests, `
      + `event-loop delay p99 ${b.server_eventloop_p99_ms.toFixed(2)} vs ${a.server_eventloop_p99_ms.toFixed(2)} ms and `
      + `RSS peak ${b.server_rss_peak_mib.toFixed(0)} vs ${a.server_rss_peak_mib.toFixed(0)} MiB (worst worker).`);
    if (a.server_worker_share_max_pct < 100 || b.server_worker_share_max_pct < 100) {
      lines.push(`Each worker served ${b.server_worker_share_min_pct.toFixed(0)}–${b.server_worker_share_max_pct.toFixed(0)}% of the requests `
        + `for ${key} and ${a.server_worker_share_min_pct.toFixed(0)}–${a.server_worker_share_max_pct.toFixed(0)}% for ${base}.`);
    }
  }
  if (a.connections === 'per-request') {
    lines.push('Every request opened a new connection (TCP handshake; for HTTP/2 also the connection preface and SETTINGS exchange), '
      + 'which these byte and latency figures include.');
  }
  return lines;
}

/**
 * What the runs say of k6 as the limit of the two columns: client-bound (the median run at CLIENT_BOUND_PCT or more),
 * at the limit in some runs only, not measured, or below it.
 * @param {{modes: Record<string, object>}} report
 * @param {string} base baseline column key
 * @param {string} key compared column key
 * @returns {string[]} sentences
 */
function clientLimit(report, base, key) {
  const columns = [base, key];
  const mode = (k) => report.modes[k];
  const bound = columns.filter((k) => mode(k).client_bound);
  const capacity = columns.some((k) => typeof mode(k).capacity_rps === 'number');
  const sentences = [];
  if (bound.length) {
    // Points at the capacity figures only where they exist; otherwise at the setting that measures them.
    sentences.push(`k6 was client-bound for ${boundNames(bound.map((k) => [mode(k), k]))}, `
      + `so this compares k6's own ${bound.join('/')} client cost as much as the servers; `
      + (capacity ? 'the server capacity row (wrk/h2load), under the RPS row, shows the servers\' ceilings.'
        : 'no server capacity pass ran: CAPACITY=1 runs one (wrk/h2load), which shows the servers\' ceilings.'));
  }
  // The two signs disagree: say so, as neither is proof alone.
  for (const k of columns.filter((c) => mode(c).client_bound_by === 'ceiling' && mode(c).client_bound !== mode(c).client_bound_cpu)) {
    const m = mode(k);
    sentences.push(`For ${k}, k6's CPU (${m.k6_cpu_pct.toFixed(0)}%) says ${m.client_bound_cpu ? 'client-bound' : 'not client-bound'} `
      + `but the RPS is ${m.client_share.toFixed(2)} of the client's ceiling, which says ${m.client_bound ? 'client-bound' : 'not'}; the ceiling decides`
      + `${!m.client_bound && capacity ? ', and the capacity pass ran all the same: its row, under RPS, shows the servers\' ceilings' : ''}.`);
  }
  for (const k of columns.filter((c) => !mode(c).client_bound && mode(c).client_bound_by !== 'ceiling' && mode(c).k6_cpu_runs?.client_bound > 0)) {
    const { client_bound: atLimit, measured } = mode(k).k6_cpu_runs;
    sentences.push(`For ${k}, k6 reached ${CLIENT_BOUND_PCT}% of its core in ${atLimit} of ${measured} runs, not in the median run: `
      + 'those runs measure k6 as much as the server.');
  }
  // A summary of a k6 run started by hand (npm run compare of its files) records no k6 CPU: say so, claim nothing.
  const unmeasured = columns.filter((k) => typeof mode(k).k6_cpu_pct !== 'number');
  if (unmeasured.length) {
    sentences.push(`k6's CPU was not measured for ${unmeasured.join(' and ')} (bash bench.sh measures it; a k6 run started by hand `
      + 'records none), so whether k6 set the limit is not known.');
  }
  const below = columns.filter((k) => !unmeasured.includes(k));
  const byCeiling = below.every((k) => mode(k).client_bound_by === 'ceiling');
  if (!bound.length && below.length && mode(base).model !== 'open' && !capacity) {
    sentences.push((byCeiling ? `k6 stayed below ${CLIENT_BOUND_SHARE} of its ceiling in the median run`
      : `k6 used less than ${CLIENT_BOUND_PCT}% of its core in the median run`) + `${unmeasured.length ? ` for ${below.join(' and ')}` : ''}; `
      + 'CAPACITY=1 shows whether the servers could serve more.');
  }
  return sentences;
}
