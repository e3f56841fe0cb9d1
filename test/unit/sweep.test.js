// The sweep's pure parts: the model's ceilings, the flags and their causes, the verdict sentences, the 1.0 contour
// and the heat map's SVG, the answer for one link, and the sweep's settings (bench/report/sweep*.js,
// bench/settings/sweep.js). No server, no k6: test/integration/sweep.test.js runs the sweep itself.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  crossing, H2_INITIAL_WINDOW, likelyCauses, measuredLimit, offBy, predict, profileOf, verdictLine,
} from '../../bench/report/sweep-model.js';
import { answerFor, buildSweep, renderSweep } from '../../bench/report/sweep.js';
import { CONTOUR_LABEL, contourPoints, rowCrossings, sweepMapSvg } from '../../bench/report/sweep-map.js';
import { cellEnv, readSweepSettings } from '../../bench/settings/sweep.js';
import { readBenchSettings } from '../../bench/settings/bench.js';

const machine = { serverCores: 1, clientCores: 1 };
// Per-request figures of the shape the sweep measures: HTTP's bigger on the link, gRPC's dearer on the CPU.
const HTTP = { link_down_bytes: 356, link_up_bytes: 139, server_us: 200, client_us: 80, response_bytes: 289, extra_ms: 1 };
const GRPC = { link_down_bytes: 201, link_up_bytes: 177, server_us: 320, client_us: 80, response_bytes: 82, extra_ms: 3 };

test('predict: the least of the bandwidth, latency, server and client ceilings, each by its formula', () => {
  const thin = predict(HTTP, { bandwidth: 2e6, rttMs: 20, vus: 32 }, machine, { mode: 'http' });
  assert.equal(thin.limit, 'bandwidth');
  assert.ok(Math.abs(thin.rps - 2e6 / (8 * 356)) < 1e-9); // the busier way, down
  assert.ok(Math.abs(thin.ceilings.latency - 32 / 0.021) < 1e-9); // RTT + the larger of extra_ms and CPU per request
  assert.ok(Math.abs(thin.ceilings.server - 1e6 / 200) < 1e-9);
  assert.ok(Math.abs(thin.ceilings.client - 1e6 / 80) < 1e-9);
  assert.equal(predict(HTTP, { bandwidth: 1e9, rttMs: 60, vus: 8 }, machine, { mode: 'http' }).limit, 'latency');
  assert.equal(predict(GRPC, { bandwidth: 1e9, rttMs: 20, vus: 1000 }, machine, { mode: 'grpc' }).limit, 'server');
  // Open model: the offered rate replaces the latency ceiling.
  const open = predict(HTTP, { bandwidth: 1e9, rttMs: 20, rate: 700 }, machine, { mode: 'http' });
  assert.deepEqual([open.limit, open.rps], ['rate', 700]);
  assert.equal(open.ceilings.latency, undefined);
});

test('predict: the window ceiling is gRPC\'s alone, for responses past HTTP/2\'s initial window', () => {
  const blob = { ...GRPC, link_down_bytes: 1.1e6, response_bytes: 1048600, server_us: 900 };
  const p = predict(blob, { bandwidth: 10e9, rttMs: 60, vus: 8 }, machine, { mode: 'grpc' });
  assert.ok(Math.abs(p.ceilings.window - (8 * H2_INITIAL_WINDOW) / (0.06 * 1048600)) < 1e-9);
  assert.equal(p.limit, 'window');
  assert.equal(predict({ ...blob }, { bandwidth: 10e9, rttMs: 60, vus: 8 }, machine, { mode: 'http' }).ceilings.window, undefined);
  assert.equal(predict(GRPC, { bandwidth: 10e9, rttMs: 60, vus: 8 }, machine, { mode: 'grpc' }).ceilings.window, undefined);
  // Measured within 15% of it, below every other ceiling: window-bound, whatever limitOf said.
  assert.equal(measuredLimit('none reached 80% (largest: latency 20%)', { mode: 'grpc', rps: p.ceilings.window * 1.1 }, p), 'window');
  assert.equal(measuredLimit('none reached 80% (largest: latency 20%)', { mode: 'grpc', rps: p.ceilings.window * 2 }, p), 'none');
  assert.equal(measuredLimit('bandwidth (99%)', { mode: 'http', rps: 10 }, { ceilings: { bandwidth: 10 } }), 'bandwidth');
});

test('profileOf: medians of the bytes per request, the busiest run\'s CPU per request, the least extra time beyond the RTT', () => {
  const runs = [
    { rps: 2500, link_down_per_request: 300, link_up_per_request: 100, server_us: 100, client_us: 50, received_per_request: 289, extra_ms: 4 },
    { rps: 120, link_down_per_request: 400, link_up_per_request: 140, server_us: 300, client_us: 70, received_per_request: 289, extra_ms: 1.5 },
    { rps: 900, link_down_per_request: 360, link_up_per_request: 120, server_us: 200, client_us: 90, received_per_request: 289, extra_ms: -0.2 },
  ];
  assert.deepEqual(profileOf(runs), { link_down_bytes: 360, link_up_bytes: 120, server_us: 100, client_us: 50, response_bytes: 289, extra_ms: 0 });
  assert.equal(profileOf([{ link_down_per_request: null }]), null);
});

test('offBy and likelyCauses: what is more than 15% off, and why', () => {
  const cell = { ratio: 0.9, predicted_ratio: 1.0, modes: { http: { rps: 1000, predicted_rps: 1050 }, grpc: { rps: 700, predicted_rps: 1000 } } };
  assert.deepEqual(offBy(cell), ['grpc measured 30% below the model']);
  assert.deepEqual(offBy({ ...cell, ratio: 1.5 }), ['grpc measured 30% below the model', 'ratio 1.50 against 1.00 predicted']);
  const causes = likelyCauses({ mode: 'grpc', rps: 700, k6_cpu_pct: 95, failed: 0, link_down_per_request: 260, p50_ms: 40, p99_ms: 90 },
    { rps: 1000, limit: 'latency' }, GRPC, { rttMs: 20, connections: 'per-request', vus: 32 });
  assert.match(causes[0], /toxiproxy does not delay the TCP handshake/);
  assert.ok(causes.some((c) => /^client: k6 at 95%/.test(c)));
  assert.ok(causes.some((c) => /link bytes down per request 260 against the sweep's median 201/.test(c)));
  assert.ok(causes.some((c) => /^queueing: requests took 45.7 ms on average \(VUs ÷ RPS\) against an RTT of 20 ms, p50 40.0 ms and p99 90.0 ms/.test(c)));
  // Predicted server-bound, measured at 1000 req/s × 300 µs = 30% of the one core: not the CPU, and the wait is named.
  const idle = likelyCauses({ mode: 'grpc', rps: 1000, k6_cpu_pct: 36, failed: 0, link_down_per_request: 201, p50_ms: 40, p99_ms: 76, server_us: 300 },
    { rps: 3125, limit: 'server' }, GRPC, { rttMs: 20, connections: 'keep-alive', vus: 64, serverCores: 1 });
  assert.ok(idle.some((c) => /^not the server's CPU: its core was 30% busy/.test(c)), idle.join(' | '));
  assert.ok(idle.some((c) => /^queueing: requests took 64.0 ms .* waited in toxiproxy or in tbf's queue/.test(c)), idle.join(' | '));
  assert.ok(!idle.some((c) => /misses what held/.test(c)));
  // 1559 req/s × 510 µs = 80% busy, each request dearer than the profile's 320 µs: the CPU, and why the model missed it.
  const busy = likelyCauses({ mode: 'grpc', rps: 1559, k6_cpu_pct: 42, failed: 0, link_down_per_request: 201, p50_ms: 36, p99_ms: 79, server_us: 510 },
    { rps: 3125, limit: 'server' }, GRPC, { rttMs: 20, connections: 'keep-alive', vus: 64, serverCores: 1 });
  assert.ok(busy.some((c) => /^server CPU per request 510 µs .* against the model's 320 µs/.test(c)), busy.join(' | '));
  assert.ok(busy.some((c) => /waited for the server's core, 80% busy/.test(c)), busy.join(' | '));
});

test('verdictLine: who serves more below and above the crossing, and what holds the loser', () => {
  const row = [
    { bandwidth: 1e6, ratio: 1.8, http_limit: 'bandwidth', grpc_limit: 'bandwidth', kind: 'measured' },
    { bandwidth: 10e6, ratio: 1.4, http_limit: 'bandwidth', grpc_limit: 'bandwidth', kind: 'measured' },
    { bandwidth: 100e6, ratio: 0.6, http_limit: 'server', grpc_limit: 'server', kind: 'measured' },
  ];
  const at = crossing(row[1], row[2], 1); // log-interpolated: 0.4 of the way from 10 to 0.6, of a decade
  assert.ok(Math.abs(at - 10 ** (7 + 0.4 / 0.8)) < 1);
  assert.equal(verdictLine({ rttMs: 20, concurrency: '64 concurrent clients' }, row),
    'at 20 ms with 64 concurrent clients, gRPC serves more requests below about 32 Mbit/s (bandwidth); above it JSON over HTTP/1.1 does (server CPU)');
  const tie = row.map((c) => ({ ...c, ratio: 0.98, http_limit: 'latency', grpc_limit: 'latency', kind: 'predicted' }));
  assert.equal(verdictLine({ rttMs: 300, concurrency: '8 concurrent clients' }, tie),
    'at 300 ms with 8 concurrent clients, they tie within 5% from 1 Mbit/s to 100 Mbit/s (latency) (predicted)');
});

test('the 1.0 contour: a stroke through each row where its ratio crosses 1', () => {
  assert.deepEqual(rowCrossings([2, 0.5]), [0.5]);
  assert.deepEqual(rowCrossings([2, 1.5, null, 0.5]), []);
  assert.deepEqual(rowCrossings([0.5, 0.8]), []);
  assert.deepEqual(contourPoints([[2, 0.5], [4, 4]]), [{ x: 0.5, y: -0.5, line: 0, order: 0 }, { x: 0.5, y: 0.5, line: 0, order: 1 }]);
});

/** Measured runs of a cell, as runRecord gives them. */
const runsOf = (rps, profile, p50, p99) => [{
  rps, p50_ms: p50, p99_ms: p99, requests: rps * 3, failed: 0, received_per_request: profile.response_bytes, sent_per_request: 70,
  link_down_per_request: profile.link_down_bytes, link_up_per_request: profile.link_up_bytes, link_down_packets_per_request: 1,
  link_up_packets_per_request: 1, server_cpu_us_per_request: profile.server_us, proxy_cpu_us_per_request: 0, server_us: profile.server_us,
  client_us: profile.client_us, k6_cpu_pct: 20, limit_text: 'bandwidth (99%)', summary: 'x.json',
}];

function twoCellSweep() {
  const cell = (bandwidth, http, grpc) => ({
    scenario: 'user', bandwidth_bps: bandwidth, rtt_ms: 20, vus: 32, connections: 'reuse', link_check: null,
    runs: { http: runsOf(http, HTTP, 21, 30), grpc: runsOf(grpc, GRPC, 23, 28) },
  });
  return buildSweep({
    measured: [cell(2e6, 700, 1200), cell(200e6, 1450, 900)], machine, model: 'closed',
    extend: { bandwidths: [1e9, 10e9], rtts: [300], concurrency: [1000, 10000] },
  });
}

test('buildSweep: measured cells with the model beside, flags, the predicted extension and the verdicts', () => {
  const report = twoCellSweep();
  assert.equal(report.cells.length, 2);
  const [thin, wide] = report.cells;
  assert.ok(Math.abs(thin.ratio - 1200 / 700) < 1e-9);
  assert.ok(Math.abs(thin.predicted_ratio - (2e6 / (8 * 201)) / (2e6 / (8 * 356))) < 1e-9);
  assert.equal(thin.flagged, null);
  // gRPC at 200 Mbit/s: the model says latency, 32 ÷ 23 ms = 1,391 req/s; 900 is 35% below.
  assert.match(wide.flagged.reason, /^grpc measured 35% below the model/);
  assert.equal(report.largest_disagreement.mode, 'grpc');
  // 2 bandwidths measured + 2 extended, 1 VU level + 2 extended, 1 RTT + 300 ms: 4 × 3 × 2 = 24 map cells, 2 measured.
  assert.equal(report.predicted.length, 22);
  assert.ok(report.predicted.every((c) => c.kind === 'predicted' && c.predicted_ratio > 0));
  const v = report.verdicts.find((x) => x.rtt_ms === 20 && x.vus === 32);
  assert.match(v.line, /^at 20 ms with 32 concurrent clients, gRPC serves more requests below about [0-9.]+ Mbit\/s \(bandwidth\); above it JSON over HTTP\/1.1 does/);
  assert.ok(report.verdicts.find((x) => x.rtt_ms === 300).line.endsWith('(predicted)'));
});

test('answerFor: the measured cell where there is one, the model elsewhere, each saying which', () => {
  const report = twoCellSweep();
  assert.match(answerFor(report, { bandwidth: 2e6, rttMs: 20, vus: 32 })[0], /^user at 2 Mbit\/s and 20 ms with 32 concurrent clients: measured, gRPC\/HTTP RPS 1.71: gRPC serves more/);
  assert.match(answerFor(report, { bandwidth: 20e6, rttMs: 60, vus: 64 })[0], /^user at 20 Mbit\/s and 60 ms with 64 concurrent clients: predicted \(no measured cell there; from the per-request figures measured at 20 ms\)/);
  assert.throws(() => answerFor(report, { bandwidth: 2e6, rttMs: 20, rate: 100 }), { code: 'ERR_USAGE' });
});

test('the heat map: the 1.0 contour drawn and labelled, predicted cells faded', async () => {
  const svg = await sweepMapSvg(twoCellSweep(), 'user', 20);
  assert.match(svg, /^<svg/);
  assert.match(svg, /class="mark-line role-mark contour_ratio_marks"/);
  assert.ok(svg.includes(CONTOUR_LABEL));
  assert.match(svg, /opacity="0.4"/);
  assert.ok(svg.includes('(')); // a predicted cell's value, in parentheses
  assert.ok(svg.includes('1.71'));
});

test('the sweep\'s settings: lists parsed and sorted, bad values one line, a cell as the main job\'s settings', () => {
  const s = readSweepSettings({ SWEEP_BANDWIDTH: '20mbit,1mbit,20mbit', SWEEP_RTT: '60ms,1', SWEEP_VUS: '64,8' });
  assert.deepEqual([s.SWEEP_BANDWIDTH, s.SWEEP_RTT, s.SWEEP_VUS], [[1e6, 20e6], [1, 60], [8, 64]]);
  assert.throws(() => readSweepSettings({ SWEEP_VUS: '8,x' }), { message: /^invalid setting SWEEP_VUS="8,x": "x" must be a whole number/ });
  assert.throws(() => readSweepSettings({ SWEEP_BANDWIDTH: '20gbit' }), { message: /past what this machine emulates/ });
  assert.throws(() => readSweepSettings({ SWEEP_RATE: '500', SWEEP_VUS: '8' }), { message: /set one of them/ });
  assert.throws(() => readSweepSettings({ TLS: '1' }), { message: /^npm run sweep runs cleartext .*run it without TLS=1/ });
  assert.throws(() => readSweepSettings({ TLS: 'maybe' }), { message: /^invalid setting TLS="maybe"/ });
  assert.equal(readSweepSettings({ TLS: '0' }).SWEEP_RTT.length > 0, true);
  const bench = readBenchSettings(cellEnv({ ...s, K6_BIN: 'k6' }, { bandwidth: 2e6, rttMs: 20, vus: 32, scenario: 'user' }));
  assert.deepEqual(bench.link, { name: 'custom', down: 2e6, up: 2e6, rttMs: 20 });
  assert.deepEqual([bench.VUS, bench.SCENARIO, bench.CAPACITY, bench.RATE], [32, ['user'], '0', undefined]);
  assert.equal(readBenchSettings(cellEnv({ ...s, K6_BIN: 'k6' }, { bandwidth: 2e6, rttMs: 20, rate: 500, scenario: 'user' })).RATE, 500);
});

test('a new connection per request: every cell flagged, every verdict says the handshake is not emulated', () => {
  const runs = { http: runsOf(700, HTTP, 21, 30), grpc: runsOf(1200, GRPC, 23, 28) };
  const report = buildSweep({
    measured: [{ scenario: 'user', bandwidth_bps: 2e6, rtt_ms: 20, vus: 32, connections: 'per-request', link_check: null, runs }],
    machine, model: 'closed', extend: { bandwidths: [], rtts: [], concurrency: [] },
  });
  assert.match(report.cells[0].flagged.reason, /new connections per request: the handshake is not delayed/);
  assert.match(report.cells[0].flagged.likely_causes[0], /toxiproxy does not delay the TCP handshake/);
  assert.ok(report.verdicts.every((v) => v.line.endsWith('each request costs one RTT more in both modes]')));
});

test('repeated cells: the ratio with its 95% interval, and a verdict that names no direction its interval does not hold', () => {
  // Three repeats each: at 2 Mbit/s gRPC is ahead in every pair (settled); at 200 Mbit/s the pairs go both ways (not settled).
  const cell = (bandwidth, http, grpc) => ({
    scenario: 'user', bandwidth_bps: bandwidth, rtt_ms: 20, vus: 32, connections: 'reuse', link_check: null,
    runs: { http: http.flatMap((rps) => runsOf(rps, HTTP, 21, 30)), grpc: grpc.flatMap((rps) => runsOf(rps, GRPC, 23, 28)) },
  });
  const report = buildSweep({
    measured: [cell(2e6, [700, 690, 710], [1200, 1180, 1230]), cell(200e6, [1000, 1400, 1000], [1300, 1000, 1250])],
    machine, model: 'closed', extend: { bandwidths: [], rtts: [], concurrency: [] },
  });
  const [thin, wide] = report.cells;
  assert.equal(thin.ratio_ci.pairs, 3);
  assert.equal(thin.ratio_ci.settled, true);
  assert.ok(thin.ratio_ci.low > 1.6 && thin.ratio_ci.high < 1.8, JSON.stringify(thin.ratio_ci));
  assert.equal(wide.ratio_ci.settled, false);
  assert.ok(wide.ratio > 1.05, `the median ratio alone would say gRPC: ${wide.ratio}`);
  const line = report.verdicts.find((v) => v.rtt_ms === 20).line;
  assert.match(line, /^at 20 ms with 32 concurrent clients, gRPC serves more requests below about [0-9.]+ Mbit\/s \(bandwidth\); above it which serves more is not settled \(the ratio's 95% interval over 3 repeats includes 1\)$/);
  const markdown = renderSweep({ ...report, generated_at: 'now', command: 'npm run sweep', provenance: {}, k6: 'k6', elapsed_s: 1, limits_note: '', maps: [] });
  assert.match(markdown, /\|\s+1\.71 \[1\.\d\d–1\.\d\d\] \(/);
  assert.match(markdown, /\|\s+1\.2\d \[0\.\d\d–\d\.\d\d\] ~ \(/);
  assert.match(markdown, /`~`: the interval includes 1, and the verdict names no direction there/);
});
