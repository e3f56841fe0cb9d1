// npm run sweep as the sweep tests run it: from the repository, with the test's k6.
import { k6Bin } from './k6.js';
import { sh } from './run.js';

/** Why the sweep's measured cells cannot run here (they need root for ip netns and tc), or false when they can. */
export const skipUnlessRoot = process.getuid?.() === 0 ? false : 'needs root for ip netns and tc (CI runs as root)';

/**
 * Runs `node bench/cli.js sweep` with args.
 * @param {Record<string, string>} env added to the test's environment (K6_BIN is the test's k6 unless set)
 * @param {string[]} [args]
 * @param {number} [timeoutMs] killed past it
 * @returns {Promise<{code: number, stdout: string, stderr: string}>} never rejects on the exit code
 */
export const sweep = (env, args = [], timeoutMs = 240000) => sh(process.execPath, ['bench/cli.js', 'sweep', ...args], { K6_BIN: k6Bin(), ...env }, timeoutMs);
