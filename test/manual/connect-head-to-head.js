// connect-node beside grpc-js and fastify (docs/connect.md): the decomposition pass alone (bench/passes/decompose.js),
// every listener of one MODE=all server (1 worker, pinned to the first core) loaded in turn by wrk or h2load (pinned to
// the second; 32 connections, one request in flight each), REPEATS rounds, interleaved; RPS, server CPU and GC per
// request. Prints the decomposition table and writes the runs as JSON. Not part of npm test. Run it inside the quiet lock:
//   flock /tmp/quiet.lock node test/manual/connect-head-to-head.js <repeats> <seconds> <warm-up seconds> <out.json>
import { writeFile } from 'node:fs/promises';
import { measureDecomposition } from '../../bench/passes/decompose.js';
import { decompositionReport, renderDecomposition } from '../../bench/report/decomposition.js';
import { allowedCpus, splitCores } from '../../bench/settings/cores.js';
import { provenanceOf } from '../../bench/provenance.js';

const [repeatsArg, secondsArg, warmupArg, out] = process.argv.slice(2);
const repeats = Number(repeatsArg);
const durationS = Number(secondsArg);
const warmupS = Number(warmupArg);
if (!(repeats >= 1) || !(durationS >= 1) || !(warmupS >= 0) || !out) {
  console.error('usage: node test/manual/connect-head-to-head.js <repeats> <seconds> <warm-up seconds> <out.json>');
  process.exit(2);
}
const cores = splitCores(allowedCpus());
if (!cores.k6Cpus) {
  console.error('connect-head-to-head: needs two cores, one for the server and one for the load generator');
  process.exit(1);
}
const settings = { REPEATS: repeats, WORKERS: 1, VUS: 32, PROFILE: false, RESULTS_DIR: '/tmp' };
const runs = await measureDecomposition({ scenario: 'user', plan: /** @type {any} */ (settings), cores, durationS, warmupS });
const report = decompositionReport('user', runs);
const { commit, dirty, versions, machine } = provenanceOf({ settings: /** @type {any} */ ({ K6_BIN: 'k6' }), pinning: cores.description, serverEnv: null });
await writeFile(out, `${JSON.stringify({ commit, dirty, versions, machine, pinning: cores.description, repeats, durationS, warmupS, runs }, null, 2)}\n`);
console.log(renderDecomposition(report));
console.log(`commit ${commit}${dirty ? ' (dirty)' : ''}; node ${versions.node}; ${cores.description}; written: ${out}`);
