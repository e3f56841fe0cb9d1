// The fault matrix's report: one row per fault and mode (bench/passes/faults.js measures the cells).
import { markdownTable } from 'markdown-table';
import { formatNumber } from '../format.js';
import { modeLabel } from '../modes.js';

const fmtMib = (v) => (v === null || v === undefined ? 'n/a' : formatNumber(v, 0));
const fmtMs = (v) => (v === null || v === undefined ? 'n/a' : formatNumber(v, 1));
// What the memory budget did (server/memory-budget.js); absent in reports from before it.
const fmtBudget = (c) => (c.refused_answers === undefined ? 'n/a'
  : `${formatNumber(c.refused_answers)} answers refused, ${formatNumber(c.recycled)} workers replaced`);
const fmtObserved = (o) => Object.entries(o).map(([k, v]) => `${k} ${typeof v === 'number' ? formatNumber(v, 0) : v}`).join(', ');

/**
 * The matrix as Markdown: one row per fault and mode, then what each fault run does.
 * @param {{cells: object[], settings: import('../settings/faults.js').FaultSettings, pinning: string}} report
 * @param {Record<string, string>} about what each fault does, by name, in table order (bench/faults/registry.js FAULTS)
 * @returns {string}
 */
export function renderFaults({ cells, settings, pinning }, about) {
  const rows = cells.map((c) => [c.fault, modeLabel(c.mode), formatNumber(c.completed), formatNumber(c.failed), formatNumber(c.timed_out),
    fmtMs(c.p99_ms), `${fmtMib(c.rss_before_mib)} → ${fmtMib(c.rss_peak_mib)} → ${fmtMib(c.rss_end_mib)}`,
    `${fmtMib(c.worker_rss_peak_mib)} / ${c.worker_memory_mb ? formatNumber(c.worker_memory_mb) : 'n/a'}`, fmtBudget(c), fmtObserved(c.observed)]);
  const table = markdownTable([['fault', 'mode', 'completed', 'failed', 'timed out', 'p99 ms', 'workers\' RSS, MiB: before → peak → end',
    'one worker\'s peak RSS / budget, MiB', 'budget refused', 'observed'], ...rows],
    { align: ['l', 'l', 'r', 'r', 'r', 'r', 'r', 'r', 'l', 'l'] });
  const abouts = Object.entries(about).filter(([name]) => settings.FAULTS.includes(name)).map(([name, text]) => `- \`${name}\`: ${text}`);
  return [`## Fault matrix`, '', table, '',
    `Each cell: a fresh server (${settings.WORKERS} workers), k6 at ${settings.VUS} VUs for ${settings.FAULT_DURATION} `
    + `(REQUEST_TIMEOUT ${settings.REQUEST_TIMEOUT}), the fault injected during the load. Failed includes timed out; `
    + `RSS is the sum of the workers' (a killed or replaced worker's memory leaves with it); one worker's peak is the highest `
    + `any worker reached, against the budget each holds (WORKER_MEMORY_MB ${settings.WORKER_MEMORY_MB}, 0: derived from the machine). ${pinning}.`, '', ...abouts, ''].join('\n');
}

