// npm run targets with a streaming RPC (issue 48): the peers answer each kind with the twins' messages, as their users
// write them by hand (route_guide's grpc-js handlers, a fastify SSE route, an NDJSON route, a ws relay); h2load and wrk
// load a server stream against ours and the peer alike; the job's relay rows come from the ws client, and a pair that
// answers different messages is a row not measured, with why. Short bounded runs: about 25 s on a 2-core VM.
import assert from 'node:assert/strict';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { test } from 'node:test';
import { proveEquality } from '../../bench/passes/equality.js';
import { measureCapacity } from '../../bench/passes/capacity.js';
import { prepareOwn, scenariosOf } from '../../bench/own-service.js';
import { allowedCpus, splitCores } from '../../bench/settings/cores.js';
import { k6Bin } from '../helpers/k6.js';
import { sh } from '../helpers/run.js';
import { ROOT, startServer } from '../helpers/server.js';
import { tempDir } from '../helpers/tmp.js';

const OWN = path.join(ROOT, 'test', 'fixtures', 'own');
const SHOP = {
  PROTO: path.join(OWN, 'a', 'shop', 'v1', 'shop.proto'), PROTO_PATH: [path.join(OWN, 'a'), path.join(OWN, 'b')].join(':'),
};
const PAIRS = [['http', 'peer-http'], ['grpc', 'peer-grpc']];

/**
 * Calls each listener of a server (as its mode's twin is called: bench/passes/equality.js) once per sample stream.
 * @returns {Promise<Record<string, string>>} by listener: 'same', or the equality check's one line
 */
async function answersOf(server, own) {
  const verdicts = {};
  for (const pair of PAIRS) {
    for (const listener of pair) {
      const cell = { host: `127.0.0.1:${server.ports[listener]}`, tls: null, stop: async () => {} };
      verdicts[listener] = await proveEquality([pair[0]], own, async () => cell, 64, () => `the ${listener} listener`)
        .then(() => 'same', (err) => err.message);
    }
  }
  return verdicts;
}

test('the peers answer a server stream and a client stream with the same messages as the twins (every sample stream, '
  + 'every message, over SSE, NDJSON and gRPC); a server stream under wrk and h2load: ours and the peer read to the end, '
  + 'the same bytes', async (t) => {
  const scratch = await tempDir(t, 'targets-stream-');
  const [{ scenario, source }] = scenariosOf({ SCENARIO: ['gemini-stream'] });
  const gemini = await prepareOwn(source, scratch, scenario);
  const imports = await prepareOwn({
    ...SHOP, RPC: 'shop.v1.ShopService/ImportOrders', REQUEST: path.join(OWN, 'order-uploads.ndjson'), RESPONSE: path.join(OWN, 'requests.ndjson'),
  }, scratch, 'imports');
  const cores = splitCores(allowedCpus());
  for (const own of [gemini, imports]) {
    const server = await startServer({ MODE: PAIRS.flat().join(','), ...own.server });
    try {
      assert.deepEqual(await answersOf(server, own), { http: 'same', 'peer-http': 'same', grpc: 'same', 'peer-grpc': 'same' }, own.service.rpc.name);
      if (own !== gemini) continue;
      // The server stream under the targets' native tools, each listener in turn (the job gives each a server of its own).
      for (const [ours, peer] of PAIRS) {
        const runs = {};
        for (const listener of [ours, peer]) {
          const run = await measureCapacity({
            listener, scenario, host: `127.0.0.1:${server.ports[listener]}`, connections: 4, durationS: 1, cpus: cores.k6Cpus, own,
          });
          assert.equal(run.tool, listener.endsWith('http') ? 'wrk' : 'h2load', listener);
          assert.ok(run.requests > 0 && run.rps > 0, `${listener}: no stream completed`);
          assert.equal(run.failed, 0, listener);
          // A whole stream a request: 11 to 60 chunks of about 130 bytes of JSON, 63 of protobuf.
          assert.ok(run.received_per_request > 1000, `${listener}: ${run.received_per_request} bytes a stream`);
          runs[listener] = run.received_per_request;
        }
        // The same streams in turn, the same bytes on the wire, give or take the headers (HPACK's table, the HTTP date).
        assert.ok(Math.abs(runs[ours] / runs[peer] - 1) < 0.05, `${ours} ${runs[ours]} against ${peer} ${runs[peer]} bytes a stream`);
      }
    } finally {
      await server.stop();
    }
  }
});

test('npm run targets with a relay: the ws client loads the WebSocket twin and its ws peer, the report has their rows with '
  + 'numbers; the gRPC pair answers different messages (protobufjs writes a map<bool> key false as true from a plain '
  + 'object), so its row is not measured, with why, and the job exits 1', async (t) => {
  const dir = await tempDir(t, 'targets-relay-');
  const { code, stdout, stderr } = await sh(process.execPath, ['bench/cli.js', 'targets'], {
    ...SHOP, RPC: 'shop.v1.ShopService/SyncOrders', REQUEST: path.join(OWN, 'order-syncs.ndjson'), RESPONSE: path.join(OWN, 'order-streams.json'),
    REPEATS: '1', DURATION: '1s', WARMUP: '0s', VUS: '4', RESULTS_DIR: dir, K6_BIN: await k6Bin(),
  }, 60_000);
  assert.equal(code, 1, stderr);
  assert.match(stderr, /these listeners answered the response samples in turn, the same messages \(calls: http 3, peer-http 3, grpc 3\)/);
  assert.match(stderr, /^targets: grpc not measured: .*the peer-grpc listener answered call 0 with another message .*totalsByGift\.true/m);
  assert.match(stdout, /^\| grpc: ours ÷ peer \(`grpc` ÷ `peer-grpc`\) +\| +not measured \| +≥ 0\.95 \| not measured \(the two answer different messages/m);
  assert.match(stdout, /^\| http \(ws -c4\): ours ÷ peer \(`http` ÷ `peer-http`\) +\| +\d\.\d{3} \(\d\.\d{3}–\d\.\d{3}\) \| +≥ 0\.95 \|/m);
  assert.match(stdout, /^\| http \(ws -c4\): A\/A, the machine alone: ours again ÷ ours .*\| +\d\.\d{3} \(/m);
  assert.match(stdout, /bidirectional streaming, every call the first request sample \(3 message\(s\)\)/);
  assert.match(stdout, /not measured for a stream: peer ÷ bare and ours ÷ bare \(the bare listeners serve no streams\)/);
  // The project's k6 scripts against the minimal stream scripts, side by side: a relay each iteration, both over WebSocket and gRPC.
  for (const [script, minimal] of [['http-tests/local.js', 'own-http-stream.js'], ['grpc-tests/local.js', 'own-grpc-stream.js']]) {
    assert.match(stdout, new RegExp(`^\\| k6 ${script} / bench/k6-minimal/${minimal} +\\| +\\d\\.\\d{3} \\(`, 'm'), `${script}: ${stdout}`);
  }
  const report = JSON.parse(await readFile(path.join(dir, (await readdir(dir)).find((f) => /^targets-.*\.json$/.test(f))), 'utf8'));
  assert.deepEqual(Object.keys(report.decomposition_runs), ['http', 'peer-http', 'http (again)']);
  for (const [listener, [run]] of Object.entries(report.decomposition_runs)) {
    assert.equal(run.tool, 'ws', listener);
    assert.ok(run.requests > 0 && run.failed === 0, `${listener}: ${run.requests} calls, ${run.failed} failed`);
    assert.ok(run.client_cpu > 0 && run.client_cpu < 1.5, `${listener}: the client's CPU ${run.client_cpu}`);
  }
  const row = report.results.find((r) => r.target.startsWith('http (ws -c4): ours ÷ peer'));
  assert.equal(row.required, 0.95);
  assert.ok(row.median > 0, JSON.stringify(row));
});
