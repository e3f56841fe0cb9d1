// PROFILE=1 (bench/report/profile.js, server/profiling.js): the classification of profile frames by package,
// and the main job end to end, whose per-package table must add up to the server's own accounting.
import assert from 'node:assert/strict';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { packageOf, profileTotals } from '../bench/report/profile.js';
import { ROOT } from '../bench/processes.js';
import { k6Bin } from './helpers/k6.js';
import { sh } from './helpers/run.js';

test('a frame\'s package comes from its script URL', () => {
  assert.equal(packageOf('file:///app/node_modules/@grpc/grpc-js/build/src/server.js'), '@grpc/grpc-js');
  assert.equal(packageOf('file:///app/node_modules/fastify/node_modules/find-my-way/index.js'), 'find-my-way');
  assert.equal(packageOf('node:internal/http2/core'), 'node http2');
  assert.equal(packageOf('node:_http_server'), 'node http');
  assert.equal(packageOf('node:internal/stream_base_commons'), 'node net');
  assert.equal(packageOf('node:internal/streams/writable'), 'node stream');
  assert.equal(packageOf('node:events'), 'node (other)');
  assert.equal(packageOf(`file://${ROOT}server/grpc.js`), 'this project');
  assert.equal(packageOf(''), null);
});

test('self time: each sample gets the time to the next; a native frame counts to its caller; idle is left out', () => {
  const frame = (id, functionName, url, children = []) => ({ id, callFrame: { functionName, url, lineNumber: 0 }, children });
  const profile = {
    nodes: [
      frame(1, '(root)', '', [2, 4, 5]),
      frame(2, 'handler', 'file:///x/node_modules/fastify/lib/route.js', [3]),
      frame(3, 'writev', ''), // native, called by fastify's frame
      frame(4, '(idle)', ''),
      frame(5, '(garbage collector)', ''),
    ],
    samples: [2, 3, 4, 5, 2],
    timeDeltas: [0, 100, 200, 300, 400],
  };
  const t = profileTotals(profile, 1000);
  // Sample i lasts timeDeltas[i + 1]; the last one the interval.
  assert.deepEqual(t.by_package, { fastify: 100 + 200 + 1000, GC: 400 });
  assert.equal(t.idle_us, 300);
  assert.equal(t.sampled_us, 100 + 200 + 300 + 400 + 1000);
  assert.deepEqual(t.functions.map((f) => [f.name, f.self_us]), [['handler', 1100], ['(garbage collector)', 400], ['writev', 200]]);
});

let dir;
let bench;
before(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'bench-profile-'));
  bench = await sh('bash', ['bench.sh'], { K6_BIN: k6Bin(), PROFILE: '1', DURATION: '3s', WARMUP: '1s', VUS: '8', REPEATS: '1', RESULTS_DIR: dir });
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
