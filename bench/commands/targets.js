// npm run targets: checks the performance targets (issue 5) by measurement, one
// server worker pinned to one core and the load generator to the other:
// - fastify (JSON, HTTP/1.1) serves >= 0.9x the RPS of bare node:http with the same body;
// - grpc-js serves >= 0.6x the RPS of bare node:http2 speaking gRPC framing;
// - the project's k6 scripts reach >= 0.9x the RPS of a minimal k6 script.
// The decomposition it prints measures connect-node (connect-grpc, connect-json) beside them, with no target:
// RPS, server CPU and GC per request (docs/connect.md).
// Each ratio is taken per repeat (REPEATS, interleaved); the report gives the median and min-max.
// Exits 1 when a median misses its target. Settings: REPEATS, DURATION, WARMUP, VUS (as bench.sh).
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { requireCapacityTools } from '../passes/capacity.js';
import { decompositionReport } from '../report/decomposition.js';
import { DECOMPOSITION, measureDecomposition } from '../passes/decompose.js';
import { BenchError } from '../errors.js';
import { fileStamp } from '../format.js';
import { PERFORMANCE_TARGETS } from '../performance-targets.js';
import { ROOT } from '../processes.js';
import { allowedCpus, splitCores } from '../settings/cores.js';
import { durationMs } from '../settings/validators.js';
import { MODE_NAMES, MODES } from '../modes.js';
import { renderTargets, targetRow } from '../report/targets.js';
import { measureK6Overhead } from '../passes/k6-overhead.js';


/**
 * The targets need wrk and h2load, and two cores.
 * @returns {Promise<void>}
 * @throws {BenchError} naming what is missing
 */
export async function preflight() {
  await requireCapacityTools(DECOMPOSITION);
  if (!splitCores(allowedCpus()).k6Cpus) throw new BenchError('the targets need two cores: one for the server, one for the load generator');
}

/**
 * Measures every target (bench/cli.js targets), prints the table and writes it to RESULTS_DIR;
 * sets exit code 1 when a median misses its target.
 * @param {import('../settings/bench.js').BenchSettings} settings checked by bench/cli.js, K6_BIN provisioned
 * @returns {Promise<void>}
 * @throws {BenchError} when a server or a load generator fails
 */
export async function main(settings) {
  process.chdir(ROOT);
  const cores = splitCores(allowedCpus());
  const scratch = await mkdtemp(path.join(os.tmpdir(), 'targets-'));
  try {
    const runs = await measureDecomposition({
      scenario: 'user', settings: { ...settings, WORKERS: 1 }, cores,
      durationS: durationMs(settings.DURATION) / 1000, warmupS: durationMs(settings.WARMUP) / 1000,
    });
    const decomposition = decompositionReport('user', runs);
    const effect = (of) => decomposition.effects.find((e) => e.of === of);
    // The k6 scripts of the modes that have a target (connect-grpc runs grpc's; connect-json's are the HTTP shape).
    const k6Modes = MODE_NAMES.filter((mode) => PERFORMANCE_TARGETS[`k6-${mode}/k6-minimal-${mode}`]);
    const k6 = await measureK6Overhead({ ...settings, WORKERS: 1 }, cores, scratch, k6Modes);
    const results = [
      targetRow('fastify JSON / bare node:http, same body (wrk)', effect('http/baseline-http').runs, effect('http/baseline-http').target),
      targetRow('grpc-js / bare node:http2 gRPC framing, same bytes (h2load)', effect('grpc/baseline-grpc').runs, effect('grpc/baseline-grpc').target),
      ...k6Modes.map((mode) => targetRow(
        `k6 ${MODES[mode].scripts.local} / ${MODES[mode].minimalScript}`, k6[mode], PERFORMANCE_TARGETS[`k6-${mode}/k6-minimal-${mode}`])),
    ];
    const setup = `${settings.REPEATS} repeat(s), ${settings.DURATION} each after ${settings.WARMUP} warm-up, ${settings.VUS} connections/VUs; `
      + `1 server worker; ${cores.description}`;
    const markdown = renderTargets({ results, setup, decomposition });
    process.stdout.write(`\n${markdown}`);
    await mkdir(settings.RESULTS_DIR, { recursive: true });
    const base = path.join(settings.RESULTS_DIR, `targets-${fileStamp()}`);
    await writeFile(`${base}.md`, markdown);
    await writeFile(`${base}.json`, `${JSON.stringify({ setup, results, decomposition_runs: runs }, null, 2)}\n`);
    process.stdout.write(`written: ${base}.md, ${base}.json\n`);
    if (results.some((r) => !r.met)) process.exitCode = 1;
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}

