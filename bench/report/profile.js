// Where each mode's server CPU goes (PROFILE=1): the workers' V8 CPU profiles (bench/passes/profile.js
// takes them) summed by package and function, per request, and rendered.
import { markdownTable } from 'markdown-table';
import { formatNumber } from '../format.js';
import { spread } from './stats.js';
import { sumTotals } from '../records/profile.js';

/** How many functions a breakdown lists per column. */
const TOP_FUNCTIONS = 10;

/**
 * @typedef {object} ProfiledRun one measured run of a column, profiled
 * @property {{by_package: Record<string, number>, functions: Array<{name: string, package: string, where: string, self_us: number}>,
 *   cpu?: {main_thread_us: number|null, process_us: number}, files: string[], interval_us: number}} profile stopProfiles' result
 * @property {number} requests requests served in the window
 * @property {number|null} [primary_us] the primary's CPU time in the window (µs), when the accounting read it
 */

/**
 * @typedef {object} Breakdown where each column's server CPU went, per request (µs)
 * @property {Array<{package: string, us_per_request: Record<string, number|null>}>} packages self time by package,
 *   the median over a column's runs, largest first
 * @property {Record<string, {profiled_us_per_request: number|null, native_idle_us_per_request: number|null,
 *   other_threads_us_per_request: number|null, primary_us_per_request: number|null, sum_us_per_request: number|null,
 *   measured_us_per_request: number|null, runs: number, files: string[]}>} totals per column: the profiled total; native
 *   work while the loop polls (main-thread CPU − profiled, which V8 marks idle); the workers' other threads (process −
 *   main-thread CPU); the primary; their sum; and the accounting's measured CPU per request (null where not measured)
 * @property {Record<string, Array<{name: string, package: string, where: string, us_per_request: number}>>} top the
 *   TOP_FUNCTIONS functions with the most self time (all runs' ÷ their requests)
 * @property {number} interval_us the sampling interval
 */

/** The median of the runs' values; null when a run lacks one. */
const medianOf = (values) => (values.length && values.every((v) => typeof v === 'number') ? spread(values).median : null);

/**
 * Where each column's server CPU went, from its profiled runs: self time per request by package, the CPU the
 * profile cannot see (from CPU clocks over the same window), and the top functions.
 * @param {Array<[string, ProfiledRun[]]>} columns in table order
 * @param {Record<string, number|null>} [measured] each column's CPU per request by the accounting (µs)
 * @returns {Breakdown}
 */
export function profileBreakdown(columns, measured = {}) {
  const names = new Set(columns.flatMap(([, runs]) => runs.flatMap((r) => Object.keys(r.profile.by_package))));
  const per = (r, us) => us / r.requests;
  const packages = [...names].map((pkg) => ({
    package: pkg,
    us_per_request: Object.fromEntries(columns.map(([key, runs]) => [key, medianOf(runs.map((r) => per(r, r.profile.by_package[pkg] ?? 0)))])),
  })).sort((a, b) => Math.max(...Object.values(b.us_per_request).map(Number)) - Math.max(...Object.values(a.us_per_request).map(Number)));
  const parts = (r) => {
    const profiled = Object.values(r.profile.by_package).reduce((a, b) => a + b, 0);
    const { main_thread_us: thread = null, process_us: all = null } = r.profile.cpu ?? {};
    const native = typeof thread === 'number' ? Math.max(0, thread - profiled) : null;
    const others = typeof thread === 'number' && typeof all === 'number' ? Math.max(0, all - thread) : null;
    return {
      profiled: per(r, profiled),
      native_idle: native === null ? null : per(r, native),
      other_threads: others === null ? null : per(r, others),
      primary: typeof r.primary_us === 'number' ? per(r, r.primary_us) : null,
    };
  };
  const totals = Object.fromEntries(columns.filter(([, runs]) => runs.length).map(([key, runs]) => {
    const each = runs.map(parts);
    const sum = (p) => [p.profiled, p.native_idle, p.other_threads, p.primary ?? 0].reduce((a, v) => (a === null || v === null ? null : a + v), 0);
    return [key, {
      profiled_us_per_request: medianOf(each.map((p) => p.profiled)),
      native_idle_us_per_request: medianOf(each.map((p) => p.native_idle)),
      other_threads_us_per_request: medianOf(each.map((p) => p.other_threads)),
      primary_us_per_request: medianOf(each.map((p) => p.primary)),
      sum_us_per_request: medianOf(each.map(sum)),
      measured_us_per_request: measured[key] ?? null,
      runs: runs.length,
      files: runs.flatMap((r) => r.profile.files),
    }];
  }));
  const top = Object.fromEntries(columns.filter(([, runs]) => runs.length).map(([key, runs]) => {
    const requests = runs.reduce((a, r) => a + r.requests, 0);
    // The runs' functions pooled as sumTotals pools the workers' of one run.
    const { functions } = sumTotals(runs.map((r) => ({ sampled_us: 0, idle_us: 0, by_package: {}, functions: r.profile.functions })));
    return [key, functions.slice(0, TOP_FUNCTIONS)
      .map((f) => ({ name: f.name, package: f.package, where: f.where, us_per_request: f.self_us / requests }))];
  }));
  const first = columns.flatMap(([, runs]) => runs)[0];
  return { packages, totals, top, interval_us: first?.profile.interval_us ?? null };
}

const fmt = formatNumber;

/**
 * A breakdown as Markdown: self time per request by package with each column's ratio to the first, the CPU the
 * profile cannot see, their sum beside the accounting, then each column's top functions and the profile files.
 * @param {Breakdown} breakdown
 * @param {string[]} keys columns, in order; the first is the ratios' baseline
 * @param {string} title bold first words
 * @returns {string}
 */
export function renderBreakdown(breakdown, keys, title) {
  const { packages, totals, top, interval_us: interval } = breakdown;
  const [base, ...others] = keys;
  const ratio = (row, key) => (typeof row[base] === 'number' && row[base] > 0 && typeof row[key] === 'number' ? fmt(row[key] / row[base], 2) : 'n/a');
  const header = ['server CPU per request (µs)', ...keys, ...others.map((k) => `ratio ${k}/${base}`)];
  const rows = packages.map((p) => [p.package, ...keys.map((k) => fmt(p.us_per_request[k], 1)), ...others.map((k) => ratio(p.us_per_request, k))]);
  const row = (label, field) => {
    const values = Object.fromEntries(keys.map((k) => [k, totals[k]?.[field] ?? null]));
    if (Object.values(values).every((v) => v === null)) return;
    rows.push([label, ...keys.map((k) => fmt(values[k], 1)), ...others.map((k) => ratio(values, k))]);
  };
  row('**JavaScript thread, profiled** (the rows above)', 'profiled_us_per_request');
  row('native work while the event loop polls (main-thread CPU − profiled: V8 marks it idle)', 'native_idle_us_per_request');
  row('other threads of the workers (process − main-thread CPU: GC helpers, libuv pool)', 'other_threads_us_per_request');
  row('primary process (accounting)', 'primary_us_per_request');
  row('**sum**', 'sum_us_per_request');
  row('server CPU per request, accounting', 'measured_us_per_request');
  if (keys.some((k) => totals[k]?.measured_us_per_request)) {
    rows.push(['sum ÷ accounting (%)', ...keys.map((k) => {
      const { sum_us_per_request: sum, measured_us_per_request: m } = totals[k] ?? {};
      return sum && m ? fmt((sum / m) * 100, 0) : 'n/a';
    }), ...others.map(() => '')]);
  }
  const table = markdownTable([header, ...rows], { align: ['l', ...header.slice(1).map(() => 'r')] });
  const tops = keys.filter((k) => top[k]).map((k) => {
    const lines = top[k].map((f, i) => [String(i + 1), `\`${f.name}\``, f.package, f.where, fmt(f.us_per_request, 2)]);
    return `${k}, top ${lines.length} functions by self time:\n\n${markdownTable([['', 'function', 'package', 'where', 'µs per request'], ...lines],
      { align: ['r', 'l', 'l', 'l', 'r'] })}\n\n`;
  }).join('');
  const files = keys.flatMap((k) => totals[k]?.files ?? []);
  return `**${title}** (PROFILE=1: a V8 CPU profile of every worker over each measured run, sampled every ${interval} µs; `
    + 'self time, a native function\'s counted to its caller\'s package; medians over the runs). The profile sees the workers\' '
    + 'JavaScript thread while it runs JavaScript or V8; the rows below the packages come from CPU clocks over the same window '
    + '(/proc per thread, process.cpuUsage, the accounting), so that the sum can be checked against the accounting.'
    + `\n\n${table}\n\n${tops}Profiles (Chrome DevTools, speedscope): ${files.join(', ')}\n\n`;
}
