// The run record (bench/records/run-record.js): its one writer puts the version into `bench.run` and leaves the rest as
// given, withCapacity adds a capacity pass to it, and its reader (bench/records/summary.js) finds the server's Node
// release in a versioned record, and in one from before the version as it always did. Pure but for a temporary folder.
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { test } from 'node:test';
import { nodeOf, RUN_RECORD_VERSION, withCapacity, writeRunRecord } from '../../bench/records/run-record.js';
import { figuresOf, readSummary } from '../../bench/records/summary.js';
import { k6Summary } from '../helpers/k6-summary.js';
import { tempDir } from '../helpers/tmp.js';

/** A k6 summary of 10 s and 1,000 HTTP requests, as the scripts write it, before the job adds its record. */
const summaryOf = () => k6Summary({ mode: 'http', target: 'local', host: '127.0.0.1:3000', model: 'closed' });

const provenance = { commit: null, dirty: null, versions: { node: 'v24.21.0' } };

test('the writer puts the version first into bench.run, the rest as given, and withCapacity adds a capacity pass', async (t) => {
  const dir = await tempDir(t, 'run-record-');
  const file = path.join(dir, 'k6-http.json');
  const record = { provenance, node: { release: '20', version: 'v20.19.5', path: '/n/node' }, workers: 1, capacity: undefined };
  assert.equal(await writeRunRecord(file, summaryOf(), record), file);
  const written = JSON.parse(await readFile(file, 'utf8'));
  assert.deepEqual(Object.keys(written.bench.run), ['version', 'provenance', 'node', 'workers'], 'undefined fields are left out, as before');
  assert.equal(written.bench.run.version, RUN_RECORD_VERSION);
  assert.deepEqual(written.bench, { ...summaryOf().bench, run: { version: RUN_RECORD_VERSION, ...JSON.parse(JSON.stringify(record)) } });
  assert.equal(await readFile(file, 'utf8'), JSON.stringify(written, null, 2), 'written as every summary: JSON, two spaces');

  const capacity = { tool: 'wrk', rps: 9000, requests: 90000, failed: 0, received_per_request: 300, headers_per_request: null,
    pass: /** @type {'auto'} */ ('auto'), client_bound: ['http'] };
  await withCapacity(file, capacity);
  const figures = await readSummary(file);
  assert.equal(figures.capacity_rps, 9000);
  assert.deepEqual(figures.run.capacity, capacity);
  assert.equal(figures.run.version, RUN_RECORD_VERSION);
  assert.equal(figures.node, 'v20.19.5', 'as the job started the server');
});

test('the Node release: the server\'s word, else the job\'s; the provenance\'s only in a record without a version', () => {
  const server = { node: 'v22.1.0' };
  const started = { release: null, version: 'v20.19.5', path: '/n/node' };
  assert.equal(nodeOf({ version: 1, server, node: started, provenance }), 'v22.1.0');
  assert.equal(nodeOf({ version: 1, node: started, provenance }), 'v20.19.5');
  assert.equal(nodeOf({ version: 1, node: null, provenance }), null, 'a server on another machine, its accounting not read');
  assert.equal(nodeOf({ node: null, provenance }), 'v24.21.0', 'a record from before the version: the provenance\'s, as before');
  assert.equal(nodeOf({ server, node: started, provenance }), 'v22.1.0');
  assert.equal(nodeOf(undefined), null, 'a k6 run by hand');
  const summary = summaryOf();
  assert.equal(figuresOf('s.json', summary).node, null);
  assert.equal(figuresOf('s.json', { ...summary, bench: { ...summary.bench, run: { node: null, provenance } } }).node, 'v24.21.0');
});
