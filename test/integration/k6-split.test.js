// A measured run split over two k6 instances (K6_INSTANCES=2), end to end: bash bench.sh against
// real servers on loopback, then compare on its summaries. The merge itself is proved on recorded
// samples in test/unit/k6-split.test.js.
import assert from 'node:assert/strict';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { k6Bin } from '../helpers/k6.js';
import { sh } from '../helpers/run.js';
import { tempDir } from '../helpers/tmp.js';

let dir;
let bench;
before(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'bench-split-'));
  bench = await sh('bash', ['bench.sh'], { K6_BIN: k6Bin(), K6_INSTANCES: '2', DURATION: '2s', WARMUP: '0s', VUS: '4', REPEATS: '1', RESULTS_DIR: dir,
    CAPACITY: '0' }); // not what this test checks (bench.test.js does); no calibration either: K6_INSTANCES > 1 skips it
});
after(() => rm(dir, { recursive: true, force: true }));

test('K6_INSTANCES=2: merged requests = the instances\' sum = the server\'s own count, in both modes', async () => {
  assert.equal(bench.code, 0, bench.stderr + bench.stdout);
  const json = (await readdir(dir)).find((f) => /^compare-.*\.json$/.test(f));
  const report = JSON.parse(await readFile(path.join(dir, json), 'utf8'));
  for (const mode of ['http', 'grpc']) {
    const [split] = report.k6_instances[mode];
    assert.equal(split.instances.length, 2);
    assert.deepEqual(split.instances.map((i) => i.segment), ['0:1/2', '1/2:1']);
    const sum = split.instances.reduce((a, i) => a + i.requests, 0);
    assert.ok(sum > 100, `${mode}: ${sum} requests`);
    assert.equal(split.merged.requests, sum, mode);
    assert.equal(split.merged.server_requests, sum, `${mode}: the server counted what k6 did`);
    assert.equal(report.modes[mode].requests, sum);
    const p99s = split.instances.map((i) => i.latency_ms.p99);
    assert.ok(split.merged.p99_ms > 0 && p99s.every((p) => p > 0));
    assert.equal(report.modes[mode].failed, 0);
  }
  assert.match(bench.stdout, /\*\*k6 instances\.\*\*/);
  assert.match(bench.stdout, /\| http +\| +1 \| \*\*merged\*\* +\|/);
});

test('compare takes a merged summary, and refuses one instance\'s as the whole run', async (t) => {
  const files = await readdir(dir);
  const merged = files.filter((f) => /^k6-(http|grpc)-.*-r1\.json$/.test(f)).sort().reverse(); // http first
  assert.equal(merged.length, 2, files.join());
  const out = await tempDir(t, 'compare-split-');
  const ok = await sh('node', ['bench/cli.js', 'compare', ...merged.map((f) => path.join(dir, f)), '--out', out]);
  assert.equal(ok.code, 0, ok.stderr);
  assert.match(ok.stdout, /\*\*k6 instances\.\*\*/);
  const part = files.find((f) => /^k6-grpc-.*-r1-i2\.json$/.test(f));
  const refused = await sh('node', ['bench/cli.js', 'compare', path.join(dir, merged[0]), path.join(dir, part), '--out', out]);
  assert.notEqual(refused.code, 0);
  assert.match(refused.stderr, /is k6 instance 2 of 2 of one run split by K6_INSTANCES, not the whole run: compare its merged summary/);
  assert.doesNotMatch(refused.stderr, /at .*\.js:\d+/, 'one line, no stack trace');
});

test('npm run merge: a split run\'s files from elsewhere (k6-operator pods) become one summary compare takes', async (t) => {
  const fixtures = path.join('test', 'fixtures', 'k6-split');
  const out = path.join(await tempDir(t, 'merge-'), 'merged.json');
  const pairs = [1, 2].flatMap((n) => [path.join(fixtures, `instance-${n}.json`), path.join(fixtures, `instance-${n}.csv`)]);
  const merged = await sh('node', ['bench/cli.js', 'merge', ...pairs, '--out', out]);
  assert.equal(merged.code, 0, merged.stderr);
  assert.match(merged.stdout, /^merged 2 k6 instances: 153 requests, p99 [\d.]+ ms: /);
  const compared = await sh('node', ['bench/cli.js', 'compare', out, out, '--out', path.dirname(out)]);
  assert.equal(compared.code, 0, compared.stderr);
  assert.match(compared.stdout, /\| requests +\| +153 \| +153 \|/);

  const usage = await sh('node', ['bench/cli.js', 'merge', pairs[0], '--out', out]);
  assert.equal(usage.code, 2);
  assert.match(usage.stderr, /^merge: needs pairs of a summary and its samples CSV, got 1 files; usage: npm run merge -- <summary.json> <samples.csv>/);
  const missing = await sh('node', ['bench/cli.js', 'merge', pairs[0], '/nonexistent.csv', '--out', out]);
  assert.equal(missing.stderr, 'merge: /nonexistent.csv: no such file\n');
});
