// A setting the server or a job cannot use stops it with one clear line (the limits' defaults and ranges: test/unit/settings.test.js).
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { test } from 'node:test';
import { promisify } from 'node:util';
import { readFileSync } from 'node:fs';
import { ROOT, startServer } from '../helpers/server.js';

test('HEADERS_TIMEOUT_MS past REQUEST_TIMEOUT_MS stops the server with exit 2 and one line', async () => {
  const env = { ...process.env, HOST: '127.0.0.1', HEADERS_TIMEOUT_MS: '5000', REQUEST_TIMEOUT_MS: '1000' };
  const err = await promisify(execFile)(process.execPath, ['server'], { cwd: ROOT, env, timeout: 10000 }).then(() => null, (e) => e);
  assert.equal(err?.code, 2);
  assert.equal(err.stderr, 'server: invalid setting HEADERS_TIMEOUT_MS="5000": must not exceed REQUEST_TIMEOUT_MS (1000)\n');
});

test('a value not among a setting\'s choices is one line in the style of any bad value, listing them (job and server)', async () => {
  const run = (args, env) => promisify(execFile)(process.execPath, args, { cwd: ROOT, env: { ...process.env, ...env }, timeout: 10000 })
    .then(() => null, (e) => e);
  const vus = await run(['bench/cli.js', 'run', '--check-settings'], { VUS: 'abc' });
  assert.equal(vus?.code, 1);
  assert.equal(vus.stderr, 'bench: invalid setting VUS="abc": must be a whole number of at least 1\n');
  const network = await run(['bench/cli.js', 'run', '--check-settings'], { NETWORK: 'moon' });
  assert.equal(network?.code, 1);
  assert.equal(network.stderr, 'bench: invalid setting NETWORK="moon": must be one of loopback, lan, wan, mobile\n');
  const level = await run(['server'], { HOST: '127.0.0.1', LOG_LEVEL: 'loud' });
  assert.equal(level?.code, 2);
  assert.equal(level.stderr, 'server: invalid setting LOG_LEVEL="loud": must be one of fatal, error, warn, info, debug, trace, silent\n');
});

test('WORKER_INITIAL_HEAP_MB reaches every worker as V8\'s --initial-heap-size, and 0 leaves V8\'s default', async () => {
  const argvOf = (pid) => readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
  for (const [value, flag] of [['384', '--initial-heap-size=384'], ['0', undefined]]) {
    const server = await startServer({ MODE: 'http', WORKERS: '2', WORKER_INITIAL_HEAP_MB: value });
    try {
      const workers = server.workerPids();
      assert.equal(workers.length, 2);
      for (const pid of workers) assert.equal(argvOf(pid).find((a) => a.startsWith('--initial-heap-size')), flag, `worker ${pid}`);
      assert.equal(argvOf(server.proc.pid).find((a) => a.startsWith('--initial-heap-size')), undefined, 'the primary keeps its own heap');
    } finally {
      await server.stop();
    }
  }
});

test('WORKER_PRETENURING=false reaches every worker as V8\'s --no-allocation-site-pretenuring, beside the initial heap; true leaves V8\'s default', async () => {
  const argvOf = (pid) => readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
  for (const [value, flag] of [['false', '--no-allocation-site-pretenuring'], ['true', undefined]]) {
    const server = await startServer({ MODE: 'http', WORKERS: '2', WORKER_PRETENURING: value, WORKER_INITIAL_HEAP_MB: '384' });
    try {
      const workers = server.workerPids();
      assert.equal(workers.length, 2);
      for (const pid of workers) {
        const argv = argvOf(pid);
        assert.equal(argv.find((a) => a.includes('pretenuring')), flag, `worker ${pid}`);
        assert.ok(argv.includes('--initial-heap-size=384'), `worker ${pid} keeps its initial heap`);
      }
      assert.equal(argvOf(server.proc.pid).find((a) => a.includes('pretenuring')), undefined, 'the primary keeps V8\'s default');
    } finally {
      await server.stop();
    }
  }
});
