// What a worker holds per slow stream reader, and whether WORKER_MEMORY_MB holds (issue 48): STREAMS streams of an own
// RPC whose messages are large (MESSAGES orders of MESSAGE_KIB KiB each, a stream), opened at once by a Node client on
// loopback that reads each stream's beginning and then nothing (bench/faults/clients.js slowStreamReaders), against a
// fresh one-worker `node server` with WORKER_MEMORY_MB: gRPC server streams (WatchOrders, 100 a connection), SSE on
// HTTP/1.1 (a connection each), WebSocket relays and gRPC relays (`grpc-relay`; SyncOrders, a connection each on
// HTTP/1.1, 100 a connection on gRPC, each sending 64 messages). Held per
// stream = (the worker's RSS 3 s after the streams opened − its RSS before) ÷ the streams answered.
//   node test/manual/slow-stream-readers.js [protocol,...]      default grpc,sse,ws,grpc-relay
//   STREAMS=64 MESSAGES=64 MESSAGE_KIB=256 WORKER_MEMORY_MB=384 (the defaults)
// Prints one JSON line per protocol. Bounded: each case ends 3 s after its streams began, or 5 s past their waits.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { slowStreamReaders } from '../../bench/faults/clients.js';
import { freePort, startServer } from '../../bench/processes.js';
import { EVENT } from '../../server/events.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const OWN = path.join(ROOT, 'test/fixtures/own');
const protocols = (process.argv[2] ?? 'grpc,sse,ws,grpc-relay').split(',');
const [STREAMS, MESSAGES, MESSAGE_KIB, BUDGET] = [['STREAMS', 64], ['MESSAGES', 64], ['MESSAGE_KIB', 256], ['WORKER_MEMORY_MB', 384]]
  .map(([name, value]) => Number(process.env[name] ?? value));

/** A field of a process's /proc status (KiB); null once the process is gone (a worker replaced past its budget). */
const kib = (pid, field) => {
  try {
    return Number(new RegExp(`${field}:\\s+(\\d+)`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'))[1]);
  } catch {
    return null;
  }
};
const mib = (k) => (k === null ? null : Math.round(k / 1024));

/** The admin endpoint's counts of one listener: refused over budget, streams completed and cut. */
async function counts(adminPort, listener) {
  const text = await (await fetch(`http://127.0.0.1:${adminPort}/metrics`)).text();
  const sum = (re) => [...text.matchAll(re)].reduce((s, m) => s + Number(m[1]), 0);
  return {
    refused: sum(new RegExp(`^server_requests_rejected_total\\{[^}]*listener="${listener}"[^}]*reason="over_budget"[^}]*\\} (\\d+)`, 'gm')),
    completed: sum(new RegExp(`^server_streams_ended_total\\{[^}]*listener="${listener}"[^}]*how="completed"[^}]*\\} (\\d+)`, 'gm')),
    cut: sum(new RegExp(`^server_streams_ended_total\\{[^}]*listener="${listener}"[^}]*how="cut"[^}]*\\} (\\d+)`, 'gm')),
  };
}

const dir = mkdtempSync(path.join(os.tmpdir(), 'slow-stream-readers-'));
try {
  const response = path.join(dir, 'large.json');
  const note = 'x'.repeat(MESSAGE_KIB * 1024);
  writeFileSync(response, JSON.stringify([Array.from({ length: MESSAGES }, (_, i) => ({ orderId: String(i), customerNote: note }))]));
  for (const protocol of protocols) {
    const relay = protocol === 'ws' || protocol === 'grpc-relay';
    const h2 = protocol.startsWith('grpc');
    const rpc = relay ? 'shop.v1.ShopService/SyncOrders' : 'shop.v1.ShopService/WatchOrders';
    const adminPort = await freePort();
    const server = await startServer({ cpus: '0', readyTimeoutMs: 30000, env: {
      MODE: 'http,grpc', WORKERS: '1', PROTO: path.join(OWN, 'a/shop/v1/shop.proto'), PROTO_PATH: `${path.join(OWN, 'a')}:${path.join(OWN, 'b')}`,
      RPC: rpc, RESPONSE: response, WORKER_MEMORY_MB: String(BUDGET), ADMIN_PORT: String(adminPort), MAX_CONNECTIONS: String(STREAMS + 100),
    } });
    try {
      const [pid] = server.workerPids();
      await sleep(1000);
      const before = kib(pid, 'VmRSS');
      const readers = await slowStreamReaders({
        port: h2 ? server.grpcPort : server.httpPort, protocol: h2 ? 'grpc' : 'http',
        path: `/${rpc}`, streams: STREAMS, relay, request: { protobuf: new Uint8Array(0), json: '{}' },
      });
      await sleep(3000);
      const [now, peak] = [kib(pid, 'VmRSS'), kib(pid, 'VmHWM')];
      const listener = h2 ? 'grpc' : 'http';
      const during = await counts(adminPort, listener);
      readers.close();
      await sleep(2000);
      const after = kib(pid, 'VmRSS');
      const ended = await counts(adminPort, listener);
      console.log(JSON.stringify({
        protocol, streams: STREAMS, message_kib: MESSAGE_KIB, messages: MESSAGES, budget_mib: BUDGET, refuse_at_mib: Math.round(BUDGET * 0.85),
        answered: readers.answered, refused_seen: readers.refused, failed_seen: readers.failed,
        rss_mib: { before: mib(before), held: mib(now), peak: mib(peak), after: after === null ? null : mib(after) },
        held_kib_per_answered_stream: readers.answered && now !== null ? Math.round((now - before) / readers.answered) : null,
        server: { refused: ended.refused, completed: ended.completed, cut: ended.cut, refused_while_held: during.refused },
        recycled: server.lines.filter((l) => l.event === EVENT.WORKER_RECYCLING).length,
      }));
    } finally {
      await server.stop();
    }
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
