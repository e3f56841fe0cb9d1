// How the bench commands end: an expected failure (an error with an ERR_ code) is
// one line on stderr and a nonzero exit; anything else is a bug and keeps its stack.

/**
 * Runs a command's main function.
 * @param {string} name the command, prefixed to its error line
 * @param {() => Promise<void>} main
 * @param {number} [exitCode] exit code on an expected failure (default 1)
 * @returns {Promise<void>}
 */
export async function runCli(name, main, exitCode = 1) {
  try {
    await main();
  } catch (err) {
    if (!err.code?.startsWith('ERR_')) throw err;
    process.stderr.write(`${name}: ${err.message}\n`);
    process.exit(exitCode);
  }
}
