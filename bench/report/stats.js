// The statistics of repeated measurements, in one place: every job reports a median with
// its min-max spread, and a ratio of two columns with its 95% interval (simple-statistics does the arithmetic).
import { max, median, min, quantileSorted, sampleWithReplacement } from 'simple-statistics';

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
 * platform. The ratio intervals draw their resamples from it, so that the same runs give the same report; the catalogue's
 * examples (scripts/catalog-examples.js) their content.
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
 * Resamples per interval. Efron & Tibshirani (An Introduction to the Bootstrap, 1993) advise 1000 or more for a percentile
 * interval, whose ends are tail quantiles of the resampled statistic (a standard error needs far fewer).
 */
export const RESAMPLES = 2000;

/** The seed of every interval's resampling (mulberry32), fixed: the same runs give the same interval, in every report. */
export const BOOTSTRAP_SEED = 38;

/**
 * @typedef {object} Interval a 95% interval of a statistic of repeats (ratioInterval, medianInterval)
 * @property {number} pairs the repeats it was resampled from (pairs of runs measured in both columns)
 * @property {number|null} low its lower end; null with fewer than MIN_PAIRS repeats
 * @property {number|null} high its upper end; likewise
 * @property {boolean|null} settled the interval excludes the value compared with (1 for a ratio: which column is higher is
 *   settled); null with fewer than MIN_PAIRS repeats, which cannot say either way
 * @property {string|null} why why there is no interval ('one run cannot say', 'two runs cannot say'); null with one
 */

const FEW = ['no run measured both columns', 'one run cannot say', 'two runs cannot say'];

/**
 * The percentile bootstrap (Efron & Tibshirani 1993, ch. 13, the percentile interval): RESAMPLES resamples of the items with replacement, each of
 * their size, drawn from mulberry32(BOOTSTRAP_SEED); the interval is the (1 − CONFIDENCE) / 2 and (1 + CONFIDENCE) / 2
 * quantiles of the statistic over the resamples (simple-statistics sampleWithReplacement and quantileSorted, linear
 * interpolation). With so few items as a job's repeats (3 to 10) its ends are few distinct values and it is too narrow
 * rather than too wide: a settled ratio near 1 deserves more repeats.
 * @template T
 * @param {T[]} items
 * @param {(sample: T[]) => number} statistic
 * @param {number} against the value whose exclusion settles it
 * @returns {Interval}
 */
function percentileBootstrap(items, statistic, against) {
  const pairs = items.length;
  if (pairs < MIN_PAIRS) return { pairs, low: null, high: null, settled: null, why: FEW[pairs] };
  const random = mulberry32(BOOTSTRAP_SEED);
  const resampled = Array.from({ length: RESAMPLES }, () => statistic(sampleWithReplacement(items, pairs, random)));
  resampled.sort((x, y) => x - y);
  const tail = (1 - CONFIDENCE) / 2;
  const low = quantileSorted(resampled, tail);
  const high = quantileSorted(resampled, 1 - tail);
  return { pairs, low, high, settled: low > against || high < against, why: null };
}


/**
 * A 95% interval of the ratio of two columns' medians, from their interleaved repeats: run i of one column and run i of the
 * other were measured back to back, so the runs are paired by index and resampled as pairs (the bootstrap of pairs of
 * Efron & Tibshirani 1993, ch. 9, which keeps what a repeat's two runs shared, a busy minute of the machine), the ratio of
 * the medians taken in each resample, and the interval read off by the percentile bootstrap (ch. 13; percentileBootstrap).
 * simple-statistics offers resampling (sampleWithReplacement) and a permutation test of means between two unpaired
 * groups, not an interval: the interval is read here. Settled: the interval excludes 1, so the runs say which column is higher.
 * @param {Array<number|null|undefined>} baseline one value per run of the baseline column, in run order
 * @param {Array<number|null|undefined>} compared one per run of the compared column, in run order; a pair where either
 *   value is not a finite number is left out, as are runs past the shorter column's
 * @returns {Interval|null} null when a baseline value is not above 0 (a ratio to it means nothing); an interval with
 *   fewer than MIN_PAIRS pairs has no ends, and says why
 */
export function ratioInterval(baseline, compared) {
  const pairs = baseline.slice(0, compared.length).flatMap((x, i) => (finite(x) && finite(compared[i]) ? [[x, compared[i]]] : []));
  if (pairs.some(([x]) => !(x > 0))) return null;
  return percentileBootstrap(pairs, (sample) => median(sample.map(([, y]) => y)) / median(sample.map(([x]) => x)), 1);
}

/**
 * A 95% interval of the median of per-repeat values, e.g. ratios taken per repeat (npm run targets): the same percentile
 * bootstrap as ratioInterval's, over the repeats.
 * @param {Array<number|null|undefined>} values one per repeat; those that are not finite numbers are left out
 * @param {number} against the value whose exclusion settles it (a target, or 1)
 * @returns {Interval}
 */
export function medianInterval(values, against) {
  return percentileBootstrap(values.filter(finite), (sample) => median(sample), against);
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
