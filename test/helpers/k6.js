// k6 for the tests: the same provisioning as the main job (scripts/ensure-k6.sh).
import { execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import path from 'node:path';
import { ROOT } from '../../bench/processes.js';

let k6Path;
/**
 * Path of a k6 at least as new as the pinned release (may build it once, ~3 min).
 * @returns {string}
 */
export function k6Bin() {
  k6Path ??= execFileSync('bash', [path.join(ROOT, 'scripts/ensure-k6.sh')], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] }).trim();
  return k6Path;
}

/**
 * Runs `k6 run <args>` in the repository and collects its output.
 * @param {string[]} args
 * @param {{timeoutMs?: number}} [options] the run is killed after timeoutMs (default 60000)
 * @returns {Promise<{code: number|null, output: string}>}
 */
export async function k6Run(args, { timeoutMs = 60000 } = {}) {
  const proc = spawn(k6Bin(), ['run', ...args], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  proc.stdout.on('data', (c) => { output += c; });
  proc.stderr.on('data', (c) => { output += c; });
  const timer = setTimeout(() => proc.kill('SIGKILL'), timeoutMs);
  const [code] = await once(proc, 'exit');
  clearTimeout(timer);
  return { code, output };
}
