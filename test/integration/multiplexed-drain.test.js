// Reload and drain for clients that multiplex (issue 27): ghz (grpc-go) and a grpc-js client, each with several calls
// in flight on every connection. k6 keeps one call in flight per connection, so the reload test (reload.test.js) cannot
// see what a retiring worker does to a call the client sent while the shutdown notice was on its way.
// - SIGHUP: no call fails. The old worker stops accepting, sends the notice (GOAWAY with the largest stream id, then a
//   PING), and closes only once the PING's ACK says the client has seen it (server/h2-guard.js).
// - SIGTERM: every call the server took is answered (its own count, and no call ends as a broken connection); what
//   comes after is refused at the door (connection refused, or a GOAWAY the call never passed), counted apart.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { muxLoad, REFUSED_AT_THE_DOOR } from '../../bench/faults/mux-client.js';
import { EVENT } from '../../server/events.js';
import { grpcMuxLoad } from '../helpers/clients.js';
import { startServer } from '../helpers/server.js';

// The client shape: 16 calls in flight over 4 connections; 3000 calls a second for 8 s, the signal after 2.5 s.
const LOAD_MS = 8000;
const RATE = 3000;
const SIGNAL_AFTER_MS = 2500;

// What a call refused at the door ends with (it never reached a worker): the dial failed once the port closed, or a
// GOAWAY left it unprocessed with no other connection to take it.
const REFUSED = { ghz: REFUSED_AT_THE_DOOR, 'grpc-js': /ECONNREFUSED|No connection established/ };

/**
 * ghz (bench/faults/mux-client.js), by its own count: a call that a GOAWAY refused and grpc-go retried by itself with
 * success counts as refused there (its stats handler ends a call with the first attempt); the server's count settles it.
 * @returns {Promise<{calls: number, answered: number, errors: Record<string, number>}>}
 */
async function ghz(port) {
  const result = await muxLoad({ port, loadMs: LOAD_MS, shape: { rps: RATE } });
  assert.equal(result.error, undefined, result.error);
  return { calls: result.calls, answered: result.answered, errors: result.errors };
}

/** The grpc-js client (test/helpers/clients.js), which counts each call by what it returned. */
async function grpcJs(port) {
  const { ok, failed } = await grpcMuxLoad(port, { channels: 4, inFlight: 4, durationMs: LOAD_MS });
  /** @type {Record<string, number>} */
  const errors = {};
  for (const f of failed) errors[`${f.code} ${f.details}`] = (errors[`${f.code} ${f.details}`] ?? 0) + 1;
  return { calls: ok + failed.length, answered: ok, errors };
}

const CLIENTS = { ghz, 'grpc-js': grpcJs };
// ghz's count of a call refused at its first attempt and then retried by grpc-go.
const RETRIED = /the connection is draining/;
const sum = (counts) => Object.values(counts).reduce((a, n) => a + n, 0);
/** Calls the server's handlers took, by every worker's worker-stopped line (a reload's retired workers included). */
const servedBy = (server) => server.lines.filter((l) => l.event === EVENT.WORKER_STOPPED).reduce((a, l) => a + l.served.grpc, 0);

for (const [client, load] of Object.entries(CLIENTS)) {
  test(`SIGHUP with ${client} multiplexing (4 connections, 4 calls in flight on each): every worker replaced, no call failed`, async (t) => {
    const server = await startServer({ MODE: 'grpc', WORKERS: '2' });
    let report;
    let reloaded;
    let from;
    let before;
    try {
      before = server.workerPids();
      const loading = load(server.ports.grpc);
      await sleep(SIGNAL_AFTER_MS);
      from = server.lines.length;
      server.proc.kill('SIGHUP');
      reloaded = await server.waitForLine((l) => l.event === EVENT.RELOADED, { from, timeoutMs: 15000 });
      report = await loading;
    } finally {
      assert.equal(await server.stop(), 0);
    }
    const served = servedBy(server);
    t.diagnostic(`${client}: ${report.calls} calls, ${report.answered} answered by its count, errors ${JSON.stringify(report.errors)}; `
      + `the server's handlers took ${served}`);
    // Every call reached a handler exactly once (a call is served at most once: grpc-go retries only a call no server
    // took), so none failed, whatever ghz's first-attempt count says; and grpc-js, which counts outcomes, saw none fail.
    // ghz v0.120.0 counts attempts: a first attempt a GOAWAY refused, which grpc-go then retried by itself, is one call
    // more in its count (24,003 for 24,000 here, 2026-11-26); the server's count is the calls made.
    const retried = client === 'ghz' ? Object.entries(report.errors).filter(([e]) => RETRIED.test(e)).reduce((a, [, n]) => a + n, 0) : 0;
    assert.equal(served, report.calls - retried, 'calls the server took, against calls made');
    if (client === 'ghz') assert.deepEqual(Object.keys(report.errors).filter((e) => !RETRIED.test(e)), []);
    else assert.deepEqual(report.errors, {}, 'calls failed across the reload');
    assert.ok(report.answered > 1000, `only ${report.answered} calls answered`);
    assert.ok(reloaded.workers.every((pid) => !before.includes(pid)), 'every worker pid changed');
    const retired = server.lines.slice(from).filter((l) => l.event === EVENT.WORKER_STOPPED);
    assert.equal(retired.length, 4, 'two retired by the reload, two at the stop');
    assert.deepEqual(retired.map((l) => l.drained.lost), [0, 0, 0, 0], JSON.stringify(retired.map((l) => l.drained)));
  });

  test(`SIGTERM with ${client} multiplexing: every call the server took answered; the rest refused at the door`, async (t) => {
    const server = await startServer({ MODE: 'grpc', WORKERS: '2' });
    const loading = load(server.ports.grpc);
    await sleep(SIGNAL_AFTER_MS);
    const from = server.lines.length;
    server.proc.kill('SIGTERM');
    const [code] = await server.exited;
    const { calls, answered, errors } = await loading;
    const served = servedBy(server);
    t.diagnostic(`${client}: ${calls} calls, ${answered} answered, errors ${JSON.stringify(errors)}; the server's handlers took ${served}`);
    assert.equal(code, 0);
    const drained = server.lines.slice(from).filter((l) => l.event === EVENT.WORKER_STOPPED).map((l) => l.drained);
    assert.equal(drained.length, 2);
    assert.deepEqual(drained.map((d) => d.lost), [0, 0], `calls the server took and lost: ${JSON.stringify(drained)}`);
    // No call ended on a broken connection ("transport is closing", "use of closed network connection", a reset).
    const lost = Object.entries(errors).filter(([error]) => !REFUSED[client].test(error));
    assert.deepEqual(lost, [], 'calls lost in the drain');
    assert.ok(sum(errors) > 0, 'nothing refused: the stop did not happen under load');
    // Every call the server took came back answered (ghz may count a few of them refused: their first attempt was).
    const retried = client === 'ghz' ? sum(Object.fromEntries(Object.entries(errors).filter(([e]) => RETRIED.test(e)))) : 0;
    assert.ok(served >= answered && served <= answered + retried, `the server took ${served}, ${client} got ${answered} answered`);
    assert.ok(answered > 1000, `only ${answered} calls answered`);
  });
}
