// The report's server figures (bench/report/server-stats.js), made from a recorded window.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseScrape, serverFigures, serverWindow } from '../../bench/report/server-stats.js';

test('the report figures are made from the recorded window as documented', () => {
  const text = [
    '# TYPE server_requests_served_total counter',
    'server_requests_served_total{handlers="http",pid="11"} 300',
    'server_requests_served_total{handlers="http",pid="12"} 100',
    '# TYPE process_cpu_user_seconds_total counter',
    'process_cpu_user_seconds_total{pid="11"} 1.5',
    'process_cpu_user_seconds_total{pid="12"} 0.5',
    '# TYPE process_cpu_system_seconds_total counter',
    'process_cpu_system_seconds_total{pid="11"} 0.25',
    'process_cpu_system_seconds_total{pid="12"} 0.25',
    '# TYPE process_resident_memory_bytes gauge',
    'process_resident_memory_bytes{pid="11"} 104857600',
    'process_resident_memory_bytes{pid="12"} 52428800',
    '# TYPE nodejs_eventloop_lag_p99_seconds gauge',
    'nodejs_eventloop_lag_p99_seconds{pid="11"} 0.012',
    'nodejs_eventloop_lag_p99_seconds{pid="12"} 0.0095',
    '# TYPE server_eventloop_resolution_seconds gauge',
    'server_eventloop_resolution_seconds{pid="11"} 0.01',
    'server_eventloop_resolution_seconds{pid="12"} 0.01',
    '# TYPE server_gc_pause_seconds_total counter',
    'server_gc_pause_seconds_total{pid="11"} 0.004',
    'server_gc_pause_seconds_total{pid="12"} 0.002',
    '# TYPE server_primary_process_cpu_user_seconds_total counter',
    'server_primary_process_cpu_user_seconds_total{pid="10"} 0.1',
    '# TYPE server_primary_process_cpu_system_seconds_total counter',
    'server_primary_process_cpu_system_seconds_total{pid="10"} 0',
    '# TYPE nodejs_version_info gauge',
    'nodejs_version_info{version="v20.19.5",major="20",minor="19",patch="5",pid="11"} 1',
    'nodejs_version_info{version="v20.19.5",major="20",minor="19",patch="5",pid="12"} 1',
    '# TYPE server_primary_nodejs_version_info gauge',
    'server_primary_nodejs_version_info{version="v20.19.5",major="20",minor="19",patch="5",pid="10"} 1',
    '',
  ].join('\n');
  const end = parseScrape(text, 2000);
  assert.equal(end.primary.pid, 10);
  assert.deepEqual(end.workers.map((w) => w.pid), [11, 12]);
  const zero = { served: {}, cpu_user_s: 0, cpu_system_s: 0, gc_pause_s: 0, gc_runs: 0 };
  const start = { at_ms: 1000, primary: { pid: 10, ...zero }, workers: [{ pid: 11, ...zero }, { pid: 12, ...zero }] };
  const window = serverWindow(start, end);
  assert.equal(window.window_ms, 1000);
  assert.equal(window.node, 'v20.19.5', 'the release the server itself reports (prom-client\'s nodejs_version_info)');
  assert.equal(window.workers[0].eventloop_p99_ms, 2, 'the 10 ms sampling interval is taken out');
  assert.equal(window.workers[1].eventloop_p99_ms, 0, 'never below 0');
  const f = serverFigures(window);
  assert.equal(f.server_requests, 400);
  // (1.5 + 0.25 + 0.5 + 0.25 + primary 0.1) s / 400 requests = 6500 µs
  assert.equal(Math.round(f.server_cpu_us_per_request), 6500);
  assert.equal(Math.round(f.server_cpu_user_us_per_request), 5250);
  assert.equal(f.server_rss_end_mib, 100);
  assert.equal(f.server_gc_ms, 6);
  assert.equal(f.server_gc_ms_per_1k_requests, 15);
  assert.equal(f.server_worker_share_min_pct, 25);
  assert.equal(f.server_worker_share_max_pct, 75);
  assert.ok(Object.values(serverFigures(undefined)).every((v) => v === null), 'no window, no figures');
});

