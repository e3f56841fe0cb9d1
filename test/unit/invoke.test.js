// The server environment (bench/invoke.js) and the k6 command line (bench/k6/command.js) of a measured cell, built from
// the mode registry.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { listenerSetOf, portOfMode, serverEnv } from '../../bench/invoke.js';
import { K6_VARS, k6Args } from '../../bench/k6/command.js';
import { MODE_NAMES, MODES } from '../../bench/modes.js';
import { LISTENER_NAMES, LISTENERS } from '../../server/listeners.js';

test('serverEnv gives the server the listener of each mode as its MODE, never the mode\'s name', () => {
  for (const mode of MODE_NAMES) assert.equal(serverEnv([mode], { workers: 1 }).MODE, MODES[mode].listener, mode);
  assert.equal(serverEnv(MODE_NAMES, { workers: 1 }).MODE, [...new Set(MODE_NAMES.map((m) => MODES[m].listener))].join(','));
  assert.equal(listenerSetOf([...MODE_NAMES, ...MODE_NAMES]), listenerSetOf(MODE_NAMES), 'each listener once');
  assert.equal(serverEnv('all', { workers: 2 }).MODE, 'all');
  assert.equal('MODE' in serverEnv(null, { workers: 2 }), false);
  for (const mode of MODE_NAMES) assert.ok(LISTENER_NAMES.includes(MODES[mode].listener), `${mode}: its listener exists`);
});

test('serverEnv writes every value as a string and leaves out what is not given', () => {
  assert.deepEqual(serverEnv(['grpc'], { workers: 2, adminPort: 9100, host: '127.0.0.1', compression: 'gzip' }),
    { MODE: MODES.grpc.listener, WORKERS: '2', HOST: '127.0.0.1', COMPRESSION: 'gzip', ADMIN_PORT: '9100' });
  assert.deepEqual(serverEnv(['http'], { workers: 1, adminPort: null }), { MODE: MODES.http.listener, WORKERS: '1' });
  const ports = { [LISTENERS.http.portSetting]: '3000' };
  assert.deepEqual(serverEnv(['http'], { workers: 1, ports, settings: { SHUTDOWN_TIMEOUT_MS: 500 } }),
    { ...ports, MODE: MODES.http.listener, WORKERS: '1', SHUTDOWN_TIMEOUT_MS: '500' });
  assert.throws(() => serverEnv(['http'], { workers: 1, settings: { SHUTDOWN_TIMEOUT: 1 } }), /not a server setting: SHUTDOWN_TIMEOUT/);
});

test('portOfMode is the port of the mode\'s listener', () => {
  const server = { ports: Object.fromEntries(LISTENER_NAMES.map((name, i) => [name, 5000 + i])) };
  for (const mode of MODE_NAMES) assert.equal(portOfMode(server, mode), server.ports[MODES[mode].listener]);
});

test('k6Args: the closed model, with VUS through -e too (the scripts share the request samples out by it)', () => {
  assert.deepEqual(k6Args('http', {
    host: '127.0.0.1:1', vus: 4, duration: '3s', summaryFile: 's.json', vars: { SCENARIO: 'user', CONNECTIONS: 'reuse', REQUEST_TIMEOUT: '5s' },
  }), ['-e', `${MODES.http.hostVars.local}=127.0.0.1:1`, '-e', 'SCENARIO=user', '-e', 'CONNECTIONS=reuse', '-e', 'REQUEST_TIMEOUT=5s',
    '-e', 'VUS=4', '-e', 'SUMMARY_FILE=s.json', '-e', 'SUMMARY_MODE=http', '--vus', '4', '--duration', '3s', MODES.http.scripts.local]);
});

test('k6Args: the open model takes its shape from -e, with no --vus or --duration; flags come first; the remote script', () => {
  const args = k6Args('grpc', { target: 'remote', host: 'h:1', vus: 8, duration: '10s', rate: 100, summaryFile: 's.json', flags: ['--out', 'csv=x'] });
  assert.deepEqual(args, ['--out', 'csv=x', '-e', `${MODES.grpc.hostVars.remote}=h:1`, '-e', 'RATE=100', '-e', 'DURATION=10s', '-e', 'VUS=8',
    '-e', 'SUMMARY_FILE=s.json', '-e', 'SUMMARY_MODE=grpc', MODES.grpc.scripts.remote]);
});

test('k6Args: a mode that runs another mode\'s scripts names itself in their summary', () => {
  const args = k6Args('connect-grpc', { host: 'h:1', vus: 1, duration: '1s', summaryFile: 's.json' });
  assert.deepEqual(args, ['-e', 'LOCAL_GRPC_HOST=h:1', '-e', 'VUS=1', '-e', 'SUMMARY_FILE=s.json', '-e', 'SUMMARY_MODE=connect-grpc',
    '--vus', '1', '--duration', '1s', 'grpc-tests/local.js']);
});

test('k6Args: a minimal script reads its host alone and writes its summary through --summary-export', () => {
  assert.deepEqual(k6Args('http', { script: 'minimal', host: 'h:1', vus: 2, duration: '1s', summaryFile: 'm.json' }),
    ['-e', `${MODES.http.hostVars.local}=h:1`, '--vus', '2', '--duration', '1s', '--summary-export', 'm.json', MODES.http.minimalScript]);
  assert.throws(() => k6Args('http', { script: 'minimal', host: 'h:1', vus: 2, duration: '1s', summaryFile: 'm', vars: { SCENARIO: 'user' } }),
    /not a variable the minimal http script reads: SCENARIO/);
  assert.throws(() => k6Args('http', { host: 'h:1', vus: 2, duration: '1s', summaryFile: 'm', vars: { SCENARO: 'user' } }), /SCENARO/);
  // With an own service, the minimal script that sends its first request sample, reading the schema and the samples.
  const own = { RPC: 'a.S/M', PROTO: 'a.proto', PROTO_PATH: '/p', REQUESTS: '/r.json' };
  const args = k6Args('grpc', { script: 'minimal', host: 'h:1', vus: 2, duration: '1s', summaryFile: 'm.json', vars: own });
  assert.equal(args.at(-1), MODES.grpc.minimalOwnScript);
  assert.ok(Object.entries(own).every(([k, v]) => args.includes(`${k}=${v}`)), args.join(' '));
  assert.throws(() => k6Args('http', { script: 'minimal', host: 'h:1', vus: 2, duration: '1s', summaryFile: 'm', vars: { ...own, SCENARIO: 'x' } }),
    /not a variable the minimal http script reads: SCENARIO/);
});

test('K6_VARS lists every variable the k6 scripts read, and only those', () => {
  const source = ['k6/common.js', 'k6/summary.js', 'k6/http.js', 'k6/http-run.js', 'k6/grpc.js', 'k6/grpc-run.js', 'k6/own.js'].map((f) => readFileSync(new URL(`../../${f}`, import.meta.url), 'utf8')).join('\n');
  // Read through __ENV.NAME, or through the helpers positiveIntEnv('NAME'), durationEnv('NAME'), choiceEnv('NAME').
  const read = new Set([...source.matchAll(/__ENV\.([A-Z_]+)|[a-zA-Z]+Env\('([A-Z_]+)'/g)].map((m) => m[1] ?? m[2]));
  assert.deepEqual([...read].sort(), Object.keys(K6_VARS).sort());
});
