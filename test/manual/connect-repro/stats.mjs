// Preloaded into either server (node --import ./stats.mjs …) by bench.mjs, not part of the servers themselves.
// On SIGUSR2 prints one JSON line of running totals: GC pause (perf_hooks 'gc' entries; of it, mark-compact), V8 heap bytes allocated,
// CPU (process.cpuUsage), event-loop utilization (performance.eventLoopUtilization) and the monotonic clock in µs
// (the clock of a .cpuprofile's startTime, for summarize.mjs's window). SIGTERM exits normally, so --cpu-prof writes.
import { PerformanceObserver, constants, performance } from 'node:perf_hooks';
import v8 from 'node:v8';
import { Session } from 'node:inspector/promises';
import { writeFileSync } from 'node:fs';

// Bytes allocated: Node 24's v8.getHeapStatistics() has no total_allocated_bytes, but the used heap grows only by
// allocation and shrinks only in a GC, so allocated = growth of used + what each GC freed (the project's
// server/accounting.js does the same). A GCProfiler records each GC's before/after sizes; one is replaced after every
// GC, as a stopped one lingers until collected.
const startUsed = v8.getHeapStatistics().used_heap_size;
let profiler = new v8.GCProfiler();
profiler.start();
let freed = 0;
const allocated = () => {
  for (const { beforeGC, afterGC } of profiler.stop().statistics) {
    freed += beforeGC.heapStatistics.usedHeapSize - afterGC.heapStatistics.usedHeapSize;
  }
  profiler = new v8.GCProfiler();
  profiler.start();
  return v8.getHeapStatistics().used_heap_size - startUsed + freed;
};

const gc = { ms: 0, runs: 0, majorMs: 0, majorRuns: 0 };
new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) {
    gc.ms += entry.duration;
    gc.runs++;
    if (/** @type {any} */ (entry).detail?.kind === constants.NODE_PERFORMANCE_GC_MAJOR) {
      gc.majorMs += entry.duration;
      gc.majorRuns++;
    }
  }
  allocated();
}).observe({ entryTypes: ['gc'] });

// ALLOC_PROFILE=<file.heapprofile>: V8's sampling heap profiler between the first and the second SIGUSR2, keeping the
// samples of objects the GC has since collected too (so it attributes what was allocated, not what is still alive).
const allocProfile = process.env.ALLOC_PROFILE;
const session = allocProfile ? new Session() : null;
session?.connect();
let signals = 0;

process.on('SIGUSR2', async () => {
  signals++;
  if (session && signals === 1) {
    await session.post('HeapProfiler.startSampling',
      { samplingInterval: 1024, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true });
  }
  if (session && signals === 2) {
    writeFileSync(allocProfile, JSON.stringify((await session.post('HeapProfiler.stopSampling')).profile));
  }
  const { user, system } = process.cpuUsage();
  const { idle, active } = performance.eventLoopUtilization();
  process.stdout.write(`${JSON.stringify({
    gcMs: gc.ms, gcRuns: gc.runs, gcMajorMs: gc.majorMs, gcMajorRuns: gc.majorRuns, allocatedBytes: allocated(), cpuUs: user + system,
    loopIdleMs: idle, loopActiveMs: active, monotonicUs: Number(process.hrtime.bigint() / 1000n),
  })}\n`);
});
process.on('SIGTERM', () => process.exit(0));
