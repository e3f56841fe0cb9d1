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
import { ROOT } from '../processes.js';
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
import { loadMeasurable, prepareOwn, scenariosOf } from '../own-service.js';

/** The HTTP/2 load with many requests in flight per connection, beside one in flight on VUS connections (h2load -c8 -m32). */
export const MANY_STREAMS = Object.freeze({ connections: 8, streams: 32 });

/**
 * The runs of one repeat for some modes: each mode's listener, its peer, the listener again (the A/A control), its bare
 * baseline, side by side so that each ratio pairs runs a few seconds apart; then the other listeners given.
 * @param {string[]} modes modes with a peer and a bare listener (bench/modes.js)
 * @param {readonly string[]} [others] listeners measured after them (those already named are skipped)
 * @returns {string[]} run names for measureDecomposition
 */
export function targetRuns(modes, others = []) {
  const runs = modes.flatMap((mode) => [MODES[mode].listener, MODES[mode].peer, againOf(MODES[mode].listener), MODES[mode].bare]);
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
 * @param {Record<string, Array<{rps: number}>>} runs per run name (targetRuns), one per repeat, interleaved
 * @returns {ReturnType<typeof targetRow>[]} ours ÷ peer, peer ÷ bare, ours ÷ bare, and the A/A control: ours again ÷ ours
 */
function modeRows(mode, load, runs) {
  const { listener: ours, peer, bare } = MODES[mode];
  const group = `${mode} (${load})`;
  const row = (what, a, b, control = false) => targetRow(`${group}: ${what} (\`${a}\` ÷ \`${b}\`)`, pairedRatios(runs, a, b),
    PERFORMANCE_TARGETS[`${a}/${b}`] ?? null, { group, control });
  return [row('ours ÷ peer', ours, peer), row('peer ÷ bare', peer, bare), row('ours ÷ bare', ours, bare),
    row('A/A, the machine alone: ours again ÷ ours', againOf(ours), ours, true)];
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
  for (const { source } of sources) loadMeasurable(source, { job: 'npm run targets' }); // a bad schema or sample: one line, before anything starts
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
    const compared = MODE_NAMES.filter((mode) => MODES[mode].peer && MODES[mode].bare);
    const runs = await measureDecomposition({ ...pass, listeners: targetRuns(compared, DECOMPOSITION) });
    // The decomposition's table in the registry's order, the A/A runs last.
    const decomposition = decompositionReport(scenario, Object.fromEntries(
      [...DECOMPOSITION, ...Object.keys(runs)].filter((k, i, all) => all.indexOf(k) === i).map((k) => [k, runs[k]])));
    // The HTTP/2 modes again with many streams per connection: their listeners, interleaved per repeat.
    const http2Modes = compared.filter((mode) => LISTENERS[MODES[mode].listener].transport === 'HTTP/2');
    const manyLoad = `h2load -c${MANY_STREAMS.connections} -m${MANY_STREAMS.streams}`;
    const manyRuns = http2Modes.length === 0 ? {} : await measureDecomposition({ ...pass, ...MANY_STREAMS, listeners: targetRuns(http2Modes) });
    // The k6 scripts of the modes that have a target (connect-grpc runs grpc's; connect-json's are the HTTP shape); with
    // an own service, against the minimal scripts that send its first request sample (bench/k6-minimal/own-*.js).
    const k6Modes = MODE_NAMES.filter((mode) => PERFORMANCE_TARGETS[`k6-${mode}/k6-minimal-${mode}`]);
    const k6 = await measureK6Overhead({ ...settings, WORKERS: 1 }, cores, scratch, k6Modes, own && { scenario, own });
    const toolOf = (mode) => LISTENERS[MODES[mode].listener].load.tool;
    const results = [
      ...compared.flatMap((mode) => modeRows(mode, `${toolOf(mode)} -c${settings.VUS}${toolOf(mode) === 'h2load' ? ' -m1' : ''}`, runs)),
      ...http2Modes.flatMap((mode) => modeRows(mode, manyLoad, manyRuns)),
      ...k6Modes.map((mode) => targetRow(`k6 ${MODES[mode].scripts.local} / ${own ? MODES[mode].minimalOwnScript : MODES[mode].minimalScript}`,
        k6[mode].ratios, PERFORMANCE_TARGETS[`k6-${mode}/k6-minimal-${mode}`], { caveat: k6Caveat(k6[mode].k6Busy, k6[mode].costRatios) })),
    ];
    const setup = `${own ? `${own.service.rpc.name} (${scenario}); ` : ''}${settings.REPEATS} repeat(s), ${settings.DURATION} each after ${settings.WARMUP} warm-up, ${settings.VUS} connections/VUs; `
      + 'per repeat ours, its peer, ours again (the A/A row: the machine alone) and bare side by side, the order reversed every other repeat; '
      + `1 server worker, its initial heap ${DECOMPOSITION_HEAP_MB} MiB (WORKER_INITIAL_HEAP_MB), V8's allocation-site pretenuring off `
      + `(WORKER_PRETENURING=false); the k6 rows: the project's script and the minimal one at once, ${sideBySideVus(settings.VUS)} VUs each; `
      + `${cores.description}`;
    const decompositions = [decomposition, ...(http2Modes.length ? [decompositionReport(scenario, manyRuns, manyLoad)] : [])];
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

