// The soak's tables come from their row lists (bench/report/soak.js SOAK_ROWS, FAULT_ROWS): one row each, in order,
// one column per mode, a figure a run lacks shown as n/a.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { FAULT_ROWS, renderSoakMarkdown, SOAK_ROWS } from '../../bench/report/soak.js';

const spreadOf = (v) => ({ median: v, min: v, max: v });
const soakRun = (mode) => ({
  mode, model: 'closed', vus: 64, rps: 1000, requests: 60000, failed: 0, interrupted_iterations: 0, dropped_iterations: null,
  latency_ms: { p99: 12.5 }, k6_cpu_pct: 40, rss_idle_mib: 80, loadavg_before: 0.5,
  ceiling: { server_rps: 2000, server_tool: 'wrk', k6_rps: 1500, limit: 'k6', runs: [{ server_rps: 2000, k6_rps: 1500 }] },
  memory: { total: { start_mib: 100, end_mib: 101, max_mib: 110, median_start_mib: 100, median_end_mib: 101, growth_pct: 1,
    slope_mib_per_min: 0.1, slope_se_mib_per_min: 0.05, samples: 60 }, verdict: 'stable' },
  server: { gc_ms_per_1k_requests: { first: 1, last: 1.1, max: 1.2 } }, outside_heap: null,
});
const faultRun = (mode) => ({
  mode, runs: [{}], respawn_ms: spreadOf(300), death_logged_ms: spreadOf(5), requests: spreadOf(9000), failed: spreadOf(3),
  timed_out: spreadOf(0), failed_pct: spreadOf(0.03), k6_error_lines: spreadOf(0), interrupted_iterations: spreadOf(0),
  run_s: spreadOf(10), replacement_served: spreadOf(100), rps: spreadOf(900), workers: 2,
});
const report = {
  generated_at: 'now', command: 'npm run soak', pinning: 'server cpu 0, k6 cpu 1', noise: 'quiet',
  machine: { cpus: 2, node: 'v24.21.0', k6: 'k6 v1.8.1' },
  settings: { SOAK_DURATION: '2m', WORKERS: 1, WARMUP: '10s', SOAK_RATE: '', FAULT_DURATION: '10s', VUS: 16, FAULT_WORKERS: 2,
    FAULT_REPEATS: 1, RSS_GROWTH_PCT: 10, RSS_SLOPE_MIB_PER_MIN: 1 },
  soak: [soakRun('http'), soakRun('grpc')], faults: [faultRun('http')],
};

test('each table has one row per entry of its list, in order, each with a cell per mode', () => {
  const markdown = renderSoakMarkdown(report);
  // The table under a heading: its lines after the header and the alignment line, split into cells.
  const rowsOf = (heading) => {
    const lines = markdown.split(heading)[1].split('\n');
    const first = lines.findIndex((l) => l.startsWith('|'));
    const table = lines.slice(first, lines.findIndex((l, i) => i > first && !l.startsWith('|')));
    return table.slice(2).map((line) => line.split('|').map((c) => c.trim()));
  };
  const soak = rowsOf('## Sustained load');
  assert.deepEqual(soak.map((cells) => cells[1]), SOAK_ROWS.map((r) => r.label));
  assert.ok(soak.every((cells) => cells.length === 5), 'a cell per mode'); // '', label, http, grpc, ''
  assert.deepEqual(soak.find((c) => c[1] === 'RPS (req/s)').slice(2, 4), ['1,000', '1,000']);
  assert.equal(soak.find((c) => c[1].startsWith('RSS outside the V8 heap: slope'))[2], 'n/a');
  const faults = rowsOf('## Faults');
  assert.deepEqual(faults.map((cells) => cells[1]), FAULT_ROWS.map((r) => r.label));
  assert.equal(faults.find((c) => c[1].startsWith('workers serving'))[2], '1 of 2');
});
