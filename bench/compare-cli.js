// npm run compare -- <summary.json> <summary.json> [more summaries...] [--out DIR]
// Prints the side-by-side table of k6 summaries written by the project's scripts
// and writes it as Markdown and JSON. Summaries of the same mode and target are
// repeats of one column (median and spread); with only one such group, each file is a column.
import { realpathSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { parseHost } from '../config.js';
import { runCli } from './cli.js';
import { SummaryError } from './errors.js';
import { buildReport, renderMarkdown, writeReports } from './report.js';
import { readSummary } from './summary.js';

const USAGE = 'usage: npm run compare -- <summary-a.json> <summary-b.json> [more...] [--out DIR]';

/**
 * Groups figures into report columns, in the order first seen.
 * @param {import('./summary.js').ModeFigures[]} figures
 * @returns {Array<{key: string, runs: import('./summary.js').ModeFigures[]}>}
 */
export function columnsOf(figures) {
  const targets = new Set(figures.map((f) => f.target));
  const keyOf = (f) => (targets.size > 1 && f.target ? `${f.mode}-${f.target}` : f.mode);
  const columns = new Map();
  for (const f of figures) {
    if (!columns.has(keyOf(f))) columns.set(keyOf(f), []);
    columns.get(keyOf(f)).push(f);
  }
  if (columns.size > 1) return [...columns].map(([key, runs]) => ({ key, runs }));
  return figures.map((f, i) => ({ key: `${f.mode}-${i + 1}`, runs: [f] }));
}

/**
 * Reads one summary and checks the host it records, as the k6 scripts would have.
 * @param {string} file
 * @returns {Promise<import('./summary.js').ModeFigures>}
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

async function main() {
  const { values, positionals } = parseArgs({ allowPositionals: true, options: { out: { type: 'string', default: 'results' } } });
  if (positionals.length < 2) throw Object.assign(new Error(USAGE), { code: 'ERR_USAGE' });
  const figures = [];
  for (const file of positionals) figures.push(await readCheckedSummary(file));
  const report = buildReport(columnsOf(figures));
  process.stdout.write(`${renderMarkdown(report)}\n`);
  const paths = await writeReports([report], values.out);
  process.stdout.write(`written: ${[paths.markdown, paths.json, ...paths.charts].join(', ')}\n`);
}

// Run as a command, not imported: compared as real paths, so spaces, '%' and symlinks in the path don't matter.
const isMain = () => {
  try {
    return realpathSync(fileURLToPath(import.meta.url)) === realpathSync(process.argv[1]);
  } catch {
    return false;
  }
};
if (isMain()) await runCli('compare', main, 2);
