// The fault matrix's report: one row per fault and mode (bench/passes/faults.js measures the cells).
import { markdownTable } from 'markdown-table';
import { formatNumber } from '../format.js';
import { modeLabel } from '../modes.js';

const fmtMib = (v) => (v === null || v === undefined ? 'n/a' : formatNumber(v, 0));
const fmtMs = (v) => (v === null || v === undefined ? 'n/a' : formatNumber(v, 1));
// What the memory budget did (server/memory-budget.js); absent in reports from before it.
const fmtBudget = (c) => (c.refused_answers === undefined ? 'n/a'
  : `${formatNumber(c.refused_answers)} answers refused, ${formatNumber(c.recycled)} workers replaced`);
// ghz's calls in a gRPC cell (bench/faults/mux-client.js); n/a in HTTP cells and in reports from before it.
const fmtMux = (m) => (!m ? 'n/a' : m.error ? m.error
  : `${formatNumber(m.answered)} / ${formatNumber(m.refused)} / ${formatNumber(m.failed)}`);
const fmtObserved = (o) => Object.entries(o).map(([k, v]) => `${k} ${typeof v === 'number' ? formatNumber(v, 0) : v}`).join(', ');

/** What ghz did in the gRPC cells, from the shape the cells recorded; nothing when no cell ran it. */
function muxNote(cells) {
  const shape = cells.find((c) => c.multiplexed?.shape)?.multiplexed.shape;
  if (!shape) return '';
  return `In gRPC cells ghz (grpc-go) runs beside k6 from the same start: ${shape.rps} calls a second, ${shape.concurrency} in flight `
    + `over ${shape.connections} connections, as gRPC clients multiplex. A call refused at the door never reached a worker (the port `
    + 'closed, or a GOAWAY left it unprocessed); ghz counts a call by its first attempt, so one that grpc-go retried by itself with '
    + 'success counts as refused. Failed is every other failure. ';
}

/**
 * The matrix as Markdown: one row per fault and mode, then what each fault run does.
 * @param {{cells: object[], settings: import('../settings/faults.js').FaultSettings, pinning: string}} report
 * @param {Record<string, string>} about what each fault does, by name, in table order (bench/faults/registry.js FAULTS)
 * @returns {string}
 */
export function renderFaults({ cells, settings, pinning }, about) {
  const rows = cells.map((c) => [c.fault, modeLabel(c.mode), formatNumber(c.completed), formatNumber(c.failed), formatNumber(c.timed_out),
    fmtMs(c.p99_ms), `${fmtMib(c.rss_before_mib)} → ${fmtMib(c.rss_peak_mib)} → ${fmtMib(c.rss_end_mib)}`,
    `${fmtMib(c.worker_rss_peak_mib)} / ${c.worker_memory_mb ? formatNumber(c.worker_memory_mb) : 'n/a'}`, fmtBudget(c), fmtMux(c.multiplexed), fmtObserved(c.observed)]);
  const table = markdownTable([['fault', 'mode', 'completed', 'failed', 'timed out', 'p99 ms', 'workers\' RSS, MiB: before → peak → end',
    'one worker\'s peak RSS / budget, MiB', 'budget refused', 'ghz calls, by its own count: answered / refused at the door / failed',
    'observed'], ...rows],
    { align: ['l', 'l', 'r', 'r', 'r', 'r', 'r', 'r', 'l', 'r', 'l'] });
  const abouts = Object.entries(about).filter(([name]) => settings.FAULTS.includes(name)).map(([name, text]) => `- \`${name}\`: ${text}`);
  // Over TLS every client finished a handshake before it misbehaved, against the job's own CA.
  const tls = settings.TLS ? ' over TLS (the job\'s own CA and certificate; k6, ghz and the misbehaving clients verify it), ' : ', ';
  return [`## Fault matrix${settings.TLS ? ' · TLS' : ''}`, '', table, '',
    `Each cell: a fresh server (${settings.WORKERS} workers)${tls}k6 at ${settings.VUS} VUs for ${settings.FAULT_DURATION} `
    + `(REQUEST_TIMEOUT ${settings.REQUEST_TIMEOUT}), the fault injected during the load. Failed includes timed out; `
    + `RSS is the sum of the workers' (a killed or replaced worker's memory leaves with it); one worker's peak is the highest `
    + `any worker reached, against the budget each holds (WORKER_MEMORY_MB ${settings.WORKER_MEMORY_MB}, 0: derived from the machine). `
    + muxNote(cells) + `${pinning}.`, '', ...abouts, ''].join('\n');
}

