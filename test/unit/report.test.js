// The report's arithmetic and what it says about its own conditions (bench/report/report.js,
// bench/provenance.js, bench/format.js), and the main job's columns (bench/commands/run.js columnsOf): pure, from synthetic figures.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { fileStamp, formatNumber } from '../../bench/format.js';
import { k6Interrupted, k6Reason } from '../../bench/k6/output.js';
import { provenanceDifferences } from '../../bench/report/provenance.js';
import { aggregate } from '../../bench/report/rows.js';
import { buildReport, ratioPairs } from '../../bench/report/report.js';
import { renderMarkdown } from '../../bench/report/render.js';
import { noiseOf, renderTargets, targetRow } from '../../bench/report/targets.js';
import { columnsOf } from '../../bench/commands/compare.js';
import { wideSpread } from '../../bench/report/stats.js';
import { columnKey, onNode } from '../../bench/modes.js';
import { autoCapacity, columnsOf as columnsOfRun } from '../../bench/commands/run.js';
import { k6Caveat, targetRuns } from '../../bench/commands/targets.js';

/** Figures of one run as bench/records/summary.js gives them, with the fields the report reads. */
const run = (mode, rps, extra = {}) => ({
  mode, target: 'local', host: '127.0.0.1:1', file: `${mode}-${rps}.json`, scenario: 'user', connections: 'reuse', model: 'closed',
  rate: null, vus: 32, rps, requests: rps * 8, failed: 0, checks_failed: 0, duration_s: 8,
  latency_ms: { p50: 1, p90: 2, p95: 3, p99: 4 }, data_sent_bytes: 1, data_received_bytes: 1,
  sent_per_request: 70, received_per_request: mode === 'http' ? 289 : 82, payload_bytes: mode === 'http' ? 117 : 25,
  k6_cpu_pct: 50, ...extra,
});

test('repeats combine as the median with their min-max; failures add up', () => {
  const m = aggregate([run('http', 100, { failed: 1 }), run('http', 300, { failed: 2 }), run('http', 200)]);
  assert.equal(m.rps, 200);
  assert.deepEqual(m.spread.rps, { min: 100, max: 300 });
  assert.equal(m.failed, 3);
  assert.equal(m.repeats, 3);
});

test('ratios are each column\'s median over the first column\'s', () => {
  const report = buildReport([{ key: 'http', runs: [run('http', 200)] }, { key: 'grpc', runs: [run('grpc', 100)] }]);
  assert.equal(report.ratios['grpc/http']['RPS (req/s)'], 0.5);
  assert.ok(Math.abs(report.ratios['grpc/http']['received per request (bytes)'] - 82 / 289) < 1e-12);
});

test('columns measured under different load shapes are flagged as not comparable', () => {
  const report = buildReport([{ key: 'http', runs: [run('http', 200)] }, { key: 'grpc', runs: [run('grpc', 100, { vus: 8 })] }]);
  assert.ok(report.notes.some((n) => /^NOT COMPARABLE: the VUs differs/.test(n)), report.notes.join('\n'));
  // The open model's VUs are k6's allocation at the same rate (more where answers take longer), not a condition.
  const open = (mode, vus, rate = 200) => run(mode, rate, { model: 'open', rate, vus });
  const sameRate = buildReport([{ key: 'http', runs: [open('http', 4)] }, { key: 'grpc', runs: [open('grpc', 6)] }]);
  assert.ok(!sameRate.notes.some((n) => /NOT COMPARABLE/.test(n)), sameRate.notes.join('\n'));
  const otherRate = buildReport([{ key: 'http', runs: [open('http', 4)] }, { key: 'grpc', runs: [open('grpc', 6, 300)] }]);
  assert.ok(otherRate.notes.some((n) => /^NOT COMPARABLE: the arrival rate differs/.test(n)), otherRate.notes.join('\n'));
});

test('runs whose recorded setup differs: named above the table; the same setup: no warning', () => {
  const p = (channelz) => ({ commit: 'a'.repeat(40), dirty: false, versions: { node: 'v20' }, machine: { kernel: 'Linux', cpu_model: 'x', cpu_count: 2 },
    pinning: 'p', bench: { VUS: 32, RESULTS_DIR: 'r' }, server: { GRPC_CHANNELZ: channelz, MODE: 'grpc' } });
  const same = provenanceDifferences({ a: [p(false)], b: [p(false)] });
  assert.deepEqual(same, { missing: [], differences: [] });
  const differs = provenanceDifferences({ a: [p(false)], b: [p(true)], c: [undefined] });
  assert.deepEqual(differs.missing, ['c']);
  assert.deepEqual(differs.differences, [{ field: 'server.GRPC_CHANNELZ', values: { a: 'false', b: 'true' } }]);

  const report = buildReport([{ key: 'grpc-1', runs: [run('grpc', 100, { run: { provenance: p(false) } })] },
    { key: 'grpc-2', runs: [run('grpc', 90, { run: { provenance: p(true) } })] }]);
  const text = renderMarkdown(report);
  assert.ok(text.indexOf('NOT THE SAME SETUP') < text.indexOf('| RPS'), text);
  assert.match(text, /`server\.GRPC_CHANNELZ`: grpc-1 false; grpc-2 true/);
  assert.match(text, /- provenance: commit aaaaaaaaaaaa; node v20; Linux, 2 × x; server: /);
});

test('numbers, file stamps and k6\'s reason, said one way everywhere', () => {
  assert.equal(formatNumber(12345.678, 1), '12,345.7');
  assert.equal(formatNumber(null), 'n/a');
  assert.equal(fileStamp(new Date('2026-11-23T12:17:28.894Z')), '2026-11-23T12-17-28-894Z');
  assert.equal(fileStamp('2026-11-23T12:17:28.894Z'), '2026-11-23T12-17-28-894Z');
  assert.equal(k6Reason('a\nlevel=error msg="x"\nb\ntest aborted: y\n'), 'level=error msg="x"\ntest aborted: y');
});

test('a column whose requests one worker mostly served is flagged UNEVEN; an even one is not', () => {
  const shares = (max) => ({ server_worker_share_max_pct: max, server_worker_share_min_pct: 100 - max, run: { workers: 2 } });
  const report = buildReport([{ key: 'http', runs: [run('http', 200, shares(52))] }, { key: 'grpc', runs: [run('grpc', 100, shares(98))] }]);
  const uneven = report.notes.filter((n) => n.startsWith('UNEVEN'));
  assert.equal(uneven.length, 1, report.notes.join('\n'));
  assert.match(uneven[0], /^UNEVEN: grpc: one worker served 98% of the requests, more than 1\.5× the fair share \(50%\) of 2 workers/);
  // One worker: nothing to share.
  const single = buildReport([{ key: 'grpc', runs: [run('grpc', 100, { server_worker_share_max_pct: 100, run: { workers: 1 } })] }]);
  assert.ok(!single.notes.some((n) => n.startsWith('UNEVEN')));
});

test('COMPRESSION=gzip\'s columns: each divided by the first of its compression and by its raw twin; raw beside gzip per mode', () => {
  const server = (cpu) => ({ server_cpu_us_per_request: cpu, server_gc_ms_per_1k_requests: 1, server_eventloop_p99_ms: 1, server_rss_peak_mib: 90,
    server_worker_share_min_pct: 100, server_worker_share_max_pct: 100 });
  const gz = (mode, rps, received, cpu) => run(mode, rps, { compression: 'gzip', received_per_request: received, ...server(cpu) });
  const report = buildReport([
    { key: 'http', runs: [run('http', 200, { compression: 'off', ...server(20) })] },
    { key: 'grpc', runs: [run('grpc', 100, { compression: 'off', ...server(60) })] },
    { key: 'http+gzip', runs: [gz('http', 150, 130, 40)] },
    { key: 'grpc+gzip', runs: [gz('grpc', 80, 90, 75)] },
  ]);
  assert.deepEqual(Object.keys(report.ratios), ['grpc/http', 'http+gzip/http', 'grpc+gzip/http+gzip', 'grpc+gzip/grpc']);
  assert.ok(Math.abs(report.ratios['grpc+gzip/http+gzip']['received per request (bytes)'] - 90 / 130) < 1e-12);
  assert.ok(!report.notes.some((n) => /NOT COMPARABLE/.test(n)), report.notes.join('\n'));
  // The reading compares like with like: grpc with http, grpc+gzip with http+gzip, whose payload row is before compression.
  assert.match(report.reading.join(' '), /grpc\+gzip served 0\.53× the RPS of http\+gzip .* Both gzip-compressed; before compression the payload is 25 vs 117 bytes/);
  assert.deepEqual(report.compression.map((c) => [c.raw, c.compressed, c.received_per_request.compressed, c.server_cpu_us_per_request.added]),
    [['http', 'http+gzip', 130, 20], ['grpc', 'grpc+gzip', 90, 15]]);
  const text = renderMarkdown(report);
  assert.match(text, /\| HTTP \(JSON\) local \| gRPC \(protobuf\) local \| HTTP \(JSON\) \+ gzip local \| gRPC \(protobuf\) \+ gzip local \|/);
  assert.match(text, /\| http → http\+gzip +\| +289\.0 \| +130\.0 \| +0\.450 \| +20\.0 \| +40\.0 \| +20\.0 \|/);
  // Without compressed columns nothing changes: each by the first, no compression section.
  assert.deepEqual(ratioPairs(['http', 'grpc'], { http: { compression: 'off' }, grpc: { compression: 'off' } }), [['grpc', 'http']]);
  assert.equal(buildReport([{ key: 'http', runs: [run('http', 200)] }, { key: 'grpc', runs: [run('grpc', 100)] }]).compression, null);
});

test('raw and gzip never mix silently: unnamed columns are flagged, a mixed column too, and compare keeps them apart', () => {
  const unnamed = buildReport([{ key: 'http', runs: [run('http', 200, { compression: 'off' })] },
    { key: 'grpc', runs: [run('grpc', 100, { compression: 'gzip' })] }]);
  assert.ok(unnamed.notes.some((n) => /^NOT COMPARABLE: the response compression differs \(http: off, grpc: gzip\)/.test(n)), unnamed.notes.join('\n'));
  const mixed = buildReport([{ key: 'http', runs: [run('http', 200, { compression: 'off' }), run('http', 210, { compression: 'gzip' })] },
    { key: 'grpc', runs: [run('grpc', 100, { compression: 'off' })] }]);
  assert.equal(mixed.modes.http.compression, 'mixed');
  assert.ok(mixed.notes.some((n) => /^NOT COMPARABLE: the response compression differs/.test(n)), mixed.notes.join('\n'));
  const columns = columnsOf([run('http', 200, { compression: 'off' }), run('http', 190, { compression: 'gzip' }), run('http', 210, { compression: 'off' })]);
  assert.deepEqual(columns.map((c) => [c.key, c.runs.length]), [['http', 2], ['http+gzip', 1]]);
  // TLS and cleartext likewise (docs/tls.md's runs): a column each, named only when both are there.
  const tls = columnsOf([run('http', 200, { tls: false }), run('http', 180, { tls: true }), run('grpc', 100, { tls: true }), run('http', 210, { tls: false })]);
  assert.deepEqual(tls.map((c) => [c.key, c.runs.length]), [['http', 2], ['http-tls', 1], ['grpc-tls', 1]]);
  assert.deepEqual(columnsOf([run('http', 180, { tls: true }), run('grpc', 100, { tls: true })]).map((c) => c.key), ['http', 'grpc']);
});

test('client-bound is the median run\'s k6 CPU at 90% or more; a column where only some runs reached it says in how many', () => {
  const cpu = (...pcts) => pcts.map((k6, i) => run('http', 200 + i, { k6_cpu_pct: k6 }));
  const grpc = { key: 'grpc', runs: [run('grpc', 100)] };
  // One run of three at 95%: not client-bound, and the reading and the notes count the run.
  const some = buildReport([{ key: 'http', runs: cpu(95, 60, 70) }, grpc]);
  assert.equal(some.modes.http.client_bound, false);
  assert.deepEqual(some.modes.http.k6_cpu_runs, { measured: 3, client_bound: 1 });
  assert.deepEqual(some.client_bound, []);
  const reading = some.reading.join(' ');
  assert.match(reading, /For http, k6 reached 90% of its core in 1 of 3 runs, not in the median run/);
  assert.doesNotMatch(reading, /client-bound for/);
  assert.match(reading, /k6 used less than 90% of its core in the median run; CAPACITY=1/);
  assert.ok(some.notes.includes('http: k6 reached 90% of its core in 1 of 3 runs, not in the median run: '
    + 'those runs measure k6 as much as the server.'), some.notes.join('\n'));
  // Median run at 92%: client-bound.
  const bound = buildReport([{ key: 'http', runs: cpu(95, 60, 92) }, grpc]);
  assert.equal(bound.modes.http.client_bound, true);
  assert.deepEqual(bound.client_bound, ['http']);
  assert.match(bound.reading.join(" "), /k6 was client-bound for http \(k6 at 90% of its core or more\)/);
  assert.doesNotMatch(bound.reading.join(' '), /reached 90% of its core in/);
  assert.ok(bound.notes.some((n) => n.startsWith('http: k6 used 90% or more of its core in the median run (2 of 3 runs)')), bound.notes.join('\n'));
  // No run near it: neither.
  const none = buildReport([{ key: 'http', runs: cpu(50, 60, 70) }, grpc]);
  assert.equal(none.modes.http.client_bound, false);
  assert.ok(!none.notes.some((n) => /of its core/.test(n)), none.notes.join('\n'));
});

test('a client-bound reading points at the capacity pass only when it ran, else at CAPACITY=1', () => {
  const columns = (capacity) => [{ key: 'http', runs: [run('http', 200, { k6_cpu_pct: 99, capacity_rps: capacity })] },
    { key: 'grpc', runs: [run('grpc', 100, { capacity_rps: capacity && capacity / 2 })] }];
  const without = buildReport(columns(null)).reading.join(' ');
  assert.match(without, /k6 was client-bound for http .*; no server capacity pass ran: CAPACITY=1 runs one \(wrk\/h2load\), which shows the servers' ceilings\./);
  assert.doesNotMatch(without, /the server capacity pass \(wrk\/h2load\) below shows/);
  const withPass = buildReport(columns(40000)).reading.join(' ');
  assert.match(withPass, /k6 was client-bound for http .*; the server capacity row \(wrk\/h2load\), under the RPS row, shows the servers' ceilings\./);
  assert.match(withPass, /Under native load generators .* the servers reach 20,000 vs 40,000 req\/s/);
  assert.doesNotMatch(withPass, /CAPACITY=1/);
});

test('compare of k6 runs started by hand (no k6 CPU in their summaries) says k6\'s CPU was not measured, not that it was below 90%', () => {
  const manual = (mode, rps) => run(mode, rps, { k6_cpu_pct: null, run: undefined });
  const both = buildReport(columnsOf([manual('http', 200), manual('grpc', 100)]));
  assert.deepEqual(both.modes.http.k6_cpu_runs, { measured: 0, client_bound: 0 });
  const reading = both.reading.join(' ');
  assert.match(reading, /k6's CPU was not measured for http and grpc \(a k6 run started by hand records none\), so whether k6 set the limit is not known\./);
  assert.doesNotMatch(reading, /less than 90%/);
  // One column measured, the other not: each said of its own.
  const one = buildReport([{ key: 'http', runs: [run('http', 200)] }, { key: 'grpc', runs: [manual('grpc', 100)] }]).reading.join(' ');
  assert.match(one, /k6's CPU was not measured for grpc \(/);
  assert.match(one, /k6 used less than 90% of its core in the median run for http; CAPACITY=1/);
});

test('wideSpread: a range over the limit of the median names the runs more than half the limit from it', () => {
  // 10,552–14,244 around 13,870: 26.6% of the median; only 10,552 (−24%) is more than 12.5% from it.
  const wide = wideSpread([10552, 13870, 14244], 0.25);
  assert.equal(wide.median, 13870);
  assert.ok(Math.abs(wide.range - (14244 - 10552) / 13870) < 1e-12);
  assert.deepEqual(wide.outliers.map((o) => [o.index, o.value]), [[0, 10552]]);
  assert.equal(wideSpread([80, 100, 105], 0.25), null); // exactly 25%: within the limit
  assert.equal(wideSpread([100], 0.25), null);
  assert.equal(wideSpread([0, 0, 5], 0.25), null); // no median to be relative to
  // A value left out (null) keeps the others' indexes.
  assert.deepEqual(wideSpread([null, 6343, 9100, 10918], 0.25).outliers.map((o) => o.index), [1, 3]);
});

test('a column whose RPS runs disagree by more than 25% of the median is warned about above the table, naming its outlying runs', () => {
  const server = (cpu) => ({ server_cpu_us_per_request: cpu, server_gc_ms_per_1k_requests: 1, server_eventloop_p99_ms: 1, server_rss_peak_mib: 90,
    server_worker_share_min_pct: 100, server_worker_share_max_pct: 100 });
  const report = buildReport([
    { key: 'http', runs: [run('http', 10552, server(52.7)), run('http', 13870, server(40.8)), run('http', 14244, server(39))] },
    { key: 'grpc', runs: [run('grpc', 5562, server(143.6)), run('grpc', 5438, server(124.3)), run('grpc', 6291, server(145.6))] },
  ]);
  assert.deepEqual(report.modes.grpc.wide_spread, []);
  assert.deepEqual(report.modes.http.wide_spread.map((w) => [w.field, w.outliers.map((o) => [o.run, o.file])]),
    [['rps', [[1, 'http-10552.json']]], ['server_cpu_us_per_request', [[1, 'http-10552.json']]]]);
  const text = renderMarkdown(report);
  assert.ok(text.indexOf('### Scenario') < text.indexOf('WIDE SPREAD') && text.indexOf('WIDE SPREAD') < text.indexOf('| RPS'), text);
  assert.match(text, /> \*\*WIDE SPREAD:\*\* in these columns the runs disagree by more than 25% of their median .* more than 12\.5% from the median/);
  assert.match(text, /> - RPS \(req\/s\), http: 10,552–14,244 over 3 runs, 27% of the median 13,870; distrust run 1 \(10,552, −24%\)\n/);
  assert.match(text, /> - server CPU per request \(µs\), http: 39\.0–52\.7 over 3 runs, 34% of the median 40\.8; distrust run 1 \(52\.7, \+29%\)\n/);
  assert.doesNotMatch(text, /, grpc: /);
  assert.match(report.reading.join(' '), /The runs of http disagree on RPS \(WIDE SPREAD, above the table\): read this ratio with that in mind\./);
  // Steady runs: no warning, no sentence.
  const steady = buildReport([{ key: 'http', runs: [run('http', 13000), run('http', 13870)] }, { key: 'grpc', runs: [run('grpc', 5562)] }]);
  assert.doesNotMatch(renderMarkdown(steady), /WIDE SPREAD/);
});

test('NODE_VERSIONS\'s columns: one per mode, compression and release, in that order, named and filed by release', () => {
  const nodes = [{ release: '20', path: '/n20/node', version: 'v20.19.5' }, { release: '24.21.0', path: '/n24/node', version: 'v24.21.0' }];
  const columns = columnsOfRun({ MODES: ['http', 'grpc'], COMPRESSION: 'gzip' }, nodes);
  assert.deepEqual(columns.map((c) => [c.key, c.mode, c.compression, c.node?.path, c.prefix]), [
    ['http@node20', 'http', 'off', '/n20/node', 'http-node20'],
    ['http@node24.21.0', 'http', 'off', '/n24/node', 'http-node24.21.0'],
    ['grpc@node20', 'grpc', 'off', '/n20/node', 'grpc-node20'],
    ['grpc@node24.21.0', 'grpc', 'off', '/n24/node', 'grpc-node24.21.0'],
    ['http@node20+gzip', 'http', 'gzip', '/n20/node', 'http-node20-gzip'],
    ['http@node24.21.0+gzip', 'http', 'gzip', '/n24/node', 'http-node24.21.0-gzip'],
    ['grpc@node20+gzip', 'grpc', 'gzip', '/n20/node', 'grpc-node20-gzip'],
    ['grpc@node24.21.0+gzip', 'grpc', 'gzip', '/n24/node', 'grpc-node24.21.0-gzip'],
  ]);
  // Without NODE_VERSIONS the columns are as before: the job's own node (null), keys and files without a release.
  assert.deepEqual(columnsOfRun({ MODES: ['http', 'grpc'], COMPRESSION: 'gzip' }).map((c) => [c.key, c.node, c.prefix]),
    [['http', null, 'http'], ['grpc', null, 'grpc'], ['http+gzip', null, 'http-gzip'], ['grpc+gzip', null, 'grpc-gzip']]);
  assert.equal(onNode('grpc@node24.21.0+gzip', '20'), 'grpc@node20+gzip');
  assert.equal(columnKey('grpc', 'gzip', '20'), 'grpc@node20+gzip');
});

test('NODE_VERSIONS\'s report: each release by the first release, gRPC by HTTP within a release; no warning, every release named', () => {
  const p = (node) => ({ commit: 'a'.repeat(40), dirty: false, versions: { node, k6: 'v1' }, machine: { kernel: 'Linux', cpu_model: 'x', cpu_count: 2 },
    pinning: 'p', bench: { NODE_VERSIONS: ['20', '24.21.0'] }, server: { MODE: 'http', WORKERS: 1 } });
  const on = (mode, rps, release, node, compression = 'off') => ({ key: columnKey(mode, compression, release),
    runs: [run(mode, rps, { compression, node, node_release: release, run: { provenance: p(node) } })] });
  const report = buildReport([on('http', 200, '20', 'v20.19.5'), on('http', 250, '24.21.0', 'v24.21.0'),
    on('grpc', 100, '20', 'v20.19.5'), on('grpc', 150, '24.21.0', 'v24.21.0')]);
  assert.deepEqual(Object.keys(report.ratios), ['http@node24.21.0/http@node20', 'grpc@node20/http@node20',
    'grpc@node24.21.0/http@node24.21.0', 'grpc@node24.21.0/grpc@node20']);
  assert.equal(report.ratios['grpc@node24.21.0/grpc@node20']['RPS (req/s)'], 1.5);
  assert.equal(report.ratios['grpc@node24.21.0/http@node24.21.0']['RPS (req/s)'], 0.6);
  assert.ok(!report.notes.some((n) => /NOT COMPARABLE/.test(n)), report.notes.join('\n'));
  assert.deepEqual(report.provenance.differences, [], 'the columns differ in versions.node only, which their keys name');
  const text = renderMarkdown(report);
  assert.match(text, /\| HTTP \(JSON\) · Node v20\.19\.5 local \| HTTP \(JSON\) · Node v24\.21\.0 local \| gRPC \(protobuf\) · Node v20\.19\.5 local \|/);
  assert.match(text, /- provenance: commit a{12}; node v20\.19\.5 \/ v24\.21\.0, k6 v1;/);
  assert.doesNotMatch(text, /NOT THE SAME SETUP/);
  // With gzip: the raw twin and the first release too.
  const gz = buildReport([on('http', 200, '20', 'v20.19.5'), on('http', 250, '24.21.0', 'v24.21.0'),
    on('http', 150, '20', 'v20.19.5', 'gzip'), on('http', 180, '24.21.0', 'v24.21.0', 'gzip')]);
  assert.deepEqual(Object.keys(gz.ratios), ['http@node24.21.0/http@node20', 'http@node20+gzip/http@node20',
    'http@node24.21.0+gzip/http@node24.21.0', 'http@node24.21.0+gzip/http@node20+gzip']);
  assert.deepEqual(gz.compression.map((c) => [c.raw, c.compressed]), [['http@node20', 'http@node20+gzip'], ['http@node24.21.0', 'http@node24.21.0+gzip']]);
  // compare regroups the job's summaries by release: no run of one release is taken for a repeat of another's.
  const figures = [200, 250, 210].map((rps, i) => run('http', rps, { node: i === 1 ? 'v24.21.0' : 'v20.19.5', node_release: i === 1 ? '24.21.0' : '20' }));
  assert.deepEqual(columnsOf(figures).map((c) => [c.key, c.runs.length]), [['http@node20', 2], ['http@node24.21.0', 1]]);
});

test('Node releases that differ without the columns naming them, or inside a column, are flagged NOT COMPARABLE', () => {
  // Two jobs on two releases, compared: the ratio mixes the runtime with the protocol (or the repeat).
  const twoJobs = buildReport(columnsOf([run('grpc', 100, { node: 'v20.19.5' }), run('grpc', 150, { node: 'v24.21.0' })]));
  assert.ok(twoJobs.notes.some((n) => /^NOT COMPARABLE: the server's Node release differs \(grpc-2: v24\.21\.0, grpc-1: v20\.19\.5\)/.test(n)),
    twoJobs.notes.join('\n'));
  // Named releases, but a ratio across both release and mode.
  const across = buildReport([{ key: 'http@node20', runs: [run('http', 200, { node: 'v20.19.5', node_release: '20' })] },
    { key: 'grpc@node24.21.0', runs: [run('grpc', 150, { node: 'v24.21.0', node_release: '24.21.0' })] }]);
  assert.ok(across.notes.some((n) => /^NOT COMPARABLE: the server's Node release differs/.test(n)), across.notes.join('\n'));
  const mixed = buildReport([{ key: 'http', runs: [run('http', 200, { node: 'v20.19.5' }), run('http', 210, { node: 'v24.21.0' })] }]);
  assert.equal(mixed.modes.http.node, 'mixed');
  assert.ok(mixed.notes.some((n) => /^NOT COMPARABLE: the server's Node release differs \(http: mixed\)/.test(n)), mixed.notes.join('\n'));
  // The same release everywhere, or none recorded (a manual k6 run): nothing to say.
  for (const node of ['v24.21.0', null]) {
    const same = buildReport([{ key: 'http', runs: [run('http', 200, { node })] }, { key: 'grpc', runs: [run('grpc', 100, { node })] }]);
    assert.ok(!same.notes.some((n) => /Node release/.test(n)), same.notes.join('\n'));
  }
});

test('CAPACITY=auto runs the capacity pass after a scenario only when k6 was client-bound in one of its columns; 1 and 0 never do here', () => {
  const report = (httpCpu, grpcCpu) => buildReport([{ key: 'http', runs: [run('http', 200, { k6_cpu_pct: httpCpu })] },
    { key: 'grpc', runs: [run('grpc', 100, { k6_cpu_pct: grpcCpu })] }]);
  assert.deepEqual(autoCapacity({ CAPACITY: 'auto' }, report(99, 80)), ['http']);
  assert.deepEqual(autoCapacity({ CAPACITY: 'auto' }, report(95, 92)), ['http', 'grpc']);
  assert.deepEqual(autoCapacity({ CAPACITY: 'auto' }, report(89, 80)), [], 'below 90% in the median run');
  // k6's CPU not measured (a run by hand): not client-bound, no pass.
  assert.deepEqual(autoCapacity({ CAPACITY: 'auto' }, report(null, null)), []);
  // CAPACITY=1 measures in every cell; CAPACITY=0 never.
  assert.deepEqual(autoCapacity({ CAPACITY: '1' }, report(99, 99)), []);
  assert.deepEqual(autoCapacity({ CAPACITY: '0' }, report(99, 99)), []);
  // Measured here: HTTP at 0.89 of its ceiling with k6 at 100% of its core: the ceiling says not, the CPU says so; the pass runs.
  const near = buildReport([{ key: 'http', runs: [run('http', 11323, { k6_cpu_pct: 100, client_ceiling_rps: 12657, client_share: 11323 / 12657 })] },
    { key: 'grpc', runs: [run('grpc', 5646, { k6_cpu_pct: 83, client_ceiling_rps: 8462, client_share: 5646 / 8462 })] }]);
  assert.deepEqual(near.client_bound, []);
  assert.deepEqual(autoCapacity({ CAPACITY: 'auto' }, near), ['http']);
  assert.ok(near.verdict.some((l) => l === 'k6 stayed below 0.9 of its ceiling (HTTP 0.89, gRPC 0.67) but ran at 90% of its core or more for HTTP: '
    + 'near the client\'s limit, so read the k6 RPS ratio gRPC/HTTP (0.50; one run cannot say: the interval needs REPEATS ≥ 3) beside the servers\' ceilings.'),
  near.verdict.join('\n'));
  assert.match(near.reading.join(' '), /For http, k6's CPU \(100%\) says client-bound but the RPS is 0\.89 of the client's ceiling, which says not; the ceiling decides\./);
});

test('the capacity row stands right under the RPS row, with its ratio; a CAPACITY=auto pass is named in the notes', () => {
  const auto = (rps) => ({ run: { capacity: { tool: 'wrk', rps, pass: 'auto', client_bound: ['http'] } }, capacity_rps: rps });
  const report = buildReport([{ key: 'http', runs: [run('http', 200, { k6_cpu_pct: 99 }), run('http', 210, { k6_cpu_pct: 99, ...auto(300) })] },
    { key: 'grpc', runs: [run('grpc', 100), run('grpc', 110, auto(180))] }]);
  assert.equal(report.modes.http.capacity_rps, 300, 'one pass: its own figure, not a median with the runs that had none');
  assert.equal(report.ratios['grpc/http']['server capacity, wrk/h2load (req/s)'], 0.6);
  const rows = renderMarkdown(report).split('\n').filter((l) => l.startsWith('| ')).map((l) => l.split('|')[1].trim());
  assert.equal(rows[rows.indexOf('RPS (req/s)') + 1], 'server capacity, wrk/h2load (req/s)');
  assert.ok(report.notes.some((n) => /^http: server capacity by CAPACITY=auto \(k6 was client-bound, by its ceiling or its CPU, for http\): wrk loaded a fresh server once/.test(n)),
    report.notes.join('\n'));
});

// The verdict (bench/report/verdict.js): each sentence only where the figures support it.
// The rest of the server's figures the reading reads beside its CPU.
const SERVER = { server_gc_ms_per_1k_requests: 1, server_eventloop_p99_ms: 1, server_rss_peak_mib: 90, server_worker_share_min_pct: 100,
  server_worker_share_max_pct: 100 };
const verdictReport = (http = {}, grpc = {}, keys = ['http', 'grpc']) => buildReport([
  { key: keys[0], runs: [run('http', 11737, { ...SERVER, server_cpu_us_per_request: 56, k6_cpu_pct: 99, ...http })] },
  { key: keys[1], runs: [run('grpc', 5749, { ...SERVER, server_cpu_us_per_request: 158, k6_cpu_pct: 80, ...grpc })] },
]);
// One run per column: each ratio as measured, with no interval and no claim that it is settled or not (ratioClaim).
const ONE_RUN = 'one run cannot say: the interval needs REPEATS ≥ 3';
const CPU_BYTES = `Per request, gRPC used 2.8× the server CPU and 0.28× the received bytes of JSON over HTTP (${ONE_RUN}).`;
const CEILINGS = `Servers' ceilings (wrk/h2load): HTTP 28,155, gRPC 18,536 req/s (0.66; ${ONE_RUN}).`;
const BOUND_HTTP = 'The k6 RPS row is client-bound for HTTP (k6 at 90% of its core or more), so it measures k6 there, not the server.';

test('verdict on loopback: cost per request, the servers\' ceilings and what the k6 RPS row measures; first, in the JSON too', () => {
  const report = verdictReport({ capacity_rps: 28155 }, { capacity_rps: 18536 });
  assert.deepEqual(report.verdict, [CPU_BYTES, CEILINGS, BOUND_HTTP]);
  const text = renderMarkdown(report);
  assert.ok(text.indexOf('**Verdict.**') > text.indexOf('### Scenario') && text.indexOf('**Verdict.**') < text.indexOf('| RPS'), text);
  assert.match(text, new RegExp(`\\*\\*Verdict\\.\\*\\*\\n\\n- ${CPU_BYTES.replace(/[.()×]/g, '\\$&')}\\n- `));
  // Both client-bound.
  assert.equal(verdictReport({}, { k6_cpu_pct: 95 }).verdict[1],
    'The k6 RPS row is client-bound for HTTP and gRPC (k6 at 90% of its core or more), so it measures k6, not the servers.');
});

test('verdict: a sentence whose figures are missing is left out, or says they were not measured where a run lacks them', () => {
  // No capacity pass: no ceilings.
  assert.deepEqual(verdictReport().verdict, [CPU_BYTES, BOUND_HTTP]);
  // No server accounting: bytes, and the server CPU as not measured, with why (test/integration/report-missing.test.js: every such figure).
  assert.equal(verdictReport({ server_cpu_us_per_request: null }, { server_cpu_us_per_request: null }).verdict[0],
    `Per request, gRPC used 0.28× the received bytes of JSON over HTTP (${ONE_RUN}); server CPU not measured (HTTP and gRPC: a k6 run started by hand records none).`);
  // One capacity figure only: the other is not measured.
  assert.ok(verdictReport({ capacity_rps: 28155 }).verdict.includes('Servers\' ceilings (wrk/h2load): HTTP 28,155 req/s, gRPC not measured '
    + '(a k6 run started by hand records none).'));
  // Neither k6's CPU nor the client's ceiling measured (runs by hand): nothing claimed of what the RPS row measures, and said so.
  assert.deepEqual(verdictReport({ k6_cpu_pct: null }, { k6_cpu_pct: null }).verdict, [CPU_BYTES, 'Whether the k6 RPS row measures k6 or the '
    + 'servers is not known: neither k6\'s CPU nor the client\'s ceiling was measured for HTTP and gRPC (a k6 run started by hand records none); '
    + `the k6 RPS ratio gRPC/HTTP is 0.49 (${ONE_RUN}).`]);
  // No gRPC/HTTP pair: nothing.
  assert.deepEqual(buildReport([{ key: 'grpc', runs: [run('grpc', 100)] }]).verdict, []);
  assert.doesNotMatch(renderMarkdown(buildReport([{ key: 'grpc', runs: [run('grpc', 100)] }])), /Verdict/);
});

test('verdict: a sentence whose figures contradict it is left out, and failures or unlike columns silence it all', () => {
  // A ceiling below what k6 reached is no ceiling.
  assert.ok(!verdictReport({ capacity_rps: 9000 }, { capacity_rps: 18536 }).verdict.some((v) => /ceilings/.test(v)));
  // Server CPU runs that disagree (WIDE SPREAD): no CPU ratio.
  const spread = buildReport([{ key: 'http', runs: [50, 56, 90].map((cpu) => run('http', 11737, { ...SERVER, server_cpu_us_per_request: cpu, k6_cpu_pct: 99 })) },
    { key: 'grpc', runs: [158, 158, 158].map((cpu) => run('grpc', 5749, { ...SERVER, server_cpu_us_per_request: cpu, k6_cpu_pct: 80 })) }]);
  assert.equal(spread.verdict[0], 'Per request, gRPC used 0.28× the received bytes of JSON over HTTP (95% interval 0.28× to 0.28× over 3 runs).');
  // Not client-bound, in no run: the ratio as measured; at the limit in one run but not the median: nothing on it.
  assert.deepEqual(verdictReport({ k6_cpu_pct: 70 }).verdict, [CPU_BYTES, `k6 stayed below 90% of its core in every run; the k6 RPS ratio gRPC/HTTP is 0.49 (${ONE_RUN}).`]);
  const some = buildReport([{ key: 'http', runs: [70, 80, 95].map((cpu) => run('http', 11737, { ...SERVER, server_cpu_us_per_request: 56, k6_cpu_pct: cpu })) },
    { key: 'grpc', runs: [70, 80, 80].map((cpu) => run('grpc', 5749, { ...SERVER, server_cpu_us_per_request: 158, k6_cpu_pct: cpu })) }]);
  // Three runs each: the intervals beside the ratios (every run alike here, so each interval is a point).
  assert.deepEqual(some.verdict, ['Per request, gRPC used 2.8× the server CPU and 0.28× the received bytes of JSON over HTTP '
    + '(server CPU 95% interval 2.8× to 2.8× over 3 runs; received bytes 95% interval 0.28× to 0.28× over 3 runs).']);
  // Open model: the RPS row is the offered rate, nothing to say of it.
  assert.deepEqual(verdictReport({ model: 'open', rate: 2000, k6_cpu_pct: 70 }, { model: 'open', rate: 2000 }).verdict, [CPU_BYTES]);
  assert.deepEqual(verdictReport({ failed: 3 }).verdict, [], 'failed requests');
  assert.deepEqual(verdictReport({}, { vus: 8 }).verdict, [], 'NOT COMPARABLE');
});

test('verdict over a link: which limit each mode hit and the RPS ratio, not the loopback client-bound sentence', () => {
  const link = { link: { name: 'wan', configured: { down_bps: 1e8, up_bps: 1e8, rtt_ms: 40 }, shapers: null, limits: [], measured: null } };
  const over = (httpLimit, grpcLimit, extra = {}) => verdictReport({ run: link, limit: httpLimit, ...extra.http }, { run: link, limit: grpcLimit, ...extra.grpc });
  assert.deepEqual(over('latency (93%)', 'bandwidth (97%)').verdict,
    [CPU_BYTES, `Over the wan link, HTTP hit the latency limit and gRPC hit the bandwidth limit; the k6 RPS ratio gRPC/HTTP is 0.49 (${ONE_RUN}).`]);
  assert.match(over('none reached 80% (largest: latency 52%)', 'client (99%)').verdict[1], /HTTP hit no limit \(none at 80%\) and gRPC hit the client limit/);
  // The capacity pass ran over the same link: said so.
  assert.equal(over('latency (93%)', 'latency (95%)', { http: { capacity_rps: 28155 }, grpc: { capacity_rps: 18536 } }).verdict[1],
    `Servers' ceilings (wrk/h2load over the same link): HTTP 28,155, gRPC 18,536 req/s (0.66; ${ONE_RUN}).`);
  // Runs that disagree on the limit, or a limit not measured: nothing on limits.
  const disagree = buildReport([{ key: 'http', runs: ['latency (93%)', 'bandwidth (90%)'].map((limit) => run('http', 11737, { ...SERVER, run: link, limit })) },
    { key: 'grpc', runs: [run('grpc', 5749, { ...SERVER, run: link, limit: 'latency (95%)' }), run('grpc', 5749, { ...SERVER, run: link, limit: 'latency (95%)' })] }]);
  assert.ok(!disagree.verdict.some((v) => /limit/.test(v)), disagree.verdict.join('\n'));
  assert.ok(!over('not measured', 'latency (95%)').verdict.some((v) => /limit|client-bound/.test(v)));
  // TARGET=remote: the real network.
  const remote = { link: { name: 'remote', configured: null, shapers: null, limits: [], measured: null } };
  assert.match(verdictReport({ run: remote, limit: 'client (99%)' }, { run: remote, limit: 'server (85%)' }).verdict.at(-1),
    /^Over the network to the remote server, HTTP hit the client limit and gRPC hit the server limit/);
});

test('verdict with gzip or NODE_VERSIONS columns: the first gRPC/HTTP pair only (raw, first release)', () => {
  const gz = buildReport([
    { key: 'http', runs: [run('http', 11737, { ...SERVER, server_cpu_us_per_request: 56, k6_cpu_pct: 99 })] },
    { key: 'grpc', runs: [run('grpc', 5749, { ...SERVER, server_cpu_us_per_request: 158, k6_cpu_pct: 80 })] },
    { key: 'http+gzip', runs: [run('http', 9000, { ...SERVER, compression: 'gzip', server_cpu_us_per_request: 90, received_per_request: 200, k6_cpu_pct: 99 })] },
    { key: 'grpc+gzip', runs: [run('grpc', 5000, { ...SERVER, compression: 'gzip', server_cpu_us_per_request: 300, received_per_request: 100, k6_cpu_pct: 80 })] },
  ]);
  assert.deepEqual(gz.verdict, [CPU_BYTES, BOUND_HTTP]);
  const on = (mode, rps, release, cpu) => ({ key: columnKey(mode, 'off', release),
    runs: [run(mode, rps, { ...SERVER, node: `v${release}.0.0`, node_release: release, server_cpu_us_per_request: cpu, k6_cpu_pct: 70 })] });
  const nodes = buildReport([on('http', 200, '20', 50), on('http', 250, '24', 40), on('grpc', 100, '20', 100), on('grpc', 150, '24', 200)]);
  assert.deepEqual(nodes.verdict, [`Per request, gRPC used 2.0× the server CPU and 0.28× the received bytes of JSON over HTTP (${ONE_RUN}).`,
    `k6 stayed below 90% of its core in every run; the k6 RPS ratio gRPC/HTTP is 0.50 (${ONE_RUN}).`]);
  // Columns of another compression only (compare of gzip runs): said of them.
  const onlyGzip = buildReport([{ key: 'http+gzip', runs: [run('http', 9000, { ...SERVER, compression: 'gzip', k6_cpu_pct: null })] },
    { key: 'grpc+gzip', runs: [run('grpc', 5000, { ...SERVER, compression: 'gzip', k6_cpu_pct: null })] }]);
  assert.equal(onlyGzip.verdict[0], `Per request, gRPC used 0.28× the received bytes (gzip-compressed) of JSON over HTTP (${ONE_RUN}); server CPU not measured `
    + '(HTTP and gRPC: a k6 run started by hand records none).');
});

test('client-bound by the client\'s ceiling where it was measured: the share decides, k6\'s CPU only without it; a disagreement is said', () => {
  // client_share as bench/records/summary.js derives it: rps / client_ceiling_rps.
  const ceiling = (rps, ceilingRps, cpu, extra = {}) => run('http', rps, { k6_cpu_pct: cpu, client_ceiling_rps: ceilingRps, client_share: rps / ceilingRps, ...extra });
  const shy = buildReport([{ key: 'http', runs: [ceiling(9500, 10000, 80), ceiling(9400, 10000, 85), ceiling(9600, 10000, 82)] }]);
  assert.equal(shy.modes.http.client_bound, true, 'at 0.95 of the ceiling with k6 below 90% of its core');
  assert.equal(shy.modes.http.client_bound_by, 'ceiling');
  assert.equal(shy.modes.http.client_bound_cpu, false);
  assert.deepEqual(shy.client_bound, ['http']);
  const busy = buildReport([{ key: 'http', runs: [ceiling(6000, 10000, 99)] }, { key: 'grpc', runs: [run('grpc', 3000, { k6_cpu_pct: 99 })] }]);
  assert.equal(busy.modes.http.client_bound, false, 'at 0.6 of the ceiling with k6 at 99% of its core');
  assert.equal(busy.modes.grpc.client_bound, true, 'no ceiling: k6\'s CPU decides');
  assert.equal(busy.modes.grpc.client_bound_by, 'cpu');
  const reading = busy.reading.join(' ');
  assert.match(reading, /For http, k6's CPU \(99%\) says client-bound but the RPS is 0\.60 of the client's ceiling, which says not; the ceiling decides\./);
  assert.match(reading, /k6 was client-bound for grpc \(k6 at 90% of its core or more\)/);
  assert.ok(busy.notes.some((n) => n.startsWith('grpc: k6 used 90% or more of its core in the median run')), busy.notes.join('\n'));
  assert.ok(shy.notes.some((n) => /^http: the median run reached 0\.95 of the client's ceiling \(10,000 req\/s against the bare /.test(n)), shy.notes.join('\n'));
  assert.ok(!shy.notes.some((n) => /bare server used/.test(n)));
  // A bare server at its own limit during the calibration: the ceiling may be its, and the notes say so.
  const hot = buildReport([{ key: 'http', runs: [ceiling(9500, 10000, 80, { run: { client_ceiling: { listener: 'baseline-http', server_cpu_pct: 97 } } })] }]);
  assert.ok(hot.notes.some((n) => /^http: the bare server used 97% of its cores during the client's ceiling/.test(n)), hot.notes.join('\n'));
  // Neither measured (a summary of a k6 run by hand): not client-bound, and nothing claimed.
  const manual = buildReport([{ key: 'http', runs: [run('http', 100, { k6_cpu_pct: null })] }]);
  assert.equal(manual.modes.http.client_bound_by, null);
  assert.equal(manual.modes.http.client_bound, false);
});

test('the ceiling and share rows stand under the RPS row, with their ratio', () => {
  const report = buildReport([{ key: 'http', runs: [run('http', 9000, { client_ceiling_rps: 10000, client_share: 0.9 })] },
    { key: 'grpc', runs: [run('grpc', 4000, { client_ceiling_rps: 8000, client_share: 0.5 })] }]);
  const lines = renderMarkdown(report).split('\n').filter((l) => l.startsWith('|'));
  const at = (label) => lines.findIndex((l) => l.startsWith(`| ${label}`));
  assert.ok(at('RPS') >= 0 && at('client\'s ceiling, k6 vs bare server (req/s)') > at('RPS') && at('share of the client\'s ceiling') > at('RPS'));
  assert.match(lines[at('client\'s ceiling')], /\| +10,000 \| +8,000 \| +0\.80 \|$/);
  assert.match(lines[at('share of the client\'s ceiling')], /\| +0\.90 \| +0\.50 \| +0\.56 \|$/);
});

test('verdict by the client\'s ceiling: each client-bound mode with its share; both below it: the servers set the limit', () => {
  const c = (rps, ceilingRps, cpu) => ({ client_ceiling_rps: ceilingRps, client_share: rps / ceilingRps, k6_cpu_pct: cpu });
  assert.equal(verdictReport(c(11737, 12100, 85), c(5749, 11000, 99)).verdict[1],
    'The k6 RPS row is client-bound for HTTP (0.97 of k6\'s ceiling), so it measures k6 there, not the server.');
  assert.equal(verdictReport(c(11737, 12100, 99), c(5749, 6000, 80)).verdict[1],
    'The k6 RPS row is client-bound for HTTP (0.97 of k6\'s ceiling) and gRPC (0.96 of k6\'s ceiling), so it measures k6, not the servers.');
  assert.equal(verdictReport(c(11737, 20000, 80), c(5749, 11000, 70)).verdict[1],
    `k6 stayed below 0.9 of its ceiling (HTTP 0.59, gRPC 0.52), so the servers set the limit; the k6 RPS ratio gRPC/HTTP is 0.49 (${ONE_RUN}).`);
  // The same shares with k6 at its CPU limit: near the client's limit, not the servers' for sure.
  assert.match(verdictReport(c(11737, 20000, 99), c(5749, 11000, 99)).verdict[1], /^k6 stayed below 0\.9 of its ceiling \(HTTP 0\.59, gRPC 0\.52\) but ran at 90% of its core or more for HTTP and gRPC: near/);
  // One column without a ceiling (gzip, split k6): neither the ceiling's sentence nor the CPU's "below" one.
  assert.deepEqual(verdictReport(c(11737, 20000, 70), { k6_cpu_pct: 70 }).verdict, [CPU_BYTES]);
});

test('k6\'s interrupted iterations: from its last progress line, summed over the instances of a split run; null without one', () => {
  assert.equal(k6Interrupted('running (01.0s), 32/32 VUs, 10 complete and 0 interrupted iterations\n'
    + 'default ✓ [ 100% ] 32 VUs  1s\nrunning (31.0s), 0/32 VUs, 900 complete and 3 interrupted iterations\n'), 3);
  assert.equal(k6Interrupted('--- k6 instance 1 of 2 (0:1/2)\nrunning (2s), 0/2 VUs, 5 complete and 1 interrupted iterations\n'
    + '--- k6 instance 2 of 2 (1/2:1)\nrunning (2s), 0/2 VUs, 5 complete and 2 interrupted iterations\n'), 3);
  assert.equal(k6Interrupted('no progress here'), null);
});

test('the targets report carries its provenance: the commit line under the table', () => {
  const provenance = { commit: 'b'.repeat(40), dirty: true, versions: { node: 'v24.21.0', k6: 'v1.8.1' }, machine: { kernel: 'Linux', cpu_count: 2, cpu_model: 'x' },
    pinning: 'server pinned to cpu 0', bench: {}, server: { WORKERS: 1, GRPC_CODEC: 'protobufjs', GRPC_CHANNELZ: false, H2_MAX_CONCURRENT_STREAMS: 128 } };
  const text = renderTargets({ results: [targetRow('grpc: ours ÷ peer', [0.9, 1, 1.1], 0.97)], setup: '3 repeat(s)', decompositions: [], provenance });
  assert.match(text, /\| grpc: ours ÷ peer \| +1\.000 \(0\.900–1\.100\) \| +≥ 0\.97 \| met +\|/);
  assert.match(text, /\nprovenance: commit b{12} \(uncommitted changes\); node v24\.21\.0, k6 v1\.8\.1; Linux, 2 × x; server: WORKERS=1 /);
});

test('the targets run each mode\'s listener beside its peer, then again as the A/A control, then bare; the other listeners after', () => {
  assert.deepEqual(targetRuns(['http', 'grpc'], ['http', 'protobuf-h1', 'grpc', 'peer-grpc', 'connect-json']), [
    'http', 'peer-http', 'http (again)', 'baseline-http', 'grpc', 'peer-grpc', 'grpc (again)', 'baseline-grpc',
    'protobuf-h1', 'connect-json',
  ]);
  assert.deepEqual(targetRuns(['grpc']), ['grpc', 'peer-grpc', 'grpc (again)', 'baseline-grpc']);
});

test('a target nearer its required ratio than its load\'s A/A control strayed from 1 is marked as not settled by the run', () => {
  const provenance = { commit: 'b'.repeat(40), dirty: false, versions: {}, machine: { kernel: 'Linux', cpu_count: 2, cpu_model: 'x' },
    pinning: '', bench: {}, server: {} };
  const group = 'grpc (h2load -c8 -m32)';
  const results = [
    targetRow('m32: ours ÷ peer', [0.95, 0.96, 0.97], 0.97, { group }),
    targetRow('m32: ours ÷ bare', [0.5, 0.5, 0.5], 0.6, { group }),
    targetRow('m32: A/A', [0.94, 1.0, 1.06], null, { group, control: true }),
    targetRow('m1: ours ÷ peer', [0.95, 0.96, 0.97], 0.97, { group: 'grpc (h2load -c32 -m1)' }),
  ];
  assert.ok(Math.abs(noiseOf(results, group) - 0.06) < 1e-12);
  assert.equal(noiseOf(results, 'grpc (h2load -c32 -m1)'), null);
  const text = renderTargets({ results, setup: '3 repeat(s)', decompositions: [], provenance });
  // 0.96 is 0.01 from 0.97, inside the A/A's 6%; 0.5 is 0.1 from 0.6, outside it; the -m1 group has no control.
  assert.match(text, /\| m32: ours ÷ peer \| +0\.960 \(0\.950–0\.970\) \| +≥ 0\.97 \| MISSED \(within the A\/A's ±6%\) +\|/);
  assert.match(text, /\| m32: ours ÷ bare \| +0\.500 \(0\.500–0\.500\) \| +≥ 0\.6 \| MISSED +\|/);
  assert.match(text, /\| m1: ours ÷ peer +\| +0\.960 \(0\.950–0\.970\) \| +≥ 0\.97 \| MISSED +\|/);
  assert.match(text, /The A\/A rows run the same code twice/);
});

test('a k6 row gives k6\'s CPU per iteration beside its verdict, and says when the server limited it', () => {
  // Side by side on one core, two k6-bound runs use it all between them; 0.90 is a run the server held back.
  assert.equal(k6Caveat([1.01, 0.98, 0.99, null]), null);
  assert.equal(k6Caveat([null, null]), null);
  const caveat = k6Caveat([0.93, 0.9, 0.99, null]);
  assert.match(caveat, /^k6 used 93% of its cores: the server limited these runs/);
  // k6's CPU per iteration, when read, comes first, median (min–max) of the repeats that have it.
  assert.equal(k6Caveat([1.01, 0.98], [0.95, null, 0.97, 0.96]), 'k6\'s CPU per iteration, minimal ÷ project: 0.960 (0.950–0.970)');
  assert.match(k6Caveat([0.9], [1.02]), /^k6's CPU per iteration, minimal ÷ project: 1\.020 \(1\.020–1\.020\); k6 used 90% of its cores: /);
  const provenance = { commit: 'b'.repeat(40), dirty: false, versions: {}, machine: { kernel: 'Linux', cpu_count: 2, cpu_model: 'x' },
    pinning: '', bench: {}, server: {} };
  const results = [targetRow('k6 http-tests/local.js / own-http.js', [0.9, 0.92, 0.94], 0.95, { caveat })];
  const text = renderTargets({ results, setup: '3 repeat(s)', decompositions: [], provenance });
  assert.match(text, /\| k6 http-tests\/local\.js \/ own-http\.js \| +0\.920 \(0\.900–0\.940\) \| +≥ 0\.95 \| MISSED \(k6 used 93% of its cores: the server limited these runs, so the ratio is not the scripts' cost alone\) +\|/);
});

test('a client\'s ceiling the run outran by more than 10% is not trusted: k6\'s CPU judges the column, and a note says why', () => {
  // Issue 50's reading: a ceiling of 528 req/s measured on a busy machine (k6 at 3% of its core), a run at 780.
  const busy = buildReport([{ key: 'http', runs: [run('http', 780, { k6_cpu_pct: 40, client_ceiling_rps: 528, client_share: 780 / 528 })] },
    { key: 'grpc', runs: [run('grpc', 500, { k6_cpu_pct: 95, client_ceiling_rps: 8000, client_share: 500 / 8000 })] }]);
  assert.equal(busy.modes.http.client_ceiling_untrusted, true);
  assert.equal(busy.modes.http.client_bound_by, 'cpu');
  assert.equal(busy.modes.http.client_bound, false, 'not client-bound at 40% of its core');
  assert.ok(busy.notes.some((n) => n.startsWith('http: the median run reached 1.48 of the client\'s ceiling, more than 1.1: ')), busy.notes.join('\n'));
  // A share of 1.1 or less is the ceiling as measured: client-bound at 0.9 or more.
  const near = buildReport([{ key: 'http', runs: [run('http', 1080, { k6_cpu_pct: 40, client_ceiling_rps: 1000, client_share: 1.08 })] },
    { key: 'grpc', runs: [run('grpc', 500, { k6_cpu_pct: 40, client_ceiling_rps: 8000, client_share: 500 / 8000 })] }]);
  assert.equal(near.modes.http.client_ceiling_untrusted, false);
  assert.equal(near.modes.http.client_bound_by, 'ceiling');
  assert.equal(near.modes.http.client_bound, true);
});

test('NOT THE SAME SETUP lists only fields whose recorded values differ; a field an older summary lacks is none', () => {
  const older = { commit: 'a', bench: { VUS: 32, DURATION: '8s' } };
  const newer = { commit: 'a', bench: { VUS: 32, DURATION: '8s', CALIBRATE: '2s' } };
  assert.deepEqual(provenanceDifferences({ http: [older], grpc: [newer] }).differences, []);
  const other = { commit: 'a', bench: { VUS: 64, DURATION: '8s', CALIBRATE: '2s' } };
  assert.deepEqual(provenanceDifferences({ http: [older], grpc: [other] }).differences,
    [{ field: 'bench.VUS', values: { http: '32', grpc: '64' } }]);
  const recordedByOne = { commit: 'a', bench: { VUS: 32, DURATION: '8s', CALIBRATE: '5s' } };
  assert.deepEqual(provenanceDifferences({ http: [older, recordedByOne], grpc: [newer] }).differences,
    [{ field: 'bench.CALIBRATE', values: { http: '"5s"', grpc: '"2s"' } }]);
});

test('a client\'s ceiling measured on a busy machine is not trusted: the runs are named, and k6\'s CPU judges the column', () => {
  const noise = (pct) => ({ server: { cpus: '0', other_pct: pct, steal_pct: 0.2 }, k6: { cpus: '1', other_pct: 1, steal_pct: 0.2 } });
  const ceiling = (pct) => ({ run: { client_ceiling: { rps: 10000, listener: 'baseline-http', duration: '2s', vus: 32, k6_cpu_pct: 90, server_cpu_pct: 40, machine: noise(pct) } } });
  const columns = (busyRun) => [{ key: 'http', runs: [1, 2, 3].map((i) => run('http', 9500, { k6_cpu_pct: 50, client_ceiling_rps: 10000, client_share: 0.95, ...ceiling(i === busyRun ? 40 : 1) })) },
    { key: 'grpc', runs: [1, 2, 3].map(() => run('grpc', 500, { k6_cpu_pct: 50, client_ceiling_rps: 8000, client_share: 500 / 8000, ...ceiling(1) })) }];
  const busy = buildReport(columns(2));
  assert.equal(busy.modes.http.client_ceiling_untrusted, true);
  assert.equal(busy.modes.http.client_bound_by, 'cpu');
  assert.equal(busy.modes.http.client_bound, false, 'by k6\'s CPU, 50% of its core');
  assert.ok(busy.notes.some((n) => /^http: the client's ceiling beside run 2 was measured on a busy machine \(40% of the bare server's cores \(cpu 0\) went to other processes\)/.test(n)),
    busy.notes.join('\n'));
  const quiet = buildReport(columns(0));
  assert.equal(quiet.modes.http.client_ceiling_untrusted, false);
  assert.equal(quiet.modes.http.client_bound, true, 'by the ceiling: 0.95 of it');
});

test('WIDE SPREAD counts the runs a figure rests on, fewer than the column\'s where a run lacks it', () => {
  const cpu = [100, 160, null];
  const report = buildReport([{ key: 'http', runs: [200, 210, 205].map((rps, i) => run('http', rps, { server_cpu_us_per_request: cpu[i] })) },
    { key: 'grpc', runs: [100, 105, 102].map((rps) => run('grpc', rps, { server_cpu_us_per_request: 300 })) }]);
  const wide = report.modes.http.wide_spread.find((w) => w.field === 'server_cpu_us_per_request');
  assert.equal(wide.runs, 2);
  assert.match(renderMarkdown(report), /> - server CPU per request \(µs\), http: 100\.0–160\.0 over 2 runs, /);
});

test('a figure a summary lacks gets its own reason: an older summary records no k6 CPU, a short run sampled none', () => {
  const reasons = (record) => buildReport([{ key: 'http', runs: [{ ...run('http', 200), k6_cpu_pct: null, run: record }] },
    { key: 'grpc', runs: [{ ...run('grpc', 100), k6_cpu_pct: null, run: record }] }]).modes.http.not_measured.find((n) => n.fields.includes('k6_cpu_pct')).reason;
  assert.equal(reasons({ version: 1 }), 'its summary records none (written before the job kept k6\'s CPU)');
  assert.equal(reasons({ version: 1, k6_cpu: null }), 'the k6 run was too short to sample it');
});
