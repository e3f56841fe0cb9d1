// The tests start the real cluster server the way the main job does (bench/processes.js).
import { freePort, isAlive, isServerProcess, ROOT, startServer as launch, waitGone } from '../../bench/processes.js';

export { freePort, isAlive, isServerProcess, ROOT, waitGone };

/**
 * Spawns `node server` on 127.0.0.1 with free ports (WORKERS=1 unless given) and
 * resolves once the primary and every worker are listening.
 * @param {Record<string, string>} [env] extra environment (MODE, WORKERS, ...)
 * @param {{readyTimeoutMs?: number}} [options]
 * @returns {Promise<import('../../bench/processes.js').RunningServer>}
 */
export function startServer(env = {}, { readyTimeoutMs = 15000 } = {}) {
  return launch({ env, readyTimeoutMs });
}
