// How long loading and checking an own service's samples takes, and the heap their messages hold (docs/own-message.md):
// 10,000 copies of OTLP's example trace export as NDJSON, loaded as REQUEST, in three fresh processes.
//   node --expose-gc test/manual/own-samples-load.js
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadOwnService } from '../../proto/own/service.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const OTLP = path.join(ROOT, 'proto/otlp');
const settings = (file) => ({
  PROTO: path.join(OTLP, 'opentelemetry/proto/collector/trace/v1/trace_service.proto'), PROTO_PATH: OTLP,
  RPC: 'opentelemetry.proto.collector.trace.v1.TraceService/Export', REQUEST: file,
});

if (process.argv[2]) {
  // One measurement, in a fresh process.
  globalThis.gc?.();
  const before = process.memoryUsage().heapUsed;
  const start = performance.now();
  const own = loadOwnService(settings(process.argv[2]));
  const ms = performance.now() - start;
  globalThis.gc?.();
  const mib = (process.memoryUsage().heapUsed - before) / 1048576;
  console.log(JSON.stringify({ samples: own.requests.messages.length, ms: Math.round(ms), heap_mib: Number(mib.toFixed(1)) }));
} else {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'own-load-'));
  try {
    const one = JSON.stringify(JSON.parse(readFileSync(path.join(OTLP, 'examples/traces.json'), 'utf8')));
    const file = path.join(dir, 'traces-10k.ndjson');
    writeFileSync(file, `${Array(10_000).fill(one).join('\n')}\n`);
    for (let i = 0; i < 3; i++) {
      process.stdout.write(execFileSync(process.execPath, ['--expose-gc', fileURLToPath(import.meta.url), file], { encoding: 'utf8' }));
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
