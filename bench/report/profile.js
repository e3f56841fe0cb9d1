// Where each mode's server CPU goes (PROFILE=1): the workers' V8 CPU profiles (bench/passes/profile.js
// takes them) summed by package and function, per request, and rendered.
import { markdownTable } from 'markdown-table';
import { formatNumber } from '../format.js';
import { spread } from './stats.js';
import { ROOT } from '../root.js';

/**
 * node's own modules, by the part of node they belong to (the module URL of a profile frame).
 * @type {ReadonlyArray<[string, RegExp]>}
 */
const NODE_PARTS = Object.freeze([
  ['node http2', /^node:internal\/http2\//],
  ['node http', /^node:(_http_\w+|http|internal\/http)$/],
  ['node net', /^node:(net|internal\/net|internal\/stream_base_commons|internal\/tcp\w*)$/],
  ['node stream', /^node:(stream|internal\/streams\/\w+)$/],
  ['node zlib', /^node:(zlib|internal\/zlib)/],
]);

/** V8's pseudo-frames, by their function name. */
const PSEUDO = Object.freeze({ '(garbage collector)': 'GC', '(program)': 'V8 and native, unattributed', '(idle)': 'idle', '(root)': 'root' });

/**
 * The package a profile frame belongs to, from its script URL.
 * @param {string} url e.g. `file:///app/node_modules/@grpc/grpc-js/build/src/server.js`, `node:internal/http2/core`
 * @returns {string|null} e.g. `@grpc/grpc-js`, `node http2`, `node (other)`, `this project`; null for a frame without
 *   a URL (a native function, which belongs to whatever called it)
 */
export function packageOf(url) {
  if (!url) return null;
  const modules = url.lastIndexOf('/node_modules/');
  if (modules >= 0) {
    const [first, second] = url.slice(modules + '/node_modules/'.length).split('/');
    return first.startsWith('@') ? `${first}/${second}` : first;
  }
  if (url.startsWith('node:')) return NODE_PARTS.find(([, re]) => re.test(url))?.[0] ?? 'node (other)';
  if (url.startsWith(`file://${ROOT}`) || url.startsWith(ROOT)) return 'this project';
  return 'other';
}

/**
 * @typedef {object} ProfileTotals one profile's self time, summed
 * @property {number} sampled_us all samples' time, idle included (µs)
 * @property {number} idle_us time the thread was idle (µs)
 * @property {Record<string, number>} by_package self time by package (packageOf, or a V8 pseudo-frame's: GC, …; µs;
 *   a native function's time goes to its caller's package), idle left out
 * @property {Array<{name: string, package: string, where: string, self_us: number}>} functions self time by
 *   function (name, package, `file:line`), largest first, idle left out
 */

/**
 * Self time of a V8 CPU profile, by package and by function. Each sample's time is the delta to the
 * next sample (as Chrome DevTools counts it); the last sample gets the sampling interval.
 * @param {{nodes: Array<{id: number, callFrame: {functionName: string, url: string, lineNumber: number}, children?: number[]}>,
 *   samples: number[], timeDeltas: number[]}} profile a `.cpuprofile` (V8 Profiler.stop's result)
 * @param {number} intervalUs the sampling interval (µs)
 * @returns {ProfileTotals}
 */
export function profileTotals(profile, intervalUs) {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map();
  for (const n of profile.nodes) for (const child of n.children ?? []) parent.set(child, n.id);
  const packageCache = new Map();
  const pkgOf = (id) => {
    if (packageCache.has(id)) return packageCache.get(id);
    const { functionName, url } = byId.get(id).callFrame;
    let pkg = PSEUDO[functionName] ?? packageOf(url);
    if (pkg === null) pkg = parent.has(id) ? pkgOf(parent.get(id)) : 'native';
    if (pkg === 'root') pkg = 'native';
    packageCache.set(id, pkg);
    return pkg;
  };
  const selfUs = new Map();
  let sampled = 0;
  for (let i = 0; i < profile.samples.length; i++) {
    const us = i + 1 < profile.timeDeltas.length ? profile.timeDeltas[i + 1] : intervalUs;
    sampled += us;
    selfUs.set(profile.samples[i], (selfUs.get(profile.samples[i]) ?? 0) + us);
  }
  /** @type {Record<string, number>} */
  const byPackage = {};
  const functions = new Map();
  let idle = 0;
  for (const [id, us] of selfUs) {
    const pkg = pkgOf(id);
    if (pkg === 'idle') { idle += us; continue; }
    byPackage[pkg] = (byPackage[pkg] ?? 0) + us;
    const { functionName, url, lineNumber } = byId.get(id).callFrame;
    const where = url ? `${url.replace(`file://${ROOT}`, '').replace(/^.*\/node_modules\//, '')}:${lineNumber + 1}` : '(native)';
    const key = `${functionName}\0${where}`;
    const f = functions.get(key) ?? { name: functionName || '(anonymous)', package: pkg, where, self_us: 0 };
    f.self_us += us;
    functions.set(key, f);
  }
  return { sampled_us: sampled, idle_us: idle, by_package: byPackage, functions: [...functions.values()].sort((a, b) => b.self_us - a.self_us) };
}

/**
 * Sums the totals of several profiles (one per worker).
 * @param {ProfileTotals[]} totals
 * @returns {ProfileTotals}
 */
export function sumTotals(totals) {
  /** @type {Record<string, number>} */
  const byPackage = {};
  const functions = new Map();
  for (const t of totals) {
    for (const [pkg, us] of Object.entries(t.by_package)) byPackage[pkg] = (byPackage[pkg] ?? 0) + us;
    for (const f of t.functions) {
      const key = `${f.name}\0${f.where}`;
      const sum = functions.get(key) ?? { ...f, self_us: 0 };
      sum.self_us += f.self_us;
      functions.set(key, sum);
    }
  }
  return {
    sampled_us: totals.reduce((a, t) => a + t.sampled_us, 0),
    idle_us: totals.reduce((a, t) => a + t.idle_us, 0),
    by_package: byPackage,
    functions: [...functions.values()].sort((a, b) => b.self_us - a.self_us),
  };
}

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
