// When the primary replaces a dead worker: at once after a worker that had run a
// while, with growing delays after workers that die soon after they start, and
// never after too many such deaths in a row (a crash loop that a restart cannot fix).

/**
 * @typedef {object} RestartOptions
 * @property {number} stableAfterMs a worker that lived this long (ms) ends a run of quick deaths
 * @property {number} maxQuickDeaths quick deaths in a row, in one worker slot, after which the primary gives up
 * @property {number} firstDelayMs delay (ms) before the replacement after the second quick death in a row;
 *   it doubles with each further one
 * @property {number} maxDelayMs the longest delay (ms)
 */

/** @type {Readonly<RestartOptions>} */
export const RESTART_DEFAULTS = Object.freeze({ stableAfterMs: 10000, maxQuickDeaths: 5, firstDelayMs: 250, maxDelayMs: 5000 });

/**
 * @typedef {{giveUp: false, delayMs: number, quickDeaths: number}
 *   | {giveUp: true, quickDeaths: number}} RestartDecision
 * `quickDeaths` counts the deaths in a row, this one included, that came within
 * `stableAfterMs` of the worker's start (0 when this worker had run longer).
 */

/**
 * A restart policy that keeps a count per worker slot (one slot per forked worker,
 * kept by its replacements), so that several workers dying together do not
 * count as one worker dying again and again.
 * @param {RestartOptions} [options]
 * @returns {{onDeath: (slot: number, livedMs: number) => RestartDecision}}
 */
export function createRestartPolicy(options = RESTART_DEFAULTS) {
  const { stableAfterMs, maxQuickDeaths, firstDelayMs, maxDelayMs } = options;
  const quickDeathsOf = new Map();
  return {
    onDeath(slot, livedMs) {
      const quickDeaths = livedMs < stableAfterMs ? (quickDeathsOf.get(slot) ?? 0) + 1 : 0;
      quickDeathsOf.set(slot, quickDeaths);
      if (quickDeaths >= maxQuickDeaths) return { giveUp: true, quickDeaths };
      // The first quick death may be a one-off (an operator's kill): replace at once.
      const delayMs = quickDeaths <= 1 ? 0 : Math.min(maxDelayMs, firstDelayMs * 2 ** (quickDeaths - 2));
      return { giveUp: false, delayMs, quickDeaths };
    },
  };
}
