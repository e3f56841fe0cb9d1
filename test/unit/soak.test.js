// The soak's memory verdict (bench/report/soak.js memoryFigures), from synthetic RSS series.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { memoryFigures } from '../../bench/report/soak.js';

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

