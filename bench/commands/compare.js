// npm run compare -- <summary.json> <summary.json> [more summaries...] [--out DIR]  (bench/cli.js compare, which declares its arguments)
// Prints the side-by-side table of k6 summaries written by the project's scripts
// and writes it as Markdown and JSON. Summaries of the same mode and target are
// repeats of one column (median and spread); with only one such group, each file is a column.
import { parseHost } from '../../config.js';
import { SummaryError } from '../errors.js';
import { buildReport } from '../report/report.js';
import { renderMarkdown } from '../report/render.js';
import { writeReports } from '../report/files.js';
import { readSummary } from '../records/summary.js';
import { columnKey } from '../modes.js';

/**
 * Groups figures into report columns, in the order first seen. A compressed run is never a repeat of a raw
 * one, nor a run of one NODE_VERSIONS release a repeat of another's: its column's key says `+gzip` or `@node20`
 * (bench/modes.js columnKey); nor a TLS run a repeat of a cleartext one (`-tls`, when both are given).
 * @param {import('../records/summary.js').ModeFigures[]} figures
 * @returns {Array<{key: string, runs: import('../records/summary.js').ModeFigures[]}>}
 */
export function columnsOf(figures) {
  const targets = new Set(figures.map((f) => f.target));
  // TLS and cleartext runs of a mode are two columns (`http-tls` beside `http`), never repeats of one.
  const tlsMixed = new Set(figures.map((f) => f.tls ?? false)).size > 1;
  const keyOf = (f) => columnKey(`${targets.size > 1 && f.target ? `${f.mode}-${f.target}` : f.mode}${tlsMixed && f.tls ? '-tls' : ''}`,
    f.compression, f.node_release);
  const columns = new Map();
  for (const f of figures) {
    if (!columns.has(keyOf(f))) columns.set(keyOf(f), []);
    columns.get(keyOf(f)).push(f);
  }
  if (columns.size > 1) return [...columns].map(([key, runs]) => ({ key, runs }));
  return figures.map((f, i) => ({ key: columnKey(`${f.mode}-${i + 1}`, f.compression, f.node_release), runs: [f] }));
}

/**
 * Reads one summary and checks the host it records, as the k6 scripts would have.
 * @param {string} file
 * @returns {Promise<import('../records/summary.js').ModeFigures>}
 * @throws {SummaryError} naming the file and what is wrong, the host included
 */
export async function readCheckedSummary(file) {
  const figures = await readSummary(file);
  // '' is what summaries written before the scripts recorded bench.host say.
  if (figures.host !== '') {
    try {
      parseHost('bench.host', figures.host);
    } catch (err) {
      throw new SummaryError(file, err.message);
    }
  }
  return figures;
}

/**
 * Reads the summaries, prints their table and writes it as Markdown and JSON.
 * @param {null} settings compare reads no settings
 * @param {{positionals: string[], values: {out?: string}}} args as bench/cli.js parsed them: the summaries' paths, and
 *   `out`, the folder the table is written to (default `results`)
 * @returns {Promise<void>}
 * @throws {Error} ERR_USAGE with fewer than two summaries; SummaryError for an unreadable one
 */
export async function main(settings, { positionals, values }) {
  if (positionals.length < 2) throw Object.assign(new Error(`needs two summaries or more, got ${positionals.length}`), { code: 'ERR_USAGE' });
  const figures = [];
  for (const file of positionals) figures.push(await readCheckedSummary(file));
  const report = buildReport(columnsOf(figures));
  process.stdout.write(`${renderMarkdown(report)}\n`);
  const paths = await writeReports([report], values.out);
  process.stdout.write(`written: ${[paths.markdown, paths.json, ...paths.charts].join(', ')}\n`);
}
