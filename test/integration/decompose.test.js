// The decomposition pass: every listener loaded by wrk or h2load, and the effects derived from them.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { decompositionReport, renderDecomposition } from '../../bench/report/decomposition.js';
import { againOf } from '../../bench/records/decomposition.js';
import { LISTENERS } from '../../server/listeners.js';
import { DECOMPOSITION, measureDecomposition } from '../../bench/passes/decompose.js';
import { allowedCpus, splitCores } from '../../bench/settings/cores.js';

test('each listener serves the user scenario under its native load generator, and the effects are ratios of them', async () => {
  const settings = { REPEATS: 1, WORKERS: 1, VUS: 4 };
  const runs = await measureDecomposition({ scenario: 'user', plan: settings, cores: splitCores(allowedCpus()), durationS: 1, warmupS: 0 });
  assert.deepEqual(Object.keys(runs), DECOMPOSITION);
  for (const [listener, [run]] of Object.entries(runs)) {
    assert.ok(run.rps > 0 && run.requests > 0, `${listener}: no requests`);
    assert.equal(run.failed, 0, `${listener}: failures`);
    assert.ok(run.received_per_request > 0);
  }
  // HTTP/2 compresses response headers (HPACK); HTTP/1.1 repeats them as text on every response.
  assert.ok(runs.grpc[0].received_per_request < runs.http[0].received_per_request);
  assert.ok(runs['json-h2'][0].received_per_request < runs.http[0].received_per_request);
  assert.equal(runs.http[0].headers_per_request, null);
  assert.ok(runs['baseline-grpc'][0].headers_per_request > 0);

  const report = decompositionReport('user', runs);
  const fastify = report.effects.find((e) => e.of === 'http/baseline-http');
  assert.equal(fastify.ratio, runs.http[0].rps / runs['baseline-http'][0].rps);
  assert.equal(fastify.target, 0.9);
  assert.equal(fastify.met, fastify.ratio >= 0.9);
  assert.match(renderDecomposition(report), /### Decomposition, scenario `user`[\s\S]*`grpc\/baseline-grpc`/);
});

test('a listener named twice runs twice per repeat, as its A/A control, and every other repeat runs the order reversed', async () => {
  const settings = { REPEATS: 2, WORKERS: 1, VUS: 2 };
  const order = [];
  const log = console.error;
  console.error = (line) => { order.push(String(line).split(': ').pop()); };
  let runs;
  try {
    runs = await measureDecomposition({
      scenario: 'user', plan: settings, cores: splitCores(allowedCpus()), durationS: 1, warmupS: 0,
      listeners: ['baseline-http', againOf('baseline-http'), 'peer-http'],
    });
  } finally {
    console.error = log;
  }
  assert.deepEqual(order, ['baseline-http', 'baseline-http (again)', 'peer-http', 'peer-http', 'baseline-http (again)', 'baseline-http']);
  assert.deepEqual(Object.keys(runs), ['baseline-http', 'baseline-http (again)', 'peer-http']);
  for (const list of Object.values(runs)) {
    assert.equal(list.length, 2);
    assert.ok(list.every((r) => r.requests > 0 && r.failed === 0));
  }
  const report = decompositionReport('user', runs);
  assert.match(report.listeners['baseline-http (again)'].label, /A\/A/);
  assert.equal(report.listeners['baseline-http'].label, LISTENERS['baseline-http'].label);
});
