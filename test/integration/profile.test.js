// PROFILE=1 (bench/passes/profile.js, server/profiling.js): the main job end to end, whose per-package table must add up
// to the server's own accounting (the arithmetic alone: test/unit/profile.test.js).
import assert from 'node:assert/strict';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { k6Bin } from '../helpers/k6.js';
import { sh } from '../helpers/run.js';

let dir;
let bench;
before(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'bench-profile-'));
  // CALIBRATE and CAPACITY off: not what this test checks (bench.test.js does).
  bench = await sh('bash', ['bench.sh'], { K6_BIN: k6Bin(), PROFILE: '1', DURATION: '3s', WARMUP: '1s', VUS: '8', REPEATS: '1',
    CALIBRATE: '0s', CAPACITY: '0', RESULTS_DIR: dir });
});
after(() => rm(dir, { recursive: true, force: true }));

test('PROFILE=1: a .cpuprofile per worker and run, and per-package tables that add up to the accounting', async () => {
  assert.equal(bench.code, 0, bench.stderr + bench.stdout);
  const files = await readdir(dir);
  for (const mode of ['http', 'grpc']) {
    const profiles = files.filter((f) => f.startsWith(`profile-${mode}-`) && f.endsWith('.cpuprofile'));
    assert.equal(profiles.length, 1, `${mode}: ${files}`);
    const profile = JSON.parse(await readFile(path.join(dir, profiles[0]), 'utf8'));
    assert.ok(profile.nodes.length > 0 && profile.samples.length > 100);
  }
  const report = JSON.parse(await readFile(path.join(dir, files.find((f) => /^compare-.*\.json$/.test(f))), 'utf8'));
  const { packages, totals, top } = report.profile;
  const rowOf = (name) => packages.find((p) => p.package === name)?.us_per_request ?? {};
  assert.ok(rowOf('fastify').http > 0 && !(rowOf('fastify').grpc > 0), 'fastify runs in the HTTP mode only');
  assert.ok(rowOf('@grpc/grpc-js').grpc > 0 && !(rowOf('@grpc/grpc-js').http > 0), 'grpc-js in the gRPC mode only');
  assert.ok(rowOf('node http2').grpc > 0);
  for (const mode of ['http', 'grpc']) {
    const t = totals[mode];
    // A 3 s window and /proc's 10 ms ticks: the bench runs longer, and docs/profiling.md shows it within a few %.
    const share = t.sum_us_per_request / t.measured_us_per_request;
    assert.ok(share > 0.8 && share < 1.2, `${mode}: the parts add up to ${(share * 100).toFixed(0)}% of the accounting`);
    assert.ok(t.profiled_us_per_request > 0 && t.native_idle_us_per_request >= 0 && t.other_threads_us_per_request >= 0);
    assert.equal(top[mode].length, 10);
  }
  assert.match(bench.stdout, /\*\*Where the server's CPU goes\*\*/);
  assert.match(bench.stdout, /\| sum ÷ accounting \(%\) +\| +\d+ \| +\d+ \|/);
});
