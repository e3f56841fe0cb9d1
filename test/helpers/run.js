// Runs a command the way a user would, from the repository, and never rejects on its exit code.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { ROOT } from './server.js';

const exec = promisify(execFile);

/**
 * Runs `command args` in the repository with the test's environment plus `env`.
 * @param {string} command
 * @param {string[]} args
 * @param {Record<string, string>} [env]
 * @param {number} [timeoutMs] killed past it (default 120000)
 * @returns {Promise<{code: number, stdout: string, stderr: string}>} code 0, or the exit code
 */
export async function sh(command, args, env = {}, timeoutMs = 120000) {
  try {
    const { stdout, stderr } = await exec(command, args, { cwd: ROOT, env: { ...process.env, ...env }, timeout: timeoutMs });
    return { code: 0, stdout, stderr };
  } catch (err) {
    return { code: err.code, stdout: err.stdout, stderr: err.stderr };
  }
}
