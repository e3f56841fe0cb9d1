// A/B of k6 scripts against one server (docs/profiling.md, "The k6 scripts' own cost"): one server worker
// with every listener pinned to cpu 0, k6 pinned to cpu 1; per repeat each variant runs once for SECONDS
// at VUS, the variants interleaved, after a warm-up of the first. Prints each run's iterations/s, then
// per variant the median (min–max) of its rate and of its ratio to the first variant's run of the same
// repeat. Not part of npm test.
// A variant is a script and, optionally, -e variables (VAR:value). Hosts (LOCAL_HTTP_HOST, LOCAL_GRPC_HOST)
// are given to every script. SCENARIO=<a built-in own service> in the environment (e.g. otlp-traces): the server serves
// it and every script gets its variables (RPC, its schema, REQUESTS), for the minimal own scripts and the project's alike:
//   SCENARIO=otlp-traces node test/manual/ab-k6-scripts.js 5 6 32 minimal=bench/k6-minimal/own-grpc.js project=grpc-tests/local.js
//   node test/manual/ab-k6-scripts.js 3 6 32 minimal=bench/k6-minimal/http.js \
//     timeout=http-tests/local.js,REQUEST_TIMEOUT:5s lean=http-tests/local.js
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { portOfMode, serverEnv } from '../../bench/invoke.js';
import { MODE_NAMES, MODES } from '../../bench/modes.js';
import { startServer } from '../../bench/processes.js';
import { runK6 } from '../../bench/k6/runner.js';
import { medianInterval, spread } from '../../bench/report/stats.js';
import { prepareOwn, scenariosOf } from '../../bench/own-service.js';

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
const source = process.env.SCENARIO ? scenariosOf({ SCENARIO: [process.env.SCENARIO] })[0].source : null;
const own = source ? await prepareOwn(source, scratch, process.env.SCENARIO) : null;
const ownVars = own ? Object.entries(own.k6).map(([k, v]) => `${k}=${v}`) : [];
const server = await startServer({ env: serverEnv(MODE_NAMES, { workers: 1, settings: own?.server }), cpus: '0' });

/** iterations/s of one k6 run of a variant. */
async function rate(variant, duration) {
  const file = path.join(scratch, `${variant.label}.json`);
  // Each host variable once, for the first mode that reads it: connect-grpc and json-h2 run the gRPC and HTTP scripts, and
  // a later -e would point those at connect-node and at the HTTP/2 listener instead of grpc-js and fastify.
  const hosts = [...new Map(MODE_NAMES.toReversed().map((mode) => [MODES[mode].hostVars.local, `127.0.0.1:${portOfMode(server, mode)}`]))]
    .map(([name, host]) => `${name}=${host}`);
  const env = [...hosts, `SUMMARY_FILE=${file}`, `VUS=${vus}`, ...ownVars, ...variant.vars].flatMap((e) => ['-e', e]);
  // A script with handleSummary writes SUMMARY_FILE; one without, --summary-export.
  const args = [...env, '--vus', String(vus), '--duration', duration, '--summary-export', file, variant.script];
  const run = await runK6({ k6, args, cpus: '1', coreCount: 1, quiet: true });
  if (run.code !== 0) throw new Error(`${variant.label}: k6 exit ${run.code}\n${run.output.slice(-2000)}`);
  const { metrics } = JSON.parse(await readFile(file, 'utf8'));
  // k6's CPU beside its rate: a run with k6 well under its core was limited by the server, and says little of k6's cost.
  cpuOf.set(variant.label, [...(cpuOf.get(variant.label) ?? []), run.cpu ? run.cpu.utilization * 100 : null]);
  return metrics.iterations?.values?.rate ?? metrics.iterations?.rate;
}


/** k6's CPU (% of its core) of each measured run, by variant. */
const cpuOf = new Map();
const results = Object.fromEntries(variants.map((v) => [v.label, { rate: [], ratio: [] }]));
try {
  await rate(variants[0], '2s');
  cpuOf.clear(); // the warm-up's is not a measured run's
  for (let r = 1; r <= repeats; r++) {
    let first;
    for (const v of variants) {
      const x = await rate(v, `${seconds}s`);
      first ??= x;
      results[v.label].rate.push(x);
      results[v.label].ratio.push(x / first);
      console.error(`r${r} ${v.label}: ${Math.round(x)} iterations/s, ${(x / first).toFixed(3)} of ${variants[0].label}`);
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
for (const [label, x] of Object.entries(results)) {
  const cpu = (cpuOf.get(label) ?? []).filter((v) => v !== null);
  // The 95% interval of the median per-repeat ratio (medianInterval, as npm run targets reads its rows), against 0.95.
  const ci = medianInterval(x.ratio, 0.95);
  const interval = ci.low === null ? ci.why : `95% CI ${ci.low.toFixed(3)}–${ci.high.toFixed(3)}${ci.settled ? '' : ', includes 0.95: not settled'}`;
  console.log(`${label}: ${show(x.rate, 0)} iterations/s; ${show(x.ratio, 3)} of ${variants[0].label} (${interval}); k6 CPU ${cpu.length ? show(cpu, 0) : 'n/a'}% of its core`);
}
