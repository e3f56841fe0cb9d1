// The merge of a run split over k6 instances (bench/k6/split.js), on samples recorded from a real
// split run: test/fixtures/k6-split/ holds the summaries and CSV outputs of two k6 v1.8.1 processes
// (http-tests/local.js, open model at 150 req/s for 1 s, --execution-segment 0:1/2 and 1/2:1).
import assert from 'node:assert/strict';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { executionSegments, k6Percentile, mergeSummaries, readSamples, trendNames } from '../../bench/k6/split.js';
import { figuresOf } from '../../bench/records/summary.js';
import { tempDir } from '../helpers/tmp.js';

const FIXTURES = fileURLToPath(new URL('../fixtures/k6-split', import.meta.url));

async function recorded() {
  const instances = [];
  for (const n of [1, 2]) {
    const file = path.join(FIXTURES, `instance-${n}.json`);
    const summary = JSON.parse(await readFile(file, 'utf8'));
    instances.push({ file, summary });
  }
  const names = trendNames(instances.map((i) => i.summary));
  for (const [k, instance] of instances.entries()) instance.samples = await readSamples(path.join(FIXTURES, `instance-${k + 1}.csv`), names);
  return instances;
}

const STATS = { med: 0.5, 'p(90)': 0.9, 'p(95)': 0.95, 'p(99)': 0.99 };

test('execution segments: equal shares and one sequence for all', () => {
  assert.deepEqual(executionSegments(1), [{ segment: '0:1', sequence: '0,1' }]);
  assert.deepEqual(executionSegments(3).map((s) => s.segment), ['0:1/3', '1/3:2/3', '2/3:1']);
  assert.ok(executionSegments(3).every((s) => s.sequence === '0,1/3,2/3,1'));
});

test('k6Percentile reproduces k6\'s own trend figures from one instance\'s samples', async () => {
  for (const { summary, samples } of await recorded()) {
    for (const name of ['http_req_duration', 'http_req_waiting', 'iteration_duration']) {
      const sorted = Float64Array.from(samples.get(name)).sort();
      for (const [stat, p] of Object.entries(STATS)) {
        // The CSV holds 6 decimals of each ms value; k6 computed from the unrounded ones.
        assert.ok(Math.abs(k6Percentile(sorted, p) - summary.metrics[name].values[stat]) < 1e-5, `${name} ${stat}`);
      }
    }
  }
});

test('merge: counters and rates add up, percentiles come from the concatenated samples, never averaged', async () => {
  const instances = await recorded();
  const merged = mergeSummaries(instances);
  const sum = (metric, key) => instances.reduce((a, i) => a + i.summary.metrics[metric].values[key], 0);
  for (const counter of ['http_reqs', 'data_sent', 'data_received', 'iterations']) {
    assert.equal(merged.metrics[counter].values.count, sum(counter, 'count'), counter);
  }
  assert.equal(merged.metrics.http_req_failed.values.fails, sum('http_req_failed', 'fails'));
  assert.equal(merged.metrics.vus_max.values.max, sum('vus_max', 'max'));
  assert.equal(merged.state.testRunDurationMs, Math.max(...instances.map((i) => i.summary.state.testRunDurationMs)));

  const all = instances.flatMap((i) => i.samples.get('http_req_duration'));
  assert.equal(merged.metrics.http_req_duration.values.count, all.length);
  const sorted = [...all].sort((a, b) => a - b);
  const p99 = k6Percentile(sorted, 0.99);
  assert.equal(merged.metrics.http_req_duration.values['p(99)'], p99);
  assert.equal(merged.metrics.http_req_duration.values.max, sorted.at(-1));
  // The shortcut this replaces would be wrong here: the mean of the instances' p99s.
  const meanOfP99s = (instances[0].summary.metrics.http_req_duration.values['p(99)'] + instances[1].summary.metrics.http_req_duration.values['p(99)']) / 2;
  assert.ok(Math.abs(meanOfP99s - p99) > 0.01, `mean of p99s ${meanOfP99s} vs p99 ${p99}`);

  // Every reader of a k6 summary takes the merged one as it is.
  const figures = figuresOf('merged.json', merged);
  assert.equal(figures.requests, sum('http_reqs', 'count'));
  assert.equal(figures.latency_ms.p99, p99);
  assert.equal(merged.bench.merged.instances, 2);
});

test('merge refuses samples that do not match the summary (a CSV cut short)', async () => {
  const instances = await recorded();
  instances[1].samples.get('http_req_duration').pop();
  assert.throws(() => mergeSummaries(instances), /instance 2 .* counts \d+ samples of http_req_duration, its CSV output holds \d+/);
});

test('readSamples refuses a file that is not k6\'s CSV output', async (t) => {
  const dir = await tempDir(t, 'k6-split-');
  const bad = path.join(dir, 'bad.csv');
  await writeFile(bad, 'name,value\nx,1\n');
  await assert.rejects(readSamples(bad, new Set(['x'])), /is not k6's CSV output/);
  await writeFile(bad, '');
  await assert.rejects(readSamples(bad, new Set(['x'])), /is empty/);
});
