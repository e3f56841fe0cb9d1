// A short plain-language reading of a report: what differs between two columns and why.
import { formatNumber as round, NOT_MEASURED } from '../format.js';
import { CONFIDENCE, MIN_PAIRS, repeatsToSettle } from './stats.js';
import { carriedBy } from './carried.js';
import { framingParts, framingText, TLS13_RECORD } from './stream-framing.js';

/** k6 at this share of its core (%) or more is the bottleneck, not the server: the sign used where no client's ceiling was measured. */
export const CLIENT_BOUND_PCT = 90;

/** A column whose RPS is this share of the client's ceiling or more (bench/passes/calibrate.js) measures k6, not the server. */
export const CLIENT_BOUND_SHARE = 0.9;

/**
 * A share of the client's ceiling as a sentence prints it beside CLIENT_BOUND_SHARE: two decimals, or three where two
 * would round it onto the threshold it is compared with (0.896 reads 0.896, not 0.90, which would be client-bound).
 * @param {number} share
 * @returns {string}
 */
export const shareText = (share) => (Number(share.toFixed(2)) === CLIENT_BOUND_SHARE && share !== CLIENT_BOUND_SHARE
  ? share.toFixed(3) : share.toFixed(2));

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
  ? `${shareText(m.client_share)} of k6's ceiling` : `k6 at ${CLIENT_BOUND_PCT}% of its core or more`);

const finite = (v) => typeof v === 'number' && Number.isFinite(v);
const pct = (ratio) => (finite(ratio) ? `${ratio < 1 ? '−' : '+'}${Math.abs((ratio - 1) * 100).toFixed(0)}%` : 'n/a');
const times = (ratio) => (finite(ratio) ? `${ratio.toFixed(2)}×` : 'n/a');
/** A figure with fixed decimals, NOT_MEASURED when there is none (a run that did not measure it). */
const fixed = (v, digits) => (finite(v) ? v.toFixed(digits) : NOT_MEASURED);

/**
 * @typedef {object} RatioClaim what a sentence may say of a ratio (ratioClaim)
 * @property {boolean|null} settled the ratio's 95% interval excludes 1 (true) or includes it (false); null without an interval
 * @property {string|null} note settled: the interval and its runs, to say beside the ratio ('95% interval 0.41× to 0.52× over
 *   5 runs'); not settled:
 *   what to say instead of the ratio's direction ('not settled at 5 repeats: 0.98×, its 95% interval 0.91× to 1.06× includes
 *   no difference; about 12 repeats would likely settle it (an estimate: …)'); without an interval: why ('one run cannot
 *   say: the interval needs REPEATS ≥ 3'); null where the report gives the ratio no interval at all (a summed row)
 * @property {boolean} few no interval because the columns have fewer than MIN_PAIRS repeats (not because a figure is
 *   missing from some runs): said once for a pair's reading
 */

/**
 * What a sentence may say of a ratio of a report, by its 95% interval (`ratio_ci`, stats.js ratioInterval): a sentence
 * states the ratio's direction only where the interval excludes 1, with the interval beside it; where the interval
 * includes 1 it says "not settled at N repeats" instead, and how many repeats would likely settle it (stats.js
 * repeatsToSettle, an estimate); with fewer than MIN_PAIRS repeats it claims neither, and says the interval needs more.
 * @param {{ratio_ci?: Record<string, Record<string, import('./stats.js').Interval|null>>, modes: Record<string, {repeats: number}>}} report
 * @param {string} base the baseline column
 * @param {string} key the compared column
 * @param {string} label the row (rows.js ROWS label, the key of `ratio_ci[pair]`)
 * @param {number} ratio the ratio the sentence states: the two columns' medians, key ÷ base
 * @param {(ratio: number) => string} show how the sentence writes a ratio (`0.47×`, `−53%`)
 * @returns {RatioClaim}
 * @throws {Error} when the report has no interval for the pair and row (a row label misspelt)
 */
export function ratioClaim(report, base, key, label, ratio, show) {
  const pair = `${key}/${base}`;
  if (!report.ratio_ci?.[pair] || !(label in report.ratio_ci[pair])) throw new Error(`the report has no interval of ${pair} for the row ${label}`);
  const ci = report.ratio_ci[pair][label];
  if (!ci || !finite(ratio)) return { settled: null, note: null, few: false };
  if (ci.low === null || ci.high === null) {
    const repeats = Math.min(report.modes[base].repeats, report.modes[key].repeats);
    const few = ci.pairs >= repeats;
    return { settled: null, few, note: few ? `${ci.why}: the interval needs REPEATS ≥ ${MIN_PAIRS}`
      : `${ci.why}: both columns have it in ${ci.pairs} of ${repeats} runs, and the interval needs ${MIN_PAIRS}` };
  }
  const interval = `${CONFIDENCE * 100}% interval ${show(ci.low)} to ${show(ci.high)}`;
  // A settled interval says the runs it rests on; an unsettled one's note says them already (`not settled at N repeats`).
  if (ci.settled) return { settled: true, note: `${interval} over ${ci.pairs} runs`, few: false };
  // Every resample alike at 1 (the same figure in every run, as VUs): no difference, rather than a wait for more repeats.
  if (ci.low === 1 && ci.high === 1) return { settled: false, note: `${show(ratio)}, no difference at ${ci.pairs} repeats`, few: false };
  const n = repeatsToSettle(ci, ratio);
  const more = n === null ? 'the medians are equal, so no number of repeats would settle it'
    : `about ${n} repeats would likely settle it (an estimate: the interval narrows as 1/√n)`;
  return { settled: false, note: `not settled at ${ci.pairs} repeats: ${show(ratio)}, its ${interval} includes no difference; ${more}`, few: false };
}

/**
 * A ratio as a parenthesis states it: the ratio with its interval or why it has none, or, not settled, the claim's note alone.
 * @param {RatioClaim} claim
 * @param {string} shown the ratio as the sentence writes it
 * @param {boolean} [quiet] leave out a `few` note (said once for the pair)
 * @returns {string}
 */
export const stated = (claim, shown, quiet = false) => (claim.settled === false ? claim.note
  : `${shown}${claim.note && !(quiet && claim.few) ? `; ${claim.note}` : ''}`);

/**
 * What the reading's rules read of a pair of columns (readingOf).
 * @typedef {object} ReadingFacts
 * @property {{modes: Record<string, object>}} report
 * @property {string} base the baseline column's key
 * @property {string} key the compared column's key
 * @property {object} a the baseline column
 * @property {object} b the compared column
 * @property {(label: string, field: string, show: (ratio: number) => string) => RatioClaim} claim a ratio key/base of a
 *   row, as far as its 95% interval settles it (ratioClaim)
 */

/** Both columns hold a positive figure of the field. */
const bothPositive = ({ a, b }, field) => finite(a[field]) && finite(b[field]) && a[field] > 0 && b[field] > 0;

/**
 * The reading's rules, in the order of their sentences: each says when it applies and the sentences it writes.
 * Byte overheads are derived: bytes per request minus the payload is what the protocol adds (HTTP/1.1 text headers;
 * HTTP/2 frames, HPACK headers, gRPC's 5-byte message prefix and trailers).
 * @type {Array<{name: string, applies: (f: ReadingFacts) => boolean, says: (f: ReadingFacts) => string[]}>}
 */
export const READING_RULES = [
  {
    // A busy machine first: the figures below rest on runs it slowed (machine-noise.js DISTURBED).
    name: 'a busy machine',
    applies: ({ a, b }) => (a.disturbed ?? []).length + (b.disturbed ?? []).length > 0,
    says: ({ base, key, a, b }) => {
      const runs = (k, m) => [...new Set((m.disturbed ?? []).map((d) => d.run))].map((r) => `${k} run ${r}`);
      const named = [...runs(base, a), ...runs(key, b)];
      return [`The machine was busy in ${named.join(', ')} (DISTURBED, under the table): other processes or the hypervisor took `
        + 'time from the cores the server or k6 ran on, so those runs measured less than this machine gives, and the figures '
        + 'and ratios below rest on them too.'];
    },
  },
  {
    name: 'failures',
    applies: ({ a, b }) => a.failed + b.failed + a.checks_failed + b.checks_failed > 0,
    says: ({ a, b }) => [`${a.failed + b.failed + a.checks_failed + b.checks_failed} request(s) or check(s) failed: read the figures below with that in mind.`],
  },
  {
    // Each ratio stated only as far as its interval settles it (ratioClaim); without one for want of repeats, said once here.
    name: 'too few repeats',
    applies: ({ a, b }) => Math.min(a.repeats, b.repeats) < MIN_PAIRS,
    says: ({ a, b }) => [`${Math.min(a.repeats, b.repeats) === 1 ? 'One run' : 'Two runs'} per column cannot say whether a ratio is settled: `
      + `its interval needs REPEATS ≥ ${MIN_PAIRS}, so the ratios here are as measured.`],
  },
  {
    name: 'RPS and what set it',
    applies: () => true,
    says: ({ report, base, key, a, b, claim }) => {
      const rps = claim('RPS (req/s)', 'rps', times);
      const medians = `${round(b.rps)} vs ${round(a.rps)} req/s, medians`;
      const rpsLine = a.model === 'open'
        ? `Offered ${a.rate} req/s, ${key} completed ${round(b.rps)} and ${base} ${round(a.rps)} req/s (medians).`
        : rps.settled === false ? `The RPS of ${key} against ${base} (${medians}) is ${rps.note}.`
          : `${key} served ${times(b.rps / a.rps)} the RPS of ${base} (${stated(rps, medians, true)}).`;
      // The ratio is only as firm as the runs under each median (report.js WIDE_SPREAD, warned about above the table).
      const unsteady = [base, key].filter((k) => report.modes[k].wide_spread?.some((w) => w.field === 'rps'));
      const spreadLine = unsteady.length
        ? [`The runs of ${unsteady.join(' and ')} disagree on RPS (WIDE SPREAD, above the table): read this ratio with that in mind.`] : [];
      return [[rpsLine, ...spreadLine, ...clientLimit(report, base, key)].join(' ')];
    },
  },
  {
    name: 'servers\' ceilings',
    applies: (f) => bothPositive(f, 'capacity_rps'),
    says: ({ base, key, a, b, claim }) => {
      const capacity = claim('server capacity, wrk/h2load (req/s)', 'capacity_rps', times);
      return [`Under native load generators (wrk for HTTP/1.1, h2load for gRPC, same concurrency) the servers reach ${round(b.capacity_rps)} vs `
        + `${round(a.capacity_rps)} req/s (${stated(capacity, times(b.capacity_rps / a.capacity_rps), true)}), their own ceilings; k6 reached `
        + `${((b.rps / b.capacity_rps) * 100).toFixed(0)}% of it for ${key} and ${((a.rps / a.capacity_rps) * 100).toFixed(0)}% for ${base}, `
        + 'so where that share is low, k6 and not the server set the k6 figures.'];
    },
  },
  {
    name: 'latency, closed model',
    applies: ({ a }) => a.model === 'closed',
    says: ({ a, b }) => [`In the closed model latency follows throughput (each VU waits for its answer): p50 ${fixed(b.latency_ms.p50, 2)} vs `
      + `${fixed(a.latency_ms.p50, 2)} ms, p99 ${fixed(b.latency_ms.p99, 2)} vs ${fixed(a.latency_ms.p99, 2)} ms; compare latency at a fixed rate `
      + 'with the open model (RATE).'],
  },
  {
    name: 'latency, open model',
    applies: ({ a }) => a.model !== 'closed',
    says: ({ a, b }) => [`At the same arrival rate (${a.rate} req/s), p50 is ${fixed(b.latency_ms.p50, 2)} vs ${fixed(a.latency_ms.p50, 2)} ms and `
      + `p99 ${fixed(b.latency_ms.p99, 2)} vs ${fixed(a.latency_ms.p99, 2)} ms.`],
  },
  {
    name: 'dropped iterations',
    applies: ({ a, b }) => a.model !== 'closed' && a.dropped_iterations + b.dropped_iterations > 0,
    says: ({ base, key, a, b }) => [`Dropped iterations (${base} ${a.dropped_iterations}, ${key} ${b.dropped_iterations}) mean the rate was not `
      + 'sustained: lower RATE or raise VUS.'],
  },
  {
    name: 'bytes',
    applies: () => true,
    says: ({ report, a, b, claim }) => bytesLines(report, a, b, (label, field) => stated(claim(label, field, pct), pct(b[field] / a[field]), true)),
  },
  {
    // The server's own accounting: where either column lacks it, the notes under the table say why (report.js).
    name: 'the server\'s accounting',
    applies: ({ a, b }) => finite(a.server_cpu_us_per_request) && finite(b.server_cpu_us_per_request),
    says: ({ a, b, claim }) => [`The server's own accounting of the measured run: ${fixed(b.server_cpu_us_per_request, 0)} vs `
      + `${fixed(a.server_cpu_us_per_request, 0)} µs of server CPU per request `
      + `(${stated(claim('server CPU per request (µs)', 'server_cpu_us_per_request', times), times(b.server_cpu_us_per_request / a.server_cpu_us_per_request), true)}), `
      + `${fixed(b.server_gc_ms_per_1k_requests, 1)} vs ${fixed(a.server_gc_ms_per_1k_requests, 1)} ms of GC pauses per 1000 requests, `
      + `event-loop delay p99 ${fixed(b.server_eventloop_p99_ms, 2)} vs ${fixed(a.server_eventloop_p99_ms, 2)} ms and `
      + `RSS peak ${fixed(b.server_rss_peak_mib, 0)} vs ${fixed(a.server_rss_peak_mib, 0)} MiB (worst worker).`],
  },
  {
    name: 'each worker\'s share',
    applies: ({ a, b }) => finite(a.server_cpu_us_per_request) && finite(b.server_cpu_us_per_request)
      && [a, b].every((m) => finite(m.server_worker_share_max_pct)) && (a.server_worker_share_max_pct < 100 || b.server_worker_share_max_pct < 100),
    says: ({ base, key, a, b }) => [`Each worker served ${fixed(b.server_worker_share_min_pct, 0)}–${fixed(b.server_worker_share_max_pct, 0)}% of the `
      + `requests for ${key} and ${fixed(a.server_worker_share_min_pct, 0)}–${fixed(a.server_worker_share_max_pct, 0)}% for ${base}.`],
  },
  {
    name: 'a connection per request',
    applies: ({ a }) => a.connections === 'per-request',
    says: () => ['Every request opened a new connection (TCP handshake; for HTTP/2 also the connection preface and SETTINGS exchange), '
      + 'which these byte and latency figures include.'],
  },
];

/**
 * Sentences comparing column `key` with the baseline column `base` of a report: those of READING_RULES that apply, in
 * their order.
 * @param {{modes: Record<string, object>}} report
 * @param {string} base baseline column key (e.g. 'http')
 * @param {string} key compared column key (e.g. 'grpc')
 * @returns {string[]}
 */
export function readingOf(report, base, key) {
  const a = report.modes[base];
  const b = report.modes[key];
  /** @type {ReadingFacts} */
  const facts = { report, base, key, a, b, claim: (label, field, show) => ratioClaim(report, base, key, label, b[field] / a[field], show) };
  return READING_RULES.filter((rule) => rule.applies(facts)).flatMap((rule) => rule.says(facts));
}

/**
 * The reading's sentences on bytes, one a direction: the bytes per request, then what they carry. A direction with a
 * payload to speak of (carried.js) splits into the encoding's part and the protocol's around it; one without says it is
 * almost all headers and framing. Compressed responses: their payload row is the payload before compression. A server
 * stream's responses, and a client stream's requests: per message, its framing and the stream's head and end shared out.
 * @param {object} report
 * @param {object} a the base column
 * @param {object} b the compared column
 * @param {(label: string, field: string) => string} share the ratio of a row as far as its interval settles it
 * @returns {string[]} [received, sent]
 */
function bytesLines(report, a, b, share) {
  const { sent, received } = carriedBy(report, a, b);
  const perRequest = (what, field, label) => `Bytes ${what} per request: ${fixed(b[field], 0)} vs ${fixed(a[field], 0)} (${share(label, field)})`;
  const got = perRequest('received', 'received_per_request', 'received per request (bytes)');
  const payload = share('payload per response (bytes)', 'payload_bytes');
  const streamed = typeof a.received_per_message === 'number' && typeof b.received_per_message === 'number';
  const receivedLine = streamed
    ? `Bytes received per message of the stream: ${fixed(b.received_per_message, 1)} vs ${fixed(a.received_per_message, 1)} `
      + `(${share('received per message (bytes)', 'received_per_message')}). Encoding alone: the message is ${b.payload_bytes} vs `
      + `${a.payload_bytes} bytes (the median response sample; ${payload}). Framing around it, with the stream's head and end `
      + `shared out over its ${fixed(a.messages_per_stream, 1)} messages: about ${fixed(b.received_per_message - b.payload_bytes, 0)} vs `
      + `${fixed(a.received_per_message - a.payload_bytes, 0)} bytes per message${framingSplit(report, a, b, 'received', [a.payload_bytes, b.payload_bytes])}.`
    : (a.compression ?? 'off') !== 'off'
    ? `${got}. Both ${a.compression}-compressed; before compression the payload is ${b.payload_bytes} vs ${a.payload_bytes} bytes (${payload}).`
    : received.carries
      ? `${got}. Encoding alone: the payload is ${b.payload_bytes} vs ${a.payload_bytes} bytes (${payload}). `
        + `Protocol around it: about ${fixed(b.received_per_request - b.payload_bytes, 0)} vs ${fixed(a.received_per_request - a.payload_bytes, 0)} `
        + 'bytes per response of headers and framing.'
      : `${got}; the responses carry no payload to speak of (${b.payload_bytes} vs ${a.payload_bytes} bytes), so this is almost all headers and framing.`;
  const put = perRequest('sent', 'sent_per_request', 'sent per request (bytes)');
  const sentStreamed = typeof a.sent_per_message === 'number' && typeof b.sent_per_message === 'number' && sent.payload !== null;
  const sentLine = sentStreamed
    ? `Bytes sent per message of the stream: ${fixed(b.sent_per_message, 1)} vs ${fixed(a.sent_per_message, 1)} `
      + `(${share('sent per message (bytes)', 'sent_per_message')}). Encoding alone: the message is ${sent.payload[1]} vs `
      + `${sent.payload[0]} bytes (the median request sample). Framing around it, with the stream's head and end shared out `
      + `over its ${fixed(a.messages_per_stream, 1)} messages: about ${fixed(b.sent_per_message - sent.payload[1], 0)} vs `
      + `${fixed(a.sent_per_message - sent.payload[0], 0)} bytes per message${framingSplit(report, a, b, 'sent', sent.payload)}.`
    : sent.carries
    ? `${put}. Encoding alone: the request is ${sent.payload[1]} vs ${sent.payload[0]} bytes (the median request sample). `
      + `Protocol around it: about ${fixed(b.sent_per_request - sent.payload[1], 0)} vs ${fixed(a.sent_per_request - sent.payload[0], 0)} `
      + 'bytes per request of headers and framing.'
    : `${put}; the requests carry no payload to speak of, so this is almost all headers and framing.`;
  return [receivedLine, sentLine];
}

/**
 * The framing around a streamed message split into the protocols' own bytes per message (stream-framing.js) and the rest,
 * for the reading's bytes sentence; empty when either column's protocol is not known.
 * @param {object} report its `own` record names the RPC's kind and the framing HTTP asked for
 * @param {object} a the base column
 * @param {object} b the compared column
 * @param {'received'|'sent'} way
 * @param {[number, number]} payload the message's payload in each column, bytes ([base, compared])
 * @returns {string} e.g. ": the protocol's own, gRPC's length prefix 5 + … = 14 vs …; the rest, 27 vs 12, …"
 */
function framingSplit(report, a, b, way, payload) {
  const own = /** @type {any} */ (report).own;
  if (!own) return '';
  const [pa, pb] = [framingParts(a, own, way, payload[0]), framingParts(b, own, way, payload[1])];
  if (!pa || !pb) return '';
  const sum = (parts) => parts.reduce((n, p) => n + p.bytes, 0);
  const perMessage = way === 'received' ? 'received_per_message' : 'sent_per_message';
  const rest = (m, parts, p) => fixed(m[perMessage] - p - sum(parts), 0);
  const tls = a.server_tls || b.server_tls ? `, and TLS records' own bytes (${TLS13_RECORD} a record: a message each at most, `
    + 'less where writes queued under load share a record)' : '';
  return `: each protocol's own per message, ${framingText(pb)} vs ${framingText(pa)}; the rest, about ${rest(b, pb, payload[1])} `
    + `vs ${rest(a, pa, payload[0])}, is the stream's head and end shared out, and what else the connection carried (HTTP/2's `
    + `PINGs and WINDOW_UPDATEs)${tls}`;
}

/**
 * What the runs say of k6 as the limit of the two columns: client-bound (by the client's ceiling where it was measured, else
 * by the median run's k6 CPU at CLIENT_BOUND_PCT or more), at the limit in some runs only, not measured (with why: the
 * column's `not_measured`, rows.js), or below it.
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
  // The two signs disagree: say so, as neither is proof alone. Where k6's CPU was not measured there is no disagreement.
  for (const k of columns.filter((c) => mode(c).client_bound_by === 'ceiling' && finite(mode(c).k6_cpu_pct)
    && mode(c).client_bound !== mode(c).client_bound_cpu)) {
    const m = mode(k);
    sentences.push(`For ${k}, k6's CPU (${m.k6_cpu_pct.toFixed(0)}%) says ${m.client_bound_cpu ? 'client-bound' : 'not client-bound'} `
      + `but the RPS is ${shareText(m.client_share)} of the client's ceiling, which says ${m.client_bound ? 'client-bound' : 'not'}; the ceiling decides`
      + `${!m.client_bound && capacity ? ', and the capacity pass ran all the same: its row, under RPS, shows the servers\' ceilings' : ''}.`);
  }
  for (const k of columns.filter((c) => !mode(c).client_bound && mode(c).client_bound_by !== 'ceiling' && mode(c).k6_cpu_runs?.client_bound > 0)) {
    const { client_bound: atLimit, measured } = mode(k).k6_cpu_runs;
    sentences.push(`For ${k}, k6 reached ${CLIENT_BOUND_PCT}% of its core in ${atLimit} of ${measured} runs, not in the median run: `
      + 'those runs measure k6 as much as the server.');
  }
  // k6's CPU not measured (a run too short to sample it, a k6 run started by hand): said, with why; the client's ceiling,
  // where it was measured, decides alone, and where it was not either, nothing is claimed.
  const noCpu = columns.filter((k) => !finite(mode(k).k6_cpu_pct));
  const unjudged = columns.filter((k) => mode(k).client_bound_by == null);
  if (noCpu.length) {
    const why = [...new Set(noCpu.flatMap((k) => (mode(k).not_measured ?? []).filter((n) => n.fields.includes('k6_cpu_pct')).map((n) => n.reason)))];
    const judged = noCpu.filter((k) => !unjudged.includes(k));
    const says = [
      judged.length ? `the client's ceiling decides${unjudged.length ? ` for ${judged.join(' and ')}` : ''}` : null,
      unjudged.length ? `whether k6 set the limit is not known${judged.length ? ` for ${unjudged.join(' and ')}` : ''}` : null,
    ].filter(Boolean);
    sentences.push(`k6's CPU was not measured for ${noCpu.join(' and ')}${why.length ? ` (${why.join('; ')})` : ''}`
      + `${judged.length ? `; ${says.join(', and ')}` : `, so ${says[0]}`}.`);
  }
  const below = columns.filter((k) => !unjudged.includes(k));
  const byCeiling = below.filter((k) => mode(k).client_bound_by === 'ceiling');
  const byCpu = below.filter((k) => mode(k).client_bound_by === 'cpu');
  if (!bound.length && below.length && mode(base).model !== 'open' && !capacity) {
    // Each column by the sign that judged it, named where not every column shares it.
    const named = (ks) => (ks.length < columns.length ? ` for ${ks.join(' and ')}` : '');
    const parts = [
      byCeiling.length ? `k6 stayed below ${CLIENT_BOUND_SHARE} of its ceiling in the median run${named(byCeiling)}` : null,
      byCpu.length ? `k6 used less than ${CLIENT_BOUND_PCT}% of its core in the median run${named(byCpu)}` : null,
    ].filter(Boolean);
    // wrk and h2load load no streams: a stream's columns have no capacity pass to point to.
    const streamed = columns.some((k) => typeof mode(k).messages_per_s === 'number');
    sentences.push(`${parts.join(' and ')}; ${streamed ? 'so the servers, or the time between messages, set the rate (no capacity pass loads streams)'
      : 'CAPACITY=1 shows whether the servers could serve more'}.`);
  }
  return sentences;
}
