// The performance targets' report (npm run targets): each target's RPS ratio, median and range over the repeats,
// against what is required, then the decomposition it was measured in.
import { markdownTable } from 'markdown-table';
import { renderDecomposition } from './decomposition.js';
import { spread } from './stats.js';

/**
 * One target's row: the median and range of its per-repeat ratios, and whether the median meets it.
 * @param {string} target what is compared
 * @param {number[]} ratios one RPS ratio per repeat
 * @param {number} required the least median
 * @returns {{target: string, median: number, min: number, max: number, runs: number[], required: number, met: boolean}}
 */
export const targetRow = (target, ratios, required) => {
  const { median, min, max } = spread(ratios);
  return { target, median, min, max, runs: ratios, required, met: median >= required };
};


/**
 * The targets as Markdown: their table, how they were measured, and the decomposition.
 * @param {{results: ReturnType<typeof targetRow>[], setup: string, decomposition: object}} report
 * @returns {string}
 */
export function renderTargets({ results, setup, decomposition }) {
  const fmt = (n) => n.toFixed(3);
  const table = markdownTable([['target', 'RPS ratio, median (min–max)', 'required', 'result'],
    ...results.map((r) => [r.target, `${fmt(r.median)} (${fmt(r.min)}–${fmt(r.max)})`, `≥ ${r.required}`, r.met ? 'met' : 'MISSED'])],
  { align: ['l', 'r', 'r', 'l'] });
  return `## Performance targets\n\n${table}\n\n${setup}\n\n${renderDecomposition(/** @type {any} */ (decomposition))}`;
}
