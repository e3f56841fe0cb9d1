// The built-in OTLP batches (scripts/otlp-batches.js, proto/own/builtins.js otlp-<kind>-<n>): the committed files are
// the generator's output byte for byte, each holds the n items its name says, and each is an Export request the
// project reads strictly (proto3 JSON mapping). That Python's protobuf reads them alike is own-service-equality's.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { BATCH_SIZES, batchFile, exportRequest, KINDS } from '../../scripts/otlp-batches.js';
import { BUILT_IN_SERVICES } from '../../proto/own/builtins.js';
import { loadOwnService } from '../../proto/own/service.js';
import { ROOT } from '../../bench/root.js';

const inProto = (file) => path.join(ROOT, 'proto', file);

/** The items of a request: spans, log records or data points, across its scopes. */
const itemsOf = (kind, request) => {
  const [resource] = request[`resource${{ traces: 'Spans', logs: 'Logs', metrics: 'Metrics' }[kind]}`];
  if (kind === 'traces') return resource.scopeSpans.flatMap((s) => s.spans);
  if (kind === 'logs') return resource.scopeLogs.flatMap((s) => s.logRecords);
  return resource.scopeMetrics.flatMap((s) => s.metrics.flatMap((m) => m.histogram.dataPoints));
};

test('each batch file is the generator\'s, with the items its name says, and a scenario of its own', () => {
  for (const kind of KINDS) {
    for (const n of BATCH_SIZES) {
      const file = batchFile(kind, n);
      const text = readFileSync(inProto(file), 'utf8');
      assert.equal(text, `${JSON.stringify(exportRequest(kind, n))}\n`, `${file}: rerun node scripts/otlp-batches.js`);
      assert.equal(itemsOf(kind, JSON.parse(text)).length, n, file);
      assert.equal(BUILT_IN_SERVICES[`otlp-${kind}-${n}`].request, file);
    }
  }
});

test('each batch is an Export request the project reads strictly; the sizes grow with the batch', () => {
  for (const kind of KINDS) {
    const sizes = BATCH_SIZES.map((n) => {
      const builtIn = BUILT_IN_SERVICES[`otlp-${kind}-${n}`];
      const { requests } = loadOwnService({ PROTO: inProto(builtIn.proto), PROTO_PATH: builtIn.protoPath.map(inProto).join(':'),
        RPC: builtIn.rpc, REQUEST: inProto(/** @type {string} */ (builtIn.request)) });
      assert.equal(requests.messages.length, 1);
      return requests.protobufBytes[0];
    });
    // Per item, a batch of 512 weighs about what one does: the resource and scopes are shared, the items are alike.
    const [one, , many] = sizes;
    assert.ok(many > 100 * 1024 && many < 4 * 1024 * 1024, `${kind}: 512 items, ${many} bytes`);
    assert.ok(many / 512 < one, `${kind}: ${one} bytes for one, ${many / 512} per item of 512`);
  }
});
