// The decomposition's effects with their 95% intervals (bench/report/decomposition.js), on synthetic repeats.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { decompositionReport, renderDecomposition } from '../../bench/report/decomposition.js';
import { PERFORMANCE_TARGETS } from '../../bench/performance-targets.js';

const run = (rps) => ({ tool: 'wrk', rps, failed: 0, received_per_request: 290, headers_per_request: null });

test('each effect carries the median\'s 95% interval, settled against its target (or 1), and the table marks what is not', () => {
  const report = decompositionReport('user', {
    // fastify over bare: well above its target in every repeat (settled); JSON over HTTP/2 against HTTP/1.1: the repeats
    // go both ways around 1 (not settled).
    http: [20000, 21000, 19500, 20500].map(run),
    'baseline-http': [21000, 21500, 20500, 21200].map(run),
    'json-h2': [18000, 23000, 21000, 19000].map(run),
  });
  const fastify = report.effects.find((e) => e.of === 'http/baseline-http');
  assert.equal(fastify.interval.pairs, 4);
  assert.equal(fastify.interval.settled, true);
  assert.ok(fastify.interval.low > PERFORMANCE_TARGETS['http/baseline-http'], JSON.stringify(fastify.interval));
  const h2 = report.effects.find((e) => e.of === 'json-h2/http');
  assert.equal(h2.interval.settled, false);
  assert.ok(h2.interval.low < 1 && h2.interval.high > 1, JSON.stringify(h2.interval));
  const markdown = renderDecomposition(report);
  assert.match(markdown, /\| transport: HTTP\/2 instead of HTTP\/1\.1 \(JSON, fastify\) \(`json-h2\/http`\)\s+\|\s+[\d.]+ \([\d.]+–[\d.]+\) \|\s+\[[\d.]+–[\d.]+\] ~ \|/);
  assert.match(markdown, /\| fastify over bare node:http, same body \(`http\/baseline-http`\)\s+\|\s+[\d.]+ \([\d.]+–[\d.]+\) \|\s+\[[\d.]+–[\d.]+\] \| ≥ [\d.]+ met/);
  assert.match(markdown, /`~`: it includes the target, or 1 for an effect without one/);
  // Two repeats give no interval, and no legend.
  const two = renderDecomposition(decompositionReport('user', { http: [run(1), run(2)], 'baseline-http': [run(1), run(2)] }));
  assert.doesNotMatch(two, /95% interval is/);
});
