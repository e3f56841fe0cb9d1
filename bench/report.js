// The side-by-side report: a table of one column per mode (each the median of its
// repeated runs, with their min-max spread) and the ratio of each column to the first.
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { markdownTable } from 'markdown-table';
import { max, median, min } from 'simple-statistics';

// One k6 process using 90% of its cores or more is the bottleneck, not the server.
const CLIENT_BOUND_PCT = 90;

const MODE_LABEL = { http: 'HTTP (JSON)', grpc: 'gRPC (protobuf)' };

// [label, field, digits, how repeated runs combine]. Failures add up, so none is hidden by a median.
const ROWS = [
  ['RPS (req/s)', 'rps', 0, 'median'],
  ['requests', 'requests', 0, 'median'],
  ['failed requests', 'failed', 0, 'sum'],
  ['failed checks (sampled responses)', 'checks_failed', 0, 'sum'],
  ['latency p50 (ms)', 'latency_ms.p50', 2, 'median'],
  ['latency p90 (ms)', 'latency_ms.p90', 2, 'median'],
  ['latency p95 (ms)', 'latency_ms.p95', 2, 'median'],
  ['latency p99 (ms)', 'latency_ms.p99', 2, 'median'],
  ['data sent (bytes)', 'data_sent_bytes', 0, 'median'],
  ['data received (bytes)', 'data_received_bytes', 0, 'median'],
  ['sent per request (bytes)', 'sent_per_request', 1, 'median'],
  ['received per request (bytes)', 'received_per_request', 1, 'median'],
  ['payload per response (bytes)', 'payload_bytes', 0, 'median'],
  ['VUs', 'vus', 0, 'median'],
  ['duration (s)', 'duration_s', 1, 'median'],
  ['k6 CPU (% of its cores)', 'k6_cpu_pct', 0, 'median'],
];

const get = (object, field) => field.split('.').reduce((o, k) => o?.[k], object);

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
 * @param {import('./summary.js').ModeFigures[]} runs at least one
 * @returns {object} the figures' shape, plus `spread[field] = {min, max}`, `repeats` and `runs` (summary files)
 */
export function aggregate(runs) {
  const combined = { mode: runs[0].mode, target: runs[0].target, host: runs[0].host, repeats: runs.length, spread: {} };
  for (const [, field, , how] of ROWS) {
    const values = runs.map((r) => get(r, field)).filter((v) => typeof v === 'number');
    if (values.length === 0) { set(combined, field, null); continue; }
    set(combined, field, how === 'sum' ? values.reduce((a, b) => a + b, 0) : median(values));
    combined.spread[field] = { min: min(values), max: max(values) };
  }
  combined.client_bound = runs.some((r) => r.k6_cpu_pct >= CLIENT_BOUND_PCT);
  combined.runs = runs.map((r) => ({ file: r.file, run: r.run }));
  return combined;
}

/**
 * The JSON report: each mode's combined figures and every column's ratio to the first.
 * @param {Array<{key: string, runs: import('./summary.js').ModeFigures[]}>} columns in table order;
 *   the first is the baseline of the ratios (the main job passes HTTP first)
 * @param {{generatedAt?: Date, scenario?: string}} [options]
 * @returns {{generated_at: string, scenario: string|null, order: string[], modes: Record<string, object>,
 *   ratios: Record<string, Record<string, number|null>>, client_bound: string[], notes: string[]}}
 *   ratios[`${key}/${first}`][row label] = column median / first column median
 */
export function buildReport(columns, { generatedAt = new Date(), scenario = null } = {}) {
  const modes = Object.fromEntries(columns.map(({ key, runs }) => [key, aggregate(runs)]));
  const [base, ...others] = columns.map((c) => c.key);
  const ratios = {};
  for (const key of others) {
    const ratio = (ratios[`${key}/${base}`] = {});
    for (const [label, field] of ROWS) {
      const x = get(modes[base], field);
      const y = get(modes[key], field);
      ratio[label] = typeof x === 'number' && typeof y === 'number' && x !== 0 ? y / x : null;
    }
  }
  const clientBound = columns.map((c) => c.key).filter((k) => modes[k].client_bound);
  return {
    generated_at: generatedAt.toISOString(),
    scenario,
    order: columns.map((c) => c.key),
    modes,
    ratios,
    client_bound: clientBound,
    notes: notesOf(modes, clientBound),
  };
}

function notesOf(modes, clientBound) {
  const notes = [];
  for (const [key, mode] of Object.entries(modes)) {
    notes.push(`${key}: ${mode.host}, ${mode.repeats} run(s): ${mode.runs.map((r) => r.file).join(', ')}`);
    const run = mode.runs[0].run;
    if (run?.pinning) notes.push(`${key}: ${run.pinning}`);
    const dashboards = mode.runs.map((r) => r.run?.dashboard).filter(Boolean);
    if (dashboards.length) notes.push(`${key}: k6 web dashboard ${dashboards.join(', ')}`);
  }
  for (const key of clientBound) {
    notes.push(`${key}: k6 used ${CLIENT_BOUND_PCT}% or more of its cores, so the RPS is client-bound: `
      + 'the load generator, not the server, set the limit.');
  }
  return notes;
}

const number = (value, digits) => (value === null || value === undefined ? 'n/a'
  : value.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits }));

function cell(mode, field, digits, how) {
  const value = number(get(mode, field), digits);
  const spread = mode.spread[field];
  if (mode.repeats < 2 || how === 'sum' || !spread || number(spread.min, digits) === number(spread.max, digits)) return value;
  return `${value} (${number(spread.min, digits)}–${number(spread.max, digits)})`;
}

/**
 * The report as a Markdown table with notes below it. A cell shows the median and,
 * for repeated runs, the (min–max) spread.
 * @param {ReturnType<typeof buildReport>} report
 * @returns {string}
 */
export function renderMarkdown(report) {
  const keys = report.order;
  const heading = (k) => {
    const m = report.modes[k];
    return `${MODE_LABEL[k] ?? MODE_LABEL[m.mode] ?? k}${m.target ? ` ${m.target}` : ''}`;
  };
  const ratioKeys = Object.keys(report.ratios);
  const header = ['', ...keys.map(heading), ...ratioKeys.map((r) => `ratio ${r}`)];
  const rows = ROWS.map(([label, field, digits, how]) => [
    label,
    ...keys.map((k) => cell(report.modes[k], field, digits, how)),
    ...ratioKeys.map((r) => number(report.ratios[r][label], 2)),
  ]);
  const table = markdownTable([header, ...rows], { align: ['l', ...header.slice(1).map(() => 'r')] });
  const title = report.scenario ? `Scenario \`${report.scenario}\`\n\n` : '';
  return `${title}${table}\n\n${report.notes.map((n) => `- ${n}`).join('\n')}\n`;
}

/**
 * Writes `compare-<time>.md` and `.json` into a folder.
 * @param {ReturnType<typeof buildReport>} report
 * @param {string} dir folder, created if missing
 * @returns {Promise<{markdown: string, json: string}>} the two paths
 */
export async function writeReport(report, dir) {
  await mkdir(dir, { recursive: true });
  const base = path.join(dir, `compare-${report.generated_at.replace(/[:.]/g, '-')}`);
  const paths = { markdown: `${base}.md`, json: `${base}.json` };
  await writeFile(paths.markdown, `# JSON over HTTP vs protobuf over gRPC\n\n${renderMarkdown(report)}`);
  await writeFile(paths.json, `${JSON.stringify(report, null, 2)}\n`);
  return paths;
}
