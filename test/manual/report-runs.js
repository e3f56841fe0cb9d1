// Each run of several reports (bash bench.sh's results/compare-*.json), pooled by label: the median (min–max) over the
// runs of each mode's RPS and server CPU per request, read from each run's summary (bench/records/summary.js). For an A/B
// of two checkouts whose reports were interleaved (test/manual/bench-ab.sh). Not part of npm test.
//   node test/manual/report-runs.js before=/tmp/before/results/compare-A.json after=results/compare-B.json ...
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { max, median, min } from 'simple-statistics';
import { readSummary } from '../../bench/records/summary.js';

const pooled = {};
for (const [label, file] of process.argv.slice(2).map((a) => a.split('='))) {
  const report = JSON.parse(readFileSync(file, 'utf8'));
  // A run's file is relative to the checkout the report was written in: the folder above results/.
  const root = path.dirname(path.dirname(path.resolve(file)));
  for (const mode of report.order) {
    for (const run of report.modes[mode].runs) {
      const summary = await readSummary(path.join(root, run.file));
      const key = `${label} ${mode}`;
      pooled[key] ??= { rps: [], cpu: [] };
      pooled[key].rps.push(summary.rps);
      pooled[key].cpu.push(summary.server_cpu_us_per_request);
    }
  }
}
const spread = (values, digits) => `${median(values).toFixed(digits)} (${min(values).toFixed(digits)}–${max(values).toFixed(digits)})`;
for (const [key, { rps, cpu }] of Object.entries(pooled)) {
  console.log(`${key}: RPS ${spread(rps, 0)}, server CPU per request ${spread(cpu, 1)} µs, ${rps.length} runs`);
}
