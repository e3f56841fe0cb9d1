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
