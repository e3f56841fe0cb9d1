// An own service's bad input (issue 37): each is one line before anything starts, exit 1, from `node server` and from
// the main job alike, never a stack trace. And at run time, a request that does not decode is answered INVALID_ARGUMENT
// or 400 with the reason, and kills no worker.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { promisify } from 'node:util';
import grpc from '@grpc/grpc-js';
import { fromJson } from '../../proto/own/samples.js';
import { loadOwnService } from '../../proto/own/service.js';
import { freePort, ROOT, startServer } from '../helpers/server.js';

const run = promisify(execFile);
const A = path.join(ROOT, 'test/fixtures/own/a');
const B = path.join(ROOT, 'test/fixtures/own/b');
const SHOP = path.join(A, 'shop/v1/shop.proto');
const GOOD = { PROTO: SHOP, PROTO_PATH: `${A}:${B}`, RPC: 'shop.v1.ShopService/GetOrder' };

let dir;
before(async () => { dir = await mkdtemp(path.join(os.tmpdir(), 'own-input-')); });
after(() => rm(dir, { recursive: true, force: true }));

/** A file in the test's folder. */
async function file(name, text) {
  const at = path.join(dir, name);
  await writeFile(at, text);
  return at;
}

/**
 * Runs a command with only these settings (and PATH), expecting it to stop.
 * @returns {Promise<{code: number, stderr: string}>}
 */
async function stops(args, env) {
  try {
    await run(process.execPath, args, { cwd: ROOT, env: { PATH: process.env.PATH, ...env }, timeout: 60_000 });
  } catch (err) {
    return { code: err.code, stderr: err.stderr };
  }
  assert.fail(`${args.join(' ')} did not stop`);
}

/** Both the server and the job stop at once with exit 1 and one line matching `pattern`, no stack. */
async function oneLine(env, pattern, { job = env } = {}) {
  // Free ports, in case the server did not stop: it would then listen there, and the test fail on its exit.
  const ports = { HTTP_PORT: String(await freePort()), GRPC_PORT: String(await freePort()) };
  for (const [who, args, settings] of [['node server', ['server'], { ...env, HOST: '127.0.0.1', ...ports }],
    ['the job', ['bench/cli.js', 'run', '--check-settings'], { ...job, K6_BIN: process.execPath, CAPACITY: '0' }]]) {
    const { code, stderr } = await stops(args, settings);
    const lines = stderr.trim().split('\n');
    assert.equal(code, 1, `${who}: exit ${code}: ${stderr}`);
    assert.equal(lines.length, 1, `${who}: not one line:\n${stderr}`);
    assert.doesNotMatch(stderr, /\n\s+at /, `${who}: a stack trace`);
    assert.match(lines[0], pattern, `${who}: ${lines[0]}`);
  }
}

describe('bad input: one line before anything starts, from the server and the job', () => {
  test('a .proto syntax error names the file and the line', async () => {
    const proto = await file('broken.proto', 'syntax = "proto3";\npackage x;\nmessage M { string a = 1 }\n');
    await oneLine({ PROTO: proto, RPC: 'x.S/M' }, new RegExp(`${proto}: illegal token '}'.*\\(line 3\\)`));
  });

  test('a missing import names PROTO_PATH', async () => {
    await oneLine({ ...GOOD, PROTO_PATH: A }, /the import "common\/v1\/money\.proto" is in none of PROTO_PATH's directories/);
  });

  test('an RPC the schema lacks lists the RPCs it has', async () => {
    await oneLine({ ...GOOD, RPC: 'shop.v1.ShopService/Nope' },
      /RPC=shop\.v1\.ShopService\/Nope: the schema has no such RPC; it has shop\.v1\.ShopService\/GetOrder, shop\.v1\.ShopService\/WatchOrders, /);
  });

  test('the sweep takes a stream, as node server and the main job do: its settings check passes', async () => {
    const { stdout, stderr } = await run(process.execPath, ['bench/cli.js', 'sweep', '--check-settings'],
      { cwd: ROOT, env: { PATH: process.env.PATH, ...GOOD, RPC: 'shop.v1.ShopService/WatchOrders', K6_BIN: process.execPath }, timeout: 60_000 });
    assert.match(`${stdout}${stderr}`, /^sweep: settings and tools checked, nothing run$/m);
  });

  test('the main job refuses, for a stream, the settings it cannot measure one with: gzip, the decomposition', async () => {
    const WATCH = { ...GOOD, RPC: 'shop.v1.ShopService/WatchOrders', K6_BIN: process.execPath, CAPACITY: '0' };
    for (const [settings, line] of [
      [{ COMPRESSION: 'gzip' }, 'COMPRESSION=gzip compresses unary answers only so far'],
      [{ DECOMPOSE: '1' }, 'DECOMPOSE=1 measures unary calls only so far'],
    ]) {
      const { code, stderr } = await stops(['bench/cli.js', 'run', '--check-settings'], { ...WATCH, ...settings });
      assert.equal(code, 1, stderr);
      assert.equal(stderr.trim(), `bench: RPC=shop.v1.ShopService/WatchOrders is a server streaming RPC: ${line}`);
    }
  });

  test('the main job takes a bidirectional stream over the modes that load one, and refuses the others in one line', async () => {
    const SYNC = { ...GOOD, RPC: 'shop.v1.ShopService/SyncOrders', K6_BIN: process.execPath, CAPACITY: '0' };
    await run(process.execPath, ['bench/cli.js', 'run', '--check-settings'], { cwd: ROOT, env: { PATH: process.env.PATH, ...SYNC }, timeout: 60_000 });
    const { code, stderr } = await stops(['bench/cli.js', 'run', '--check-settings'], { ...SYNC, MODES: 'http,connect-json' });
    assert.equal(code, 1, stderr);
    assert.equal(stderr.trim(), 'bench: RPC=shop.v1.ShopService/SyncOrders is a bidirectional streaming RPC: MODES connect-json cannot '
      + 'load it yet; leave it out (http, grpc, connect-grpc do)');
  });

  test('a sample not valid for its message: file, sample index, field and reason', async () => {
    const cases = [
      ['{"orderId":"a"}\n{"nope":1}\n', /sample 1: nope: unknown field: "nope"/],
      ['[{"itemCount":"x"}]', /sample 0: itemCount: /],
      ['[{"orderId":"a"},{"customerId":"99999999999999999999"}]', /sample 1: customerId: .*out of range for int64/],
      ['{"createdAt":"2024-13-01T00:00:00Z"}', /sample 0: createdAt: invalid timestamp/],
    ];
    for (const [i, [text, pattern]] of cases.entries()) {
      const response = await file(`bad-${i}.json`, text);
      await oneLine({ ...GOOD, RESPONSE: response }, new RegExp(`RESPONSE=${response}: ${pattern.source}`));
    }
    const request = await file('bad-request.ndjson', '{"orderId":"1"}\n{"orderId":5}\n');
    const { code, stderr } = await stops(['bench/cli.js', 'run', '--check-settings'], { ...GOOD, REQUEST: request, K6_BIN: process.execPath, CAPACITY: '0' });
    assert.equal(code, 1);
    assert.match(stderr, new RegExp(`^bench: REQUEST=${request}: sample 1: orderId: .*\\n$`));
  });

  test('an empty sample file, and a sample over the size limit', async () => {
    await oneLine({ ...GOOD, RESPONSE: await file('empty.json', '\n') }, /holds no sample/);
    await oneLine({ ...GOOD, RESPONSE: await file('empty-array.json', '[]') }, /holds no sample/);
    // 4 MiB and one byte of a string field: over gRPC's default maximum message size.
    const huge = await file('huge.json', JSON.stringify({ customerNote: 'x'.repeat(4 * 1024 * 1024 + 1) }));
    await oneLine({ ...GOOD, RESPONSE: huge }, /sample 0: \d+ bytes encoded, over the limit of 4194304/);
  });

  test('RPC without PROTO; the connect-node modes are accepted with it', async () => {
    const { code, stderr } = await stops(['server'], { RPC: 'a.B/C' });
    assert.equal(code, 2); // a settings error, as every other
    assert.match(stderr, /invalid setting RPC="a\.B\/C": needs PROTO/);
    // Every listener serves an own service: the job's checks pass with all four modes.
    await run(process.execPath, ['bench/cli.js', 'run', '--check-settings'], { cwd: ROOT, timeout: 60_000,
      env: { PATH: process.env.PATH, ...GOOD, MODES: 'http,grpc,connect-grpc,connect-json', K6_BIN: process.execPath, CAPACITY: '0' } });
  });
});

describe('at run time, a request that does not decode', () => {
  let server;
  before(async () => { server = await startServer({ MODE: 'http,grpc', ...GOOD, RESPONSE: path.join(ROOT, 'test/fixtures/own/responses.json') }); });
  after(() => server?.stop());

  test('HTTP: 400 naming the field; gRPC: INVALID_ARGUMENT with the reason; the worker lives and answers', async () => {
    const [pid] = server.workerPids();
    const post = (body) => fetch(`http://127.0.0.1:${server.ports.http}/shop.v1.ShopService/GetOrder`,
      { method: 'POST', headers: { 'content-type': 'application/json' }, body });
    for (const [body, pattern] of [['{"orderId":5}', /GetOrderRequest\.order_id/], ['{"nope":true}', /key "nope" is unknown/], ['{', /JSON/]]) {
      const res = await post(body);
      assert.equal(res.status, 400, body);
      assert.match((await res.json()).message, pattern);
    }
    const client = new grpc.Client(`127.0.0.1:${server.ports.grpc}`, grpc.credentials.createInsecure());
    const status = await new Promise((resolve) => {
      // Field 1 as a varint where the schema has a string: not a GetOrderRequest.
      client.makeUnaryRequest('/shop.v1.ShopService/GetOrder', (b) => b, (b) => b, Buffer.from([0x0a, 0xff]), (err) => resolve(err));
    });
    client.close();
    assert.equal(status?.code, grpc.status.INVALID_ARGUMENT);
    assert.match(status.details, /not a valid shop\.v1\.GetOrderRequest/);
    const ok = await post('{"orderId":"1"}');
    assert.equal(ok.status, 200);
    assert.deepEqual(server.workerPids(), [pid]);
  });
});

// What a real exporter sends a collector: a logs export of 64 records (an OpenTelemetry SDK's batch processor exports up
// to 512 a call), pretty-printed, about 80 KB. An own service takes up to 4 MiB, gRPC's own default, with no setting.
describe('an own service\'s request limit: 4 MiB with no setting', () => {
  const otlp = path.join(ROOT, 'proto/otlp');
  const LOGS = { PROTO: path.join(otlp, 'opentelemetry/proto/collector/logs/v1/logs_service.proto'), PROTO_PATH: otlp,
    RPC: 'opentelemetry.proto.collector.logs.v1.LogsService/Export' };
  const route = '/opentelemetry.proto.collector.logs.v1.LogsService/Export';
  /** The example export with its one scope's records repeated to `n`, indented as a person would write it. */
  const batch = async (n) => {
    const example = JSON.parse(await readFile(path.join(otlp, 'examples/logs.json'), 'utf8'));
    const scope = example.resourceLogs[0].scopeLogs[0];
    scope.logRecords = Array.from({ length: n }, (_, i) => ({ ...scope.logRecords[0], body: { stringValue: `record ${i}: ${'x'.repeat(900)}` } }));
    return JSON.stringify(example, null, 2);
  };
  const post = (server, body) => fetch(`http://127.0.0.1:${server.ports.http}${route}`,
    { method: 'POST', headers: { 'content-type': 'application/json' }, body });

  test('node server takes a 64-record logs export over both twins; MAX_BODY_BYTES lowers the limit', async () => {
    const body = await batch(64);
    assert.ok(body.length > 64 * 1024, `${body.length} bytes: more than the demo's 64 KiB`);
    const server = await startServer({ MODE: 'http,grpc', ...LOGS });
    try {
      const res = await post(server, body);
      assert.equal(res.status, 200, await res.clone().text());
      // The same export as protobuf over gRPC: what the JSON twin decoded, encoded again by the server's own schema.
      const { rpc } = loadOwnService(LOGS);
      const bytes = Buffer.from(rpc.requestType.encode(fromJson(rpc.requestType, body)).finish());
      assert.ok(bytes.length > 64 * 1024, `${bytes.length} bytes of protobuf`);
      const client = new grpc.Client(`127.0.0.1:${server.ports.grpc}`, grpc.credentials.createInsecure());
      const status = await new Promise((resolve) => {
        client.makeUnaryRequest(route, (b) => b, (b) => b, bytes, (err) => resolve(err ?? null));
      });
      client.close();
      assert.equal(status, null, status?.details);
    } finally {
      await server.stop();
    }
    const small = await startServer({ MODE: 'http', ...LOGS, MAX_BODY_BYTES: '65536' });
    try {
      assert.equal((await post(small, body)).status, 413);
    } finally {
      await small.stop();
    }
  });
});
