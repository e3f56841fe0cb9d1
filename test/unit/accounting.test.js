// The report's server figures (bench/records/server-stats.js), made from a recorded window.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseScrape, serverFigures, serverWindow } from '../../bench/records/server-stats.js';

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


test('TLS handshakes: counted by what they negotiated, per 1000 requests, the share resumed, the most frequent named first', () => {
  const scrape = (atMs, served, handshakes) => parseScrape([
    '# TYPE server_requests_served_total counter',
    `server_requests_served_total{handlers="grpc",pid="11"} ${served}`,
    '# TYPE server_tls_handshakes_total counter',
    ...Object.entries(handshakes).map(([labels, n]) => `server_tls_handshakes_total{${labels},pid="11"} ${n}`),
    '',
  ].join('\n'), atMs);
  const full = 'version="TLSv1.3",cipher="TLS_AES_256_GCM_SHA384",alpn="h2",resumed="false"';
  const resumed = 'version="TLSv1.3",cipher="TLS_AES_256_GCM_SHA384",alpn="h2",resumed="true"';
  const other = 'version="TLSv1.2",cipher="ECDHE-ECDSA-AES128-GCM-SHA256",alpn="h2",resumed="false"';
  // Before the window: 5 full handshakes (the warm-up's). In it: 30 full, 10 resumed, 2 of another kind, 2000 requests.
  const start = scrape(1000, 500, { [full]: 5 });
  const end = scrape(2000, 2500, { [full]: 35, [resumed]: 10, [other]: 2 });
  assert.deepEqual(end.workers[0].tls_handshakes, {
    'TLSv1.3|TLS_AES_256_GCM_SHA384|h2|false': 35, 'TLSv1.3|TLS_AES_256_GCM_SHA384|h2|true': 10,
    'TLSv1.2|ECDHE-ECDSA-AES128-GCM-SHA256|h2|false': 2,
  });
  const window = serverWindow(start, end);
  assert.deepEqual(window.workers[0].tls_handshakes, {
    'TLSv1.3|TLS_AES_256_GCM_SHA384|h2|false': 30, 'TLSv1.3|TLS_AES_256_GCM_SHA384|h2|true': 10,
    'TLSv1.2|ECDHE-ECDSA-AES128-GCM-SHA256|h2|false': 2,
  });
  const f = serverFigures(window);
  assert.equal(f.server_tls_handshakes_per_1k_requests, 21); // 42 × 1000 / 2000
  assert.equal(f.server_tls_resumed_pct.toFixed(2), '23.81'); // 10 of 42
  assert.equal(f.server_tls, 'TLSv1.3 · TLS_AES_256_GCM_SHA384 · ALPN h2; TLSv1.2 · ECDHE-ECDSA-AES128-GCM-SHA256 · ALPN h2');
  // Cleartext: no handshake, no figure (the rows are left out of the table).
  const clear = serverFigures(serverWindow(scrape(1000, 0, {}), scrape(2000, 100, {})));
  assert.deepEqual([clear.server_tls_handshakes_per_1k_requests, clear.server_tls_resumed_pct, clear.server_tls], [null, null, null]);
});
