// The soak's memory verdict (bench/records/soak.js memoryFigures), from synthetic RSS series; and SOAK_RATE=auto's rate from its ceiling runs.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { memoryFigures, outsideHeapTrend, serverTrend } from '../../bench/records/soak.js';
import { autoRate } from '../../bench/settings/soak.js';

test('the memory verdict: a sawtooth is stable, a leak grows, a slope within its noise is inconclusive, under 2 min tells nothing', () => {
  const limits = { growthPct: 10, slopeMibPerMin: 1 };
  // Five minutes of samples every 5 s (MiB by pid); t in s.
  const series = (rss) => Array.from({ length: 60 }, (_, i) => ({ t_s: 5 + i * 5, workers: { 7: rss(5 + i * 5) } }));
  const sawtooth = memoryFigures(series((t) => 168 + (t % 20)), limits); // a 15 MiB climb every 20 s
  assert.equal(sawtooth.verdict, 'stable');
  assert.ok(Math.abs(sawtooth.total.slope_mib_per_min) < 0.5);
  const leak = memoryFigures(series((t) => 80 + (t / 60) * 3 + (t % 20) / 4), limits); // +3 MiB/min
  assert.equal(leak.verdict, 'growing');
  assert.ok(Math.abs(leak.total.slope_mib_per_min - 3) < 0.1);
  const slow = memoryFigures(series((t) => 300 + (t / 60) * 1.5), limits); // under 10% in 5 min, yet 1.5 MiB/min, no noise
  assert.equal(slow.verdict, 'growing');
  assert.ok(slow.total.growth_pct < 10);
  // 40 MiB peaks in one sample of four, then of three: the median holds, the fitted slope
  // passes 1 MiB/min but stays within two standard errors of it.
  const noisy = memoryFigures(series((t) => 168 + ((t / 5) % (t < 150 ? 4 : 3) === 0 ? 40 : 0)), limits);
  assert.equal(noisy.verdict, 'inconclusive', JSON.stringify(noisy.total));
  assert.equal(memoryFigures(series((t) => 80 + t).slice(0, 20), limits).verdict, 'too short to tell');
});


test('the server trend: medians of the first and last fifth of the windows, the max, and a slope per minute', () => {
  // Ten 30 s windows; GC per 1000 requests rises by 0.1 ms a window (0.2 a minute); allocation stays.
  const windows = Array.from({ length: 10 }, (_, i) => ({
    from_s: i * 30, to_s: (i + 1) * 30, requests: 90000, rps: 3000,
    gc_ms_per_1k_requests: 1 + 0.1 * i, allocated_bytes_per_request: 20000, cpu_us_per_request: 50, heap_end_mib: 30,
    // V8 doubles its young generation at the fourth window; outside the heap nothing moves.
    heap_committed_end_mib: i < 4 ? 40 : 72, outside_heap_end_mib: 60,
  }));
  const trend = serverTrend(windows);
  assert.equal(trend.windows, 10);
  // The first fifth (0-60 s) holds the windows centred at 15 and 45 s; the last (240-300 s) those at 255 and 285 s.
  assert.equal(trend.gc_ms_per_1k_requests.first, 1.05);
  assert.equal(trend.gc_ms_per_1k_requests.last, 1.85);
  assert.equal(trend.gc_ms_per_1k_requests.max, 1.9);
  assert.equal(trend.gc_ms_per_1k_requests.slope_per_min, 0.2);
  assert.deepEqual(trend.allocated_bytes_per_request, { first: 20000, last: 20000, max: 20000, slope_per_min: 0 });
  assert.deepEqual([trend.heap_committed_end_mib.first, trend.heap_committed_end_mib.last], [40, 72]);
  assert.deepEqual(trend.outside_heap_end_mib, { first: 60, last: 60, max: 60, slope_per_min: 0 });
  // A window read by an older job, without the field, is left out of that field's trend.
  assert.equal(serverTrend([{ ...windows[0], outside_heap_end_mib: undefined }, windows[9]]).outside_heap_end_mib.first, 60);
  // A window that served nothing (k6 ended) is left out; none at all gives no trend.
  assert.equal(serverTrend([...windows, { ...windows[0], from_s: 300, to_s: 301, requests: 0, gc_ms_per_1k_requests: null }]).windows, 10);
  assert.equal(serverTrend([{ ...windows[0], requests: 0 }]), null);

  // The verdict outside the V8 heap: flat while the heap committed grows is stable; 2 MiB a minute more is growing.
  const limits = { growthPct: 10, slopeMibPerMin: 1 };
  assert.equal(outsideHeapTrend(windows, limits).verdict, 'stable');
  const leaking = windows.map((w) => ({ ...w, outside_heap_end_mib: 60 + w.to_s / 30 }));
  assert.equal(outsideHeapTrend(leaking, limits).verdict, 'growing');
  assert.equal(outsideHeapTrend(windows.map((w) => ({ ...w, outside_heap_end_mib: undefined })), limits), null);
});

test('SOAK_RATE=auto: the rate from the medians of the ceiling runs, so one disturbed run does not set it', () => {
  // Three runs, the second disturbed (another job took the cores): the medians are the other runs' figures.
  const runs = [{ server_rps: 20000, k6_rps: 9000 }, { server_rps: 6000, k6_rps: 3000 }, { server_rps: 21000, k6_rps: 9400 }];
  assert.deepEqual(autoRate(runs), { server_rps: 20000, k6_rps: 9000, limit: 'k6', rate: 4500 }); // 50% of 9000 < 80% of 20000
  // The disturbed run alone would have set a third of it.
  assert.equal(autoRate([runs[1]]).rate, 1500);
  // k6 kept up (within 3% of the server's): the server is the lower, 80% of its median.
  assert.deepEqual(autoRate([{ server_rps: 1000, k6_rps: 990 }, { server_rps: 1200, k6_rps: 1190 }, { server_rps: 1100, k6_rps: 1080 }]),
    { server_rps: 1100, k6_rps: 1080, limit: 'server', rate: 540 }); // 50% of 1080 < 80% of 1100, yet k6 was not the limit
  assert.equal(autoRate([{ server_rps: 5000, k6_rps: 20000 }]).rate, 4000); // 80% of the server's
  // An even count: the medians are the middle pair's means; a rate never under 1 req/s.
  assert.deepEqual(autoRate([{ server_rps: 100, k6_rps: 90 }, { server_rps: 300, k6_rps: 290 }]),
    { server_rps: 200, k6_rps: 190, limit: 'k6', rate: 95 });
  assert.equal(autoRate([{ server_rps: 1, k6_rps: 1 }]).rate, 1);
  // Bad input: one line, naming the run and the figure.
  assert.throws(() => autoRate([]), /^BenchError: SOAK_RATE=auto: no ceiling run to choose the rate from$/);
  assert.throws(() => autoRate([runs[0], { server_rps: 0, k6_rps: 10 }]), { message: /ceiling run 2's server_rps is 0, not a positive number/ });
  assert.throws(() => autoRate([{ server_rps: 10 }]), { message: /ceiling run 1's k6_rps is undefined/ });
});
