// Run as a child with --expose-gc (bench/own-service.js ownMemory): the memory an own service takes as a server worker
// holds it, measured in a fresh process so that nothing else of the job's is counted. The process first loads what a
// worker loads to read samples and answer JSON, and reads the empty message (the server's default); then the schema
// and the response samples, decoded as a worker holds them (proto/own/service.js loadOwnService, which also makes the
// JSON twins' messages), and their JSON answers (proto/own/json.js ownJson). RSS and V8 heap are read after a full
// collection on each side: the RSS difference is what the samples add to a worker's RSS, the pages V8 kept from
// reading them included. Prints {"rss_bytes": N, "heap_bytes": N, "responses": N}.
//   node --expose-gc proto/own/memory-probe.js '{"PROTO": …, "PROTO_PATH": …, "RPC": …, "RESPONSE": …}'
import { ownJson } from './json.js';
import { loadOwnService } from './service.js';

const gc = /** @type {() => void} */ (globalThis.gc);
const settings = JSON.parse(process.argv[2]);
const memory = () => {
  gc();
  gc();
  const { rss, heapUsed } = process.memoryUsage();
  return { rss, heapUsed };
};
let held;
let answers;
let before;
try {
  // The empty message first: the code paths a worker runs at start are then compiled and counted on both sides.
  ownJson(loadOwnService({ ...settings, RESPONSE: '' }));
  before = memory();
  held = loadOwnService(settings);
  answers = ownJson(held).responses;
} catch (err) {
  // One line for the job's record (a bad schema or sample was already refused before this runs).
  process.stderr.write(`${err.message}\n`);
  process.exit(1);
}
const after = memory();
process.stdout.write(`${JSON.stringify({
  rss_bytes: Math.max(0, after.rss - before.rss), heap_bytes: Math.max(0, after.heapUsed - before.heapUsed), responses: Math.min(held.responses.messages.length, answers.length),
})}\n`);
