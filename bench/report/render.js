// The report as Markdown: the table (median and min–max of each cell), the notes and warnings above and below
// it, and the sections of the optional passes (compression, replicas, k6 instances, the link).
import { renderOwnSizes } from './own.js';
import { markdownTable } from 'markdown-table';
import { formatNumber, NOT_MEASURED } from '../format.js';
import { k6CpuPct } from '../k6/output.js';
import { MODES, modeLabel } from '../modes.js';
import { GZIP_LEVEL } from '../../server/compression.js';
import { formatRate } from '../settings/network.js';
import { renderBreakdown } from './profile.js';

import { isNotMeasured, ROWS, WIDE_SPREAD, valueAt } from './rows.js';
import { MIN_PAIRS } from './stats.js';


const number = formatNumber;

/**
 * One cell of a column: its median, with the (min–max) of repeated runs where they differ; NOT_MEASURED where the column
 * lacks the figure (rows.js MEASUREMENTS; the notes say why), 'n/a' where it does not apply.
 * @param {{repeats: number, spread: Record<string, {min: number, max: number}>, not_measured?: object[]}} mode a column of the report
 * @param {string} field
 * @param {number} digits
 * @param {'median'|'sum'} how
 * @returns {string}
 */
function cell(mode, field, digits, how) {
  const median = valueAt(mode, field);
  if (typeof median !== 'number' && isNotMeasured(mode, field)) return NOT_MEASURED;
  const value = number(median, digits);
  const spread = mode.spread[field];
  if (mode.repeats < 2 || how === 'sum' || !spread || number(spread.min, digits) === number(spread.max, digits)) return value;
  return `${value} (${number(spread.min, digits)}–${number(spread.max, digits)})`;
}

/**
 * The mark of a ratio whose interval includes 1, as Go's benchstat marks a difference that is not significant.
 */
export const NOT_SETTLED_MARK = '~';

/**
 * A ratio cell: the ratio of medians, its 95% interval where the repeats give one (stats.js ratioInterval), and
 * NOT_SETTLED_MARK where that interval includes 1; e.g. `0.47 [0.41–0.52]`, `0.98 [0.91–1.06] ~`.
 * @param {number|null|undefined} ratio
 * @param {import('./stats.js').Interval|null|undefined} ci
 * @returns {string}
 */
export function ratioCell(ratio, ci) {
  const value = number(ratio, 2);
  if (typeof ratio !== 'number' || typeof ci?.low !== 'number') return value;
  return `${value} [${number(ci.low, 2)}–${number(ci.high, 2)}]${ci.settled ? '' : ` ${NOT_SETTLED_MARK}`}`;
}

/**
 * The line under the table that says what the ratio cells' brackets are, over how many pairs of runs, their mark where
 * a cell has it, and why a ratio shown without brackets has none.
 * @param {Array<import('./stats.js').Interval>} cis the shown ratios' intervals that have ends
 * @param {string[]} bare why each shown ratio without an interval has none
 * @returns {string}
 */
function ratioLegend(cis, bare) {
  const ns = [...new Set(cis.map((ci) => ci.pairs))].sort((a, b) => a - b);
  const over = ns.length === 1 ? `over ${ns[0]} pairs of runs` : `over the pairs of runs each rests on (${ns.join(' or ')})`;
  const why = [...new Set(bare)];
  return `Ratios: [low–high] is the ratio's 95% interval ${over}, each pair measured back to back, Student's t of their log ratios `
    + '(docs/report.md)'
    + `${cis.some((ci) => !ci.settled) ? `; \`${NOT_SETTLED_MARK}\`: the interval includes 1, so these repeats do not settle which column is higher` : ''}`
    + `${why.length ? `; a ratio without brackets has no interval: ${why.join('; ')}` : ''}.`;
}

/**
 * The report's table and the legend of its ratio cells, of some of its rows: those of `rows` that a column has.
 * @param {ReturnType<typeof import('./report.js').buildReport>} report
 * @param {ReadonlyArray<import('./rows.js').Row>} [rows] ROWS (default), or a selection of them in their order
 * @returns {{table: string, legend: string}} Markdown; legend: '' when no ratio shown has an interval, else ends in a blank line
 */
export function renderTable(report, rows = ROWS) {
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
  const shown = rows.filter(({ field }) => keys.some((k) => valueAt(report.modes[k], field) !== null));
  const body = shown.map(({ label, field, digits, how }) => [
    label,
    ...keys.map((k) => cell(report.modes[k], field, digits, how)),
    ...ratioKeys.map((r) => ratioCell(report.ratios[r][label], report.ratio_ci?.[r]?.[label])),
  ]);
  const table = markdownTable([header, ...body], { align: ['l', ...header.slice(1).map(() => 'r')] });
  const shownRatios = shown.flatMap(({ label, how }) => ratioKeys.map((r) => ({ how, ratio: report.ratios[r][label], ci: report.ratio_ci?.[r]?.[label] })))
    .filter(({ ratio }) => typeof ratio === 'number');
  const cis = shownRatios.map(({ ci }) => ci).filter((ci) => typeof ci?.low === 'number');
  // Why a shown ratio has no interval: its runs (the interval's own reason), a summed row, or a run at or below 0.
  const bare = shownRatios.filter(({ ci }) => typeof ci?.low !== 'number')
    .map(({ how, ci }) => (ci?.why ? `${ci.why}${ci.pairs < MIN_PAIRS ? ` (both columns have it in ${ci.pairs} run${ci.pairs === 1 ? '' : 's'})` : ''}`
      : how === 'sum' ? 'a summed row (failures)' : 'a run measured 0 or less, whose ratio has no logarithm'));
  return { table, legend: cis.length ? `${ratioLegend(cis, bare)}\n\n` : '' };
}

/**
 * The report as a Markdown table with notes below it. A cell shows the median and,
 * for repeated runs, the (min–max) spread.
 * @param {ReturnType<typeof import('./report.js').buildReport>} report
 * @returns {string}
 */
export function renderMarkdown(report) {
  const keys = report.order;
  const { table, legend } = renderTable(report);
  const m = report.modes[keys[0]];
  const load = m.model === 'open' ? `open model, ${m.rate} req/s` : `closed model, ${m.vus} VUs`;
  const via = report.via ? ` · ${report.via.title}` : '';
  // TLS=1: said in the title, from what the servers negotiated (a remote server without an admin endpoint does not say).
  const tls = m.server_tls ? ' · TLS' : '';
  const title = `### Scenario \`${m.scenario}\`${via} · ${load} · connections: ${m.connections}${tls} · ${m.repeats} run(s) per mode\n\n`;
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
  const verdict = report.verdict?.length ? `**Verdict.**\n\n${report.verdict.map((v) => `- ${v}`).join('\n')}\n\n` : '';
  const own = report.own ? renderOwnSizes(report.own) : '';
  return `${warnings}${setup}${title}${verdict}${own}${link}${renderWideSpread(report)}${table}\n\n${legend}${reading}${instances}${notes.map((n) => `- ${n}`).join('\n')}\n`;
}

/** The warning above the table for columns whose runs disagree (aggregate's `wide_spread`); '' when none do. */
function renderWideSpread(report) {
  const lines = report.order.flatMap((key) => report.modes[key].wide_spread.map((w) => {
    const runs = w.outliers.map((o) => `run ${o.run} (${number(o.value, w.digits)}, ${o.off_pct > 0 ? '+' : '−'}${Math.abs(o.off_pct).toFixed(0)}%)`);
    return `> - ${w.label}, ${key}: ${number(w.min, w.digits)}–${number(w.max, w.digits)} over ${w.runs ?? report.modes[key].repeats} runs, `
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
 * @returns {string}
 */
export function provenanceLine(p, nodes) {
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
          number(one.latency_ms.p99, 2), one.k6_cpu ? number(k6CpuPct(one.k6_cpu), 0) : NOT_MEASURED, '']);
      }
      rows.push([key, String(r + 1), '**merged**', number(run.merged.requests, 0), number(run.merged.rps, 0), number(run.merged.p99_ms, 2),
        typeof run.merged.k6_cpu_pct === 'number' ? number(run.merged.k6_cpu_pct, 0) : NOT_MEASURED, number(run.merged.server_requests, 0)]);
    }
  }
  return `**k6 instances.** Each run was split over k6 processes by execution segment; merged: counters summed, `
    + `percentiles from all instances' samples (bench/k6/split.js). The merged requests include each instance's setup() request.\n\n`
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
    lines.push(`- ${pair} RPS ratio: measured ${number(ratio['RPS (req/s)'], 2)}; predicted for a bandwidth-bound pair `
      + `${number(predicted, 2)} from link bytes per request (frames, headers and ACKs included), `
      + `${number(ratio['RPS ceiling from bandwidth, k6 bytes (req/s)'], 2)} from k6's bytes per request`);
  }
  return `**Link.**\n\n${lines.join('\n')}\n\n`;
}

