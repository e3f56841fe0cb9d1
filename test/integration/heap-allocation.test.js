// Bytes allocated on the V8 heap per request (issue 24): the server's own accounting (heap-used growth plus what each
// GC freed, v8.GCProfiler, server/accounting.js) against an independent estimate of the same window: V8's sampling
// heap profiler with the objects the GCs collected kept in (HeapProfiler.startSampling), read through the worker's
// inspector. A real server under real load (wrk, h2load); the two agree within 20%.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { measureCapacity, requireCapacityTools } from '../../bench/passes/capacity.js';
import { scrapeServer } from '../../bench/passes/scrape.js';
import { serverFigures, serverWindow } from '../../bench/records/server-stats.js';
import { eventually } from '../helpers/proc.js';
import { freePort, startServer } from '../helpers/server.js';

/**
 * A Chrome DevTools Protocol session over the inspector's WebSocket.
 * @param {string} url ws://host:port/uuid
 * @returns {Promise<{send: (method: string, params?: object) => Promise<any>, close: () => void}>}
 */
async function inspect(url) {
  const ws = new WebSocket(url);
  await new Promise((resolve, reject) => { ws.onopen = resolve; ws.onerror = reject; });
  const pending = new Map();
  let id = 0;
  ws.onmessage = ({ data }) => {
    const message = JSON.parse(String(data));
    const waiter = pending.get(message.id);
    if (!waiter) return;
    pending.delete(message.id);
    if (message.error) waiter.reject(new Error(message.error.message));
    else waiter.resolve(message.result);
  };
  return {
    send: (method, params = {}) => new Promise((resolve, reject) => {
      pending.set(++id, { resolve, reject });
      ws.send(JSON.stringify({ id, method, params }));
    }),
    close: () => ws.close(),
  };
}

/** Bytes a sampling heap profile estimates were allocated: every node's selfSize (its samples, scaled by V8). */
const sampledBytes = (node) => node.selfSize + node.children.reduce((sum, child) => sum + sampledBytes(child), 0);

for (const [mode, tool] of [['http', 'wrk'], ['grpc', 'h2load']]) {
  test(`${mode} under ${tool}: bytes allocated per request agree with a sampling heap profile within 20%`, async () => {
    requireCapacityTools([mode], 'this test');
    const admin = `127.0.0.1:${await freePort()}`;
    // Every process of the server opens an inspector on a port of its own; the worker's is found by its pid.
    const server = await startServer({ MODE: mode, ADMIN_PORT: admin.split(':')[1], NODE_OPTIONS: '--inspect=127.0.0.1:0' });
    let session;
    try {
      const [workerPid] = server.workerPids();
      const urls = () => [...server.stderr().matchAll(/Debugger listening on (ws:\/\/\S+)/g)].map((m) => m[1]);
      // Both processes print their inspector's URL as they start; a busy machine can hold the worker's back a while.
      assert.ok(await eventually(() => urls().length >= 2, 15000), `the worker printed no inspector URL:\n${server.stderr()}`);
      for (const url of urls()) {
        const candidate = await inspect(url);
        const { result } = await candidate.send('Runtime.evaluate', { expression: 'process.pid' });
        if (result.value === workerPid) session = candidate;
        else candidate.close();
      }
      assert.ok(session, `no inspector of worker ${workerPid} among ${urls().join(', ')}`);
      const load = { listener: mode, scenario: 'user', host: `127.0.0.1:${server.ports[mode]}`, connections: 8, cpus: '1' };
      await measureCapacity({ ...load, durationS: 1 }); // warm-up, outside the window

      await session.send('HeapProfiler.enable');
      await session.send('HeapProfiler.startSampling', {
        samplingInterval: 16384, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true,
      });
      const start = await scrapeServer(admin);
      const { requests } = await measureCapacity({ ...load, durationS: 3 });
      const end = await scrapeServer(admin);
      const { profile } = await session.send('HeapProfiler.stopSampling');

      const window = serverWindow(start, end);
      const [worker] = window.workers;
      const sampled = sampledBytes(profile.head);
      const ratio = worker.heap_allocated_bytes / sampled;
      const perRequest = serverFigures(window).server_heap_allocated_bytes_per_request;
      console.error(`${mode}: ${requests} requests; accounting ${worker.heap_allocated_bytes} bytes `
        + `(${Math.round(perRequest)} per request), sampling heap profile ${Math.round(sampled)} bytes; ratio ${ratio.toFixed(3)}`);
      assert.ok(worker.requests >= requests * 0.99, `the window holds the load: ${worker.requests} served, ${tool} counted ${requests}`);
      assert.ok(perRequest > 100, `${perRequest} bytes per request`);
      assert.ok(ratio > 0.8 && ratio < 1.2, `accounting ÷ sampling heap profile = ${ratio.toFixed(3)}`);
    } finally {
      session?.close();
      await server.stop();
    }
  });
}
