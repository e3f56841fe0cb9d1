// The memory an own service's samples take (issue 49): the probe the report's memory line comes from
// (bench/own-service.js ownMemory, proto/own/memory-probe.js) against real server workers' RSS, and the cluster's primary,
// which holds no sample. The line itself is test/unit/own-sizes.test.js.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { test } from 'node:test';
import { ownMemory } from '../../bench/own-service.js';
import { ROOT, startServer } from '../helpers/server.js';
import { tempDir } from '../helpers/tmp.js';

const OWN = path.join(ROOT, 'test/fixtures/own');
const SHOP = { PROTO: path.join(OWN, 'a/shop/v1/shop.proto'), PROTO_PATH: `${path.join(OWN, 'a')}:${path.join(OWN, 'b')}`, RPC: 'shop.v1.ShopService/GetOrder' };
const CATALOG = path.join(ROOT, 'proto/examples/catalog');
const LIST = { PROTO: path.join(CATALOG, 'v1/catalog.proto'), RPC: 'examples.catalog.v1.CatalogService/ListProducts' };

const rssOf = (pid) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))[1]) * 1024;

test('ownMemory grows with the response samples a worker holds, and says why when it cannot measure', async (t) => {
  const dir = await tempDir(t, 'own-memory-');
  const samples = JSON.parse(readFileSync(path.join(OWN, 'responses.json'), 'utf8'));
  const many = path.join(dir, 'many.json');
  await writeFile(many, JSON.stringify(Array.from({ length: 400 }, () => samples).flat()));
  const few = await ownMemory({ ...SHOP, RESPONSE: path.join(OWN, 'responses.json') });
  const lots = await ownMemory({ ...SHOP, RESPONSE: many });
  assert.ok(few.worker_heap_bytes > 0, JSON.stringify(few));
  // 400 times the samples: the difference is the decoded messages, at least some hundred bytes each.
  assert.ok(lots.worker_heap_bytes - few.worker_heap_bytes > 399 * samples.length * 100, `${few.worker_heap_bytes} → ${lots.worker_heap_bytes}`);
  assert.ok(lots.worker_rss_bytes >= lots.worker_heap_bytes, JSON.stringify(lots));
  const broken = await ownMemory({ ...SHOP, RESPONSE: path.join(dir, 'missing.json') });
  assert.deepEqual([broken.worker_rss_bytes, broken.worker_heap_bytes], [null, null]);
  assert.match(broken.reason, /^the memory probe failed: .*missing\.json/);
});

test('10,000 samples: the probe\'s RSS agrees with what they add to a real worker\'s, and the primary holds none', async (t) => {
  const dir = await tempDir(t, 'own-memory-');
  // Pages of two products from the shipped catalog example, about 0.9 kB of JSON each, 9 MB in all.
  const products = readFileSync(path.join(CATALOG, 'responses.ndjson'), 'utf8').split('\n').filter(Boolean).flatMap((l) => JSON.parse(l).products);
  const file = path.join(dir, 'pages.ndjson');
  await writeFile(file, Array.from({ length: 10_000 }, (_, i) => JSON.stringify({
    products: [0, 1].map((j) => ({ ...products[(2 * i + j) % products.length], id: `prod_${i}_${j}` })), nextPageToken: `p${i}`,
  })).join('\n'));
  const probe = await ownMemory({ ...LIST, RESPONSE: file });
  const resident = async (RESPONSE) => {
    // The MODE a job's run gives a worker: one listener.
    const server = await startServer({ ...LIST, RESPONSE, MODE: 'http', WORKERS: '1' }, { readyTimeoutMs: 60_000 });
    try {
      return { primary: rssOf(server.proc.pid), worker: rssOf(server.workerPids()[0]) };
    } finally {
      await server.stop();
    }
  };
  const none = await resident('');
  const held = await resident(file);
  const added = held.worker - none.worker;
  const mib = (b) => (b / 1048576).toFixed(1);
  t.diagnostic(`probe: ${mib(probe.worker_rss_bytes)} MiB RSS (${mib(probe.worker_heap_bytes)} MiB heap); a worker: ${mib(none.worker)} → `
    + `${mib(held.worker)} MiB; the primary: ${mib(none.primary)} → ${mib(held.primary)} MiB`);
  // About 110 MiB here (2-core VM, Node 24); a probe that missed the pages V8 keeps, or counted the heap alone, is off by half.
  assert.ok(added > 50 * 1048576, `the samples added only ${mib(added)} MiB to the worker`);
  assert.ok(Math.abs(probe.worker_rss_bytes - added) <= 0.25 * added,
    `the probe's ${mib(probe.worker_rss_bytes)} MiB against ${mib(added)} MiB added to a real worker`);
  // A primary that decoded them would hold about as much again.
  assert.ok(held.primary - none.primary < 16 * 1048576, `the primary grew ${mib(held.primary - none.primary)} MiB with the samples`);
});
