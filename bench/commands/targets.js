// npm run targets: checks the performance targets (issues 5 and 24) by measurement, one
// server worker pinned to one core and the load generator to the other. Per mode, three ratios of its
// listener (ours), its peer (what a user would run instead, bench/modes.js) and its bare baseline:
// - ours ÷ peer >= 0.97: nothing of ours costs more than 3% on top of the library (wrk; h2load at -m1 and -m32);
// - peer ÷ bare: what the library itself costs (no target);
// - ours ÷ bare: fastify >= 0.9x bare node:http with the same body, grpc-js >= 0.6x bare node:http2 gRPC framing;
// and the project's k6 scripts reach >= 0.95x the RPS of a minimal k6 script running beside them (bench/passes/k6-overhead.js).
// The decomposition it prints measures connect-node (connect-grpc, connect-json) beside them, with no target:
// RPS, server CPU and GC per request (docs/connect.md).
// Each ratio is taken per repeat (REPEATS, interleaved, the order reversed every other repeat); the report gives the
// median and min-max. Each mode's listener runs twice per repeat, around its peer (ours, peer, ours again, bare): the
// A/A row, ours again ÷ ours, is what the machine alone moves a ratio by, to read the others against.
// Exits 1 when a median misses its target, or a target could not be measured. Settings: REPEATS, DURATION, WARMUP, VUS (as bench.sh).
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { requireCapacityTools } from '../passes/capacity.js';
import { decompositionReport, pairedRatios } from '../report/decomposition.js';
import { againOf } from '../records/decomposition.js';
import { DECOMPOSITION, DECOMPOSITION_HEAP_MB, DECOMPOSITION_SERVER_SETTINGS, measureDecomposition } from '../passes/decompose.js';
import { BenchError } from '../errors.js';
import { fileStamp } from '../format.js';
import { PERFORMANCE_TARGETS } from '../performance-targets.js';
import { launchServer, ROOT } from '../processes.js';
import { proveEquality, WIRE_CALLS } from '../passes/equality.js';
import { provenanceOf } from '../provenance.js';
import { serverEnv } from '../invoke.js';
import { allowedCpus, splitCores } from '../settings/cores.js';
import { durationMs } from '../settings/validators.js';
import { decompositionPlanOf } from '../plans.js';
import { MODE_NAMES, MODES } from '../modes.js';
import { renderTargets, targetRow } from '../report/targets.js';
import { spread } from '../report/stats.js';
import { K6_SATURATED, measureK6Overhead, sideBySideVus } from '../passes/k6-overhead.js';
import { LISTENERS } from '../../server/listeners.js';
import { prepareOwn, scenariosOf } from '../own-service.js';
import { loadOwnService } from '../../proto/own/service.js';

/** The HTTP/2 load with many requests in flight per connection, beside one in flight on VUS connections (h2load -c8 -m32). */
export const MANY_STREAMS = Object.freeze({ connections: 8, streams: 32 });

/**
 * The runs of one repeat for some modes: each mode's listener, its peer, the listener again (the A/A control), its bare
 * baseline, side by side so that each ratio pairs runs a few seconds apart; then the other listeners given.
 * @param {string[]} modes modes with a peer and a bare listener (bench/modes.js)
 * @param {readonly string[]} [others] listeners measured after them (those already named are skipped)
 * @param {{bare?: boolean}} [options] bare: with each mode's bare baseline (default true; the bare listeners serve no streams)
 * @returns {string[]} run names for measureDecomposition
 */
export function targetRuns(modes, others = [], { bare = true } = {}) {
  const runs = modes.flatMap((mode) => [MODES[mode].listener, MODES[mode].peer, againOf(MODES[mode].listener), ...(bare ? [MODES[mode].bare] : [])]);
  return [...runs, ...others.filter((l) => !runs.includes(l))];
}

/**
 * What a k6 row's reader must know beside its RPS ratio:
 * - k6's CPU per iteration, the minimal script's ÷ the project's, median (min–max) of the repeats: the scripts' cost
 *   ratio without the scheduler's split of the core between the two runs, which moves their RPS ratio by a few points
 *   from run to run on a 2-vCPU VM (docs/findings/2026-11-25-profiling.md, "The HTTP script at the edge of what this machine resolves");
 * - when k6 was not the limit: the median share of k6's cores its two scripts used together, below K6_SATURATED
 *   (bench/passes/k6-overhead.js).
 * @param {(number|null)[]} busy per repeat, the share of k6's cores both runs used (null: not read)
 * @param {(number|null)[]} [costRatios] per repeat, the minimal script's k6 CPU per iteration ÷ the project's (null: not read)
 * @returns {string|null} null when there is neither to say
 */
export function k6Caveat(busy, costRatios = []) {
  const cost = spread(costRatios);
  const median = spread(busy)?.median;
  const parts = [
    ...(cost ? [`k6's CPU per iteration, minimal ÷ project: ${cost.median.toFixed(3)} (${cost.min.toFixed(3)}–${cost.max.toFixed(3)})`] : []),
    ...(median !== undefined && median < K6_SATURATED
      ? [`k6 used ${(median * 100).toFixed(0)}% of its cores: the server limited these runs, so the ratio is not the scripts' cost alone`] : []),
  ];
  return parts.length ? parts.join('; ') : null;
}

/**
 * The ratios of one mode under one load, as target rows.
 * @param {string} mode a mode with a peer and a bare listener (bench/modes.js)
 * @param {string} load how its listeners were loaded, e.g. 'wrk -c32'
 * @param {Record<string, Array<{rps: number, client_cpu?: number}>>} runs per run name (targetRuns), one per repeat, interleaved
 * @param {string} [kind] the RPC's kind (proto/own/schema.js rpcKind; default 'unary'): a stream's target is its kind's
 *   (`ours/peer <kind>`), and it has no bare rows (the bare listeners serve no streams)
 * @returns {ReturnType<typeof targetRow>[]} ours ÷ peer, peer ÷ bare, ours ÷ bare, and the A/A control: ours again ÷ ours
 */
function modeRows(mode, load, runs, kind = 'unary') {
  const { listener: ours, peer, bare } = MODES[mode];
  const group = `${mode} (${load})`;
  const stream = kind !== 'unary';
  const row = (what, a, b, control = false) => targetRow(`${group}: ${what} (\`${a}\` ÷ \`${b}\`)`, pairedRatios(runs, a, b),
    (control ? null : PERFORMANCE_TARGETS[stream ? streamTarget(a, b, kind) : `${a}/${b}`]) ?? null,
    { group, control, caveat: control ? null : clientCaveat([...runs[a], ...runs[b]]) });
  return [row('ours ÷ peer', ours, peer), ...(stream ? [] : [row('peer ÷ bare', peer, bare), row('ours ÷ bare', ours, bare)]),
    row('A/A, the machine alone: ours again ÷ ours', againOf(ours), ours, true)];
}

/**
 * The key of a stream's target in PERFORMANCE_TARGETS: the pair and the kind.
 * @param {string} a numerator listener
 * @param {string} b denominator listener
 * @param {string} kind e.g. 'server streaming'
 * @returns {string} e.g. 'http/peer-http, server streaming'
 */
export const streamTarget = (a, b, kind) => `${a}/${b}, ${kind}`;

/**
 * What a row's reader must know when the WebSocket relay's client (bench/passes/relay-load.js) was busy: its CPU, the
 * median over the runs, at 0.9 of its core or more, when it rather than the server may have set the rate.
 * @param {Array<{client_cpu?: number}>} runs the runs of the row's two listeners
 * @returns {string|null}
 */
export function clientCaveat(runs) {
  const busy = spread(runs.map((r) => r.client_cpu).filter((c) => typeof c === 'number'))?.median;
  return busy !== undefined && busy >= K6_SATURATED
    ? `the ws client used ${(busy * 100).toFixed(0)}% of its core: it, not the server, may have set the rate` : null;
}

/** What `npm run targets` does not measure of a stream, and why. */
const STREAM_GAPS = 'not measured for a stream: peer ÷ bare and ours ÷ bare (the bare listeners serve no streams), the other '
  + 'listeners of the decomposition, and a k6 row for a mode with no minimal stream script (connect-json\'s)';

/**
 * How a stream was loaded, for the report's setup line.
 * @param {import('../own-service.js').OwnRun} own a streaming RPC
 * @returns {string}
 */
function streamSetup(own) {
  const { rpc, requests, responses } = own.service;
  const sizes = (samples) => (samples.streams ? `${samples.streams[0].length} message(s)` : '1 message');
  return `${rpc.kind}, every call the first request sample (${sizes(requests)}), answered by the response samples in turn `
    + `(the first: ${sizes(responses)}), STREAM_INTERVAL=${Number(own.server.STREAM_INTERVAL ?? 0)} ms; h2load and wrk send one body (a request `
    + 'stream its messages one after another) and read the answer to its end (SSE over HTTP/1.1 chunked, gRPC\'s DATA frames)'
    + `${rpc.requestStream && rpc.responseStream ? '; the HTTP relay, a WebSocket, by a ws client (bench/passes/relay-load.js), a connection a call' : ''}`;
}

/**
 * Proves, before a stream is measured, that each mode's listener and its peer answer the same messages: both in one
 * server (one worker, on the server's cores), each called once a sample stream (WIRE_CALLS at most) and every message
 * compared with the samples' (bench/passes/equality.js proveEquality); says so in one line on stderr. A mode whose pair
 * differs is not measured (a ratio of two servers sending different messages would not be the project's cost): its
 * reason, one line, goes in its row.
 * @param {string[]} modes modes whose listener and peer serve the RPC's kind
 * @param {import('../own-service.js').OwnRun} own
 * @param {ReturnType<typeof splitCores>} cores
 * @returns {Promise<Record<string, string>>} why, by mode, for the modes whose listener or peer answered another message
 * @throws {BenchError} when the server does not start
 */
async function provePeers(modes, own, cores) {
  const listeners = modes.flatMap((mode) => [MODES[mode].listener, MODES[mode].peer]);
  const server = await launchServer(`the server (MODE=${listeners.join(',')})`, {
    env: serverEnv({ listener: listeners.join(',') }, { workers: 1, settings: own.server }), cpus: cores.serverCpus,
  });
  const calls = [];
  /** @type {Record<string, string>} */
  const refused = {};
  try {
    for (const mode of modes) {
      for (const listener of [MODES[mode].listener, MODES[mode].peer]) {
        const cell = { host: `127.0.0.1:${server.ports[listener]}`, tls: null, stop: async () => {} };
        try {
          const proved = await proveEquality([mode], own, async () => cell, WIRE_CALLS, () => `the ${listener} listener`);
          calls.push(`${listener} ${proved.calls[mode]}`);
        } catch (err) {
          if (!(err instanceof BenchError)) throw err;
          refused[mode] = err.message;
          break;
        }
      }
    }
  } finally {
    await server.stop();
  }
  if (calls.length) console.error(`${own.service.rpc.name}: these listeners answered the response samples in turn, the same messages (calls: ${calls.join(', ')})`);
  for (const [mode, why] of Object.entries(refused)) console.error(`targets: ${mode} not measured: ${why}`);
  return refused;
}

/**
 * The targets need wrk and h2load, and two cores; they run in cleartext.
 * @param {{TLS?: boolean}} [settings]
 * @returns {Promise<void>}
 * @throws {BenchError} naming what is missing, or TLS=1, which the peers cannot serve
 */
export async function preflight(settings = {}) {
  if (settings.TLS) {
    throw new BenchError('npm run targets measures the listeners against their peers, which serve no TLS (they anchor the comparison as their users run them): run it without TLS=1');
  }
  await requireCapacityTools(DECOMPOSITION);
  if (!splitCores(allowedCpus()).k6Cpus) throw new BenchError('the targets need two cores: one for the server, one for the load generator');
  const sources = scenariosOf(/** @type {any} */ (settings)).filter((s) => s.source);
  if (sources.length > 1) throw new BenchError('npm run targets measures one own service at a time: name one in SCENARIO, or RPC');
  for (const { source } of sources) loadOwnService(source); // a bad schema or sample: one line, before anything starts
}

/**
 * Measures every target (bench/cli.js targets), prints the table and writes it to RESULTS_DIR;
 * sets exit code 1 when a median misses its target or a target was not measured.
 * @param {import('../settings/bench.js').BenchSettings} settings checked by bench/cli.js, K6_BIN provisioned
 * @returns {Promise<void>}
 * @throws {BenchError} when a server or a load generator fails
 */
export async function main(settings) {
  process.chdir(ROOT);
  const cores = splitCores(allowedCpus());
  // Read before the runs: the checkout measured, whatever is committed meanwhile. One server per listener run, each with
  // MODE set to its listener and an admin port: the rest of its environment.
  const provenance = provenanceOf({
    settings, pinning: cores.description,
    serverEnv: serverEnv(null, { workers: 1, settings: DECOMPOSITION_SERVER_SETTINGS }),
  });
  const scratch = await mkdtemp(path.join(os.tmpdir(), 'targets-'));
  try {
    // An own service (SCENARIO=otlp-traces, or RPC): the listeners and their peers serve it, the load tools ask for its
    // first request sample. Else the demo's User.
    const { scenario, source } = scenariosOf(settings).find((s) => s.source) ?? { scenario: 'user', source: null };
    const own = source ? await prepareOwn(source, scratch, scenario) : null;
    // The server keeps its accounting (always, in the decomposition pass), as in the main job: ours is measured with everything of ours on.
    const pass = {
      scenario, plan: { ...decompositionPlanOf(settings), WORKERS: 1 }, cores, own,
      durationS: durationMs(settings.DURATION) / 1000, warmupS: durationMs(settings.WARMUP) / 1000,
    };
    // A stream: the modes whose listener and peer serve its kind, without the bare baselines and the rest of the
    // decomposition (the bare listeners serve no streams); both peers answered first the twins' messages (proved below).
    const kind = own?.service.rpc.kind ?? 'unary';
    const stream = kind !== 'unary';
    const pairs = MODE_NAMES.filter((mode) => MODES[mode].peer && (stream
      ? [MODES[mode].listener, MODES[mode].peer].every((l) => LISTENERS[l].streams?.includes(kind)) : MODES[mode].bare));
    const refused = stream ? await provePeers(pairs, own, cores) : {};
    const compared = pairs.filter((mode) => !(mode in refused));
    const runs = await measureDecomposition({ ...pass, listeners: stream ? targetRuns(compared, [], { bare: false }) : targetRuns(compared, DECOMPOSITION) });
    // The decomposition's table in the registry's order, the A/A runs last.
    const decomposition = decompositionReport(scenario, Object.fromEntries(
      [...DECOMPOSITION, ...Object.keys(runs)].filter((k, i, all) => all.indexOf(k) === i && k in runs).map((k) => [k, runs[k]])),
    undefined, { targets: !stream });
    // The HTTP/2 modes again with many streams per connection: their listeners, interleaved per repeat.
    const http2Modes = compared.filter((mode) => LISTENERS[MODES[mode].listener].transport === 'HTTP/2');
    const manyLoad = `h2load -c${MANY_STREAMS.connections} -m${MANY_STREAMS.streams}`;
    const manyRuns = http2Modes.length === 0 ? {} : await measureDecomposition({ ...pass, ...MANY_STREAMS, listeners: targetRuns(http2Modes, [], { bare: !stream }) });
    // The k6 scripts of the modes that have a target (connect-grpc runs grpc's; connect-json's are the HTTP shape); with
    // an own service, against the minimal scripts that send its first request sample (bench/k6-minimal/own-*.js).
    // A stream's against the minimal stream scripts (bench/k6-minimal/own-*-stream.js), where a mode has one.
    const k6Modes = MODE_NAMES.filter((mode) => PERFORMANCE_TARGETS[`k6-${mode}/k6-minimal-${mode}`] && (!stream || MODES[mode].minimalStreamScript));
    const k6 = k6Modes.length === 0 ? {} : await measureK6Overhead({ ...settings, WORKERS: 1 }, cores, scratch, k6Modes, own && { scenario, own });
    const toolOf = (mode) => runs[MODES[mode].listener][0]?.tool ?? LISTENERS[MODES[mode].listener].load.tool;
    const results = [
      ...Object.entries(refused).map(([mode, why]) => targetRow(`${mode}: ours ÷ peer (\`${MODES[mode].listener}\` ÷ \`${MODES[mode].peer}\`)`, [],
        PERFORMANCE_TARGETS[streamTarget(MODES[mode].listener, MODES[mode].peer, kind)] ?? null, { caveat: `the two answer different messages: ${why}` })),
      ...compared.flatMap((mode) => modeRows(mode, `${toolOf(mode)} -c${settings.VUS}${toolOf(mode) === 'h2load' ? ' -m1' : ''}`, runs, kind)),
      ...http2Modes.flatMap((mode) => modeRows(mode, manyLoad, manyRuns, kind)),
      ...k6Modes.map((mode) => targetRow(`k6 ${MODES[mode].scripts.local} / ${stream ? MODES[mode].minimalStreamScript : own ? MODES[mode].minimalOwnScript : MODES[mode].minimalScript}`,
        k6[mode].ratios, PERFORMANCE_TARGETS[`k6-${mode}/k6-minimal-${mode}`], { caveat: k6Caveat(k6[mode].k6Busy, k6[mode].costRatios) })),
    ];
    const setup = `${own ? `${own.service.rpc.name} (${scenario}${stream ? `, ${streamSetup(own)}` : ''}); ` : ''}`
      + `${settings.REPEATS} repeat(s), ${settings.DURATION} each after ${settings.WARMUP} warm-up, ${settings.VUS} connections/VUs; `
      + `per repeat ours, its peer, ours again (the A/A row: the machine alone)${stream ? '' : ' and bare'} side by side, the order reversed every other repeat; `
      + `1 server worker, its initial heap ${DECOMPOSITION_HEAP_MB} MiB (WORKER_INITIAL_HEAP_MB), V8's allocation-site pretenuring off `
      + `(WORKER_PRETENURING=false); the k6 rows: the project's script and the minimal one at once, ${sideBySideVus(settings.VUS)} VUs each; `
      + `${stream ? `${STREAM_GAPS}; ` : ''}`
      + `${cores.description}`;
    const decompositions = [decomposition, ...(http2Modes.length ? [decompositionReport(scenario, manyRuns, manyLoad, { targets: !stream })] : [])];
    const markdown = renderTargets({ results, setup, decompositions, provenance });
    process.stdout.write(`\n${markdown}`);
    await mkdir(settings.RESULTS_DIR, { recursive: true });
    const base = path.join(settings.RESULTS_DIR, `targets-${fileStamp()}`);
    await writeFile(`${base}.md`, markdown);
    await writeFile(`${base}.json`, `${JSON.stringify({ setup, provenance, results, decomposition_runs: runs, many_streams_runs: manyRuns }, null, 2)}\n`);
    process.stdout.write(`written: ${base}.md, ${base}.json\n`);
    // A target missed, or not measured (no finite ratio: its table says so), is not met.
    if (results.some((r) => r.required !== null && r.met !== true)) process.exitCode = 1;
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}

