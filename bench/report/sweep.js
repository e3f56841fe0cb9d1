// The sweep's report (npm run sweep; docs/sweep.md): the measured cells with the model's prediction beside each,
// the flagged ones with a likely cause, the cells past what the machine emulates (predicted only), one verdict per
// RTT and concurrency, and the answer for one link. Reads data, renders Markdown; loads no process code.
import { markdownTable } from 'markdown-table';
import { medianOrNull, ratioInterval } from './stats.js';
import { NOT_SETTLED_MARK, ratioCell } from './render.js';
import { formatNumber } from '../format.js';
import { formatRate } from '../settings/network.js';
import { SWEEP_MODES } from '../records/sweep.js';
import {
  FLAG_OFF, LIMIT_NAMES, likelyCauses, measuredLimit, offBy, predict, profileOf, verdictLine,
} from './sweep-model.js';

/** What toxiproxy changes in what a sweep measures (docs/network.md), said once in the report. */
export const TOXIPROXY_NOTE = 'Delay is toxiproxy\'s (the kernel has no netem): it delays data, not packets, so the TCP handshake sees no '
  + 'delay, and TCP reacts to the proxy rather than to the emulated link; its socket facing the client ACKs each request itself, '
  + 'which at RTTs of 40 ms and more adds up to one pure ACK (66 bytes) per request and direction to the link\'s counts.';

/** What every verdict of a sweep with a new connection per request carries. */
export const PER_REQUEST_NOTE = 'a new connection per request: the emulated link does not delay the TCP handshake, so on a real link '
  + 'each request costs one RTT more in both modes';

const medianOf = (runs, key) => medianOrNull(runs.map((r) => r[key]));

/** The concurrency of a point, for sentences and labels. */
export const concurrencyOf = (point) => (point.rate ? `${point.rate} req/s offered` : `${point.vus} concurrent clients`);

/**
 * The profiles of a sweep: per scenario, RTT and mode, the median per-request figures over that RTT's measured cells.
 * @param {Array<{scenario: string, rtt_ms: number, runs: Record<string, object[]>}>} measured
 * @returns {Record<string, Record<string, Record<string, import('./sweep-model.js').Profile>>>} scenario → RTT (ms) → mode
 */
export function profilesOf(measured) {
  /** @type {Record<string, any>} */
  const out = {};
  for (const cell of measured) {
    const at = ((out[cell.scenario] ??= {})[cell.rtt_ms] ??= {});
    for (const mode of SWEEP_MODES) (at[mode] ??= []).push(...cell.runs[mode].map((r) => ({ ...r, extra_ms: r.p50_ms - cell.rtt_ms })));
  }
  for (const byRtt of Object.values(out)) {
    for (const [rtt, byMode] of Object.entries(byRtt)) {
      byRtt[rtt] = Object.fromEntries(Object.entries(byMode).map(([mode, runs]) => [mode, profileOf(runs)]));
    }
  }
  return out;
}

/**
 * The profiles of the measured RTT nearest to `rttMs` (on a log scale), for a scenario.
 * @param {Record<string, Record<string, Record<string, import('./sweep-model.js').Profile>>>} profiles profilesOf's
 * @param {string} scenario
 * @param {number} rttMs
 * @returns {{rtt_ms: number, modes: Record<string, import('./sweep-model.js').Profile>}|null} null: the scenario was not measured
 */
export function nearestProfile(profiles, scenario, rttMs) {
  const byRtt = profiles[scenario];
  if (!byRtt) return null;
  const rtts = Object.keys(byRtt).map(Number);
  const nearest = rtts.reduce((a, b) => (Math.abs(Math.log(b / rttMs)) < Math.abs(Math.log(a / rttMs)) ? b : a));
  return { rtt_ms: nearest, modes: byRtt[nearest] };
}

/**
 * The model's prediction of both modes at one point.
 * @param {Record<string, Record<string, Record<string, import('./sweep-model.js').Profile>>>} profiles profilesOf's
 * @param {import('./sweep-model.js').Machine} machine
 * @param {string} scenario
 * @param {import('./sweep-model.js').CellPoint} point
 * @returns {{modes: Record<string, {predicted_rps: number, predicted_limit: string, ceilings: Record<string, number>}>,
 *   predicted_ratio: number}|null} null when a mode has no profile
 */
export function predictPoint(profiles, machine, scenario, point) {
  const near = nearestProfile(profiles, scenario, point.rttMs);
  if (!near || SWEEP_MODES.some((m) => !near.modes[m])) return null;
  const modes = Object.fromEntries(SWEEP_MODES.map((mode) => {
    const p = predict(near.modes[mode], point, machine, { mode });
    return [mode, { predicted_rps: p.rps, predicted_limit: p.limit, ceilings: p.ceilings }];
  }));
  return { modes, predicted_ratio: modes.grpc.predicted_rps / modes.http.predicted_rps };
}

/**
 * The sweep's report from its measured cells.
 * @param {{measured: Array<{scenario: string, bandwidth_bps: number, rtt_ms: number, vus?: number, rate?: number,
 *   connections: string, link_check: object|null, runs: Record<string, object[]>}>, machine: import('./sweep-model.js').Machine,
 *   extend: {bandwidths: number[], rtts: number[], concurrency: number[]}, model: 'closed'|'open',
 *   services?: Record<string, {kind: string}>}} sweep
 *   runs: per mode, runRecord of each repeat; extend: the axes past the measured ones, predicted only; services: each own
 *   service's record by scenario (bench/own-service.js OwnRecord), whose streaming RPC makes a request a stream
 * @returns {object} the JSON's body (cells, predicted, profiles, verdicts, largest disagreement)
 */
export function buildSweep({ measured, machine, extend, model, services = {} }) {
  const profiles = profilesOf(measured);
  const key = model === 'open' ? 'rate' : 'vus';
  const cells = measured.map((c) => {
    const point = { bandwidth: c.bandwidth_bps, rttMs: c.rtt_ms, [key]: c[key] };
    const prediction = predictPoint(profiles, machine, c.scenario, point);
    const near = nearestProfile(profiles, c.scenario, c.rtt_ms);
    const modes = Object.fromEntries(SWEEP_MODES.map((mode) => {
      const runs = c.runs[mode];
      /** @type {Record<string, any>} */
      const figures = Object.fromEntries(['rps', 'p50_ms', 'p99_ms', 'failed', 'received_per_request', 'sent_per_request',
        'link_down_per_request', 'link_up_per_request', 'link_down_packets_per_request', 'link_up_packets_per_request',
        'server_cpu_us_per_request', 'proxy_cpu_us_per_request', 'client_us', 'k6_cpu_pct'].map((k) => [k, medianOf(runs, k)]));
      const p = prediction.modes[mode];
      const limit = measuredLimit(runs[Math.floor(runs.length / 2)].limit_text, { mode, rps: figures.rps }, { ceilings: p.ceilings });
      return [mode, /** @type {any} */ ({ ...figures, limit, ...p, runs })];
    }));
    const cell = {
      scenario: c.scenario, bandwidth_bps: c.bandwidth_bps, rtt_ms: c.rtt_ms, [key]: c[key], connections: c.connections,
      kind: 'measured', link_check: c.link_check, modes,
      ratio: modes.grpc.rps / modes.http.rps,
      // The repeats' 95% interval of the ratio, HTTP and gRPC paired by repeat (stats.js ratioInterval; ends from 3 repeats).
      ratio_ci: ratioInterval(c.runs.http.map((r) => r.rps), c.runs.grpc.map((r) => r.rps)),
      predicted_ratio: prediction.predicted_ratio,
      p99_ratio: modes.grpc.p99_ms / modes.http.p99_ms,
      flagged: null,
      window_ceiling_rps: modes.grpc.ceilings.window ?? null,
    };
    const off = offBy(cell);
    if (c.connections === 'per-request') off.push('new connections per request: the handshake is not delayed');
    if (off.length) {
      // The causes of the modes that are off themselves; of both when only their ratio is.
      const offModes = SWEEP_MODES.filter((m) => Math.abs(modes[m].rps / modes[m].predicted_rps - 1) > FLAG_OFF);
      const causes = [...new Set((offModes.length ? offModes : SWEEP_MODES).flatMap((mode) => likelyCauses({ mode, ...modes[mode],
        server_us: modes[mode].server_cpu_us_per_request === null ? null : modes[mode].server_cpu_us_per_request + (modes[mode].proxy_cpu_us_per_request ?? 0) },
        { rps: modes[mode].predicted_rps, limit: modes[mode].predicted_limit }, near.modes[mode],
        { rttMs: c.rtt_ms, connections: c.connections, vus: c.vus, serverCores: machine.serverCores })))];
      cell.flagged = { reason: off.join('; '), likely_causes: causes };
    }
    return cell;
  });
  const predicted = predictedCells({ cells, profiles, machine, extend, key });
  const perRequest = cells.some((c) => c.connections === 'per-request');
  const worst = cells.flatMap((c) => SWEEP_MODES.map((mode) => ({ cell: c, mode, off: c.modes[mode].rps / c.modes[mode].predicted_rps - 1 })))
    .reduce((a, b) => (!a || Math.abs(b.off) > Math.abs(a.off) ? b : a), null);
  return {
    model,
    machine,
    profiles,
    cells,
    predicted,
    verdicts: verdictsOf(cells, predicted, key, services).map((v) => (perRequest ? { ...v, line: `${v.line} [${PER_REQUEST_NOTE}]` } : v)),
    per_request_connections: perRequest,
    largest_disagreement: worst && {
      scenario: worst.cell.scenario, bandwidth_bps: worst.cell.bandwidth_bps, rtt_ms: worst.cell.rtt_ms, [key]: worst.cell[key],
      mode: worst.mode, off_pct: worst.off * 100,
    },
  };
}

/** The map's cells the sweep did not measure: every combination of the measured and extended axes, predicted. */
function predictedCells({ cells, profiles, machine, extend, key }) {
  const scenarios = [...new Set(cells.map((c) => c.scenario))];
  const axis = (field, more) => [...new Set([...cells.map((c) => c[field]), ...more])].sort((a, b) => a - b);
  const bandwidths = axis('bandwidth_bps', extend.bandwidths);
  const rtts = axis('rtt_ms', extend.rtts);
  const levels = axis(key, extend.concurrency);
  const out = [];
  for (const scenario of scenarios) {
    for (const rtt of rtts) {
      for (const level of levels) {
        for (const bandwidth of bandwidths) {
          if (cells.some((c) => c.scenario === scenario && c.rtt_ms === rtt && c[key] === level && c.bandwidth_bps === bandwidth)) continue;
          const p = predictPoint(profiles, machine, scenario, { bandwidth, rttMs: rtt, [key]: level });
          if (p) out.push({ scenario, bandwidth_bps: bandwidth, rtt_ms: rtt, [key]: level, kind: 'predicted', ...p });
        }
      }
    }
  }
  return out;
}

/** The ratio a map shows for a cell: measured where it was measured. */
export const shownRatio = (c) => (c.kind === 'measured' ? c.ratio : c.predicted_ratio);

/** The limit a map or a verdict names for a mode of a cell. */
const limitIn = (c, mode) => (c.kind === 'measured' && c.modes[mode].limit !== 'none' ? c.modes[mode].limit : c.modes[mode].predicted_limit);

/**
 * One verdict per scenario, RTT and concurrency (sweep-model.js verdictLine), in streams where the scenario's RPC streams.
 * @param {object[]} cells measured
 * @param {object[]} predicted
 * @param {'vus'|'rate'} key
 * @param {Record<string, {kind: string}>} services own services' records by scenario
 * @returns {Array<{scenario: string, rtt_ms: number, measured: boolean, line: string}>}
 */
function verdictsOf(cells, predicted, key, services) {
  const all = [...cells, ...predicted];
  const groups = new Map();
  for (const c of all) {
    const id = `${c.scenario}|${c.rtt_ms}|${c[key]}`;
    if (!groups.has(id)) groups.set(id, []);
    groups.get(id).push(c);
  }
  return [...groups.values()].map((row) => {
    row.sort((a, b) => a.bandwidth_bps - b.bandwidth_bps);
    const [first] = row;
    const unit = services[first.scenario] && services[first.scenario].kind !== 'unary' ? 'streams' : 'requests';
    const line = verdictLine({ rttMs: first.rtt_ms, concurrency: concurrencyOf(first), unit }, row.map((c) => ({
      bandwidth: c.bandwidth_bps, ratio: shownRatio(c), http_limit: limitIn(c, 'http'), grpc_limit: limitIn(c, 'grpc'), kind: c.kind,
      settled: c.kind === 'measured' ? c.ratio_ci?.settled ?? null : null, pairs: c.ratio_ci?.pairs,
    })));
    return { scenario: first.scenario, rtt_ms: first.rtt_ms, [key]: first[key], measured: row.some((c) => c.kind === 'measured'), line };
  }).sort((a, b) => a.scenario.localeCompare(b.scenario) || a.rtt_ms - b.rtt_ms || a[key] - b[key]);
}

/**
 * The answer for one link from a sweep's report: the measured cell if there is one, else the model's prediction.
 * @param {object} report buildSweep's result (or the JSON's)
 * @param {{bandwidth: number, rttMs: number, vus?: number, rate?: number}} point
 * @returns {string[]} one line per scenario, each saying measured or predicted
 */
export function answerFor(report, point) {
  const key = report.model === 'open' ? 'rate' : 'vus';
  if (point[key] === undefined) throw Object.assign(new Error(`this sweep is the ${report.model} model: give --${key === 'rate' ? 'rate' : 'vus'}`), { code: 'ERR_USAGE' });
  const where = `${formatRate(point.bandwidth)} and ${point.rttMs} ms with ${concurrencyOf(point)}`;
  const scenarios = [...new Set(report.cells.map((c) => c.scenario))];
  return scenarios.map((scenario) => {
    const cell = report.cells.find((c) => c.scenario === scenario && c.bandwidth_bps === point.bandwidth && c.rtt_ms === point.rttMs
      && c[key] === point[key]);
    const say = (ratio, rps, limits) => `gRPC/HTTP RPS ${ratio.toFixed(2)}: ${winnerText(ratio)} (HTTP ${formatNumber(rps.http, 0)} req/s, `
      + `${LIMIT_NAMES[limits.http] ?? limits.http}; gRPC ${formatNumber(rps.grpc, 0)} req/s, ${LIMIT_NAMES[limits.grpc] ?? limits.grpc})`;
    if (cell) {
      return `${scenario} at ${where}: measured, ${say(cell.ratio, { http: cell.modes.http.rps, grpc: cell.modes.grpc.rps },
        { http: limitIn(cell, 'http'), grpc: limitIn(cell, 'grpc') })}${cell.flagged ? `; flagged: ${cell.flagged.reason}` : ''}`;
    }
    const p = predictPoint(report.profiles, report.machine, scenario, point);
    return `${scenario} at ${where}: predicted (no measured cell there; from the per-request figures measured at `
      + `${nearestProfile(report.profiles, scenario, point.rttMs).rtt_ms} ms), ${say(p.predicted_ratio,
        { http: p.modes.http.predicted_rps, grpc: p.modes.grpc.predicted_rps },
        { http: p.modes.http.predicted_limit, grpc: p.modes.grpc.predicted_limit })}`;
  });
}

const winnerText = (ratio) => (ratio > 1.05 ? 'gRPC serves more' : ratio < 0.95 ? 'JSON over HTTP/1.1 serves more' : 'a tie within 5%');

/**
 * The sweep's report as Markdown.
 * @param {object} report buildSweep's result with `provenance`, `command`, `maps` (file names) and `elapsed_s`
 * @returns {string}
 */
export function renderSweep(report) {
  const key = report.model === 'open' ? 'rate' : 'vus';
  const n = (v, d = 0) => formatNumber(v, d);
  const lines = [`# Where gRPC pays off: the sweep (${report.cells.length} measured cells)`, '', `\`${report.command}\``, ''];
  const p = report.provenance;
  if (p) lines.push(`Commit ${p.commit ?? 'unknown'}${p.dirty ? ' (dirty)' : ''}, ${report.generated_at}; Node ${p.versions?.node}, `
    + `k6 ${String(p.versions?.k6).replace(/^k6 /, '')}; ${p.pinning}. ${report.elapsed_s ? `Took ${Math.round(report.elapsed_s)} s.` : ''}`, '');
  // --render: the measurement above, the model and the words below from a later checkout.
  if (report.rendered) lines.push(`Rendered again from the measured runs (\`npm run sweep -- --render\`) at commit ${report.rendered.commit ?? 'unknown'}, ${report.rendered.at}.`, '');
  lines.push('## Verdicts', '', ...report.verdicts.map((v) => `- ${v.scenario}: ${v.line}`), '');
  const worst = report.largest_disagreement;
  if (worst) {
    lines.push(`Largest disagreement of measured and predicted: ${worst.mode} at ${formatRate(worst.bandwidth_bps)}, ${worst.rtt_ms} ms, `
      + `${worst[key]} ${key === 'vus' ? 'VUs' : 'req/s'} (${worst.scenario}): ${worst.off_pct >= 0 ? '+' : ''}${worst.off_pct.toFixed(0)}%. `
      + `Cells more than ${FLAG_OFF * 100}% off are flagged below with a likely cause.`, '');
  }
  if (report.maps?.length) lines.push('## Heat maps', '', ...report.maps.map((m) => `- ${m}`), '');
  lines.push('## Measured against predicted', '');
  const limit = (m) => LIMIT_NAMES[m.limit] ?? m.limit;
  lines.push(markdownTable([
    ['scenario', 'bandwidth', 'RTT (ms)', key === 'vus' ? 'VUs' : 'rate', 'HTTP RPS (pred.)', 'HTTP limit', 'gRPC RPS (pred.)', 'gRPC limit',
      'ratio (pred.)', 'p99 HTTP / gRPC (ms)', 'link B/req down·up HTTP', 'link B/req down·up gRPC', 'pkts/req HTTP', 'pkts/req gRPC',
      'server µs/req HTTP·gRPC', 'client µs/req HTTP·gRPC', 'flagged'],
    ...report.cells.map((c) => {
      const { http, grpc } = c.modes;
      return [c.scenario, formatRate(c.bandwidth_bps), String(c.rtt_ms), String(c[key]),
        `${n(http.rps)} (${n(http.predicted_rps)})`, limit(http), `${n(grpc.rps)} (${n(grpc.predicted_rps)})`,
        `${limit(grpc)}${c.window_ceiling_rps === null ? '' : ` (window ÷ RTT ceiling: ${n(c.window_ceiling_rps, 1)} req/s)`}`,
        `${ratioCell(c.ratio, c.ratio_ci)} (${n(c.predicted_ratio, 2)})`, `${n(http.p99_ms, 1)} / ${n(grpc.p99_ms, 1)}`,
        `${n(http.link_down_per_request)}·${n(http.link_up_per_request)}`, `${n(grpc.link_down_per_request)}·${n(grpc.link_up_per_request)}`,
        `${n(http.link_down_packets_per_request, 2)}·${n(http.link_up_packets_per_request, 2)}`,
        `${n(grpc.link_down_packets_per_request, 2)}·${n(grpc.link_up_packets_per_request, 2)}`,
        `${n(http.server_cpu_us_per_request)}·${n(grpc.server_cpu_us_per_request)}`, `${n(http.client_us)}·${n(grpc.client_us)}`,
        c.flagged ? `${c.flagged.reason}: ${c.flagged.likely_causes.join('; ')}` : ''];
    }),
  ], { align: ['l', 'r', 'r', 'r', 'r', 'l', 'r', 'l', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'l'] }));
  lines.push('', 'Link bytes and packets are the veth\'s counters per request (frames: Ethernet, IP and TCP headers and ACKs included); '
    + 'server µs include toxiproxy\'s (it runs on the server\'s cores); client µs are k6\'s CPU per request. "pred." is the model\'s '
    + 'RPS: the least of the bandwidth, latency (or offered rate), server, client and, for gRPC past 64 KiB responses, window ceilings, '
    + 'from the medians of these per-request figures over the cells of the same scenario and RTT (docs/sweep.md).'
    + (report.cells.some((c) => typeof c.ratio_ci?.low === 'number') ? ` A measured ratio's [low–high] is its 95% interval over the repeats `
      + `paired by run, Student's t of their log ratios (docs/report.md); \`${NOT_SETTLED_MARK}\`: the interval includes 1, and the verdict names no direction there.` : ''), '');
  const checks = report.cells.filter((c) => c.link_check?.warnings?.length);
  if (checks.length) lines.push('## Link check warnings', '', ...checks.map((c) => `- ${formatRate(c.bandwidth_bps)}, ${c.rtt_ms} ms: ${c.link_check.warnings.join('; ')}`), '');
  lines.push('## What the emulation cannot show', '', `- ${TOXIPROXY_NOTE}`,
    ...(report.per_request_connections ? [`- CONNECTIONS=per-request, so ${PER_REQUEST_NOTE}; every cell is flagged for it.`] : []),
    `- Cells past what this machine emulates (${report.limits_note}) are predicted only, drawn faded in the maps.`, '');
  return `${lines.join('\n')}\n`;
}
