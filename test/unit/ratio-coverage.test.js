// Whether a ratio's 95% interval (bench/report/stats.js ratioInterval) keeps its 95% at the run counts the job uses
// (issue 50): pairs of runs simulated with a known true ratio and multiplicative noise of CV 3, 10 and 20% (lognormal,
// each run's own noise plus what a pair's two runs share, a busy minute of the machine), at n = 3, 5 and 10 pairs. The
// interval must hold the true ratio 93–97% of the time, and on A/A (a true ratio of 1) call at most 5% of the runs
// settled, give or take the simulation's own error (2 standard errors of a proportion, about 0.6% at 5,000 trials).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { mulberry32, ratioInterval } from '../../bench/report/stats.js';

const TRIALS = 5000;

/** Standard normal draws from a seeded uniform (Box–Muller). */
function normals(random) {
  return () => Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random());
}

/**
 * The share of trials whose interval holds the true ratio, and the share called settled.
 * @param {{ratio: number, cv: number, n: number, seed: number}} c
 */
function simulate({ ratio, cv, n, seed }) {
  const z = normals(mulberry32(seed));
  const sigma = Math.sqrt(Math.log(1 + cv ** 2)); // a lognormal's log-sd for its coefficient of variation
  let covered = 0;
  let settled = 0;
  for (let t = 0; t < TRIALS; t++) {
    const baseline = [];
    const compared = [];
    for (let i = 0; i < n; i++) {
      const shared = z() * sigma; // the machine in the pair's minute: both runs alike
      baseline.push(10000 * Math.exp(shared + z() * sigma));
      compared.push(10000 * ratio * Math.exp(shared + z() * sigma));
    }
    const ci = ratioInterval(baseline, compared);
    if (ci.low <= ratio && ratio <= ci.high) covered++;
    if (ci.settled) settled++;
  }
  return { coverage: covered / TRIALS, settled: settled / TRIALS };
}

test('the 95% interval holds the true ratio 93–97% of the time at n = 3, 5 and 10, with noise of CV 3–20%', () => {
  let seed = 1;
  for (const n of [3, 5, 10]) {
    for (const cv of [0.03, 0.1, 0.2]) {
      for (const ratio of [0.5, 1.3]) {
        const { coverage } = simulate({ ratio, cv, n, seed: seed++ });
        assert.ok(coverage >= 0.93 && coverage <= 0.97, `n=${n}, CV ${cv * 100}%, ratio ${ratio}: coverage ${(coverage * 100).toFixed(1)}%`);
      }
    }
  }
});

test('on A/A (a true ratio of 1) at most 5% of the runs are called settled, within the simulation\'s error', () => {
  let seed = 100;
  for (const n of [3, 5, 10]) {
    for (const cv of [0.03, 0.1, 0.2]) {
      const { settled } = simulate({ ratio: 1, cv, n, seed: seed++ });
      const error = 2 * Math.sqrt((0.05 * 0.95) / TRIALS);
      assert.ok(settled <= 0.05 + error, `n=${n}, CV ${cv * 100}%: ${(settled * 100).toFixed(1)}% settled`);
    }
  }
});

test('at n = 3 the interval is wider than the three runs\' range of ratios, where the percentile bootstrap was that range', () => {
  const z = normals(mulberry32(7));
  for (let t = 0; t < 200; t++) {
    const baseline = [0, 1, 2].map(() => 10000 * Math.exp(z() * 0.1));
    const compared = [0, 1, 2].map(() => 5000 * Math.exp(z() * 0.1));
    const ratios = baseline.map((b, i) => compared[i] / b);
    const ci = ratioInterval(baseline, compared);
    assert.ok(ci.low < Math.min(...ratios) && ci.high > Math.max(...ratios), JSON.stringify({ ratios, ci }));
  }
});
