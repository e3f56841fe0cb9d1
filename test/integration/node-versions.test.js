// NODE_VERSIONS end to end: bash bench.sh runs the server under Node 20 and the pinned release, interleaved,
// one column per mode and release, and each column's server says itself which release it ran on.
import assert from 'node:assert/strict';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { k6Bin } from '../helpers/k6.js';
import { sh } from '../helpers/run.js';
import { ROOT } from '../helpers/server.js';

// The pinned release, from its one definition.
const PIN = (await readFile(path.join(ROOT, 'scripts/ensure-tool.sh'), 'utf8')).match(/^NODE_PIN=([0-9.]+)$/m)?.[1];
const RELEASES = [['20', /^v20\.\d+\.\d+$/], [PIN, new RegExp(`^v${PIN?.replaceAll('.', '\\.')}$`)]];

let dir;
let bench;
before(async () => {
  assert.ok(PIN, 'NODE_PIN in scripts/ensure-tool.sh');
  dir = await mkdtemp(path.join(os.tmpdir(), 'bench-node-versions-'));
  // Provisioning Node 20 from the npm registry the first time takes a few seconds more.
  bench = await sh('bash', ['bench.sh'], {
    K6_BIN: k6Bin(), NODE_VERSIONS: `20,${PIN}`, DURATION: '2s', WARMUP: '1s', REPEATS: '1', VUS: '4', SCENARIO: 'user', RESULTS_DIR: dir,
    CALIBRATE: '0s', CAPACITY: '0', // not what this test checks (bench.test.js does): 10–20 s of CI saved
  }, 300000);
});
after(() => rm(dir, { recursive: true, force: true }));

test('NODE_VERSIONS=20,<pin>: one column per mode and release, each server on its release, both modes measured', async () => {
  assert.equal(bench.code, 0, bench.stderr + bench.stdout);
  const json = (await readdir(dir)).find((f) => /^compare-.*\.json$/.test(f));
  const report = JSON.parse(await readFile(path.join(dir, json), 'utf8'));
  assert.deepEqual(report.order, ['http', 'grpc'].flatMap((mode) => RELEASES.map(([release]) => `${mode}@node${release}`)));
  for (const mode of ['http', 'grpc']) {
    for (const [release, version] of RELEASES) {
      const key = `${mode}@node${release}`;
      const m = report.modes[key];
      assert.ok(m.requests > 0 && m.server_requests > 0, `${key}: no requests`);
      assert.equal(m.failed, 0, `${key}: failed requests`);
      assert.equal(m.node_release, release);
      assert.match(m.node, version, key);
      for (const { file } of m.runs) {
        const { bench: { run } } = JSON.parse(await readFile(file, 'utf8'));
        // The server's own word (its admin endpoint's nodejs_version_info), what the job started it with, and provenance.
        assert.match(run.server.node, version, `${file}: the server reported ${run.server.node}`);
        assert.equal(run.node.release, release);
        assert.match(run.node.version, version);
        assert.equal(run.node.path, path.join(ROOT, `.tools/node-${release}/bin/node`), 'NODE_VERSIONS always provisions its releases');
        assert.match(run.provenance.versions.node, version);
      }
    }
  }
  const [first, pin] = RELEASES.map(([release]) => release);
  assert.deepEqual(Object.keys(report.ratios), [`http@node${pin}/http@node${first}`, `grpc@node${first}/http@node${first}`,
    `grpc@node${pin}/http@node${pin}`, `grpc@node${pin}/grpc@node${first}`]);
  // Columns differing only in their release are one setup: no warning above or below the table.
  assert.deepEqual(report.provenance.differences, []);
  assert.ok(!report.notes.some((n) => /NOT COMPARABLE/.test(n)), report.notes.join('\n'));
  assert.doesNotMatch(bench.stdout, /NOT THE SAME SETUP|NOT COMPARABLE/);
  assert.match(bench.stdout, new RegExp(`\\| HTTP \\(JSON\\) · Node v20\\.\\d+\\.\\d+ local \\| HTTP \\(JSON\\) · Node v${pin.replaceAll('.', '\\.')} local \\|`));
  assert.match(bench.stderr, /^\[1\/4\] user · http@node20 · run 1 of 1/m);
  assert.equal((await readdir(dir)).filter((f) => /^k6-(http|grpc)-node[0-9.]+-local-user-.*-r1\.json$/.test(f)).length, 4);
});

test('NODE_VERSIONS: a bad list, or a release that cannot be had, stops the job with one line before anything starts', async () => {
  const twice = await sh('bash', ['bench.sh'], { NODE_VERSIONS: '20,20', K6_BIN: '/nonexistent/k6' });
  assert.notEqual(twice.code, 0);
  assert.match(twice.stderr, /^bench: invalid setting NODE_VERSIONS="20,20": 20 listed twice/m);
  // --check-settings stops after the pre-flight checks, which provision every release.
  const none = await sh('bash', ['bench.sh', '--check-settings'], { NODE_VERSIONS: '20,99', K6_BIN: '/nonexistent/k6' }, 120000);
  assert.notEqual(none.code, 0);
  assert.match(none.stderr, /^bench: NODE_VERSIONS: node 99: [^\n]*99/m);
  assert.doesNotMatch(none.stderr, /at .*\.js:\d+/, 'no stack trace');
});
