// One measured run split over several k6 processes (K6_INSTANCES), the way k6-operator
// splits a TestRun over `parallelism` runners: each process runs one execution segment of
// the same test, and their results are merged exactly. Counters and rates add up; trend
// percentiles are computed again from every instance's raw samples (k6's CSV output),
// never averaged: the mean of two p99s is not the p99 of the whole run.
import { createReadStream } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createInterface } from 'node:readline';

/**
 * @typedef {object} Segment one k6 process's share of the run
 * @property {string} segment `--execution-segment`, e.g. `1/3:2/3`
 * @property {string} sequence `--execution-segment-sequence`, the same for every instance, e.g. `0,1/3,2/3,1`
 */

const fraction = (i, n) => (i === 0 ? '0' : i === n ? '1' : `${i}/${n}`);

/**
 * Equal execution segments for n k6 processes, with the sequence that lets k6 give each
 * the same share of VUs and iterations (https://grafana.com/docs/k6/latest/using-k6/k6-options/reference/#execution-segment).
 * @param {number} n instances, at least 1
 * @returns {Segment[]} one per instance, in order
 */
export function executionSegments(n) {
  const sequence = Array.from({ length: n + 1 }, (_, i) => fraction(i, n)).join(',');
  return Array.from({ length: n }, (_, i) => ({ segment: `${fraction(i, n)}:${fraction(i + 1, n)}`, sequence }));
}

/**
 * k6's arguments that make one instance write every sample to a CSV file: no system tags, so
 * that a row is a metric name, a time and a value (about 40 bytes instead of about 500).
 * @param {string} csvFile
 * @returns {string[]}
 */
export const sampleOutputArgs = (csvFile) => ['--system-tags=', '--out', `csv=${csvFile}`];

/**
 * A percentile as k6 computes a trend's: linear interpolation between the two nearest ranks
 * (go.k6.io/k6 v1.8.1 metrics/sink.go, TrendSink.P). test/unit/k6-split.test.js checks it
 * gives k6's own figures.
 * @param {Float64Array|number[]} sorted ascending samples
 * @param {number} p 0..1
 * @returns {number} 0 for no samples
 */
export function k6Percentile(sorted, p) {
  if (sorted.length === 0) return 0;
  if (sorted.length === 1) return sorted[0];
  const i = p * (sorted.length - 1);
  const lo = sorted[Math.floor(i)];
  const hi = sorted[Math.ceil(i)];
  return lo + (hi - lo) * (i - Math.floor(i));
}

/**
 * Reads the samples of the given metrics from a k6 CSV output file (`metric_name,timestamp,metric_value,…`).
 * @param {string} file
 * @param {Set<string>} names metrics to keep
 * @returns {Promise<Map<string, number[]>>} values by metric (as k6 wrote them: 6 decimals)
 * @throws {Error} naming the file when it is not k6's CSV output
 */
export async function readSamples(file, names) {
  /** @type {Map<string, number[]>} */
  const samples = new Map([...names].map((name) => [name, []]));
  const lines = createInterface({ input: createReadStream(file), crlfDelay: Infinity });
  let first = true;
  for await (const line of lines) {
    if (first) {
      if (!line.startsWith('metric_name,timestamp,metric_value')) throw new Error(`${file} is not k6's CSV output (its first line is ${JSON.stringify(line.slice(0, 60))})`);
      first = false;
      continue;
    }
    const comma = line.indexOf(',');
    const values = samples.get(line.slice(0, comma));
    if (!values) continue;
    const from = line.indexOf(',', comma + 1) + 1;
    values.push(Number(line.slice(from, line.indexOf(',', from))));
  }
  if (first) throw new Error(`${file} is empty: k6 wrote no samples`);
  return samples;
}

/** The quantile a trend stat names: `med` 0.5, `p(99)` 0.99, `p(99.9)` 0.999; null for the others. */
const quantileOf = (stat) => (stat === 'med' ? 0.5 : /^p\((\d+(\.\d+)?)\)$/.test(stat) ? Number(stat.slice(2, -1)) / 100 : null);

/** A trend's values from all its samples, with the stats the instances' summaries carry. */
function trendValues(stats, values) {
  const sorted = Float64Array.from(values).sort();
  const sum = sorted.reduce((a, b) => a + b, 0);
  const out = {};
  for (const stat of stats) {
    const q = quantileOf(stat);
    if (q !== null) out[stat] = k6Percentile(sorted, q);
    else if (stat === 'avg') out[stat] = sorted.length ? sum / sorted.length : 0;
    else if (stat === 'min') out[stat] = sorted.length ? sorted[0] : 0;
    else if (stat === 'max') out[stat] = sorted.length ? sorted[sorted.length - 1] : 0;
    else if (stat === 'count') out[stat] = sorted.length;
    else throw new Error(`trend stat ${stat} cannot be merged`);
  }
  return out;
}

/**
 * @typedef {object} Instance one k6 process of a split run
 * @property {string} file its summary file, for error messages
 * @property {object} summary its k6 summary (handleSummary's JSON)
 * @property {Map<string, number[]>} samples its trend metrics' raw samples, by metric (readSamples)
 */

/**
 * Merges the summaries of one run split over k6 instances into one summary of the same shape,
 * which every reader of a k6 summary takes as it is:
 * - counters: `count` summed; `rate` = count ÷ the merged duration;
 * - rates (`http_req_failed`, `checks`, …): `passes` and `fails` summed, `rate` recomputed;
 * - gauges (`vus`, `vus_max`): summed, since each instance ran its share of the VUs;
 * - trends: every stat computed again from the concatenated samples (k6Percentile);
 * - `state.testRunDurationMs`: the longest instance's;
 * - the rest (`options`, `setup_data`, `bench`) from the first instance; `root_group`'s
 *   per-check counts stay in each instance's summary;
 * - trend sub-metrics (`name{tag:value}`, from thresholds) are left out, since the CSV has no
 *   rows of their own, and listed in `bench.merged.dropped_submetrics`.
 * @param {Instance[]} instances
 * @returns {object} the merged summary
 * @throws {Error} when the instances ran different metrics, or a trend's samples do not match its summary's count
 *   (a CSV cut short would otherwise merge into silently wrong percentiles)
 */
export function mergeSummaries(instances) {
  if (instances.length === 0) throw new Error('no k6 instance to merge');
  const [first] = instances;
  const durationMs = Math.max(...instances.map((i) => i.summary.state.testRunDurationMs));
  const names = new Set(instances.flatMap((i) => Object.keys(i.summary.metrics)));
  const metrics = {};
  const dropped = [];
  for (const name of names) {
    const parts = instances.map((i) => i.summary.metrics[name]).filter(Boolean);
    const { type, contains } = parts[0];
    const values = parts.map((m) => m.values);
    const sum = (key) => values.reduce((a, v) => a + (v[key] ?? 0), 0);
    let merged;
    // A sub-metric ('http_req_duration{status:200}') has no rows of its own in the CSV output.
    if (type === 'trend' && name.includes('{')) {
      dropped.push(name);
      continue;
    }
    if (type === 'counter') {
      merged = { count: sum('count'), rate: sum('count') / (durationMs / 1000) };
    } else if (type === 'rate') {
      const passes = sum('passes');
      const fails = sum('fails');
      merged = { passes, fails, rate: passes + fails > 0 ? passes / (passes + fails) : 0 };
    } else if (type === 'gauge') {
      merged = { value: sum('value'), min: sum('min'), max: sum('max') };
    } else if (type === 'trend') {
      const all = [];
      for (const [k, instance] of instances.entries()) {
        const own = instance.summary.metrics[name];
        if (!own) continue;
        const samples = instance.samples.get(name);
        if (!samples || samples.length !== own.values.count) {
          throw new Error(`instance ${k + 1} (${instance.file}): its summary counts ${own.values.count} samples of ${name}, `
            + `its CSV output holds ${samples?.length ?? 0}`);
        }
        for (const v of samples) all.push(v);
      }
      merged = trendValues(Object.keys(parts[0].values), all);
    } else {
      throw new Error(`metric ${name} has type ${type}, which cannot be merged`);
    }
    metrics[name] = { type, contains, values: merged };
  }
  const rest = { ...first.summary };
  delete rest.root_group;
  return {
    ...rest, metrics, state: { ...first.summary.state, testRunDurationMs: durationMs },
    bench: { ...first.summary.bench, merged: { instances: instances.length, dropped_submetrics: dropped } },
  };
}

/**
 * The names of a summary's trend metrics, which readSamples must keep for mergeSummaries.
 * @param {object[]} summaries
 * @returns {Set<string>}
 */
export const trendNames = (summaries) => new Set(summaries.flatMap((s) => Object.entries(s.metrics)
  .filter(([, m]) => m.type === 'trend').map(([name]) => name)));

/**
 * Reads the instances of one split run from their files and merges them (mergeSummaries).
 * @param {Array<{summary: string, samples: string}>} files each instance's JSON summary and CSV output, in segment order
 * @returns {Promise<{instances: Instance[], merged: object}>}
 * @throws {Error} naming the file that cannot be read or merged
 */
export async function mergeFiles(files) {
  /** @type {Instance[]} */
  const instances = [];
  for (const { summary } of files) {
    let data;
    try {
      data = JSON.parse(await readFile(summary, 'utf8'));
    } catch (err) {
      throw new Error(`${summary}: ${err.code === 'ENOENT' ? 'no such file' : 'is not a JSON k6 summary'}`, { cause: err });
    }
    if (typeof data?.metrics !== 'object' || typeof data?.state?.testRunDurationMs !== 'number') {
      throw new Error(`${summary}: is not a k6 summary (no "metrics" and "state.testRunDurationMs")`);
    }
    instances.push({ file: summary, summary: data, samples: new Map() });
  }
  const names = trendNames(instances.map((i) => i.summary));
  for (const [i, { samples }] of files.entries()) {
    try {
      instances[i].samples = await readSamples(samples, names);
    } catch (err) {
      throw new Error(err.code === 'ENOENT' ? `${samples}: no such file` : err.message, { cause: err });
    }
  }
  return { instances, merged: mergeSummaries(instances) };
}
