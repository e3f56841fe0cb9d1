// The decomposition pass (DECOMPOSE=1): every listener of one server (MODE=all:
// JSON and protobuf over HTTP/1.1 and HTTP/2, fastify and grpc-js beside bare
// node:http and node:http2) loaded by wrk or h2load in turn, REPEATS times,
// so the report can say which part of the HTTP-vs-gRPC gap comes from the
// encoding, which from the transport and which from the frameworks (bench/report/decomposition.js).
import { measureCapacity } from './capacity.js';
import { BenchError } from '../errors.js';
import { freePort, startServer } from '../processes.js';
import { serverEnv } from '../invoke.js';
import { fileStamp } from '../format.js';
import { startProfiles, stopProfiles } from './profile.js';
import { PROFILE_INTERVAL_US } from '../../server/profiling.js';
import path from 'node:path';
import { LISTENER_NAMES } from '../../server/listeners.js';

/** The listeners measured: all of them, in the registry's order (server/listeners.js). */
export const DECOMPOSITION = LISTENER_NAMES;

/**
 * Runs the pass for one scenario: per repeat, a fresh server (one process tree,
 * MODE=all) and each listener warmed up, then measured.
 * @param {{scenario: string, settings: import('../settings/bench.js').BenchSettings, cores: ReturnType<import('../settings/cores.js').splitCores>,
 *   durationS: number, warmupS: number, listeners?: readonly string[], connections?: number, streams?: number, accounting?: boolean}} options
 *   listeners: those loaded, in turn (default: every one, DECOMPOSITION); connections: per listener (default VUS);
 *   streams: requests in flight per HTTP/2 connection (h2load -m, default 1); accounting: the server keeps its accounting
 *   (server/accounting.js, an admin port) as the main job's servers do, whatever PROFILE says (default false)
 * @returns {Promise<Record<string, Array<Awaited<ReturnType<typeof measureCapacity>> & {profile?: object}>>>} runs per
 *   listener; with PROFILE=1 each carries its profile (bench/passes/profile.js stopProfiles), written to RESULTS_DIR too
 * @throws {BenchError} when the server does not start or a tool fails
 */
export async function measureDecomposition({
  scenario, settings, cores, durationS, warmupS, listeners = DECOMPOSITION, connections = settings.VUS, streams = 1, accounting = false,
}) {
  const runs = Object.fromEntries(listeners.map((l) => [l, []]));
  const stamp = fileStamp();
  for (let repeat = 1; repeat <= settings.REPEATS; repeat++) {
    let server;
    // PROFILE=1: each listener's measured load is profiled through the admin endpoint, as in the main job.
    const admin = settings.PROFILE || accounting ? `127.0.0.1:${await freePort()}` : null;
    try {
      server = await startServer({
        env: serverEnv('all', { workers: settings.WORKERS, adminPort: admin && Number(admin.split(':')[1]) }), cpus: cores.serverCpus,
      });
    } catch (err) {
      throw new BenchError(`the server (MODE=all) did not start: ${err.message}`);
    }
    try {
      for (const listener of listeners) {
        console.error(`--- ${scenario}, decomposition run ${repeat} of ${settings.REPEATS}: ${listener}`);
        const load = { listener, scenario, host: `127.0.0.1:${server.ports[listener]}`, connections, streams, cpus: cores.k6Cpus };
        if (warmupS > 0) await measureCapacity({ ...load, durationS: warmupS });
        if (!settings.PROFILE) {
          runs[listener].push(await measureCapacity({ ...load, durationS }));
          continue;
        }
        await startProfiles([admin]);
        const result = await measureCapacity({ ...load, durationS });
        const prefix = path.join(settings.RESULTS_DIR, `profile-decomposition-${scenario}-${listener}-${stamp}-r${repeat}`);
        runs[listener].push({ ...result, profile: await stopProfiles([admin], prefix, PROFILE_INTERVAL_US) });
      }
    } finally {
      await server.stop();
    }
  }
  return runs;
}

