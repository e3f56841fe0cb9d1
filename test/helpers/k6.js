// k6 for the tests: the same provisioning (bench/tools.js) and the same runner (bench/k6/runner.js runK6) as the jobs.
import { runK6 } from '../../bench/k6/runner.js';
import { ensureTool } from '../../bench/tools.js';

/**
 * Path of a k6 at least as new as the pinned release (may build it once, ~3 min).
 * @returns {string}
 */
export function k6Bin() {
  return ensureTool('k6');
}

/**
 * Runs `k6 run <args>` in the repository, unpinned, and collects its output. The scripts see only
 * what -e gives them, as in the jobs: a developer's shell variables stay out.
 * @param {string[]} args
 * @param {{timeoutMs?: number, env?: Record<string, string>}} [options] the run is killed after timeoutMs (default 60000);
 *   env: more of k6's own environment (e.g. SSL_CERT_FILE)
 * @returns {Promise<{code: number|null, output: string}>}
 */
export async function k6Run(args, { timeoutMs = 60000, env = {} } = {}) {
  const { code, output } = await runK6({ k6: k6Bin(), args, quiet: true, timeoutMs, env });
  return { code, output };
}
