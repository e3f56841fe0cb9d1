// Node 24's v8.GCProfiler after stop() (server/accounting.js, docs/soak.md): a stopped profiler keeps its GC callbacks,
// and appends every GC to its buffer, until V8 collects the object. One process allocates garbage steadily and replaces
// its profiler in one of three ways; it prints its RSS every 10 s. Not part of npm test.
//   node test/manual/gc-profiler-leak.js <every-ms|gc|none> [seconds=60]
// every-ms: stop and start a new profiler every that many ms (the accounting before the fix did it per scrape);
// gc: a new profiler after every GC, from a perf_hooks 'gc' observer (the accounting now); none: no profiler.
import { PerformanceObserver } from 'node:perf_hooks';
import v8 from 'node:v8';

const [how = '', secondsArg = '60'] = process.argv.slice(2);
const seconds = Number(secondsArg);
if (!(how === 'gc' || how === 'none' || Number(how) >= 1) || !(seconds >= 1)) {
  console.error('usage: node test/manual/gc-profiler-leak.js <every-ms|gc|none> [seconds]');
  process.exit(2);
}

let profiler = null;
let replaced = 0;
const replace = () => {
  profiler?.stop();
  profiler = new v8.GCProfiler();
  profiler.start();
  replaced++;
};
if (how === 'gc') {
  replace();
  new PerformanceObserver(replace).observe({ entryTypes: ['gc'] });
} else if (how !== 'none') {
  replace();
  setInterval(replace, Number(how));
}

// A live set of a few tens of MiB, like a worker's, and garbage made as fast as the loop turns.
const live = Array.from({ length: 200_000 }, (_, i) => ({ i, s: `live ${i}` }));
let young = [];
const churn = () => {
  for (let i = 0; i < 2000; i++) {
    young.push({ i, s: `young ${i}` });
    if (young.length > 5000) young = [];
  }
  setImmediate(churn);
};
churn();

const started = Date.now();
const report = () => console.log(JSON.stringify({
  how, s: Math.round((Date.now() - started) / 1000), rss_mib: Math.round(process.memoryUsage().rss / 2 ** 20), replaced, live: live.length,
}));
setInterval(report, 10_000);
setTimeout(() => process.exit(0), seconds * 1000 + 100);
