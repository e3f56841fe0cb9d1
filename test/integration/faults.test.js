// The fault matrix (npm run faults, issue 11): a short run of two faults in both modes through the
// CLI, as a user runs it; the full matrix and its figures are in docs/faults.md.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { promisify } from 'node:util';
import { idleConnections, malformedBurst, slowReaders } from '../../bench/faults/clients.js';
import { parseScrape } from '../../bench/records/server-stats.js';
import { makeRunCertificates } from '../../bench/tls.js';
import { EVENT } from '../../server/events.js';
import { k6Bin } from '../helpers/k6.js';
import { freePort, ROOT, startServer } from '../helpers/server.js';

const run = promisify(execFile);
// 16 connections × 8 requests for the 1 MiB blob, never read (docs/faults.md). HTTP/1.1 answers pipelined
// requests one at a time (server/h1-guard.js): one answer held per connection; building all 128 grew the
// workers by 196 MiB. gRPC builds an answer per open stream (H2_MAX_CONCURRENT_STREAMS bounds them): 202–211 MiB
// on Node 20.20.2, 407–425 MiB on Node 24.21.0 (3 runs each, docs/faults.md): the bound is 4.5 MiB per unread stream.
// HTTP's bound sits between one answer a connection and all 128: the workers' peak was the same before and after f531625
// (372–383 MiB), which made them start about 15 MiB smaller, so the growth from their start came to 136 MiB here and
// 159 MiB in CI's container (2026-11-28).
const SLOW_READER_GROWTH_MIB = { http: 175, grpc: 16 * 8 * 4.5 };
let dir;
before(async () => { dir = await mkdtemp(path.join(os.tmpdir(), 'faults-')); });
after(() => rm(dir, { recursive: true, force: true }));

test('a reload and slow readers of 1 MiB under load: no request lost, memory bounded, in both modes', async () => {
  const env = { ...process.env, K6_BIN: k6Bin(), FAULTS: 'reload,slow-readers', MODES: 'http,grpc', FAULT_DURATION: '8s', RESULTS_DIR: dir };
  const { stdout, stderr } = await run(process.execPath, ['bench/cli.js', 'faults'], { cwd: ROOT, env, timeout: 240000 });
  assert.match(stdout, /## Fault matrix/);
  assert.equal(stderr.split('\n').filter((l) => l.startsWith('faults: [')).length, 4, stderr);
  const [report] = (await readdir(dir)).filter((f) => /^faults-.*Z\.json$/.test(f));
  const { cells, provenance } = JSON.parse(await readFile(path.join(dir, report), 'utf8'));
  assert.ok(provenance?.commit !== undefined && provenance.server.WORKERS === 2, 'the report carries its provenance');
  assert.deepEqual(cells.map((c) => `${c.fault}/${c.mode}`), ['reload/http', 'reload/grpc', 'slow-readers/http', 'slow-readers/grpc']);
  for (const c of cells) {
    assert.ok(c.completed > 1000, `${c.fault}/${c.mode}: ${c.completed} completed`);
    assert.equal(c.failed, 0, `${c.fault}/${c.mode}: failed`);
    assert.equal(c.timed_out, 0, `${c.fault}/${c.mode}: timed out`);
  }
  for (const c of cells.filter((x) => x.fault === 'reload')) assert.equal(c.observed.reloaded, true);
  // The multiplexing client beside k6 in gRPC cells (bench/faults/mux-client.js): nothing it sent was lost.
  for (const c of cells) {
    if (c.mode === 'http') { assert.equal(c.multiplexed, null); continue; }
    assert.equal(c.multiplexed.error, undefined, c.multiplexed.error);
    assert.ok(c.multiplexed.answered > 1000, `${c.fault}: ghz ${JSON.stringify(c.multiplexed)}`);
    assert.equal(c.multiplexed.failed, 0, `${c.fault}: ghz ${JSON.stringify(c.multiplexed.errors)}`);
    assert.equal(c.multiplexed.calls, c.multiplexed.answered + c.multiplexed.refused + c.multiplexed.failed);
  }
  assert.match(stdout, /ghz calls, by its own count: answered \/ refused at the door \/ failed/);
  // 16 connections × 8 unread 1 MiB answers: backpressure keeps the workers far below holding them all in memory.
  for (const c of cells.filter((x) => x.fault === 'slow-readers')) {
    assert.ok(c.rss_peak_mib - c.rss_before_mib < SLOW_READER_GROWTH_MIB[c.mode], `${c.mode}: RSS ${c.rss_before_mib} → ${c.rss_peak_mib} MiB`);
  }
});

test('an unknown fault stops the command in one line, naming it', async () => {
  const err = await run(process.execPath, ['bench/cli.js', 'faults'], { cwd: ROOT, env: { ...process.env, FAULTS: 'reload,nope' } })
    .then(() => null, (e) => e);
  assert.equal(err?.code, 1);
  assert.match(err.stderr, /^faults: invalid setting FAULTS="reload,nope": must be a comma-separated list of none, worker-kill, /);
  assert.doesNotMatch(err.stderr, /at .*\.js:\d+/);
});

test('TLS: each misbehaving client finishes its handshake (the server counts it, by ALPN) before it misbehaves; a wrong CA gets nothing', async (t) => {
  const certs = await makeRunCertificates();
  const other = await makeRunCertificates();
  t.after(() => Promise.all([certs.remove(), other.remove()]));
  const adminPort = await freePort();
  const server = await startServer({ MODE: 'http,grpc,json-h2', TLS_CERT: certs.cert, TLS_KEY: certs.key, ADMIN_PORT: String(adminPort) });
  t.after(() => server.stop());
  const tls = { ca: await readFile(certs.caCert) };
  const each = 20;
  for (const [listener, protocol] of [['http', 'http'], ['grpc', 'grpc'], ['json-h2', 'h2']]) {
    const port = server.ports[listener];
    const idle = await idleConnections({ port, protocol, count: each, tls });
    await sleep(300);
    assert.deepEqual([idle.opened, idle.refused, idle.open()], [each, 0, each], `${listener}: idle connections`);
    idle.close();
    const burst = await malformedBurst({ port, protocol, count: each, tls, timeoutMs: 5000 });
    assert.equal(burst.closed_by_server, each, `${listener}: the server closes each malformed connection`);
    const readers = await slowReaders({ port, protocol, connections: 2, requestsEach: 2, tls });
    await sleep(300);
    readers.close();
    // Another CA: no handshake completes, so nothing reaches HTTP, and each connect fails rather than hangs.
    const refused = await idleConnections({ port, protocol, count: 3, tls: { ca: await readFile(other.caCert) } });
    assert.deepEqual([refused.opened, refused.refused], [0, 3], `${listener}: a wrong CA`);
  }
  const scrape = parseScrape(await (await fetch(`http://127.0.0.1:${adminPort}/metrics`)).text(), Date.now());
  const byAlpn = {};
  for (const [key, n] of scrape.workers.flatMap((w) => Object.entries(w.tls_handshakes ?? {}))) {
    const alpn = key.split('|')[2];
    byAlpn[alpn] = (byAlpn[alpn] ?? 0) + n;
  }
  // Per listener: the idle connections, the burst, the readers (HTTP/1.1: one connection each; HTTP/2: one session each).
  assert.deepEqual(byAlpn, { 'http/1.1': 2 * each + 2, h2: 2 * (2 * each + 2) }, 'handshakes the server completed, by ALPN');
  assert.equal(server.lines.filter((l) => [EVENT.UNCAUGHT_EXCEPTION, EVENT.WORKER_REPLACED, EVENT.WORKER_DIED_EARLY].includes(l.event)).length, 0,
    'no worker died');
});

test('TLS=1 npm run faults: k6, ghz and the malformed frames over TLS, json-h2 included; nothing the honest clients sent is lost', async () => {
  const env = { ...process.env, K6_BIN: k6Bin(), TLS: '1', FAULTS: 'malformed-frames', MODES: 'grpc,json-h2', FAULT_DURATION: '8s', RESULTS_DIR: dir };
  const { stdout, stderr } = await run(process.execPath, ['bench/cli.js', 'faults'], { cwd: ROOT, env, timeout: 240000 });
  assert.match(stdout, /^## Fault matrix · TLS$/m);
  assert.match(stdout, /over TLS \(the job's own CA and certificate; k6, ghz and the misbehaving clients verify it\)/);
  assert.match(stderr, /faults: \[1\/2\] malformed-frames · grpc · TLS/);
  const reports = (await readdir(dir)).filter((f) => /^faults-.*Z\.json$/.test(f));
  const { cells, settings } = JSON.parse(await readFile(path.join(dir, reports.sort().at(-1)), 'utf8'));
  assert.equal(settings.TLS, true);
  assert.deepEqual(cells.map((c) => `${c.fault}/${c.mode}`), ['malformed-frames/grpc', 'malformed-frames/json-h2']);
  for (const c of cells) {
    assert.ok(c.completed > 500, `${c.mode}: ${c.completed} completed`);
    assert.equal(c.failed, 0, `${c.mode}: failed`);
    assert.equal(c.observed.closed_by_server, 500, `${c.mode}: ${JSON.stringify(c.observed)}`);
  }
  // ghz verified the job's CA (no --insecure): a failed handshake would fail every call.
  const [grpc, h2] = cells;
  assert.equal(grpc.multiplexed.error, undefined, grpc.multiplexed.error);
  assert.ok(grpc.multiplexed.answered > 1000 && grpc.multiplexed.failed === 0, JSON.stringify(grpc.multiplexed));
  assert.equal(h2.multiplexed, null, 'ghz runs in gRPC cells only');
});
