// The performance targets' report (npm run targets): each target's RPS ratio, median and range over the repeats,
// against what is required, then the decomposition it was measured in.
import { markdownTable } from 'markdown-table';
import { renderDecomposition } from './decomposition.js';
import { NOT_SETTLED_MARK, provenanceLine } from './render.js';
import { ratiosInterval, spread } from './stats.js';
import { NOT_MEASURED } from '../format.js';

/**
 * One target's row: the median and range of its per-repeat ratios, its 95% interval, and whether the median meets it.
 * @param {string} target what is compared
 * @param {number[]} ratios one RPS ratio per repeat; one that is not a finite number (a run of no requests) is left out
 * @param {number|null} required the least median, or null for a ratio shown without a target
 * @param {{group?: string, control?: boolean, caveat?: string|null}} [of] group: the load its runs shared (e.g. 'grpc
 *   (h2load -c8 -m32)'); control: the row is that group's A/A control (the same code run twice), no target; caveat: what
 *   the reader must know to read its verdict, said beside it (e.g. that the load generator was not the limit)
 * @returns {{target: string, median: number|null, min: number|null, max: number|null, runs: number[], required: number|null,
 *   met: boolean|null, interval: import('./stats.js').Interval, group: string|null, control: boolean, caveat: string|null}} median, min, max null
 *   (and met null) when no ratio was measured; interval: the median's 95% interval over the repeats, each repeat's ratio
 *   pairing two runs measured side by side (stats.js ratiosInterval, the t interval of the main report's ratios),
 *   settled when it excludes `required` (1 for a row without a target); no ends with fewer than 3 repeats
 */
export const targetRow = (target, ratios, required, { group = null, control = false, caveat = null } = {}) => {
  const { median = null, min = null, max = null } = spread(ratios) ?? {};
  return {
    target, median, min, max, runs: ratios, required, met: required === null || median === null ? null : median >= required,
    interval: ratiosInterval(ratios, required ?? 1), group, control, caveat,
  };
};

/**
 * How far the machine alone moved a ratio in one group of runs: the A/A control's run farthest from 1.
 * @param {ReturnType<typeof targetRow>[]} results
 * @param {string|null} group
 * @returns {number|null} |ratio − 1| of that run (0.1 = 10%), or null when the group has no control
 */
export function noiseOf(results, group) {
  const control = results.find((r) => r.control && r.group === group);
  return control && control.median !== null ? Math.max(Math.abs(control.min - 1), Math.abs(control.max - 1)) : null;
}


/**
 * The targets as Markdown: their table, how they were measured, the provenance line, and the decompositions they were measured in.
 * @param {{results: ReturnType<typeof targetRow>[], setup: string, decompositions: object[],
 *   provenance: import('../provenance.js').Provenance}} report
 * @returns {string}
 */
export function renderTargets({ results, setup, decompositions, provenance }) {
  const fmt = (n) => n.toFixed(3);
  // A verdict nearer its target than the same code's two runs were apart is one this run cannot settle: said, not hidden.
  const verdictOf = (r) => {
    if (r.median === null) return r.required === null ? '' : NOT_MEASURED;
    const verdict = { true: 'met', false: 'MISSED', null: '' }[String(r.met)];
    const noise = r.required === null ? null : noiseOf(results, r.group);
    return noise !== null && Math.abs(r.median - r.required) < noise ? `${verdict} (within the A/A's ±${(noise * 100).toFixed(0)}%)` : verdict;
  };
  const result = (r) => (r.caveat ? `${verdictOf(r)} (${r.caveat})` : verdictOf(r));
  const ratio = (r) => (r.median === null ? NOT_MEASURED : `${fmt(r.median)} (${fmt(r.min)}–${fmt(r.max)})`);
  // The median's 95% interval, marked as the main report marks a ratio it does not settle (render.js NOT_SETTLED_MARK).
  const interval = ({ interval: i }) => (typeof i?.low !== 'number' ? '' : `[${fmt(i.low)}–${fmt(i.high)}]${i.settled ? '' : ` ${NOT_SETTLED_MARK}`}`);
  const table = markdownTable([['target', 'RPS ratio, median (min–max)', 'required', 'result', '95% interval'],
    ...results.map((r) => [r.target, ratio(r), r.required === null ? '' : `≥ ${r.required}`, result(r), interval(r)])],
  { align: ['l', 'r', 'r', 'l', 'r'] });
  const marked = results.some((r) => typeof r.interval?.low === 'number' && !r.interval.settled)
    ? `\n\nThe 95% interval is that of the repeats' ratios, Student's t of their logarithms (docs/report.md); \`${NOT_SETTLED_MARK}\`: it includes the `
      + 'required ratio (1 where none is required), so these repeats do not settle the result.'
    : '';
  const aa = results.some((r) => r.control)
    ? '\n\nThe A/A rows run the same code twice: their farthest run from 1 is what the machine alone moved a ratio by in that '
      + 'load. A verdict marked "within the A/A" has its median nearer the target than that, and this run does not settle it.'
    : '';
  const parts = decompositions.map((d) => renderDecomposition(/** @type {any} */ (d)));
  return `## Performance targets\n\n${table}${marked}\n\n${setup}${aa}\n\n${provenanceLine(provenance, [])}\n\n${parts.join('\n')}`;
}
