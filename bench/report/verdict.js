// The verdict: at most four plain sentences above the table, on the first gRPC/HTTP pair of a report, each
// built only from figures that support it (and left out when they contradict it); a figure a run did not measure
// (rows.js MEASUREMENTS) is said to be NOT_MEASURED, with why, where the sentence would have used it.
import { boundNames, CLIENT_BOUND_PCT, CLIENT_BOUND_SHARE, ratioClaim, shareText, stated } from './reading.js';
import { formatNumber, NOT_MEASURED } from '../format.js';
import { MIN_PAIRS } from './stats.js';
import { carriedBy } from './carried.js';

/** The most sentences a verdict has. */
export const VERDICT_LINES = 4;

const SHORT = { http: 'HTTP', grpc: 'gRPC' };
const num = (v) => typeof v === 'number' && Number.isFinite(v);
const times = (ratio) => `${ratio.toFixed(ratio >= 10 ? 0 : ratio >= 1 ? 1 : 2)}×`;
/** A ratio's interval in the digits `times` gives the ratio itself (`0.90× to 1.02×`, not `0.90× to 1.0×`). */
const timesLike = (ratio) => (v) => `${v.toFixed(ratio >= 10 ? 0 : ratio >= 1 ? 1 : 2)}×`;
const wide = (m, field) => (m.wide_spread ?? []).some((w) => w.field === field);
const fixed2 = (ratio) => ratio.toFixed(2);

/**
 * Why the pair's columns lack a figure (rows.js notMeasured), e.g. 'HTTP and gRPC: the k6 run was too short to sample it';
 * null when neither lacks it.
 * @param {Array<[object, string]>} columns [column of the report, its short name]
 * @param {string} field one of the figure's fields
 * @returns {string|null}
 */
function whyMissing(columns, field) {
  const missing = columns.map(([m, name]) => [name, (m.not_measured ?? []).find((n) => n.fields.includes(field))?.reason]).filter(([, why]) => why);
  if (!missing.length) return null;
  const reasons = [...new Set(missing.map(([, why]) => why))];
  // One reason for all: said once.
  return reasons.length === 1 ? `${missing.map(([name]) => name).join(' and ')}: ${reasons[0]}`
    : missing.map(([name, why]) => `${name}: ${why}`).join('; ');
}

/** Items as a sentence lists them: 'a', 'a and b', 'a, b and c'. */
const andList = (items) => (items.length < 3 ? items.join(' and ') : `${items.slice(0, -1).join(', ')} and ${items.at(-1)}`);

/** Both columns hold a positive figure of the field. */
const both = (a, b, field) => num(a[field]) && num(b[field]) && a[field] > 0;

/**
 * The figures the verdict's first sentence ("Per request, gRPC used …") states, in its order, each where it applies: the
 * server CPU where both columns measured it and neither spread wide; the bytes of a direction where it carries a
 * payload to speak of (carried.js: an export's requests, the demo's responses, a catalog's both).
 * @type {Array<{what: (facts: object) => string, field: string, label: string, applies: (facts: object) => boolean}>}
 */
export const PER_REQUEST = [
  {
    what: () => 'the server CPU', field: 'server_cpu_us_per_request', label: 'server CPU per request (µs)',
    applies: ({ a, b }) => both(a, b, 'server_cpu_us_per_request') && !wide(a, 'server_cpu_us_per_request') && !wide(b, 'server_cpu_us_per_request'),
  },
  {
    what: () => 'the sent bytes', field: 'sent_per_request', label: 'sent per request (bytes)',
    applies: ({ a, b, carried }) => carried.sent.carries && both(a, b, 'sent_per_request'),
  },
  {
    // COMPRESSION compresses the responses only.
    what: ({ a }) => `the received bytes${a.compression && a.compression !== 'off' ? ` (${a.compression}-compressed)` : ''}`,
    field: 'received_per_request', label: 'received per request (bytes)',
    applies: ({ a, b, carried }) => carried.received.carries && both(a, b, 'received_per_request'),
  },
];

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

/** The name of what held a column's runs back over a link, when all its runs agree (bench/records/summary.js limitOf); null otherwise. */
function limitName(m) {
  const names = new Set((m.limits ?? []).map((l) => (l.startsWith('none reached') ? 'none' : l.replace(/ \(.*$/, ''))));
  if (names.size !== 1) return null;
  const [name] = names;
  return name === NOT_MEASURED ? null : name;
}

/**
 * What the verdict's rules read of a report's first pair (verdictFacts).
 * @typedef {object} VerdictFacts
 * @property {object} report
 * @property {object} a the HTTP column
 * @property {object} b the gRPC column
 * @property {Array<[object, string]>} named [column, 'HTTP'|'gRPC']
 * @property {(label: string, field: string, show: (ratio: number) => string) => import('./reading.js').RatioClaim} claim
 *   a ratio gRPC/HTTP of a row, as far as its 95% interval settles it (reading.js ratioClaim)
 * @property {ReturnType<typeof carriedBy>} carried what each direction carries (carried.js)
 * @property {import('./reading.js').RatioClaim|null} rpsClaim the k6 RPS ratio's claim, closed model only
 * @property {string|null} rpsRatio that ratio as a sentence states it: `0.49 (95% interval …)` or `not settled at …`
 * @property {object|null} link the emulated link (null on loopback and to a remote machine)
 * @property {number[]} disturbed the runs (1-based, the pair's repeats) in which either column's pinned cores lost
 *   machine-noise.js DISTURBED or more of their time
 * @property {number} quiet the pair's runs that were not
 */

/**
 * The facts of a report's verdict: null when there is nothing to say, as the pair is missing, its figures were measured
 * under different conditions, or requests failed.
 * @param {{order: string[], modes: Record<string, object>, notes: string[], link: object|null, provenance?: object|null}} report
 * @returns {VerdictFacts|null}
 */
export function verdictFacts(report) {
  const pair = verdictPair(report);
  if (!pair) return null;
  const [a, b] = pair.map((k) => report.modes[k]);
  if (report.notes.some((n) => n.startsWith('NOT COMPARABLE')) || report.provenance?.differences?.length) return null;
  if (a.failed + b.failed + a.checks_failed + b.checks_failed > 0) return null;
  // Each ratio stated as far as its 95% interval settles it (reading.js ratioClaim): a direction where it excludes 1, with the
  // interval; "not settled at N repeats" instead where it includes 1; with too few repeats, the ratio and that it has no interval.
  const claim = (label, field, show) => ratioClaim(report, pair[0], pair[1], label, b[field] / a[field], show);
  // The k6 RPS ratio as a sentence may state it: `is 0.49 (95% interval …)`, or `is not settled at N repeats: …`.
  const rpsClaim = num(a.rps) && num(b.rps) && a.rps > 0 && a.model === 'closed' ? claim('RPS (req/s)', 'rps', fixed2) : null;
  const rpsRatio = rpsClaim && (rpsClaim.settled === false ? rpsClaim.note
    : `${fixed2(b.rps / a.rps)}${rpsClaim.note ? ` (${rpsClaim.note})` : ''}`);
  const disturbed = [...new Set([a, b].flatMap((m) => (m.disturbed ?? []).map((d) => d.run)))].sort((x, y) => x - y);
  return {
    report, a, b, named: [[a, 'HTTP'], [b, 'gRPC']], claim, carried: carriedBy(report, a, b), rpsClaim, rpsRatio,
    link: report.link && report.link.name !== 'remote' ? report.link : null,
    disturbed, quiet: Math.min(a.repeats, b.repeats) - disturbed.length,
  };
}

/** The figures of PER_REQUEST that apply, each with its ratio and claim. */
const perRequestParts = (f) => PER_REQUEST.filter((rule) => rule.applies(f)).map((rule) => {
  const ratio = f.b[rule.field] / f.a[rule.field];
  return { what: rule.what(f), ratio, claim: f.claim(rule.label, rule.field, timesLike(ratio)) };
});

/** The server's accounting missing in a column (rows.js MEASUREMENTS): said, with why, rather than left out. */
const serverMissing = (f) => {
  const why = whyMissing(f.named, 'server_cpu_us_per_request');
  return why ? `server CPU ${NOT_MEASURED} (${why})` : null;
};

/** A ceiling below what k6 reached is no ceiling (a failing or disturbed pass): then nothing is said of it. */
const ceiling = (m) => num(m.capacity_rps) && m.capacity_rps >= m.rps;
const overLink = (f) => (f.report.link ? ` over the same ${f.link ? 'link' : 'network'}` : '');
/** Neither sign of the client's limit (k6's CPU, the client's ceiling) measured in a column. */
const unjudged = (f) => f.named.filter(([m]) => m.client_bound_by == null);
const boundModes = (f) => [[f.a, 'http'], [f.b, 'grpc']].filter(([m]) => m.client_bound);
/** The client-bound sentences: closed model, on loopback, with both columns judged. */
const judgedLocal = (f) => Boolean(f.rpsRatio) && !f.report.link && unjudged(f).length === 0;

/** Too few quiet runs to conclude anything: fewer than an interval needs, or none at all for one or two repeats. */
const tooBusy = (f) => f.disturbed.length > 0 && f.quiet < Math.min(MIN_PAIRS, Math.min(f.a.repeats, f.b.repeats));

/**
 * The verdict's rules, in the order of their sentences: each says when it applies and the sentence it writes. The
 * first defers to a busy machine: with too few quiet runs it is the whole verdict. The last four are exclusive: what
 * the k6 RPS row measures is said once, and that the servers set the limit is not said of runs a busy machine slowed.
 * @type {Array<{name: string, applies: (f: VerdictFacts) => boolean, says: (f: VerdictFacts) => string}>}
 */
export const VERDICT_RULES = [
  {
    name: 'a busy machine',
    applies: (f) => f.disturbed.length > 0,
    says: (f) => `The machine was busy in ${f.disturbed.length === 1 ? 'run' : 'runs'} ${andList(f.disturbed.map(String))} `
      + `of ${Math.min(f.a.repeats, f.b.repeats)} (DISTURBED, under the table): other processes or the hypervisor took time from `
      + `the cores the server or k6 ran on, which k6's figures do not show${tooBusy(f)
        ? '. Too few quiet runs are left to conclude anything: rerun on a quiet machine.'
        : '. What follows rests on those runs too: rerun on a quiet machine to be sure.'}`,
  },
  {
    name: 'per request',
    applies: (f) => perRequestParts(f).length > 0 || serverMissing(f) !== null,
    says: (f) => {
      const parts = perRequestParts(f);
      const missing = serverMissing(f);
      const said = parts.filter((p) => p.claim.settled !== false);
      // One note for all where they share it (too few repeats), else each named: the interval of each.
      const notes = [...new Set(said.map((p) => p.claim.note).filter(Boolean))];
      const note = notes.length > 1 ? said.filter((p) => p.claim.note).map((p) => `${p.what.replace(/^the /, '')} ${p.claim.note}`).join('; ') : notes[0];
      const clauses = [
        said.length ? `gRPC used ${andList(said.map((p) => `${times(p.ratio)} ${p.what}`))} of JSON over HTTP${note ? ` (${note})` : ''}` : null,
        ...parts.filter((p) => p.claim.settled === false).map((p) => `gRPC's ${p.what.replace(/^the /, '')} against JSON over HTTP is ${p.claim.note}`),
      ].filter(Boolean);
      return clauses.length ? `Per request, ${clauses.join('; ')}${missing ? `; ${missing}` : ''}.` : `Per request: ${missing}.`;
    },
  },
  {
    name: 'servers\' ceilings',
    applies: (f) => ceiling(f.a) && ceiling(f.b),
    says: (f) => `Servers' ceilings (wrk/h2load${overLink(f)}): HTTP ${formatNumber(f.a.capacity_rps)}, gRPC ${formatNumber(f.b.capacity_rps)} req/s `
      + `(${stated(f.claim('server capacity, wrk/h2load (req/s)', 'capacity_rps', fixed2), (f.b.capacity_rps / f.a.capacity_rps).toFixed(2))}).`,
  },
  {
    // The pass ran for one column only: its ceiling, and the other's as not measured.
    name: 'one server\'s ceiling',
    applies: (f) => !(ceiling(f.a) && ceiling(f.b)) && f.named.some(([m]) => ceiling(m)) && whyMissing(f.named, 'capacity_rps') !== null,
    says: (f) => `Servers' ceilings (wrk/h2load${overLink(f)}): ${f.named.map(([m, name]) => (ceiling(m) ? `${name} ${formatNumber(m.capacity_rps)} req/s`
      : `${name} ${NOT_MEASURED} (${(m.not_measured ?? []).find((n) => n.fields.includes('capacity_rps'))?.reason ?? 'below what k6 reached'})`)).join(', ')}.`,
  },
  {
    name: 'the limit each mode hit over a link',
    applies: (f) => Boolean(f.report.link) && [f.a, f.b].every((m) => limitName(m) !== null) && Boolean(f.rpsRatio),
    says: (f) => {
      const limits = [f.a, f.b].map(limitName);
      const hit = (mode, name) => (name === 'none' ? `${SHORT[mode]} hit no limit (none at 80%)` : `${SHORT[mode]} hit the ${name} limit`);
      return `Over the ${f.link ? `${f.link.name} link` : 'network to the remote server'}, ${hit('http', limits[0])} and ${hit('grpc', limits[1])}; `
        + `the k6 RPS ratio gRPC/HTTP is ${f.rpsRatio}.`;
    },
  },
  {
    // Neither sign of the client's limit measured in a column: nothing claimed, and said so.
    name: 'whether k6 is the limit is not known',
    applies: (f) => Boolean(f.rpsRatio) && !f.report.link && unjudged(f).length > 0,
    says: (f) => {
      const why = [...new Set(unjudged(f).flatMap(([m]) => (m.not_measured ?? []).filter((n) => n.fields.includes('k6_cpu_pct')
        || n.fields.includes('client_ceiling_rps')).map((n) => n.reason)))];
      const bound = f.named.filter(([m]) => m.client_bound);
      return `${bound.length ? `The k6 RPS row is client-bound for ${boundNames(bound)}; for the other, w` : 'W'}hether the k6 RPS row measures k6 `
        + `or the server${bound.length ? '' : 's'} is not known: neither k6's CPU nor the client's ceiling was measured for `
        + `${unjudged(f).map(([, name]) => name).join(' and ')}${why.length ? ` (${why.join('; ')})` : ''}; the k6 RPS ratio gRPC/HTTP is ${f.rpsRatio}.`;
    },
  },
  {
    name: 'k6 client-bound',
    applies: (f) => judgedLocal(f) && boundModes(f).length > 0,
    says: (f) => {
      const modes = boundModes(f);
      return `The k6 RPS row is client-bound for ${boundNames(modes.map(([m, mode]) => [m, SHORT[mode]]))}, so it measures k6`
        + `${modes.length === 2 ? '' : ' there'}, not the server${modes.length === 2 ? 's' : ''}.`;
    },
  },
  {
    name: 'k6 below its ceiling',
    applies: (f) => judgedLocal(f) && f.disturbed.length === 0 && boundModes(f).length === 0 && f.a.client_bound_by === 'ceiling' && f.b.client_bound_by === 'ceiling'
      && !wide(f.a, 'rps') && !wide(f.b, 'rps'),
    says: (f) => {
      const shares = `HTTP ${shareText(f.a.client_share)}, gRPC ${shareText(f.b.client_share)}`;
      // Below the ceiling's threshold but with k6 at its CPU limit: near the client's limit, not clearly the servers'.
      const near = [[f.a, 'http'], [f.b, 'grpc']].filter(([m]) => m.client_bound_cpu).map(([, mode]) => SHORT[mode]);
      return near.length
        ? `k6 stayed below ${CLIENT_BOUND_SHARE} of its ceiling (${shares}) but ran at ${CLIENT_BOUND_PCT}% of its core or more for `
          + `${near.join(' and ')}: near the client's limit, so read the k6 RPS ratio gRPC/HTTP (${stated(f.rpsClaim, fixed2(f.b.rps / f.a.rps))}) beside the servers' ceilings.`
        : `k6 stayed below ${CLIENT_BOUND_SHARE} of its ceiling (${shares}), so the servers set the limit; the k6 RPS ratio gRPC/HTTP is ${f.rpsRatio}.`;
    },
  },
  {
    name: 'k6 below its CPU limit',
    applies: (f) => judgedLocal(f) && f.disturbed.length === 0 && boundModes(f).length === 0 && f.a.client_bound_by !== 'ceiling' && f.b.client_bound_by !== 'ceiling'
      && (f.a.k6_cpu_runs?.client_bound ?? 0) + (f.b.k6_cpu_runs?.client_bound ?? 0) === 0 && !wide(f.a, 'rps') && !wide(f.b, 'rps'),
    says: (f) => `k6 stayed below ${CLIENT_BOUND_PCT}% of its core in every run; the k6 RPS ratio gRPC/HTTP is ${f.rpsRatio}.`,
  },
];

/**
 * The verdict of a report (bench/report/report.js): the sentences of VERDICT_RULES that apply, in their order: the
 * server's cost per request and the bytes of each direction that carries a payload (PER_REQUEST); the servers'
 * ceilings under wrk/h2load where the capacity pass ran and they are ceilings (above what k6 reached); which side the k6
 * RPS row measures (client-bound, on loopback) or, over a link, which limit each mode hit. Nothing when the pair is
 * missing, the columns are not comparable, or requests failed (verdictFacts).
 * @param {{order: string[], modes: Record<string, object>, notes: string[], link: object|null, provenance?: object|null}} report
 * @returns {string[]} at most VERDICT_LINES sentences
 */
export function verdictOf(report) {
  const facts = verdictFacts(report);
  if (!facts) return [];
  const rules = tooBusy(facts) ? VERDICT_RULES.slice(0, 1) : VERDICT_RULES;
  return rules.filter((rule) => rule.applies(facts)).map((rule) => rule.says(facts)).slice(0, VERDICT_LINES);
}
