// The soak job's report: its memory figures (bench/records/soak.js) and the runs around them, in Markdown.
// bench/passes/soak.js runs the load and reads the samples.
import { markdownTable } from 'markdown-table';
import { formatNumber } from '../format.js';
import { spread } from './stats.js';
import { modeLabel } from '../modes.js';
import { AUTO_RATE_SHARE, K6_RATE_SHARE, RSS_INTERVAL_S, SERVER_WINDOW_S, SOAK_SETTING_NAMES } from '../settings/soak.js';

const fmt = formatNumber;
const fmtSpread = (s, digits = 0) => (s === null ? 'n/a'
  : s.min === s.max ? fmt(s.median, digits) : `${fmt(s.median, digits)} (${fmt(s.min, digits)}–${fmt(s.max, digits)})`);

const mem = (r) => r.memory.total;
const load = (r) => (r.model === 'open' ? `${fmt(r.rate)} req/s, open model` : `${fmt(r.vus)} VUs, closed model`);
/** A figure of the server's accounting over the run: its first and last windows' medians, and its max. */
const trend = (r, field, digits) => {
  const t = r.server?.[field];
  return t ? `${fmt(t.first, digits)} → ${fmt(t.last, digits)} (max ${fmt(t.max, digits)})` : 'n/a';
};

/**
 * @typedef {object} SoakRow one row of the soak's tables: its label, and its cell for one mode's run
 * @property {string} label
 * @property {(run: any) => string} cell
 */

/**
 * The sustained run's table, row by row, one column per mode (renderSoakMarkdown).
 * @type {ReadonlyArray<SoakRow>}
 */
export const SOAK_ROWS = Object.freeze([
  { label: 'load', cell: load },
  { label: 'ceiling, median of the runs: the server\'s (native tool) / k6\'s (req/s)', cell: (r) => (r.ceiling
    ? `${fmt(r.ceiling.server_rps)} (${r.ceiling.server_tool}) / ${fmt(r.ceiling.k6_rps)}: ${r.ceiling.limit === 'k6' ? 'k6' : 'the server'} the lower`
    : 'not measured') },
  // Each run's pair; a report from before CEILING_RUNS has one run and no list.
  { label: 'ceiling runs: the server\'s / k6\'s (req/s)', cell: (r) => (r.ceiling?.runs
    ? r.ceiling.runs.map((c) => `${fmt(c.server_rps)} / ${fmt(c.k6_rps)}`).join('; ') : 'n/a') },
  { label: 'RPS (req/s)', cell: (r) => fmt(r.rps) },
  { label: 'iterations the open model could not start (dropped)', cell: (r) => (r.model === 'open' ? fmt(r.dropped_iterations) : 'n/a') },
  { label: 'requests', cell: (r) => fmt(r.requests) },
  { label: 'failed requests (must be 0)', cell: (r) => fmt(r.failed) },
  { label: 'iterations k6 interrupted at the end', cell: (r) => fmt(r.interrupted_iterations) },
  { label: 'latency p99 (ms)', cell: (r) => fmt(r.latency_ms.p99, 2) },
  { label: 'k6 CPU (% of its core)', cell: (r) => fmt(r.k6_cpu_pct) },
  { label: 'RSS idle between warm-up and run (MiB)', cell: (r) => fmt(r.rss_idle_mib, 1) },
  { label: `RSS at window start, ${RSS_INTERVAL_S} s into the run (MiB)`, cell: (r) => fmt(mem(r).start_mib, 1) },
  { label: 'RSS at window end (MiB)', cell: (r) => fmt(mem(r).end_mib, 1) },
  { label: 'RSS max (MiB)', cell: (r) => fmt(mem(r).max_mib, 1) },
  { label: 'RSS median, first → last minute (MiB)', cell: (r) => `${fmt(mem(r).median_start_mib, 1)} → ${fmt(mem(r).median_end_mib, 1)}` },
  { label: 'RSS growth, median last vs first minute (%)', cell: (r) => fmt(mem(r).growth_pct, 1) },
  { label: 'RSS slope, linear fit ± standard error (MiB/min)', cell: (r) => `${fmt(mem(r).slope_mib_per_min, 2)} ± ${fmt(mem(r).slope_se_mib_per_min, 2)}` },
  { label: 'RSS samples under load', cell: (r) => fmt(mem(r).samples) },
  { label: 'memory', cell: (r) => r.memory.verdict },
  { label: 'GC per 1000 requests (ms), first → last', cell: (r) => trend(r, 'gc_ms_per_1k_requests', 2) },
  { label: 'V8 heap allocated per request (bytes), first → last', cell: (r) => trend(r, 'allocated_bytes_per_request', 0) },
  { label: 'server CPU per request (µs), first → last', cell: (r) => trend(r, 'cpu_us_per_request', 1) },
  { label: 'V8 heap used at window end, largest worker (MiB), first → last', cell: (r) => trend(r, 'heap_end_mib', 1) },
  { label: 'V8 heap committed at window end, largest worker (MiB), first → last', cell: (r) => trend(r, 'heap_committed_end_mib', 1) },
  { label: 'RSS outside the V8 heap at window end, largest worker (MiB), first → last', cell: (r) => trend(r, 'outside_heap_end_mib', 1) },
  { label: 'RSS outside the V8 heap: slope ± standard error (MiB/min), verdict', cell: (r) => (r.outside_heap
    ? `${fmt(r.outside_heap.slope_mib_per_min, 2)} ± ${fmt(r.outside_heap.slope_se_mib_per_min, 2)}, ${r.outside_heap.verdict}` : 'n/a') },
  { label: 'load average (1 min) before the run', cell: (r) => fmt(r.loadavg_before, 2) },
]);

/**
 * The fault runs' table, row by row: each figure as median (min–max) over the repeats (faultSummary).
 * @type {ReadonlyArray<SoakRow>}
 */
export const FAULT_ROWS = Object.freeze([
  { label: 'runs', cell: (r) => fmt(r.runs.length) },
  { label: 'respawn: kill to the replacement\'s \'worker listening\' (ms)', cell: (r) => fmtSpread(r.respawn_ms) },
  { label: 'kill to the primary\'s \'worker died\' line (ms)', cell: (r) => fmtSpread(r.death_logged_ms) },
  { label: 'requests', cell: (r) => fmtSpread(r.requests) },
  { label: 'failed requests (all lost to the kill)', cell: (r) => fmtSpread(r.failed) },
  { label: 'of which timed out (REQUEST_TIMEOUT)', cell: (r) => fmtSpread(r.timed_out) },
  { label: 'failed-request rate (%)', cell: (r) => fmtSpread(r.failed_pct, 3) },
  { label: 'k6 error lines (iterations that threw)', cell: (r) => fmtSpread(r.k6_error_lines) },
  { label: 'iterations k6 interrupted at the end (requests stuck)', cell: (r) => fmtSpread(r.interrupted_iterations) },
  { label: 'k6 run length (s)', cell: (r) => fmtSpread(r.run_s, 1) },
  { label: 'requests served by the replacement', cell: (r) => fmtSpread(r.replacement_served) },
  { label: 'RPS over the run (req/s)', cell: (r) => fmtSpread(r.rps) },
  { label: 'workers serving while one respawns', cell: (r) => `${r.workers - 1} of ${r.workers}${r.workers === 1 ? ' (none: expected, connections fail until the replacement listens)' : ''}` },
]);

/**
 * The soak report in Markdown: the settings and core pinning, one table for the sustained
 * runs and one for the fault runs (one column per mode), and how the verdict is made.
 * @param {object} report what bench/commands/soak.js writes as JSON
 * @returns {string}
 */
export function renderSoakMarkdown(report) {
  const { settings } = report;
  const out = [`# Soak and fault runs, ${report.generated_at}`, '',
    `Command: \`${report.command}\``, '',
    `Pinning: ${report.pinning}. Machine: ${report.machine.cpus} CPUs allowed, ${report.machine.node}, ${report.machine.k6}.`, '',
    `Settings: ${SOAK_SETTING_NAMES.filter((n) => n !== 'K6_BIN').map((n) => `${n}=${[settings[n]].flat().join(',')}`).join(' ')}.`, ''];
  const align = (columns) => ({ align: ['l', ...columns.map(() => 'r')] });
  if (report.soak.length) {
    const runs = report.soak;
    out.push(`## Sustained load: ${settings.SOAK_DURATION}, ${settings.WORKERS} worker(s)`, '',
      `After a ${settings.WARMUP} warm-up run (left out)${settings.SOAK_RATE === 'auto' ? `, then ${settings.CEILING_RUNS ?? 1} ceiling run(s) (the native tool then k6, `
        + `${settings.CEILING_DURATION} each; the rate is the lower of ${AUTO_RATE_SHARE * 100}% of the median of the server's ceilings `
        + `and ${K6_RATE_SHARE * 100}% of the median of k6's)` : ''}; worker RSS from /proc/<pid>/status every ${RSS_INTERVAL_S} s, `
        + `summed over the workers; the server's own accounting every ${SERVER_WINDOW_S} s (first → last: medians of the windows in `
        + 'the first and the last fifth of the run).', '',
      markdownTable([
        ['', ...runs.map((r) => modeLabel(r.mode))],
        ...SOAK_ROWS.map(({ label, cell }) => [label, ...runs.map(cell)]),
      ], align(runs)), '',
      `Verdict per worker: stable when RSS grew less than ${settings.RSS_GROWTH_PCT}% (median of the last minute vs the first) and `
      + `the fitted slope is under ${settings.RSS_SLOPE_MIB_PER_MIN} MiB/min; growing when it grew more, or the slope exceeds the limit by `
      + 'more than two standard errors; inconclusive when the slope exceeds the limit by less than that; too short to tell under two minutes. '
      + 'Why: under load a worker\'s RSS is a GC sawtooth of tens of MiB with periods from seconds to minutes, so single samples and '
      + 'the slope mostly tell where the peaks fell; minute medians and the slope\'s standard error (an underestimate, the samples being '
      + 'correlated) keep that from passing for a trend. The limits: 10% of a worker is more than V8\'s GC sawtooth moves its median; '
      + '1 MiB/min is 60 MiB an hour, a leak worth fixing (a per-request leak at these rates would be tens of MiB a minute). '
      + 'The idle reading is taken in the pause between the warm-up and the measured run and left out of the trend. '
      + 'RSS also holds the V8 heap V8 keeps committed, and V8 sizes its young generation to the load over minutes (from 1 MiB up '
      + 'to 64 MiB here, in doublings), so a growing RSS is a leak only if it grows outside the V8 heap: the rows of V8 heap '
      + 'committed and of RSS outside it, read at each window\'s end, tell the two apart.', '');
    const short = runs.filter((r) => r.model === 'open' && r.dropped_iterations > 0.01 * (r.requests + r.dropped_iterations));
    if (short.length) {
      out.push(`k6 could not start more than 1% of the iterations the open model asked for in ${short.map((r) => modeLabel(r.mode)).join(', ')}: `
        + 'the load there was below the rate, and latency was measured at a lower one.', '');
    }
  }
  if (report.faults.length) {
    const runs = report.faults;
    out.push(`## Faults: one worker killed with SIGKILL at the load's midpoint, ${settings.FAULT_DURATION} at ${settings.VUS} VUs, `
      + `${settings.FAULT_WORKERS} worker(s)`, '',
      `${settings.FAULT_REPEATS} run(s) per mode, each on a fresh server without warm-up: median (min–max).`, '',
      markdownTable([
        ['', ...runs.map((r) => modeLabel(r.mode))],
        ...FAULT_ROWS.map(({ label, cell }) => [label, ...runs.map(cell)]),
      ], align(runs)), '');
    if (report.fault_note) out.push(report.fault_note, '');
    if (runs.some((r) => r.interrupted_iterations?.max > 0)) {
      out.push(`Some iterations got neither an answer nor an error: k6 waited for them past ${settings.FAULT_DURATION} `
        + '(its gracefulStop, 30 s) and then interrupted them, so they are not among the failed requests; see the runs\' run_s and '
        + 'interrupted_iterations in the JSON.', '');
    }
    if (runs.some((r) => r.workers > 1 && r.replacement_served?.max === 0)) {
      out.push('No request reached a replacement: k6 keeps one connection per VU (CONNECTIONS=reuse), and the VUs that lost theirs '
        + 'reconnected at once to the surviving worker, before the replacement listened, and kept those connections.', '');
    }
  }
  out.push(`Times from the kill are taken in this process: the kill's Date.now() to the \`at\` the log line arrived with (bench/processes.js).`,
    `Noise: ${report.noise}`, '');
  return out.join('\n');
}

/**
 * The fault runs of one mode, each figure as median and range over the repeats (bench/report/stats.js spread).
 * @param {string} mode
 * @param {import('../settings/soak.js').SoakSettings} settings
 * @param {object[]} runs each fault run's figures (bench/passes/soak.js faultRun)
 * @returns {object} what the report's `faults` lists per mode
 */
export function faultSummary(mode, settings, runs) {
  const over = (field) => spread(runs.map((r) => r[field]));
  return {
    mode,
    workers: settings.FAULT_WORKERS,
    duration: settings.FAULT_DURATION,
    vus: settings.VUS,
    respawn_ms: over('respawn_ms'),
    respawn_logged_ms: over('respawn_logged_ms'),
    death_logged_ms: over('death_logged_ms'),
    requests: over('requests'),
    failed: over('failed'),
    timed_out: over('timed_out'),
    failed_pct: over('failed_pct'),
    k6_error_lines: over('k6_error_lines'),
    interrupted_iterations: over('interrupted_iterations'),
    run_s: over('run_s'),
    replacement_served: over('replacement_served'),
    rps: over('rps'),
    runs,
  };
}
