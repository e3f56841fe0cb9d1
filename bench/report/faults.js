// The fault matrix's report: one row per fault and mode (bench/passes/faults.js measures the cells).
import { markdownTable } from 'markdown-table';
import { formatNumber, round } from '../format.js';
import { modeLabel } from '../modes.js';
import { durationMs } from '../settings/validators.js';

const fmtMib = (v) => (v === null || v === undefined ? 'n/a' : formatNumber(v, 0));
const fmtMs = (v) => (v === null || v === undefined ? 'n/a' : formatNumber(v, 1));
// What the memory budget did (server/memory-budget.js); absent in reports from before it.
const fmtBudget = (c) => (c.refused_answers === undefined ? 'n/a'
  : `${formatNumber(c.refused_answers)} answers refused, ${formatNumber(c.recycled)} workers replaced${fmtStreams(c.streams_ended)}`);
// The streams the workers ended, where there were any (a stream refused at its start is among the answers refused).
const fmtStreams = (s) => (!s || s.completed + s.cut === 0 ? ''
  : `; streams ${formatNumber(s.completed)} completed, ${formatNumber(s.cut)} cut`);
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

/** Seconds past FAULT_DURATION a cell may run before the report names it: k6's start-up and summary, at least. */
export const OVERRUN_MIN_S = 3;
/** And the share of FAULT_DURATION past which it is named, whichever is larger. */
export const OVERRUN_SHARE = 0.25;

/**
 * The cells that ran past FAULT_DURATION by a clear margin (OVERRUN_MIN_S or OVERRUN_SHARE of it, the larger), so that a
 * fault or client that outlived the load is not read as a cell of that length. Cells without elapsed_s (reports from
 * before it) are left out.
 * @param {Array<{fault: string, mode: string, elapsed_s?: number, ended_s?: Record<string, number>}>} cells
 * @param {string} faultDuration the matrix's FAULT_DURATION (k6 duration)
 * @returns {Array<{fault: string, mode: string, elapsed_s: number, over_s: number, last: string|null}>} over_s: seconds
 *   past FAULT_DURATION; last: the part that ended last (k6, fault or ghz), null when not recorded
 * @throws {Error} when faultDuration is not a k6 duration
 */
export function overranCells(cells, faultDuration) {
  const durationS = durationMs(faultDuration) / 1000;
  const marginS = Math.max(OVERRUN_MIN_S, OVERRUN_SHARE * durationS);
  return cells.filter((c) => Number.isFinite(c.elapsed_s) && c.elapsed_s - durationS > marginS).map((c) => ({
    fault: c.fault, mode: c.mode, elapsed_s: c.elapsed_s, over_s: round(c.elapsed_s - durationS, 1),
    last: c.ended_s ? Object.entries(c.ended_s).sort(([, a], [, b]) => b - a)[0][0] : null,
  }));
}

/** A sentence naming the cells that overran, or nothing. */
function overrunNote(cells, faultDuration) {
  const over = overranCells(cells, faultDuration);
  if (!over.length) return '';
  const each = over.map((c) => `\`${c.fault}\` · ${modeLabel(c.mode)} took ${formatNumber(c.elapsed_s, 1)} s, `
    + `${formatNumber(c.over_s, 1)} s past it${c.last ? ` (${c.last === 'fault' ? 'the fault' : c.last} ended last)` : ''}`);
  return `**Ran past FAULT_DURATION (${faultDuration}):** ${each.join('; ')}. Their figures cover that longer time.`;
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
  const overrun = overrunNote(cells, settings.FAULT_DURATION);
  const tls = settings.TLS ? ' over TLS (the job\'s own CA and certificate; k6, ghz and the misbehaving clients verify it), ' : ', ';
  return [`## Fault matrix${settings.TLS ? ' · TLS' : ''}`, '', table, '',
    `Each cell: a fresh server (${settings.WORKERS} workers)${tls}k6 at ${settings.VUS} VUs for ${settings.FAULT_DURATION} `
    + `(REQUEST_TIMEOUT ${settings.REQUEST_TIMEOUT}), the fault injected during the load. Failed includes timed out; `
    + `RSS is the sum of the workers' (a killed or replaced worker's memory leaves with it); one worker's peak is the highest `
    + `any worker reached, against the budget each holds (WORKER_MEMORY_MB ${settings.WORKER_MEMORY_MB}, 0: derived from the machine). `
    + muxNote(cells) + `${pinning}.`, '', ...(overrun ? [overrun, ''] : []), ...abouts, ''].join('\n');
}

