// The side-by-side report: one table from two runs' figures, as Markdown and JSON.
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { markdownTable } from 'markdown-table';

// One k6 process reaching 90% of its cores is the bottleneck, not the server.
const CLIENT_BOUND_UTILIZATION = 0.9;

const MODE_LABEL = { http: 'HTTP (JSON)', grpc: 'gRPC (protobuf)' };

// [label, pick(figures), digits]. The order is the table's.
const ROWS = [
  ['RPS (req/s)', (f) => f.rps, 0],
  ['requests', (f) => f.requests, 0],
  ['failed requests', (f) => f.failed, 0],
  ['failed checks (sampled responses)', (f) => f.checks_failed, 0],
  ['latency p50 (ms)', (f) => f.latency_ms.p50, 2],
  ['latency p90 (ms)', (f) => f.latency_ms.p90, 2],
  ['latency p95 (ms)', (f) => f.latency_ms.p95, 2],
  ['latency p99 (ms)', (f) => f.latency_ms.p99, 2],
  ['data sent (bytes)', (f) => f.data_sent_bytes, 0],
  ['data received (bytes)', (f) => f.data_received_bytes, 0],
  ['sent per request (bytes)', (f) => f.sent_per_request, 1],
  ['received per request (bytes)', (f) => f.received_per_request, 1],
  ['payload per response (bytes)', (f) => f.payload_bytes, 0],
  ['VUs', (f) => f.vus, 0],
  ['duration (s)', (f) => f.duration_s, 1],
  ['k6 CPU (% of its cores)', (f) => (f.run?.k6_cpu ? f.run.k6_cpu.utilization * 100 : null), 0],
];

/**
 * The JSON report: both runs' figures keyed by mode, and B/A ratios.
 * @param {import('./summary.js').ModeFigures} a first run (the main job passes HTTP)
 * @param {import('./summary.js').ModeFigures} b second run (the main job passes gRPC)
 * @param {{generatedAt?: Date}} [options]
 * @returns {{generated_at: string, order: string[], modes: Record<string, object>,
 *   ratio: Record<string, number|null>, ratio_of: string, client_bound: string[], notes: string[]}}
 */
export function buildReport(a, b, { generatedAt = new Date() } = {}) {
  const keys = a.mode === b.mode ? [`${a.mode}-a`, `${b.mode}-b`] : [a.mode, b.mode];
  const modes = { [keys[0]]: a, [keys[1]]: b };
  const ratio = {};
  for (const [label, pick] of ROWS) {
    const x = pick(a);
    const y = pick(b);
    ratio[label] = typeof x === 'number' && typeof y === 'number' && x !== 0 ? y / x : null;
  }
  const clientBound = keys.filter((k) => modes[k].run?.k6_cpu?.utilization >= CLIENT_BOUND_UTILIZATION);
  return {
    generated_at: generatedAt.toISOString(),
    order: keys,
    modes,
    ratio_of: `${keys[1]}/${keys[0]}`,
    ratio,
    client_bound: clientBound,
    notes: notesOf(modes, keys, clientBound),
  };
}

function notesOf(modes, keys, clientBound) {
  const notes = [];
  for (const key of keys) {
    const { run, host, file } = modes[key];
    notes.push(`${key}: ${host}, summary ${file}`);
    if (run?.pinning) notes.push(`${key}: ${run.pinning}`);
    if (run?.dashboard) notes.push(`${key}: k6 web dashboard ${run.dashboard}`);
  }
  for (const key of clientBound) {
    notes.push(`${key}: k6 used ${(modes[key].run.k6_cpu.utilization * 100).toFixed(0)}% of its cores, so its RPS is client-bound: `
      + 'the load generator, not the server, set the limit.');
  }
  return notes;
}

const number = (value, digits) => (value === null || value === undefined ? 'n/a'
  : value.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits }));

/**
 * The report as a Markdown table with notes below it.
 * @param {ReturnType<typeof buildReport>} report
 * @returns {string}
 */
export function renderMarkdown(report) {
  const [ka, kb] = report.order;
  const heading = (k) => MODE_LABEL[report.modes[k].mode] + (report.modes[k].target ? ` ${report.modes[k].target}` : '');
  const rows = ROWS.map(([label, pick, digits]) => [
    label,
    number(pick(report.modes[ka]), digits),
    number(pick(report.modes[kb]), digits),
    number(report.ratio[label], 2),
  ]);
  const table = markdownTable([['', heading(ka), heading(kb), `ratio ${report.ratio_of}`], ...rows],
    { align: ['l', 'r', 'r', 'r'] });
  return `${table}\n\n${report.notes.map((n) => `- ${n}`).join('\n')}\n`;
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
