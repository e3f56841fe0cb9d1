// A/B of k6 scripts against one server (docs/findings/2026-11-23-frameworks-issue-13.md, "The k6 HTTP script's own cost"): one server worker
// with every listener pinned to cpu 0, k6 pinned to cpu 1; per repeat each variant runs once for SECONDS
// at VUS, the variants interleaved, after a warm-up of the first. Prints each run's iterations/s, then
// per variant the median (min–max) of its rate and of its ratio to the first variant's run of the same
// repeat, and of k6's CPU per iteration (µs, over the sampled window) as a ratio too: the first variant's cost ÷ the
// variant's, what the throughput ratio would be with k6 the only limit. The variants run in reverse order every other
// repeat, so that neither is always the one after the other.
// TOGETHER=1: the variants of a round run at once instead, each with VUS ÷ variants VUs, all on k6's one core, so
// that they share the machine's state (a slower hour slows all alike) and Linux's scheduler gives each the same CPU
// time: their iterations' ratio is then the inverse of their cost per iteration, with no drift between runs in it.
// Not part of npm test.
// A variant is a script and, optionally, -e variables (VAR:value). Hosts (LOCAL_HTTP_HOST, LOCAL_GRPC_HOST)
// are given to every script. SCENARIO=<a built-in own service> in the environment (e.g. otlp-traces): the server serves
// it and every script gets its variables (RPC, its schema, REQUESTS), for the minimal own scripts and the project's alike:
//   SCENARIO=otlp-traces node test/manual/ab-k6-scripts.js 5 6 32 minimal=bench/k6-minimal/own-grpc.js project=grpc-tests/local.js
//   node test/manual/ab-k6-scripts.js 3 6 32 minimal=bench/k6-minimal/http.js \
//     timeout=http-tests/local.js,REQUEST_TIMEOUT:5s lean=http-tests/local.js
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { cpuPerIteration, runK6 } from '../../bench/k6/runner.js';
import { ratiosInterval, spread } from '../../bench/report/stats.js';
import { startScriptServer } from './k6-script-server.js';

const [repeatsArg, secondsArg, vusArg, ...variantArgs] = process.argv.slice(2);
const repeats = Number(repeatsArg);
const seconds = Number(secondsArg);
const vus = Number(vusArg);
if (!(repeats >= 1) || !(seconds >= 1) || !(vus >= 1) || variantArgs.length === 0) {
  console.error('usage: node test/manual/ab-k6-scripts.js <repeats> <seconds> <vus> <label>=<script>[,VAR:value...] ...');
  process.exit(2);
}
const variants = variantArgs.map((arg) => {
  const [label, rest] = arg.split('=');
  const [script, ...vars] = rest.split(',');
  return { label, script, vars: vars.map((v) => v.replace(':', '=')) };
});
const k6 = process.env.K6_BIN || 'k6';
const scratch = await mkdtemp(path.join(os.tmpdir(), 'ab-k6-'));
const { server, vars: serverVars } = await startScriptServer(scratch, process.env.SCENARIO);

const together = process.env.TOGETHER === '1';
const vusEach = together ? Math.floor(vus / variants.length) : vus;
if (vusEach < 1) throw new Error(`TOGETHER=1 needs at least one VU per variant (${vus} VUs, ${variants.length} variants)`);

/** iterations/s of one k6 run of a variant, and k6's CPU per iteration (µs). */
async function rate(variant, duration) {
  const file = path.join(scratch, `${variant.label}.json`);
  const env = [...serverVars, `SUMMARY_FILE=${file}`, `VUS=${vusEach}`, ...variant.vars].flatMap((e) => ['-e', e]);
  // A script with handleSummary writes SUMMARY_FILE; one without, --summary-export.
  const args = [...env, '--vus', String(vusEach), '--duration', duration, '--summary-export', file, variant.script];
  const run = await runK6({ k6, args, cpus: '1', coreCount: 1, quiet: true });
  if (run.code !== 0) throw new Error(`${variant.label}: k6 exit ${run.code}\n${run.output.slice(-2000)}`);
  const { metrics } = JSON.parse(await readFile(file, 'utf8'));
  // k6's CPU beside its rate: a run with k6 well under its core was limited by the server, and says little of k6's cost.
  cpuOf.set(variant.label, [...(cpuOf.get(variant.label) ?? []), run.cpu ? run.cpu.utilization * 100 : null]);
  const iterations = metrics.iterations?.values?.rate ?? metrics.iterations?.rate;
  // k6's CPU seconds over its sampled window ÷ the iterations of that window (its rate × the window): less moved than the
  // rate by a server or a machine that slows both variants, since it counts only k6's own work.
  return { rate: iterations, costUs: run.cpu ? cpuPerIteration(run.cpu, iterations) * 1e6 : null };
}


/** k6's CPU (% of its core) of each measured run, by variant. */
const cpuOf = new Map();
const results = Object.fromEntries(variants.map((v) => [v.label, { rate: [], ratio: [], cost: [], costRatio: [] }]));
try {
  await (together ? Promise.all(variants.map((v) => rate(v, '2s'))) : rate(variants[0], '2s'));
  cpuOf.clear(); // the warm-up's is not a measured run's
  for (let r = 1; r <= repeats; r++) {
    const round = new Map();
    const order = r % 2 ? variants : variants.toReversed();
    if (together) (await Promise.all(order.map((v) => rate(v, `${seconds}s`)))).forEach((x, i) => round.set(order[i].label, x));
    else for (const v of order) round.set(v.label, await rate(v, `${seconds}s`));
    const first = round.get(variants[0].label);
    for (const v of variants) {
      const { rate: x, costUs } = round.get(v.label);
      results[v.label].rate.push(x);
      results[v.label].ratio.push(x / first.rate);
      if (costUs !== null && first.costUs !== null) {
        results[v.label].cost.push(costUs);
        results[v.label].costRatio.push(first.costUs / costUs);
      }
      console.error(`r${r} ${v.label}: ${Math.round(x)} iterations/s, ${(x / first.rate).toFixed(3)} of ${variants[0].label}; `
        + `k6 ${costUs === null ? 'n/a' : costUs.toFixed(1)} µs/iteration`);
    }
  }
} finally {
  await server.stop();
  await rm(scratch, { recursive: true, force: true });
}
const show = (values, digits) => {
  const { median, min, max } = spread(values);
  return `${median.toFixed(digits)} (${min.toFixed(digits)}–${max.toFixed(digits)})`;
};
// The 95% interval of the median per-repeat ratio (ratiosInterval, as npm run targets reads its rows), against 0.95.
const interval = (ratios) => {
  const ci = ratiosInterval(ratios, 0.95);
  return ci.low === null ? ci.why : `95% CI ${ci.low.toFixed(3)}–${ci.high.toFixed(3)}${ci.settled ? '' : ', includes 0.95: not settled'}`;
};
for (const [label, x] of Object.entries(results)) {
  const cpu = (cpuOf.get(label) ?? []).filter((v) => v !== null);
  console.log(`${label}: ${show(x.rate, 0)} iterations/s; ${show(x.ratio, 3)} of ${variants[0].label} (${interval(x.ratio)}); k6 CPU ${cpu.length ? show(cpu, 0) : 'n/a'}% of its core`);
  if (x.cost.length) {
    console.log(`  k6 CPU per iteration ${show(x.cost, 1)} µs; ${variants[0].label}'s ÷ this: ${show(x.costRatio, 3)} (${interval(x.costRatio)})`);
  }
}
