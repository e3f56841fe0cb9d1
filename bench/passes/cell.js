// One measured cell of the main job (bench/commands/run.js): the server started where the placement puts it,
// warmed up and measured by k6 (one process, or K6_INSTANCES merged), with what is read around the measured run:
// the server's own accounting, the machine's noise, profiles, the link's and the balancer's counters, capacity and wire bytes. Its
// figures go into the k6 summary's `bench.run`; it renders nothing.
import { readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { BenchError } from '../errors.js';
import { clockTicks } from '../processes.js';
import { runK6 } from '../k6/runner.js';
import { beforeAfter, serverRun } from './lifecycle.js';
import { measureCapacity } from './capacity.js';
import { startCapture } from './wire.js';
import { figuresOf, readSummary } from '../records/summary.js';
import { executionSegments, mergeFiles, sampleOutputArgs } from '../k6/split.js';
import { combineWindows, serverWindow } from '../records/server-stats.js';
import { scrapeServer } from './scrape.js';
import { coreSides, readMachine } from './machine-noise.js';
import { machineWindow } from '../records/machine-noise.js';
import { slotName } from '../placement/replicas.js';
import { startProfiles, stopProfiles } from './profile.js';
import { PROFILE_INTERVAL_US } from '../../server/profiling.js';
import { MODES } from '../modes.js';
import { scenarioVars } from '../own-service.js';
import { k6Args, k6Tls } from '../k6/command.js';
import { round } from '../format.js';
import { writeRunRecord } from '../records/run-record.js';
import { instanceHeader, k6Interrupted, k6Reason } from '../k6/output.js';
import { DEFAULT_REQUEST_TIMEOUT } from '../../k6/settings.js';

/**
 * @typedef {object} ServerNode a Node release of NODE_VERSIONS, ready to run the server
 * @property {string} release as listed, e.g. '20'
 * @property {string} path its node binary
 * @property {string} version what `node --version` says, e.g. 'v20.19.5'
 */

/** Why k6 failed, with its last lines and where the whole log is. */
const k6Failure = (output, log) => {
  const reason = k6Reason(output);
  const tail = output.trimEnd().split('\n').slice(-12).join('\n');
  return `${reason ? `${reason}\n` : ''}last lines of k6's output (all of it in ${log}):\n${tail}`;
};

/** REQUEST_TIMEOUT for k6, left out at k6's own default: the scripts then pass no params (k6/common.js). */
const timeoutVar = ({ REQUEST_TIMEOUT }) => (REQUEST_TIMEOUT === DEFAULT_REQUEST_TIMEOUT ? {} : { REQUEST_TIMEOUT });

const isZero = (duration) => /^(0+(\.0+)?(ms|s|m|h))+$/.test(duration);

/**
 * One measured cell, one server run (bench/passes/lifecycle.js): the server started where the placement puts it, the
 * k6 warm-up, the measured k6 run with its samplers around it, the server stopped. Records the k6 CPU use, the core
 * split, the server's own accounting of the measured run (its admin endpoint read right before and right after it, so
 * the warm-up is left out), the machine's noise on the pinned cores over it (steal and other processes' CPU,
 * bench/records/machine-noise.js), the profiles (PROFILE=1), the captured wire bytes (VERIFY_BYTES=1) and, over a
 * link or through a balancer, their counters over the run, in the summary's `bench.run`.
 * @param {{mode: string, scenario: string, label: string, compression?: 'off'|'gzip',
 *   node?: ServerNode|null, clientCeiling?: import('./calibrate.js').ClientCeiling|null,
 *   own?: import('../own-service.js').OwnRun|null}} cell own: the scenario is an own service (its server settings, k6's
 *   variables, and its record in the summary, `bench.run.own`); label
 *   names the files; clientCeiling: the column's, recorded in the summary; compression: the server's COMPRESSION and what k6 asks for (default off); node: the Node release the
 *   server runs on (default null: the job's own)
 * @param {import('../plans.js').CellPlan} plan
 * @param {ReturnType<typeof import('../settings/cores.js').splitCores>} cores
 * @param {string} scratch folder for throw-away files
 * @param {import('../placement/placement.js').Placement} placement
 * @param {object|null} linkCheck the link as measured before the runs
 * @returns {Promise<import('../records/summary.js').ModeFigures>} the measured run's figures, read back from its summary as
 *   written (bench/records/summary.js readSummary; its path is `file`)
 * @throws {BenchError} when the server does not start, its accounting cannot be read or names another Node release
 *   than it was started with, or k6 fails
 */
export async function measureCell({ mode, scenario, label, compression = 'off', node = null, clientCeiling = null, own = null }, plan, cores, scratch, placement, linkCheck) {
  const { link } = placement;
  const samplers = cellSamplers(plan, { label, link, sides: coreSides(cores, placement) });
  const dashboard = dashboardEnv(plan, label);
  // k6's own output goes to a log per run; on the terminal only with VERBOSE=1, or its end when it fails.
  const log = path.join(plan.RESULTS_DIR, `k6-${label}.log`);
  const verbose = (line) => { if (plan.VERBOSE) console.error(line); };
  const summaryFile = path.join(plan.RESULTS_DIR, `k6-${label}.json`);
  /** k6's arguments for a run of the cell (the open model, RATE, for the measured run only; STREAMS's N for it, one a VU in the warm-up). */
  const argsOf = (cell, { duration, rate = null, summaryFile: file, flags = [], streams = null }) => k6Args(mode, {
    target: placement.target, host: cell.host, vus: plan.VUS, duration, rate, summaryFile: file, flags,
    vars: { ...scenarioVars(scenario, own), CONNECTIONS: plan.CONNECTIONS, COMPRESSION: compression, ...timeoutVar(plan), ...k6Tls(cell.tls).vars,
      ...(streams ? { STREAMS: streams, DURATION: duration, STREAM_INTERVAL: plan.STREAM_INTERVAL } : {}) },
  });
  let measuredAt = 0; // the client's ceiling beside it was taken this long before (before_run_s)
  return serverRun({
    start: () => placement.start(mode, { workers: plan.WORKERS, cpus: cores.serverCpus, compression, node: node?.path,
      settings: { ...own?.server, ...openStreamsServer(plan) } }),
    warmup: isZero(plan.WARMUP) ? undefined : async (cell) => {
      verbose(`${label}: warm-up, ${plan.WARMUP} at ${plan.VUS} VUs (left out of the figures)`);
      const warm = await runK6({ k6: plan.K6_BIN, cpus: cores.k6Cpus, coreCount: cores.k6CoreCount, quiet: !plan.VERBOSE,
        env: k6Tls(cell.tls).env,
        // STREAMS: one stream a VU, so that the RSS the measured run starts from is not already that of N streams.
        args: argsOf(cell, { duration: plan.WARMUP, summaryFile: path.join(scratch, `${label}-warmup.json`), streams: plan.STREAMS && plan.VUS }) });
      await writeFile(log, `--- warm-up\n${warm.output}`);
      if (warm.code !== 0) throw new BenchError(`k6 warm-up against ${cell.host} failed (exit ${warm.code}):\n${k6Failure(warm.output, log)}`);
    },
    samplers,
    measure: async (cell) => {
      verbose(`${label}: measuring, ${plan.DURATION} at ${plan.RATE ? `${plan.RATE} req/s (open model)` : `${plan.VUS} VUs`}`);
      measuredAt = Date.now();
      return measuredRun({
        plan, cores, scratch, label, summaryFile, env: { ...dashboard, ...k6Tls(cell.tls).env },
        argsOf: (file, flags) => argsOf(cell, { duration: plan.DURATION, rate: plan.RATE, summaryFile: file, flags, streams: plan.STREAMS }),
      });
    },
    after: async (cell, { run, readings }) => {
      await writeFile(log, `--- measured run\n${run.output}`, { flag: 'a' });
      if (run.code !== 0) throw new BenchError(`k6 run against ${cell.host} failed (exit ${run.code}):\n${k6Failure(run.output, log)}`);
      const windows = /** @type {object[]} */ (readings.accounting);
      const accounting = windows.length ? combineWindows(windows) : undefined;
      // The server's own word on its release, so that no column stands for a release it did not run on.
      const started = node?.version ?? process.version;
      if (cell.env && accounting?.node && accounting.node !== started) {
        throw new BenchError(`the ${mode} server reported Node ${accounting.node}, not the ${started} it was started with`);
      }
      // wrk and h2load load unary calls: a stream's cells get none.
      const capacity = plan.CAPACITY === '1' && !own?.stream ? await measureCapacity({
        listener: MODES[mode].listener, scenario, host: cell.host, connections: plan.VUS, durationS: plan.durationS, cpus: cores.k6Cpus,
        compression, tls: Boolean(cell.tls), own,
      }) : undefined;
      const summary = run.summary ?? JSON.parse(await readFile(summaryFile, 'utf8'));
      const servers = cell.replicas
        ? `${cell.replicas.length} server replicas × ${plan.WORKERS} worker(s) and HAProxy, all on cpu ${cores.serverCpus ?? 'any'}`
        : `${plan.WORKERS} server worker(s)`;
      const pinning = placement.target === 'local' || link
        ? `${cores.description}; ${servers}; warm-up ${plan.WARMUP} left out`
        : `k6 pinned to cpu ${cores.k6Cpus ?? 'any'}; the server on another machine; warm-up ${plan.WARMUP} left out`;
      const balancerRun = readings.balancer;
      return readSummary(await writeRunRecord(summaryFile, summary, {
        provenance: plan.provenance({ pinning, serverEnv: cell.env, node: node?.version }),
        // What the job started the server with (null: a server it did not start); bench.run.server.node is what the server said.
        node: cell.env ? { release: node?.release ?? null, version: node?.version ?? process.version, path: node?.path ?? process.execPath } : null,
        // When the measured run began: npm run compare pairs two columns' runs in this order, whatever its arguments'.
        measured_at: new Date(measuredAt).toISOString(),
        k6_cpu: run.cpu,
        k6_interrupted: k6Interrupted(run.output),
        client_ceiling: clientCeiling?.ended_at
          ? { ...clientCeiling, before_run_s: round((measuredAt - Date.parse(clientCeiling.ended_at)) / 1000, 1) } : clientCeiling,
        k6_instances: run.instances,
        pinning,
        workers: plan.WORKERS,
        server_cores: placement.target === 'local' || link ? cores.serverCoreCount : null,
        warmup: plan.WARMUP,
        dashboard: run.instances ? run.instances.map((i) => i.dashboard) : path.join(plan.RESULTS_DIR, `dashboard-${label}.html`),
        capacity,
        wire: readings.wire,
        server: accounting,
        machine: readings.machine,
        link: linkRecord(placement, linkCheck, readings.link),
        replicas: cell.replicas?.map((r, i) => ({
          ...r,
          requests: windows[i]?.workers.reduce((a, w) => a + w.requests, 0) ?? null,
          balancer_requests: balancerRun?.requests[slotName(i)] ?? null, // HAProxy's own count of what it sent there
        })),
        balancer: balancerRun,
        profile: readings.profile,
        own: own?.record,
        open_streams: plan.STREAMS ? { streams: plan.STREAMS, vus: plan.VUS, interval_ms: plan.STREAM_INTERVAL, held_s: plan.durationS } : undefined,
      }));
    },
  });
}

/**
 * What is read around a cell's measured run, in the order opened (bench/passes/lifecycle.js closes them in reverse):
 * the wire capture (VERIFY_BYTES=1) and the profiles (PROFILE=1) outermost, so that neither's start or stop falls in
 * the server's accounting; then the server's accounting (every admin endpoint: replicas behind a balancer have one
 * each), the balancer's and the link's counters, and /proc for the machine's noise, read last before the run and
 * first after it.
 * @param {import('../plans.js').CellPlan} plan
 * @param {{label: string, link: import('../placement/link.js').Link|null, sides: ReturnType<typeof coreSides>}} around
 * @returns {Array<import('./lifecycle.js').Sampler<import('../placement/placement.js').Cell>>}
 */
function cellSamplers(plan, { label, link, sides }) {
  const adminsOf = (cell) => (cell.replicas ? cell.replicas.map((r) => r.admin) : cell.admin ? [cell.admin] : []);
  return [
    plan.VERIFY_BYTES && { name: 'wire', open: async (cell) => { const capture = await startCapture(cell.port, cell.capture); return () => capture.stop(); } },
    plan.PROFILE && {
      name: 'profile',
      open: async (cell) => {
        await startProfiles(adminsOf(cell));
        return () => stopProfiles(adminsOf(cell), path.join(plan.RESULTS_DIR, `profile-${label}`), PROFILE_INTERVAL_US);
      },
    },
    beforeAfter('accounting', (cell) => Promise.all(adminsOf(cell).map((a) => scrapeServer(a))),
      (before, after) => before.map((b, i) => serverWindow(b, after[i]))),
    beforeAfter('balancer', async (cell) => cell.balancer && { cpu_s: cell.balancer.cpuSeconds(), requests: await cell.balancer.requests() },
      (before, after, cell) => cell.balancer && balancerRecord(cell.balancer, before, after.requests)),
    link && beforeAfter('link', () => ({ counters: link.counters(), proxyCpu: link.proxyCpuSeconds() }), (before) => linkDelta(link, before)),
    beforeAfter('machine', (cell) => readMachine(cell.pids()), (before, after) => machineWindow(before, after, sides, clockTicks())),
  ].filter(Boolean);
}

/** The link's byte and packet counters over the run, each way, and its proxy's CPU (s). */
function linkDelta(link, before) {
  const after = link.counters();
  const delta = (way) => ({ bytes: after[way].bytes - before.counters[way].bytes, packets: after[way].packets - before.counters[way].packets });
  return { up: delta('up'), down: delta('down'), proxy_cpu_s: link.proxyCpuSeconds() - before.proxyCpu };
}

/** The connections a server worker keeps at most (server/settings.js MAX_CONNECTIONS) when no setting raises it. */
const SERVER_MAX_CONNECTIONS = 4096;

/**
 * The server settings STREAMS=N needs: room for N connections and the VUs' own in one worker (MAX_CONNECTIONS), where
 * the server's default would close the connections past it (SSE and WebSocket take one a stream).
 * @param {{STREAMS?: number, VUS: number}} plan
 * @returns {Record<string, string>} {} without STREAMS, or when the default has room
 */
export function openStreamsServer({ STREAMS, VUS }) {
  const needed = (STREAMS ?? 0) + VUS + 64;
  return STREAMS && needed > SERVER_MAX_CONNECTIONS ? { MAX_CONNECTIONS: String(needed) } : {};
}

/** k6's web dashboard, exported as one HTML file per run (no HTTP endpoint: works offline). */
function dashboardEnv(plan, label) {
  return {
    K6_WEB_DASHBOARD: 'true',
    K6_WEB_DASHBOARD_PORT: '-1',
    K6_WEB_DASHBOARD_EXPORT: path.join(plan.RESULTS_DIR, `dashboard-${label}.html`),
    // The export is skipped when a run holds fewer than two periods: 1 s, or a quarter of a shorter run.
    K6_WEB_DASHBOARD_PERIOD: `${Math.max(100, Math.min(1000, Math.floor((plan.durationS * 1000) / 4)))}ms`,
  };
}

/**
 * The measured k6 run: one k6 process, or K6_INSTANCES of them, each running one execution
 * segment on its own core (where there are enough) and writing its samples, merged into one
 * summary (bench/k6/split.js). Each instance's own summary is kept beside the merged one.
 * @param {{plan: import('../plans.js').CellPlan, cores: ReturnType<typeof import('../settings/cores.js').splitCores>, scratch: string,
 *   label: string, summaryFile: string, argsOf: (summaryFile: string, flags: string[]) => string[], env: Record<string, string>}} run
 *   argsOf: k6's arguments of a run that writes its summary to the file, with k6 options put first
 * @returns {Promise<{code: number|null, output: string, cpu: object|null, summary?: object, instances?: object[]}>}
 *   cpu: the instances' together (seconds summed, over k6's cores); summary: the merged one (split runs only), also
 *   written to summaryFile; instances: per instance, its segment, cpus, summary file and figures
 * @throws {BenchError} when the instances' results cannot be merged
 */
async function measuredRun({ plan, cores, scratch, label, summaryFile, argsOf, env }) {
  const k6 = { k6: plan.K6_BIN, quiet: !plan.VERBOSE };
  if (plan.K6_INSTANCES === 1) {
    return runK6({ ...k6, cpus: cores.k6Cpus, coreCount: cores.k6CoreCount, env, args: argsOf(summaryFile, []) });
  }
  const segments = executionSegments(plan.K6_INSTANCES);
  const parts = segments.map(({ segment, sequence }, i) => {
    const name = `${label}-i${i + 1}`;
    return {
      segment, cpus: cores.k6InstanceCpus[i] ?? null,
      summaryFile: path.join(plan.RESULTS_DIR, `k6-${name}.json`),
      csv: path.join(scratch, `${name}.csv`),
      dashboard: path.join(plan.RESULTS_DIR, `dashboard-${name}.html`),
      args: ['--execution-segment', segment, '--execution-segment-sequence', sequence],
    };
  });
  const runs = await Promise.all(parts.map((part) => runK6({
    ...k6, cpus: part.cpus ?? undefined, coreCount: 1,
    env: { ...env, K6_WEB_DASHBOARD_EXPORT: part.dashboard },
    args: argsOf(part.summaryFile, [...part.args, ...sampleOutputArgs(part.csv)]),
  })));
  const output = runs.map((r, i) => `${instanceHeader(i, runs.length, parts[i].segment)}\n${r.output}`).join('\n');
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
function linkRecord(placement, check, counters) {
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

