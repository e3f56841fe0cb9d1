// The sweep's model (docs/sweep.md): each cell's RPS per mode predicted as the least of four ceilings (bandwidth,
// latency or offered rate, server, client; and for gRPC responses larger than HTTP/2's initial window, the window),
// from per-request figures the sweep measured; checked against the measured cells, extended past them, and read as
// one verdict per RTT and concurrency. Pure: it loads no process code.
import { medianOrNull } from './stats.js';
import { formatRate } from '../settings/network.js';

/** A cell whose measured RPS (either mode) or ratio is more than this far from the model's is flagged. */
export const FLAG_OFF = 0.15;

/** A gRPC/HTTP RPS ratio within this of 1 is a tie. */
export const TIE = 0.05;

/** HTTP/2's initial flow-control window (RFC 9113 §6.9.2), bytes: what grpc-js's server and a new stream start with. */
export const H2_INITIAL_WINDOW = 65535;

/** Short names of the limits, as the verdicts and the map say them. */
export const LIMIT_NAMES = Object.freeze({
  bandwidth: 'bandwidth', latency: 'latency', rate: 'offered rate', server: 'server CPU', client: 'client CPU', window: 'window-bound',
});

/**
 * @typedef {object} Profile what one mode costs per request in one scenario, from the sweep's measured cells
 * @property {number} link_down_bytes link-layer bytes server to client per request (frames, headers and ACKs included): the median
 * @property {number} link_up_bytes link-layer bytes client to server per request: the median
 * @property {number} server_us server CPU per request (µs), toxiproxy's included (it runs on the server's cores), in the busiest run
 * @property {number} client_us k6's CPU per request (µs), in the busiest run
 * @property {number} response_bytes bytes k6 received per request (the response with its framing)
 * @property {number} extra_ms time a request takes beyond the configured RTT at the lightest load: the least p50 − RTT
 *   over the cells (ms; toxiproxy's overshoot, both sides' work and their scheduling)
 */

/**
 * @typedef {object} Machine where the cells run
 * @property {number} serverCores cores the server (and toxiproxy) has
 * @property {number} clientCores cores k6 has
 */

/**
 * @typedef {object} CellPoint one point of the map
 * @property {number} bandwidth bit/s, both ways
 * @property {number} rttMs
 * @property {number} [vus] closed model
 * @property {number} [rate] open model: offered req/s
 */

/**
 * A mode's per-request profile in one scenario: the median of each byte figure over the measured runs given, the CPU
 * per request of the busiest run (the most req/s), the least extra time beyond the RTT.
 * @param {Array<{rps?: number, link_down_per_request: number|null, link_up_per_request: number|null, server_us: number|null,
 *   client_us: number|null, received_per_request: number, extra_ms?: number|null}>} runs that mode's figures in each measured
 *   cell; extra_ms: its p50 − the configured RTT
 * @returns {Profile|null} null when no cell has link bytes
 */
export function profileOf(runs) {
  const of = (pick) => medianOrNull(runs.map(pick));
  const down = of((r) => r.link_down_per_request);
  if (down === null) return null;
  // CPU per request falls with load (timers and polling spread over more requests): the ceilings it sets are reached at
  // full load, so its cost there is the busiest run's.
  const busiest = runs.filter((r) => typeof r.rps === 'number').reduce((a, b) => (!a || b.rps > a.rps ? b : a), null);
  const cpu = (key) => (typeof busiest?.[key] === 'number' ? busiest[key] : of((r) => r[key]) ?? 0);
  return {
    link_down_bytes: down,
    link_up_bytes: of((r) => r.link_up_per_request) ?? 0,
    server_us: cpu('server_us'),
    client_us: cpu('client_us'),
    response_bytes: of((r) => r.received_per_request) ?? 0,
    extra_ms: Math.max(0, Math.min(...runs.map((r) => r.extra_ms).filter((v) => typeof v === 'number' && Number.isFinite(v)), Infinity)) || 0,
  };
}

/**
 * The model's RPS for one mode at one point: the least of its ceilings.
 * - bandwidth: min over both ways of bandwidth ÷ (8 × link bytes per request);
 * - latency (closed model): VUs ÷ (RTT + service time), the service time being the larger of the profile's extra_ms
 *   and the server's and client's CPU per request (each VU waits one round trip and the work on its request); open
 *   model: the offered rate;
 * - server: server cores ÷ server CPU per request; client: k6's cores ÷ k6's CPU per request;
 * - window (gRPC, responses past HTTP/2's initial window only): each stream gets a window per round trip,
 *   VUs × window ÷ (RTT × response bytes); k6's grpc-go client grows its window by BDP estimation, so this is the
 *   floor it starts from.
 * @param {Profile} profile
 * @param {CellPoint} point
 * @param {Machine} machine
 * @param {{mode: string}} who the mode (only `grpc` has the window ceiling)
 * @returns {{rps: number, limit: keyof LIMIT_NAMES, ceilings: Record<string, number>}} req/s
 */
export function predict(profile, { bandwidth, rttMs, vus, rate }, machine, { mode }) {
  const serviceS = Math.max(profile.extra_ms / 1000, (profile.server_us + profile.client_us) / 1e6);
  /** @type {Record<string, number>} */
  const ceilings = {
    bandwidth: Math.min(...[profile.link_down_bytes, profile.link_up_bytes].filter((b) => b > 0).map((b) => bandwidth / (8 * b))),
    ...(rate ? { rate } : { latency: vus / (rttMs / 1000 + serviceS) }),
    server: profile.server_us > 0 ? (machine.serverCores * 1e6) / profile.server_us : Infinity,
    client: profile.client_us > 0 ? (machine.clientCores * 1e6) / profile.client_us : Infinity,
  };
  if (mode === 'grpc' && profile.response_bytes > H2_INITIAL_WINDOW && rttMs > 0) {
    ceilings.window = ((rate ? Infinity : vus) * H2_INITIAL_WINDOW) / ((rttMs / 1000) * profile.response_bytes);
  }
  const [limit, rps] = Object.entries(ceilings).reduce((a, b) => (b[1] < a[1] ? b : a));
  return { rps, limit: /** @type {keyof LIMIT_NAMES} */ (limit), ceilings };
}

/**
 * The limit a measured run names (bench/records/summary.js limitOf: `bandwidth (97%)`), as a key of LIMIT_NAMES;
 * window-bound when gRPC's RPS is within 15% of its window ceiling and that ceiling is below the others.
 * @param {string|null} limit limitOf's text
 * @param {{mode: string, rps: number}} measured
 * @param {{ceilings: Record<string, number>}} predicted
 * @returns {string} a key of LIMIT_NAMES, or `none` when no resource reached 80%
 */
export function measuredLimit(limit, measured, predicted) {
  const { window, ...others } = predicted.ceilings;
  if (measured.mode === 'grpc' && window && window < Math.min(...Object.values(others)) && measured.rps <= window * (1 + FLAG_OFF)) {
    return 'window';
  }
  const name = /^([a-z]+) \(/.exec(limit ?? '')?.[1];
  return name && LIMIT_NAMES[name] ? name : 'none';
}

/**
 * Why a measured cell is off the model: the likeliest causes, from what the cell measured against the profile.
 * @param {{mode: string, rps: number, k6_cpu_pct: number|null, failed: number, link_down_per_request: number|null,
 *   p50_ms: number, p99_ms: number, server_us?: number|null}} measured one mode in the cell (server_us: µs per request,
 *   toxiproxy's included)
 * @param {{rps: number, limit: string}} predicted
 * @param {Profile} profile
 * @param {{rttMs: number, connections: string, vus?: number, serverCores?: number}} cell vus: the closed model's;
 *   serverCores: the cores the server and toxiproxy share
 * @returns {string[]} causes, most likely first (never empty)
 */
export function likelyCauses(measured, predicted, profile, { rttMs, connections, vus, serverCores }) {
  const causes = [];
  const over = measured.rps > predicted.rps;
  if (connections === 'per-request') {
    causes.push('a new connection per request: toxiproxy does not delay the TCP handshake, so a real link would add one RTT');
    // HTTP/2's preface and SETTINGS travel as data, which toxiproxy does delay: the two modes' handshakes are not emulated alike.
    if (measured.mode === 'grpc') causes.push('gRPC\'s new HTTP/2 connection exchanges its preface and SETTINGS as data, which toxiproxy delays, unlike HTTP/1.1\'s TCP handshake');
  }
  if (measured.failed > 0) causes.push(`${measured.failed} failed requests`);
  if (!over && typeof measured.k6_cpu_pct === 'number' && measured.k6_cpu_pct >= 90 && predicted.limit !== 'client') {
    causes.push(`client: k6 at ${Math.round(measured.k6_cpu_pct)}% of its cores, more than its CPU per request elsewhere predicts`);
  }
  const bytes = measured.link_down_per_request;
  if (typeof bytes === 'number' && Math.abs(bytes / profile.link_down_bytes - 1) > 0.1) {
    causes.push(`link bytes down per request ${Math.round(bytes)} against the sweep's median ${Math.round(profile.link_down_bytes)} `
      + '(segments coalesce or split, ACKs ride or leave alone, with the load and the RTT)');
  }
  if (predicted.limit === 'window') {
    causes.push(over ? 'k6\'s grpc-go client grew its receive window past 64 KiB (BDP estimation)' : 'the window and TCP\'s slow start both hold it');
  }
  // Closed model: each VU's requests took VUs ÷ RPS on average; well past the RTT, they waited somewhere.
  const meanMs = vus && measured.rps > 0 ? (vus / measured.rps) * 1000 : null;
  // How busy the server's cores were in this cell (server and toxiproxy): well below full, CPU did not hold it.
  const busy = typeof measured.server_us === 'number' && serverCores ? (measured.rps * measured.server_us) / 1e6 / serverCores : null;
  if (!over && predicted.limit === 'server' && busy !== null && busy < 0.5) {
    causes.push(`not the server's CPU: its core was ${Math.round(busy * 100)}% busy (server and toxiproxy) at this rate`);
  }
  // The model takes CPU per request from the busiest run; with fewer requests in flight each costs more (fewer share a wakeup).
  // Only where the CPU could have held the cell: at low load a request costs more, and nothing waits for it.
  if (!over && typeof measured.server_us === 'number' && measured.server_us > profile.server_us * (1 + FLAG_OFF)
    && (predicted.limit === 'server' || (busy !== null && busy >= 0.5))) {
    causes.push(`server CPU per request ${Math.round(measured.server_us)} µs (toxiproxy's included) against the model's `
      + `${Math.round(profile.server_us)} µs from the busiest run: with fewer requests in flight, fewer share each wakeup`);
  }
  if (!over && predicted.limit !== 'bandwidth' && meanMs !== null && meanMs > rttMs * 1.2) {
    const where = busy === null ? 'for the CPU (the server\'s core is shared with toxiproxy) or in toxiproxy'
      : busy >= 0.5 ? `for the server's core, ${Math.round(busy * 100)}% busy with the server and toxiproxy (a queue grows fast past half)`
        : `in toxiproxy or in tbf's queue, neither of which the model has (the server's core was ${Math.round(busy * 100)}% busy)`;
    causes.push(`queueing: requests took ${meanMs.toFixed(1)} ms on average (VUs ÷ RPS) against an RTT of ${rttMs} ms, p50 `
      + `${measured.p50_ms.toFixed(1)} ms and p99 ${measured.p99_ms.toFixed(1)} ms: they waited ${where}`);
  }
  if (!over && predicted.limit === 'bandwidth') causes.push('tbf\'s queue and TCP do not keep the link full at this concurrency');
  if (!causes.length) causes.push(`the model's ${LIMIT_NAMES[predicted.limit] ?? predicted.limit} ceiling misses what held this cell`);
  return causes;
}

/**
 * Where a cell's measurement and the model disagree by more than FLAG_OFF: each mode's RPS, and the ratio.
 * @param {{ratio: number, predicted_ratio: number, modes: Record<string, {rps: number, predicted_rps: number}>}} cell
 * @returns {string[]} what is off, e.g. `grpc measured 25% below the model`; [] when nothing is
 */
export function offBy(cell) {
  const off = [];
  const pct = (measured, predicted) => Math.round((measured / predicted - 1) * 100);
  for (const [mode, m] of Object.entries(cell.modes)) {
    if (m.predicted_rps > 0 && Math.abs(m.rps / m.predicted_rps - 1) > FLAG_OFF) {
      const p = pct(m.rps, m.predicted_rps);
      off.push(`${mode} measured ${Math.abs(p)}% ${p < 0 ? 'below' : 'above'} the model`);
    }
  }
  if (cell.predicted_ratio > 0 && Math.abs(cell.ratio / cell.predicted_ratio - 1) > FLAG_OFF) {
    off.push(`ratio ${cell.ratio.toFixed(2)} against ${cell.predicted_ratio.toFixed(2)} predicted`);
  }
  return off;
}

/** Who serves more at a ratio: `grpc`, `http` or `tie`. */
export const winner = (ratio) => (ratio > 1 + TIE ? 'grpc' : ratio < 1 - TIE ? 'http' : 'tie');

/**
 * Where the ratio crosses a threshold between two bandwidths, interpolated on a log scale of bandwidth.
 * @param {{bandwidth: number, ratio: number}} a
 * @param {{bandwidth: number, ratio: number}} b the next bandwidth up
 * @param {number} level the ratio crossed
 * @returns {number} bit/s
 */
export function crossing(a, b, level) {
  const t = (level - a.ratio) / (b.ratio - a.ratio);
  const clamped = Number.isFinite(t) ? Math.min(1, Math.max(0, t)) : 0.5;
  return 10 ** (Math.log10(a.bandwidth) + clamped * (Math.log10(b.bandwidth) - Math.log10(a.bandwidth)));
}

/** A bandwidth rounded for a sentence: two significant figures. */
const about = (bps) => formatRate(Number(bps.toPrecision(2)));

/**
 * One sentence for one RTT and concurrency, across bandwidths: who serves more where, and what holds the other back.
 * @param {{rttMs: number, concurrency: string, unit?: 'requests'|'streams'}} where concurrency: `64 concurrent clients` or
 *   `2000 req/s offered`; unit: what a request is (a streaming RPC's: a stream; default 'requests')
 * @param {Array<{bandwidth: number, ratio: number, http_limit: string, grpc_limit: string, kind: 'measured'|'predicted',
 *   settled?: boolean|null, pairs?: number}>} row one cell per bandwidth, ascending; settled: false where the measured ratio's
 *   95% interval includes 1 (over `pairs` repeats), which then names no direction
 * @returns {string}
 */
export function verdictLine({ rttMs, concurrency, unit = 'requests' }, row) {
  const names = { grpc: `gRPC serves more ${unit}`, http: `JSON over HTTP/1.1 serves more ${unit}`, tie: 'they tie within 5%',
    unsettled: 'which serves more is not settled' };
  const why = (cell, who) => {
    if (who === 'unsettled') return `the ratio's 95% interval over ${cell.pairs} repeats includes 1`;
    const limit = who === 'grpc' ? cell.http_limit : cell.grpc_limit;
    // Both wait the same RTT: the loser's extra time per request is what differs.
    if (limit === 'latency' && who !== 'tie') return `latency: ${who === 'grpc' ? 'HTTP' : 'gRPC'}'s ${unit} take longer beyond the RTT`;
    return LIMIT_NAMES[limit] ?? limit;
  };
  const segments = [];
  for (const [i, cell] of row.entries()) {
    // A measured ratio whose interval includes 1 names no direction (stats.js ratioInterval; unsettled needs 3 repeats).
    const who = cell.settled === false && winner(cell.ratio) !== 'tie' ? 'unsettled' : winner(cell.ratio);
    const last = segments.at(-1);
    if (last && last.who === who) {
      last.cells.push(cell);
      continue;
    }
    const prev = row[i - 1];
    // Where the ratio crosses between the two segments (an unsettled one reads as a tie there).
    const [was, is] = [last?.who, who].map((w) => (w === 'unsettled' ? 'tie' : w));
    const level = last ? (was === 'grpc' || is === 'grpc' ? (was === 'http' || is === 'http' ? 1 : 1 + TIE) : 1 - TIE) : null;
    segments.push({ who, from: prev ? crossing(prev, cell, level) : null, cells: [cell] });
  }
  const head = `at ${rttMs} ms with ${concurrency}`;
  const predictedOnly = row.every((c) => c.kind === 'predicted') ? ' (predicted)' : '';
  if (segments.length === 1) {
    const [s] = segments;
    const span = row.length > 1 ? `from ${formatRate(row[0].bandwidth)} to ${formatRate(row.at(-1).bandwidth)}` : `at ${formatRate(row[0].bandwidth)}`;
    return `${head}, ${names[s.who]} ${span} (${why(s.cells.at(-1), s.who)})${predictedOnly}`;
  }
  const parts = segments.map((s, i) => {
    const next = segments[i + 1];
    const reason = `(${why(s.cells[Math.floor(s.cells.length / 2)], s.who)})`;
    if (i === 0) return `${names[s.who]} below about ${about(next.from)} ${reason}`;
    if (!next) return `above it ${s.who === 'http' ? 'JSON over HTTP/1.1 does' : names[s.who]} ${reason}`;
    return `from there to about ${about(next.from)} ${names[s.who]} ${reason}`;
  });
  return `${head}, ${parts.join('; ')}${predictedOnly}`;
}
