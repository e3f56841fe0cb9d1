// The main job (bash bench.sh): for each scenario, each mode in turn and
// REPEATS times interleaved, the server is started natively (on loopback, or
// behind an emulated link: bench/placement/placement.js), warmed up, and measured by k6;
// then one side-by-side table per scenario.
import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { BenchError } from '../errors.js';
import { ROOT, runK6 } from '../processes.js';
import { buildReport, renderMarkdown, writeReports } from '../report/report.js';
import { allowedCpus, splitCores } from '../settings/cores.js';
import { durationMs } from '../settings/validators.js';
import { measureCapacity, requireCapacityTools } from '../passes/capacity.js';
import { decompositionReport, renderDecomposition } from '../report/decomposition.js';
import { DECOMPOSITION, measureDecomposition } from '../passes/decompose.js';
import { requireCaptureTools, startCapture } from '../passes/wire.js';
import { figuresOf, readSummary } from '../report/summary.js';
import { executionSegments, mergeFiles, sampleOutputArgs } from '../passes/k6-split.js';
import { combineWindows, serverWindow } from '../report/server-stats.js';
import { scrapeServer } from '../passes/scrape.js';
import { requireLinkTools } from '../placement/link.js';
import { formatRate } from '../settings/network.js';
import { placementOf } from '../placement/placement.js';
import { replicasPlacement, requireBalancer, slotName } from '../placement/replicas.js';
import { startProfiles, stopProfiles } from '../passes/profile.js';
import { PROFILE_INTERVAL_US } from '../../server/profiling.js';
import { columnKey, MODES } from '../modes.js';
import { k6Args } from '../invoke.js';
import { provenanceOf } from '../provenance.js';
import { fileStamp, k6Reason } from '../format.js';
import { ensureTool } from '../tools.js';

/** Why k6 failed, with its last lines and where the whole log is. */
const k6Failure = (output, log) => {
  const reason = k6Reason(output);
  const tail = output.trimEnd().split('\n').slice(-12).join('\n');
  return `${reason ? `${reason}\n` : ''}last lines of k6's output (all of it in ${log}):\n${tail}`;
};

const isZero = (duration) => /^(0+(\.0+)?(ms|s|m|h))+$/.test(duration);

/**
 * One measured cell: server up (where the placement puts it), warm-up, measured run, server
 * down. Records the k6 CPU use, the core split, the server's own accounting of the measured run
 * (its admin endpoint read right before and right after it) and, over a link, the link's
 * byte and packet counters of the run, in the summary's `bench.run`.
 * @param {{mode: string, scenario: string, label: string, compression?: 'off'|'gzip', node?: ServerNode|null}} cell label
 *   names the files; compression: the server's COMPRESSION and what k6 asks for (default off); node: the Node release the
 *   server runs on (default null: the job's own)
 * @param {import('../settings/bench.js').BenchSettings} settings
 * @param {ReturnType<typeof splitCores>} cores
 * @param {string} scratch folder for throw-away files
 * @param {import('../placement/placement.js').Placement} placement
 * @param {object|null} linkCheck the link as measured before the runs
 * @returns {Promise<string>} path of the measured run's summary
 * @throws {BenchError} when the server does not start, its accounting cannot be read or names another Node release
 *   than it was started with, or k6 fails
 */
async function measure({ mode, scenario, label, compression = 'off', node = null }, settings, cores, scratch, placement, linkCheck) {
  const cell = await placement.start(mode, { workers: settings.WORKERS, cpus: cores.serverCpus, compression, node: node?.path });
  const { host } = cell;
  // Replicas behind a balancer have an admin endpoint each; their windows are combined.
  const admins = cell.replicas ? cell.replicas.map((r) => r.admin) : cell.admin ? [cell.admin] : [];
  const k6 = { k6: settings.K6_BIN, cpus: cores.k6Cpus, coreCount: cores.k6CoreCount };
  /** k6's arguments for a run of the cell (the open model, RATE, for the measured run only). */
  const argsOf = ({ duration, rate = null, summaryFile, flags = [] }) => k6Args(mode, {
    target: placement.target, host, vus: settings.VUS, duration, rate, summaryFile, flags,
    vars: { SCENARIO: scenario, CONNECTIONS: settings.CONNECTIONS, REQUEST_TIMEOUT: settings.REQUEST_TIMEOUT, COMPRESSION: compression },
  });
  const { link } = placement;
  try {
    // k6's own output goes to a log per run; on the terminal only with VERBOSE=1, or its end when it fails.
    const log = path.join(settings.RESULTS_DIR, `k6-${label}.log`);
    const verbose = (line) => { if (settings.VERBOSE) console.error(line); };
    if (!isZero(settings.WARMUP)) {
      verbose(`${label}: warm-up, ${settings.WARMUP} at ${settings.VUS} VUs (left out of the figures)`);
      const warm = await runK6({ ...k6, quiet: !settings.VERBOSE,
        args: argsOf({ duration: settings.WARMUP, summaryFile: path.join(scratch, `${label}-warmup.json`) }) });
      await writeFile(log, `--- warm-up\n${warm.output}`);
      if (warm.code !== 0) throw new BenchError(`k6 warm-up against ${host} failed (exit ${warm.code}):\n${k6Failure(warm.output, log)}`);
    }
    const summaryFile = path.join(settings.RESULTS_DIR, `k6-${label}.json`);
    verbose(`${label}: measuring, ${settings.DURATION} at ${settings.RATE ? `${settings.RATE} req/s (open model)` : `${settings.VUS} VUs`}`);
    const capture = settings.VERIFY_BYTES ? await startCapture(cell.port, cell.capture) : null;
    let run;
    let accounting;
    let wire;
    let linkRun;
    let windows = [];
    let balancerRun;
    let profile;
    try {
      // Read right before and right after the run, so the warm-up is left out of the server's figures.
      const before = await Promise.all(admins.map((a) => scrapeServer(a)));
      if (settings.PROFILE) await startProfiles(admins);
      const balancerBefore = cell.balancer && { cpu_s: cell.balancer.cpuSeconds(), requests: await cell.balancer.requests() };
      const linkBefore = link && { counters: link.counters(), proxyCpu: link.proxyCpuSeconds() };
      run = await measuredRun({ settings, cores, scratch, label, summaryFile, env: dashboardEnv(settings, label),
        argsOf: (file, flags) => argsOf({ duration: settings.DURATION, rate: settings.RATE, summaryFile: file, flags }) });
      if (link) {
        const after = link.counters();
        const delta = (way) => ({ bytes: after[way].bytes - linkBefore.counters[way].bytes, packets: after[way].packets - linkBefore.counters[way].packets });
        linkRun = { up: delta('up'), down: delta('down'), proxy_cpu_s: link.proxyCpuSeconds() - linkBefore.proxyCpu };
      }
      const after = await Promise.all(admins.map((a) => scrapeServer(a)));
      if (settings.PROFILE) profile = await stopProfiles(admins, path.join(settings.RESULTS_DIR, `profile-${label}`), PROFILE_INTERVAL_US);
      windows = before.map((b, i) => serverWindow(b, after[i]));
      accounting = windows.length ? combineWindows(windows) : undefined;
      // The server's own word on its release, so that no column stands for a release it did not run on.
      const started = node?.version ?? process.version;
      if (cell.env && accounting?.node && accounting.node !== started) {
        throw new BenchError(`the ${mode} server reported Node ${accounting.node}, not the ${started} it was started with`);
      }
      if (cell.balancer) balancerRun = balancerRecord(cell.balancer, balancerBefore, await cell.balancer.requests());
    } finally {
      wire = await capture?.stop();
    }
    await writeFile(log, `--- measured run\n${run.output}`, { flag: 'a' });
    if (run.code !== 0) throw new BenchError(`k6 run against ${host} failed (exit ${run.code}):\n${k6Failure(run.output, log)}`);
    const capacity = settings.CAPACITY ? await measureCapacity({
      listener: MODES[mode].listener, scenario, host, connections: settings.VUS, durationS: durationMs(settings.DURATION) / 1000, cpus: cores.k6Cpus,
      compression,
    }) : undefined;
    const summary = run.summary ?? JSON.parse(await readFile(summaryFile, 'utf8'));
    const servers = cell.replicas
      ? `${cell.replicas.length} server replicas × ${settings.WORKERS} worker(s) and HAProxy, all on cpu ${cores.serverCpus ?? 'any'}`
      : `${settings.WORKERS} server worker(s)`;
    const pinning = placement.target === 'local' || link
      ? `${cores.description}; ${servers}; warm-up ${settings.WARMUP} left out`
      : `k6 pinned to cpu ${cores.k6Cpus ?? 'any'}; the server on another machine; warm-up ${settings.WARMUP} left out`;
    summary.bench.run = {
      provenance: provenanceOf({ settings, pinning, serverEnv: cell.env, node: node?.version }),
      // What the job started the server with (null: a server it did not start); bench.run.server.node is what the server said.
      node: cell.env ? { release: node?.release ?? null, version: node?.version ?? process.version, path: node?.path ?? process.execPath } : null,
      k6_cpu: run.cpu,
      k6_instances: run.instances,
      pinning,
      workers: settings.WORKERS,
      server_cores: placement.target === 'local' || link ? cores.serverCoreCount : null,
      warmup: settings.WARMUP,
      dashboard: run.instances ? run.instances.map((i) => i.dashboard) : path.join(settings.RESULTS_DIR, `dashboard-${label}.html`),
      capacity,
      wire,
      server: accounting,
      link: linkRecord(settings, placement, linkCheck, linkRun),
      replicas: cell.replicas?.map((r, i) => ({
        ...r,
        requests: windows[i]?.workers.reduce((a, w) => a + w.requests, 0) ?? null,
        balancer_requests: balancerRun?.requests[slotName(i)] ?? null, // HAProxy's own count of what it sent there
      })),
      balancer: balancerRun,
      profile,
    };
    await writeFile(summaryFile, JSON.stringify(summary, null, 2));
    return summaryFile;
  } finally {
    await cell.stop();
  }
}

/** k6's web dashboard, exported as one HTML file per run (no HTTP endpoint: works offline). */
function dashboardEnv(settings, label) {
  return {
    K6_WEB_DASHBOARD: 'true',
    K6_WEB_DASHBOARD_PORT: '-1',
    K6_WEB_DASHBOARD_EXPORT: path.join(settings.RESULTS_DIR, `dashboard-${label}.html`),
    // The export is skipped when a run holds fewer than two periods: 1 s, or a quarter of a shorter run.
    K6_WEB_DASHBOARD_PERIOD: `${Math.max(100, Math.min(1000, Math.floor(durationMs(settings.DURATION) / 4)))}ms`,
  };
}

/**
 * The measured k6 run: one k6 process, or K6_INSTANCES of them, each running one execution
 * segment on its own core (where there are enough) and writing its samples, merged into one
 * summary (bench/passes/k6-split.js). Each instance's own summary is kept beside the merged one.
 * @param {{settings: import('../settings/bench.js').BenchSettings, cores: ReturnType<typeof splitCores>, scratch: string,
 *   label: string, summaryFile: string, argsOf: (summaryFile: string, flags: string[]) => string[], env: Record<string, string>}} run
 *   argsOf: k6's arguments of a run that writes its summary to the file, with k6 options put first
 * @returns {Promise<{code: number|null, output: string, cpu: object|null, summary?: object, instances?: object[]}>}
 *   cpu: the instances' together (seconds summed, over k6's cores); summary: the merged one (split runs only), also
 *   written to summaryFile; instances: per instance, its segment, cpus, summary file and figures
 * @throws {BenchError} when the instances' results cannot be merged
 */
async function measuredRun({ settings, cores, scratch, label, summaryFile, argsOf, env }) {
  const k6 = { k6: settings.K6_BIN, quiet: !settings.VERBOSE };
  if (settings.K6_INSTANCES === 1) {
    return runK6({ ...k6, cpus: cores.k6Cpus, coreCount: cores.k6CoreCount, env, args: argsOf(summaryFile, []) });
  }
  const segments = executionSegments(settings.K6_INSTANCES);
  const parts = segments.map(({ segment, sequence }, i) => {
    const name = `${label}-i${i + 1}`;
    return {
      segment, cpus: cores.k6InstanceCpus[i] ?? null,
      summaryFile: path.join(settings.RESULTS_DIR, `k6-${name}.json`),
      csv: path.join(scratch, `${name}.csv`),
      dashboard: path.join(settings.RESULTS_DIR, `dashboard-${name}.html`),
      args: ['--execution-segment', segment, '--execution-segment-sequence', sequence],
    };
  });
  const runs = await Promise.all(parts.map((part) => runK6({
    ...k6, cpus: part.cpus ?? undefined, coreCount: 1,
    env: { ...env, K6_WEB_DASHBOARD_EXPORT: part.dashboard },
    args: argsOf(part.summaryFile, [...part.args, ...sampleOutputArgs(part.csv)]),
  })));
  const output = runs.map((r, i) => `--- k6 instance ${i + 1} of ${runs.length} (${parts[i].segment})\n${r.output}`).join('\n');
  const failed = runs.findIndex((r) => r.code !== 0);
  if (failed >= 0) return { code: runs[failed].code, output, cpu: null };
  let instances;
  let summary;
  try {
    ({ instances, merged: summary } = await mergeFiles(parts.map((part) => ({ summary: part.summaryFile, samples: part.csv }))));
  } catch (err) {
    throw new BenchError(`the ${parts.length} k6 instances' results cannot be merged: ${err.message}`);
  } finally {
    await Promise.all(parts.map((part) => rm(part.csv, { force: true })));
  }
  const cpus = runs.map((r) => r.cpu);
  const cpu = cpus.every(Boolean) ? {
    seconds: cpus.reduce((a, c) => a + c.seconds, 0),
    wall_s: Math.max(...cpus.map((c) => c.wall_s)),
    utilization: cpus.reduce((a, c) => a + c.seconds, 0) / (Math.max(...cpus.map((c) => c.wall_s)) * cores.k6CoreCount),
  } : null;
  const described = parts.map((part, i) => {
    const figures = figuresOf(part.summaryFile, instances[i].summary);
    return {
      segment: part.segment, cpus: part.cpus, summary: part.summaryFile, dashboard: part.dashboard,
      requests: figures.requests, rps: figures.rps, failed: figures.failed, latency_ms: figures.latency_ms,
      // Its share of the run's one core, or of its own core.
      k6_cpu: cpus[i] && { ...cpus[i], utilization: cpus[i].seconds / cpus[i].wall_s },
    };
  });
  // Each instance's file says it is a part, so that no reader takes it for the whole run.
  for (const [i, part] of parts.entries()) {
    const own = instances[i].summary;
    own.bench = { ...own.bench, instance: { index: i + 1, of: parts.length, segment: part.segment, merged_into: summaryFile } };
    await writeFile(part.summaryFile, JSON.stringify(own, null, 2));
  }
  await writeFile(summaryFile, JSON.stringify(summary, null, 2));
  return { code: 0, output, cpu, summary, instances: described };
}

/** What a summary records of the balancer over the run: its CPU and its own count of requests per replica. */
function balancerRecord(balancer, before, requests) {
  return {
    name: 'HAProxy', version: balancer.version, cpu_s: balancer.cpuSeconds() - before.cpu_s,
    requests: Object.fromEntries(Object.entries(requests).map(([name, n]) => [name, n - (before.requests[name] ?? 0)])),
  };
}

/** What a summary records of the link it ran over (undefined on loopback). */
function linkRecord(settings, placement, check, counters) {
  if (!placement.link && placement.target === 'local') return undefined;
  const { link } = placement;
  return {
    name: link ? link.spec.name : 'remote',
    configured: link ? { down_bps: link.spec.down, up_bps: link.spec.up, rtt_ms: link.spec.rttMs } : null,
    shapers: link?.shapers ?? null,
    limits: link?.limits ?? [],
    measured: check,
    counters: counters ?? null,
  };
}

/**
 * What the job needs before it starts, checked at once: the tools of the passes asked for, and root for a link.
 * @param {import('../settings/bench.js').BenchSettings} settings
 * @returns {Promise<void>}
 * @throws {BenchError} naming what is missing and what installs it
 */
export async function preflight(settings) {
  serverNodes(settings); // every release of NODE_VERSIONS, before anything starts
  if (settings.CAPACITY) await requireCapacityTools(settings.MODES.map((mode) => MODES[mode].listener));
  if (settings.DECOMPOSE) await requireCapacityTools(DECOMPOSITION);
  if (settings.VERIFY_BYTES) await requireCaptureTools();
  if (settings.link) requireLinkTools(); // root and ip netns, before anything starts
  if (settings.SERVERS > 1) await requireBalancer();
  if (settings.PROFILE && settings.TARGET === 'remote' && !settings.REMOTE_ADMIN_HOST) {
    throw new BenchError('PROFILE=1 profiles the server through its admin endpoint: set REMOTE_ADMIN_HOST to the remote server\'s');
  }
}

/**
 * Runs the main job (bench/cli.js run) and prints the tables; writes the summaries, logs and reports in RESULTS_DIR.
 * @param {import('../settings/bench.js').BenchSettings} settings checked by bench/cli.js, K6_BIN provisioned
 * @returns {Promise<void>}
 * @throws {BenchError} when a server does not start, k6 fails or a link cannot be built
 */
export async function main(settings) {
  process.chdir(ROOT); // k6 and the report resolve results/ and the scripts from here
  await mkdir(settings.RESULTS_DIR, { recursive: true });
  const cores = splitCores(allowedCpus(), settings.K6_INSTANCES);
  const stamp = fileStamp();
  const scratch = await mkdtemp(path.join(os.tmpdir(), 'bench-'));
  const placement = await placementOf(settings, cores);
  // With SERVERS > 1 each mode is measured twice: one server as usual, for contrast, and the replicas behind HAProxy.
  const placements = [{ placement, where: placement.link ? `link-${placement.link.spec.name}` : placement.target, via: null }];
  if (settings.SERVERS > 1) {
    placements.push({ placement: replicasPlacement(settings), where: `haproxy-${settings.SERVERS}x${settings.WORKERS}`, via: viaOf(settings, cores) });
  }
  try {
    const linkCheck = await placement.check();
    if (linkCheck) console.error(`link check: ${describeCheck(linkCheck)}`);
    const nodes = serverNodes(settings);
    if (nodes.length) console.error(`server Node releases: ${nodes.map((n) => `${n.release} → ${n.version} (${n.path})`).join(', ')}`);
    const columns = columnsOf(settings, nodes);
    const progress = progressOf(settings.SCENARIO.length * settings.REPEATS * columns.length * placements.length);
    const reports = [];
    for (const scenario of settings.SCENARIO) {
      const runs = placements.map(() => Object.fromEntries(columns.map(({ key }) => [key, []])));
      // Columns (and placements) interleaved (A B A B ...), so a drift of the machine over time touches all alike.
      for (let repeat = 1; repeat <= settings.REPEATS; repeat++) {
        for (const [p, { placement: where, where: name, via }] of placements.entries()) {
          for (const { key, mode, compression, node, prefix } of columns) {
            const label = `${prefix}-${name}-${scenario}-${stamp}-r${repeat}`;
            progress.next(`${scenario} · ${key}${via ? ` · ${via.title}` : ''} · run ${repeat} of ${settings.REPEATS}`);
            runs[p][key].push(await readSummary(await measure({ mode, scenario, label, compression, node }, settings, cores, scratch, where, linkCheck)));
          }
        }
      }
      for (const [p, { via }] of placements.entries()) {
        reports.push(buildReport(Object.entries(runs[p]).map(([key, figures]) => ({ key, runs: figures })), { via }));
      }
    }
    const decompositions = [];
    if (settings.DECOMPOSE) {
      for (const scenario of settings.SCENARIO) {
        const runs = await measureDecomposition({
          scenario, settings, cores, durationS: durationMs(settings.DURATION) / 1000, warmupS: durationMs(settings.WARMUP) / 1000,
        });
        decompositions.push(decompositionReport(scenario, runs));
      }
    }
    for (const report of reports) process.stdout.write(`\n${renderMarkdown(report)}`);
    for (const decomposition of decompositions) process.stdout.write(`\n${renderDecomposition(decomposition)}`);
    const paths = await writeReports(reports, settings.RESULTS_DIR, { decompositions });
    process.stdout.write(`\nwritten: ${[paths.markdown, paths.json, ...paths.charts].join(', ')}\n`);
  } finally {
    await placement.close();
    await rm(scratch, { recursive: true, force: true });
  }
}

/**
 * @typedef {object} ServerNode a Node release of NODE_VERSIONS, ready to run the server
 * @property {string} release as listed, e.g. '20'
 * @property {string} path its node binary
 * @property {string} version what `node --version` says, e.g. 'v20.19.5'
 */

/**
 * The Node releases NODE_VERSIONS lists, each provisioned (scripts/ensure-tool.sh node VERSION: found in
 * .tools/node-VERSION or installed from the npm registry) and its exact version read from the binary.
 * @param {import('../settings/bench.js').BenchSettings} settings
 * @returns {ServerNode[]} in the order listed; [] without NODE_VERSIONS
 * @throws {BenchError} naming the release that cannot be had, does not run, or is another release than asked for
 */
export function serverNodes(settings) {
  return settings.NODE_VERSIONS.map((release) => {
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
 * @param {import('../settings/bench.js').BenchSettings} settings
 * @param {ServerNode[]} [nodes] serverNodes(settings); [] (default): the server runs on the job's own Node
 * @returns {Array<{key: string, mode: string, compression: 'off'|'gzip', node: ServerNode|null, prefix: string}>} key: the
 *   report's (bench/modes.js columnKey); node: the release its server runs on (null: the job's own); prefix: how its
 *   files are named (`http`, `http-gzip`, `http-node20`, `http-node20-gzip`)
 */
export function columnsOf(settings, nodes = []) {
  const compressions = settings.COMPRESSION === 'gzip' ? ['off', 'gzip'] : ['off'];
  const releases = nodes.length ? nodes : [null];
  return compressions.flatMap((compression) => settings.MODES.flatMap((mode) => releases.map((node) => ({
    key: columnKey(mode, compression, node?.release), mode, compression: /** @type {'off'|'gzip'} */ (compression), node,
    prefix: [mode, node && `node${node.release}`, compression !== 'off' && compression].filter(Boolean).join('-'),
  }))));
}

/**
 * How the replicas ran, for the report's title and notes.
 * @returns {{title: string, replicas: number, workers: number, balancer: string, shared_cores: boolean, note: string}}
 */
function viaOf(settings, cores) {
  const processes = settings.SERVERS * settings.WORKERS + 1;
  const shared = cores.serverCoreCount < processes;
  return {
    title: `through HAProxy to ${settings.SERVERS} replicas × ${settings.WORKERS} worker(s)`,
    replicas: settings.SERVERS,
    workers: settings.WORKERS,
    balancer: 'HAProxy',
    shared_cores: shared,
    note: shared
      ? `the ${settings.SERVERS} replicas (${settings.SERVERS * settings.WORKERS} workers) and HAProxy share ${cores.serverCoreCount} core(s) `
        + 'here, so their RPS is not what replicas on hosts of their own would serve: read the shares and the balancer\'s CPU per request, not the throughput'
      : `the ${settings.SERVERS} replicas and HAProxy run on ${cores.serverCoreCount} cores, at least one per process`,
  };
}

const clock = (ms) => { const s = Math.round(ms / 1000); return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`; };

/**
 * One progress line per measured run on stderr: `[3/6] user · http · run 2 of 3 · 0m41s elapsed · about 0m40s left`.
 * @param {number} total runs in the job
 * @returns {{next: (what: string) => void}}
 */
function progressOf(total) {
  const start = Date.now();
  let done = 0;
  return {
    next(what) {
      const elapsed = Date.now() - start;
      const left = done > 0 ? ` · about ${clock((elapsed / done) * (total - done))} left` : '';
      done++;
      console.error(`[${done}/${total}] ${what} · ${clock(elapsed)} elapsed${left}`);
    },
  };
}

/** One line on the measured link, for progress. */
function describeCheck(check) {
  const parts = [`RTT ${check.rtt.min_ms.toFixed(2)} ms (min)`];
  for (const way of ['down', 'up']) if (check[way]) parts.push(`${way} ${formatRate(check[way].link_bps)}`);
  return [parts.join(', '), ...check.warnings.map((w) => `WARNING: ${w}`)].join('; ');
}

