// The memory an own service's samples take in each server worker (bench/own-service.js ownHeapBytes), and the line
// the report gives it (bench/report/own.js).
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { test } from 'node:test';
import { ownHeapBytes } from '../../bench/own-service.js';
import { renderOwnSizes } from '../../bench/report/own.js';
import { ROOT } from '../helpers/server.js';
import { tempDir } from '../helpers/tmp.js';

const OWN = path.join(ROOT, 'test/fixtures/own');
const SHOP = { PROTO: path.join(OWN, 'a/shop/v1/shop.proto'), PROTO_PATH: `${path.join(OWN, 'a')}:${path.join(OWN, 'b')}`, RPC: 'shop.v1.ShopService/GetOrder' };

test('ownHeapBytes grows with the response samples a worker holds, and says why when it cannot measure', async (t) => {
  const dir = await tempDir(t, 'own-heap-');
  const samples = JSON.parse(readFileSync(path.join(OWN, 'responses.json'), 'utf8'));
  const many = path.join(dir, 'many.json');
  await writeFile(many, JSON.stringify(Array.from({ length: 400 }, () => samples).flat()));
  const few = await ownHeapBytes({ ...SHOP, RESPONSE: path.join(OWN, 'responses.json') });
  const lots = await ownHeapBytes({ ...SHOP, RESPONSE: many });
  assert.ok(few.worker_heap_bytes > 0, JSON.stringify(few));
  // 400 times the samples: the difference is the decoded messages, at least some hundred bytes each.
  assert.ok(lots.worker_heap_bytes - few.worker_heap_bytes > 399 * samples.length * 100, `${few.worker_heap_bytes} → ${lots.worker_heap_bytes}`);
  const broken = await ownHeapBytes({ ...SHOP, RESPONSE: path.join(dir, 'missing.json') });
  assert.equal(broken.worker_heap_bytes, null);
  assert.match(broken.reason, /^the heap probe failed: .*missing\.json/);
});

test('the sizes table gives the workers\' memory, or why it is not measured', () => {
  const sizes = { json: { min: 10, median: 10, max: 10 }, protobuf: { min: 5, median: 5, max: 5 } };
  const own = { rpc: 'a.S/M', schema: [{ path: 'a.proto', sha256: 'f'.repeat(64) }], sizes: { request: sizes, response: sizes },
    samples: { request: { file: null, count: 1 }, response: { file: 'r.json', sha256: 'e'.repeat(64), count: 3 } } };
  assert.match(renderOwnSizes({ ...own, memory: { worker_heap_bytes: 3 * 1048576 } }),
    /^- memory: 3\.0 MiB of V8 heap in each server worker for the schema and the 3 response sample\(s\), decoded$/m);
  assert.match(renderOwnSizes({ ...own, memory: { worker_heap_bytes: null, reason: 'the heap probe failed: boom' } }),
    /^- memory: not measured \(the heap probe failed: boom\)$/m);
  assert.match(renderOwnSizes(own), /^- memory: not measured \(not recorded by this run\)$/m);
});
