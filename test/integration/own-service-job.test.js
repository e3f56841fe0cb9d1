// The main job with an own service (issue 37): a built-in one by name (OTLP traces) and a schema it has never seen
// (RPC, PROTO, PROTO_PATH, REQUEST, RESPONSE) print the usual report with the sizes table, record the schema's and the
// samples' SHA-256 in every result, and refuse to compare twins that answer different messages.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFile, readdir } from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { k6Bin } from '../helpers/k6.js';
import { sh } from '../helpers/run.js';
import { ROOT, startServer } from '../helpers/server.js';
import { tempDir } from '../helpers/tmp.js';

const A = path.join(ROOT, 'test/fixtures/own/a');
const B = path.join(ROOT, 'test/fixtures/own/b');
const RESPONSES = path.join(ROOT, 'test/fixtures/own/responses.json');
const SHOP = {
  PROTO: path.join(A, 'shop/v1/shop.proto'), PROTO_PATH: `${A}:${B}`, RPC: 'shop.v1.ShopService/GetOrder',
  REQUEST: path.join(ROOT, 'test/fixtures/own/requests.ndjson'), RESPONSE: RESPONSES,
};
// Short: what is checked is the plumbing and the report, not the figures.
const SHORT = { REPEATS: '1', DURATION: '2s', WARMUP: '0s', CAPACITY: '0', CALIBRATE: '0', VUS: '4' };
const sha256 = async (file) => createHash('sha256').update(await readFile(file)).digest('hex');

/** The job's JSON report of a run in `dir`. */
async function jsonReport(dir) {
  const name = (await readdir(dir)).find((f) => /^compare-.*\.json$/.test(f));
  assert.ok(name, `no JSON report in ${dir}`);
  return JSON.parse(await readFile(path.join(dir, name), 'utf8'));
}

let k6;
before(async () => { k6 = await k6Bin(); });

describe('bash bench.sh with an own service', () => {
  test('SCENARIO=otlp-traces: the table, the sizes table, and the schema and samples named with their SHA-256', async (t) => {
    const dir = await tempDir(t, 'own-otlp-');
    const { code, stdout, stderr } = await sh(process.execPath, ['bench/cli.js', 'run'],
      { ...SHORT, SCENARIO: 'otlp-traces', RESULTS_DIR: dir, K6_BIN: k6 }, 180_000);
    assert.equal(code, 0, stderr);
    assert.match(stderr, /opentelemetry\.proto\.collector\.trace\.v1\.TraceService\/Export: 1 request and 1 response sample\(s\); every sample went through the twins' codecs as the same message, and every twin answered the response samples in turn/);
    assert.match(stdout, /### Scenario `otlp-traces`/);
    // The example request's sizes: its canonical mapping (enums by name, where the example has numbers) and protobuf.
    assert.match(stdout, /\| request \(1 sample\)\s+\|\s+578 \|\s+214 \|\s+2\.70 \|/);
    assert.match(stdout, /Requests carry the bytes/);
    const report = await jsonReport(dir);
    const scenario = report; // the JSON holds the first scenario's report at its top (bench/report/files.js)
    const { own } = report;
    assert.equal(own.rpc, 'opentelemetry.proto.collector.trace.v1.TraceService/Export');
    const traces = path.join(ROOT, 'proto/otlp/examples/traces.json');
    assert.deepEqual(own.samples.request, { file: traces, sha256: await sha256(traces), count: 1 });
    assert.ok(own.schema.some((f) => f.path.endsWith('trace/v1/trace_service.proto')));
    for (const f of own.schema) assert.equal(f.sha256, await sha256(f.path));
    // Every run's summary carries it too.
    for (const m of Object.values(scenario.modes)) assert.equal(m.failed, 0);
  });

  test('a schema it has never seen: imports across two directories, requests and responses in turn', async (t) => {
    const dir = await tempDir(t, 'own-shop-');
    const { code, stdout, stderr } = await sh(process.execPath, ['bench/cli.js', 'run'], { ...SHORT, ...SHOP, RESULTS_DIR: dir, K6_BIN: k6 }, 180_000);
    assert.equal(code, 0, stderr);
    assert.match(stdout, /### Scenario `shop\.v1\.ShopService\.GetOrder`/);
    assert.match(stdout, /\| response \(5 samples\)/);
    // The memory each worker holds for them, measured in a fresh process (bench/own-service.js ownMemory).
    assert.match(stdout, /^- memory: \d+\.\d MiB of RSS added to each server worker for the schema and the 5 response sample\(s\) \(\d+\.\d MiB reachable in V8's heap\)$/m);
    const files = await readdir(dir);
    assert.ok(files.some((f) => /^k6-grpc-local-shop\.v1\.ShopService\.GetOrder-.*\.json$/.test(f)), files.join(' '));
    const summary = JSON.parse(await readFile(path.join(dir, files.find((f) => /^k6-http-local-.*\.json$/.test(f))), 'utf8'));
    assert.equal(summary.bench.run.own.samples.response.sha256, await sha256(RESPONSES));
    assert.ok(summary.bench.run.own.memory.worker_heap_bytes > 0 && summary.bench.run.own.memory.worker_rss_bytes >= 0,
      JSON.stringify(summary.bench.run.own.memory));
    assert.equal(summary.metrics.checks.values.fails, 0);
  });
});

test('catalog over TLS with gzip: both twins verified by k6 and compressed, the sizes table before compression', async (t) => {
  const dir = await tempDir(t, 'own-tls-gzip-');
  const { code, stdout, stderr } = await sh(process.execPath, ['bench/cli.js', 'run'],
    { ...SHORT, DURATION: '1s', SCENARIO: 'catalog', TLS: '1', COMPRESSION: 'gzip', RESULTS_DIR: dir, K6_BIN: k6 }, 180_000);
  assert.equal(code, 0, stderr);
  assert.match(stdout, /### Scenario `catalog`.* · TLS ·/);
  const { modes } = await jsonReport(dir);
  assert.deepEqual(Object.keys(modes).sort(), ['grpc', 'grpc+gzip', 'http', 'http+gzip']);
  for (const m of Object.values(modes)) assert.equal(m.failed, 0);
  // A page of 50 products compresses: each gzip column receives well under half its raw column's bytes.
  for (const mode of ['http', 'grpc']) assert.ok(modes[`${mode}+gzip`].received_per_request < modes[mode].received_per_request / 2, mode);
  assert.match(stdout, /\| response \(3 samples\) \|\s+22,635 \(22,392–22,768\) \|/);
});

describe('twins that answer different messages are not compared', () => {
  // Two servers a user started by hand for TARGET=remote, one given other answers than the other.
  let http;
  let grpc;
  before(async () => {
    const { REQUEST, ...serving } = SHOP; // the server reads no REQUEST
    void REQUEST;
    http = await startServer({ MODE: 'http', ...serving });
    // The same samples but sample 1's orderId (test/fixtures/own/responses-other.json).
    grpc = await startServer({ MODE: 'grpc', ...serving, RESPONSE: path.join(ROOT, 'test/fixtures/own/responses-other.json') });
  });
  after(async () => { await http?.stop(); await grpc?.stop(); });

  test('the job stops before measuring, naming the twin, the sample and the field', async (t) => {
    const dir = await tempDir(t, 'own-differ-');
    const { code, stdout, stderr } = await sh(process.execPath, ['bench/cli.js', 'run'], {
      ...SHORT, ...SHOP, TARGET: 'remote', REMOTE_HTTP_HOST: `127.0.0.1:${http.ports.http}`, REMOTE_GRPC_HOST: `127.0.0.1:${grpc.ports.grpc}`,
      RESULTS_DIR: dir, K6_BIN: k6,
    });
    assert.equal(code, 1, stdout);
    assert.match(stderr, /the grpc twin answered call \d+ with another message than RESPONSE sample \d+ \(first difference at [a-zA-Z.[\]0-9]+\)/);
    assert.equal(stderr.trim().split('\n').filter((l) => /^bench:/.test(l)).length, 1);
    assert.deepEqual((await readdir(dir)).filter((f) => f.startsWith('k6-')), [], 'k6 ran');
  });
});
