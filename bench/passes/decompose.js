// The decomposition pass (DECOMPOSE=1): every listener (JSON and protobuf over HTTP/1.1
// and HTTP/2, fastify and grpc-js beside bare node:http and node:http2, the peers, connect-node),
// each in a server of its own, loaded by wrk or h2load in turn, REPEATS times,
// so the report can say which part of the HTTP-vs-gRPC gap comes from the
// encoding, which from the transport and which from the frameworks (bench/report/decomposition.js).
import { measureCapacity } from './capacity.js';
import { beforeAfter, serverRun } from './lifecycle.js';
import { freePort, launchServer } from '../processes.js';
import { serverEnv } from '../invoke.js';
import { fileStamp } from '../format.js';
import { startProfiles, stopProfiles } from './profile.js';
import { PROFILE_INTERVAL_US } from '../../server/profiling.js';
import path from 'node:path';
import { LISTENER_NAMES } from '../../server/listeners.js';
import { scrapeServer } from './scrape.js';
import { serverWindow } from '../records/server-stats.js';
import { listenerOf } from '../records/decomposition.js';

/**
 * Each worker's initial V8 heap in the decomposition's servers (server setting WORKER_INITIAL_HEAP_MB), the same for
 * every listener: with V8's default a gRPC worker lands at random in a slow garbage-collection regime that costs 20–30%
 * of its RPS, and the regime, not the listener, then decides a ratio; at 512 MiB 12 of 12 runs stayed in the fast one
 * (docs/findings/2026-11-25-profiling.md, "Why ours ÷ peer swung").
 */
export const DECOMPOSITION_HEAP_MB = 512;

/**
 * V8's allocation-site pretenuring in the decomposition's servers (server setting WORKER_PRETENURING), off for every
 * listener: with it a grpc-js worker could tenure its per-call allocation sites in the first seconds of load, and each
 * call's young objects then outlived every scavenge, 11–20 ms of GC per 1000 calls against 1.5, whichever listener drew
 * it (with the 512 MiB initial heap, the gRPC listener in 17 of 17 runs and its peer in 3 of 21 on 2026-11-26;
 * docs/findings/2026-11-25-profiling.md, "The slow regime is V8's pretenuring").
 */
export const DECOMPOSITION_PRETENURING = false;

/** The server settings every server of the decomposition gets, the same for each listener. */
export const DECOMPOSITION_SERVER_SETTINGS = Object.freeze({
  WORKER_INITIAL_HEAP_MB: DECOMPOSITION_HEAP_MB, WORKER_PRETENURING: DECOMPOSITION_PRETENURING,
});

/** The listeners measured: all of them, in the registry's order (server/listeners.js). */
export const DECOMPOSITION = LISTENER_NAMES;

/**
 * Runs the pass for one scenario: per repeat and listener, a fresh server (one process tree, MODE = that listener),
 * warmed up, then measured, in the given order on odd repeats and in the reverse order on even ones (counterbalanced: a
 * listener that always ran first or after the same neighbour would carry whatever that position does to a run into every
 * ratio; an even REPEATS balances it exactly), with the server's own accounting (its admin endpoint) read right before and right after the
 * measured load: its CPU and GC time per request. A server of its own per listener, because listeners in one process
 * share its heap: a gRPC listener measured after grpc-js with proto-loader inherited that one's old space and
 * mark-compacts and served 20% less (docs/findings/2026-11-25-profiling.md, "Why ours ÷ peer swung").
 * @param {{scenario: string, plan: Pick<import('../plans.js').DecompositionPlan, 'PROFILE'|'REPEATS'|'RESULTS_DIR'|'VUS'|'WORKERS'>, cores: ReturnType<import('../settings/cores.js').splitCores>,
 *   durationS: number, warmupS: number, listeners?: readonly string[], connections?: number, streams?: number,
 *   own?: import('../own-service.js').OwnRun|null}} options own: an own service, which every server serves and every
 *   load asks for (its first request sample) in place of the scenario's
 *   listeners: the runs of each repeat, in turn: listener names, or againOf one for its A/A control (default: every
 *   listener once, DECOMPOSITION); connections: per listener (default VUS);
 *   streams: requests in flight per HTTP/2 connection (h2load -m, default 1). The server always keeps its accounting
 *   (server/accounting.js, an admin port), as the main job's servers do, so ours is measured with everything of ours on
 * @returns {Promise<Record<string, Array<Awaited<ReturnType<typeof measureCapacity>> & {server: ServerCost, initial_heap_mb: number, profile?: object}>>>}
 *   runs per run name (a listener, or its againOf), in the order given; server: the server's own figures of the measured load; initial_heap_mb: its workers' initial V8 heap
 *   (MiB, DECOMPOSITION_HEAP_MB); with PROFILE=1 each carries its profile
 *   (bench/passes/profile.js stopProfiles), written to RESULTS_DIR too
 * @throws {BenchError} when a server does not start or a tool fails
 */
export async function measureDecomposition({
  scenario, plan, cores, durationS, warmupS, listeners = DECOMPOSITION, connections = plan.VUS, streams = 1, own = null,
}) {
  const runs = Object.fromEntries(listeners.map((l) => [l, []]));
  const stamp = fileStamp();
  const profilePrefix = (run, repeat) => path.join(plan.RESULTS_DIR, `profile-decomposition-${scenario}-${run.replace(/\W+/g, '-')}-${stamp}-r${repeat}`);
  for (let repeat = 1; repeat <= plan.REPEATS; repeat++) {
    for (const run of repeat % 2 === 1 ? listeners : [...listeners].reverse()) {
      const listener = listenerOf(run);
      console.error(`--- ${scenario}, decomposition run ${repeat} of ${plan.REPEATS}: ${run}`);
      // The server's accounting, and with PROFILE=1 the listener's profile, through the admin endpoint, as in the main job.
      const admin = `127.0.0.1:${await freePort()}`;
      const loadOf = (server) => ({ listener, scenario, host: `127.0.0.1:${server.ports[listener]}`, connections, streams, cpus: cores.k6Cpus, own });
      runs[run].push(await serverRun({
        start: () => launchServer(`the server (MODE=${listener})`, {
          env: serverEnv({ listener }, {
            workers: plan.WORKERS, adminPort: Number(admin.split(':')[1]), settings: { ...DECOMPOSITION_SERVER_SETTINGS, ...own?.server },
          }),
          cpus: cores.serverCpus,
        }),
        warmup: warmupS > 0 ? async (server) => { await measureCapacity({ ...loadOf(server), durationS: warmupS }); } : undefined,
        samplers: [
          plan.PROFILE && { name: 'profile', open: async () => { await startProfiles([admin]); return () => stopProfiles([admin], profilePrefix(run, repeat), PROFILE_INTERVAL_US); } },
          beforeAfter('server', () => scrapeServer(admin), (before, after) => serverWindow(before, after)),
        ].filter(Boolean),
        measure: (server) => measureCapacity({ ...loadOf(server), durationS }),
        after: async (server, { run: result, readings }) => ({
          ...result, server: serverCost(readings.server, result.requests), initial_heap_mb: DECOMPOSITION_HEAP_MB,
          ...(plan.PROFILE ? { profile: readings.profile } : {}),
        }),
      }));
    }
  }
  return runs;
}

/**
 * @typedef {object} ServerCost what one listener's measured load cost the server, by its own accounting
 * @property {number|null} cpu_us_per_request server CPU time (user + system, workers and primary) / requests the load
 *   tool completed (µs; the tool's count, as the baselines count none of their own)
 * @property {number|null} gc_ms_per_1k_requests time the workers spent in GC × 1000 / those requests (ms)
 * @property {number|null} allocated_bytes_per_request bytes the workers allocated on their V8 heaps / those requests: a
 *   count, steady from run to run where time is not (it found the guard's listener per stream, server/h2-guard.js)
 */

/**
 * The decomposition's figures of the server's accounting over one measured load (bench/records/server-stats.js).
 * @param {import('../records/server-stats.js').ServerWindow} window the server's, from right before to right after the load
 * @param {number} requests requests the load tool completed
 * @returns {ServerCost} null figures when no request completed
 */
export function serverCost(window, requests) {
  if (!(requests > 0)) return { cpu_us_per_request: null, gc_ms_per_1k_requests: null, allocated_bytes_per_request: null };
  const sum = (list, of) => list.reduce((a, x) => a + of(x), 0);
  const cpuS = sum(window.workers, (w) => w.cpu_user_s + w.cpu_system_s)
    + (window.primary ? window.primary.cpu_user_s + window.primary.cpu_system_s : 0);
  return {
    cpu_us_per_request: (cpuS * 1e6) / requests,
    gc_ms_per_1k_requests: (sum(window.workers, (w) => w.gc_pause_ms) * 1000) / requests,
    allocated_bytes_per_request: sum(window.workers, (w) => w.heap_allocated_bytes) / requests,
  };
}
