// A V8 CPU profile's self time by package and function (PROFILE=1): bench/passes/profile.js takes the workers' profiles
// and records these totals (`bench.run.profile`); bench/report/profile.js renders them per request.
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
