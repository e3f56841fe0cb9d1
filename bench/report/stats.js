// The statistics of repeated measurements, in one place: every job reports a median with
// its min-max spread, and a ratio of two columns with its 95% interval (simple-statistics does the arithmetic, jStat
// gives Student's t quantiles).
import jStat from 'jstat';
import { max, mean, median, min, sampleStandardDeviation } from 'simple-statistics';

/**
 * Median and range of repeated measurements; values that are not finite numbers are left out.
 * @param {Array<number|null|undefined>} values
 * @returns {{median: number, min: number, max: number}|null} null when there is none
 */
export function spread(values) {
  const known = values.filter((v) => typeof v === 'number' && Number.isFinite(v));
  if (known.length === 0) return null;
  return { median: median(known), min: min(known), max: max(known) };
}

/**
 * Repeats that disagree: their range (max − min) is more than `limit` of their median. The values to distrust are
 * those more than `limit / 2` of the median away from it; whenever the range exceeds `limit` there is at least one,
 * as the range is the distance of the min from the median plus that of the max.
 * @param {Array<number|null|undefined>} values one per run, in run order; values that are not finite numbers are left
 *   out, as in spread
 * @param {number} limit the largest range accepted, as a fraction of the median (0.25: 25%)
 * @returns {{median: number, min: number, max: number, range: number,
 *   outliers: Array<{index: number, value: number, off: number}>}|null} range: (max − min) / median; outliers: each
 *   value's index in `values`, and (value − median) / median; null when the range is within `limit`, or the median is
 *   not above 0 (a range relative to it means nothing)
 */
export function wideSpread(values, limit) {
  const s = spread(values);
  if (!s || !(s.median > 0)) return null;
  const range = (s.max - s.min) / s.median;
  if (range <= limit) return null;
  const outliers = values.flatMap((value, index) => {
    if (typeof value !== 'number' || !Number.isFinite(value)) return [];
    const off = (value - s.median) / s.median;
    return Math.abs(off) > limit / 2 ? [{ index, value, off }] : [];
  });
  return { ...s, range, outliers };
}

/**
 * A seeded PRNG (mulberry32, Tommy Ettinger's public-domain generator:
 * https://gist.github.com/tommyettinger/46a874533244883189143505d203312c): the same seed gives the same sequence on every
 * platform. The intervals' coverage simulation (test/unit/ratio-coverage.test.js) draws its noise from it, and the
 * generated examples (scripts/catalog-examples.js, scripts/otlp-batches.js) their content.
 * @param {number} seed 32-bit seed
 * @returns {() => number} uniform in [0, 1)
 */
export function mulberry32(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6D2B79F5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), a | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** True for a number that is finite (not null, NaN or ±Infinity). */
const finite = (v) => typeof v === 'number' && Number.isFinite(v);

/** The confidence level of the ratio intervals: 0.95, a 95% interval. */
export const CONFIDENCE = 0.95;

/**
 * The median of the finite numbers among some values, or null when there are none.
 * @param {Array<number|null|undefined>} values
 * @returns {number|null}
 */
export function medianOrNull(values) {
  const kept = values.filter(finite);
  return kept.length ? median(kept) : null;
}

/** The fewest repeats (pairs of runs) an interval is given from: with one or two, the resamples are the runs themselves. */
export const MIN_PAIRS = 3;

/**
 * @typedef {object} Interval a 95% interval of a statistic of repeats (ratioInterval, ratiosInterval)
 * @property {number} pairs the repeats it rests on (pairs of runs measured in both columns)
 * @property {number|null} low its lower end; null with fewer than MIN_PAIRS repeats
 * @property {number|null} high its upper end; likewise
 * @property {boolean|null} settled the interval excludes the value compared with (1 for a ratio: which column is higher is
 *   settled); null with fewer than MIN_PAIRS repeats, which cannot say either way
 * @property {string|null} why why there is no interval ('one run cannot say', 'two runs cannot say'); null with one
 */

const FEW = ['no run measured both columns', 'one run cannot say', 'two runs cannot say'];

/**
 * A 95% interval of a ratio from n ratios of pairs of runs: Student's t interval of their logarithms' mean, with n − 1
 * degrees of freedom, taken back by exp (the geometric mean of the ratios, and its interval). Measurement noise is
 * multiplicative (a run a few percent slower), so its logarithm is near normal, and the t interval keeps its 95% from
 * n = 3 on: test/unit/ratio-coverage.test.js simulates pairs with noise of CV 3–20% at n = 3, 5 and 10 and finds the
 * true ratio inside 95% of the time. The percentile bootstrap used before covered it 75% of the time at n = 3: over
 * three pairs its ends are the smallest and largest ratio (issue 50).
 * @param {number[]} logs ln of each pair's ratio, all finite
 * @param {number} against the ratio whose exclusion settles it
 * @returns {Interval}
 */
function logTInterval(logs, against) {
  const pairs = logs.length;
  if (pairs < MIN_PAIRS) return { pairs, low: null, high: null, settled: null, why: FEW[pairs] };
  const center = mean(logs);
  const half = jStat.studentt.inv((1 + CONFIDENCE) / 2, pairs - 1) * (sampleStandardDeviation(logs) / Math.sqrt(pairs));
  const low = Math.exp(center - half);
  const high = Math.exp(center + half);
  return { pairs, low, high, settled: low > against || high < against, why: null };
}

/**
 * A 95% interval of the ratio of two columns, from their interleaved repeats: run i of one column and run i of the other
 * were measured back to back, so the runs are paired by index and each pair's ratio taken, which keeps out what the
 * pair's two runs shared (a busy minute of the machine); the interval is logTInterval's over those ratios. The report's
 * ratio is the ratio of the medians, which lies inside it but for a skewed handful of runs.
 * @param {Array<number|null|undefined>} baseline one value per run of the baseline column, in run order
 * @param {Array<number|null|undefined>} compared one per run of the compared column, in run order; a pair where either
 *   value is not a finite number is left out, as are runs past the shorter column's
 * @returns {Interval|null} null when a value is not above 0 (a ratio to it, or its logarithm, means nothing); an interval
 *   with fewer than MIN_PAIRS pairs has no ends, and says why
 */
export function ratioInterval(baseline, compared) {
  const pairs = baseline.slice(0, compared.length).flatMap((x, i) => (finite(x) && finite(compared[i]) ? [[x, compared[i]]] : []));
  if (pairs.some(([x, y]) => !(x > 0) || !(y > 0))) return null;
  return logTInterval(pairs.map(([x, y]) => Math.log(y / x)), 1);
}

/**
 * A 95% interval of per-repeat ratios' central value, e.g. ratios taken per repeat (npm run targets): logTInterval's
 * over the repeats.
 * @param {Array<number|null|undefined>} values one per repeat; those that are not finite numbers above 0 are left out
 * @param {number} against the value whose exclusion settles it (a target, or 1)
 * @returns {Interval}
 */
export function ratiosInterval(values, against) {
  return logTInterval(values.filter((v) => finite(v) && v > 0).map(Math.log), against);
}

/**
 * How many repeats would likely settle an interval that includes `against`: the n at which its half-width, shrinking as
 * 1/√n, would fall below the estimate's distance from `against`. An estimate: it takes the estimate and the runs' spread
 * as they are, and the interval's half-width as if symmetric.
 * @param {Interval} interval with ends
 * @param {number} estimate the statistic of all the runs (a ratio of medians)
 * @param {number} [against] 1 for a ratio
 * @returns {number|null} at least one more than the repeats; null when the estimate equals `against` (no number would)
 */
export function repeatsToSettle(interval, estimate, against = 1) {
  const gap = Math.abs(estimate - against);
  if (!(gap > 0) || interval.low === null || interval.high === null) return null;
  const half = (interval.high - interval.low) / 2;
  return Math.max(interval.pairs + 1, Math.ceil(interval.pairs * (half / gap) ** 2));
}
