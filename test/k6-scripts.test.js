// Each of the four k6 scripts, run for real against a live server.
import assert from 'node:assert/strict';
import { mkdtemp, readFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { readSummary } from '../bench/summary.js';
import { k6Bin, k6Run } from './helpers/k6.js';
import { freePort, startServer } from './helpers/server.js';
import { MODES } from '../bench/modes.js';

let server;
let dir;
before(async () => {
  k6Bin();
  server = await startServer({ MODE: 'both' });
  dir = await mkdtemp(path.join(os.tmpdir(), 'k6-scripts-'));
});
after(() => server?.stop());

// Every script of every mode (bench/modes.js): [script, its host variable, mode].
const SCRIPTS = Object.entries(MODES).flatMap(([mode, { scripts, hostVars }]) =>
  ['local', 'remote'].map((target) => [scripts[target], hostVars[target], mode]));

for (const [script, hostVar, mode] of SCRIPTS) {
  test(`${script} loads the live ${mode} server with no failure`, async () => {
    const port = server.ports[MODES[mode].listener];
    const summaryFile = path.join(dir, `${path.basename(path.dirname(script))}-${path.basename(script, '.js')}.json`);
    // SAMPLE_EVERY=10 so the short run checks plenty of responses.
    const { code, output } = await k6Run(['--vus', '4', '--duration', '2s', '-e', `${hostVar}=127.0.0.1:${port}`,
      '-e', `SUMMARY_FILE=${summaryFile}`, '-e', 'SAMPLE_EVERY=10', script]);
    assert.equal(code, 0, output);
    assert.match(output, /data_sent/);
    assert.match(output, /data_received/);

    const figures = await readSummary(summaryFile);
    assert.equal(figures.mode, mode);
    assert.equal(figures.host, `127.0.0.1:${port}`);
    assert.ok(figures.requests > 100, `only ${figures.requests} requests`);
    assert.equal(figures.failed, 0);
    assert.equal(figures.checks_failed, 0);
    assert.ok(figures.data_sent_bytes > 0 && figures.data_received_bytes > 0);
    const raw = JSON.parse(await readFile(summaryFile, 'utf8'));
    assert.ok(raw.metrics.checks.values.passes >= 4 * 2, 'every VU checked its first response and more');
  });
}

test('a script aimed at a host where nothing listens stops with an error naming the host', async () => {
  const host = `127.0.0.1:${await freePort()}`;
  for (const [script, hostVar] of SCRIPTS.filter(([s]) => s.endsWith('/local.js'))) {
    const { code, output } = await k6Run(['--vus', '1', '--duration', '2s', '-e', `${hostVar}=${host}`,
      '-e', `SUMMARY_FILE=${path.join(dir, 'unreachable.json')}`, script]);
    assert.notEqual(code, 0, output);
    assert.match(output, new RegExp(`cannot reach the (HTTP|gRPC) server at ${host}`));
  }
});
