// npm run sweep's tests that read no timing, apart from sweep.test.js, which runs alone (test/suite.js ALONE): an own
// service swept (a 1 × 1 × 1 sweep over a real emulated link: needs root for ip netns and tc, as CI runs), and bad settings.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { test } from 'node:test';
import { ROOT } from '../helpers/server.js';
import { sweep, skipUnlessRoot } from '../helpers/sweep.js';
import { tempDir } from '../helpers/tmp.js';

test('an own service swept: its RPC names the cell, its twins proven equal first, its files hashed, paths read from BENCH_CWD', { skip: skipUnlessRoot, timeout: 180000 }, async (t) => {
  const dir = await tempDir(t, 'sweep-own-');
  const own = path.join(ROOT, 'test/fixtures/own');
  // Relative to where the user ran the command (scripts/provision.sh's BENCH_CWD), not to the repository.
  const env = { BENCH_CWD: own, PROTO: 'a/shop/v1/shop.proto', PROTO_PATH: 'a:b', RPC: 'shop.v1.ShopService/GetOrder',
    REQUEST: 'requests.ndjson', RESPONSE: 'responses.json', SWEEP_BANDWIDTH: '20mbit', SWEEP_RTT: '10ms', SWEEP_VUS: '4',
    DURATION: '1s', WARMUP: '0s', RESULTS_DIR: dir };
  const result = await sweep(env, [], 150000);
  assert.equal(result.code, 0, result.stderr);
  assert.match(result.stderr, /shop\.v1\.ShopService\/GetOrder: \d+ request and \d+ response sample\(s\); every sample went through the twins' codecs as the same message, and every twin answered the response samples in turn, the same messages \(http \d+ calls, grpc \d+ calls\)/);
  const json = (await readdir(dir)).find((f) => /^sweep-.*\.json$/.test(f));
  const report = JSON.parse(await readFile(path.join(dir, json), 'utf8'));
  const scenario = 'shop.v1.ShopService.GetOrder';
  assert.deepEqual(report.cells.map((c) => c.scenario), [scenario]);
  for (const mode of ['http', 'grpc']) {
    assert.ok(report.cells[0].modes[mode].rps > 0 && report.cells[0].modes[mode].failed === 0, JSON.stringify(report.cells[0].modes[mode]));
  }
  const record = report.services[scenario];
  const sha256 = async (file) => createHash('sha256').update(await readFile(file)).digest('hex');
  assert.equal(record.samples.response.sha256, await sha256(path.join(own, 'responses.json')));
  assert.equal(record.samples.request.sha256, await sha256(path.join(own, 'requests.ndjson')));
  assert.ok(record.schema.some((f) => f.path.endsWith('shop.proto') && /^[0-9a-f]{64}$/.test(f.sha256)), JSON.stringify(record.schema));
  assert.ok(report.maps.some((m) => m.includes(`-${scenario}-10ms.svg`)), report.maps.join(', '));
});

test('a server stream swept (Gemini\'s token stream): a request is a stream, the verdicts in streams', { skip: skipUnlessRoot, timeout: 180000 }, async (t) => {
  const dir = await tempDir(t, 'sweep-stream-');
  const result = await sweep({ SCENARIO: 'gemini-stream', SWEEP_BANDWIDTH: '20mbit', SWEEP_RTT: '10ms', SWEEP_VUS: '4',
    DURATION: '1s', WARMUP: '0s', RESULTS_DIR: dir }, [], 150000);
  assert.equal(result.code, 0, result.stderr);
  const report = JSON.parse(await readFile(path.join(dir, (await readdir(dir)).find((f) => /^sweep-.*\.json$/.test(f))), 'utf8'));
  assert.equal(report.services['gemini-stream'].kind, 'server streaming');
  for (const mode of ['http', 'grpc']) {
    const m = report.cells[0].modes[mode];
    assert.ok(m.rps > 0 && m.failed === 0, JSON.stringify(m));
    // A stream's bytes: 11 to 60 chunks a stream, so kilobytes down a request, where a unary answer of one chunk is ~100 bytes.
    assert.ok(m.received_per_request > 1000, `${mode}: ${m.received_per_request} bytes a stream`);
  }
  assert.ok(report.verdicts.length > 0 && report.verdicts.every((v) => !/more requests/.test(v.line)), report.verdicts.map((v) => v.line).join('\n'));
  assert.ok(report.verdicts.some((v) => /serves more streams|they tie/.test(v.line)), report.verdicts.map((v) => v.line).join('\n'));
});

test('bad sweep settings stop at once, in one line', async () => {
  for (const [env, pattern] of [
    [{ PROTO: 'x.proto' }, /^sweep: PROTO is read with RPC \(package\.Service\/Method\): set RPC too/],
    [{ RPC: 'shop.v1.ShopService/GetOrder', PROTO: path.join(ROOT, 'test/fixtures/own/a/shop/v1/shop.proto'), SCENARIO: 'user' },
      /^sweep: RPC measures that RPC in place of SCENARIO: set one or the other/],
    [{ SWEEP_BANDWIDTH: '2mb' }, /^sweep: invalid setting SWEEP_BANDWIDTH="2mb": "2mb" must be a rate in bits/],
    [{ SWEEP_RTT: '400ms' }, /^sweep: invalid setting SWEEP_RTT: 400 ms is past the 300 ms/],
    [{ SWEEP_VUS: '8,64', SWEEP_RATE: '500' }, /^sweep: SWEEP_RATE \(open model\) and SWEEP_VUS/],
  ]) {
    const result = await sweep(env, ['--check-settings'], 30000);
    assert.equal(result.code, 1, JSON.stringify(env));
    assert.match(result.stderr, pattern);
    assert.equal(result.stderr.trim().split('\n').length, 1, result.stderr);
  }
});
