// The fault matrix's heaviest cell (npm run faults, FAULTS=slow-readers-max; docs/faults.md): as many slow readers as
// MAX_CONNECTIONS allows, each at the stream limit, against each worker's memory budget, with k6 as the honest client
// beside them. It runs alone in npm test (test/suite.js ALONE): beside two other test files, whose servers share its
// server's core, k6 lost 14 and 16 gRPC calls in CI's fresh container; alone, none.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { promisify } from 'node:util';
import { k6Bin } from '../helpers/k6.js';
import { ROOT } from '../helpers/server.js';

const run = promisify(execFile);
let dir;
before(async () => { dir = await mkdtemp(path.join(os.tmpdir(), 'faults-max-')); });
after(() => rm(dir, { recursive: true, force: true }));

test('slow readers as many as MAX_CONNECTIONS allows, each at the stream limit: every worker within its memory budget, the honest client loses nothing', async () => {
  // 64 connections x 128 unread 1 MiB answers (8 GiB asked for) against WORKER_MEMORY_MB=512 per worker. Without the budget
  // a gRPC worker holds every answer it builds (docs/faults.md); with it, answers past 85% of the budget are refused.
  const env = { ...process.env, K6_BIN: k6Bin(), FAULTS: 'slow-readers-max', MODES: 'http,grpc', FAULT_DURATION: '8s', RESULTS_DIR: dir };
  await run(process.execPath, ['bench/cli.js', 'faults'], { cwd: ROOT, env, timeout: 240000 });
  const reports = (await readdir(dir)).filter((f) => /^faults-.*Z\.json$/.test(f));
  const { cells } = JSON.parse(await readFile(path.join(dir, reports.sort().at(-1)), 'utf8'));
  assert.deepEqual(cells.map((c) => `${c.fault}/${c.mode}`), ['slow-readers-max/http', 'slow-readers-max/grpc']);
  for (const c of cells) {
    assert.equal(c.worker_memory_mb, 512);
    assert.ok(c.worker_rss_peak_mib <= 512 * 1.1, `${c.mode}: one worker peaked at ${c.worker_rss_peak_mib} MiB`);
    assert.equal(c.failed, 0, `${c.mode}: the honest client failed`);
    assert.equal(c.observed.requests, 64 * 128);
  }
  // gRPC builds an answer per open stream: the budget is what refuses them. HTTP/1.1 builds one per connection.
  assert.ok(cells[1].refused_answers > 0, JSON.stringify(cells[1]));
});
