// The pinned external tools (k6, h2spec, grpcurl, toxiproxy), found or built from source by
// scripts/ensure-tool.sh: one provisioning for the main job, the soak and the tests.
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { BenchError } from './errors.js';
import { ROOT } from './processes.js';

const found = new Map();

/**
 * Path of a pinned tool, built with `go install` on first use (k6 about 3 minutes, the others about 1).
 * Progress goes to this process's stderr.
 * @param {'k6'|'h2spec'|'grpcurl'|'toxiproxy-server'} tool
 * @returns {string} absolute path of the binary
 * @throws {BenchError} when it is not there and cannot be built (ensure-tool.sh says why above)
 */
export function ensureTool(tool) {
  if (!found.has(tool)) {
    try {
      found.set(tool, execFileSync('bash', [path.join(ROOT, 'scripts/ensure-tool.sh'), tool],
        { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] }).trim());
    } catch {
      throw new BenchError(`${tool} is not available (scripts/ensure-tool.sh ${tool} failed, see above)`);
    }
  }
  return found.get(tool);
}
