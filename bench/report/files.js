// The report's files: `compare-<time>.md`, `.json` and one chart per scenario.
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { chartSvg } from './chart.js';
import { renderDecomposition } from './decomposition.js';
import { fileStamp } from '../format.js';

import { renderMarkdown } from './render.js';

/**
 * Writes `compare-<time>.md` and `.json` into a folder, with one table and one
 * chart (`compare-<time>-<scenario>.svg`) per scenario. The JSON holds the first
 * scenario's report at its top level (`modes.http`, `modes.grpc`, ...) and
 * every report's in `scenarios[name]` (its `name`: the scenario, with `-via-haproxy` for the run through the balancer).
 * With decompositions (DECOMPOSE=1), their tables follow and the JSON holds them in `decomposition[scenario]`.
 * @param {Array<ReturnType<typeof import('./report.js').buildReport>>} reports one per scenario, at least one
 * @param {string} dir folder, created if missing
 * @param {{decompositions?: Array<ReturnType<typeof import('./decomposition.js').decompositionReport>>}} [extra]
 * @returns {Promise<{markdown: string, json: string, charts: string[]}>} the paths written
 */
export async function writeReports(reports, dir, { decompositions = [] } = {}) {
  await mkdir(dir, { recursive: true });
  const base = path.join(dir, `compare-${fileStamp(reports[0].generated_at)}`);
  const paths = { markdown: `${base}.md`, json: `${base}.json`, charts: [] };
  const sections = [];
  for (const report of reports) {
    const chart = `${base}-${report.name ?? report.scenario}.svg`;
    await writeFile(chart, await chartSvg(report));
    paths.charts.push(chart);
    sections.push(`${renderMarkdown(report)}\n![RPS, p99 latency and bytes per request](${path.basename(chart)})\n`);
  }
  for (const decomposition of decompositions) sections.push(renderDecomposition(decomposition));
  const tables = sections.join('\n');
  await writeFile(paths.markdown, `# JSON over HTTP vs protobuf over gRPC\n\n${tables}`);
  const scenarios = Object.fromEntries(reports.map((r) => [r.name ?? r.scenario, r]));
  const decomposition = decompositions.length ? Object.fromEntries(decompositions.map((d) => [d.scenario, d])) : undefined;
  await writeFile(paths.json, `${JSON.stringify({ ...reports[0], scenarios, decomposition }, null, 2)}\n`);
  return paths;
}
