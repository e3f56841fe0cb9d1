// onStopSignal (bench/processes.js), the one cleanup on SIGINT/SIGTERM of the jobs and the tests: the cleanups
// run in order, a failing one stops neither the others nor the end, and the process ends by its signal, even one
// that comes just as the last cleanup is forgotten.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { test } from 'node:test';
import { ROOT } from '../helpers/server.js';

/** Runs module code in a child in the repo's root; resolves with its exit code, signal and output. */
async function child(code) {
  const proc = spawn(process.execPath, ['--input-type=module', '-e', code], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  proc.stdout.on('data', (chunk) => { stdout += chunk; });
  proc.stderr.on('data', (chunk) => { stderr += chunk; });
  const timer = setTimeout(() => proc.kill('SIGKILL'), 10000);
  const [exitCode, signal] = await once(proc, 'close');
  clearTimeout(timer);
  return { exitCode, signal, stdout, stderr };
}

for (const signal of ['SIGINT', 'SIGTERM']) {
  test(`${signal}: the cleanups run in order, a failing one does not stop the rest, then the process ends by it`, async () => {
    const { exitCode, signal: endedBy, stdout, stderr } = await child(`
      import { onStopSignal } from './bench/processes.js';
      onStopSignal(() => console.log('first'));
      const forget = onStopSignal(() => console.log('forgotten'));
      onStopSignal(() => { throw new Error('boom'); });
      onStopSignal(() => console.log('last'));
      forget();
      setTimeout(() => process.kill(process.pid, '${signal}'), 10);
      setTimeout(() => { console.log('still running'); process.exit(3); }, 5000);
    `);
    assert.deepEqual([exitCode, endedBy], [null, signal], stdout + stderr);
    assert.deepEqual(stdout.trim().split('\n'), ['first', 'last']);
    assert.match(stderr, new RegExp(`cleanup on ${signal} failed: boom`));
  });
}

test('a signal caught just as the last cleanup is forgotten still ends the process', async () => {
  // The signal comes while the process runs code, so libuv reads it only after that code forgot the cleanup.
  const { exitCode, signal, stdout } = await child(`
    import { onStopSignal } from './bench/processes.js';
    const forget = onStopSignal(() => {});
    process.kill(process.pid, 'SIGTERM');
    for (const until = Date.now() + 100; Date.now() < until;);
    forget();
    setTimeout(() => { console.log('still running'); process.exit(3); }, 2000);
  `);
  assert.deepEqual([exitCode, signal], [null, 'SIGTERM'], stdout);
});
