// k6 for the tests: the same provisioning as the main job (bench/tools.js).
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { ROOT } from '../../bench/processes.js';
import { ensureTool } from '../../bench/tools.js';

/**
 * Path of a k6 at least as new as the pinned release (may build it once, ~3 min).
 * @returns {string}
 */
export function k6Bin() {
  return ensureTool('k6');
}

/**
 * Runs `k6 run <args>` in the repository and collects its output. The scripts see only what -e gives
 * them (--include-system-env-vars=false), as in the main job: a developer's shell variables stay out.
 * @param {string[]} args
 * @param {{timeoutMs?: number}} [options] the run is killed after timeoutMs (default 60000)
 * @returns {Promise<{code: number|null, output: string}>}
 */
export async function k6Run(args, { timeoutMs = 60000 } = {}) {
  const proc = spawn(k6Bin(), ['run', '--include-system-env-vars=false', ...args], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  proc.stdout.on('data', (c) => { output += c; });
  proc.stderr.on('data', (c) => { output += c; });
  const timer = setTimeout(() => proc.kill('SIGKILL'), timeoutMs);
  const [code] = await once(proc, 'exit');
  clearTimeout(timer);
  return { code, output };
}
