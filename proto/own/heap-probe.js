// Run as a child with --expose-gc (bench/own-service.js ownHeapBytes): the V8 heap an own service takes as a server
// worker holds it, the schema and the response samples decoded, measured after a full collection on each side in a
// fresh process, so that nothing else of the job's is counted. Prints {"heap_bytes": N}.
//   node --expose-gc proto/own/heap-probe.js '{"PROTO": …, "PROTO_PATH": …, "RPC": …, "RESPONSE": …}'
import { loadOwnService } from './service.js';

const gc = /** @type {() => void} */ (globalThis.gc);
const settings = JSON.parse(process.argv[2]);
gc();
const before = process.memoryUsage().heapUsed;
let held;
try {
  held = loadOwnService(settings);
} catch (err) {
  // One line for the job's record (a bad schema or sample was already refused before this runs).
  process.stderr.write(`${err.message}\n`);
  process.exit(1);
}
gc();
const after = process.memoryUsage().heapUsed;
process.stdout.write(`${JSON.stringify({ heap_bytes: Math.max(0, after - before), responses: held.responses.messages.length })}\n`);
