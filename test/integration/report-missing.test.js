// A report of runs that lack an optional figure (issue 38): k6's CPU (a run too short to sample it), the server's
// accounting, a capacity pass, the client's ceiling (the calibration). Built as the main job builds it (bench/commands/run.js:
// the summaries cell.js writes, read by readSummary, then buildReport, renderMarkdown and writeReports), it renders, says
// "not measured" where the figure would be (the table's cell, or a note with the reason when no column has the row), and
// its JSON holds null there: not NaN, not a string.
import assert from 'node:assert/strict';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { test } from 'node:test';
import { buildReport } from '../../bench/report/report.js';
import { renderMarkdown } from '../../bench/report/render.js';
import { writeReports } from '../../bench/report/files.js';
import { readSummary } from '../../bench/records/summary.js';
import { tempDir } from '../helpers/tmp.js';

const MIB = 2 ** 20;
const DURATION_S = 8;

/**
 * Each optional figure: how a summary lacks it (what cell.js records then), the report's fields that are then null, the row
 * of the table it shows in, and what the note under the table says of it. A pass run on demand (onDemand: CAPACITY) is
 * not measured only beside a column that has it; where no column has it, it was not asked for, and its row is left out.
 */
const OPTIONAL = {
  'k6 CPU': {
    drop: (run) => { run.k6_cpu = null; }, // runK6: a run too short to sample
    fields: ['k6_cpu_pct'], row: 'k6 CPU (% of its cores)', note: /k6's CPU(,| and| was| were).* not measured: the k6 run was too short to sample it/,
  },
  'server accounting': {
    drop: (run) => { delete run.server; },
    fields: ['server_requests', 'server_cpu_us_per_request', 'server_rss_peak_mib', 'server_gc_ms_per_1k_requests', 'server_eventloop_p99_ms',
      'server_worker_share_max_pct'],
    row: 'server CPU per request (µs)', note: /the server's own figures \(CPU, memory, GC per request\).* not measured: the run recorded no server accounting/,
  },
  'capacity pass': {
    drop: (run) => { delete run.capacity; },
    fields: ['capacity_rps'], row: 'server capacity, wrk/h2load (req/s)', note: /the server capacity \(wrk\/h2load\).* not measured: no capacity pass ran for it/,
    onDemand: true,
  },
  'client\'s ceiling': {
    drop: (run) => { run.client_ceiling = { ...run.client_ceiling, rps: null, k6_cpu_pct: null, server_cpu_pct: null, reason: 'CALIBRATE=0' }; },
    fields: ['client_ceiling_rps', 'client_share'], row: 'client\'s ceiling, k6 vs bare server (req/s)', note: /the client's ceiling.* not measured: CALIBRATE=0/,
  },
};

/** One worker's accounting over the measured window (bench/records/server-stats.js WorkerWindow). */
const worker = (pid, kind, requests, cpuUsPerRequest) => ({
  pid, served: { [kind]: requests }, requests, cpu_user_s: (requests * cpuUsPerRequest * 0.8) / 1e6, cpu_system_s: (requests * cpuUsPerRequest * 0.2) / 1e6,
  gc_pause_ms: 12, gc_runs: 30, heap_allocated_bytes: requests * 4000, rss_peak_bytes: 95 * MIB, rss_end_bytes: 90 * MIB,
  heap_used_peak_bytes: 30 * MIB, heap_used_end_bytes: 25 * MIB, heap_total_end_bytes: 40 * MIB, eventloop_p50_ms: 0.2, eventloop_p99_ms: 1.5,
  started_in_window: false, node: 'v24.21.0', tls_handshakes: {},
});

/**
 * A k6 summary as bench/passes/cell.js writes it, every optional figure recorded: HTTP at 0.95 of its client's ceiling
 * with k6 at 85% of its core (the two signs disagree, the case of the issue), gRPC at 0.52 with k6 at 80%.
 * @param {'http'|'grpc'} mode
 * @returns {object}
 */
function summary(mode) {
  const http = mode === 'http';
  const rps = http ? 11737 : 5749;
  const requests = rps * DURATION_S;
  const latency = { med: 2, 'p(90)': 3, 'p(95)': 4, 'p(99)': 6 };
  const metrics = http
    ? { http_reqs: { values: { count: requests } }, http_req_failed: { values: { passes: 0 } }, http_req_duration: { values: latency } }
    : { grpc_req_failed: { values: { passes: 0, fails: requests } }, grpc_req_duration: { values: latency } };
  const cpuUs = http ? 56 : 158;
  return {
    state: { testRunDurationMs: DURATION_S * 1000 },
    setup_data: http ? { mode, sampleBytes: 117 } : { mode, sample: { username: 'demo', premium: true, nextBillingDate: '01-01-2027', country: 'COUNTRY_US' } },
    metrics: {
      ...metrics,
      data_sent: { values: { count: requests * 70 } }, data_received: { values: { count: requests * (http ? 289 : 82) } },
      vus_max: { values: { max: 32 } }, checks: { values: { passes: 10, fails: 0 } },
    },
    bench: {
      mode, target: 'local', host: `127.0.0.1:${http ? 3000 : 4000}`, scenario: 'user', connections: 'reuse', model: 'closed', compression: 'off',
      run: {
        node: { release: null, version: 'v24.21.0', path: '/node' },
        k6_cpu: { seconds: (http ? 0.85 : 0.8) * DURATION_S, wall_s: DURATION_S, utilization: http ? 0.85 : 0.8 },
        k6_interrupted: 0,
        client_ceiling: { listener: `baseline-${mode}`, duration: '5s', vus: 32, rps: http ? 12355 : 11000, k6_cpu_pct: 97, server_cpu_pct: 40 },
        workers: 2, server_cores: 1, warmup: '0s', pinning: 'k6 on cpu 1, the server on cpu 0',
        capacity: { tool: http ? 'wrk' : 'h2load', rps: http ? 28155 : 18536, requests: 100000, failed: 0, received_per_request: 289, headers_per_request: null },
        server: {
          window_ms: DURATION_S * 1000, primary: { pid: 10, cpu_user_s: 0.01, cpu_system_s: 0.01 },
          workers: [worker(11, mode, requests / 2, cpuUs), worker(12, mode, requests / 2, cpuUs)], workers_gone: [], node: 'v24.21.0',
        },
      },
    },
  };
}

/**
 * The report of one HTTP and one gRPC run, built, rendered and written as the main job does, with some optional figures
 * dropped from some columns.
 * @param {import('node:test').TestContext} t
 * @param {string[]} dropped names in OPTIONAL
 * @param {string[]} columns the modes whose runs lack them
 * @returns {Promise<{report: ReturnType<typeof buildReport>, text: string, json: any}>}
 */
async function reportWithout(t, dropped, columns) {
  const dir = await tempDir(t, 'report-missing-');
  const runs = [];
  for (const mode of ['http', 'grpc']) {
    const data = summary(mode);
    if (columns.includes(mode)) for (const name of dropped) OPTIONAL[name].drop(data.bench.run);
    const file = path.join(dir, `k6-${mode}.json`);
    await writeFile(file, JSON.stringify(data));
    runs.push({ key: mode, runs: [await readSummary(file)] });
  }
  const report = buildReport(runs);
  const text = renderMarkdown(report);
  const written = await writeReports([report], path.join(dir, 'out'));
  const json = JSON.parse(await readFile(written.json, 'utf8'));
  assert.ok((await readdir(path.join(dir, 'out'))).some((f) => f.endsWith('.svg')), 'the chart is written');
  return { report, text, json };
}

/** Every number in a value that is not finite, by its path. */
function notFinite(value, at = '') {
  if (typeof value === 'number') return Number.isFinite(value) ? [] : [`${at}: ${value}`];
  if (value && typeof value === 'object') return Object.entries(value).flatMap(([k, v]) => notFinite(v, `${at}.${k}`));
  return [];
}

/** The cells of a table row by its label, after the label; null when the table has no such row. */
function rowCells(text, label) {
  const line = text.split('\n').find((l) => l.startsWith(`| ${label} `));
  return line ? line.split('|').slice(2, -1).map((c) => c.trim()) : null;
}

/** What every report checks: rendered without NaN or undefined, its JSON null where a figure is missing, said so. */
function assertSaysNotMeasured({ report, text, json }, dropped, columns) {
  assert.deepEqual(notFinite(report), [], 'no NaN or Infinity in the report');
  assert.doesNotMatch(text, /NaN|undefined|Infinity|\[object/, text);
  for (const name of dropped) {
    const { fields, row, note, onDemand = false } = OPTIONAL[name];
    const others = report.order.filter((k) => !columns.includes(k));
    for (const key of columns) {
      for (const field of fields) {
        assert.equal(report.modes[key][field], null, `${name}: modes.${key}.${field}`);
        assert.equal(json.modes[key][field], null, `${name}: JSON modes.${key}.${field}`);
      }
      if (onDemand && !others.length) {
        assert.ok(!json.modes[key].not_measured.some((n) => fields.some((f) => n.fields.includes(f))), `${name}: not asked for, in no column`);
        continue;
      }
      const entry = json.modes[key].not_measured.find((n) => fields.every((f) => n.fields.includes(f)));
      assert.ok(entry && typeof entry.reason === 'string', `${name}: JSON modes.${key}.not_measured: ${JSON.stringify(json.modes[key].not_measured)}`);
      assert.ok(report.notes.some((n) => n.startsWith(`${key}: `) && note.test(n)), `${name}, ${key}: ${note} in\n${report.notes.join('\n')}`);
    }
    // In the table where another column has the figure; a row no column has is left out.
    const cells = rowCells(text, row);
    if (others.length) {
      assert.ok(cells, `${name}: row ${row} shown\n${text}`);
      for (const key of columns) assert.equal(cells[report.order.indexOf(key)], 'not measured', `${name}: ${row}, ${key}\n${text}`);
    } else {
      assert.equal(cells, null, `${name}: row ${row} left out\n${text}`);
    }
  }
  // Every ratio is a number or null.
  for (const ratios of Object.values(json.ratios)) for (const v of Object.values(ratios)) assert.ok(v === null || typeof v === 'number');
}

for (const name of Object.keys(OPTIONAL)) {
  test(`without ${name} in the HTTP column, the gRPC one, then both: renders, says not measured, null in the JSON`, async (t) => {
    for (const columns of [['http'], ['grpc'], ['http', 'grpc']]) {
      assertSaysNotMeasured(await reportWithout(t, [name], columns), [name], columns);
    }
  });
}

test('without every optional figure, in the HTTP column, the gRPC one, then both: renders, says not measured, null in the JSON', async (t) => {
  const names = Object.keys(OPTIONAL);
  for (const columns of [['http'], ['grpc'], ['http', 'grpc']]) {
    const built = await reportWithout(t, names, columns);
    assertSaysNotMeasured(built, names, columns);
    // The verdict says what it cannot say, and why, rather than leaving it out or failing.
    const verdict = built.report.verdict.join(' ');
    assert.match(verdict, /server CPU not measured/, verdict);
    if (columns.length === 2) assert.match(verdict, /not known: neither k6's CPU nor the client's ceiling was measured for HTTP and gRPC/, verdict);
    assert.deepEqual(built.json.verdict, built.report.verdict);
  }
});

test('the run of issue 38 (DURATION=1s, CAPACITY=0): k6\'s CPU not sampled, HTTP at 0.95 of its ceiling: the ceiling decides, nothing fails', async (t) => {
  const built = await reportWithout(t, ['k6 CPU', 'capacity pass'], ['http', 'grpc']);
  assertSaysNotMeasured(built, ['k6 CPU', 'capacity pass'], ['http', 'grpc']);
  const { report, text } = built;
  assert.deepEqual(report.client_bound, ['http']);
  assert.match(report.reading.join(' '), /k6 was client-bound for http \(0\.95 of k6's ceiling\), .*no server capacity pass ran: CAPACITY=1 runs one/);
  assert.match(report.reading.join(' '), /k6's CPU was not measured for http and grpc \(the k6 run was too short to sample it\); the client's ceiling decides\./);
  assert.ok(report.verdict.includes('The k6 RPS row is client-bound for HTTP (0.95 of k6\'s ceiling), so it measures k6 there, not the server.'),
    report.verdict.join('\n'));
  assert.match(text, /\*\*Verdict\.\*\*/);
});

test('a capacity pass in one column only: the verdict gives the ceiling it has and says the other was not measured', async (t) => {
  const { report } = await reportWithout(t, ['capacity pass'], ['grpc']);
  assert.ok(report.verdict.includes('Servers\' ceilings (wrk/h2load): HTTP 28,155 req/s, gRPC not measured (no capacity pass ran for it).'),
    report.verdict.join('\n'));
});
