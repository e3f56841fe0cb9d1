// The tests start the real cluster server the way the main job does (bench/processes.js).
import { freePort, ROOT, startServer as launch } from '../../bench/processes.js';

export { freePort, ROOT };

/**
 * Spawns `node server` on 127.0.0.1 with free ports (WORKERS=1 unless given)
 * and resolves once the primary logs `ready`.
 * @param {Record<string, string>} [env] extra environment (MODE, WORKERS, ...)
 * @param {{readyTimeoutMs?: number}} [options]
 * @returns {ReturnType<typeof launch>}
 */
export function startServer(env = {}, { readyTimeoutMs = 15000 } = {}) {
  return launch({ env, readyTimeoutMs });
}
