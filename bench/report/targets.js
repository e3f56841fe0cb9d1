// The performance targets' report (npm run targets): each target's RPS ratio, median and range over the repeats,
// against what is required, then the decomposition it was measured in.
import { markdownTable } from 'markdown-table';
import { renderDecomposition } from './decomposition.js';
import { provenanceLine } from './render.js';
import { spread } from './stats.js';

/**
 * One target's row: the median and range of its per-repeat ratios, and whether the median meets it.
 * @param {string} target what is compared
 * @param {number[]} ratios one RPS ratio per repeat
 * @param {number|null} required the least median, or null for a ratio shown without a target
 * @returns {{target: string, median: number, min: number, max: number, runs: number[], required: number|null, met: boolean|null}}
 */
export const targetRow = (target, ratios, required) => {
  const { median, min, max } = spread(ratios);
  return { target, median, min, max, runs: ratios, required, met: required === null ? null : median >= required };
};


/**
 * The targets as Markdown: their table, how they were measured, the provenance line, and the decompositions they were measured in.
 * @param {{results: ReturnType<typeof targetRow>[], setup: string, decompositions: object[],
 *   provenance: import('../provenance.js').Provenance}} report
 * @returns {string}
 */
export function renderTargets({ results, setup, decompositions, provenance }) {
  const fmt = (n) => n.toFixed(3);
  const table = markdownTable([['target', 'RPS ratio, median (min–max)', 'required', 'result'],
    ...results.map((r) => [r.target, `${fmt(r.median)} (${fmt(r.min)}–${fmt(r.max)})`, r.required === null ? '' : `≥ ${r.required}`, { true: 'met', false: 'MISSED', null: '' }[String(r.met)]])],
  { align: ['l', 'r', 'r', 'l'] });
  const parts = decompositions.map((d) => renderDecomposition(/** @type {any} */ (d)));
  return `## Performance targets\n\n${table}\n\n${setup}\n\n${provenanceLine(provenance, [])}\n\n${parts.join('\n')}`;
}
