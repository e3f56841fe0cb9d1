// What the bench commands share in how they say things: numbers, file time stamps, progress lines (what k6 says of a
// run is read in bench/k6/output.js).

/**
 * What a report says of a figure a run did not measure (k6's CPU, the server's accounting, a capacity pass, the client's
 * ceiling: bench/report/rows.js MEASUREMENTS), in its table and its sentences; its JSON holds null there.
 */
export const NOT_MEASURED = 'not measured';

/**
 * A number for a table: thousands separated, fixed digits; 'n/a' when there is none (null, or not a finite number).
 * @param {number|null|undefined} value
 * @param {number} [digits] decimals (default 0)
 * @returns {string} e.g. '12,345.6'
 */
export const formatNumber = (value, digits = 0) => (typeof value !== 'number' || !Number.isFinite(value) ? 'n/a'
  : value.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits }));

/**
 * A number rounded to some decimals, for the JSON a report writes; anything not finite (null, NaN) is returned as it is.
 * @param {number} n
 * @param {number} [digits] decimals (default 2)
 * @returns {number}
 */
export const round = (n, digits = 2) => (Number.isFinite(n) ? Number(n.toFixed(digits)) : n);

/**
 * A duration for progress lines, in minutes and seconds.
 * @param {number} ms
 * @returns {string} e.g. '2m05s'
 */
export const clock = (ms) => {
  const s = Math.round(ms / 1000);
  return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`;
};

/**
 * One progress line per step on stderr, with the time left once it can be told: `[3/6] user · http · run 2 of 3 ·
 * 0m41s elapsed · about 0m40s left`. The time left is the steps' mean so far, or `estimateS` a step until one is done.
 * @param {number} total steps in the job
 * @param {number|null} [estimateS] seconds a step should take (default null: no time left before the first is done)
 * @returns {{next: (what: string) => void}} next: says a step starts
 */
export function progressOf(total, estimateS = null) {
  const start = Date.now();
  let done = 0;
  return {
    next(what) {
      const elapsed = Date.now() - start;
      const per = done > 0 ? elapsed / done : estimateS === null ? null : estimateS * 1000;
      const left = per === null ? '' : ` · about ${clock(per * (total - done))} left`;
      done++;
      console.error(`[${done}/${total}] ${what} · ${clock(elapsed)} elapsed${left}`);
    },
  };
}

/**
 * A time as it goes into file names: ISO 8601 with ':' and '.' made '-'.
 * @param {Date|string} [time] a Date or an ISO string (default now)
 * @returns {string} e.g. '2026-11-23T12-17-28-894Z'
 */
export const fileStamp = (time = new Date()) => (typeof time === 'string' ? time : time.toISOString()).replace(/[:.]/g, '-');
