// The sample report (docs/sample-report.json) that README.md and docs/report.md show, rendered by scripts/gen-docs.js:
// a real default run of what the repository pins today. When a pin moves (Node, k6, a library), this fails until the
// sample is made again: `bash bench.sh` on a quiet machine, its results/compare-<time>.json copied to
// docs/sample-report.json, then `npm run docs`. Pure: reads files, writes only to a temporary folder.
import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { benchSettingSpecs } from '../../bench/settings/bench.js';
import { valueAt } from '../../bench/report/rows.js';
import { ROOT, readSample, run, SAMPLE, SAMPLE_FIELDS, sampleReport, sampleVerdict } from '../../scripts/gen-docs.js';

const sample = readSample();
const { recorded } = sample.provenance;

/** A pin of scripts/ensure-tool.sh, the first group of a pattern. */
function pinOf(pattern) {
  const found = pattern.exec(readFileSync(path.join(ROOT, 'scripts/ensure-tool.sh'), 'utf8'));
  assert.ok(found, `scripts/ensure-tool.sh has no ${pattern}`);
  return found[1];
}

test('the sample records the Node and k6 that scripts/ensure-tool.sh pins', () => {
  assert.equal(recorded.versions.node, `v${pinOf(/^NODE_PIN=(\S+)$/m)}`, `${SAMPLE} is of another Node: make it again`);
  assert.equal(recorded.versions.k6, pinOf(/^declare -A VERSION=\([^)]*?^\s*\[k6\]=(\S+)$/m), `${SAMPLE} is of another k6: make it again`);
});

test('the sample records the libraries package-lock.json installs, in the ranges package.json asks for', () => {
  const lock = JSON.parse(readFileSync(path.join(ROOT, 'package-lock.json'), 'utf8'));
  const { dependencies } = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8'));
  const libraries = Object.keys(recorded.versions).filter((name) => name !== 'node' && name !== 'k6');
  assert.deepEqual(libraries.sort(), ['@bufbuild/protobuf', '@connectrpc/connect-node', '@grpc/grpc-js', 'fastify', 'protobufjs']);
  for (const name of libraries) {
    assert.equal(recorded.versions[name], lock.packages[`node_modules/${name}`].version, `${SAMPLE}: ${name} is not the locked release: make it again`);
    // A caret range's major (^8.8.1: 8): what the sample records must be of it.
    const major = /^\^(\d+)\./.exec(dependencies[name])?.[1];
    assert.ok(major, `package.json: ${name} ${dependencies[name]} is not a caret range`);
    assert.equal(recorded.versions[name].split('.')[0], major, `${SAMPLE}: ${name} ${recorded.versions[name]} is outside ${dependencies[name]}`);
  }
});

test('the sample is a default run from a committed checkout, as the README says', () => {
  assert.equal(recorded.dirty, false);
  assert.match(recorded.commit, /^[0-9a-f]{40}$/);
  const specs = benchSettingSpecs();
  // The settings that shape its figures; WORKERS's default depends on the machine (one per server core).
  for (const name of ['VUS', 'REPEATS', 'DURATION', 'WARMUP', 'MODES', 'SCENARIO', 'CAPACITY', 'CALIBRATE', 'CONNECTIONS', 'NETWORK', 'TLS']) {
    assert.deepEqual(recorded.bench[name], specs[name].default, `${SAMPLE} was made with ${name}=${JSON.stringify(recorded.bench[name])}`);
  }
  assert.equal(recorded.bench.RPC ?? null, null, 'the demo, not an own service');
  assert.ok(sample.verdict.length > 0, 'the sample has a verdict');
});

test('the README shows the sample as the report writes it: verdict, the chosen rows, provenance', () => {
  const shown = sampleReport(sample);
  for (const sentence of sample.verdict) assert.ok(shown.includes(`- ${sentence}`));
  assert.ok(sampleVerdict(sample).includes(`- ${sample.verdict[0]}`));
  assert.match(shown, new RegExp(`commit ${recorded.commit.slice(0, 7)} on \\d{4}-\\d\\d-\\d\\d`));
  assert.match(shown, /^\| RPS \(req\/s\) +\|/m);
  // Header and alignment row, then one row for each chosen field the sample has (a capacity pass may not have run).
  const had = SAMPLE_FIELDS.filter((field) => sample.order.some((k) => valueAt(sample.modes[k], field) !== null));
  assert.equal(shown.split('\n').filter((line) => line.startsWith('| ')).length - 2, had.length);
  assert.throws(() => sampleReport({ ...sample, provenance: { recorded: { ...recorded, dirty: true } } }), /uncommitted changes/);
});

test('--check fails when the README\'s sample block differs from what the sample renders', () => {
  const root = mkdtempSync(path.join(os.tmpdir(), 'sample-report-'));
  try {
    cpSync(path.join(ROOT, 'docs'), path.join(root, 'docs'), { recursive: true });
    const readme = path.join(root, 'README.md');
    const current = readFileSync(path.join(ROOT, 'README.md'), 'utf8');
    writeFileSync(readme, current.replace('| RPS (req/s) ', '| RPS (req/s)*'));
    assert.notEqual(readFileSync(readme, 'utf8'), current, 'the edit took');
    const errors = [];
    assert.equal(run({ check: true, root, error: (line) => errors.push(line), log: () => {} }), 1);
    assert.deepEqual(errors, ['README.md is out of date with the code: run npm run docs']);
    // And a sample that says something else makes both docs stale.
    writeFileSync(readme, current);
    const other = { ...sample, verdict: ['Another verdict.'] };
    writeFileSync(path.join(root, SAMPLE), JSON.stringify(other));
    errors.length = 0;
    assert.equal(run({ check: true, root, error: (line) => errors.push(line), log: () => {} }), 1);
    assert.deepEqual(errors.sort(), ['README.md is out of date with the code: run npm run docs',
      'docs/report.md is out of date with the code: run npm run docs']);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});
