// The decomposition's report (DECOMPOSE=1; bench/passes/decompose.js measures): each listener's RPS and bytes,
// the ratios that isolate encoding, transport and framework, and the profiles beside their bare baselines.
import { markdownTable } from 'markdown-table';
import { formatNumber, NOT_MEASURED } from '../format.js';
import { ratiosInterval, spread } from './stats.js';
import { NOT_SETTLED_MARK } from './render.js';
import { PERFORMANCE_TARGETS } from '../performance-targets.js';
import { profileBreakdown, renderBreakdown } from './profile.js';
import { LISTENERS } from '../../server/listeners.js';
import { listenerOf } from '../records/decomposition.js';

// [what it isolates, numerator, denominator, target (minimum ratio) or null].
// Targets: bench/performance-targets.js.
/** @type {Array<[string, string, string, number|null]>} */
const EFFECTS = [
  ['encoding: protobuf instead of JSON (HTTP/1.1, fastify)', 'protobuf-h1', 'http', null],
  ['transport: HTTP/2 instead of HTTP/1.1 (JSON, fastify)', 'json-h2', 'http', null],
  ['both, as gRPC does it (grpc-js vs fastify JSON)', 'grpc', 'http', null],
  ['fastify over bare node:http, same body', 'http', 'baseline-http', PERFORMANCE_TARGETS['http/baseline-http']],
  ['grpc-js over bare node:http2 gRPC framing, same bytes', 'grpc', 'baseline-grpc', PERFORMANCE_TARGETS['grpc/baseline-grpc']],
  ['ours over its peer: the fastify listener over a plain fastify app', 'http', 'peer-http', PERFORMANCE_TARGETS['http/peer-http']],
  ['the peer over bare: a plain fastify app over bare node:http', 'peer-http', 'baseline-http', null],
  ['ours over its peer: the grpc-js listener over a plain grpc-js server', 'grpc', 'peer-grpc', PERFORMANCE_TARGETS['grpc/peer-grpc']],
  ['the peer over bare: a plain grpc-js server over bare node:http2', 'peer-grpc', 'baseline-grpc', null],
  ['connect-node over grpc-js, gRPC protocol, same bytes (docs/connect.md)', 'connect-grpc', 'grpc', null],
  ['connect-node over bare node:http2 gRPC framing, same bytes', 'connect-grpc', 'baseline-grpc', null],
  ['connect-node\'s Connect protocol (POST, JSON) over fastify\'s GET, same JSON', 'connect-json', 'http', null],
];

/**
 * The RPS ratio of two listeners per repeat: each repeat loads every listener in turn, so ratios pair up.
 * @param {Record<string, Array<{rps: number}>>} runs runs per listener, one per repeat
 * @param {string} a numerator listener
 * @param {string} b denominator listener
 * @returns {number[]} one ratio per repeat
 */
export const pairedRatios = (runs, a, b) => runs[a].map((r, i) => r.rps / runs[b][i].rps);

/**
 * The decomposition report of one scenario: each listener's median RPS with
 * its spread, bytes per request, and the ratios that isolate each effect (those whose two listeners were measured).
 * @param {string} scenario
 * @param {Record<string, Array<{tool: string, rps: number, requests?: number, failed: number, received_per_request: number,
 *   headers_per_request: number|null, server?: {cpu_us_per_request: number|null, gc_ms_per_1k_requests: number|null,
 *   allocated_bytes_per_request?: number|null},
 *   initial_heap_mb?: number, profile?: any}>>} runs server: the server's own figures (bench/passes/decompose.js serverCost);
 *   initial_heap_mb: its workers' initial V8 heap (MiB)
 * @param {string} [load] how the listeners were loaded, for the title (default 'wrk/h2load': each at VUS connections, one
 *   request in flight on each)
 * @param {{targets?: boolean}} [options] targets: the effects carry their unary targets (default true; false for a
 *   stream, whose targets are its kind's, npm run targets' rows)
 * @returns {{scenario: string, load: string, listeners: Record<string, object>, effects: Array<{effect: string, of: string, ratio: number,
 *   min: number|null, max: number|null, runs: number[], interval: import('./stats.js').Interval, target: number|null,
 *   met: boolean|null}>,
 *   profiles: Array<{pair: string[], breakdown: import('./profile.js').Breakdown}>, initial_heap_mb: number|null}} profiles: with
 *   PROFILE=1, each framework beside its bare baseline and its peer (PROFILED_PAIRS); initial_heap_mb: the runs' (null: not recorded)
 *   listeners[name].rps = {median, min, max} in req/s; cpu_us_per_request (µs), gc_ms_per_1k_requests (ms) and
 *   allocated_bytes_per_request (bytes on the workers' V8 heaps) the same
 *   shape, or null without the server's figures; received_per_request in bytes (median);
 *   an effect's ratio is the median of its per-repeat ratios, min and max their range, interval the median's 95% interval
 */
export function decompositionReport(scenario, runs, load = 'wrk/h2load', { targets = true } = {}) {
  const listeners = {};
  for (const [name, list] of Object.entries(runs)) {
    const headers = list.map((r) => r.headers_per_request).filter((h) => h !== null);
    // The server's own figures (bench/passes/decompose.js serverCost); absent from runs recorded before them.
    const cost = (field) => spread(list.map((r) => r.server?.[field]).filter((v) => typeof v === 'number')) ?? null;
    listeners[name] = {
      label: name === listenerOf(name) ? LISTENERS[name]?.label ?? name : 'the same listener in a server of its own, measured again (A/A)',
      tool: list[0].tool,
      repeats: list.length,
      rps: spread(list.map((r) => r.rps)),
      cpu_us_per_request: cost('cpu_us_per_request'),
      gc_ms_per_1k_requests: cost('gc_ms_per_1k_requests'),
      allocated_bytes_per_request: cost('allocated_bytes_per_request'),
      failed: list.reduce((sum, r) => sum + r.failed, 0),
      received_per_request: spread(list.map((r) => r.received_per_request))?.median ?? null,
      headers_per_request: spread(headers)?.median ?? null,
    };
  }
  // The effects of the listeners measured (a pass may load a few of them); each repeat loads every listener in turn,
  // so ratios pair up per repeat.
  const effects = EFFECTS.filter(([, a, b]) => runs[a]?.length && runs[b]?.length).map(([effect, a, b, unaryTarget]) => {
    const target = targets ? unaryTarget : null;
    const ratios = pairedRatios(runs, a, b);
    // No finite ratio (a listener that served nothing): null, said NOT_MEASURED in the table.
    const { median: ratio = null, min = null, max = null } = spread(ratios) ?? {};
    // The median's 95% interval over the repeats (stats.js ratiosInterval, as npm run targets gives its rows), settled when
    // it excludes the target, or 1 for an effect without one.
    const interval = ratiosInterval(ratios, target ?? 1);
    return { effect, of: `${a}/${b}`, ratio, min, max, runs: ratios, interval, target, met: target === null || ratio === null ? null : ratio >= target };
  });
  // PROFILE=1: where each framework's CPU goes beside the bare server it is measured against.
  const profiled = (name) => (runs[name] ?? []).filter((r) => r.profile && r.requests > 0).map((r) => ({ profile: r.profile, requests: r.requests }));
  const profiles = PROFILED_PAIRS.filter((pair) => pair.every((name) => profiled(name).length))
    .map((pair) => ({ pair, breakdown: profileBreakdown(pair.map((name) => [name, profiled(name)])) }));
  // The workers' initial heap, where the runs recorded it (bench/passes/decompose.js), the same for every listener.
  const initialHeapMb = Object.values(runs).flat().find((r) => r.initial_heap_mb)?.initial_heap_mb ?? null;
  return { scenario, load, listeners, effects, profiles, initial_heap_mb: initialHeapMb };
}

/** The pairs whose profiles the decomposition puts side by side: the bare server (or the peer) first, ours second. */
const PROFILED_PAIRS = [['baseline-http', 'http'], ['baseline-grpc', 'grpc'], ['peer-http', 'http'], ['peer-grpc', 'grpc'],
  ['baseline-grpc', 'connect-grpc'], ['baseline-http', 'connect-json']];

const fmt = formatNumber;

/**
 * The decomposition as Markdown: the listeners' table, then the effects' table.
 * @param {ReturnType<typeof decompositionReport>} report
 * @returns {string}
 */
export function renderDecomposition(report) {
  const range = (x, digits = 0) => (x ? `${fmt(x.median, digits)} (${fmt(x.min, digits)}–${fmt(x.max, digits)})` : 'n/a');
  const rows = Object.entries(report.listeners).map(([name, l]) => [
    `\`${name}\` ${l.label}`,
    range(l.rps),
    range(l.cpu_us_per_request, 1),
    range(l.gc_ms_per_1k_requests, 2),
    range(l.allocated_bytes_per_request),
    fmt(l.received_per_request, 1),
    l.headers_per_request === null ? 'n/a' : fmt(l.headers_per_request, 1),
    fmt(l.failed),
    l.tool,
  ]);
  const listeners = markdownTable([['listener', 'RPS (req/s), median (min–max)', 'server CPU per request (µs)',
    'GC per 1000 requests (ms)', 'allocated per request (bytes)', 'received per request (bytes)', 'of it HTTP/2 headers (bytes)',
    'failed', 'tool'], ...rows],
  { align: ['l', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'l'] });
  const interval = ({ interval: i }) => (typeof i?.low !== 'number' ? '' : `[${fmt(i.low, 3)}–${fmt(i.high, 3)}]${i.settled ? '' : ` ${NOT_SETTLED_MARK}`}`);
  const effects = markdownTable([['effect isolated', 'RPS ratio, median (min–max) of the repeats', '95% interval', 'target'], ...report.effects.map((e) => [
    `${e.effect} (\`${e.of}\`)`, e.ratio === null ? NOT_MEASURED : `${fmt(e.ratio, 3)} (${fmt(e.min, 3)}–${fmt(e.max, 3)})`, interval(e),
    e.target === null ? '' : `≥ ${e.target} ${e.met === null ? NOT_MEASURED : e.met ? 'met' : 'MISSED'}`,
  ])], { align: ['l', 'r', 'r', 'l'] });
  // What the interval column says, where some effect has one (3 repeats or more).
  const legend = report.effects.some((e) => typeof e.interval?.low === 'number')
    ? `\nThe 95% interval is that of the repeats' ratios, Student's t of their logarithms (docs/report.md); \`${NOT_SETTLED_MARK}\`: it includes the `
      + 'target, or 1 for an effect without one, so these repeats do not settle it.\n' : '';
  const { repeats } = Object.values(report.listeners)[0];
  const heap = report.initial_heap_mb ? ` (initial heap ${report.initial_heap_mb} MiB per worker)` : '';
  const profiles = (report.profiles ?? []).map(({ pair, breakdown }) => `\n${renderBreakdown(breakdown, pair,
    `Where the CPU goes, \`${pair[1]}\` beside \`${pair[0]}\` under ${report.listeners[pair[1]].tool}`)}`).join('');
  return `### Decomposition, scenario \`${report.scenario}\` · server capacity under ${report.load ?? 'wrk/h2load'} · ${repeats} run(s) per listener, each in a server of its own${heap}\n\n`
    + `${listeners}\n\n${effects}\n${legend}${profiles}`;
}
