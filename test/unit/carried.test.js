// The bytes rules of the verdict and the reading (bench/report/carried.js, verdict.js PER_REQUEST, reading.js): each
// direction spoken of where it carries a payload, on the demo's, an export's and a catalog's figures. The figures are
// those of real reports on the 2-vCPU VM (2026-11-28: `bash bench.sh` with the defaults; `SCENARIO=otlp-traces` and
// `SCENARIO=catalog` with DURATION=3s REPEATS=3 WARMUP=1s CAPACITY=0), medians.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { buildReport } from '../../bench/report/report.js';
import { carriedBy, PAYLOAD_SHARE } from '../../bench/report/carried.js';

/** A run of a column with the figures the bytes rules read, and the own service's record where there is one. */
const run = (mode, rps, bytes, own = null) => ({
  mode, target: 'local', host: '127.0.0.1:1', file: `${mode}-${rps}.json`, scenario: own ? own.name : 'user', connections: 'reuse',
  model: 'closed', rate: null, vus: 32, rps, requests: rps * 8, failed: 0, checks_failed: 0, duration_s: 8,
  latency_ms: { p50: 1, p90: 2, p95: 3, p99: 4 }, data_sent_bytes: 1, data_received_bytes: 1, k6_cpu_pct: 50,
  server_cpu_us_per_request: mode === 'http' ? 90 : 300, server_gc_ms_per_1k_requests: 1, server_eventloop_p99_ms: 1,
  server_rss_peak_mib: 90, server_worker_share_min_pct: 100, server_worker_share_max_pct: 100,
  ...bytes, ...(own ? { run: { own } } : {}),
});
/** An own service's record as bench/own-service.js writes it, with the request and response samples' sizes. */
const ownRecord = (name, request, response) => ({
  name, rpc: 'a.S/M', sizes: {
    request: { json: { min: request[0], median: request[0], max: request[0] }, protobuf: { min: request[1], median: request[1], max: request[1] } },
    response: { json: { min: response[0], median: response[0], max: response[0] }, protobuf: { min: response[1], median: response[1], max: response[1] } },
  },
});
const reportOf = (http, grpc, own = null) => buildReport([
  { key: 'http', runs: [run('http', 6900, http, own)] }, { key: 'grpc', runs: [run('grpc', 2900, grpc, own)] }]);

// The demo: empty requests (a GET, an empty GetUserRequest), the User in answer.
const DEMO = reportOf({ sent_per_request: 71, received_per_request: 290, payload_bytes: 118 },
  { sent_per_request: 72, received_per_request: 83.4, payload_bytes: 25 });
// OTLP trace export: opentelemetry-proto's example request in, an empty ExportTraceServiceResponse out.
const OTLP = reportOf({ sent_per_request: 761, received_per_request: 172, payload_bytes: 2 },
  { sent_per_request: 287.1, received_per_request: 57.4, payload_bytes: 0 }, ownRecord('otlp-traces', [578, 214], [2, 0]));
// A catalog's ListProducts: a small filter in, a page of 50 products out.
const CATALOG = reportOf({ sent_per_request: 266.4, received_per_request: 22772.3, payload_bytes: 22635 },
  { sent_per_request: 125.5, received_per_request: 14651.9, payload_bytes: 14642 }, ownRecord('catalog', [114, 68], [22635, 14642]));

test('what each direction carries: the demo its answers, an export its requests, a catalog both', () => {
  const carried = (report) => {
    const { sent, received } = carriedBy(report, report.modes.http, report.modes.grpc);
    return [sent.carries, received.carries];
  };
  assert.deepEqual(carried(DEMO), [false, true]);
  assert.deepEqual(carried(OTLP), [true, false]);
  assert.deepEqual(carried(CATALOG), [true, true]);
  assert.deepEqual(carriedBy(OTLP, OTLP.modes.http, OTLP.modes.grpc).sent.payload, [578, 214], 'each column in its encoding');
  // At the threshold: a quarter of the bytes a direction moves.
  const edge = (payload) => {
    const column = (mode) => ({ mode, sent_per_request: 100, received_per_request: 100, payload_bytes: payload });
    return carriedBy({ own: null }, column('http'), column('grpc')).received.carries;
  };
  assert.equal(edge(100 * PAYLOAD_SHARE), true);
  assert.equal(edge(100 * PAYLOAD_SHARE - 1), false);
});

test('the verdict speaks of the bytes of each direction that carries a payload, and of no other', () => {
  assert.match(DEMO.verdict[0], /^Per request, gRPC used 3\.3× the server CPU and 0\.29× the received bytes of JSON over HTTP /);
  assert.match(OTLP.verdict[0], /^Per request, gRPC used 3\.3× the server CPU and 0\.38× the sent bytes of JSON over HTTP /);
  assert.match(CATALOG.verdict[0], /^Per request, gRPC used 3\.3× the server CPU, 0\.47× the sent bytes and 0\.64× the received bytes of JSON over HTTP /);
});

test('the reading splits a direction with a payload into encoding and protocol; one without is headers and framing', () => {
  const bytes = (report) => report.reading.filter((line) => line.startsWith('Bytes '));
  const [demoReceived, demoSent] = bytes(DEMO);
  assert.match(demoReceived, /Encoding alone: the payload is 25 vs 118 bytes .*Protocol around it: about 58 vs 172 bytes per response/);
  assert.match(demoSent, /^Bytes sent per request: 72 vs 71 .*; the requests carry no payload to speak of, so this is almost all headers and framing\.$/);
  const [otlpReceived, otlpSent] = bytes(OTLP);
  assert.match(otlpReceived, /; the responses carry no payload to speak of \(0 vs 2 bytes\), so this is almost all headers and framing\.$/);
  assert.match(otlpSent, /Encoding alone: the request is 214 vs 578 bytes \(the median request sample\)\. Protocol around it: about 73 vs 183 bytes per request/);
  const [catalogReceived, catalogSent] = bytes(CATALOG);
  assert.match(catalogReceived, /Encoding alone: the payload is 14642 vs 22635 bytes/);
  assert.match(catalogSent, /Encoding alone: the request is 68 vs 114 bytes/);
});
