// npm run merge -- <summary.json> <samples.csv> [<summary.json> <samples.csv> ...] --out <merged.json>  (bench/cli.js merge,
// which declares its arguments)
// Merges the results of one run split over k6 processes (k6-operator's `parallelism`, or k6 run by
// hand with --execution-segment) into one summary that compare takes: each process's JSON summary
// (the project's scripts write one) with the CSV output of its samples (`--out csv=<file>`).
// The main job does the same itself with K6_INSTANCES (bench/k6/split.js).
import { writeFile } from 'node:fs/promises';
import { mergeFiles } from '../k6/split.js';
import { figuresOf } from '../records/summary.js';

/**
 * Merges the instances named in args and writes the merged summary.
 * @param {null} settings merge reads no settings
 * @param {{positionals: string[], values: {out?: string}}} args as bench/cli.js parsed them: pairs of summary and
 *   CSV paths, and `out`, the merged summary's path (required: bench/cli.js refuses to run without it)
 * @returns {Promise<void>}
 * @throws {Error} ERR_USAGE for a bad command line; ERR_MERGE naming the file that cannot be read or merged;
 *   SummaryError when the merged summary is not one of the project's scripts'
 */
export async function main(settings, { positionals, values }) {
  if (positionals.length < 2 || positionals.length % 2 !== 0) {
    throw Object.assign(new Error(`needs pairs of a summary and its samples CSV, got ${positionals.length} files`), { code: 'ERR_USAGE' });
  }
  const files = [];
  for (let i = 0; i < positionals.length; i += 2) files.push({ summary: positionals[i], samples: positionals[i + 1] });
  let merged;
  try {
    ({ merged } = await mergeFiles(files));
  } catch (err) {
    throw Object.assign(new Error(err.message), { code: 'ERR_MERGE' });
  }
  // What compare will read of it, checked before it is written: a summary of the project's scripts.
  const { requests, latency_ms: latency } = figuresOf(values.out, merged);
  await writeFile(values.out, JSON.stringify(merged, null, 2));
  process.stdout.write(`merged ${files.length} k6 instances: ${requests} requests, p99 ${latency.p99.toFixed(2)} ms: ${values.out}\n`);
}
