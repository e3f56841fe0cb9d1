// npm run compare -- <summary-a.json> <summary-b.json> [--out DIR]
// Prints the side-by-side table of two k6 summaries and writes it as Markdown and JSON.
import { parseArgs } from 'node:util';
import { buildReport, renderMarkdown, writeReport } from './report.js';
import { readSummary } from './summary.js';

const USAGE = 'usage: npm run compare -- <summary-a.json> <summary-b.json> [--out DIR]';

try {
  const { values, positionals } = parseArgs({ allowPositionals: true, options: { out: { type: 'string', default: 'results' } } });
  if (positionals.length !== 2) throw Object.assign(new Error(USAGE), { code: 'ERR_USAGE' });
  const [a, b] = await Promise.all(positionals.map(readSummary));
  const report = buildReport(a, b);
  process.stdout.write(`${renderMarkdown(report)}\n`);
  const paths = await writeReport(report, values.out);
  process.stdout.write(`written: ${paths.markdown}, ${paths.json}\n`);
} catch (err) {
  if (!err.code?.startsWith('ERR_')) throw err;
  process.stderr.write(`compare: ${err.message}\n`);
  process.exit(2);
}
