// The targets' k6 pass: the project's k6 scripts against minimal ones (bench/k6-minimal/), on the same server, both at
// once on k6's cores, so that the load generator's own cost is known (npm run targets).
// At once, not one after the other: on this project's 2-vCPU VM, runs 9 s apart moved k6's rate by ±15% (the machine,
// not the script), so ten rounds could not tell a 5% cost from none; side by side, each with half the VUs, the two
// share the machine's state and the scheduler gives each the same CPU time, so their iterations' ratio is their cost
// ratio: a minimal script against itself read 1.005 (0.977–1.013) over 8 rounds (docs/findings/2026-11-25-profiling.md).
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { BenchError } from '../errors.js';
import { portOfMode, serverEnv } from '../invoke.js';
import { k6Args } from '../k6/command.js';
import { MODE_NAMES } from '../modes.js';
import { durationMs } from '../settings/validators.js';
import { startServer } from '../processes.js';
import { cpuPerIteration, runK6 } from '../k6/runner.js';
import { scenarioVars } from '../own-service.js';

/**
 * The share of k6's cores the two scripts of a repeat used together, below which the server (or another process), not
 * k6, limited that repeat: a ratio of such runs says less of the scripts' cost than its number suggests. Side by side
 * on one core, the two k6 processes of a k6-bound run used 97-104% of it between them (docs/profiling.md), an OTLP
 * HTTP run whose JSON twin held them back 90-94%.
 */
export const K6_SATURATED = 0.95;

/** Iterations per second of a k6 run, from its JSON summary (handleSummary's or --summary-export's). */
async function iterationRate(file) {
  const { metrics } = JSON.parse(await readFile(file, 'utf8'));
  const rate = metrics.iterations?.values?.rate ?? metrics.iterations?.rate;
  if (typeof rate !== 'number') throw new BenchError(`${file}: no iterations rate`);
  return rate;
}

/**
 * The VUs each script gets in the pass: half the run's, at least 1.
 * @param {number} vus the run's VUS
 * @returns {number}
 */
export const sideBySideVus = (vus) => Math.max(1, Math.floor(vus / 2));

/**
 * The project's k6 scripts against minimal ones, same server, both at once on k6's cores with half the VUs each (at
 * least 1), the one started first alternating per repeat.
 * @param {import('../settings/bench.js').BenchSettings} settings REPEATS, DURATION, WARMUP, VUS, WORKERS, K6_BIN
 * @param {ReturnType<typeof import('../settings/cores.js').splitCores>} cores
 * @param {string} scratch folder for the runs' summaries
 * @param {readonly string[]} [modes] which modes (default: every one)
 * @param {{scenario: string, own: import('../own-service.js').OwnRun}|null} [service] an own service: the server serves it,
 *   the project's scripts send its request samples in turn and the minimal ones its first (bench/k6-minimal/own-*.js)
 * @returns {Promise<Record<string, {ratios: number[], k6Busy: (number|null)[], costRatios: (number|null)[]}>>} per mode, the
 *   project/minimal RPS ratio of each repeat; the share of k6's cores the two runs of that repeat used together (1 = all;
 *   null: not read); and the minimal script's k6 CPU per iteration ÷ the project's (null: not read), which the
 *   scheduler's split of the core between the two does not move
 */
export async function measureK6Overhead(settings, cores, scratch, modes = MODE_NAMES, service = null) {
  const server = await startServer({ env: serverEnv(modes, { workers: settings.WORKERS, settings: service?.own.server }), cpus: cores.serverCpus });
  // The minimal scripts read the schema and the requests, not the name the job gives the service (SCENARIO), which
  // k6Args refuses for them.
  const minimal = service ? Object.fromEntries(Object.entries(service.own.k6).filter(([name]) => name !== 'SCENARIO')) : {};
  const vars = service ? { project: scenarioVars(service.scenario, service.own), minimal } : { project: {}, minimal: {} };
  const measured = Object.fromEntries(modes.map((mode) => [mode, { ratios: [], k6Busy: [], costRatios: [] }]));
  try {
    const k6 = { k6: settings.K6_BIN, cpus: cores.k6Cpus, coreCount: cores.k6CoreCount, quiet: true };
    // script: 'project' (the mode's local script) or 'minimal' (the one it is measured against)
    const run = async (mode, script, summaryFile, duration, vus = settings.VUS) => {
      const host = `127.0.0.1:${portOfMode(server, mode)}`;
      const args = k6Args(mode, { script, host, vus, duration, summaryFile, vars: vars[script] });
      const result = await runK6({ ...k6, args });
      if (result.code !== 0) throw new BenchError(`k6 ${args.at(-1)} against ${host} failed (exit ${result.code})`);
      const rate = await iterationRate(summaryFile);
      return { rate, busy: result.cpu?.utilization ?? null, cost: cpuPerIteration(result.cpu, rate) };
    };
    // WARMUP=0s: none (k6 refuses a run of no duration).
    for (const mode of durationMs(settings.WARMUP) > 0 ? modes : []) {
      console.error(`--- k6 warm-up: ${mode}`);
      await run(mode, 'project', path.join(scratch, 'warmup.json'), settings.WARMUP);
    }
    const each = sideBySideVus(settings.VUS);
    for (let repeat = 1; repeat <= settings.REPEATS; repeat++) {
      for (const mode of modes) {
        console.error(`--- k6 scripts, run ${repeat} of ${settings.REPEATS}: ${mode}, minimal and project at once`);
        const order = repeat % 2 ? ['minimal', 'project'] : ['project', 'minimal'];
        const runs = Object.fromEntries(await Promise.all(order.map(async (script) => [script,
          await run(mode, script, path.join(scratch, `${mode}-${script}-${repeat}.json`), settings.DURATION, each)])));
        measured[mode].ratios.push(runs.project.rate / runs.minimal.rate);
        const { project: { busy: a, cost: c }, minimal: { busy: b, cost: d } } = runs;
        measured[mode].k6Busy.push(a === null || b === null ? null : a + b);
        measured[mode].costRatios.push(c === null || d === null ? null : d / c);
      }
    }
  } finally {
    await server.stop();
  }
  return measured;
}

