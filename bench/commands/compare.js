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
import { fileStamp } from '../format.js';

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
  // Run i of one column pairs with run i of another (the ratios' intervals): in the order they were measured, not given.
  if (columns.size > 1) return [...columns].map(([key, runs]) => ({ key, runs: inRecordedOrder(runs) }));
  return figures.map((f, i) => ({ key: columnKey(`${f.mode}-${i + 1}`, f.compression, f.node_release), runs: [f] }));
}

/**
 * A column's runs in the order they were measured: by the time each record gives (`bench.run.measured_at`), else by the
 * job's file stamp and repeat in the summary's name (`…-2026-11-28T10-43-17-123Z-r2.json`), else as given. Runs that
 * say neither keep their place after those that do.
 * @param {import('../records/summary.js').ModeFigures[]} runs
 * @returns {import('../records/summary.js').ModeFigures[]}
 */
export function inRecordedOrder(runs) {
  // One text form for both, which sorts in time order: the file stamp's (format.js fileStamp), repeats zero-padded.
  const keyOf = (f) => (f.run?.measured_at ? fileStamp(f.run.measured_at)
    : /(\d{4}-\d\d-\d\dT[\d-]+Z)-r(\d+)\.json$/.exec(f.file ?? '')?.slice(1).map((part, i) => (i === 1 ? part.padStart(6, '0') : part)).join('-r') ?? null);
  const keyed = runs.map((f, i) => ({ f, i, key: keyOf(f) }));
  return keyed.sort((x, y) => {
    if (x.key === null || y.key === null) return Number(x.key === null) - Number(y.key === null) || x.i - y.i;
    return x.key < y.key ? -1 : x.key > y.key ? 1 : x.i - y.i;
  }).map(({ f }) => f);
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
