// The main job (bash bench.sh): for each scenario, each column (mode, compression, Node release) in turn and
// REPEATS times interleaved, one measured cell (bench/passes/cell.js: the server where the placement puts it,
// warmed up and measured by k6); then the decomposition pass, and one side-by-side table per scenario.
import { execFileSync } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { readFileSync, rmSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { BenchError } from '../errors.js';
import { onStopSignal, ROOT } from '../processes.js';
import { buildReport } from '../report/report.js';
import { renderMarkdown } from '../report/render.js';
import { writeReports } from '../report/files.js';
import { allowedCpus, splitCores } from '../settings/cores.js';
import { runPlanOf } from '../plans.js';
import { measureColumnCapacity, requireCapacityTools } from '../passes/capacity.js';
import { decompositionReport, renderDecomposition } from '../report/decomposition.js';
import { DECOMPOSITION, measureDecomposition } from '../passes/decompose.js';
import { requireCaptureTools } from '../passes/wire.js';
import { readSummary } from '../records/summary.js';
import { withCapacity } from '../records/run-record.js';
import { requireLinkTools } from '../placement/link.js';
import { formatRate } from '../settings/network.js';
import { placementOf } from '../placement/placement.js';
import { measureCell } from '../passes/cell.js';
import { replicasPlacement, requireBalancer } from '../placement/replicas.js';
import { columnKey, MODES } from '../modes.js';
import { streamlessListeners } from '../../server/listeners.js';
import { fileStamp, progressOf } from '../format.js';
import { measureClientCeiling } from '../passes/calibrate.js';
import { ensureTool, ensureTools } from '../tools.js';
import { prepareOwn, scenariosOf } from '../own-service.js';
import { loadOwnService } from '../../proto/own/service.js';
import { proveOwnEquality } from '../passes/equality.js';

/**
 * What the job needs before it starts, checked at once: the tools of the passes asked for, and root for a link.
 * @param {import('../settings/bench.js').BenchSettings} settings
 * @returns {Promise<string>} what the job would measure, in one line: each scenario (an own service: its RPC, kind and
 *   sample counts), the modes, the runs
 * @throws {BenchError} naming what is missing and what installs it
 */
export async function preflight(settings) {
  serverNodes(settings); // every release of NODE_VERSIONS, before anything starts
  // An own service's schema, RPC and samples: a bad one is one line (ERR_OWN_SERVICE) before anything starts.
  const measured = scenariosOf(settings).map(({ scenario, source }) => {
    if (!source && settings.STREAMS) {
      throw new BenchError(`STREAMS=${settings.STREAMS} holds streams open: SCENARIO=${scenario} is a unary call; `
        + 'measure a server-streaming RPC or a relay (e.g. SCENARIO=gemini-stream, or RPC=…)');
    }
    if (!source) return scenario;
    const { rpc, requests, responses } = loadOwnService(source);
    streamPreflight(settings, rpc);
    const count = (n, what) => `${n} ${what} sample${n === 1 ? '' : 's'}`;
    return `${source.RPC} (${rpc.kind}; ${count(requests.messages.length, 'request')}, ${count(responses.messages.length, 'response')})`;
  });
  const listeners = settings.MODES.map((mode) => MODES[mode].listener);
  if (settings.CAPACITY === '1') await requireCapacityTools(listeners);
  // The default: provisioned before anything starts too, though the pass may not be needed (no column client-bound).
  if (settings.CAPACITY === 'auto') await requireCapacityTools(listeners, 'the capacity pass (CAPACITY=auto, the default; CAPACITY=0 runs without it)');
  if (settings.DECOMPOSE) await requireCapacityTools(DECOMPOSITION);
  if (settings.VERIFY_BYTES) await requireCaptureTools();
  if (settings.TLS && settings.TARGET !== 'remote') ensureTools(['openssl'], 'TLS=1 (the run\'s certificates)');
  if (settings.TLS_CA) {
    try {
      new X509Certificate(await readFile(settings.TLS_CA));
    } catch (err) {
      throw new BenchError(`TLS_CA="${settings.TLS_CA}": not a readable PEM certificate (${err.code ?? err.message})`);
    }
  }
  if (settings.link) requireLinkTools(); // root and ip netns, before anything starts
  if (settings.SERVERS > 1) await requireBalancer(settings);
  if (settings.PROFILE && settings.TARGET === 'remote' && !settings.REMOTE_ADMIN_HOST) {
    throw new BenchError('PROFILE=1 profiles the server through its admin endpoint: set REMOTE_ADMIN_HOST to the remote server\'s');
  }
  return `would measure ${measured.join(', ')} in ${settings.MODES.join(', ')}, ${settings.REPEATS} run(s) of ${settings.DURATION} each`;
}

/**
 * What a streaming RPC asks of the job's settings: modes whose listener serves its kind (server/listeners.js) and whose
 * k6 scripts send it (bench/modes.js `streams`), no decomposition (its passes load unary calls) and no compression (the
 * HTTP twin writes a stream past it).
 * @param {{MODES: string[], DECOMPOSE: boolean, COMPRESSION: string, STREAMS?: number, STREAM_INTERVAL: number}} settings
 * @param {import('../../proto/own/schema.js').Rpc} rpc
 * @returns {void}
 * @throws {BenchError} one line, naming the settings to change
 */
function streamPreflight(settings, rpc) {
  openStreamsPreflight(settings, rpc);
  if (!rpc.responseStream && !rpc.requestStream) return;
  // A mode loads a kind when its listener serves it and its k6 scripts send it.
  const loads = (mode) => !streamlessListeners([MODES[mode].listener], rpc).length && MODES[mode].streams.includes(rpc.kind);
  const streamless = settings.MODES.filter((mode) => !loads(mode));
  if (streamless.length) {
    throw new BenchError(`RPC=${rpc.name} is a ${rpc.kind} RPC: MODES ${streamless.join(', ')} cannot load it yet; `
      + `leave ${streamless.length > 1 ? 'them' : 'it'} out (${Object.keys(MODES).filter(loads).join(', ')} do)`);
  }
  if (settings.DECOMPOSE) throw new BenchError(`RPC=${rpc.name} is a ${rpc.kind} RPC: DECOMPOSE=1 measures unary calls only so far`);
  // The HTTP twin writes a stream itself (server/http.js), past @fastify/compress.
  if (settings.COMPRESSION === 'gzip') throw new BenchError(`RPC=${rpc.name} is a ${rpc.kind} RPC: COMPRESSION=gzip compresses unary answers only so far`);
}

/** The modes whose k6 scripts hold open streams (k6/open-streams.js): not connect-json's Connect envelopes. */
const OPEN_STREAM_MODES = Object.freeze(Object.keys(MODES).filter((mode) => mode !== 'connect-json'));

/** The open files k6 and a server worker need besides the streams' connections (their own files, the VUs' connections). */
const FILES_BESIDE_STREAMS = 1024;

/**
 * What STREAMS=N asks: a server stream or a relay (what can be held open), paced (STREAM_INTERVAL > 0: unpaced, a stream
 * ends as fast as it is read, and nothing stays open), modes whose scripts hold them (k6/open-streams.js), and an open-files
 * limit for N connections (SSE and WebSocket take one a stream, in k6 and in the server alike).
 * @param {{MODES: string[], STREAMS?: number, STREAM_INTERVAL: number}} settings
 * @param {import('../../proto/own/schema.js').Rpc} rpc
 * @param {number|null} [fileLimit] the soft limit of open files (default this process's; null: not known)
 * @returns {void}
 * @throws {BenchError} one line, naming the settings to change
 */
export function openStreamsPreflight(settings, rpc, fileLimit = openFilesLimit()) {
  const n = settings.STREAMS;
  if (!n) return;
  if (!rpc.responseStream) {
    throw new BenchError(`STREAMS=${n} holds streams open: RPC=${rpc.name} is a ${rpc.kind} RPC; measure a server-streaming RPC or a relay`);
  }
  if (!settings.STREAM_INTERVAL) {
    throw new BenchError(`STREAMS=${n} holds paced streams open: set STREAM_INTERVAL (ms between two messages) above 0`);
  }
  const held = settings.MODES.filter((mode) => !OPEN_STREAM_MODES.includes(mode));
  if (held.length) throw new BenchError(`STREAMS=${n}: MODES ${held.join(', ')} cannot hold open streams yet; leave them out (${OPEN_STREAM_MODES.join(', ')} can)`);
  if (fileLimit !== null && n + FILES_BESIDE_STREAMS > fileLimit) {
    throw new BenchError(`STREAMS=${n} needs ${n + FILES_BESIDE_STREAMS} open files in k6 and in the server, and the limit here is ${fileLimit}: `
      + 'raise it (`ulimit -n`; bash bench.sh raises it to the hard limit) or lower STREAMS');
  }
}

/**
 * This process's soft limit of open files, which k6 and the servers it starts inherit.
 * @returns {number|null} null when /proc does not say, or unlimited
 */
function openFilesLimit() {
  try {
    const line = /^Max open files\s+(\d+)/m.exec(readFileSync('/proc/self/limits', 'utf8'));
    return line ? Number(line[1]) : null;
  } catch {
    return null;
  }
}

/**
 * Runs the main job (bench/cli.js run) and prints the tables; writes the summaries, logs and reports in RESULTS_DIR.
 * @param {import('../settings/bench.js').BenchSettings} settings checked by bench/cli.js, K6_BIN provisioned
 * @returns {Promise<void>}
 * @throws {BenchError} when a server does not start, k6 fails or a link cannot be built
 */
export async function main(settings) {
  const plan = runPlanOf(settings);
  const { job } = plan;
  process.chdir(ROOT); // k6 and the report resolve results/ and the scripts from here
  await mkdir(job.RESULTS_DIR, { recursive: true });
  const cores = splitCores(allowedCpus(), job.K6_INSTANCES);
  const stamp = fileStamp();
  const scratch = await mkdtemp(path.join(os.tmpdir(), 'bench-'));
  // A job stopped by a signal never reaches the finally below: its scratch goes then.
  const forgetScratch = onStopSignal(() => rmSync(scratch, { recursive: true, force: true }));
  const placement = await placementOf(plan.placement, cores);
  // With SERVERS > 1 each mode is measured twice: one server as usual, for contrast, and the replicas behind HAProxy.
  const placements = [{ placement, where: placement.link ? `link-${placement.link.spec.name}` : placement.target, via: null }];
  if (job.SERVERS > 1) {
    placements.push({ placement: replicasPlacement(job.SERVERS), where: `haproxy-${job.SERVERS}x${job.WORKERS}`, via: viaOf(job, cores) });
  }
  try {
    const linkCheck = await placement.check();
    if (linkCheck) console.error(`link check: ${describeCheck(linkCheck)}`);
    const nodes = serverNodes(job);
    if (nodes.length) console.error(`server Node releases: ${nodes.map((n) => `${n.release} → ${n.version} (${n.path})`).join(', ')}`);
    const columns = columnsOf(job, nodes);
    const { scenarios } = plan;
    const progress = progressOf(scenarios.length * job.REPEATS * columns.length * placements.length);
    const reports = [];
    const owns = new Map(); // each own service's run, for the decomposition pass after the scenarios
    for (const { scenario, source } of scenarios) {
      const own = source ? await prepareOwn(source, scratch, scenario) : null;
      owns.set(scenario, own);
      if (own) await proveOwnEquality(own, { modes: job.MODES, workers: job.WORKERS, cpus: cores.serverCpus }, placement);
      const runs = placements.map(() => Object.fromEntries(columns.map(({ key }) => [key, []])));
      // Columns (and placements) interleaved (A B A B ...), so a drift of the machine over time touches all alike.
      for (let repeat = 1; repeat <= job.REPEATS; repeat++) {
        // The client's ceiling beside each run: measured right before the first run of its mode and compression in this
        // repeat, so that the share reads the machine as it was then (issue 38: one calibration before all the runs was
        // read above 1 when the machine sped up meanwhile).
        const ceilings = new Map();
        for (const [p, { placement: where, where: name, via }] of placements.entries()) {
          for (const { key, mode, compression, node, prefix } of columns) {
            const label = `${prefix}-${name}-${scenario}-${stamp}-r${repeat}`;
            if (!ceilings.has(`${mode}+${compression}`)) {
              ceilings.set(`${mode}+${compression}`, await measureClientCeiling({ key, mode, scenario, compression, own }, plan.ceiling, cores, scratch));
            }
            progress.next(`${scenario} · ${key}${via ? ` · ${via.title}` : ''} · run ${repeat} of ${job.REPEATS}`);
            const clientCeiling = ceilings.get(`${mode}+${compression}`);
            runs[p][key].push(await measureCell({ mode, scenario, label, compression, node, clientCeiling, own }, plan.cell, cores, scratch, where, linkCheck));
          }
        }
      }
      for (const [p, { placement: where, via }] of placements.entries()) {
        const columnsOfRuns = () => Object.entries(runs[p]).map(([key, figures]) => ({ key, runs: figures }));
        // wrk and h2load load unary calls only: a stream's columns get no capacity pass (the report says why).
        const bound = own?.stream ? [] : autoCapacity(job, buildReport(columnsOfRuns()));
        for (const column of bound.length ? columns : []) {
          console.error(`capacity pass (CAPACITY=auto: k6 was client-bound, by its ceiling or its CPU, for ${bound.join(', ')}) · ${scenario} · ${column.key}`
            + `${via ? ` · ${via.title}` : ''}`);
          const capacity = await measureColumnCapacity({ ...column, scenario, own }, plan.cell, cores, where);
          const figures = runs[p][column.key];
          figures[figures.length - 1] = await readSummary(await withCapacity(figures.at(-1).file, { ...capacity, client_bound: bound }));
        }
        reports.push(buildReport(columnsOfRuns(), { via }));
      }
    }
    const decompositions = [];
    if (plan.decomposition) {
      const { durationS, warmupS } = plan.decomposition;
      for (const { scenario } of scenarios) {
        const runs = await measureDecomposition({ scenario, plan: plan.decomposition, cores, durationS, warmupS, own: owns.get(scenario) });
        decompositions.push(decompositionReport(scenario, runs));
      }
    }
    for (const report of reports) process.stdout.write(`\n${renderMarkdown(report)}`);
    for (const decomposition of decompositions) process.stdout.write(`\n${renderDecomposition(decomposition)}`);
    const paths = await writeReports(reports, job.RESULTS_DIR, { decompositions });
    process.stdout.write(`\nwritten: ${[paths.markdown, paths.json, ...paths.charts].join(', ')}\n`);
  } finally {
    await placement.close();
    await rm(scratch, { recursive: true, force: true });
    forgetScratch();
  }
}

/** @typedef {import('../passes/cell.js').ServerNode} ServerNode */

/**
 * Whether CAPACITY=auto runs the capacity pass after a scenario's k6 runs: when k6 was client-bound in any of its columns,
 * by either sign: the share of its ceiling, or k6's CPU at 90% of its core where the share says not (a column near the
 * ceiling's threshold with k6 at its limit: the servers' ceilings then settle it). CAPACITY=1 runs it after every k6 run
 * instead, in the cell; CAPACITY=0 never.
 * @param {{CAPACITY: '0'|'1'|'auto'}} job
 * @param {{client_bound: string[], modes: Record<string, {client_bound_cpu?: boolean}>}} report the scenario's report from
 *   its k6 runs (buildReport)
 * @returns {string[]} the columns that call for it, client-bound by the ceiling or by CPU; [] when it does not run
 */
export function autoCapacity(job, report) {
  if (job.CAPACITY !== 'auto') return [];
  const byCpu = Object.entries(report.modes ?? {}).filter(([, m]) => m.client_bound_cpu).map(([key]) => key);
  return [...new Set([...report.client_bound, ...byCpu])];
}

/**
 * The Node releases NODE_VERSIONS lists, each provisioned (scripts/ensure-tool.sh node VERSION: found in
 * .tools/node-VERSION or installed from the npm registry) and its exact version read from the binary.
 * @param {{NODE_VERSIONS: string[]}} job
 * @returns {ServerNode[]} in the order listed; [] without NODE_VERSIONS
 * @throws {BenchError} naming the release that cannot be had, does not run, or is another release than asked for
 */
export function serverNodes(job) {
  return job.NODE_VERSIONS.map((release) => {
    const why = `NODE_VERSIONS: node ${release}`;
    let bin;
    try {
      bin = ensureTool('node', release);
    } catch (err) {
      throw new BenchError(`${why}: ${err.message}`);
    }
    let version;
    try {
      version = execFileSync(bin, ['--version'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();
    } catch (err) {
      throw new BenchError(`${why}: ${bin} --version failed: ${String(err.stderr || err.message).trim().split('\n')[0]}`);
    }
    if (version !== `v${release}` && !version.startsWith(`v${release}.`)) {
      throw new BenchError(`${why}: ${bin} is ${version}, not a ${release} release`);
    }
    return { release, path: bin, version };
  });
}

/**
 * The measured columns of each scenario, in report order: every mode raw, then with COMPRESSION=gzip every
 * mode again with gzipped responses; with NODE_VERSIONS each of these once per release, side by side
 * (`http@node20`, `http@node24.21.0`, `grpc@node20`, …).
 * @param {{MODES: string[], COMPRESSION: 'off'|'gzip'}} job
 * @param {ServerNode[]} [nodes] serverNodes(job); [] (default): the server runs on the job's own Node
 * @returns {Array<{key: string, mode: string, compression: 'off'|'gzip', node: ServerNode|null, prefix: string}>} key: the
 *   report's (bench/modes.js columnKey); node: the release its server runs on (null: the job's own); prefix: how its
 *   files are named (`http`, `http-gzip`, `http-node20`, `http-node20-gzip`)
 */
export function columnsOf(job, nodes = []) {
  const compressions = job.COMPRESSION === 'gzip' ? ['off', 'gzip'] : ['off'];
  const releases = nodes.length ? nodes : [null];
  return compressions.flatMap((compression) => job.MODES.flatMap((mode) => releases.map((node) => ({
    key: columnKey(mode, compression, node?.release), mode, compression: /** @type {'off'|'gzip'} */ (compression), node,
    prefix: [mode, node && `node${node.release}`, compression !== 'off' && compression].filter(Boolean).join('-'),
  }))));
}

/**
 * How the replicas ran, for the report's title and notes.
 * @param {{SERVERS: number, WORKERS: number}} job
 * @param {{serverCoreCount: number}} cores
 * @returns {{title: string, replicas: number, workers: number, balancer: string, shared_cores: boolean, note: string}}
 */
function viaOf(job, cores) {
  const processes = job.SERVERS * job.WORKERS + 1;
  const shared = cores.serverCoreCount < processes;
  return {
    title: `through HAProxy to ${job.SERVERS} replicas × ${job.WORKERS} worker(s)`,
    replicas: job.SERVERS,
    workers: job.WORKERS,
    balancer: 'HAProxy',
    shared_cores: shared,
    note: shared
      ? `the ${job.SERVERS} replicas (${job.SERVERS * job.WORKERS} workers) and HAProxy share ${cores.serverCoreCount} core(s) `
        + 'here, so their RPS is not what replicas on hosts of their own would serve: read the shares and the balancer\'s CPU per request, not the throughput'
      : `the ${job.SERVERS} replicas and HAProxy run on ${cores.serverCoreCount} cores, at least one per process`,
  };
}

/** One line on the measured link, for progress. */
function describeCheck(check) {
  const parts = [`RTT ${check.rtt.min_ms.toFixed(2)} ms (min)`];
  for (const way of ['down', 'up']) if (check[way]) parts.push(`${way} ${formatRate(check[way].link_bps)}`);
  return [parts.join(', '), ...check.warnings.map((w) => `WARNING: ${w}`)].join('; ');
}

