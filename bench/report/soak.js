// The soak job's memory figures (the workers' RSS samples, their trend and verdict) and its report.
// bench/passes/soak.js runs the load and reads the samples; everything here is arithmetic and Markdown.
import { markdownTable } from 'markdown-table';
import { linearRegression, max, median } from 'simple-statistics';
import { formatNumber, round } from '../format.js';
import { spread } from './stats.js';
import { modeLabel } from '../modes.js';
import { AUTO_RATE_SHARE, K6_RATE_SHARE, RSS_INTERVAL_S, SERVER_WINDOW_S, SOAK_SETTING_NAMES } from '../settings/soak.js';

/**
 * @typedef {object} RssSample one reading of every worker
 * @property {number} t_s seconds since the start of the measured window
 * @property {Record<string, number>} workers RSS by worker pid (MiB)
 */

/**
 * @typedef {object} RssTrend
 * @property {number} start_mib RSS at the first sample (MiB)
 * @property {number} end_mib RSS at the last sample (MiB)
 * @property {number} max_mib largest RSS sampled (MiB)
 * @property {number|null} median_start_mib median RSS of the first minute (MiB); null under two minutes
 * @property {number|null} median_end_mib median RSS of the last minute (MiB)
 * @property {number|null} growth_pct (median_end / median_start - 1) x 100 (%)
 * @property {number|null} slope_mib_per_min slope of a least-squares line through every sample (MiB/min); null under 2 samples
 * @property {number|null} slope_se_mib_per_min its standard error (MiB/min); null under 3 samples
 * @property {number} samples samples in the fit
 * @property {number} window_s time from the first sample to the last (s)
 * @property {'stable'|'growing'|'inconclusive'|'too short to tell'} verdict
 */

// Under this window there is no first and last minute to compare.
const MIN_VERDICT_WINDOW_S = 120;

/**
 * RSS trend of a series of (time, RSS) points under load, and its verdict. Under load a
 * worker's RSS is a GC sawtooth (tens of MiB, periods from seconds to minutes), so growth
 * compares the medians of the first and the last minute rather than two single samples,
 * and the fitted slope comes with its standard error. 'stable': growth under `growthPct` and
 * slope under `slopeMibPerMin`; 'growing': growth at or over `growthPct`, or a slope over the
 * limit by more than two standard errors; 'inconclusive': a slope over the limit but within
 * two standard errors of it (the sawtooth can make it; a longer run tells); 'too short to
 * tell' under two minutes.
 * @param {Array<[number, number]>} points [seconds since the window start, MiB], in time order
 * @param {{growthPct: number, slopeMibPerMin: number}} limits growthPct in %, slopeMibPerMin in MiB/min
 * @returns {RssTrend}
 */
export function rssTrend(points, { growthPct, slopeMibPerMin }) {
  const values = points.map(([, mib]) => mib);
  const [t0] = points[0];
  const tEnd = points.at(-1)[0];
  const windowS = tEnd - t0;
  const minutes = points.map(([t, mib]) => [(t - t0) / 60, mib]);
  let slope = null;
  let slopeSe = null;
  if (points.length >= 2 && windowS > 0) {
    const fit = linearRegression(minutes);
    slope = fit.m;
    if (points.length >= 3) {
      const residual = minutes.map(([t, mib]) => mib - (fit.m * t + fit.b));
      const tMean = minutes.reduce((a, [t]) => a + t, 0) / minutes.length;
      const sxx = minutes.reduce((a, [t]) => a + (t - tMean) ** 2, 0);
      slopeSe = Math.sqrt(residual.reduce((a, r) => a + r * r, 0) / (minutes.length - 2) / sxx);
    }
  }
  let medianStart = null;
  let medianEnd = null;
  let growth = null;
  /** @type {RssTrend['verdict']} */
  let verdict = 'too short to tell';
  if (windowS >= MIN_VERDICT_WINDOW_S) {
    medianStart = median(points.filter(([t]) => t <= t0 + 60).map(([, mib]) => mib));
    medianEnd = median(points.filter(([t]) => t >= tEnd - 60).map(([, mib]) => mib));
    growth = (medianEnd / medianStart - 1) * 100;
    if (growth >= growthPct || slope - 2 * slopeSe >= slopeMibPerMin) verdict = 'growing';
    else if (slope < slopeMibPerMin) verdict = 'stable';
    else verdict = 'inconclusive';
  }
  const r = (n, digits) => (n === null ? null : round(n, digits));
  return {
    start_mib: r(values[0]), end_mib: r(values.at(-1)), max_mib: r(max(values)),
    median_start_mib: r(medianStart), median_end_mib: r(medianEnd), growth_pct: r(growth),
    slope_mib_per_min: r(slope, 3), slope_se_mib_per_min: r(slopeSe, 3),
    samples: points.length, window_s: round(windowS, 1), verdict,
  };
}

/**
 * The memory figures of a sustained run: the trend of each worker, and of all workers
 * together (their sum at each sample). The run's verdict is the worst of its workers'
 * (growing, then inconclusive, then too short to tell, then stable).
 * @param {RssSample[]} samples
 * @param {{growthPct: number, slopeMibPerMin: number}} limits
 * @returns {{workers: Array<RssTrend & {pid: number}>, total: RssTrend, verdict: RssTrend['verdict']}}
 */
export function memoryFigures(samples, limits) {
  const pids = [...new Set(samples.flatMap((s) => Object.keys(s.workers)))];
  const workers = pids.map((pid) => ({
    pid: Number(pid),
    ...rssTrend(samples.filter((s) => s.workers[pid] !== undefined).map((s) => [s.t_s, s.workers[pid]]), limits),
  }));
  const total = rssTrend(samples.map((s) => [s.t_s, Object.values(s.workers).reduce((a, b) => a + b, 0)]), limits);
  const verdicts = workers.map((w) => w.verdict);
  // The worst worker decides.
  /** @type {Array<RssTrend['verdict']>} */
  const worstFirst = ['growing', 'inconclusive', 'too short to tell', 'stable'];
  const verdict = worstFirst.find((v) => verdicts.includes(v)) ?? 'too short to tell';
  return { workers, total, verdict };
}

/**
 * The memory verdict of RSS outside the V8 heap (RSS less V8's heap committed, the largest worker, at each window's
 * end): the part a native leak grows, apart from V8 sizing its own heap to the load. The rule and limits are rssTrend's,
 * on the windows' readings (one every SERVER_WINDOW_S) instead of the 5 s samples.
 * @param {ServerWindowFigures[]} windows in time order
 * @param {{growthPct: number, slopeMibPerMin: number}} limits as rssTrend's
 * @returns {RssTrend|null} null when no window that served requests carries the figure
 */
export function outsideHeapTrend(windows, limits) {
  const points = windows.filter((w) => w.requests > 0 && Number.isFinite(w.outside_heap_end_mib))
    .map((w) => /** @type {[number, number]} */ ([w.to_s, w.outside_heap_end_mib]));
  return points.length ? rssTrend(points, limits) : null;
}

/**
 * @typedef {object} ServerWindowFigures one window of the server's own accounting during the sustained run
 *   (bench/passes/soak.js reads it every SERVER_WINDOW_S)
 * @property {number} from_s start of the window (s since the run's start)
 * @property {number} to_s its end (s)
 * @property {number} requests requests the workers served in it
 * @property {number} rps requests / window length (req/s)
 * @property {number|null} gc_ms_per_1k_requests time the workers spent in GC per 1000 requests (ms)
 * @property {number|null} allocated_bytes_per_request bytes the workers allocated on their V8 heaps per request
 * @property {number|null} cpu_us_per_request server CPU (workers and primary, user + system) per request (µs)
 * @property {number} heap_end_mib the largest worker's V8 heap used at the window's end (MiB)
 * @property {number} heap_committed_end_mib the largest worker's V8 heap committed at the window's end (MiB): V8's
 *   spaces, used or not; its young generation alone grows from 1 to 64 MiB as V8 sizes it to the load
 * @property {number} outside_heap_end_mib the largest worker's RSS less its V8 heap committed, at the window's end
 *   (MiB): buffers, sockets, code, the allocator's arenas; where a native leak shows
 * @property {number|null} tls_handshakes_per_1k_requests TLS=1: TLS handshakes the workers completed in the window per 1000
 *   requests (null: none, or cleartext)
 * @property {string|null} tls what those handshakes negotiated (`<version> · <cipher> · ALPN <protocol>`; null likewise)
 */

/**
 * How the server's cost per request moved over the sustained run: medians of the windows in the first and in the last
 * fifth of it (one window at least each), the largest window value, and a least-squares slope over time. A leak, or a
 * heap V8 keeps growing, shows as GC per request rising; a steady server keeps the first and last fifth alike.
 * @param {ServerWindowFigures[]} windows in time order
 * @returns {null|Record<'gc_ms_per_1k_requests'|'allocated_bytes_per_request'|'cpu_us_per_request'|'heap_end_mib'
 *   |'heap_committed_end_mib'|'outside_heap_end_mib',
 *   {first: number, last: number, max: number, slope_per_min: number|null}> & {windows: number}} null without a window
 *   that served requests; slope_per_min in the figure's unit per minute, null under two windows
 */
export function serverTrend(windows) {
  const served = windows.filter((w) => w.requests > 0);
  if (served.length === 0) return null;
  const end = served.at(-1).to_s;
  const start = served[0].from_s;
  const fifth = (end - start) / 5;
  const trend = (field) => {
    const points = served.filter((w) => Number.isFinite(w[field])).map((w) => [(w.from_s + w.to_s) / 120, w[field]]);
    if (points.length === 0) return null;
    const head = points.filter(([t]) => t * 60 <= start + fifth);
    const tail = points.filter(([t]) => t * 60 >= end - fifth);
    return {
      first: round(median((head.length ? head : points.slice(0, 1)).map(([, v]) => v)), 3),
      last: round(median((tail.length ? tail : points.slice(-1)).map(([, v]) => v)), 3),
      max: round(max(points.map(([, v]) => v)), 3),
      slope_per_min: points.length >= 2 && points[0][0] !== points.at(-1)[0] ? round(linearRegression(points).m, 4) : null,
    };
  };
  return {
    windows: served.length,
    gc_ms_per_1k_requests: trend('gc_ms_per_1k_requests'),
    allocated_bytes_per_request: trend('allocated_bytes_per_request'),
    cpu_us_per_request: trend('cpu_us_per_request'),
    heap_end_mib: trend('heap_end_mib'),
    heap_committed_end_mib: trend('heap_committed_end_mib'),
    outside_heap_end_mib: trend('outside_heap_end_mib'),
  };
}


const fmt = formatNumber;
const fmtSpread = (s, digits = 0) => (s === null ? 'n/a'
  : s.min === s.max ? fmt(s.median, digits) : `${fmt(s.median, digits)} (${fmt(s.min, digits)}–${fmt(s.max, digits)})`);

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
    const row = (label, pick) => [label, ...runs.map(pick)];
    const mem = (r) => r.memory.total;
    const load = (r) => (r.model === 'open' ? `${fmt(r.rate)} req/s, open model` : `${fmt(r.vus)} VUs, closed model`);
    const trend = (r, field, digits) => {
      const t = r.server?.[field];
      return t ? `${fmt(t.first, digits)} → ${fmt(t.last, digits)} (max ${fmt(t.max, digits)})` : 'n/a';
    };
    out.push(`## Sustained load: ${settings.SOAK_DURATION}, ${settings.WORKERS} worker(s)`, '',
      `After a ${settings.WARMUP} warm-up run (left out)${settings.SOAK_RATE === 'auto' ? `, then ${settings.CEILING_RUNS ?? 1} ceiling run(s) (the native tool then k6, `
        + `${settings.CEILING_DURATION} each; the rate is the lower of ${AUTO_RATE_SHARE * 100}% of the median of the server's ceilings `
        + `and ${K6_RATE_SHARE * 100}% of the median of k6's)` : ''}; worker RSS from /proc/<pid>/status every ${RSS_INTERVAL_S} s, `
        + `summed over the workers; the server's own accounting every ${SERVER_WINDOW_S} s (first → last: medians of the windows in `
        + 'the first and the last fifth of the run).', '',
      markdownTable([
        ['', ...runs.map((r) => modeLabel(r.mode))],
        row('load', load),
        row('ceiling, median of the runs: the server\'s (native tool) / k6\'s (req/s)', (r) => (r.ceiling
          ? `${fmt(r.ceiling.server_rps)} (${r.ceiling.server_tool}) / ${fmt(r.ceiling.k6_rps)}: ${r.ceiling.limit === 'k6' ? 'k6' : 'the server'} the lower`
          : 'not measured')),
        // Each run's pair; a report from before CEILING_RUNS has one run and no list.
        row('ceiling runs: the server\'s / k6\'s (req/s)', (r) => (r.ceiling?.runs
          ? r.ceiling.runs.map((c) => `${fmt(c.server_rps)} / ${fmt(c.k6_rps)}`).join('; ') : 'n/a')),
        row('RPS (req/s)', (r) => fmt(r.rps)),
        row('iterations the open model could not start (dropped)', (r) => (r.model === 'open' ? fmt(r.dropped_iterations) : 'n/a')),
        row('requests', (r) => fmt(r.requests)),
        row('failed requests (must be 0)', (r) => fmt(r.failed)),
        row('iterations k6 interrupted at the end', (r) => fmt(r.interrupted_iterations)),
        row('latency p99 (ms)', (r) => fmt(r.latency_ms.p99, 2)),
        row('k6 CPU (% of its core)', (r) => fmt(r.k6_cpu_pct)),
        row('RSS idle between warm-up and run (MiB)', (r) => fmt(r.rss_idle_mib, 1)),
        row(`RSS at window start, ${RSS_INTERVAL_S} s into the run (MiB)`, (r) => fmt(mem(r).start_mib, 1)),
        row('RSS at window end (MiB)', (r) => fmt(mem(r).end_mib, 1)),
        row('RSS max (MiB)', (r) => fmt(mem(r).max_mib, 1)),
        row('RSS median, first → last minute (MiB)', (r) => `${fmt(mem(r).median_start_mib, 1)} → ${fmt(mem(r).median_end_mib, 1)}`),
        row('RSS growth, median last vs first minute (%)', (r) => fmt(mem(r).growth_pct, 1)),
        row('RSS slope, linear fit ± standard error (MiB/min)', (r) => `${fmt(mem(r).slope_mib_per_min, 2)} ± ${fmt(mem(r).slope_se_mib_per_min, 2)}`),
        row('RSS samples under load', (r) => fmt(mem(r).samples)),
        row('memory', (r) => r.memory.verdict),
        row('GC per 1000 requests (ms), first → last', (r) => trend(r, 'gc_ms_per_1k_requests', 2)),
        row('V8 heap allocated per request (bytes), first → last', (r) => trend(r, 'allocated_bytes_per_request', 0)),
        row('server CPU per request (µs), first → last', (r) => trend(r, 'cpu_us_per_request', 1)),
        row('V8 heap used at window end, largest worker (MiB), first → last', (r) => trend(r, 'heap_end_mib', 1)),
        row('V8 heap committed at window end, largest worker (MiB), first → last', (r) => trend(r, 'heap_committed_end_mib', 1)),
        row('RSS outside the V8 heap at window end, largest worker (MiB), first → last', (r) => trend(r, 'outside_heap_end_mib', 1)),
        row('RSS outside the V8 heap: slope ± standard error (MiB/min), verdict', (r) => (r.outside_heap
          ? `${fmt(r.outside_heap.slope_mib_per_min, 2)} ± ${fmt(r.outside_heap.slope_se_mib_per_min, 2)}, ${r.outside_heap.verdict}` : 'n/a')),
        row('load average (1 min) before the run', (r) => fmt(r.loadavg_before, 2)),
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
    const row = (label, pick) => [label, ...runs.map(pick)];
    out.push(`## Faults: one worker killed with SIGKILL at the load's midpoint, ${settings.FAULT_DURATION} at ${settings.VUS} VUs, `
      + `${settings.FAULT_WORKERS} worker(s)`, '',
      `${settings.FAULT_REPEATS} run(s) per mode, each on a fresh server without warm-up: median (min–max).`, '',
      markdownTable([
        ['', ...runs.map((r) => modeLabel(r.mode))],
        row('runs', (r) => fmt(r.runs.length)),
        row('respawn: kill to the replacement\'s \'worker listening\' (ms)', (r) => fmtSpread(r.respawn_ms)),
        row('kill to the primary\'s \'worker died\' line (ms)', (r) => fmtSpread(r.death_logged_ms)),
        row('requests', (r) => fmtSpread(r.requests)),
        row('failed requests (all lost to the kill)', (r) => fmtSpread(r.failed)),
        row('of which timed out (REQUEST_TIMEOUT)', (r) => fmtSpread(r.timed_out)),
        row('failed-request rate (%)', (r) => fmtSpread(r.failed_pct, 3)),
        row('k6 error lines (iterations that threw)', (r) => fmtSpread(r.k6_error_lines)),
        row('iterations k6 interrupted at the end (requests stuck)', (r) => fmtSpread(r.interrupted_iterations)),
        row('k6 run length (s)', (r) => fmtSpread(r.run_s, 1)),
        row('requests served by the replacement', (r) => fmtSpread(r.replacement_served)),
        row('RPS over the run (req/s)', (r) => fmtSpread(r.rps)),
        row('workers serving while one respawns', (r) => `${r.workers - 1} of ${r.workers}${r.workers === 1 ? ' (none: expected, connections fail until the replacement listens)' : ''}`),
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
