// Each rule of the verdict (bench/report/verdict.js VERDICT_RULES) and of the reading (bench/report/reading.js
// READING_RULES) on the records of three built-in services: the demo
// (empty requests, the User in answer), an OTLP trace export (a request of 578 bytes of JSON, an empty answer) and a
// catalog (a small filter in, a page of products out). The figures are those of carried.test.js, from real reports on
// the 2-vCPU VM (2026-11-28); each rule's case adds to them only what the rule reads.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { buildReport } from '../../bench/report/report.js';
import { VERDICT_RULES, verdictFacts } from '../../bench/report/verdict.js';
import { ratioClaim, READING_RULES } from '../../bench/report/reading.js';

const ownRecord = (name, request, response) => ({
  name, rpc: 'a.S/M', sizes: Object.fromEntries([['request', request], ['response', response]].map(([kind, [json, protobuf]]) => [kind, {
    json: { min: json, median: json, max: json }, protobuf: { min: protobuf, median: protobuf, max: protobuf } }])),
});
/** The three services: each column's bytes, and the own service's record (none for the demo). */
const SERVICES = {
  demo: { own: null, http: { sent_per_request: 71, received_per_request: 290, payload_bytes: 118 },
    grpc: { sent_per_request: 72, received_per_request: 83.4, payload_bytes: 25 } },
  otlp: { own: ownRecord('otlp-traces', [578, 214], [2, 0]), http: { sent_per_request: 761, received_per_request: 172, payload_bytes: 2 },
    grpc: { sent_per_request: 287.1, received_per_request: 57.4, payload_bytes: 0 } },
  catalog: { own: ownRecord('catalog', [114, 68], [22635, 14642]),
    http: { sent_per_request: 266.4, received_per_request: 22772.3, payload_bytes: 22635 },
    grpc: { sent_per_request: 125.5, received_per_request: 14651.9, payload_bytes: 14642 } },
};

/**
 * One run of a column of a service, HTTP at 6,900 and gRPC at 2,900 req/s, with what a case adds.
 * @param {keyof typeof SERVICES} service
 * @param {'http'|'grpc'} mode
 * @param {{http?: object, grpc?: object, both?: object}} [add] more figures of a column's run (both: of each)
 */
function runOf(service, mode, add = {}) {
  const { own, ...bytes } = SERVICES[service];
  const extra = { ...add.both, ...add[mode] };
  const rps = mode === 'http' ? 6900 : 2900;
  return {
    mode, target: 'local', host: '127.0.0.1:1', file: `${mode}.json`, scenario: own ? own.name : 'user', connections: 'reuse',
    model: 'closed', rate: null, vus: 32, rps, requests: rps * 8, failed: 0, checks_failed: 0, duration_s: 8,
    latency_ms: { p50: 1, p90: 2, p95: 3, p99: 4 }, data_sent_bytes: 1, data_received_bytes: 1, k6_cpu_pct: 50,
    server_cpu_us_per_request: mode === 'http' ? 90 : 300, server_gc_ms_per_1k_requests: 1, server_eventloop_p99_ms: 1,
    server_rss_peak_mib: 90, server_worker_share_min_pct: 100, server_worker_share_max_pct: 100,
    ...bytes[mode], ...extra, run: { ...(own ? { own } : {}), ...extra.run },
  };
}

/**
 * A report of one service: one run per column (REPEATS=1), with what a case adds.
 * @param {keyof typeof SERVICES} service
 * @param {{http?: object, grpc?: object, both?: object}} [add]
 */
const reportOf = (service, add = {}) => buildReport(['http', 'grpc'].map((key) => ({ key, runs: [runOf(service, /** @type {any} */ (key), add)] })));

/**
 * A report of one service over several repeats, each run as reportOf's, with the server's cores busy (a CPU hog on them:
 * 63% to other processes, machine-noise.js DISTURBED) in the runs listed, in both columns.
 * @param {keyof typeof SERVICES} service
 * @param {number} repeats
 * @param {number[]} busy 1-based runs
 * @param {{http?: object, grpc?: object, both?: object}} [add]
 */
function busyReportOf(service, repeats, busy, add = {}) {
  const noise = (cpus, pct) => ({ cpus, other_pct: pct, steal_pct: 0.5 });
  const runsOf = (mode) => Array.from({ length: repeats }, (_, i) => {
    const run = runOf(service, mode, add);
    const machine = { server: noise('0', busy.includes(i + 1) ? 63 : 1), k6: noise('1', 1) };
    return { ...run, file: `${mode}-${i + 1}.json`, run: { ...run.run, machine } };
  });
  return buildReport(['http', 'grpc'].map((key) => ({ key, runs: runsOf(/** @type {any} */ (key)) })));
}

/** Whether a rule applies to a report, and what it says there. */
function ruled(name, report) {
  const rule = VERDICT_RULES.find((r) => r.name === name);
  assert.ok(rule, `no rule named ${name}`);
  const facts = verdictFacts(report);
  assert.ok(facts, 'the report has a verdict');
  return rule.applies(facts) ? rule.says(facts) : null;
}

const ALL = /** @type {Array<keyof typeof SERVICES>} */ (Object.keys(SERVICES));
const ONE_RUN = 'one run cannot say: the interval needs REPEATS ≥ 3';
const LINK = { name: 'wan', configured: { down_bps: 1e8, up_bps: 1e8, rtt_ms: 40 }, shapers: null, limits: [], measured: null };

test('the rules are named once each, and the verdict is theirs in their order', () => {
  assert.equal(new Set(VERDICT_RULES.map((r) => r.name)).size, VERDICT_RULES.length);
  for (const service of ALL) {
    const report = reportOf(service);
    const facts = verdictFacts(report);
    assert.deepEqual(report.verdict, VERDICT_RULES.filter((r) => r.applies(facts)).map((r) => r.says(facts)).slice(0, 4), service);
  }
});

test('per request: the server CPU, and the bytes of each direction that carries a payload, of no other', () => {
  const says = Object.fromEntries(ALL.map((s) => [s, ruled('per request', reportOf(s))]));
  assert.equal(says.demo, `Per request, gRPC used 3.3× the server CPU and 0.29× the received bytes of JSON over HTTP (${ONE_RUN}).`);
  assert.equal(says.otlp, `Per request, gRPC used 3.3× the server CPU and 0.38× the sent bytes of JSON over HTTP (${ONE_RUN}).`);
  assert.equal(says.catalog, `Per request, gRPC used 3.3× the server CPU, 0.47× the sent bytes and 0.64× the received bytes of JSON over HTTP (${ONE_RUN}).`);
  // Without the server's accounting: said, with why, where the CPU would have stood.
  for (const service of ALL) {
    const report = reportOf(service, { both: { server_cpu_us_per_request: null } });
    assert.match(ruled('per request', report), /server CPU not measured/, service);
  }
});

test('servers\' ceilings: both columns\' wrk/h2load figures where both are ceilings; one where the other was not measured', () => {
  for (const service of ALL) {
    assert.equal(ruled('servers\' ceilings', reportOf(service)), null, `${service}: no capacity pass, no sentence`);
    const both = reportOf(service, { http: { capacity_rps: 28155 }, grpc: { capacity_rps: 18536 } });
    assert.equal(ruled('servers\' ceilings', both), `Servers' ceilings (wrk/h2load): HTTP 28,155, gRPC 18,536 req/s (0.66; ${ONE_RUN}).`, service);
    assert.equal(ruled('one server\'s ceiling', both), null, service);
    // Below what k6 reached it is no ceiling: nothing said of it.
    assert.equal(ruled('servers\' ceilings', reportOf(service, { http: { capacity_rps: 5000 }, grpc: { capacity_rps: 18536 } })), null, service);
    const one = reportOf(service, { http: { capacity_rps: 28155 } });
    assert.match(ruled('one server\'s ceiling', one), /^Servers' ceilings \(wrk\/h2load\): HTTP 28,155 req\/s, gRPC not measured \(/, service);
  }
});

test('the limit each mode hit over a link, with the k6 RPS ratio; nothing of k6 as the client there', () => {
  for (const service of ALL) {
    assert.equal(ruled('the limit each mode hit over a link', reportOf(service)), null, `${service}: on loopback`);
    const over = reportOf(service, { http: { run: { link: LINK }, limit: 'latency (93%)' }, grpc: { run: { link: LINK }, limit: 'bandwidth (97%)' } });
    assert.equal(ruled('the limit each mode hit over a link', over),
      `Over the wan link, HTTP hit the latency limit and gRPC hit the bandwidth limit; the k6 RPS ratio gRPC/HTTP is 0.42 (${ONE_RUN}).`, service);
    for (const name of ['k6 client-bound', 'k6 below its ceiling', 'k6 below its CPU limit', 'whether k6 is the limit is not known']) {
      assert.equal(ruled(name, over), null, `${service}: ${name} over a link`);
    }
  }
});

test('what the k6 RPS row measures, said once: client-bound, below the ceiling, below k6\'s CPU limit, or not known', () => {
  const ceiling = (rps, ceilingRps, cpu) => ({ client_ceiling_rps: ceilingRps, client_share: rps / ceilingRps, k6_cpu_pct: cpu });
  const cases = {
    // HTTP at 0.99 of k6's ceiling.
    'k6 client-bound': [{ http: ceiling(6900, 7000, 95), grpc: ceiling(2900, 5000, 60) },
      /^The k6 RPS row is client-bound for HTTP \(0\.99 of k6's ceiling\), so it measures k6 there, not the server\.$/],
    'k6 below its ceiling': [{ http: ceiling(6900, 10000, 70), grpc: ceiling(2900, 5000, 60) },
      /^k6 stayed below 0\.9 of its ceiling \(HTTP 0\.69, gRPC 0\.58\), so the servers set the limit; the k6 RPS ratio gRPC\/HTTP is 0\.42 /],
    'k6 below its CPU limit': [{}, /^k6 stayed below 90% of its core in every run; the k6 RPS ratio gRPC\/HTTP is 0\.42 /],
    'whether k6 is the limit is not known': [{ both: { k6_cpu_pct: null } },
      /^Whether the k6 RPS row measures k6 or the servers is not known: neither k6's CPU nor the client's ceiling was measured for HTTP and gRPC/],
  };
  for (const service of ALL) {
    for (const [name, [add, sentence]] of Object.entries(cases)) {
      const report = reportOf(service, add);
      assert.match(ruled(name, report), sentence, `${service}: ${name}`);
      const others = Object.keys(cases).filter((other) => other !== name && ruled(other, report) !== null);
      assert.deepEqual(others, [], `${service}: only ${name} applies`);
    }
  }
});

/** What a reading rule says of a report's HTTP/gRPC pair, or null where it does not apply. */
function read(name, report) {
  const rule = READING_RULES.find((r) => r.name === name);
  assert.ok(rule, `no reading rule named ${name}`);
  const [a, b] = [report.modes.http, report.modes.grpc];
  const facts = { report, base: 'http', key: 'grpc', a, b, claim: (label, field, show) => ratioClaim(report, 'http', 'grpc', label, b[field] / a[field], show) };
  return rule.applies(facts) ? rule.says(facts) : null;
}

test('the reading is its rules\' sentences in their order, each rule named once', () => {
  assert.equal(new Set(READING_RULES.map((r) => r.name)).size, READING_RULES.length);
  for (const service of ALL) {
    const report = reportOf(service);
    assert.deepEqual(report.reading, READING_RULES.flatMap((r) => read(r.name, report) ?? []), service);
  }
});

test('reading: failures, too few repeats, the RPS ratio and the servers\' ceilings, on each service', () => {
  for (const service of ALL) {
    assert.equal(read('failures', reportOf(service)), null, service);
    assert.deepEqual(read('failures', reportOf(service, { grpc: { failed: 3 } })), ['3 request(s) or check(s) failed: read the figures below with that in mind.']);
    assert.match(read('too few repeats', reportOf(service))[0], /^One run per column cannot say whether a ratio is settled/);
    assert.match(read('RPS and what set it', reportOf(service))[0], /^grpc served 0\.42× the RPS of http \(2,900 vs 6,900 req\/s, medians\)/);
    assert.equal(read('servers\' ceilings', reportOf(service)), null, service);
    assert.match(read('servers\' ceilings', reportOf(service, { http: { capacity_rps: 28155 }, grpc: { capacity_rps: 18536 } }))[0],
      /the servers reach 18,536 vs 28,155 req\/s \(0\.66×\), their own ceilings; k6 reached 16% of it for grpc and 25% for http/);
  }
});

test('reading: latency by the model, dropped iterations in the open model only', () => {
  for (const service of ALL) {
    const closed = reportOf(service);
    assert.match(read('latency, closed model', closed)[0], /^In the closed model latency follows throughput/);
    assert.equal(read('latency, open model', closed), null);
    const open = reportOf(service, { both: { model: 'open', rate: 3000, dropped_iterations: 0 } });
    assert.equal(read('latency, closed model', open), null);
    assert.deepEqual(read('latency, open model', open), ['At the same arrival rate (3000 req/s), p50 is 1.00 vs 1.00 ms and p99 4.00 vs 4.00 ms.']);
    assert.equal(read('dropped iterations', open), null, `${service}: none dropped`);
    assert.match(read('dropped iterations', reportOf(service, { both: { model: 'open', rate: 3000, dropped_iterations: 0 }, grpc: { dropped_iterations: 40 } }))[0],
      /^Dropped iterations \(http 0, grpc 40\) mean the rate was not sustained/);
  }
});

test('reading: the bytes of each direction, split into encoding and protocol where the direction carries a payload', () => {
  const [demoReceived, demoSent] = read('bytes', reportOf('demo'));
  assert.match(demoReceived, /^Bytes received per request: 83 vs 290 .*Encoding alone: the payload is 25 vs 118 bytes/);
  assert.match(demoSent, /; the requests carry no payload to speak of, so this is almost all headers and framing\.$/);
  const [otlpReceived, otlpSent] = read('bytes', reportOf('otlp'));
  assert.match(otlpReceived, /; the responses carry no payload to speak of \(0 vs 2 bytes\), so this is almost all headers and framing\.$/);
  assert.match(otlpSent, /Encoding alone: the request is 214 vs 578 bytes \(the median request sample\)/);
  const [catalogReceived, catalogSent] = read('bytes', reportOf('catalog'));
  assert.match(catalogReceived, /Encoding alone: the payload is 14642 vs 22635 bytes/);
  assert.match(catalogSent, /Encoding alone: the request is 68 vs 114 bytes/);
});

test('reading: the server\'s accounting, each worker\'s share, and a connection per request', () => {
  for (const service of ALL) {
    assert.match(read('the server\'s accounting', reportOf(service))[0], /^The server's own accounting of the measured run: 300 vs 90 µs of server CPU per request/);
    assert.equal(read('the server\'s accounting', reportOf(service, { both: { server_cpu_us_per_request: null } })), null, service);
    assert.equal(read('each worker\'s share', reportOf(service)), null, `${service}: one worker served all`);
    assert.match(read('each worker\'s share', reportOf(service, { both: { server_worker_share_min_pct: 48, server_worker_share_max_pct: 52 } }))[0],
      /^Each worker served 48–52% of the requests for grpc and 48–52% for http\.$/);
    assert.equal(read('a connection per request', reportOf(service)), null);
    assert.match(read('a connection per request', reportOf(service, { both: { connections: 'per-request' } }))[0], /^Every request opened a new connection/);
  }
});

test('a busy machine: named first; with too few quiet runs the whole verdict, and never that the servers set the limit', () => {
  const ceiling = (rps, ceilingRps) => ({ client_ceiling_rps: ceilingRps, client_share: rps / ceilingRps, k6_cpu_pct: 60 });
  const belowCeiling = { http: ceiling(6900, 10000), grpc: ceiling(2900, 5000) };
  for (const service of ALL) {
    // One run of three on a busy server core: two quiet runs are too few for an interval, so nothing else is concluded.
    const busy = busyReportOf(service, 3, [2], belowCeiling);
    assert.equal(busy.verdict.length, 1, busy.verdict.join('\n'));
    assert.match(busy.verdict[0], /^The machine was busy in run 2 of 3 \(DISTURBED, under the table\): .*Too few quiet runs are left to conclude anything: rerun on a quiet machine\.$/);
    // One of five: the verdict goes on, after saying so, but does not say that the servers set the limit.
    const five = busyReportOf(service, 5, [4], belowCeiling);
    assert.match(five.verdict[0], /^The machine was busy in run 4 of 5 .*What follows rests on those runs too: rerun on a quiet machine to be sure\.$/);
    assert.match(five.verdict[1], /^Per request, gRPC used /);
    assert.ok(!five.verdict.some((v) => /the servers set the limit|stayed below/.test(v)), five.verdict.join('\n'));
    // The same five runs on a quiet machine: that sentence is said.
    const quiet = busyReportOf(service, 5, [], belowCeiling);
    assert.ok(quiet.verdict.some((v) => /so the servers set the limit/.test(v)), quiet.verdict.join('\n'));
    assert.ok(!quiet.verdict.some((v) => /busy/.test(v)));
  }
});

test('a share next to the 0.9 threshold is printed so that the comparison shows: 0.896, not 0.90', () => {
  const ceiling = (rps, ceilingRps) => ({ client_ceiling_rps: ceilingRps, client_share: rps / ceilingRps, k6_cpu_pct: 60 });
  const report = reportOf('demo', { http: ceiling(6900, 6900 / 0.896), grpc: ceiling(2900, 5000) });
  assert.match(ruled('k6 below its ceiling', report), /^k6 stayed below 0\.9 of its ceiling \(HTTP 0\.896, gRPC 0\.58\)/);
});

test('reading: a busy machine first, naming each column\'s disturbed runs', () => {
  for (const service of ALL) {
    const busy = busyReportOf(service, 5, [4]);
    assert.match(busy.reading[0], /^The machine was busy in http run 4, grpc run 4 \(DISTURBED, under the table\): /);
    assert.equal(read('a busy machine', busyReportOf(service, 5, [])), null);
  }
});
