// Sockets and worker RSS before, during and after a 10 s rapid-reset flood (4 connections) on each
// HTTP/2 listener of one MODE=all worker (pinned to cpu 0); one JSON line per listener, in turn.
// Not part of npm test; run it with the flood on another core:
//   taskset -c 1 node test/manual/rapid-reset-report.js          (ONLY=grpc for one listener)
// WORKER_MEMORY_MB, when set, is the worker's memory budget (server/memory-budget.js): a worker past it is replaced, and
// each row says whether the same worker still serves.
import { isAlive, startServer } from '../../bench/processes.js';
import { GET_USER_RPC } from '../../proto/payload.js';
import { getRequestHeaders, grpcRequestHeaders, rapidResetFlood } from '../helpers/h2-raw.js';
import { establishedOn, rssMib } from '../helpers/proc.js';

const LISTENERS = {
  grpc: grpcRequestHeaders(`/${GET_USER_RPC}`),
  'json-h2': getRequestHeaders('/'),
  'baseline-grpc': grpcRequestHeaders(`/${GET_USER_RPC}`),
};
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const mib = (pid) => Math.round(rssMib(pid));

const budget = process.env.WORKER_MEMORY_MB ? { WORKER_MEMORY_MB: process.env.WORKER_MEMORY_MB } : {};
const server = await startServer({ env: { MODE: 'all', WORKERS: '1', ...budget }, cpus: '0' });
const [pid] = server.workerPids();
try {
  for (const [name, headers] of Object.entries(LISTENERS).filter(([n]) => !process.env.ONLY || n === process.env.ONLY)) {
    const port = server.ports[name];
    const row = { listener: name, sockets_before: establishedOn(port), rss_mib_before: mib(pid) };
    let sockets = 0;
    let rss = 0;
    const sampler = setInterval(() => { sockets = Math.max(sockets, establishedOn(port)); rss = Math.max(rss, mib(pid)); }, 100);
    const stats = await rapidResetFlood(port, { durationMs: 10000, connections: 4, headers });
    clearInterval(sampler);
    Object.assign(row, { sockets_peak_during: sockets, rss_mib_peak_during: rss, connections: stats.connections, goaways_by_code: stats.goaways });
    await sleep(3000);
    Object.assign(row, { sockets_after_3s: establishedOn(port), rss_mib_after_3s: mib(pid) });
    await sleep(7000);
    const now = server.workerPids().filter(isAlive).at(-1);
    Object.assign(row, { sockets_after_10s: establishedOn(port), rss_mib_after_10s: mib(pid), same_worker: now === pid,
      recycled: server.lines.filter((l) => l.event === 'worker-recycling').length,
      rss_mib_serving_worker_after_10s: now && now !== pid ? mib(now) : undefined });
    console.log(JSON.stringify(row));
  }
} finally {
  console.log(JSON.stringify({ server_exit_code: await server.stop() }));
}
