// Zero-downtime reload (issue 11): SIGHUP replaces the workers one at a time, each replacement
// listening before the old worker drains; under k6 load in both modes no request fails or times out,
// and every worker pid changes. A replacement that cannot start stops the reload; the old workers serve on.
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { pathToFileURL } from 'node:url';
import { CLEARTEXT_MODE_NAMES, MODES } from '../../bench/modes.js';
import { readSummary } from '../../bench/records/summary.js';
import { EVENT } from '../../server/events.js';
import { k6Run } from '../helpers/k6.js';
import { ROOT, startServer, waitGone } from '../helpers/server.js';

let dir;
before(async () => { dir = await mkdtemp(path.join(os.tmpdir(), 'reload-')); });
after(() => rm(dir, { recursive: true, force: true }));

// Cleartext: the json-h2 mode needs TLS (its listener's reload is the HTTP/2 guard's, as grpc's and connect-grpc's are).
for (const mode of CLEARTEXT_MODE_NAMES) {
  test(`SIGHUP under k6 load (${mode}): every worker replaced, no request failed or timed out`, async () => {
    const { scripts, hostVars, listener } = MODES[mode];
    const server = await startServer({ MODE: listener, WORKERS: '2' }); // the listener the mode loads, whichever it is
    try {
      const before = server.workerPids();
      const summaryFile = path.join(dir, `${mode}.json`);
      const load = k6Run(['--vus', '8', '--duration', '6s', '-e', `${hostVars.local}=127.0.0.1:${server.ports[listener]}`,
        '-e', 'REQUEST_TIMEOUT=2s', '-e', `SUMMARY_FILE=${summaryFile}`, scripts.local]);
      await sleep(2000);
      const from = server.lines.length;
      server.proc.kill('SIGHUP');
      const reloaded = await server.waitForLine((l) => l.event === EVENT.RELOADED, { from, timeoutMs: 15000 });
      const { code, output } = await load;
      assert.equal(code, 0, output);

      const figures = await readSummary(summaryFile);
      assert.ok(figures.requests > 500, `only ${figures.requests} requests`);
      assert.equal(figures.failed, 0, `failed requests during the reload\n${output.slice(-2000)}`);
      assert.equal(figures.timed_out, 0);
      assert.equal(figures.checks_failed, 0);
      assert.equal(reloaded.workers.length, 2);
      assert.ok(reloaded.workers.every((pid) => !before.includes(pid)), 'every worker pid changed');
      const retired = server.lines.slice(from).filter((l) => l.event === EVENT.WORKER_RETIRED);
      assert.deepEqual(retired.map((l) => l.worker).sort(), [...before].sort());
      assert.ok(retired.every((l) => l.code === 0), 'the old workers drained and exited 0');
      assert.deepEqual(await waitGone(before, 1000), []);
      assert.ok(!server.lines.slice(from).some((l) => l.event === EVENT.WORKER_REPLACED), 'no worker died');
    } finally {
      assert.equal(await server.stop(), 0);
    }
  });
}

test('a reload whose replacement dies at start stops there; the old workers keep serving', async () => {
  const mark = path.join(dir, 'broken');
  const fixture = pathToFileURL(path.join(ROOT, 'test/fixtures/crash-if-marked.js')).href;
  const server = await startServer({ MODE: 'http', WORKERS: '2', NODE_OPTIONS: `--import=${fixture}`, CRASH_MARK: mark });
  try {
    const before = server.workerPids();
    await writeFile(mark, '');
    const from = server.lines.length;
    server.proc.kill('SIGHUP');
    const failed = await server.waitForLine((l) => l.event === EVENT.RELOAD_FAILED, { from, timeoutMs: 15000 });
    assert.match(failed.reason, /exited with code 1/);
    await sleep(300);
    assert.ok(!server.lines.slice(from).some((l) => l.event === EVENT.WORKER_REPLACED), 'the broken replacement is not retried');
    // Both old workers still serve.
    const served = new Set();
    for (let i = 0; i < 20; i++) served.add((await (await fetch(`http://127.0.0.1:${server.httpPort}/`)).json()).workerPid);
    assert.deepEqual([...served].sort(), [...before].sort());
    // A reload after the fix works.
    await rm(mark);
    const again = server.lines.length;
    server.proc.kill('SIGHUP');
    const reloaded = await server.waitForLine((l) => l.event === EVENT.RELOADED, { from: again, timeoutMs: 15000 });
    assert.ok(reloaded.workers.every((pid) => !before.includes(pid)));
  } finally {
    assert.equal(await server.stop(), 0);
  }
});

test('SIGHUP during a reload is ignored, with a warning', async () => {
  const server = await startServer({ MODE: 'http', WORKERS: '2' });
  try {
    const from = server.lines.length;
    server.proc.kill('SIGHUP');
    // Signals of one kind do not queue: the second is sent once the first is being handled.
    await server.waitForLine((l) => l.event === EVENT.RELOADING, { from });
    server.proc.kill('SIGHUP');
    const ignored = await server.waitForLine((l) => l.event === EVENT.RELOAD_FAILED, { from });
    assert.equal(ignored.reason, 'a reload is running');
    await server.waitForLine((l) => l.event === EVENT.RELOADED, { from, timeoutMs: 15000 });
    assert.equal(server.lines.slice(from).filter((l) => l.event === EVENT.RELOADING).length, 1);
  } finally {
    assert.equal(await server.stop(), 0);
  }
});

test('a reload under keep-alive load from a client that never retries (node:http) loses no request', async () => {
  // Go's client (k6) retries a GET that meets a closed idle connection; node:http does not, so this
  // shows the drain itself: each connection ends with its next response (Connection: close) or once idle.
  const server = await startServer({ MODE: 'http', WORKERS: '2' });
  const agent = new http.Agent({ keepAlive: true, maxSockets: 8 });
  const failures = [];
  let answered = 0;
  let stop = false;
  const get = () => new Promise((resolve) => {
    const req = http.get({ host: '127.0.0.1', port: server.httpPort, path: '/', agent }, (res) => {
      res.resume();
      res.on('end', () => { if (res.statusCode === 200) answered++; else failures.push(res.statusCode); resolve(undefined); });
    });
    req.setTimeout(2000, () => { failures.push('timeout'); req.destroy(); });
    req.on('error', (err) => { failures.push(err.code); resolve(undefined); });
  });
  try {
    const loops = Array.from({ length: 8 }, async () => { while (!stop) await get(); });
    await sleep(500);
    const from = server.lines.length;
    server.proc.kill('SIGHUP');
    await server.waitForLine((l) => l.event === EVENT.RELOADED, { from, timeoutMs: 15000 });
    await sleep(500);
    stop = true;
    await Promise.all(loops);
    assert.deepEqual(failures, []);
    assert.ok(answered > 1000, `only ${answered} answers`);
  } finally {
    agent.destroy();
    assert.equal(await server.stop(), 0);
  }
});
