// The worker's memory budget against slow stream readers (issue 48), on real servers: streams of an own RPC whose
// messages are 256 KiB, opened by readers that stop reading once their stream began (bench/faults/clients.js
// slowStreamReaders), are refused past the refusal mark (gRPC RESOURCE_EXHAUSTED, HTTP 503, WebSocket close 1013) and
// counted as refused; the worker stays within its budget and is not replaced; every stream it began is counted as cut
// once its reader leaves. Without the refusal the readers take the worker past its budget (about 275 MiB of 256 for 256
// gRPC streams, 576 MiB for 64 WebSocket relays: test/manual/slow-stream-readers.js, docs/streaming.md), and the peak
// and refusal checks fail.
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { slowStreamReaders } from '../../bench/faults/clients.js';
import { EVENT } from '../../server/events.js';
import { freePort, ROOT, startServer } from '../helpers/server.js';
import { tempDir } from '../helpers/tmp.js';

const OWN = path.join(ROOT, 'test', 'fixtures', 'own');
const SHOP = { PROTO: path.join(OWN, 'a', 'shop', 'v1', 'shop.proto'), PROTO_PATH: [path.join(OWN, 'a'), path.join(OWN, 'b')].join(':') };
// Well above what such a worker takes at start (about 150 to 185 MiB here), so that the readers, not the start, reach
// the refusal mark (85%: 272 MiB).
const BUDGET_MB = 320;
const REQUEST = { protobuf: new Uint8Array(0), json: '{}' };

/** A worker's peak RSS (VmHWM, MiB). */
const peakMb = (pid) => Number(/VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))[1]) / 1024;

/** The admin endpoint's counts of a listener: streams refused over budget, cut and completed. */
async function counts(adminPort, listener) {
  const text = await (await fetch(`http://127.0.0.1:${adminPort}/metrics`)).text();
  const sum = (re) => [...text.matchAll(re)].reduce((s, m) => s + Number(m[1]), 0);
  const labelled = (name, label) => new RegExp(`^${name}\\{(?=[^}]*listener="${listener}")(?=[^}]*${label})[^}]*\\} (\\d+)`, 'gm');
  return {
    refused: sum(labelled('server_requests_rejected_total', 'reason="over_budget"')),
    cut: sum(labelled('server_streams_ended_total', 'how="cut"')),
    completed: sum(labelled('server_streams_ended_total', 'how="completed"')),
  };
}

/** A one-worker server of an RPC whose one response stream is 64 messages of 256 KiB (16 MiB: more than the sockets' buffers and windows take), with the test's budget. */
async function largeStreamServer(t, rpc, mode) {
  const dir = await tempDir(t, 'stream-budget-');
  const response = path.join(dir, 'large.json');
  const note = 'x'.repeat(256 * 1024);
  writeFileSync(response, JSON.stringify([Array.from({ length: 64 }, (_, i) => ({ orderId: String(i), customerNote: note }))]));
  const adminPort = await freePort();
  const server = await startServer({ MODE: mode, ...SHOP, RPC: rpc, RESPONSE: response, WORKER_MEMORY_MB: String(BUDGET_MB),
    ADMIN_PORT: String(adminPort) }, { readyTimeoutMs: 20000 });
  t.after(() => server.kill());
  return { server, adminPort, pid: server.workerPids()[0] };
}

/**
 * Opens `streams` slow readers, checks that the budget refused some and every stream began one way or the other, that
 * the server counted the same refusals, and that the worker stayed within its budget (+10%).
 */
async function refusedPastTheMark(t, { adminPort, pid }, { label, protocol, listener, port, rpc, streams, relay = false }) {
  const before = (await counts(adminPort, listener)).refused;
  const readers = await slowStreamReaders({ port, protocol, path: `/${rpc}`, streams, relay, request: REQUEST });
  t.after(() => readers.close());
  const refused = (await counts(adminPort, listener)).refused - before;
  t.diagnostic(`${label}: ${readers.answered} answered, ${readers.refused} refused, ${readers.failed} failed; worker peak `
    + `${peakMb(pid).toFixed(0)} MiB of ${BUDGET_MB}`);
  assert.equal(readers.failed, 0, `${label}: ${readers.failed} streams neither began nor were refused`);
  assert.ok(readers.refused > 0, `${label}: no stream refused by the budget`);
  assert.equal(refused, readers.refused, `${label}: the server counted ${refused} refusals, the client saw ${readers.refused}`);
  assert.ok(peakMb(pid) <= BUDGET_MB * 1.1, `${label}: peak RSS ${peakMb(pid).toFixed(0)} MiB past the budget ${BUDGET_MB} MiB + 10%`);
  return readers;
}

/** The worker was neither replaced nor lost. */
function assertSurvived(server, pid) {
  assert.deepEqual(server.workerPids(), [pid], 'the worker was replaced');
  assert.equal(server.lines.filter((l) => l.event === EVENT.WORKER_RECYCLING).length, 0, 'the worker was recycled past its budget');
  process.kill(pid, 0);
}

test('server streams of large messages past the refusal mark: refused and counted (gRPC, SSE on HTTP/1.1, connect-grpc); the worker stays within its budget; the streams it began end as cut', async (t) => {
  const rpc = 'shop.v1.ShopService/WatchOrders';
  const running = await largeStreamServer(t, rpc, 'http,grpc,connect-grpc');
  const { server, adminPort, pid } = running;
  const readers = [
    ['grpc', await refusedPastTheMark(t, running,
      { label: 'gRPC', protocol: 'grpc', listener: 'grpc', port: server.grpcPort, rpc, streams: 400 })],
    ['http', await refusedPastTheMark(t, running,
      { label: 'SSE', protocol: 'http', listener: 'http', port: server.httpPort, rpc, streams: 120 })],
    // connect-node sends its head first and a refusal in the trailers (the worker is past the mark by now).
    ['connect-grpc', await refusedPastTheMark(t, running,
      { label: 'connect-grpc', protocol: 'grpc', listener: 'connect-grpc', port: server.ports['connect-grpc'], rpc, streams: 100 })],
  ];
  assertSurvived(server, pid);
  for (const [, r] of readers) r.close();
  // Every stream the worker began ends as cut when its reader leaves; none is lost without a count.
  const expected = readers.map(([, r]) => [r.answered, 0]);
  let last = [];
  for (let i = 0; i < 50 && JSON.stringify(last) !== JSON.stringify(expected); i++) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    last = await Promise.all(readers.map(async ([listener]) => {
      const c = await counts(adminPort, listener);
      return [c.cut, c.completed];
    }));
  }
  assert.deepEqual(last, expected, 'streams cut and completed, by listener: gRPC, SSE, connect-grpc');
});

test('WebSocket relays of large messages past the refusal mark: closed with 1013 and counted; the worker stays within its budget', async (t) => {
  const rpc = 'shop.v1.ShopService/SyncOrders';
  const running = await largeStreamServer(t, rpc, 'http');
  // A relay holds about 1.8 MiB (its 1 MiB mark and a message): 96 would take the worker past its budget.
  await refusedPastTheMark(t, running,
    { label: 'WebSocket relay', protocol: 'http', listener: 'http', port: running.server.httpPort, rpc, streams: 96, relay: true });
  assertSurvived(running.server, running.pid);
});
