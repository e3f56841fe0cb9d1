// Where a MODE=both worker's start goes before it builds any method: each module it loads (the gRPC health and
// reflection libraries only at their first call: server/grpc-lazy.js), imported in turn in this
// fresh process with the worker's compile cache (server/index.js), the wall time of each and the CPU of all. Not part of
// npm test; run it a few times on a quiet machine, the first run warms the cache (docs/findings/2026-11-28-reload-time.md).
//   node test/manual/worker-imports.js
import module from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
module.enableCompileCache(path.join(ROOT, 'node_modules/.cache/node-compile-cache'));
const at = (file) => path.join(ROOT, file);
const MODULES = [at('proto/own/to-base64.js'), at('server/settings.js'), at('server/log.js'), at('server/worker.js'),
  at('proto/index.js'), at('proto/methods.js'), 'fastify', at('server/http.js'), '@grpc/grpc-js', at('server/grpc.js'),
  at('server/accounting.js')];

const t0 = performance.now();
const cpu0 = process.cpuUsage();
let last = t0;
for (const name of MODULES) {
  await import(name);
  const now = performance.now();
  console.log(`${(now - last).toFixed(0).padStart(5)} ms  ${path.isAbsolute(name) ? path.relative(ROOT, name) : name}`);
  last = now;
}
const cpu = process.cpuUsage(cpu0);
console.log(`total ${(last - t0).toFixed(0)} ms wall, ${((cpu.user + cpu.system) / 1000).toFixed(0)} ms CPU`);
