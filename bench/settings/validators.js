// The validators every job's settings share (envalid), and the arithmetic of k6 durations.
import { makeValidator } from 'envalid';
import { K6_DURATION } from '../../k6/settings.js';

// k6's duration syntax: k6/settings.js K6_DURATION, e.g. 30s, 1m30s, 500ms.
const DURATION_MS = { ms: 1, s: 1000, m: 60000, h: 3600000 };

/**
 * Milliseconds in a k6 duration.
 * @param {string} text e.g. '1m30s'
 * @returns {number} ms
 * @throws {Error} when the text is not a k6 duration
 */
export function durationMs(text) {
  if (!K6_DURATION.test(text)) throw new Error('must be a k6 duration such as 20s, 1m or 1m30s');
  let ms = 0;
  for (const [, n, , unit] of text.matchAll(/([0-9]+(\.[0-9]+)?)(ms|s|m|h)/g)) ms += Number(n) * DURATION_MS[unit];
  return ms;
}

/**
 * envalid validator of a k6 duration (kept as text, as k6 takes it), for every job's settings.
 * @param {{allowZero?: boolean, minMs?: number}} [bounds] allowZero: '0s' is accepted, and a bare '0' (as '0s'); minMs: the least (ms)
 */
export const duration = ({ allowZero = false, minMs = 0 } = {}) => makeValidator((input) => {
  if (allowZero && /^0+$/.test(String(input).trim())) return '0s'; // a bare 0, as the docs write CALIBRATE=0
  const ms = durationMs(String(input));
  if (ms < minMs) throw new Error(`must be at least ${minMs / 1000}s`);
  if (ms === 0 && !allowZero) throw new Error('must be longer than 0');
  return String(input);
});

/**
 * envalid validator of a comma-separated list drawn from `choices`, duplicates dropped.
 * @param {readonly string[]} choices
 */
export const listOf = (choices) => makeValidator((input) => {
  const items = String(input).split(',').map((x) => x.trim()).filter(Boolean);
  const unknown = items.filter((x) => !choices.includes(x));
  if (items.length === 0 || unknown.length) throw new Error(`must be a comma-separated list of ${choices.join(', ')}`);
  return [...new Set(items)];
});

/**
 * envalid validator of NODE_VERSIONS: a comma-separated list of Node releases, each `MAJOR`, `MAJOR.MINOR` or
 * `MAJOR.MINOR.PATCH` (what scripts/ensure-tool.sh node takes), in column order. Empty means none.
 * @returns the releases as written, e.g. ['20', '24.21.0']; [] for ''
 * @throws {Error} (reported by readEnv as one line naming NODE_VERSIONS) for a malformed item, an empty
 *   list (`,`) or a release listed twice
 */
export const nodeReleases = makeValidator((input) => {
  const text = String(input).trim();
  if (text === '') return [];
  const items = text.split(',').map((x) => x.trim()).filter(Boolean);
  if (items.length === 0) throw new Error('must list at least one Node release, e.g. 20,24.21.0');
  const bad = items.filter((x) => !/^[0-9]+(\.[0-9]+){0,2}$/.test(x));
  if (bad.length) throw new Error(`${bad.join(', ')}: each release must be MAJOR, MAJOR.MINOR or MAJOR.MINOR.PATCH, e.g. 20 or 24.21.0`);
  const twice = items.filter((x, i) => items.indexOf(x) !== i);
  if (twice.length) throw new Error(`${[...new Set(twice)].join(', ')} listed twice: each release is one column per mode`);
  return items;
});

const positive = /^[0-9]+(\.[0-9]+)?$/;

/** envalid validator of a number greater than 0, decimals allowed (e.g. a percentage, a slope). */
export const positiveNumber = makeValidator((input) => {
  const value = positive.test(String(input)) ? Number(input) : NaN;
  if (!(value > 0)) throw new Error('must be a number greater than 0');
  return value;
});
