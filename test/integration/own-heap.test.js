// The memory an own service's samples take in each server worker (bench/own-service.js ownHeapBytes): a probe process
// loads them as a worker does; the line the report gives it is test/unit/own-sizes.test.js.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { test } from 'node:test';
import { ownHeapBytes } from '../../bench/own-service.js';
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
