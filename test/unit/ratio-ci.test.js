// Each ratio with its uncertainty (issue 38): the 95% interval of a ratio of two columns from their interleaved repeats
// (bench/report/stats.js ratioInterval, Student's t interval of the pairs of runs' log ratios), in the report's JSON (`ratio_ci`),
// its table (`0.49 [0.49–0.49]`, `~` where the interval includes 1) and the sentences of its verdict and reading, which
// state a direction only where the interval supports it. Reports are built as the main job builds them: synthetic figures
// of each run as bench/records/summary.js gives them, then buildReport, renderMarkdown and writeReports.
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { test } from 'node:test';
import { buildReport } from '../../bench/report/report.js';
import { NOT_SETTLED_MARK, renderMarkdown } from '../../bench/report/render.js';
import { writeReports } from '../../bench/report/files.js';
import { ratiosInterval, MIN_PAIRS, ratioInterval, repeatsToSettle } from '../../bench/report/stats.js';
import { renderTargets, targetRow } from '../../bench/report/targets.js';
import { columnsOf } from '../../bench/commands/compare.js';
import { tempDir } from '../helpers/tmp.js';

/** Figures of one run as bench/records/summary.js gives them: the fields the report reads, the server's accounting too. */
const run = (mode, rps, cpu, extra = {}) => ({
  mode, target: 'local', host: '127.0.0.1:1', file: `${mode}-${rps}.json`, scenario: 'user', connections: 'reuse', model: 'closed',
  rate: null, vus: 32, rps, requests: rps * 8, failed: 0, checks_failed: 0, duration_s: 8,
  latency_ms: { p50: (32 / rps) * 1000, p90: 4, p95: 5, p99: 6 }, data_sent_bytes: rps * 8 * 70, data_received_bytes: rps * 8 * (mode === 'http' ? 289 : 82),
  sent_per_request: 70, received_per_request: mode === 'http' ? 289 : 82, payload_bytes: mode === 'http' ? 117 : 25, k6_cpu_pct: 70,
  server_cpu_us_per_request: cpu, server_gc_ms_per_1k_requests: 1, server_eventloop_p99_ms: 1, server_rss_peak_mib: 90,
  server_worker_share_min_pct: 100, server_worker_share_max_pct: 100, ...extra,
});

// Five repeats, interleaved: HTTP's RPS and server CPU per request, and gRPC's for a clear difference and for a tie.
const HTTP = { rps: [11737, 11420, 12010, 11580, 11890], cpu: [56, 57, 55, 58, 56] };
const CLEAR = { rps: [5749, 5610, 5902, 5688, 5801], cpu: [158, 160, 155, 162, 157] };
const TIE = { rps: [11650, 11890, 11420, 12100, 11500], cpu: [57, 55, 58, 56, 57] };

/** The report of the first `repeats` runs of HTTP and of `grpc`, with `extra` figures per gRPC run index. */
const reportOf = (grpc, repeats = 5, extra = {}) => buildReport([
  { key: 'http', runs: HTTP.rps.slice(0, repeats).map((rps, i) => run('http', rps, HTTP.cpu[i])) },
  { key: 'grpc', runs: grpc.rps.slice(0, repeats).map((rps, i) => run('grpc', rps, grpc.cpu[i], extra[i])) },
]);

/** The cells of a table row by its label, after the label; null when the table has no such row. */
function rowCells(text, label) {
  const line = text.split('\n').find((l) => l.startsWith(`| ${label} `));
  return line ? line.split('|').slice(2, -1).map((c) => c.trim()) : null;
}

const RPS = 'RPS (req/s)';
const CPU = 'server CPU per request (µs)';
const LEGEND = /^Ratios: \[low–high\] is the ratio's 95% interval over 5 pairs of runs, each pair measured back to back, Student's t of their log ratios/m;

test('ratioInterval: paired by run, the same interval every time; settled when the interval excludes 1; no ends under 3 pairs', () => {
  const clear = ratioInterval(HTTP.rps, CLEAR.rps);
  assert.equal(clear.pairs, 5);
  assert.ok(clear.low <= 5749 / 11737 && 5749 / 11737 <= clear.high && clear.high < 1, JSON.stringify(clear));
  assert.equal(clear.settled, true);
  // The same runs give the same interval, every time.
  assert.deepEqual(ratioInterval(HTTP.rps, CLEAR.rps), clear);
  const tie = ratioInterval(HTTP.rps, TIE.rps);
  assert.ok(tie.low < 1 && tie.high > 1, JSON.stringify(tie));
  assert.equal(tie.settled, false);
  // Fewer than MIN_PAIRS pairs: no ends, no settlement either way, and why.
  assert.equal(MIN_PAIRS, 3);
  assert.deepEqual(ratioInterval([100], [50]), { pairs: 1, low: null, high: null, settled: null, why: 'one run cannot say' });
  assert.deepEqual(ratioInterval([100, 110], [50, 55]), { pairs: 2, low: null, high: null, settled: null, why: 'two runs cannot say' });
  // A run missing in either column drops its pair; runs past the shorter column have none.
  assert.equal(ratioInterval([100, 110, null, 120], [50, 55, 60, Number.NaN, 70]).pairs, 2);
  // A baseline at or below 0 in a run: a ratio to it means nothing.
  assert.equal(ratioInterval([0, 100, 110], [50, 55, 60]), null);
  // The repeats that would likely settle the tie: the n at which the half-width, as 1/√n, falls below |ratio − 1|.
  const ratio = 11650 / 11737;
  assert.equal(repeatsToSettle(tie, ratio), Math.ceil(5 * (((tie.high - tie.low) / 2) / (1 - ratio)) ** 2));
  assert.equal(repeatsToSettle({ ...tie, low: 0.99, high: 1.01 }, 1), null, 'equal medians: no number of repeats settles it');
});

test('a clear difference: the interval excludes 1, the table shows it without a mark, the verdict and the reading state the direction', () => {
  const report = reportOf(CLEAR);
  const ci = report.ratio_ci['grpc/http'][RPS];
  assert.equal(ci.settled, true);
  assert.ok(ci.high < 1);
  assert.ok(report.ratio_ci['grpc/http'][CPU].low > 1 && report.ratio_ci['grpc/http'][CPU].settled);
  // Summed rows (failures) have no interval.
  assert.equal(report.ratio_ci['grpc/http']['failed requests'], null);
  const text = renderMarkdown(report);
  const [, , cell] = rowCells(text, RPS);
  assert.match(cell, /^0\.49 \[0\.49–0\.49\]$/);
  assert.match(rowCells(text, CPU)[2], /^2\.82 \[2\.\d\d–2\.\d\d\]$/);
  assert.match(text, LEGEND);
  const verdict = report.verdict.join('\n');
  assert.match(verdict, /^Per request, gRPC used 2\.8× the server CPU and 0\.28× the received bytes of JSON over HTTP \(server CPU 95% interval 2\.\d× to 2\.\d× over 5 runs; received bytes 95% interval 0\.28× to 0\.28× over 5 runs\)\.$/m);
  assert.match(verdict, /the k6 RPS ratio gRPC\/HTTP is 0\.49 \(95% interval 0\.49 to 0\.49 over 5 runs\)\.$/m);
  assert.doesNotMatch(verdict, /not settled|cannot say/);
  const reading = report.reading.join(' ');
  assert.match(reading, /grpc served 0\.49× the RPS of http \(5,749 vs 11,737 req\/s, medians; 95% interval 0\.49× to 0\.49× over 5 runs\)\./);
  assert.match(reading, /µs of server CPU per request \(2\.82×; 95% interval 2\.\d\d× to 2\.\d\d× over 5 runs\)/);
});

test('a tie: the interval includes 1, the table marks it ~ with a legend, and no sentence states a direction: "not settled at 5 repeats"', () => {
  const report = reportOf(TIE);
  const ci = report.ratio_ci['grpc/http'][RPS];
  assert.equal(ci.settled, false);
  const text = renderMarkdown(report);
  assert.match(rowCells(text, RPS)[2], new RegExp(`^0\\.99 \\[0\\.\\d\\d–1\\.\\d\\d\\] ${NOT_SETTLED_MARK}$`));
  assert.match(rowCells(text, CPU)[2], / ~$/);
  assert.match(text, /; `~`: the interval includes 1, so these repeats do not settle which column is higher\.$/m);
  // The legend stands under the table, once.
  assert.equal(text.match(LEGEND).length, 1);
  assert.ok(text.search(LEGEND) > text.indexOf(`| ${RPS}`));
  const n = repeatsToSettle(ci, 11650 / 11737);
  const verdict = report.verdict.join('\n');
  assert.match(verdict, new RegExp(`the k6 RPS ratio gRPC/HTTP is not settled at 5 repeats: 0\\.99, its 95% interval 0\\.\\d\\d to 1\\.\\d\\d includes no `
    + `difference; about ${n} repeats would likely settle it \\(an estimate: the interval narrows as 1/√n\\)\\.$`, 'm'));
  // The server CPU is not settled either, and said so; the bytes, which differ in every run, keep their direction.
  assert.match(verdict, /^Per request, gRPC used 0\.28× the received bytes of JSON over HTTP \(95% interval 0\.28× to 0\.28× over 5 runs\); gRPC's server CPU against JSON over HTTP is not settled at 5 repeats: /m);
  assert.doesNotMatch(verdict, /gRPC used [\d.]+× the server CPU/);
  const reading = report.reading.join(' ');
  assert.match(reading, /The RPS of grpc against http \(11,650 vs 11,737 req\/s, medians\) is not settled at 5 repeats: 0\.99×, its 95% interval /);
  assert.doesNotMatch(reading, /grpc served/);
  assert.match(reading, /µs of server CPU per request \(not settled at 5 repeats: /);
  // The same figure in every run (VUs, bytes sent): no difference, not a call for more repeats.
  assert.match(rowCells(text, 'VUs')[2], /^1\.00 \[1\.00–1\.00\] ~$/);
  assert.match(reading, /Bytes sent per request: 70 vs 70 \(\+0%, no difference at 5 repeats\)/);
});

test('one outlying run: the interval widens both ways, the median ratio hardly moves, and the difference stays settled', () => {
  // gRPC's third run at half its RPS, as on a disturbed machine. The median of five resists one outlier; the interval does
  // not hide it: the t interval of the log ratios widens with their spread, about the geometric mean the outlier pulls
  // down, both ends moving. Far from 1 still: settled.
  const clean = reportOf(CLEAR);
  const outlier = reportOf({ ...CLEAR, rps: CLEAR.rps.map((rps, i) => (i === 2 ? 2900 : rps)) });
  const [a, b] = [clean, outlier].map((r) => r.ratio_ci['grpc/http'][RPS]);
  assert.ok(b.high - b.low > 10 * (a.high - a.low), `${JSON.stringify(a)} → ${JSON.stringify(b)}`);
  assert.ok(b.low < a.low && b.high > a.high, JSON.stringify(b));
  assert.ok(b.low < 2900 / 12010 * 1.25 && b.high < 1, JSON.stringify(b));
  assert.ok(Math.abs(outlier.ratios['grpc/http'][RPS] - clean.ratios['grpc/http'][RPS]) < 0.01, 'the medians resist it');
  assert.equal(b.settled, true);
  assert.match(rowCells(renderMarkdown(outlier), RPS)[2], /^0\.48 \[0\.29–0\.63\]$/);
});

test('one or two repeats: no interval and no settlement claimed either way; the sentences say the interval needs REPEATS ≥ 3', () => {
  for (const [repeats, says] of [[1, 'one run cannot say'], [2, 'two runs cannot say']]) {
    const report = reportOf(CLEAR, repeats);
    assert.deepEqual(report.ratio_ci['grpc/http'][RPS], { pairs: repeats, low: null, high: null, settled: null, why: says });
    const text = renderMarkdown(report);
    assert.equal(rowCells(text, RPS)[2], '0.49', 'the ratio alone');
    assert.doesNotMatch(text, LEGEND);
    assert.doesNotMatch(text, /\[\d\.\d\d–\d\.\d\d\]/);
    const verdict = report.verdict.join('\n');
    assert.match(verdict, new RegExp(`^Per request, gRPC used 2\\.8× the server CPU and 0\\.28× the received bytes of JSON over HTTP \\(${says}: the interval needs REPEATS ≥ 3\\)\\.$`, 'm'));
    assert.match(verdict, new RegExp(`the k6 RPS ratio gRPC/HTTP is 0\\.49 \\(${says}: the interval needs REPEATS ≥ 3\\)\\.$`, 'm'));
    const reading = report.reading.join(' ');
    assert.ok(reading.startsWith(`${repeats === 1 ? 'One run' : 'Two runs'} per column cannot say whether a ratio is settled: its interval needs REPEATS ≥ 3`), reading);
    assert.doesNotMatch(`${verdict} ${reading}`, /not settled|95% interval/);
  }
});

test('a figure measured in fewer runs than the repeats (CAPACITY=auto: once per column) has no interval, and says why, not REPEATS', () => {
  const once = { 4: { capacity_rps: 18536, run: { capacity: { tool: 'h2load', rps: 18536, pass: 'auto', client_bound: ['http'] } } } };
  const report = buildReport([
    { key: 'http', runs: HTTP.rps.map((rps, i) => run('http', rps, HTTP.cpu[i], i === 4 ? { capacity_rps: 28155 } : {})) },
    { key: 'grpc', runs: CLEAR.rps.map((rps, i) => run('grpc', rps, CLEAR.cpu[i], once[i])) },
  ]);
  assert.equal(report.ratio_ci['grpc/http']['server capacity, wrk/h2load (req/s)'].why, 'one run cannot say');
  assert.ok(report.verdict.includes('Servers\' ceilings (wrk/h2load): HTTP 28,155, gRPC 18,536 req/s '
    + '(0.66; one run cannot say: both columns have it in 1 of 5 runs, and the interval needs 3).'), report.verdict.join('\n'));
});

test('the JSON holds ratio_ci beside ratios; compare pairs summaries in the order they were measured, whatever their order given; a verdict pair outside the ratios has its own', async (t) => {
  const report = reportOf(TIE);
  const written = await writeReports([report], path.join(await tempDir(t, 'ratio-ci-'), 'out'));
  const json = JSON.parse(await readFile(written.json, 'utf8'));
  assert.deepEqual(json.ratio_ci, report.ratio_ci);
  assert.deepEqual(Object.keys(json.ratio_ci), Object.keys(json.ratios));
  // npm run compare: the summaries of a job, interleaved, group into columns in their order, so run i pairs with run i.
  const figures = HTTP.rps.flatMap((rps, i) => [run('http', rps, HTTP.cpu[i]), run('grpc', CLEAR.rps[i], CLEAR.cpu[i])]);
  assert.deepEqual(buildReport(columnsOf(figures)).ratio_ci, reportOf(CLEAR).ratio_ci);
  // Given in another order, summaries that say when they were measured pair as measured (bench.run.measured_at), and
  // the main job's file names say it too (its stamp and repeat): the same intervals whatever the order of the files.
  const at = (i, mode) => new Date(Date.UTC(2026, 10, 28, 10, 0, 2 * i + (mode === 'grpc' ? 1 : 0))).toISOString();
  const timed = HTTP.rps.flatMap((rps, i) => [run('http', rps, HTTP.cpu[i], { run: { measured_at: at(i, 'http') } }),
    run('grpc', CLEAR.rps[i], CLEAR.cpu[i], { run: { measured_at: at(i, 'grpc') } })]);
  const named = HTTP.rps.flatMap((rps, i) => [run('http', rps, HTTP.cpu[i], { file: `k6-http-local-user-2026-11-28T10-00-00-000Z-r${i + 1}.json` }),
    run('grpc', CLEAR.rps[i], CLEAR.cpu[i], { file: `k6-grpc-local-user-2026-11-28T10-00-00-000Z-r${i + 1}.json` })]);
  for (const given of [timed, named]) {
    // HTTP first, so that the columns stand in the same order; the runs of each out of theirs.
    const shuffled = [given[6], given[7], given[2], given[9], given[0], given[4], given[1], given[8], given[3], given[5]];
    assert.deepEqual(buildReport(columnsOf(shuffled)).ratio_ci, reportOf(CLEAR).ratio_ci);
  }
  // MODES=grpc,http: the table divides HTTP by gRPC; the verdict, on gRPC/HTTP, gets that pair's intervals too.
  const reversed = buildReport([
    { key: 'grpc', runs: CLEAR.rps.map((rps, i) => run('grpc', rps, CLEAR.cpu[i])) },
    { key: 'http', runs: HTTP.rps.map((rps, i) => run('http', rps, HTTP.cpu[i])) },
  ]);
  assert.deepEqual(Object.keys(reversed.ratios), ['http/grpc']);
  assert.deepEqual(Object.keys(reversed.ratio_ci), ['http/grpc', 'grpc/http']);
  assert.match(reversed.verdict.join('\n'), /the k6 RPS ratio gRPC\/HTTP is 0\.49 \(95% interval 0\.49 to 0\.49 over 5 runs\)\./);
  assert.match(rowCells(renderMarkdown(reversed), RPS)[2], /^2\.04 \[2\.0\d–2\.0\d\]$/);
});

test('npm run targets: each median of per-repeat ratios gets the same interval, marked ~ where it includes the required ratio', () => {
  const near = targetRow('grpc: ours ÷ peer', [0.95, 0.96, 0.97, 0.99, 0.98], 0.97);
  assert.equal(near.interval.settled, false, 'the interval includes 0.97');
  assert.deepEqual(near.interval, ratiosInterval([0.95, 0.96, 0.97, 0.99, 0.98], 0.97));
  const far = targetRow('grpc: ours ÷ bare', [0.5, 0.52, 0.51], 0.6);
  assert.equal(far.interval.settled, true);
  assert.equal(targetRow('k6', [0.99], 0.95).interval.why, 'one run cannot say');
  const provenance = { commit: 'b'.repeat(40), dirty: false, versions: { node: 'v24.21.0' }, machine: { kernel: 'Linux', cpu_model: 'x', cpu_count: 2 } };
  const text = renderTargets({ results: [near, far, targetRow('k6', [0.99], 0.95)], setup: '5 repeat(s)', decompositions: [], provenance });
  assert.match(text, /\| grpc: ours ÷ peer \| +0\.970 \(0\.950–0\.990\) \| +≥ 0\.97 \| met +\| \[0\.950–0\.990\] ~ \|/);
  assert.match(text, /\| grpc: ours ÷ bare \| +0\.510 \(0\.500–0\.520\) \| +≥ 0\.6 \| MISSED +\| +\[0\.48\d–0\.53\d\] \|/);
  assert.match(text, /\| k6 +\| +0\.990 \(0\.990–0\.990\) \| +≥ 0\.95 \| met +\| +\|/);
  assert.match(text, /`~`: it includes the required ratio \(1 where none is required\), so these repeats do not settle the result\./);
});

test('the legend says over how many pairs of runs, and why a ratio shown without brackets has none', () => {
  // CAPACITY=auto's row: measured once per column, in the last run.
  const report = reportOf(CLEAR);
  const withCapacity = buildReport([
    { key: 'http', runs: HTTP.rps.map((rps, i) => run('http', rps, HTTP.cpu[i], i === 4 ? { capacity_rps: 28155 } : {})) },
    { key: 'grpc', runs: CLEAR.rps.map((rps, i) => run('grpc', rps, CLEAR.cpu[i], i === 4 ? { capacity_rps: 18536 } : {})) },
  ]);
  assert.match(renderMarkdown(report), /^Ratios: \[low–high\] is the ratio's 95% interval over 5 pairs of runs, /m);
  const legend = renderMarkdown(withCapacity).split('\n').find((l) => l.startsWith('Ratios:'));
  assert.match(legend, /; a ratio without brackets has no interval: one run cannot say \(both columns have it in 1 run\)/);
});
