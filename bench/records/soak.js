// The soak job's memory figures: the workers' RSS samples, their trend and verdict, and the trend of the server's windows.
// bench/passes/soak.js runs the load, reads the samples and records these; bench/report/soak.js renders them.
import { linearRegression, max, median } from 'simple-statistics';
import { round } from '../format.js';

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
