// COMPRESSION=gzip: each server compresses every scenario's response when the client asks and only then,
// k6's gRPC client asks on every call, and the main job measures raw and gzip side by side.
import assert from 'node:assert/strict';
import http2 from 'node:http2';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import { after, before, describe, test } from 'node:test';
import { grpcFrame, methodOf, responseTypeOf, toProto3Json } from '../../proto/index.js';
import { rpcPath, SCENARIOS } from '../../proto/payload.js';
import { httpRequest } from '../helpers/clients.js';
import { k6Bin, k6Run } from '../helpers/k6.js';
import { h2Request } from '../helpers/proc.js';
import { sh } from '../helpers/run.js';
import { startServer } from '../helpers/server.js';

/** One unary call of a scenario's RPC over bare node:http2, with `headers` added to gRPC's own. */
function grpcCall(port, name, headers = {}) {
  const { rpc, request } = SCENARIOS[name];
  const type = methodOf(rpc).resolvedRequestType;
  return h2Request(port, {
    method: 'POST', path: `/${rpcPath(rpc)}`, timeoutMs: 10000,
    headers: { 'content-type': 'application/grpc', te: 'trailers', ...headers },
    body: grpcFrame(type.encode(type.fromObject(request)).finish()),
  });
}

/** The one message of a unary response body: its compressed flag, and the message decoded (gunzipped first when flagged). */
function messageOf(name, body) {
  assert.ok(body.length >= 5, `a message frame, got ${body.length} bytes`);
  const flag = body[0];
  assert.equal(body.readUInt32BE(1), body.length - 5, 'the prefix\'s length is the message\'s');
  const bytes = flag === 1 ? gunzipSync(body.subarray(5)) : body.subarray(5);
  const type = responseTypeOf(SCENARIOS[name].rpc);
  return { flag, payload: toProto3Json(type, type.decode(bytes)) };
}

const GZIP_ASKED = { http: { 'accept-encoding': 'gzip' }, grpc: { 'grpc-accept-encoding': 'identity,gzip' } };

describe('a server with COMPRESSION=gzip', () => {
  let server;
  before(async () => { server = await startServer({ MODE: 'both', COMPRESSION: 'gzip' }); });
  after(() => server?.stop());

  for (const [name, { httpPath, check }] of Object.entries(SCENARIOS)) {
    test(`${name}: HTTP gzips the body for Accept-Encoding: gzip, and only then`, async () => {
      const asked = await httpRequest(server.httpPort, { path: httpPath, headers: GZIP_ASKED.http, timeoutMs: 10000 });
      assert.equal(asked.status, 200);
      assert.equal(asked.headers['content-encoding'], 'gzip');
      assert.ok(check(JSON.parse(gunzipSync(asked.raw).toString('utf8'))), 'the gunzipped body is the payload');
      for (const headers of [{}, { 'accept-encoding': 'identity' }]) {
        const plain = await httpRequest(server.httpPort, { path: httpPath, headers, timeoutMs: 10000 });
        assert.equal(plain.status, 200);
        assert.equal(plain.headers['content-encoding'], undefined, `not compressed for ${JSON.stringify(headers)}`);
        assert.ok(check(JSON.parse(plain.body)));
      }
    });

    test(`${name}: gRPC gzips the message (grpc-encoding gzip, flag 1) for grpc-accept-encoding gzip, and only then`, async () => {
      const asked = await grpcCall(server.grpcPort, name, GZIP_ASKED.grpc);
      assert.equal(asked.grpcStatus, '0');
      assert.equal(asked.headers['grpc-encoding'], 'gzip');
      const gzipped = messageOf(name, asked.body);
      assert.equal(gzipped.flag, 1, 'the compressed flag of the message frame');
      assert.ok(check(gzipped.payload), 'the gunzipped message is the payload');
      for (const headers of [{}, { 'grpc-accept-encoding': 'identity,deflate' }]) {
        const plain = await grpcCall(server.grpcPort, name, headers);
        assert.equal(plain.grpcStatus, '0');
        assert.equal(plain.headers['grpc-encoding'], 'identity', `not compressed for ${JSON.stringify(headers)}`);
        const raw = messageOf(name, plain.body);
        assert.equal(raw.flag, 0);
        assert.ok(check(raw.payload));
      }
    });
  }
});

test('a server with COMPRESSION off (the default) answers raw even when asked: the raw columns stay raw', async () => {
  const server = await startServer({ MODE: 'both' });
  try {
    const { httpPath, check } = SCENARIOS['users-100'];
    const http = await httpRequest(server.httpPort, { path: httpPath, headers: GZIP_ASKED.http });
    assert.equal(http.headers['content-encoding'], undefined);
    assert.ok(check(JSON.parse(http.body)));
    const grpc = await grpcCall(server.grpcPort, 'users-100', GZIP_ASKED.grpc);
    assert.equal(grpc.headers['grpc-encoding'], 'identity');
    assert.equal(messageOf('users-100', grpc.body).flag, 0);
  } finally {
    await server.stop();
  }
});

test('k6\'s gRPC client lists gzip in grpc-accept-encoding on every call, whatever the script asks', async () => {
  // A stand-in gRPC server that records each call's headers and answers UNIMPLEMENTED (the script's setup() then aborts).
  const seen = [];
  const probe = http2.createServer();
  probe.on('stream', (stream, headers) => {
    seen.push(headers);
    stream.respond({ ':status': 200, 'content-type': 'application/grpc', 'grpc-status': '12' }, { endStream: true });
  });
  await new Promise((resolve) => probe.listen(0, '127.0.0.1', resolve));
  try {
    const host = `127.0.0.1:${/** @type {import('node:net').AddressInfo} */ (probe.address()).port}`;
    await k6Run(['--vus', '1', '--iterations', '1', '-e', `LOCAL_GRPC_HOST=${host}`, '-e', 'COMPRESSION=off', 'grpc-tests/local.js'],
      { timeoutMs: 60000 });
    assert.ok(seen.length >= 1, 'k6 made its setup() call');
    for (const headers of seen) assert.match(String(headers['grpc-accept-encoding']), /(^|,\s*)gzip(\s*,|$)/);
  } finally {
    probe.close();
  }
});

test('COMPRESSION=brotli stops the main job with one line naming the variable', async () => {
  const { code, stderr, stdout } = await sh('node', ['bench/cli.js', 'run'], { COMPRESSION: 'brotli', K6_BIN: '/nonexistent/k6' });
  assert.notEqual(code, 0);
  assert.match(stderr, /invalid setting COMPRESSION="brotli"/);
  assert.equal(stderr.trim().split('\n').length, 1, stderr);
  assert.doesNotMatch(stdout + stderr, /measuring|\n\s+at /);
});

describe('COMPRESSION=gzip bash bench.sh (short run, users-100)', () => {
  let dir;
  let bench;
  before(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'bench-gzip-'));
    bench = await sh('bash', ['bench.sh'], {
      K6_BIN: k6Bin(), COMPRESSION: 'gzip', SCENARIO: 'users-100', DURATION: '2s', WARMUP: '0s', REPEATS: '1', VUS: '4', RESULTS_DIR: dir,
      CALIBRATE: '0s', CAPACITY: '0', // not what this test checks (bench.test.js does)
    }, 240000);
  });
  after(() => rm(dir, { recursive: true, force: true }));

  test('raw and gzip columns of each mode, interleaved; gzip receives fewer bytes per request', async () => {
    assert.equal(bench.code, 0, bench.stderr);
    const progress = bench.stderr.split('\n').filter((l) => /^\[\d\/4\] users-100 · /.test(l)).map((l) => l.split(' · ')[1]);
    assert.deepEqual(progress, ['http', 'grpc', 'http+gzip', 'grpc+gzip']);
    const report = JSON.parse(await readFile(path.join(dir, (await readdir(dir)).find((f) => /^compare-.*\.json$/.test(f))), 'utf8'));
    assert.deepEqual(report.order, ['http', 'grpc', 'http+gzip', 'grpc+gzip']);
    for (const mode of ['http', 'grpc']) {
      const raw = report.modes[mode];
      const gzip = report.modes[`${mode}+gzip`];
      assert.equal(raw.compression, 'off');
      assert.equal(gzip.compression, 'gzip');
      assert.equal(gzip.failed + gzip.checks_failed, 0, 'k6 decoded the gzipped responses');
      assert.ok(gzip.received_per_request < raw.received_per_request,
        `${mode}: gzip ${gzip.received_per_request} bytes per request, raw ${raw.received_per_request}`);
      // Before compression, not after: the same within the digits of each user's port and worker pid, which differ between
      // the two columns' servers (a pid of 9998 and one of 10002 make 100 users 100 bytes apart).
      assert.ok(Math.abs(gzip.payload_bytes - raw.payload_bytes) <= 0.05 * raw.payload_bytes,
        `the payload row is the payload before compression: gzip ${gzip.payload_bytes}, raw ${raw.payload_bytes}`);
      const pair = report.compression.find((c) => c.compressed === `${mode}+gzip`);
      assert.equal(pair.raw, mode);
      assert.ok(pair.server_cpu_us_per_request.raw > 0 && pair.server_cpu_us_per_request.compressed > 0);
    }
    assert.deepEqual(Object.keys(report.ratios), ['grpc/http', 'http+gzip/http', 'grpc+gzip/http+gzip', 'grpc+gzip/grpc']);
    assert.ok(!report.notes.some((n) => /NOT COMPARABLE/.test(n)), report.notes.join('\n'));
    assert.deepEqual(report.provenance.differences, []);
    assert.match(bench.stdout, /\| HTTP \(JSON\) \+ gzip local \| gRPC \(protobuf\) \+ gzip local \|/);
    assert.match(bench.stdout, /\*\*Compression\.\*\*/);
    assert.match(bench.stdout, /\| grpc → grpc\+gzip \|/);
  });

  test('each summary records what was asked, and its server\'s COMPRESSION', async () => {
    const summaries = (await readdir(dir)).filter((f) => /^k6-(http|grpc)(-gzip)?-local-.*\.json$/.test(f));
    assert.equal(summaries.length, 4);
    for (const file of summaries) {
      const { bench: recorded } = JSON.parse(await readFile(path.join(dir, file), 'utf8'));
      const expected = /-gzip-local-/.test(file) ? 'gzip' : 'off';
      assert.equal(recorded.compression, expected, file);
      assert.equal(recorded.run.provenance.server.COMPRESSION, expected, file);
    }
  });
});
