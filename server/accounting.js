// What serving costs each process (issue 6), as prom-client metrics read at scrape time:
// requests served, CPU time, RSS and heap (now and peak), event-loop delay, GC pauses, bytes allocated on the V8 heap.
// Workers answer the primary's requests for their metrics over cluster IPC
// (prom-client's AggregatorRegistry); the primary serves them all on the admin endpoint.
// Every series carries the process's `pid` label, so per-worker figures survive aggregation.
import { PerformanceObserver } from 'node:perf_hooks';
import v8 from 'node:v8';
import client from 'prom-client';
import { openStreams, rejectedRequests, servedRequests, streamMessages, streamsEnded } from './served.js';
import { HANDSHAKE_LABELS, tlsHandshakes } from './tls.js';

const { AggregatorRegistry, collectDefaultMetrics, Counter, Gauge, Registry } = client;

/**
 * Sampling interval (ms) of the event-loop delay histogram (perf_hooks.monitorEventLoopDelay,
 * through prom-client). Its samples are the time between two timer runs, so each holds this
 * interval: a reader subtracts it to get the delay (server_eventloop_resolution_seconds says it).
 */
export const EVENT_LOOP_RESOLUTION_MS = 10;

/** How often (ms) RSS and heap are sampled for their peaks between two scrapes. */
export const MEMORY_SAMPLE_MS = 100;

/**
 * The metrics every process reports, registered in `registry`: prom-client's default
 * metrics (CPU `process_cpu_{user,system}_seconds_total`, RSS `process_resident_memory_bytes`,
 * heap `nodejs_heap_size_used_bytes`, event-loop delay `nodejs_eventloop_lag_p50_seconds`
 * and `_p99_`, reset at each scrape) and this module's own: `server_gc_pause_seconds_total`,
 * `server_gc_runs_total`, `server_heap_allocated_bytes_total`, `server_resident_memory_peak_bytes` and `server_heap_used_peak_bytes`
 * (sampled every MEMORY_SAMPLE_MS, reset at each scrape), `server_eventloop_resolution_seconds`.
 * @param {import('prom-client').Registry} registry
 * @param {string} prefix '' in a worker; 'server_primary_' in the primary, whose metrics sit
 *   beside the workers' in one exposition and so need names of their own
 */
function registerProcessMetrics(registry, prefix) {
  registry.setDefaultLabels({ pid: String(process.pid) });
  collectDefaultMetrics({ register: registry, prefix, eventLoopMonitoringPrecision: EVENT_LOOP_RESOLUTION_MS });
  // prom-client's GC histogram reads only the first entry of each batch its observer gets, so
  // GCs that come in one batch are lost (about 1 in 10 in a burst here); every entry is counted below.
  registry.removeSingleMetric(`${prefix}nodejs_gc_duration_seconds`);
  const own = prefix || 'server_';
  const registers = [registry];

  // Bytes allocated on the V8 heap. Node 24's v8.getHeapStatistics() has no total_allocated_bytes; but the heap's used size
  // grows only by allocation between two GCs and shrinks only in a GC, so what was allocated since the start is the used
  // size's growth plus what every GC freed (used before it − used after it). v8.GCProfiler records each GC's sizes at the
  // GC itself, nothing per allocation.
  // A stopped GCProfiler is not inert: Node 24 removes its GC callbacks only when V8 collects the object (~GCProfiler in
  // src/node_v8.cc), and until then it appends every GC to a buffer nobody reads. One stopped per scrape lived on in the
  // old generation until a full GC, which a steady server rarely needs: an HTTP worker's RSS grew 5 MiB/min, speeding up,
  // in a 30-minute soak (docs/soak.md). A forced full GC per scrape frees them but slows the worker for a while after
  // each (docs/soak.md has the figures). So the profiler is replaced after every GC, from the observer below: each one
  // records a GC or two and dies young, and a scavenge collects it with its buffer.
  const allocation = { profiler: new v8.GCProfiler(), freed: 0, startUsed: v8.getHeapStatistics().used_heap_size };
  allocation.profiler.start();
  // A GC during stop()'s own parse falls between two profilers and goes uncounted: the total can then dip below what was
  // reported, and the counter waits for it rather than step back.
  const readAllocation = () => {
    for (const { beforeGC, afterGC } of allocation.profiler.stop().statistics) {
      allocation.freed += beforeGC.heapStatistics.usedHeapSize - afterGC.heapStatistics.usedHeapSize;
    }
    allocation.profiler = new v8.GCProfiler();
    allocation.profiler.start();
    return v8.getHeapStatistics().used_heap_size - allocation.startUsed + allocation.freed;
  };

  const gc = { pauseMs: 0, runs: 0 };
  new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      gc.pauseMs += entry.duration;
      gc.runs++;
    }
    readAllocation();
  }).observe({ entryTypes: ['gc'] });
  const reported = { pauseMs: 0, runs: 0 };
  new Counter({
    name: `${own}gc_pause_seconds_total`,
    help: 'Time spent in garbage collection (all kinds), from every perf_hooks gc entry.',
    registers,
    collect() {
      this.inc((gc.pauseMs - reported.pauseMs) / 1000);
      reported.pauseMs = gc.pauseMs;
    },
  });
  new Counter({
    name: `${own}gc_runs_total`,
    help: 'Garbage collections (all kinds), from every perf_hooks gc entry.',
    registers,
    collect() {
      this.inc(gc.runs - reported.runs);
      reported.runs = gc.runs;
    },
  });

  let allocationReported = 0;
  new Counter({
    name: `${own}heap_allocated_bytes_total`,
    help: 'Bytes allocated on the V8 heap since the accounting started: heap-used growth plus what each GC freed (v8.GCProfiler).',
    registers,
    collect() {
      const total = readAllocation();
      if (total <= allocationReported) return;
      this.inc(total - allocationReported);
      allocationReported = total;
    },
  });

  // A peak between two scrapes needs samples in between: a timer, off the request path.
  const peak = { rss: 0, heap: 0 };
  const sample = () => {
    const { rss, heapUsed } = process.memoryUsage();
    peak.rss = Math.max(peak.rss, rss);
    peak.heap = Math.max(peak.heap, heapUsed);
  };
  sample();
  setInterval(sample, MEMORY_SAMPLE_MS).unref();
  // Each peak gauge ends its window when read: its value covers the time since the previous scrape.
  const peakGauge = (name, key, what) => new Gauge({
    name: `${own}${name}`,
    help: `Largest ${what} since the previous scrape, sampled every ${MEMORY_SAMPLE_MS} ms and at the scrape.`,
    registers,
    collect() {
      sample();
      this.set(peak[key]);
      peak[key] = 0;
    },
  });
  peakGauge('resident_memory_peak_bytes', 'rss', 'resident set size');
  peakGauge('heap_used_peak_bytes', 'heap', 'V8 heap used');
  new Gauge({
    name: `${own}eventloop_resolution_seconds`,
    help: 'Sampling interval of the nodejs_eventloop_lag_* histogram, which each of its values includes.',
    registers,
  }).set(EVENT_LOOP_RESOLUTION_MS / 1000);
}

/**
 * A counter read at scrape time from a map of counts the request path bumps: each key its labels' values, joined by
 * `separator` in `labelNames`' order; each scrape adds what was counted since the last.
 * @param {InstanceType<typeof Registry>} registry
 * @param {{name: string, help: string, labelNames: string[], counts: Map<string, number>, separator: string}} counter
 * @returns {void}
 */
function countsOf(registry, { name, help, labelNames, counts, separator }) {
  const reported = new Map();
  new Counter({
    name, help, labelNames, registers: [registry],
    collect() {
      for (const [key, count] of counts) {
        const labels = Object.fromEntries(key.split(separator).map((v, i) => [labelNames[i], v]));
        this.inc(labels, count - (reported.get(key) ?? 0));
        reported.set(key, count);
      }
    },
  });
}

/**
 * Starts a worker's accounting: registers its metrics, including
 * `server_requests_served_total{handlers}`, `server_requests_rejected_total{listener,reason}`,
 * `server_stream_messages_total{listener,direction}`, `server_streams_ended_total{listener,how}`, the gauges
 * `server_streams_open` and `server_streams_open_peak` read from server/served.js at scrape time and
 * `server_tls_handshakes_total{version,cipher,alpn,resumed}` from server/tls.js,
 * and answers the primary's requests for them over cluster IPC. Call once, in a worker.
 */
export function startWorkerAccounting() {
  const registry = new Registry();
  registerProcessMetrics(registry, '');
  const reported = {};
  new Counter({
    name: 'server_requests_served_total',
    help: 'Requests a route or RPC handler answered (server/served.js); handlers: http (fastify), grpc (grpc-js) or connect '
      + '(connect-node). A refused one is in server_requests_rejected_total.',
    labelNames: ['handlers'],
    registers: [registry],
    collect() {
      for (const [handlers, count] of Object.entries(servedRequests)) {
        this.inc({ handlers }, count - (reported[handlers] ?? 0));
        reported[handlers] = count;
      }
    },
  });
  countsOf(registry, {
    name: 'server_requests_rejected_total',
    help: 'Requests a route or RPC handler refused (server/served.js), by listener and reason: invalid_argument (the request '
      + 'does not decode, or a value does not fit its field), no_answer (it picks none of the answers), over_budget (the memory '
      + 'budget refused the answer, or the stream at its start). Absent until one is refused.',
    labelNames: ['listener', 'reason'], counts: rejectedRequests, separator: ' ',
  });
  countsOf(registry, {
    name: 'server_stream_messages_total',
    help: 'Messages of streams (server/served.js), by listener and direction: sent on a server stream, received on a client '
      + 'stream. Absent until a stream has one.',
    labelNames: ['listener', 'direction'], counts: streamMessages, separator: ' ',
  });
  countsOf(registry, {
    name: 'server_streams_ended_total',
    help: 'Server streams ended (server/streams.js), by listener and how: completed (every message sent), or cut (the client '
      + 'went away first). Absent until one ends.',
    labelNames: ['listener', 'how'], counts: streamsEnded, separator: ' ',
  });
  new Gauge({
    name: 'server_streams_open',
    help: 'Streams open now, every listener\'s (server/served.js): server streams and relays.',
    registers: [registry],
    collect() {
      this.set(openStreams.now);
    },
  });
  new Gauge({
    name: 'server_streams_open_peak',
    help: 'Most streams open at once since the previous scrape (counted as each opens, not sampled).',
    registers: [registry],
    collect() {
      // Each read ends its window, as the memory peaks do: the next starts from the streams open now.
      this.set(openStreams.peak);
      openStreams.peak = openStreams.now;
    },
  });
  countsOf(registry, {
    name: 'server_tls_handshakes_total',
    help: 'TLS handshakes completed (one per TLS connection; server/tls.js), by version, cipher, ALPN protocol and whether the '
      + 'session was resumed. Absent without TLS_CERT.',
    labelNames: [...HANDSHAKE_LABELS], counts: tlsHandshakes, separator: '|',
  });
  AggregatorRegistry.setRegistries(registry);
  // Constructing it is what makes a worker answer the primary's requests (prom-client's cluster.js).
  new AggregatorRegistry();
}

/**
 * The primary's side: its own process metrics (prefixed `server_primary_`) and the workers',
 * collected over cluster IPC at each call.
 * @returns {{contentType: string, metrics: () => Promise<string>}} `metrics` resolves with
 *   the Prometheus text exposition of every worker and the primary; it rejects when a
 *   worker does not answer within 5 s (prom-client's limit)
 */
export function createClusterAccounting() {
  const registry = new Registry();
  registerProcessMetrics(registry, 'server_primary_');
  const workers = new AggregatorRegistry();
  return {
    contentType: workers.contentType,
    metrics: async () => {
      const [fromWorkers, own] = await Promise.all([workers.clusterMetrics(), registry.metrics()]);
      return `${fromWorkers}\n${own}`;
    },
  };
}
