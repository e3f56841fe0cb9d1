// CPU profiles of k6 running k6 scripts against one server (docs/findings/2026-11-25-profiling.md, "VU 0 decides, the iterating VUs read its
// plan"): one server worker with every listener pinned to cpu 0, k6 alone pinned to cpu 1, 16 VUs for 12 s per run,
// the variants alternating for ROUNDS rounds. Each run's profile is k6's /debug/pprof/profile over 8 s from its 3rd
// second, saved as <label>-<round>.pb in the folder it prints, with the run's iterations/s. Compare two variants per
// iteration with `go tool pprof -top -cum -nodefraction=0 <label>-*.pb`, each function's time ÷ (iterations/s × 8 s).
// SCENARIO=<a built-in own service> serves it and gives every script its variables, as test/manual/ab-k6-scripts.js.
// Not part of npm test.
//   node test/manual/k6-cpu-profiles.js 2 min=bench/k6-minimal/http.js proj=http-tests/local.js
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { startScriptServer } from './k6-script-server.js';

const [roundsArg, ...variantArgs] = process.argv.slice(2);
const rounds = Number(roundsArg);
if (!(rounds >= 1) || variantArgs.length === 0) {
  console.error('usage: node test/manual/k6-cpu-profiles.js <rounds> <label>=<script> ...');
  process.exit(2);
}
const variants = variantArgs.map((arg) => {
  const [label, script] = arg.split('=');
  return { label, script };
});
const k6 = process.env.K6_BIN || 'k6';
const scratch = await mkdtemp(path.join(os.tmpdir(), 'k6-profiles-'));
const { server, vars: serverVars } = await startScriptServer(scratch, process.env.SCENARIO);
console.log(`profiles in ${scratch}`);
try {
  for (let round = 0; round < rounds; round++) {
    // Alternating order, so that neither variant is always the one after the other.
    for (const { label, script } of round % 2 ? variants.toReversed() : variants) {
      const summary = path.join(scratch, `${label}-${round}.json`);
      const env = [...serverVars, `SUMMARY_FILE=${summary}`, 'VUS=16'].flatMap((e) => ['-e', e]);
      const run = spawn('taskset', ['-c', '1', k6, 'run', '-q', '--profiling-enabled', '--address', '127.0.0.1:6565', ...env,
        '--vus', '16', '--duration', '12s', '--summary-export', summary, script], { stdio: ['ignore', 'ignore', 'inherit'] });
      const exited = new Promise((resolve) => run.on('exit', resolve));
      await sleep(3000);
      const profile = await fetch('http://127.0.0.1:6565/debug/pprof/profile?seconds=8');
      await writeFile(path.join(scratch, `${label}-${round}.pb`), Buffer.from(await profile.arrayBuffer()));
      if (await exited !== 0) throw new Error(`${label}: k6 failed`);
      const { metrics } = JSON.parse(await readFile(summary, 'utf8'));
      console.log(`${label} round ${round + 1}: ${Math.round(metrics.iterations.values?.rate ?? metrics.iterations.rate)} iterations/s`);
    }
  }
} finally {
  await server.stop();
}
