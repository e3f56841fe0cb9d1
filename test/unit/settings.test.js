// The settings readers and their helpers (bench/settings/bench.js, server/restart-policy.js): pure.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { benchSettingSpecs, readBenchSettings } from '../../bench/settings/bench.js';
import { durationMs } from '../../bench/settings/validators.js';
import { splitCores } from '../../bench/settings/cores.js';
import { faultSettingSpecs, readFaultSettings } from '../../bench/settings/faults.js';
import { readSoakSettings, soakSettingSpecs } from '../../bench/settings/soak.js';
import { preflight as targetsPreflight } from '../../bench/commands/targets.js';
import { SHARED_SETTING_NAMES, sharedDefaults } from '../../bench/settings/shared.js';
import { createRestartPolicy, RESTART_DEFAULTS } from '../../server/restart-policy.js';
import { readSettings, serverSettingSpecs } from '../../server/settings.js';
import { edits, misspeltSettings } from '../../server/env.js';
import { acceptsGzip } from '../../server/compression.js';

test('k6 durations in ms, and what is not one', () => {
  assert.equal(durationMs('1m30s'), 90000);
  assert.equal(durationMs('500ms'), 500);
  assert.equal(durationMs('0.5s'), 500);
  for (const bad of ['10', '1 m', '-1s', '']) assert.throws(() => durationMs(bad), /k6 duration/, bad);
});

test('cores: the last for k6, the rest for the server; one core is shared, not pinned', () => {
  assert.deepEqual(splitCores([0, 1, 2, 3]), {
    serverCpus: '0,1,2', k6Cpus: '3', k6InstanceCpus: ['3'], serverCoreCount: 3, k6CoreCount: 1,
    description: 'server pinned to cpu 0,1,2, k6 pinned to cpu 3 (taskset)',
  });
  assert.equal(splitCores([0]).serverCpus, undefined);
});

test('cores for split k6 runs: one each while the server keeps one, else shared', () => {
  const four = splitCores([0, 1, 2, 3], 2);
  assert.deepEqual([four.serverCpus, four.k6Cpus, four.k6InstanceCpus, four.k6CoreCount], ['0,1', '2,3', ['2', '3'], 2]);
  const two = splitCores([0, 1], 2);
  assert.deepEqual([two.serverCpus, two.k6InstanceCpus, two.k6CoreCount], ['0', ['1', '1'], 1]);
  assert.match(two.description, /the 2 k6 instances share cpu 1/);
  assert.throws(() => readBenchSettings({ K6_INSTANCES: '4', VUS: '2' }), /K6_INSTANCES=4 is more than VUS=2/);
  assert.equal(readBenchSettings({ K6_INSTANCES: '2', WORKERS: '3' }).WORKERS, 3);
});

test('bench settings: link settings parsed, conflicts refused with one line naming them', () => {
  const s = readBenchSettings({ BANDWIDTH: '2mbit', RTT: '20ms' });
  assert.deepEqual(s.link, { name: 'custom', down: 2e6, up: 2e6, rttMs: 20 });
  assert.equal(readBenchSettings({}).link, null);
  assert.throws(() => readBenchSettings({ TARGET: 'remote', NETWORK: 'wan' }), /TARGET=remote .* set one or the other/);
  assert.throws(() => readBenchSettings({ DECOMPOSE: '1', RTT: '5' }), /DECOMPOSE=1 .* loopback/);
  assert.throws(() => readBenchSettings({ NETWORK: 'moon', REMOTE_HTTP_HOST: 'https://a:1' }),
    /NETWORK="moon".*REMOTE_HTTP_HOST="https:\/\/a:1".*https:\/\/ is not accepted/);
});

test('TLS: off by default; refused in one line with the passes that cannot serve it, and TLS_CA only where it is read', () => {
  assert.equal(readBenchSettings({}).TLS, false);
  assert.equal(readBenchSettings({ TLS: '1', RTT: '10ms' }).TLS, true);
  assert.throws(() => readBenchSettings({ TLS: '1', DECOMPOSE: '1' }), /^BenchError: DECOMPOSE=1 loads the peers, which serve no TLS .*: run it without TLS=1$/);
  assert.throws(() => readBenchSettings({ TLS: '1', SERVERS: '2' }), /^BenchError: SERVERS > 1 .* without TLS=1$/);
  assert.throws(() => readBenchSettings({ TLS: '1', TARGET: 'remote' }), /^BenchError: TLS=1 with TARGET=remote .* set TLS_CA to its PEM file$/);
  assert.equal(readBenchSettings({ TLS: '1', TARGET: 'remote', TLS_CA: '/x/ca.crt' }).TLS_CA, '/x/ca.crt');
  assert.throws(() => readBenchSettings({ TLS_CA: '/x/ca.crt' }), /^BenchError: TLS_CA is the remote servers' CA, read with TLS=1 and TARGET=remote only/);
  // The json-h2 mode: k6 speaks HTTP/2 only over TLS.
  assert.deepEqual(readBenchSettings({ TLS: '1', MODES: 'http,json-h2,grpc' }).MODES, ['http', 'json-h2', 'grpc']);
  assert.throws(() => readBenchSettings({ MODES: 'http,json-h2' }),
    /^BenchError: MODES=http,json-h2: the json-h2 mode needs TLS=1: k6's HTTP client speaks HTTP\/2 only over TLS, by ALPN \(no h2c: grafana\/k6#970, #2348\)$/);
  assert.throws(() => readFaultSettings({ MODES: 'json-h2' }), /^BenchError: MODES=json-h2: the json-h2 mode needs TLS=1: k6's HTTP client/);
  assert.deepEqual(readFaultSettings({ MODES: 'grpc,json-h2', TLS: '1' }).MODES, ['grpc', 'json-h2']);
  assert.throws(() => readSoakSettings({ MODE: 'json-h2' }), /^BenchError: MODE=json-h2: the json-h2 mode needs TLS=1: k6's HTTP client/);
  assert.deepEqual(readSoakSettings({ MODE: 'json-h2', TLS: '1' }).MODE, ['json-h2']);
  assert.deepEqual(readSoakSettings({}).MODE, ['http', 'grpc', 'connect-grpc', 'connect-json'], 'both: the modes that run in cleartext');
});

test('TLS=1 stops npm run targets before anything starts: its peers serve no TLS', async () => {
  await assert.rejects(targetsPreflight({ TLS: true }), /^BenchError: npm run targets measures the listeners against their peers, which serve no TLS .*: run it without TLS=1$/);
});

test('COMPRESSION: off by default, gzip accepted, anything else one line naming it, in the job and in the server', () => {
  assert.equal(readBenchSettings({}).COMPRESSION, 'off');
  assert.equal(readBenchSettings({ COMPRESSION: 'gzip' }).COMPRESSION, 'gzip');
  assert.equal(readSettings({}).COMPRESSION, 'off');
  assert.equal(readSettings({ COMPRESSION: 'gzip' }).COMPRESSION, 'gzip');
  assert.throws(() => readBenchSettings({ COMPRESSION: 'brotli' }), /^BenchError: invalid setting COMPRESSION="brotli": [^\n]*$/);
  assert.throws(() => readSettings({ COMPRESSION: 'brotli' }), /^SettingsError: invalid setting COMPRESSION="brotli": [^\n]*$/);
  // k6's gRPC client asks for gzip whatever the script says, so only a server the job starts can keep a column raw.
  assert.throws(() => readBenchSettings({ COMPRESSION: 'gzip', TARGET: 'remote' }), /COMPRESSION=gzip .* without TARGET=remote/);
});

test('CAPACITY: auto by default, 1 and 0 as before (true/false too), anything else one line naming it', () => {
  assert.equal(readBenchSettings({}).CAPACITY, 'auto');
  for (const [value, mode] of [['auto', 'auto'], ['1', '1'], ['true', '1'], ['0', '0'], ['false', '0']]) {
    assert.equal(readBenchSettings({ CAPACITY: value }).CAPACITY, mode, value);
  }
  assert.throws(() => readBenchSettings({ CAPACITY: 'sometimes' }), /^BenchError: invalid setting CAPACITY="sometimes": must be auto, 1 or 0$/);
});

test('NODE_VERSIONS: the releases as listed, none when unset or empty; a bad list is one line naming it', () => {
  assert.deepEqual(readBenchSettings({}).NODE_VERSIONS, []);
  assert.deepEqual(readBenchSettings({ NODE_VERSIONS: '' }).NODE_VERSIONS, []);
  assert.deepEqual(readBenchSettings({ NODE_VERSIONS: '20, 22.3,24.21.0' }).NODE_VERSIONS, ['20', '22.3', '24.21.0']);
  const refused = [
    [',', /must list at least one Node release/],
    ['20,v22', /v22: each release must be MAJOR, MAJOR\.MINOR or MAJOR\.MINOR\.PATCH/],
    ['1.2.3.4,lts', /1\.2\.3\.4, lts: each release must be/],
    ['20,24,20', /20 listed twice/],
  ];
  for (const [value, why] of refused) {
    assert.throws(() => readBenchSettings({ NODE_VERSIONS: value }), (err) => {
      assert.ok(err.message.startsWith(`invalid setting NODE_VERSIONS=${JSON.stringify(value)}: `), err.message);
      assert.match(err.message, why);
      assert.equal(err.name, 'BenchError');
      assert.doesNotMatch(err.message, /\n/, 'one line');
      return true;
    }, value);
  }
  // The job starts the server under each release: a remote server runs on its own.
  assert.throws(() => readBenchSettings({ NODE_VERSIONS: '20', TARGET: 'remote' }), /NODE_VERSIONS .* without TARGET=remote/);
});

test('every setting with choices, of every job and the server, refuses another value in the project\'s words, listing them', () => {
  const readers = [[benchSettingSpecs, readBenchSettings], [soakSettingSpecs, readSoakSettings],
    [faultSettingSpecs, readFaultSettings], [serverSettingSpecs, readSettings]];
  const checked = [];
  for (const [specsOf, read] of readers) {
    for (const [name, { choices }] of Object.entries(specsOf())) {
      if (!choices) continue;
      // The same shape as any other bad value, e.g. VUS="abc": must be a whole number of at least 1.
      assert.throws(() => read({ [name]: 'nope' }), (err) => err.code?.startsWith('ERR_')
        && err.message === `invalid setting ${name}="nope": must be one of ${choices.join(', ')}`, `${name}: ${choices}`);
      checked.push(name);
    }
  }
  for (const name of ['NETWORK', 'CONNECTIONS', 'TARGET', 'COMPRESSION', 'LOG_LEVEL', 'GRPC_CODEC']) assert.ok(checked.includes(name), name);
  assert.throws(() => readBenchSettings({ VUS: 'abc' }), { message: 'invalid setting VUS="abc": must be a whole number of at least 1' });
});

test('edits: Levenshtein, with a swap of two neighbouring letters as one; near-settings by length', () => {
  assert.deepEqual([edits('VU', 'VUS'), edits('MDOE', 'MODE'), edits('VSU', 'VUS'), edits('HOME', 'MODE'), edits('MODE', 'MODE')],
    [1, 1, 1, 2, 0]);
  assert.equal(edits('ABCD', 'BADC'), 3, 'two swaps: Levenshtein\'s count');
  const names = ['VUS', 'UP', 'MODE', 'HOST', 'WORKERS', 'FAULT_WORKERS'];
  const env = { VU: '8', UP2: '1', TZ: 'UTC', HOME: '/', PORT: '1', NODE: '/usr/bin/node', WORKER: '2', FAULT_WORKER: '1', vus: '8', MODE: 'x' };
  assert.deepEqual(misspeltSettings(env, names), [
    { name: 'FAULT_WORKER', meant: 'FAULT_WORKERS' }, { name: 'VU', meant: 'VUS' }, { name: 'WORKER', meant: 'WORKERS' },
  ]);
});

test('a gRPC client asks for gzip by listing it in grpc-accept-encoding, in any place of the list', () => {
  for (const yes of ['gzip', 'identity,gzip', 'gzip, identity', 'identity, deflate, gzip']) assert.equal(acceptsGzip(yes), true, yes);
  for (const no of [undefined, '', 'identity', 'deflate,identity', 'x-gzip', 'gzipx']) assert.equal(acceptsGzip(no), false, String(no));
});

test('restart policy: a first quick death is replaced at once, then delays double, then it gives up', () => {
  const policy = createRestartPolicy();
  const quick = RESTART_DEFAULTS.stableAfterMs - 1;
  const decisions = Array.from({ length: RESTART_DEFAULTS.maxQuickDeaths }, () => policy.onDeath(0, quick));
  assert.deepEqual(decisions.map((d) => d.delayMs), [0, 250, 500, 1000, undefined]);
  assert.equal(decisions.at(-1).giveUp, true);
  // Another slot keeps its own count; a worker that lived long resets it.
  assert.equal(policy.onDeath(1, quick).quickDeaths, 1);
  assert.equal(policy.onDeath(0, RESTART_DEFAULTS.stableAfterMs).quickDeaths, 0);
});

test('the limits have safe defaults', () => {
  const settings = readSettings({});
  assert.equal(settings.SHUTDOWN_TIMEOUT_MS, 10000);
  assert.equal(settings.MAX_CONNECTIONS, 4096);
  assert.equal(settings.MAX_BODY_BYTES, 65536);
  // An own service: gRPC's default maximum receive message size, 4 MiB; a set value holds either way.
  assert.equal(readSettings({ PROTO: 'a.proto', RPC: 'a.S/M' }).MAX_BODY_BYTES, 4 * 1024 * 1024);
  assert.equal(readSettings({ PROTO: 'a.proto', RPC: 'a.S/M', MAX_BODY_BYTES: '1024' }).MAX_BODY_BYTES, 1024);
  assert.equal(readSettings({ MAX_BODY_BYTES: '1048576' }).MAX_BODY_BYTES, 1048576);
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


test('a setting two jobs read is specced once (bench/settings/shared.js), and the fault matrix takes the server\'s own specs', () => {
  const cores = splitCores([0, 1]);
  const jobs = { run: benchSettingSpecs(cores), soak: soakSettingSpecs(cores), faults: faultSettingSpecs(cores) };
  // Same names, other meanings, kept for the settings' users: the soak's FAULTS is on/off, the matrix's a list of faults;
  // FAULT_DURATION is a soak fault run in one, a matrix cell in the other.
  const homonyms = ['FAULTS', 'FAULT_DURATION'];
  const server = serverSettingSpecs();
  const names = new Set(Object.values(jobs).flatMap((specs) => Object.keys(specs)));
  for (const name of names) {
    const readers = Object.entries(jobs).filter(([, specs]) => name in specs);
    if (readers.length < 2 || homonyms.includes(name)) continue;
    assert.ok(SHARED_SETTING_NAMES.includes(name), `${name} is read by ${readers.map(([job]) => job).join(', ')} but not shared`);
    // One meaning: each job's words are the shared ones, with the job's own added at the end.
    const descs = readers.map(([, specs]) => specs[name].desc);
    const common = descs.reduce((a, b) => (a.length <= b.length ? a : b));
    for (const desc of descs) assert.ok(desc.startsWith(common), `${name}: "${desc}" does not start with "${common}"`);
  }
  for (const name of ['SHUTDOWN_TIMEOUT_MS', 'H2_IDLE_PING_MS']) {
    assert.deepEqual([jobs.faults[name].desc, jobs.faults[name].default], [server[name].desc, server[name].default], `${name}: the server's spec`);
    assert.throws(() => readFaultSettings({ [name]: String(2 ** 31) }), new RegExp(name), 'the server\'s bound');
  }
  // Each job's defaults are data beside the one spec.
  assert.deepEqual(sharedDefaults().VUS, { run: 32, soak: 64, faults: 16 });
  assert.equal(readFaultSettings({}).SHUTDOWN_TIMEOUT_MS, readSettings({}).SHUTDOWN_TIMEOUT_MS);
});

test('slow-stream-readers needs a streaming own RPC: not in the default FAULTS, refused in one line without RPC or with a unary one', async () => {
  assert.ok(!readFaultSettings({}).FAULTS.includes('slow-stream-readers'), 'a default run has no own RPC');
  assert.throws(() => readFaultSettings({ FAULTS: 'none,slow-stream-readers' }),
    /^BenchError: FAULTS=slow-stream-readers opens streams of an own streaming RPC: set RPC/);
  const { ownStreamOf } = await import('../../bench/faults/own-stream.js');
  const shop = { PROTO: 'test/fixtures/own/a/shop/v1/shop.proto', PROTO_PATH: 'test/fixtures/own/a:test/fixtures/own/b' };
  assert.throws(() => ownStreamOf({ ...shop, RPC: 'shop.v1.ShopService/GetOrder' }),
    /^BenchError: RPC=shop.v1.ShopService\/GetOrder is a unary RPC: slow-stream-readers opens streams of a server-streaming or bidirectional RPC/);
  assert.deepEqual(Object.fromEntries(Object.entries(ownStreamOf({ ...shop, RPC: 'shop.v1.ShopService/SyncOrders' })).filter(([k]) => k !== 'request')),
    { rpc: 'shop.v1.ShopService/SyncOrders', kind: 'bidirectional streaming', path: '/shop.v1.ShopService/SyncOrders', relay: true });
});
