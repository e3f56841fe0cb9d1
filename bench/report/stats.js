// The statistics of repeated measurements, in one place: every job reports a median with
// its min-max spread (simple-statistics does the arithmetic).
import { max, median, min } from 'simple-statistics';

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
