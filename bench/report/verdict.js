// The verdict: at most four plain sentences above the table, on the first gRPC/HTTP pair of a report, each
// built only from figures that support it (and left out when they are missing or contradict it).
import { boundNames, CLIENT_BOUND_PCT, CLIENT_BOUND_SHARE } from './reading.js';
import { formatNumber } from '../format.js';

/** The most sentences a verdict has. */
export const VERDICT_LINES = 4;

const SHORT = { http: 'HTTP', grpc: 'gRPC' };
const num = (v) => typeof v === 'number' && Number.isFinite(v);
const times = (ratio) => `${ratio.toFixed(ratio >= 10 ? 0 : ratio >= 1 ? 1 : 2)}×`;
const wide = (m, field) => (m.wide_spread ?? []).some((w) => w.field === field);

/**
 * The first gRPC/HTTP pair of a report: the first HTTP column, and the first gRPC column of the same compression and
 * Node release. With several pairs (gzip, NODE_VERSIONS) the verdict speaks of this one and says nothing of the others.
 * @param {{order: string[], modes: Record<string, object>}} report
 * @returns {[string, string]|null} [HTTP column, gRPC column], or null when there is no such pair
 */
export function verdictPair(report) {
  const { order, modes } = report;
  const http = order.find((k) => modes[k].mode === 'http');
  if (!http) return null;
  const grpc = order.find((k) => modes[k].mode === 'grpc' && modes[k].compression === modes[http].compression
    && (modes[k].node_release ?? null) === (modes[http].node_release ?? null));
  return grpc ? [http, grpc] : null;
}

/** The name of what held a column's runs back over a link, when all its runs agree (summary.js limitOf); null otherwise. */
function limitName(m) {
  const names = new Set((m.limits ?? []).map((l) => (l.startsWith('none reached') ? 'none' : l.replace(/ \(.*$/, ''))));
  if (names.size !== 1) return null;
  const [name] = names;
  return name === 'not measured' ? null : name;
}

/**
 * The verdict of a report (bench/report/report.js): the server's cost per request and the bytes received; the servers'
 * ceilings under wrk/h2load where the capacity pass ran and they are ceilings (above what k6 reached); which side the k6
 * RPS row measures (client-bound, on loopback) or, over a link, which limit each mode hit. Nothing when the pair is
 * missing, the columns are not comparable, or requests failed.
 * @param {{order: string[], modes: Record<string, object>, notes: string[], link: object|null, provenance?: object|null}} report
 * @returns {string[]} at most VERDICT_LINES sentences
 */
export function verdictOf(report) {
  const pair = verdictPair(report);
  if (!pair) return [];
  const [a, b] = pair.map((k) => report.modes[k]);
  // Figures measured under different conditions, or with failures, support no plain verdict.
  if (report.notes.some((n) => n.startsWith('NOT COMPARABLE')) || report.provenance?.differences?.length) return [];
  if (a.failed + b.failed + a.checks_failed + b.checks_failed > 0) return [];
  const lines = [];

  const parts = [];
  if (num(a.server_cpu_us_per_request) && num(b.server_cpu_us_per_request) && a.server_cpu_us_per_request > 0
    && !wide(a, 'server_cpu_us_per_request') && !wide(b, 'server_cpu_us_per_request')) {
    parts.push(`${times(b.server_cpu_us_per_request / a.server_cpu_us_per_request)} the server CPU`);
  }
  if (num(a.received_per_request) && num(b.received_per_request) && a.received_per_request > 0) {
    const gzip = a.compression && a.compression !== 'off' ? ` (${a.compression}-compressed)` : '';
    parts.push(`${times(b.received_per_request / a.received_per_request)} the received bytes${gzip}`);
  }
  if (parts.length) lines.push(`Per request, gRPC used ${parts.join(' and ')} of JSON over HTTP.`);

  const link = report.link && report.link.name !== 'remote' ? report.link : null;
  const overLink = report.link ? ` over the same ${link ? 'link' : 'network'}` : '';
  // A ceiling below what k6 reached is no ceiling (a failing or disturbed pass): then nothing is said of it.
  if (num(a.capacity_rps) && num(b.capacity_rps) && a.capacity_rps >= a.rps && b.capacity_rps >= b.rps) {
    lines.push(`Servers' ceilings (wrk/h2load${overLink}): HTTP ${formatNumber(a.capacity_rps)}, gRPC ${formatNumber(b.capacity_rps)} req/s `
      + `(${(b.capacity_rps / a.capacity_rps).toFixed(2)}).`);
  }

  const rpsRatio = num(a.rps) && num(b.rps) && a.rps > 0 && a.model === 'closed' ? (b.rps / a.rps).toFixed(2) : null;
  if (report.link) {
    const limits = [a, b].map(limitName);
    if (limits.every(Boolean) && rpsRatio) {
      const hit = (mode, name) => (name === 'none' ? `${SHORT[mode]} hit no limit (none at 80%)` : `${SHORT[mode]} hit the ${name} limit`);
      lines.push(`Over the ${link ? `${link.name} link` : 'network to the remote server'}, ${hit('http', limits[0])} and ${hit('grpc', limits[1])}; `
        + `the k6 RPS ratio gRPC/HTTP is ${rpsRatio}.`);
    }
  } else if (rpsRatio && num(a.k6_cpu_pct) && num(b.k6_cpu_pct)) {
    const boundModes = [[a, 'http'], [b, 'grpc']].filter(([m]) => m.client_bound);
    const bound = boundNames(boundModes.map(([m, mode]) => [m, SHORT[mode]]));
    if (boundModes.length) {
      lines.push(`The k6 RPS row is client-bound for ${bound}, so it measures k6`
        + `${boundModes.length === 2 ? '' : ' there'}, not the server${boundModes.length === 2 ? 's' : ''}.`);
    } else if (a.client_bound_by === 'ceiling' && b.client_bound_by === 'ceiling' && !wide(a, 'rps') && !wide(b, 'rps')) {
      const shares = `HTTP ${a.client_share.toFixed(2)}, gRPC ${b.client_share.toFixed(2)}`;
      // Below the ceiling's threshold but with k6 at its CPU limit: near the client's limit, not clearly the servers'.
      const near = [[a, 'http'], [b, 'grpc']].filter(([m]) => m.client_bound_cpu).map(([, mode]) => SHORT[mode]);
      lines.push(near.length
        ? `k6 stayed below ${CLIENT_BOUND_SHARE} of its ceiling (${shares}) but ran at ${CLIENT_BOUND_PCT}% of its core or more for `
          + `${near.join(' and ')}: near the client's limit, so read the k6 RPS ratio gRPC/HTTP (${rpsRatio}) beside the servers' ceilings.`
        : `k6 stayed below ${CLIENT_BOUND_SHARE} of its ceiling (${shares}), so the servers set the limit; the k6 RPS ratio gRPC/HTTP is ${rpsRatio}.`);
    } else if (a.client_bound_by !== 'ceiling' && b.client_bound_by !== 'ceiling'
      && (a.k6_cpu_runs?.client_bound ?? 0) + (b.k6_cpu_runs?.client_bound ?? 0) === 0 && !wide(a, 'rps') && !wide(b, 'rps')) {
      lines.push(`k6 stayed below ${CLIENT_BOUND_PCT}% of its core in every run; the k6 RPS ratio gRPC/HTTP is ${rpsRatio}.`);
    }
  }
  return lines.slice(0, VERDICT_LINES);
}
