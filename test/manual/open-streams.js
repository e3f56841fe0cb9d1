// How many open streams one worker holds, and what each costs (issue 48): N paced server streams held open at once
// against one `node server` worker, over gRPC (grpc-js, 100 streams a connection), SSE on HTTP/1.1 (a connection each)
// and WebSocket relays (a connection each, the client sending a message a second), for each N; each with a fresh server
// pinned to cpu 0. With every stream open and past its first message, the worker's RSS and CPU are read over a window:
// memory per open stream = (RSS with the streams open − RSS before them) ÷ N; CPU per message = the worker's CPU time
// over the window ÷ the messages the clients received in it.
//   taskset -c 1 node test/manual/open-streams.js [N,...] [protocol,...]     default 1,100,1000,10000 grpc,sse,ws
// Prints one JSON line per case, then a Markdown table. The machine needs a file-descriptor limit above 2 × N.
// The main job holds such streams from k6 instead: STREAMS=N (docs/streaming.md, both clients' tables side by side).
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import grpc from '@grpc/grpc-js';
import WebSocket from 'ws';
import { startServer } from '../../bench/processes.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const OWN = path.join(ROOT, 'test/fixtures/own');
const counts = (process.argv[2] ?? '1,100,1000,10000').split(',').map(Number);
const protocols = (process.argv[3] ?? 'grpc,sse,ws').split(',');
const WINDOW_MS = 10_000;
const PER_CHANNEL = 100; // below the server's H2_MAX_CONCURRENT_STREAMS (128)
// /proc/<pid>/stat counts CPU time in clock ticks.
const TICK_MS = 1000 / Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }));

const rssBytes = (pid) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))[1]) * 1024;
/** A process's CPU time so far (user + system), ms. */
const cpuMs = (pid) => {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) * TICK_MS;
};

/** One long response stream (the fixture's orders, round and round), a message a second: open for 10 minutes. */
function longStreamFile(dir) {
  const orders = JSON.parse(readFileSync(path.join(OWN, 'order-streams.json'), 'utf8')).flat();
  const file = path.join(dir, 'long-stream.json');
  writeFileSync(file, JSON.stringify([Array.from({ length: 600 }, (_, i) => orders[i % orders.length])]));
  return file;
}

/** Opens n streams of a protocol; each counts its messages into `seen`. Resolves with a closer once all are open. */
async function open(protocol, n, ports, seen) {
  const closers = [];
  if (protocol === 'grpc') {
    const identity = (b) => b;
    const Client = grpc.makeGenericClientConstructor({ watch: { path: '/shop.v1.ShopService/WatchOrders', requestStream: false, responseStream: true,
      requestSerialize: identity, requestDeserialize: identity, responseSerialize: identity, responseDeserialize: identity } }, 'Shop');
    for (let c = 0; c * PER_CHANNEL < n; c++) {
      const client = new Client(`127.0.0.1:${ports.grpc}`, grpc.credentials.createInsecure(), { 'grpc.use_local_subchannel_pool': 1 });
      closers.push(() => client.close());
      for (let i = c * PER_CHANNEL; i < Math.min(n, (c + 1) * PER_CHANNEL); i++) {
        const call = client.watch(Buffer.alloc(0));
        call.on('data', () => { seen.messages++; if (!seen.started.has(i)) seen.started.add(i); });
        call.on('error', () => {});
        closers.push(() => call.cancel());
      }
      if (c % 10 === 9) await sleep(50);
    }
  } else if (protocol === 'sse') {
    for (let i = 0; i < n; i++) {
      const socket = net.connect(ports.http, '127.0.0.1');
      socket.on('error', () => {});
      socket.write('POST /shop.v1.ShopService/WatchOrders HTTP/1.1\r\nHost: bench\r\nContent-Type: application/json\r\n'
        + 'Accept: text/event-stream\r\nContent-Length: 2\r\n\r\n{}');
      let tail = '';
      socket.setEncoding('utf8');
      socket.on('data', (chunk) => {
        const text = tail + chunk;
        for (let at = text.indexOf('\n\n'); at >= 0; at = text.indexOf('\n\n', at + 2)) {
          seen.messages++;
          seen.started.add(i);
        }
        tail = text.slice(-1);
      });
      closers.push(() => socket.destroy());
      if (i % 200 === 199) await sleep(50);
    }
  } else {
    const sockets = [];
    for (let i = 0; i < n; i++) {
      const ws = new WebSocket(`ws://127.0.0.1:${ports.http}/shop.v1.ShopService/SyncOrders`);
      ws.on('error', () => {});
      ws.on('open', () => sockets.push(ws));
      ws.on('message', () => { seen.messages++; seen.started.add(i); });
      closers.push(() => ws.terminate());
      if (i % 200 === 199) await sleep(50);
    }
    // Each relay gets a message a second, as a paced server stream sends one.
    const timer = setInterval(() => { for (const ws of sockets) if (ws.readyState === WebSocket.OPEN) ws.send('{}'); }, 1000);
    closers.push(() => clearInterval(timer));
  }
  return () => { for (const close of closers) close(); };
}

const dir = mkdtempSync(path.join(os.tmpdir(), 'open-streams-'));
const results = [];
try {
  const response = longStreamFile(dir);
  for (const protocol of protocols) {
    for (const n of counts) {
      const rpc = protocol === 'ws' ? 'shop.v1.ShopService/SyncOrders' : 'shop.v1.ShopService/WatchOrders';
      const server = await startServer({ cpus: '0', env: {
        MODE: 'http,grpc', WORKERS: '1', PROTO: path.join(OWN, 'a/shop/v1/shop.proto'), PROTO_PATH: `${path.join(OWN, 'a')}:${path.join(OWN, 'b')}`,
        RPC: rpc, RESPONSE: response, STREAM_INTERVAL: '1000', MAX_CONNECTIONS: String(2 * n + 100),
      } });
      try {
        const pid = server.workerPids()[0];
        await sleep(1000);
        const idle = rssBytes(pid);
        const seen = { messages: 0, started: new Set() };
        const opened = performance.now();
        const close = await open(protocol, n, { grpc: server.ports.grpc, http: server.ports.http }, seen);
        while (seen.started.size < n && performance.now() - opened < 60_000) await sleep(200);
        const openMs = performance.now() - opened;
        await sleep(2000);
        const [m0, c0] = [seen.messages, cpuMs(pid)];
        await sleep(WINDOW_MS);
        const [m1, c1, rss] = [seen.messages, cpuMs(pid), rssBytes(pid)];
        close();
        const result = {
          protocol, streams: n, open: seen.started.size, open_s: Number((openMs / 1000).toFixed(1)),
          messages_per_s: Math.round(((m1 - m0) * 1000) / WINDOW_MS), worker_cpu_pct: Math.round(((c1 - c0) / WINDOW_MS) * 100),
          cpu_us_per_message: m1 > m0 ? Math.round(((c1 - c0) * 1000) / (m1 - m0)) : null,
          rss_idle_mib: Number((idle / 1048576).toFixed(1)), rss_open_mib: Number((rss / 1048576).toFixed(1)),
          kib_per_stream: Number(((rss - idle) / 1024 / n).toFixed(1)),
        };
        console.log(JSON.stringify(result));
        results.push(result);
      } finally {
        await server.stop();
      }
    }
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
console.log('\n| protocol | open streams | messages/s | worker CPU | CPU per message (µs) | RSS idle → open (MiB) | memory per open stream (KiB) |');
console.log('| --- | ---: | ---: | ---: | ---: | ---: | ---: |');
for (const r of results) {
  console.log(`| ${r.protocol} | ${r.open.toLocaleString('en')} of ${r.streams.toLocaleString('en')} | ${r.messages_per_s.toLocaleString('en')} | ${r.worker_cpu_pct}% `
    + `| ${r.cpu_us_per_message ?? 'n/a'} | ${r.rss_idle_mib} → ${r.rss_open_mib} | ${r.kib_per_stream} |`);
}
