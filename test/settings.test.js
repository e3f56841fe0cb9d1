// The limits the server reads: safe defaults, and one clear line for a value it cannot use.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { test } from 'node:test';
import { promisify } from 'node:util';
import { readSettings } from '../server/settings.js';
import { ROOT } from './helpers/server.js';

test('the limits have safe defaults', () => {
  const settings = readSettings({});
  assert.equal(settings.SHUTDOWN_TIMEOUT_MS, 10000);
  assert.equal(settings.MAX_CONNECTIONS, 4096);
  assert.equal(settings.MAX_BODY_BYTES, 65536);
  assert.equal(settings.HEADERS_TIMEOUT_MS, 10000);
  assert.equal(settings.REQUEST_TIMEOUT_MS, 30000);
});

test('a limit that is not a whole number in range is refused, naming the variable', () => {
  const cases = [
    ['SHUTDOWN_TIMEOUT_MS', '0'], ['SHUTDOWN_TIMEOUT_MS', '2147483648'], ['MAX_CONNECTIONS', '-1'],
    ['MAX_CONNECTIONS', '1e3'], ['MAX_BODY_BYTES', '64k'], ['HEADERS_TIMEOUT_MS', ''], ['REQUEST_TIMEOUT_MS', '1.5'],
  ];
  for (const [name, value] of cases) {
    assert.throws(() => readSettings({ [name]: value }), (err) => err.code === 'ERR_INVALID_SETTING'
      && err.message.startsWith(`invalid setting ${name}=${JSON.stringify(value)}: must be a whole number from `), `${name}=${value}`);
  }
});

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
