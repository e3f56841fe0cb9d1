// The line the report gives the memory an own service's samples take in each server worker (bench/report/own.js);
// the probe that measures it, a process of its own, is test/integration/own-memory.test.js.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { renderOwnSizes } from '../../bench/report/own.js';

test('the sizes table gives the workers\' memory, or why it is not measured', () => {
  const sizes = { json: { min: 10, median: 10, max: 10 }, protobuf: { min: 5, median: 5, max: 5 } };
  const own = { rpc: 'a.S/M', schema: [{ path: 'a.proto', sha256: 'f'.repeat(64) }], sizes: { request: sizes, response: sizes },
    samples: { request: { file: null, count: 1 }, response: { file: 'r.json', sha256: 'e'.repeat(64), count: 3 } } };
  assert.match(renderOwnSizes({ ...own, memory: { worker_rss_bytes: 7.5 * 1048576, worker_heap_bytes: 3 * 1048576 } }),
    /^- memory: 7\.5 MiB of RSS added to each server worker for the schema and the 3 response sample\(s\) \(3\.0 MiB reachable in V8's heap\)$/m);
  // A record from before the RSS was measured.
  assert.match(renderOwnSizes({ ...own, memory: { worker_heap_bytes: 3 * 1048576 } }),
    /^- memory: 3\.0 MiB of V8 heap in each server worker for the schema and the 3 response sample\(s\), decoded \(RSS not recorded by this run\)$/m);
  assert.match(renderOwnSizes({ ...own, memory: { worker_rss_bytes: null, worker_heap_bytes: null, reason: 'the memory probe failed: boom' } }),
    /^- memory: not measured \(the memory probe failed: boom\)$/m);
  assert.match(renderOwnSizes(own), /^- memory: not measured \(not recorded by this run\)$/m);
});
